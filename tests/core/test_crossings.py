"""Same-style curves keep their identity through a crossing; the user's swap over a depth range."""

import numpy as np
import pytest

from core.calibration import Calibration, CurveSpec
from core.crossings import swap_range
from core.trace import trace_all, trace_to_values

COLS, ROWS = 1200, 200


def _x_crossing():
    """Two solid lines of one style crossing in an X (and a bounce would look just as cheap)."""
    ev = np.zeros((ROWS, COLS), np.float32)
    c = np.arange(COLS)
    a = 30 + 140 * c / (COLS - 1) + 6 * np.sin(c / 40)  # rises across the track
    b = 170 - 140 * c / (COLS - 1) + 6 * np.cos(c / 55)  # falls across it
    for line in (a, b):
        r = np.rint(line).astype(int)
        for d in (-1, 0, 1):
            ev[np.clip(r + d, 0, ROWS - 1), c] = 1.0
    specs = [CurveSpec("ILD", "OHMM", "", 1, (0.0, ROWS - 1.0), (0.0, 100.0)),
             CurveSpec("ILM", "OHMM", "", 1, (0.0, ROWS - 1.0), (0.0, 100.0))]
    calib = Calibration("x", "FT", [[0.0, 0.0], [COLS - 1.0, (COLS - 1) / 4]], 0.25, specs)
    return ev, calib, a, b


def test_same_style_curves_keep_their_identity_through_a_crossing():
    ev, calib, a, b = _x_crossing()
    traces = trace_all({1: ev, 2: np.zeros_like(ev), 3: np.zeros_like(ev)}, calib)
    # the first curve listed is the one nearer track[0] (row 0) at the top of the log: line a
    for tr, truth in zip(traces, (a, b)):
        ok = np.isfinite(tr.position)
        assert ok.mean() > 0.95
        assert np.median(np.abs(tr.position[ok] - truth[ok])) < 1.5
        assert np.abs(tr.position[ok] - truth[ok]).max() < 12  # no stretch on the other line


def test_swap_range_exchanges_values_between_two_depths_only():
    depth = np.arange(1000.0, 1010.0, 0.5)
    vals = {"A": np.arange(depth.size, dtype=float), "B": -np.arange(depth.size, dtype=float)}
    n = swap_range(vals, "A", "B", depth, 1006.0, 1002.0)  # either order
    sel = (depth >= 1002) & (depth <= 1006)
    assert n == sel.sum() == 9
    assert np.array_equal(vals["A"][sel], -np.flatnonzero(sel).astype(float))
    assert np.array_equal(vals["A"][~sel], np.flatnonzero(~sel).astype(float))
    for args, why in ((("A", "C", depth, 1001, 1002), "no curve 'C'"), (("A", "A", depth, 1001, 1002), "two different"),
                      (("A", "B", depth, 2000, 2100), "outside the log")):
        with pytest.raises(ValueError, match=why):
            swap_range(vals, *args)
