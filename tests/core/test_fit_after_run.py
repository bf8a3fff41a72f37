"""A model trained or adapted here ends with its own calibrated confidence (issue #60, eighteenth round): ``welltrace
train`` and ``adapt`` fit the new model's calibrator beside it once the model is written (``core/cli/commands/
fit_confidence.py: fit_after_run``), unless ``--no-fit-confidence``; without scikit-learn they say so at their start
and write the model all the same; Ctrl-C during the fit keeps the model and writes no calibrator. The fit keeps the
network's maps in the user's cache under the model's digest until it completes, so a fit cut short resumes
(``core/evaluation/network_calibrator.py``).

The fit here reads one small log of each of two families (the real one reads 20 logs of five at 1600 x 480 px) with a
tiny network trained one step: seconds, not minutes."""

import json
import os
import sys

import pytest

from core.cli.main import main
from core.common.events import FitLogEvent
from core.digitize.rules.confidence_model import ConfidenceModel, calibrator_beside, sidecar_path
from core.evaluation import network_calibrator as nc
from core.model.model_io import load_model, model_digest
from core.synth import write_set
from tests.model_copies import nudged_bundled_model

FAMILIES, SIZE = ("random", "dense"), (640, 256)


@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_set")
    write_set(d, 2, seed=3, width=512, height=128)
    return d


@pytest.fixture
def user_cache(tmp_path, monkeypatch):
    """The user's cache folder of the fit's maps, this test's own (not all of ``$WELLTRACE_CACHE``: the inference
    memory fit kept there is measured once, not per test), and a small fit: two logs, whatever the caller asks, on the
    device the caller names (kept in ``devices_asked``)."""
    monkeypatch.setattr(nc, "user_fit_cache", lambda: tmp_path / "cache" / "confidence-fit")
    real = nc.fit_network_calibrator
    devices_asked.clear()

    def small(model_path, out=None, cache_folder=None, count=None, device="cpu", **_how):
        devices_asked.append(device)
        return real(model_path, out, cache_folder, 1, families=FAMILIES, size=SIZE, device=device)

    monkeypatch.setattr(nc, "fit_network_calibrator", small)
    return tmp_path / "cache" / "confidence-fit"


devices_asked: list[str] = []


def _train(tiny_set, out, *more) -> int:
    return main(["train", str(tiny_set), "--out", str(out), "--preset", "tiny", "--steps", "1", "--crop", "256",
                 "--workers", "0", "--precision", "fp32", *more])


def test_train_fits_the_new_model_s_calibrator_beside_it_and_its_reads_use_it(tiny_set, tmp_path, user_cache,
                                                                                capsys):
    out = tmp_path / "m.safetensors"
    assert _train(tiny_set, out, "--device", "cpu") == 0
    printed = capsys.readouterr().out
    assert "finished after 1 steps" in printed
    assert "fitting the confidence (CONF) for m.safetensors" in printed and "minute" in printed
    assert devices_asked == ["cpu"]  # the fit reads on the run's device
    assert "confidence: dense read" in printed and f"wrote {sidecar_path(out)}" in printed
    fitted = ConfidenceModel.load(sidecar_path(out))
    assert fitted.about["network_sha256_16"] == model_digest(out) and fitted.about["logs_per_family"] == 1
    net, _ = load_model(out)
    own, warning = calibrator_beside(net)
    assert own is not None and warning is None
    assert not any(user_cache.iterdir())  # the maps are removed once the calibrator holds what they were kept for


def test_no_fit_confidence_writes_the_model_alone(tiny_set, tmp_path, user_cache, capsys):
    out = tmp_path / "m.safetensors"
    assert _train(tiny_set, out, "--no-fit-confidence") == 0
    captured = capsys.readouterr()
    assert out.is_file() and not sidecar_path(out).exists()
    assert "fitting the confidence" not in captured.out and "scikit-learn" not in captured.err
    assert not user_cache.exists()


def test_without_scikit_learn_the_run_says_so_at_its_start_and_writes_the_model(tiny_set, tmp_path, user_cache,
                                                                                 monkeypatch, capsys):
    from core.cli.commands import train as train_command

    monkeypatch.setitem(sys.modules, "sklearn", None)  # `import sklearn` raises ImportError
    said_before_training = []
    drive = train_command.drive_training

    def spy(*args, **kwargs):
        said_before_training.append(capsys.readouterr().err)
        return drive(*args, **kwargs)

    monkeypatch.setattr(train_command, "drive_training", spy)
    out = tmp_path / "m.safetensors"
    assert _train(tiny_set, out) == 0
    err = said_before_training[0] + capsys.readouterr().err
    assert "scikit-learn is not installed" in said_before_training[0]  # at the start, before a step
    assert err.count("scikit-learn is not installed") == 1 and "welltrace[fit]" in err and f"fit-confidence --model {out}" in err
    assert "Traceback" not in err and out.is_file() and not sidecar_path(out).exists()


