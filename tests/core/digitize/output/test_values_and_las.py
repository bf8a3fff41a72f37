"""``core/digitize/output``: a trace's values and confidences on the LAS depth grid, and the LAS written and read
back as a result."""

import lasio
import numpy as np
import pytest
from PIL import Image

from core.digitize.output.las import confidence_mnemonic, result_from_las, write_result
from core.digitize.output.result import DigitizeResult
from core.digitize.output.values import trace_to_confidence, trace_to_values
from core.digitize.trace.params import Trace
from core.io.calibration import Calibration, CurveSpec


def _calib() -> Calibration:
    spec = CurveSpec("GR", "GAPI", "Gamma ray", 1, (100.0, 300.0), (0.0, 150.0))
    return Calibration(depth_axis="y", depth_unit="FT", depth_picks=[(0.0, 1000.0), (399.0, 1399.0)], step=1.0,
                       curves=[spec])


def _trace(cols: int = 400) -> Trace:
    pos = np.linspace(120.0, 280.0, cols)
    pos[200:240] = np.nan  # a gap: NULL, never invented
    return Trace("GR", pos, np.zeros(cols, np.int64), np.where(np.isfinite(pos), 0.9, 0.0).astype(np.float32),
                 np.isfinite(pos))


def test_values_follow_the_track_fraction_and_a_gap_stays_null():
    calib, tr = _calib(), _trace()
    depth = calib.depth_grid(400)
    values = trace_to_values(tr, calib.curves[0], calib, depth)
    conf = trace_to_confidence(tr, calib, values, depth)
    px = calib.pixel_at(depth)
    expected = (np.interp(px, np.arange(400), np.linspace(120.0, 280.0, 400)) - 100.0) / 200.0 * 150.0
    seen = np.isfinite(values)
    assert np.allclose(values[seen], expected[seen], atol=1e-6)
    assert not seen[(px > 201) & (px < 238)].any() and seen[(px < 190) | (px > 250)].all()
    # NULL exactly where the value is; a sample takes the lesser of its two columns' confidence (0 beside the gap)
    assert np.array_equal(np.isnan(conf), ~seen) and np.allclose(conf[(px < 190) | (px > 250)], 0.9)
    assert (conf[seen] <= 0.9 + 1e-9).all()


def test_a_value_past_the_printed_scale_is_null_without_a_backup_scale():
    calib = _calib()
    tr = _trace()
    tr.position[:50] = 330.0  # 15 % past the track's right end
    values = trace_to_values(tr, calib.curves[0], calib, calib.depth_grid(400))
    assert np.isnan(values[calib.pixel_at(calib.depth_grid(400)) < 45]).all()


def test_the_las_written_reads_back_as_the_same_values_with_their_confidence(tmp_path):
    calib, tr = _calib(), _trace()
    depth = calib.depth_grid(400)
    values = {"GR": trace_to_values(tr, calib.curves[0], calib, depth)}
    conf = {"GR": trace_to_confidence(tr, calib, values["GR"], depth)}
    basis = "probability within 5 % of the scale, calibrated on demo.safetensors (1d7546afb54839c8)"
    result = DigitizeResult(depth, values, [tr], np.zeros((400, 400), np.uint8), "model", confidence=conf,
                            confidence_basis=basis)
    path = tmp_path / "out.las"
    write_result(path, result, calib, "scan.png", "demo.safetensors", well={"WELL": "W 1"})
    las = lasio.read(str(path))
    assert [c.mnemonic for c in las.curves] == ["DEPT", "GR", confidence_mnemonic("GR")]
    assert las.well["WELL"].value == "W 1" and "demo.safetensors" in str(las.other)
    assert f"confidence: {basis}" in las.other.splitlines()  # what the _CONF curves are, in the header
    back = result_from_las(path, calib, (400, 400))
    assert np.allclose(back.values["GR"], values["GR"], equal_nan=True, atol=1e-3)
    assert np.allclose(back.confidence["GR"], conf["GR"], equal_nan=True)
    assert back.method == "model" and back.confidence_basis == basis  # saved again, it says the same


