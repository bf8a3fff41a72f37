"""A wrapping curve's crossing whose strokes stop short of the track's edges (``path_kernels._edge_steps``), and a
short excursion taken whole or not at all (``wraps.round_trips``)."""

import numpy as np

from core.digitize.trace.params import TraceParams
from core.digitize.trace.path_search import edge_steps, viterbi_path
from core.digitize.trace.wraps import round_trips

ROWS, COLS = 200, 60


def _band(leave_to: int, enter_from: int) -> np.ndarray:
    """A curve at row 120 that leaves through the last row between columns 30 and 31 and comes in again from row 0
    to row 60: its stroke at column 30 runs from 120 to ``leave_to``, at column 31 from ``enter_from`` to 60, and
    the rows between the strokes and the edges are paper, as a print leaves them where a curve crosses steeply."""
    ev = np.zeros((ROWS, COLS))
    ev[120, :31] = 0.9
    ev[120 : leave_to + 1, 30] = 0.9
    ev[enter_from:61, 31] = 0.9
    ev[60, 31:] = 0.9
    return ev


def test_the_edge_zones_are_the_judges():
    assert edge_steps(ROWS) == (20, 6)  # wraps.edge_zone: a tenth of the track; a thin stroke's break


def test_a_crossing_whose_strokes_reach_the_edge_zones_is_taken():
    # the strokes stop 25 rows short of either edge, 1 row into the judge's edge zone's reach: priced as paper, the
    # 50 blank rows cost more than the direct move across the 59 between the strokes; along the zones, less
    path, wraps = viterbi_path(_band(174, 25), TraceParams(), cyclic=True)
    assert path[29] == 120 and path[32] == 60
    assert np.flatnonzero(wraps).tolist() == [31] and wraps[31] == 1


def test_strokes_that_stop_short_of_the_zones_cross_as_before():
    # 10 rows farther from the edges the zones are no stroke's: the direct move wins, as it did
    path, wraps = viterbi_path(_band(164, 35), TraceParams(), cyclic=True)
    assert path[29] == 120 and path[32] == 60
    assert not wraps.any()


def test_a_short_excursion_is_taken_whole_or_not_at_all():
    steps = np.zeros(100, np.int64)
    steps[[10, 14, 50, 90]] = [1, -1, 1, -1]  # 10 and 14: an excursion; 50 and 90 farther apart than the span
    out = np.zeros(100, np.int64)
    out[[10, 50]] = [1, 1]  # the judge took the leave at 10, not the return at 14
    round_trips(steps, out, 25, [14])
    assert np.flatnonzero(out).tolist() == [50]  # 10 dropped with its return; 50 stays (90 is 40 columns on)
    out[[10, 14]] = [1, -1]  # both taken: kept
    round_trips(steps, out, 25, [14])
    assert np.flatnonzero(out).tolist() == [10, 14, 50]


def test_a_crossing_whose_partner_the_ink_never_called_a_wrap_is_kept():
    # the return at 14 was a hop the ink does not call a crossing (not among the judge's refused ones): the leave at
    # 10 is a level change of its own and stays
    steps = np.zeros(100, np.int64)
    steps[[10, 14]] = [1, -1]
    out = np.zeros(100, np.int64)
    out[10] = 1
    round_trips(steps, out, 25, [])
    assert np.flatnonzero(out).tolist() == [10]
