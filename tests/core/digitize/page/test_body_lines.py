"""A log body's lines along depth: how far each runs on into the box beside the body, and which frame a column
(a border runs on into the scale box, a grid line stops at the body's edge)."""

import cv2
import numpy as np

from core.digitize.page.body_lines import section_lines
from core.digitize.page.ink import ink_map

DPI = 100.0
TOP, BOTTOM = 600, 3600  # the body's rows on the page


def test_a_dotted_fill_in_the_box_is_no_line_running_on_into_it_and_a_border_through_it_is():
    """A cement row's dotted fill, blurred by a 72-dpi scan into dots about as dark as a faint grid line, stands in
    rows that take turns; a grid line stops at the body's edge, a border runs straight on through the fill."""
    from core.digitize.page.body_lines import BodyLine, frame_share

    dark = np.zeros((60, 120), np.float32)  # rows across, columns along depth; the body ends at column 40
    dark[:, 40] = 1.0  # the box's rule across, where the footer begins
    for col in range(41, 120):  # the fill: dots two rows deep every six, three columns on three rows lower
        for row in range(4 if col % 6 < 3 else 1, 60, 6):  # (rows 28-29, then 31-32, about the grid line's 30)
            dark[row : row + 2, col] = 0.55
    grid = BodyLine(30.0, 0.25, 0.25, rows=(28, 33))
    dark[30, :40] = 0.25
    assert frame_share(dark, grid, 40, +1, 72.0)[0] < 0.9
    border = BodyLine(20.0, 0.5, 0.5, rows=(18, 23))
    dark[20, :] = 0.5
    assert frame_share(dark, border, 40, +1, 72.0)[0] >= 0.9


def test_a_legends_pen_sample_on_a_grid_lines_row_does_not_frame_it_and_a_border_drawn_along_the_row_does():
    """A mud log's gas box prints each curve's pen sample, a stroke along depth, where a grid line of the track
    below would run on; on a 1-bit scan that grid line is as black as the borders, and the sample covers the first
    fifth of an inch of box. A border is drawn along the whole box row, to its next rule across; the sample along a
    stretch of it (the develop half's inner borders: 1.00 of their rows; the samples 0.46-0.54)."""
    from core.digitize.page.body_lines import BodyLine, BodyLines, frame_share, mark_frames

    dpi = 100.0
    dark = np.zeros((120, 260), np.float32)  # rows across, columns along depth; the body ends at column 40
    dark[:, 40] = 1.0  # the box's bottom rule
    dark[:, 200] = 1.0  # its top rule: the box row is 159 columns long
    dark[[10, 110], :] = 1.0  # two borders, drawn through the body and along the box row
    dark[60, :40] = 1.0  # a grid line: black, as a 1-bit scan prints it ...
    dark[60, 55:95] = 1.0  # ... and the pen sample standing on its row, 0.4 in long
    border, grid = BodyLine(10.0, 1.0, 1.0, rows=(9, 12)), BodyLine(60.0, 1.0, 1.0, rows=(59, 62))
    b_share, _, b_row = frame_share(dark, border, 40, +1, dpi)
    g_share, _, g_row = frame_share(dark, grid, 40, +1, dpi)
    assert b_share >= 0.9 and g_share >= 0.9  # each covers the first fifth of an inch of box
    assert b_row >= 0.99 and 0.2 <= g_row <= 0.3

    def frames(row: float) -> list[float]:
        lines = [BodyLine(c, 1.0, 1.0, down=1.0, down_row=1.0) for c in (0.0, 10.0, 110.0, 119.0)]
        lines.append(BodyLine(60.0, 1.0, 1.0, down=1.0, down_row=row))
        return [ln.centre for ln in mark_frames(BodyLines(lines, boxed=True), dpi).lines if ln.frame]

    assert frames(g_row) == [0.0, 10.0, 110.0, 119.0]
    assert frames(b_row) == [0.0, 10.0, 110.0, 119.0, 60.0]


def test_where_only_the_borders_are_left_they_frame_from_the_rule_drawn_across_the_bodys_top():
    # a grid lost to a low resolution or a 1-bit cut leaves the borders, and they run on through the whole box to
    # its top rule: most lines end there, not at the body's edge, and nothing runs on past that; the rule drawn
    # across the whole body at its top is the edge they run on from (whether the body's span starts there or,
    # as a 1-bit cut's does, takes in the box)
    img = np.full((BOTTOM + 200, 1000), 250, np.uint8)
    borders = [20, 270, 330, 520, 770, 990]
    cv2.rectangle(img, (20, 420), (990, BOTTOM - 1), 20, 2)
    cv2.line(img, (20, TOP), (990, TOP), 20, 2)  # the body's top edge: the box's bottom rule
    for y in (470, 530):
        cv2.putText(img, "0   GR   150", (40, y), cv2.FONT_HERSHEY_SIMPLEX, 0.6, 20, 1, cv2.LINE_AA)
    for x in borders:
        cv2.line(img, (x, 420), (x, BOTTOM - 1), 20, 3)
    for y in range(TOP + 50, BOTTOM, 50):  # depth lines across the curve tracks only
        for lo, hi in ((20, 270), (330, 770)):
            cv2.line(img, (lo, y), (hi, y), 20, 1)
    dark = ink_map(np.ascontiguousarray(img.T))
    for start in (TOP + 3, TOP - int(0.9 * DPI)):
        found = section_lines(dark, start, BOTTOM, DPI)
        inner = sorted(round(ln.centre) for ln in found.lines if ln.frame)[1:-1]
        assert found.framed and [min(inner, key=lambda c: abs(c - x)) for x in borders[1:-1]] == inner, start
        assert all(abs(c - x) <= 2 for c, x in zip(inner, borders[1:-1])), start