def test_a_scale_printed_anew_partway_down_holds_from_its_depth_on():
    """A mud log's gas scale changed at 1200 ft (0–150 → 0–300, and 0–600 from 1300 ft): the same pixel reads
    twice the value from there on; above it, the first scale; on a log upside down (depth up the page) the change
    holds from its depth upwards."""
    calib, tr = _calib(), _trace()
    spec = calib.curves[0]
    spec.scale_changes = [(1300.0, (0.0, 600.0)), (1200.0, (0.0, 300.0))]  # any order in; applied by depth
    depth = calib.depth_grid(400)
    values = trace_to_values(tr, spec, calib, depth)
    fraction = (np.interp(calib.pixel_at(depth), np.arange(400), np.linspace(120.0, 280.0, 400)) - 100.0) / 200.0
    top = np.where(depth >= 1300, 600.0, np.where(depth >= 1200, 300.0, 150.0))
    seen = np.isfinite(values)
    assert np.allclose(values[seen], (fraction * top)[seen], atol=1e-6)
    assert spec.scales_at([1100.0, 1250.0, 1350.0]).tolist() == [[0, 150], [0, 300], [0, 600]]
    assert spec.scales_at([1100.0, 1250.0, 1400.0], down_is_deeper=False).tolist() == [[0, 300], [0, 600], [0, 150]]
    # a log track changes its ends too; without changes the curve reads its one scale as before
    log_spec = CurveSpec("C1", "PPM", "", 1, (0.0, 100.0), (1.0, 1000.0), log=True,
                         scale_changes=[(1200.0, (10.0, 10000.0))])
    assert np.allclose(log_spec.value_of_fraction([0.5, 0.5], log_spec.scales_at([1100.0, 1250.0])),
                       [10 ** 1.5, 10 ** 2.5])
    assert CurveSpec("GR", "", "", 1, (0.0, 1.0), (0.0, 150.0)).scales_at([5.0]).tolist() == [[0, 150]]


def test_a_scans_las_reads_back_with_its_other_sections(tmp_path):
    """A scan opened again showed its main pass from NAME.digitized.las alone: NAME.digitized.repeat.las was not
    read back, so the app's Export LAS lost the repeat pass. Each other section's LAS is read back beside it, in
    its section's own depths; one that is missing or unreadable is said and left out."""
    import json

    from core.cli.main import main
    from core.digitize.output.las import results_from_las

    main(["synth", str(tmp_path), "--count", "1", "--seed", "2", "--width", "900", "--height", "256"])
    scan, cpath = tmp_path / "synth_000.png", tmp_path / "synth_000.calib.json"
    data = json.loads(cpath.read_text())
    (_, d0), (_, d1) = data["depth_picks"][0], data["depth_picks"][-1]
    shape = np.asarray(Image.open(scan)).shape[:2]
    cut = shape[0] // 2 if data["depth_axis"] == "y" else shape[1] // 2
    end = 2 * cut - 1
    data["sections"] = [{"kind": "main", "span": [0, cut]},
                        {"kind": "repeat", "span": [cut, end], "depth_picks": [[cut, d0], [end, d0 + (d1 - d0) / 4]]}]
    cpath.write_text(json.dumps(data))
    assert main(["digitize", str(scan), "--classical"]) == 0
    calib = Calibration.load(cpath)
    main_las, repeat_las = tmp_path / "synth_000.digitized.las", tmp_path / "synth_000.digitized.repeat.las"
    result, notes = results_from_las(main_las, calib, shape)
    assert notes == [] and [suffix for suffix, _ in result.others] == ["repeat"]
    repeat = result.others[0][1]
    written = lasio.read(str(repeat_las))
    assert repeat.depth == pytest.approx(written.index) and repeat.depth[0] == pytest.approx(d0, abs=0.5)
    name = calib.curves[0].mnemonic
    assert np.allclose(repeat.values[name], written[name], equal_nan=True)
    repeat_las.write_text("not a LAS")
    result, notes = results_from_las(main_las, calib, shape)
    assert result.others == [] and len(notes) == 1 and repeat_las.name in notes[0]
    repeat_las.unlink()
    assert results_from_las(main_las, calib, shape)[1] == []  # never digitised: nothing to say
