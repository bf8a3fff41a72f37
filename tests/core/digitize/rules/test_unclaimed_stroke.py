"""A curve traced beside a neighbour while a stroke of its own style runs elsewhere in the track, traced by no
curve, is flagged there (core/digitize/rules/unclaimed.py): foreign hard_006's long-dash NPHI on the dotted RDEP's
marks beside the caliper, its own dashes untraced."""

import numpy as np

from core.digitize.rules.unclaimed import beside_an_unclaimed_stroke

ROWS, COLS = 200, 600


def _dashes(ev: np.ndarray, row: int, on: int = 12, off: int = 6) -> None:
    for c in range(0, COLS, on + off):
        ev[row - 1 : row + 2, c : c + on] = 0.9


def _case(stroke_row: int | None, traced_row: float):
    ev = np.zeros((ROWS, COLS), np.float32)
    _dashes(ev, int(traced_row))  # what the dashed curve was traced on
    if stroke_row is not None:
        _dashes(ev, stroke_row)  # a dashed stroke elsewhere in the track
    solid = np.full(COLS, 50.0)
    dashed = np.full(COLS, traced_row)
    return ev, [solid, dashed]


def test_a_trace_beside_a_neighbour_with_its_own_style_untraced_elsewhere_is_flagged():
    ev, pos = _case(150, 58.0)
    flag = beside_an_unclaimed_stroke(1, pos, [True, False], ev, 0, ROWS - 1, 0.3)
    assert flag.mean() > 0.95


def test_no_flag_without_an_unclaimed_stroke_or_away_from_a_neighbour():
    ev, pos = _case(None, 58.0)  # beside the neighbour, but every stroke of its style is traced
    assert not beside_an_unclaimed_stroke(1, pos, [True, False], ev, 0, ROWS - 1, 0.3).any()
    ev, pos = _case(150, 100.0)  # a stroke untraced, but the curve stands alone: a hidden curve, not this one
    assert not beside_an_unclaimed_stroke(1, pos, [True, False], ev, 0, ROWS - 1, 0.3).any()
    ev, pos = _case(150, 58.0)  # the neighbour is in another track
    assert not beside_an_unclaimed_stroke(1, pos, [False, False], ev, 0, ROWS - 1, 0.3).any()


def test_a_ruled_line_the_map_calls_the_style_is_no_stroke():
    ev, pos = _case(150, 58.0)
    damping = np.ones((ROWS, COLS), np.float32)
    damping[145:156] = 0.2  # the grid's along line under the "stroke"
    assert not beside_an_unclaimed_stroke(1, pos, [True, False], ev, 0, ROWS - 1, 0.3,
                                          lambda cols: damping[:, cols]).any()


def test_a_short_unclaimed_stroke_flags_only_its_stretch():
    ev, pos = _case(None, 58.0)
    ev[148:153, 300:400] = 0.9  # a stroke of 100 columns (a label, a short excursion of an untraced curve)
    flag = beside_an_unclaimed_stroke(1, pos, [True, False], ev, 0, ROWS - 1, 0.3)
    assert flag[300:400].all() and not flag[:200].any() and not flag[500:].any()