def test_ctrl_c_during_the_fit_keeps_the_model_and_the_next_fit_resumes_from_the_logs_read(
        tiny_set, tmp_path, user_cache, monkeypatch, capsys):
    """Ctrl-C after the first of the fit's two logs: the model stays, no calibrator is written, the log's maps stay
    in the user's cache under the model's digest (another model's fit never counts them), and ``fit-confidence``
    re-traces that log and reads the other: one log read by the network, not two."""
    small = nc.fit_network_calibrator

    def interrupted(*args, **kwargs):
        for ev in small(*args, **kwargs):
            yield ev
            if isinstance(ev, FitLogEvent) and ev.done == 1:
                raise KeyboardInterrupt

    monkeypatch.setattr(nc, "fit_network_calibrator", interrupted)
    out = tmp_path / "m.safetensors"
    assert _train(tiny_set, out) == 130
    err = capsys.readouterr().err
    assert "interrupted while fitting the confidence" in err and f"the model {out} is kept" in err
    assert f"welltrace fit-confidence --model {out}" in err and "the 1 logs read are kept" in err
    assert out.is_file() and not sidecar_path(out).exists()
    kept = sorted(user_cache.rglob("*.npz"))
    assert len(kept) == 1 and kept[0].parent.parent.name == f"{model_digest(out)}-model"
    assert nc.fit_estimate_s(out, 1, FAMILIES, SIZE)[1] == 1
    other = tmp_path / "other.safetensors"
    assert _train(tiny_set, other, "--no-fit-confidence", "--seed", "5") == 0
    assert model_digest(other) != model_digest(out) and nc.fit_estimate_s(other, 1, FAMILIES, SIZE)[1] == 0

    monkeypatch.setattr(nc, "fit_network_calibrator", small)
    capsys.readouterr()
    assert main(["fit-confidence", "--model", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["logs"] == 2 and report["cached_logs"] == 1  # resumed: the first log re-traced
    assert sidecar_path(out).is_file() and not (user_cache / f"{model_digest(out)}-model").exists()

    # a folder named with --cache is the user's own: kept as it is, and the user's cache is not touched
    mine = tmp_path / "maps"
    assert main(["fit-confidence", "--model", str(out), "--cache", str(mine), "--json"]) == 0
    assert len(list(mine.rglob("*.npz"))) == 2 and not any(user_cache.iterdir())


def test_the_user_cache_keeps_at_most_two_models_maps_and_nothing_else_is_touched(tmp_path):
    root = tmp_path / "confidence-fit"
    names = [f"{i:016x}-model" for i in range(4)]
    for k, name in enumerate(names):
        (root / name / "random-1600x480-s515151").mkdir(parents=True)
        (root / name / "random-1600x480-s515151" / "random_00.npz").write_bytes(b"x")
        os.utime(root / name, (1000 + k, 1000 + k))  # names[3] the most recently used
    (root / "notes").mkdir()  # not a cache folder of a model: never removed
    gone = nc.prune_fit_cache(root, 2, keep_folder=root / names[0])  # the oldest is the one being fitted now
    assert sorted(p.name for p in gone) == [names[1], names[2]]
    assert sorted(p.name for p in root.iterdir()) == sorted([names[0], names[3], "notes"])


def test_adapt_fits_the_adapted_model_s_calibrator_and_says_where_in_its_json(tmp_path, user_cache, monkeypatch,
                                                                              capsys):
    """The command's end, after an adaptation (its loop is tests/core/test_adapt.py's: here one that writes a model
    of its own at once)."""
    from core.engine import adapt as adapt_engine
    from core.model.bundled import BUNDLED_MODEL

    def adapted(cfg):
        nudged_bundled_model(cfg.out)
        yield adapt_engine.AdaptReport({"curve_r": 0.9}, {"curve_r": 0.95}, ["a"], ["b"], 1, 1.0, cfg.out, 1)

    monkeypatch.setattr(adapt_engine, "adapt", adapted)
    folder, out = tmp_path / "scans", tmp_path / "adapted.safetensors"
    folder.mkdir()
    assert main(["adapt", str(folder), "--model", str(BUNDLED_MODEL), "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)  # stdout is the JSON alone: the fit's lines went to stderr
    assert report["confidence"] == str(sidecar_path(out)) and sidecar_path(out).is_file()
    assert "fitting the confidence (CONF) for adapted.safetensors" in captured.err
    assert ConfidenceModel.load(sidecar_path(out)).about["network_sha256_16"] == model_digest(out)

    sidecar_path(out).unlink()
    assert main(["adapt", str(folder), "--model", str(BUNDLED_MODEL), "--out", str(out), "--no-fit-confidence"]) == 0
    assert "fitting the confidence" not in capsys.readouterr().out and not sidecar_path(out).exists()
