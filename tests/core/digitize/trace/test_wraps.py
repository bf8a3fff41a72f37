"""A wrapping curve's crossing of its track's edge, judged from the ink between two observed columns
(``core/digitize/trace/wraps.py``)."""

import numpy as np

from core.digitize.trace.params import TraceParams
from core.digitize.trace.wraps import resolve_wraps, strokes_reach_edges, untaken_round_trips

ROWS, COLS = 200, 40


def _return_in_pieces(breaks: int):
    """A curve leaves through row 0 between columns 20 and 21 and comes in from the last row, each steep stroke
    read in pieces ``breaks`` rows apart (a network reads a stroke steeper than a row can place in runs: random_06's
    SPHI came back from its backup scale in runs of 4-19 rows, 4-15 apart, the last 21 rows inside the edge): the
    path at row 60, then at row 140, with nothing inked between the two."""
    ev = np.zeros((ROWS, COLS), np.float32)
    path = np.full(COLS, 60, np.int64)
    path[21:] = 140
    ev[60, :21] = ev[140, 21:] = 0.9  # the path's own ink
    r = 60
    while r > 0:  # the leaving stroke, from the path down to row 0, in runs of 8 rows
        ev[max(0, r - 8) : r, 19:21] = 0.9
        r -= 8 + breaks
    r = 140
    while r < ROWS:  # the entering stroke, from the last row up to the path
        ev[r : r + 8, 21:23] = 0.9
        r += 8 + breaks
    return path, ev


def test_a_crossing_whose_strokes_are_read_in_pieces_is_taken():
    """The strokes of a crossing are followed to the edges across the breaks a drawn move leaves
    (``TraceParams.wrap_ink_gap_px``, as :func:`hidden_returns` follows them), not the 6 rows a thin stroke's run
    has: a crossing between two neighbouring observed columns that the edges do not show is no move at all (its
    columns between are none to doubt), so the level on one side of it was carried on as if the move were direct
    (random_06's SPHI: 28 columns a scale off at confidence 0.94-1.00)."""
    params = TraceParams()
    step = np.zeros(COLS, np.int64)
    observed = np.ones(COLS, bool)
    path, ev = _return_in_pieces(breaks=12)
    inked = ev >= params.threshold
    assert not strokes_reach_edges(inked, 20, 21, 60, 140, -1)  # a thin stroke's 6 rows: not seen at the edges
    assert strokes_reach_edges(inked, 20, 21, 60, 140, -1, params.wrap_ink_gap_px)
    steps, doubtful = resolve_wraps(path, step, ev, observed, params)
    assert steps[21] == -1 and steps.sum() == -1 and not doubtful.any()
    # broken wider than a drawn move leaves, the strokes are not followed to the edges: no crossing
    path, ev = _return_in_pieces(breaks=24)
    steps, _ = resolve_wraps(path, step, ev, observed, params)
    assert not steps.any()
    # where the ink between leaves the move in doubt (the curve heading for row 0, 40 of the 80 rows between inked),
    # the strokes are followed across a thin stroke's breaks only: the same pieces show no crossing
    path, ev = _return_in_pieces(breaks=12)
    path[:21] = np.linspace(100, 60, 21).astype(np.int64)
    ev[61:101, 20] = 0.9
    steps, _ = resolve_wraps(path, step, ev, observed, params)
    assert not steps.any()
    ev[101:140, 20] = 0.9  # the rows between all inked: a direct move
    steps, _ = resolve_wraps(path, step, ev, observed, params)
    assert not steps.any()


def test_a_round_trip_the_judge_took_neither_crossing_of_is_doubted_between():
    """The path leaves the curve at row 100 across the row-0 edge between columns 20 and 21 and comes back between
    39 and 40, on a stroke at row 170 between; nothing runs to either edge, so the judge refuses both crossings, and
    between two neighbouring observed columns that leaves no column to doubt (the judge's hole). The level around is
    kept; between, it rests on the refusals alone, so those columns' level is not known (random_06's SPHI, 1,542 to
    1,566: 16 columns written a scale off at 0.95-1.00)."""
    params = TraceParams()
    path = np.full(60, 100, np.int64)
    path[21:40] = 170
    step = np.zeros(60, np.int64)
    step[[21, 40]] = [-1, 1]
    ev = np.zeros((ROWS, 60), np.float32)
    ev[path, np.arange(60)] = 0.9
    observed = np.ones(60, bool)
    steps, doubtful = resolve_wraps(path, step, ev, observed, params)
    assert not steps.any() and not doubtful.any()  # both refused, nothing between to doubt
    level = np.zeros(60, np.int64)
    assert np.flatnonzero(untaken_round_trips(step, steps, level)).tolist() == list(range(21, 40))


def test_untaken_round_trips_pair_the_crossings_in_order():
    step = np.zeros(100, np.int64)
    step[[10, 20, 60, 70]] = [1, -1, 1, -1]  # two short excursions: 20-60 between them is not a third
    none = np.zeros(100, np.int64)
    level = np.zeros(100, np.int64)
    doubted = untaken_round_trips(step, none, level)
    assert np.flatnonzero(doubted).tolist() == list(range(10, 20)) + list(range(60, 70))
    taken = none.copy()
    taken[60] = 1  # one crossing of the second taken: that excursion's level was decided
    assert np.flatnonzero(untaken_round_trips(step, taken, level)).tolist() == list(range(10, 20))
    level[20:] = 1  # a return taken at the first's far crossing by another rule: the level changes there
    assert np.flatnonzero(untaken_round_trips(step, none, level)).tolist() == list(range(60, 70))
    step[20] = 1  # two steps the same way are no round trip (nor is 20-60); 60-70 still is
    assert np.flatnonzero(untaken_round_trips(step, none, np.zeros(100, np.int64))).tolist() == list(range(60, 70))
