"""A wrapping curve's return from its backup scale that the move judge called direct on the path's own motion while
the path stood still: the ink between rules a drawn move out, only the stroke coming in from the far edge is seen (in
pieces), and the leave is not (random_06's SPHI: under a depth line)."""

import numpy as np

from core.digitize.trace.missed_returns import still_returns, take_still_returns
from core.digitize.trace.params import TraceParams
from core.digitize.trace.wraps import two_level_wraps

ROWS, COLS = 100, 60


def _band(before_slope: int = 1):
    """The path at row 40 up to column 20 (arriving at ``before_slope`` rows a column), then at row 62 from column
    21 on; no ink between rows 42 and 61 (20 rows: more than ``wrap_ink_gap_px``, under a quarter of the track); the
    stroke the path arrives on is inked at rows 62-65 in column 21 and at rows 84-99 in column 22 (in from the last
    row in two pieces, 18 rows apart); nothing runs from row 40 to row 0."""
    path = np.empty(COLS, np.int64)
    path[:21] = [40 - before_slope * (20 - c) if c > 14 else 40 - 6 * before_slope for c in range(21)]
    path[21:] = 62
    inked = np.zeros((ROWS, COLS), bool)
    for c in range(COLS):
        inked[path[c] - 1 : path[c] + 2, c] = True
    inked[62:66, 21] = True
    inked[84:100, 22] = True
    return path, inked, np.ones(COLS, bool)


def test_a_return_seen_by_its_entry_alone_where_the_path_stood_still_is_found():
    path, inked, observed = _band()
    taken = np.zeros(COLS, np.int64)
    assert list(still_returns(path, inked, observed, taken, -1, TraceParams())) == [21]
    # a step away is not taken on it, nor a move with a crossing already taken
    assert still_returns(path, inked, observed, taken, 1, TraceParams()).size == 0
    taken[21] = -1
    assert still_returns(path, inked, observed, taken, -1, TraceParams()).size == 0


def test_a_path_that_moves_along_the_move_keeps_the_velocitys_word():
    path, inked, observed = _band(before_slope=3)  # a steep stroke whose ink fell in dash gaps: direct
    assert still_returns(path, inked, observed, np.zeros(COLS, np.int64), -1, TraceParams()).size == 0


def test_without_the_stroke_coming_in_there_is_none():
    path, inked, observed = _band()
    inked[84:100, 22] = False
    assert still_returns(path, inked, observed, np.zeros(COLS, np.int64), -1, TraceParams()).size == 0


def _levels(steps):
    return two_level_wraps(steps, "high")


def test_a_still_return_is_taken_from_the_backup_scale_keeping_the_doubt_it_had():
    steps = np.zeros(100, np.int64)
    steps[60] = 1  # up onto the backup ("high"), its return unseen
    level, unsure = _levels(steps)
    assert not unsure.any()
    unsure[60:70] = True  # doubted before (say, by a dropped crossing)
    steps_after, level_after, unsure_after = take_still_returns(steps, level, unsure, np.array([30, 80, 90]), "high")
    # at 30 and at 90 the curve is on its main scale: no crossing; back at 80
    assert (level_after[:60] == 0).all() and (level_after[60:80] == 1).all() and (level_after[80:] == 0).all()
    assert list(np.flatnonzero(steps_after)) == [60, 80]
    assert unsure_after[60:70].all() and not unsure_after[:60].any() and not unsure_after[70:].any()


def test_a_still_return_inside_a_stretch_a_later_return_pins_doubts_the_level_to_it():
    steps = np.zeros(100, np.int64)
    steps[[10, 60]] = [1, -1]  # up, and back at 60, both seen
    level, unsure = _levels(steps)
    steps_after, level_after, unsure_after = take_still_returns(steps, level, unsure, np.array([40]), "high")
    assert (level_after == level).all() and list(np.flatnonzero(steps_after)) == [10, 60]
    assert unsure_after[40:60].all() and not unsure_after[:40].any() and not unsure_after[60:].any()
