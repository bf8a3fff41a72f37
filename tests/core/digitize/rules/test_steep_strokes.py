"""A steep stroke the network reads in pieces: its value is the whole stroke's centre in the column, whichever piece
the path or the joint tracer took (``core/digitize/rules/stroke_values.py: steep_gap, stroke_runs``;
``group_curves._stroke_centred``; docs/accuracy.md, issue #60's seventh round)."""

import numpy as np

from core.digitize.rules.group_curves import _stroke_centred
from core.digitize.rules.stroke_values import bridged_rows, refined_rows, steep_gap, stroke_runs
from core.digitize.trace.params import TraceParams


def _pieces(rows: int, cols: int, pieces: dict[int, list[tuple[int, int]]]) -> np.ndarray:
    """An evidence map (rows × columns), 0.9 on the given (first, last) rows of each column, 0.02 elsewhere."""
    ev = np.full((rows, cols), 0.02, np.float32)
    for c, runs in pieces.items():
        for a, b in runs:
            ev[a : b + 1, c] = 0.9
    return ev


def test_the_break_a_column_bridges_is_the_paths_larger_move_and_no_wrap():
    path = np.array([0, 20, 40, 41, 41, 90, 91])
    assert steep_gap(path).tolist() == [20, 20, 20, 1, 49, 49, 1]
    wrap_step = np.array([0, 0, 0, 0, 0, 1, 0])  # the move into column 5 is a wrap across the track's edges
    assert steep_gap(path, wrap_step).tolist() == [20, 20, 20, 1, 0, 1, 1]
    assert steep_gap(np.array([5])).tolist() == [0]


def test_a_run_is_followed_across_breaks_no_longer_than_its_columns_gap():
    inked = np.zeros((60, 1), bool)
    for a, b in ((10, 14), (20, 24), (30, 34), (50, 52)):
        inked[a : b + 1, 0] = True
    path = np.array([22])
    assert [int(x[0]) for x in stroke_runs(inked, path, 40)] == [20, 24]  # no gap: the path's own piece
    assert [int(x[0]) for x in stroke_runs(inked, path, 40, np.array([4]))] == [20, 24]  # the breaks are 5 rows
    assert [int(x[0]) for x in stroke_runs(inked, path, 40, np.array([5]))] == [10, 34]  # ... not the 15 to row 50
    assert [int(x[0]) for x in stroke_runs(inked, path, 6, np.array([5]))] == [20, 24]  # no farther than the cap
    assert [int(x[0]) for x in stroke_runs(inked, np.array([17]), 40, np.array([5]))] == [17, 17]  # on paper: itself


def test_a_steep_stroke_read_in_pieces_has_one_value_whichever_piece_the_path_took():
    # column 1 crosses rows 20-60 in pieces (a network's reading of a pen moving 20 rows a column), its neighbours
    # hold the stroke where it enters and leaves the column
    ev = _pieces(400, 3, {0: [(8, 14)], 1: [(22, 27), (35, 40), (48, 53)], 2: [(62, 68)]})
    inked = ev >= 0.3
    params = TraceParams()
    values = []
    for piece in (24, 37, 50):
        path = np.array([11, piece, 65])
        values.append(refined_rows(ev, path, params, inked, steep_gap(path))[1])
        alone = refined_rows(ev, path, params, inked)
        assert abs(alone[1] - piece) < 1.5  # without the breaks bridged: the path's own piece
        # the tracer's way: only the columns whose run the breaks widen centred again, the same values
        bridged = bridged_rows(ev, path, params, inked, steep_gap(path), alone)
        assert np.allclose(bridged, refined_rows(ev, path, params, inked, steep_gap(path)))
    assert max(values) - min(values) < 0.05  # (the radius around the path weighs a row of paper or two)
    assert abs(values[0] - 37.5) < 0.5  # the whole stroke's centre


def test_a_joint_trace_lost_for_a_column_on_a_steep_stroke_is_read_between_its_neighbours_and_centred():
    ev = _pieces(100, 5, {0: [(10, 14)], 1: [(28, 32)], 2: [(40, 46), (52, 58)], 3: [(66, 70)], 4: [(84, 88)]})
    observed = np.array([True, True, False, True, True])
    carried = np.array([12.0, 30.0, 60.0, 68.0, 86.0])  # lost in column 2 and carried on at its velocity past it
    out = _stroke_centred(ev, carried, observed, 0.3)
    assert abs(out[2] - 49.0) < 0.5  # between 30 and 68, on the stroke's pieces, at their centre
    assert np.allclose(out[[0, 1, 3, 4]], carried[[0, 1, 3, 4]], atol=0.5)
    lost_long = np.array([True, False, False, False, True])  # three columns lost: left as the tracer carried them
    assert np.array_equal(_stroke_centred(ev, carried, lost_long, 0.3)[1:4], carried[1:4])



def test_a_steep_reading_is_the_quadratic_over_seven_columns_of_one_stroke():
    from core.digitize.rules.stroke_values import one_stroke, smoothed_rows

    cols = np.arange(16, dtype=np.float64)
    curve = 40.0 + 6.0 * cols - 0.15 * cols**2  # a stroke moving 6 -> 1.5 rows a column, bending: kept as it is
    joined = np.ones(15, bool)
    assert np.allclose(smoothed_rows(curve, joined), curve)
    read = curve.copy()
    read[8] += 2.5  # column 8 read on a piece of its stroke 2.5 rows on (78.4 -> 80.9; its neighbours 74.7, 81.9)
    out = smoothed_rows(read, joined)
    assert abs(out[8] - curve[8]) < 1.0  # 7/21 of the piece's offset is left
    turn = curve.copy()
    turn[8] += 6.0  # ... six rows on: beyond column 9, a turn, which keeps its own reading
    assert smoothed_rows(turn, joined)[8] == turn[8]
    assert np.array_equal(out[:3], read[:3]) and np.array_equal(out[-3:], read[-3:])  # three columns from an end
    cut = joined.copy()
    cut[9] = False  # columns 9 and 10 not one reading (unseen, a wrap between, runs apart)
    out = smoothed_rows(read, cut)
    assert np.array_equal(out[7:13], read[7:13])  # no column whose seven hold the cut moves
    assert out[6] != read[6]
    flat = 50.0 + 0.4 * cols  # a stroke moving under a row a column: its run is the pen's width about the curve
    flat[8] += 0.5  # half a row off: within the pen
    assert np.array_equal(smoothed_rows(flat, joined), flat)
    first, last = read - 2, read + 2  # runs of 5 rows
    link = np.ones(15, bool)
    assert not one_stroke(first, last, link, np.zeros(16))[7]  # column 8's run 2.25 rows past column 7's, no break
    assert one_stroke(first, last, link, np.full(16, 6)).all()  # ... within the breaks followed
    link[3] = False
    assert not one_stroke(first, last, link, np.full(16, 6))[3]