def test_a_border_a_low_resolution_blurred_into_an_image_tracks_group_is_a_line_of_its_own():
    """A 72-dpi cement print (the develop half's 02014-0003 resampled): the VDL's stripes and the border between it
    and the sector map's fill are one group of rows to the grid reading (rows 287-386), its core the VDL's darkest
    stripe. The border (0.95, against the fill's 0.64 and the stripe's 1.0) is a line of its own; the VDL's paler
    stripes (0.65-0.76) are not, and neither is a row of a fill that stays as dark beside it."""
    from core.digitize.page.body_lines import _core, _more_cores

    vdl = [0.48, 0.34, 0.65, 0.62, 0.11, 0.0, 0.35, 1.0, 0.61, 0.0, 0.0, 0.15, 0.55, 0.69, 0.49, 0.24, 0.05, 0.22,
           0.57, 0.55, 0.2, 0.0, 0.23, 0.76, 0.52, 0.01, 0.0, 0.47, 0.7, 0.34, 0.04, 0.1, 0.4, 0.53, 0.34, 0.1]
    border = [0.28, 0.41, 0.46, 0.76, 0.95, 0.64, 0.64, 0.63, 0.63, 0.63, 0.62]
    profile = np.array(vdl + border, np.float32)
    at = len(vdl) + 4
    assert _core(profile) == (7, 9)  # the darkest stripe
    assert _more_cores(profile, wide=18) == [(at, at + 1)]
    assert _more_cores(profile, wide=len(profile) + 1) == []  # a group narrower than a quarter of an inch: as before
    fill = np.array(vdl + [0.95] * 6, np.float32)  # a fill as dark as 0.95 along six rows is no line beside it
    assert _more_cores(fill, wide=18) == []


def test_a_border_paler_than_the_boxs_ink_runs_on_along_its_empty_box_row_and_a_grid_line_through_ticks_does_not():
    """A 1-px border at 100 dpi reads 0.3-0.5, under the box's ink (0.5): drawn on along its box row, where nothing
    else is printed near it, to the row's rule, it stops there, and the first ink of the box lies past that rule
    (a description column's header). The border's own run-on starts the box row; a grid line stops at the body's
    edge, and one drawn on through a strip of ticks a tenth of an inch long (ruled off from the box) does not frame
    (a JPEG's mud-log grid, 02396-0001: 0.96 of that strip)."""
    from core.digitize.page.body_lines import BodyLine, frame_share

    dpi = 100.0
    dark = np.zeros((80, 300), np.float32)  # rows across, columns along depth; the body ends at column 40
    dark[:, 140] = 1.0  # the box row's rule across, 1.0 in from the body
    dark[50:60, 150:170] = 0.9  # the box's first ink: past that rule, beside the border's row
    dark[40, :141] = 0.4  # the border: through the body and along the box row, to its rule
    dark[70, :40] = 0.2  # a grid line, stopping at the body's edge
    border, grid = BodyLine(40.0, 0.4, 0.4, rows=(38, 43)), BodyLine(70.0, 0.2, 0.2, rows=(68, 73))
    share, _, row = frame_share(dark, border, 40, +1, dpi)
    assert share >= 0.9 and row >= 0.99
    assert frame_share(dark, grid, 40, +1, dpi)[0] < 0.9

    ticks = np.zeros((80, 300), np.float32)
    ticks[:, 50] = 1.0  # the strip of ticks is ruled off 0.1 in from the body
    ticks[50:60, 60:80] = 0.9  # the box's first ink past it
    ticks[40, :51] = 0.25  # a grid line drawn on through the strip, to its rule
    assert frame_share(ticks, BodyLine(40.0, 0.25, 0.25, rows=(38, 43)), 40, +1, dpi)[0] < 0.9


def test_a_black_bars_edge_ruled_on_in_grey_through_the_box_runs_on_from_the_bar():
    """A slide/rotate bar is black in the body (0.99) and its edges are ruled on through the box as 1-px rules, read
    0.3-0.5 at 100 dpi (02299-0001): drawn as dark as half the box's ink, not half the bar's, they run on, and the
    bar's line moves to its rule (three rows off the blurred bar's core: the nearest offset whose rows hold it)."""
    from core.digitize.page.body_lines import BodyLine, frame_share

    dpi = 100.0
    dark = np.zeros((80, 300), np.float32)
    dark[:, 140] = 1.0  # the box row's rule across
    dark[17, 40:141] = 0.4  # the bar's edge ruled on through the box, three rows above the line's core at 20
    dark[19:22, 45:55] = 0.9  # the column's name printed in the box cell, near the body
    bar = BodyLine(20.0, 7.0, 0.99, rows=(14, 27))
    share, at, row = frame_share(dark, bar, 40, +1, dpi)
    assert share >= 0.9 and at == -2 and row >= 0.99
