"""A traced line's stroke taken out of a map (``core/digitize/rules/line_removal.py``): the stroke goes whole, with
its blurred fringe, and a stroke beside it stays for the next curve to read."""

import numpy as np

from core.digitize.rules.line_removal import remove_line


def test_the_traced_stroke_goes_whole_and_its_neighbour_stays():
    ev = np.zeros((60, 40), np.float32)
    ev[18:23, :] = 0.9  # the traced pen's stroke, five rows thick
    ev[17, :] = ev[23, :] = 0.2  # its blurred fringe, over the floor
    ev[40:43, :] = 0.8  # a second pen, well apart
    position = np.full(40, 20.0)
    position[30:] = np.nan  # a stretch without a position: nothing to remove there
    remove_line(ev, position, core_px=1)
    assert not ev[16:25, :30].any()  # stroke and fringe gone where the line has a position
    assert (ev[18:23, 30:] == np.float32(0.9)).all()  # left alone where it has none
    assert (ev[40:43, :] == np.float32(0.8)).all()  # the neighbour's stroke stays


def test_a_steep_swing_is_removed_over_every_row_it_crosses():
    ev = np.zeros((60, 3), np.float32)
    ev[10:51, 1] = 0.9  # one column's stroke crossing 40 rows: the line goes from row 10 to row 50 through it
    remove_line(ev, np.array([10.0, 30.0, 50.0]), core_px=0, reach_px=0)
    assert not ev[20:41, 1].any()  # halfway towards each neighbouring column's position
