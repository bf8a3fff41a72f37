"""What a scan's reading costs before its first window: the memory plan's fit, kept on disk across processes."""

import json

import pytest

from core.model import footprint
from core.model.network import preset


@pytest.fixture
def fit_cache(tmp_path, monkeypatch):
    """A cache folder of the test's own, and the probes counted (their fit stands in: the probes are
    ``test_windowed_inference.py``'s, a second's work here would only repeat them)."""
    monkeypatch.setenv("WELLTRACE_CACHE", str(tmp_path))
    footprint._fit.cache_clear()
    probed = []

    def probes(cfg_key, precision_mode, device_type):
        probed.append((precision_mode, device_type))
        return 17824.0 + len(probed), 224.0

    monkeypatch.setattr(footprint, "_measure_fit", probes)
    yield tmp_path, probed
    footprint._fit.cache_clear()


def test_the_fit_is_measured_once_and_read_back_by_the_next_process(fit_cache):
    folder, probed = fit_cache
    cfg = preset("tiny", classes=4)
    measured = footprint.inference_fit(cfg, "fp32")
    (kept,) = (folder / "inference-fit").glob("*.json")
    assert json.loads(kept.read_text()) == {"a": measured[0], "b": measured[1]}
    footprint._fit.cache_clear()  # as a new process: the file gives the same fit, no probe runs
    assert footprint.inference_fit(cfg, "fp32") == measured and len(probed) == 1
    # another precision, device or network is another fit: measured, not read
    footprint.inference_fit(cfg, "bf16")
    footprint.inference_fit(cfg, "fp32", "cuda")
    footprint.inference_fit(preset("tiny", classes=1), "fp32")
    assert probed == [("fp32", "cpu"), ("bf16", "cpu"), ("fp32", "cuda"), ("fp32", "cpu")]
    assert len(list((folder / "inference-fit").glob("*.json"))) == 4


def test_an_unreadable_kept_fit_is_measured_again(fit_cache):
    folder, probed = fit_cache
    cfg = preset("tiny", classes=4)
    footprint.inference_fit(cfg, "fp32")
    (kept,) = (folder / "inference-fit").glob("*.json")
    for bad in ("{not json", json.dumps({"a": 1.0}), json.dumps({"a": 1.0, "b": -2.0})):
        kept.write_text(bad)
        footprint._fit.cache_clear()
        again = footprint.inference_fit(cfg, "fp32")
        assert json.loads(kept.read_text()) == {"a": again[0], "b": again[1]}
    assert len(probed) == 4


def test_a_fit_that_cannot_be_kept_is_still_given(tmp_path, monkeypatch):
    """A read-only or missing cache folder costs the process its probes, nothing else."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("WELLTRACE_CACHE", str(blocker))  # a file where the folder would be
    footprint._fit.cache_clear()
    monkeypatch.setattr(footprint, "_measure_fit", lambda *_: (1.0, 2.0))
    try:
        assert footprint.inference_fit(preset("tiny", classes=4), "fp32") == (1.0, 2.0)
    finally:
        footprint._fit.cache_clear()
