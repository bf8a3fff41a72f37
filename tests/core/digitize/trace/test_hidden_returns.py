"""A wrapping curve's return from its backup scale that the path cut short: the path ran straight across from the
stroke going out through one edge to the stroke coming in from the other, and the ink says it came back."""

import numpy as np

from core.digitize.trace.missed_returns import hidden_returns, take_hidden_returns

ROWS, COLS = 100, 60


def _band(with_return_stroke: bool = True):
    """Out through row 0 in a stroke over columns 10-30; in from the last row in a stroke over columns 24-33 (a
    dotted pen: every other row inked); the path leaves the first stroke at row 30 (column 20) and runs straight to
    the second, unseen over columns 21-32, then along depth at row 27."""
    inked = np.zeros((ROWS, COLS), bool)
    for c in range(10, 31):
        r = 60 - 3 * (c - 10)
        inked[max(r - 1, 0) : r + 2, c] = True
    if with_return_stroke:
        for c in range(24, 34):
            r = 99 - 8 * (c - 24)
            inked[r : min(r + 9, ROWS) : 2, c] = True
    inked[26:29, 33:] = True
    path = np.empty(COLS, np.int64)
    path[:21] = [60 - 3 * (c - 10) if c >= 10 else 60 for c in range(21)]
    path[21:33] = 30
    path[33:] = 27
    observed = inked[path, np.arange(COLS)]
    return path, inked, observed


def test_a_return_drawn_in_two_strokes_the_path_cut_across_is_found():
    path, inked, observed = _band()
    assert not observed[21:33].any() and observed[33:].all()
    taken = np.zeros(COLS, np.int64)
    found = hidden_returns(path, inked, observed, taken, -1, max_gap_px=16, gap_px=16)
    assert list(found) == [21]
    # a crossing already taken between is no hidden one; without the stroke coming in the ink shows none
    taken[25] = -1
    assert hidden_returns(path, inked, observed, taken, -1, 16, 16).size == 0
    taken[25] = 0
    path, inked, observed = _band(with_return_stroke=False)
    assert hidden_returns(path, inked, observed, taken, -1, 16, 16).size == 0


def test_a_hidden_return_is_taken_only_from_the_backup_scale():
    steps = np.zeros(100, np.int64)
    steps[10] = 1  # up onto the backup ("high"), its return unseen: the rest of the log read a scale up
    assert (take_hidden_returns(steps, np.zeros(0, np.int64), "high")[1][10:] == 1).all()
    steps_after, level, unsure = take_hidden_returns(steps, np.array([40, 70]), "high")
    assert (level[10:40] == 1).all() and (level[40:] == 0).all()  # back at 40; at 70 it is on the main scale
    assert list(np.flatnonzero(steps_after)) == [10, 40] and not unsure.any()
    low = take_hidden_returns(-steps, np.array([40]), "low")[1]
    assert (low[10:40] == -1).all() and (low[40:] == 0).all()


def test_no_hidden_return_inside_a_stretch_a_later_return_pins():
    steps = np.zeros(100, np.int64)
    steps[[10, 60]] = [1, -1]  # up, and back at 60, both seen
    steps_after, level, unsure = take_hidden_returns(steps, np.array([40]), "high")
    assert (level[10:60] == 1).all() and (level[60:] == 0).all() and not unsure.any()
    assert list(np.flatnonzero(steps_after)) == [10, 60]
