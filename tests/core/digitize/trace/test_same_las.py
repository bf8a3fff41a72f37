"""The compiled tracers write the LAS the NumPy tracers of d36c861 wrote: every value and confidence within 1e-6,
NULL where it was NULL, on the shared real scans (a stretch of each) and on a log of each print family the bundled
model never trained on. The network reads each picture once; the same maps are traced by both tracers
(``reference_tracer.py`` patched in for the second)."""

from __future__ import annotations

import numpy as np
import pytest

from core.digitize.job import pipeline
from core.digitize.rules import curve
from core.digitize.trace import group
from core.io.calibration import Calibration, CurveSpec, Section
from core.io.scan import load_scan
from core.model.bundled import BUNDLED_MODEL
from core.model.model_io import load_model

from . import reference_tracer as reference

HELD_OUT_FAMILIES = ("log_decades", "dotted_fax", "dense", "random", "colour")  # none in the bundled model's styles


@pytest.fixture(scope="module")
def bundled():
    model, info = load_model(BUNDLED_MODEL)
    assert not set(HELD_OUT_FAMILIES) & set(info["summary"]["styles"])
    return model


def _traced_twice(monkeypatch, image, calib, model, rgb=None):
    """(compiled, reference): the results of digitising ``image`` with each tracer, the network read once."""
    import torch

    maps = []
    read = pipeline.model_evidence

    def reading(*args, **kwargs):
        maps.append(read(*args, **kwargs))
        return maps[-1]

    monkeypatch.setattr(pipeline, "model_evidence", reading)
    with torch.no_grad():
        compiled = pipeline.digitize_sections(image, calib, model=model, rgb=rgb)
    replay = iter(maps)
    monkeypatch.setattr(pipeline, "model_evidence", lambda *a, **k: next(replay))
    monkeypatch.setattr(curve, "viterbi_path", reference.viterbi_path)
    monkeypatch.setattr(group, "trace_group", reference.trace_group)
    with torch.no_grad():
        before = pipeline.digitize_sections(image, calib, model=model, rgb=rgb)
    monkeypatch.undo()
    return [res for _, _, res in compiled], [res for _, _, res in before]


def _assert_same_las(compiled, before) -> tuple[int, int]:
    """Every curve's values and confidences the same within 1e-6, NULL in the same samples; returns the count of
    values written and of samples."""
    written = samples = 0
    for a, b in zip(compiled, before, strict=True):
        assert a.values.keys() == b.values.keys()
        for name in a.values:
            va, vb = a.values[name], b.values[name]
            assert np.array_equal(np.isnan(va), np.isnan(vb)), name
            np.testing.assert_allclose(va, vb, rtol=0, atol=1e-6, equal_nan=True, err_msg=name)
            np.testing.assert_allclose(a.confidence[name], b.confidence[name], rtol=0, atol=1e-6, equal_nan=True,
                                       err_msg=name)
            written += int(np.isfinite(va).sum())
            samples += va.size
    return written, samples


def _stretch(calib: Calibration, start: int, stop: int) -> Calibration:
    """The calibration read over [start, stop) along depth alone, with its depth picks (its main section's)."""
    picks = calib.sections[0].depth_picks if calib.sections and calib.sections[0].depth_picks else calib.depth_picks
    calib.sections = [Section(start, stop, "main", picks)]
    return calib


@pytest.mark.slow
def test_the_shared_scans_read_the_same(monkeypatch, shared_data, bundled):
    """KGS (a GR with a backup scale, two solid curves of one track traced jointly, dashed curves), the North
    Dakota open-hole log with its heavy depth lines, and the tallest scan's gamma ray and dotted tension."""
    kgs = _stretch(_kgs_calibration(), 8400, 9900)
    nd = _stretch(Calibration.load(shared_data / "cases" / "iqa_33-023-01146-0006.calib.json"), 5000, 6500)
    tall = _stretch(_tall_calibration(), 40000, 42000)
    for stem, calib in (("kgs_273101_bhc_sonic", kgs), ("iqa_33-023-01146-0006", nd), ("iqa_33-025-02289-0001", tall)):
        scan = load_scan(shared_data / "scans" / f"{stem}.tif")
        written, samples = _assert_same_las(*_traced_twice(monkeypatch, scan.image, calib, bundled, scan.rgb))
        assert written > 0.5 * samples, stem  # the curves were read, not NULL throughout


@pytest.mark.slow
def test_the_held_out_families_read_the_same(monkeypatch, bundled):
    from core.evaluation.styles import family_logs

    for family in HELD_OUT_FAMILIES:
        for lg in family_logs(family, 1, 1600, 480):
            written, samples = _assert_same_las(*_traced_twice(monkeypatch, lg.image, lg.calibration, bundled, lg.rgb))
            assert written > 0.5 * samples, family


def _kgs_calibration() -> Calibration:
    from pathlib import Path

    return Calibration.load(Path(__file__).resolve().parents[3] / "data" / "kgs_273101_bhc_sonic.calib.json")


def _tall_calibration() -> Calibration:
    """``iqa_33-025-02289-0001``'s long gamma-ray section as ``docs/benchmarks.md`` reads it: GR (solid, 0-100 GAPI)
    and the dotted tension (5000-0 LBF), 5 px a foot."""
    return Calibration("y", "FT", [(31301.0, 28.0), (83614.0, 10490.0)], 0.5, [
        CurveSpec("GR", "GAPI", "Gamma ray", 1, (1.0, 249.5), (0.0, 100.0)),
        CurveSpec("TENS", "LBF", "Tension", 3, (324.0, 824.0), (5000.0, 0.0))])
