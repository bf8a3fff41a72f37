"""``core/digitize/output``: a trace's values and confidences on the LAS depth grid, and the LAS written and read
back as a result."""

import lasio
import numpy as np

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
    result = DigitizeResult(depth, values, [tr], np.zeros((400, 400), np.uint8), "model", confidence=conf)
    path = tmp_path / "out.las"
    write_result(path, result, calib, "scan.png", "demo.safetensors", well={"WELL": "W 1"})
    las = lasio.read(str(path))
    assert [c.mnemonic for c in las.curves] == ["DEPT", "GR", confidence_mnemonic("GR")]
    assert las.well["WELL"].value == "W 1" and "demo.safetensors" in str(las.other)
    back = result_from_las(path, calib, (400, 400))
    assert np.allclose(back.values["GR"], values["GR"], equal_nan=True, atol=1e-3)
    assert np.allclose(back.confidence["GR"], conf["GR"], equal_nan=True)
    assert back.method == "model"
