"""The scale a curve reads where its backup scale is drawn in an ink of its own (core/digitize/rules/ink_levels.py)."""

import numpy as np

from core.digitize.rules.ink_levels import levels_by_ink
from core.digitize.rules.passes import flagged
from core.digitize.trace.params import Trace
from core.io.calibration import CurveSpec

COLS, ROWS, OFFSET = 200, 100, 10


def _trace(position: np.ndarray, wraps: np.ndarray | None = None) -> Trace:
    return Trace("GR", position.astype(np.float64), np.zeros(COLS, np.int64) if wraps is None else wraps,
                 np.ones(COLS, np.float32), np.isfinite(position), None)


def _inks(position: np.ndarray, backup_cols: slice, neither: list[slice]) -> tuple[np.ndarray, np.ndarray]:
    """Evidence of the main ink along the path except over ``backup_cols`` (the backup ink's) and ``neither``."""
    main, backup = np.zeros((ROWS, COLS), np.float32), np.zeros((ROWS, COLS), np.float32)
    rows = np.rint(position).astype(int) - OFFSET
    cols = np.arange(COLS)
    main[rows, cols] = 0.9
    main[:, backup_cols] = 0.0
    backup[rows[backup_cols], cols[backup_cols]] = 0.8
    for s in neither:
        main[:, s] = backup[:, s] = 0.1  # a heavy line over the stroke: neither ink clearly
    return main, backup


def test_the_ink_under_the_path_names_the_scale_and_a_crossing_between_is_uncertain():
    spec = CurveSpec("GR", "GAPI", "", 1, (10.0, 109.0), (1.0, 300.0), wrap=True, backup="high")
    position = 50 + 20 * np.sin(np.arange(COLS) / 15.0)
    main, backup = _inks(position, slice(90, 111), [slice(80, 90), slice(111, 121)])
    wraps = np.zeros(COLS, np.int64)
    wraps[150:] = 1  # the edges' count had the curve on its backup scale after a missed return
    trace = _trace(position, wraps)
    levels_by_ink(trace, spec, main, backup, OFFSET, max_gap_px=16)
    assert (trace.wraps[:80] == 0).all() and (trace.wraps[90:111] == 1).all() and (trace.wraps[121:] == 0).all()
    # between the last main-ink column and the first backup one the crossing lies somewhere: uncertain, each
    # column on its nearer side's scale, doubted (the pass ``ink_level``)
    assert trace.level_unsure[80:90].all() and trace.level_unsure[111:121].all()
    assert not trace.level_unsure[:80].any() and not trace.level_unsure[90:111].any()
    assert flagged(trace.flags[80:90], "ink_level").all() and not flagged(trace.flags[:80], "ink_level").any()
    assert (trace.wraps[80:85] == 0).all() and (trace.wraps[86:90] == 1).all()
    assert np.allclose(spec.value_at(trace.position[95], trace.wraps[95]), spec.value_at(trace.position[95]) + 299)
    # a "low" backup reads a scale below
    low = CurveSpec("DT", "US/F", "", 1, (10.0, 109.0), (140.0, 40.0), wrap=True, backup="low")
    trace = _trace(position)
    levels_by_ink(trace, low, main, backup, OFFSET, max_gap_px=16)
    assert (trace.wraps[90:111] == -1).all() and spec.backup == "high"


def test_where_neither_ink_is_under_the_path_the_edges_count_stands():
    spec = CurveSpec("GR", "GAPI", "", 1, (10.0, 109.0), (1.0, 300.0), wrap=True, backup="high")
    position = np.full(COLS, 60.0)
    position[40:60] = np.nan  # a gap in the trace
    wraps = np.zeros(COLS, np.int64)
    wraps[120:] = 1
    trace = _trace(position, wraps)
    levels_by_ink(trace, spec, np.zeros((ROWS, COLS), np.float32), np.zeros((ROWS, COLS), np.float32), OFFSET, 16)
    assert (trace.wraps == wraps).all() and trace.level_unsure is None
    # ink named over the first columns only: beyond the bridged gap's reach the edges' count stands
    main = np.zeros((ROWS, COLS), np.float32)
    main[50, :30] = 0.9
    trace = _trace(position, wraps.copy())
    levels_by_ink(trace, spec, main, np.zeros_like(main), OFFSET, 16)
    assert (trace.wraps[:46] == 0).all() and (trace.wraps[120:] == 1).all()
