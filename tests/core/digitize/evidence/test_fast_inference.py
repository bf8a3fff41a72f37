"""The fast inference path (channels-last PyTorch over the band of rows the tracks need) against the reference path
(eager NCHW over every row): the same maps within float tolerance, the same LAS values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.cli.main import main
from core.digitize.evidence.network import Windowing, evidence_band, predict_windows
from core.digitize.job.pipeline import digitize
from core.digitize.page.frame import to_canonical
from core.io.calibration import Calibration
from core.io.scan import load_scan
from core.model import precision as prec
from core.model.bundled import BUNDLED_MODEL
from core.model.model_io import load_model
from core.model.runtime import torch_runner


@pytest.fixture(scope="module")
def model():
    m, _ = load_model(BUNDLED_MODEL)
    return m


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fast")
    assert main(["synth", str(folder), "--count", "1", "--seed", "11", "--width", "2600", "--height", "320",
                 "--curves", "2"]) == 0
    return load_scan(folder / "synth_000.png").image, Calibration.load(folder / "synth_000.calib.json")


def test_channels_last_maps_equal_the_reference_maps(model, log):
    image, calib = log
    canon = to_canonical(image, calib.depth_axis)
    fp32 = prec.resolve("fp32", "cpu")
    with torch.inference_mode():
        fast = predict_windows(model, canon, fp32, runner=torch_runner(model, fp32, channels_last=True))
        ref = predict_windows(model, canon, fp32, runner=torch_runner(model, fp32, channels_last=False))
    assert fast.windows == ref.windows > 1
    for k in ref.maps:
        diff = np.abs(fast.maps[k][:, :] - ref.maps[k][:, :])
        assert diff.max() < 2e-3, (k, diff.max())  # float summation order only
    assert (fast.mask != ref.mask).mean() < 1e-4


def test_the_fast_path_writes_the_reference_las_values(model, log):
    image, calib = log
    fast = digitize(image, calib, model=model)
    ref = digitize(image, calib, model=model, reference=True)
    assert ref.memory["path"] == "reference" and fast.memory["path"] == "fast"
    # the maps differ by float summation order and their 8-bit code (half a step, 0.002): where a path is near a
    # tie that moves a few samples. Measured 2026-11-26: identical with stage 3; with stage 7 (bf16-trained) 3 of
    # 2,063 PEF samples and 9 of SFLU's more than 1 % of the scale apart (at most 7.0 and 4.2 %), r 0.9998 and
    # 0.9988: held to at most 1 % of the samples so moved
    for spec in calib.curves:
        v, w = ref.values[spec.mnemonic], fast.values[spec.mnemonic]
        both = np.isfinite(v) & np.isfinite(w)
        assert both.mean() > 0.5 and np.array_equal(np.isfinite(v), np.isfinite(w)), spec.mnemonic
        apart = np.abs(v[both] - w[both]) / abs(spec.scale[1] - spec.scale[0])
        assert (apart > 0.01).mean() < 0.01, (spec.mnemonic, (apart > 0.01).sum(), apart.max())
        assert np.corrcoef(v[both], w[both])[0, 1] >= 0.998, spec.mnemonic


def test_the_band_covers_the_tracks_with_the_networks_reach_and_nothing_beyond(model, log):
    image, calib = log
    cfg = model.cfg
    reach = Windowing.for_model(cfg, 0).margin
    assert evidence_band([(400.0, 600.0), (700.0, 900.0)], 2000, cfg) == ((400 - reach) // cfg.stride * cfg.stride,
                                                                         900 + 1 + reach)
    assert evidence_band([(5.0, 300.0)], 320, cfg) == (0, 320)  # clipped to the picture
    assert evidence_band([], 320, cfg) == (0, 320)
    # a scan with a wide text column beyond its tracks: the network does not read it, its maps are zero there
    canon = to_canonical(image, calib.depth_axis)
    wide = np.vstack([canon, np.full((600, canon.shape[1]), 255, np.uint8)])
    lo, hi = evidence_band([c.track for c in calib.curves], wide.shape[0], cfg)
    assert hi < wide.shape[0]
    fp32 = prec.resolve("fp32", "cpu")
    ev = predict_windows(model, wide, fp32, rows=(lo, hi))
    for m in ev.maps.values():
        assert not m.codes[hi:].any()


def test_bench_digitize_prints_every_stage_for_both_paths(tmp_path, capsys):
    import json

    assert main(["synth", str(tmp_path), "--count", "1", "--seed", "3", "--width", "1500", "--height", "256"]) == 0
    capsys.readouterr()
    assert main(["bench-digitize", str(tmp_path / "synth_000.png"), "--calib", str(tmp_path / "synth_000.calib.json"),
                 "--model", str(BUNDLED_MODEL), "--compare", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "cores" in out["machine"]
    for path in ("fast", "reference"):
        stages = out["seconds"][path]
        assert all(stages[s] >= 0 for s in ("read", "evidence", "grid", "trace", "write"))
        assert stages["evidence"] > 0 and stages["total"] >= stages["evidence"]
        rate = out["scans_per_hour"][path]  # one after the other, and streamed: the longer half bounds it
        assert rate["sequential"] == pytest.approx(3600 / stages["total"])
        longer = max(stages["read"] + stages["grid"] + stages["evidence"], stages["trace"] + stages["write"])
        assert rate["streamed"] == pytest.approx(3600 / longer) and rate["streamed"] >= rate["sequential"]
    assert out["las_r_fast_vs_reference"] and min(out["las_r_fast_vs_reference"].values()) >= 0.999
    assert main(["bench-digitize", str(tmp_path / "synth_000.png"), "--calib", str(tmp_path / "synth_000.calib.json"),
                 "--classical"]) == 0
    text = capsys.readouterr().out
    assert all(s in text for s in ("read", "evidence", "grid", "trace", "write", "total", "scans/h", "streamed"))
