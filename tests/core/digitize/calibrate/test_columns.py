"""A log body's columns: the lines that frame them (they run on into the box above the body) and what each holds."""

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from core.digitize.calibrate.columns import body_columns, classify, columns_of
from core.digitize.page.body_lines import section_lines
from core.digitize.page.ink import ink_map

DPI = 100.0
TOP, BOTTOM = 600, 3600  # the body's rows on the page


def _grid(img: np.ndarray, lo: int, hi: int, cells: int, weight: int = 150) -> None:
    for k in range(1, cells):
        x = int(round(lo + k * (hi - lo) / cells))
        cv2.line(img, (x, TOP), (x, BOTTOM - 1), weight, 1)


def _page(box_divider: bool = True) -> np.ndarray:
    """A tall page (depth down the rows): a box of scales above the body, ruled column by column; in the body two
    gridded tracks of one pitch sharing a border at 520 (the box's cell divider runs on from it, the grid's lines
    do not), a depth column with numbers, a text column, and an image track of dense stripes."""
    img = np.full((BOTTOM + 200, 1000), 250, np.uint8)
    borders = [20, 270, 330, 520, 770, 900, 990]
    # the box: its frame, the cell dividers over every border (over 520 only with ``box_divider``), scale rows
    cv2.rectangle(img, (20, 420), (990, TOP), 20, 2)
    for x in borders:
        if x != 520 or box_divider:
            cv2.line(img, (x, 420), (x, TOP), 20, 2)
    for y in (470, 530):
        cv2.putText(img, "0   GR   150", (40, y), cv2.FONT_HERSHEY_SIMPLEX, 0.6, 20, 1, cv2.LINE_AA)
    for x in borders:
        cv2.line(img, (x, TOP), (x, BOTTOM - 1), 20, 3)
    _grid(img, 20, 270, 10)
    _grid(img, 330, 520, 10)
    _grid(img, 520, 770, 10)
    for y in range(TOP, BOTTOM, 50):  # depth lines across the tracks, numbers in the depth column
        for lo, hi in ((20, 270), (330, 770)):
            cv2.line(img, (lo, y), (hi, y), 150, 1)
        if (y - TOP) % 250 == 0 and TOP < y < BOTTOM - 20:
            cv2.putText(img, f"{1000 + (y - TOP) // 5}", (276, y + 6), cv2.FONT_HERSHEY_SIMPLEX, 0.5, 20, 1,
                        cv2.LINE_AA)
    for y in range(TOP + 40, BOTTOM - 40, 120):  # a description: lines of text
        for k in range(4):
            cv2.putText(img, "sh gy frm calc", (776, y + 16 * k), cv2.FONT_HERSHEY_SIMPLEX, 0.35, 20, 1,
                        cv2.LINE_AA)
    rows = np.arange(TOP, BOTTOM)
    for lo, hi in ((20, 270), (330, 520), (520, 770)):  # a curve in each track
        x = lo + (hi - lo) * (0.5 + 0.3 * np.sin(rows / (60 + lo / 10)))
        cv2.polylines(img, [np.stack([x, rows], 1).round().astype(np.int32)], False, 10, 2)
    for x in range(904, 988, 6):  # an image track: a variable-density display, stripes along depth
        wiggle = x + 2 * np.sin(rows / 7.0 + x)
        cv2.polylines(img, [np.stack([wiggle, rows], 1).round().astype(np.int32)], False, 60, 3)
    return img


def _columns(img: np.ndarray):
    dark = ink_map(np.ascontiguousarray(img.T))
    return body_columns(dark, TOP, BOTTOM, DPI)


def test_the_lines_that_run_on_into_the_box_part_the_columns_and_each_is_told_track_or_not():
    found, cols = _columns(_page())
    assert found.framed
    frames = sorted(round(ln.centre) for ln in found.lines if ln.frame)
    assert all(any(abs(f - x) <= 2 for f in frames) for x in (270, 330, 520, 770, 900)), frames
    assert not any(abs(f - x) <= 2 for f in frames for x in (45, 345, 545, 595))  # grid lines stop at the body
    kinds = [(round(c.lo), round(c.hi), c.kind) for c in cols]
    tracks = [(a, b) for a, b, k in kinds if k == "track"]
    # two tracks of one pitch either side of 520, parted by the box's divider, and the image track; not the depth
    # column (narrow, numbers on paper) nor the description (no grid, text along a share of it)
    want = [(20, 270), (330, 520), (520, 770), (900, 990)]
    assert len(tracks) == len(want) and all(abs(a - x) <= 2 and abs(b - y) <= 2
                                            for (a, b), (x, y) in zip(tracks, want)), kinds
    others = [(a, b) for a, b, k in kinds if k == "other"]
    assert any(abs(a - 270) <= 2 and abs(b - 330) <= 2 for a, b in others), kinds  # the depth column
    assert any(abs(a - 770) <= 2 and abs(b - 900) <= 2 for a, b in others), kinds  # the description


def test_without_the_boxs_divider_two_tracks_of_one_pitch_are_one_column():
    found, cols = _columns(_page(box_divider=False))
    tracks = [(round(c.lo), round(c.hi)) for c in cols if c.kind == "track"]
    assert any(abs(a - 330) <= 2 and abs(b - 770) <= 2 for a, b in tracks), tracks


def test_a_column_is_a_track_by_its_grid_its_image_or_its_fill_and_never_by_text_alone():
    from core.digitize.calibrate.columns import Column
    from core.digitize.page.body_lines import BodyLine

    grid = [BodyLine(100.0 + 20 * k, 1.0, 0.5) for k in range(9)]
    wide = dict(lo=80.0, hi=300.0)
    assert classify(Column(**wide, inner=grid, ink=0.05, inked=0.9, busy=0.1), DPI) == "track"
    # a gridded plot with text blocks at most depths (a mud log's well-bore column): not a curve track
    assert classify(Column(**wide, inner=grid, ink=0.09, inked=1.0, busy=0.9), DPI) == "other"
    # an image track: strokes across at every depth, and ink over a good share of it
    assert classify(Column(**wide, inner=[], ink=0.3, inked=1.0, busy=0.95), DPI) == "track"
    # a photograph column printed here and there: not along most of the log
    assert classify(Column(**wide, inner=[], ink=0.23, inked=0.57, busy=0.54), DPI) == "other"
    # an empty gridded track is a track; a depth column (numbers on paper) and a narrow porosity column are not
    assert classify(Column(**wide, inner=grid, ink=0.0, inked=0.1, busy=0.0), DPI) == "track"
    assert classify(Column(lo=80.0, hi=160.0, inner=[], ink=0.02, inked=0.1, busy=0.0), DPI) == "other"
    assert classify(Column(lo=80.0, hi=120.0, inner=grid[:5], ink=0.1, inked=0.2, busy=0.0), DPI) == "other"


def test_a_body_with_no_box_beside_it_says_so_and_a_double_line_makes_no_column():
    from core.digitize.page.body_lines import BodyLine, BodyLines

    img = _page()
    img[:TOP] = 250  # no box above, no footer below
    dark = ink_map(np.ascontiguousarray(img.T))
    assert not section_lines(dark, TOP, BOTTOM, DPI).framed
    double = BodyLines([BodyLine(20.0, 2.0, 1.0, frame=True), BodyLine(23.0, 2.0, 1.0, frame=True),
                        BodyLine(270.0, 2.0, 1.0, frame=True)], framed=True)
    assert [(c.lo, c.hi) for c in columns_of(double)] == [(23.0, 270.0)]


def test_a_gridded_column_its_ink_fills_is_no_curve_track():
    """Lithology patterns are ruled into lines the grid reading finds, and fill their column; a curve track's grid
    holds a curve on paper."""
    from core.digitize.calibrate.columns import Column
    from core.digitize.page.body_lines import BodyLine

    grid = [BodyLine(100.0 + 20 * k, 1.0, 0.5) for k in range(6)]
    assert classify(Column(80.0, 230.0, inner=grid, ink=0.2, inked=0.95, busy=0.1), DPI) == "track"
    assert classify(Column(80.0, 230.0, inner=grid, ink=0.34, inked=0.8, busy=0.05), DPI) == "other"


DEVELOP = Path(__file__).with_name("archive_columns_develop.json")


def _develop() -> dict:
    """What the classifier and the framing rule read of the labelled develop half of the archive (31 sections of
    23 scans; ``tools/column_confusion.py --export``): replayed without the scans."""
    return json.loads(DEVELOP.read_text())


def test_every_labelled_column_of_the_archives_develop_half_is_told_track_or_not():
    """Each labelled column, measured between its labelled borders, classified: the 97 curve tracks (gridded,
    empty, image and fill tracks) all tracks; of the 95 others (depth, lithology, porosity, show, description,
    photo, well-bore columns) one at most a track (a short cement-log section's depth column, at the edge of
    :data:`OPEN_INK`)."""
    from core.digitize.calibrate.columns import Column
    from core.digitize.page.body_lines import BodyLine

    table = Counter()
    for c in _develop()["columns"]:
        col = Column(*map(float, c["cols"]), inner=[BodyLine(0.0, 1.0, 1.0)] * c["lines"], ink=c["ink"],
                     inked=c["inked"], busy=c["busy"], crossings=c["crossings"])
        table[(c["truth"], classify(col, c["dpi"]))] += 1
    assert table[("track", "track")] == 97 and table[("track", "other")] == 0, table
    assert table[("other", "other")] >= 94 and table[("other", "track")] <= 1, table


def test_the_framing_lines_of_the_archives_develop_half_part_its_labelled_tracks():
    """Each labelled section's lines (how far each runs on into the boxes, how heavy) framed as
    :func:`mark_frames` does: every labelled curve track of the develop half is a column within 5 px, 01135-0002's
    two resistivity tracks too (their shared border runs on along 0.76 of the header's first box row and 0.61 of
    the footer's, where the Density Caliper's mirrored scales are printed across it: framed as the shared border of
    two tracks as wide as track 1)."""
    from core.digitize.page.body_lines import BodyLine, BodyLines, mark_frames

    missed, labelled = [], 0
    for b in _develop()["bodies"]:
        lines = [BodyLine(c, s, d, up=u, down=w, up_row=ur, down_row=wr) for c, s, d, u, w, ur, wr in b["lines"]]
        cols = columns_of(mark_frames(BodyLines(lines, boxed=b["boxed"]), b["dpi"]))
        for lo, hi in b["tracks"]:
            labelled += 1
            if not any(abs(c.lo - lo) <= 5 and abs(c.hi - hi) <= 5 for c in cols):
                missed.append((b["scan"], lo, hi))
    assert labelled == 97 and missed == [], missed


def _api_body(middle, track1: float = 500.0) -> list:
    """The lines of an API layout at 200 dpi: track 1 (20 to 20 + ``track1``), the depth column, and a column
    of two tracks' width (670-1670) with a grid every 50 px, its middle line ``middle``."""
    from core.digitize.page.body_lines import BodyLine

    border = dict(strength=5.0, darkness=1.0, up=1.0, down=1.0)
    lines = [BodyLine(x, **border) for x in (20.0, 20.0 + track1, 670.0, 1670.0)]
    lines += [BodyLine(x, 1.0 + (x % 100 == 20), 1.0, up=0.35, down=0.4)
              for x in np.arange(720.0, 1670.0, 50.0) if x != 1170.0]
    return lines + [middle]


def test_the_shared_border_of_two_tracks_as_wide_as_track_1_frames_them_where_the_box_is_written_across_it():
    from core.digitize.page.body_lines import BodyLine, BodyLines, mark_frames

    def tracks(middle: BodyLine, track1: float = 500.0) -> list:
        found = mark_frames(BodyLines(_api_body(middle, track1), boxed=True), 200.0)
        return [(c.lo, c.hi) for c in columns_of(found)]

    # heavier than the grid, drawn on along part of both boxes' first rows: two tracks
    assert tracks(BodyLine(1170.0, 3.0, 1.0, up=0.76, down=0.61)) == [
        (20.0, 520.0), (520.0, 670.0), (670.0, 1170.0), (1170.0, 1670.0)]
    # a heavy grid line that stops at the body's edge (a density track's middle line): one column
    assert (670.0, 1670.0) in tracks(BodyLine(1170.0, 3.0, 1.0, up=0.2, down=0.1))
    # no heavier than the grid's major lines: one column
    assert (670.0, 1670.0) in tracks(BodyLine(1170.0, 2.0, 1.0, up=0.76, down=0.61))
    # no framed track beside it of half its width: one column
    assert (670.0, 1670.0) in tracks(BodyLine(1170.0, 3.0, 1.0, up=0.76, down=0.61), track1=400.0)


def test_a_columns_kind_comes_with_the_test_that_settled_it_and_how_far_it_was_from_flipping():
    from core.digitize.calibrate.columns import Column, decide
    from core.digitize.page.body_lines import BodyLine

    grid = [BodyLine(100.0 + 20 * k, 1.0, 0.5) for k in range(6)]
    # a gridded track whose ink is a fifth short of filling it: settled by the grid, 0.2 from flipping
    kind, test, margin = decide(Column(0.0, 250.0, inner=grid, ink=0.2, inked=0.95, busy=0.1), DPI)
    assert (kind, test) == ("track", "gridded") and abs(margin - 0.2) < 1e-9
    # a lithology column 0.6 in wide: told by its width (0.1 in under 0.7: 0.14), and behind it by its fill
    col = Column(0.0, 60.0, inner=grid, ink=0.3, inked=0.4, busy=0.0)
    kind, test, margin = decide(col, DPI)
    assert (kind, test) == ("other", "narrow") and abs(margin - 0.1 / 0.7) < 1e-9
    kind, test, margin = decide(col, DPI, by_width=False)
    assert (kind, test) == ("other", "gridded") and abs(margin - 0.2) < 1e-9
    # every kind decide gives is classify's
    for c in _develop()["columns"][:60]:
        col = Column(*map(float, c["cols"]), inner=[BodyLine(0.0, 1.0, 1.0)] * c["lines"], ink=c["ink"],
                     inked=c["inked"], busy=c["busy"], crossings=c["crossings"])
        assert decide(col, c["dpi"])[0] == classify(col, c["dpi"])


def test_at_a_low_resolution_the_shared_border_is_told_by_its_darkness_where_a_pale_smear_is_as_wide():
    """72 dpi: the 3-px border between two tracks as wide as track 1 is a pixel wide and darker than its grid, and
    a pale smear beside a curve (a wider core, half as dark) weighs as much as it: the darker line parts them."""
    from core.digitize.page.body_lines import BodyLine, BodyLines, mark_frames

    def tracks(middle: BodyLine) -> list:
        border = dict(strength=1.0, darkness=1.0, up=1.0, down=1.0)
        lines = [BodyLine(x, **border) for x in (7.0, 187.0, 241.0, 601.0)]
        lines += [BodyLine(x, 0.36, 0.36, up=0.1, down=0.5) for x in np.arange(259.0, 600.0, 18.0) if x != 421.0]
        lines.append(BodyLine(371.6, 0.87, 0.51, up=0.0, down=0.57))  # the smear
        found = mark_frames(BodyLines(lines + [middle], boxed=True), 72.0)
        return [(c.lo, c.hi) for c in columns_of(found)]

    assert (241.0, 421.0) in tracks(BodyLine(421.0, 0.85, 0.85, up=0.79, down=0.64))
    # as pale as the smear: one column still
    assert (241.0, 601.0) in tracks(BodyLine(421.0, 0.85, 0.6, up=0.79, down=0.64))


def test_a_busy_column_ruled_across_by_the_depth_lines_is_no_image_track():
    """An image track (a VDL) is printed over its width with no line drawn wholly across it (the develop half's
    0-0.06 an inch, its variants' fill tracks up to 2.4); a column the depth lines rule across, patterned blocks
    between, is a lithology column (the develop half's and its variants' 9.7-21 an inch)."""
    from core.digitize.calibrate.columns import Column, measure

    image = dict(lo=80.0, hi=300.0, inner=[], ink=0.3, inked=1.0, busy=0.95)
    assert classify(Column(**image, crossings=0.0), DPI) == "track"
    assert classify(Column(**image, crossings=2.4 / DPI), DPI) == "track"  # a JPEG's dense fill, rows read across
    assert classify(Column(**image, crossings=10.0 / DPI), DPI) == "other"  # a depth line every tenth of an inch
    ruled = np.zeros((60, 1000), np.float32)  # across × along depth: a line across every 50 px, dots between
    ruled[:, ::50] = 1.0
    ruled[::4, 7::10] = 1.0
    col = Column(0.0, 60.0, inner=[])
    measure(col, ruled)
    assert abs(col.crossings - 1 / 50) < 1e-9


def test_a_column_whose_grid_along_depth_a_1_bit_cut_wiped_out_is_a_track_by_its_depth_lines_across():
    """A pale grid cut to 1 bit loses its lines along depth, and the track its curve alone inks lightly reads as a
    description column would; its depth lines, drawn darker, still cross it (the develop half's 1-bit variants:
    6.6-9.2 an inch), where no depth or description column with no grid is crossed more than 0.18 times an inch."""
    from core.digitize.calibrate.columns import Column, decide

    open_track = dict(lo=0.0, hi=200.0, inner=[], ink=0.09, inked=0.95, busy=0.15)
    assert classify(Column(**open_track, crossings=6.6 / DPI), DPI) == "track"
    assert decide(Column(**open_track, crossings=6.6 / DPI), DPI)[1] == "ruled"
    assert decide(Column(**open_track, crossings=0.18 / DPI), DPI)[1] != "ruled"
    assert classify(Column(**{**open_track, "inked": 0.33}, crossings=0.18 / DPI), DPI) == "other"
    # a blank column ruled across is no track: its curve's ink lies along so little of it
    assert classify(Column(**{**open_track, "inked": 0.2}, crossings=9.0 / DPI), DPI) == "other"


def test_a_wide_column_a_curve_inks_down_the_whole_log_is_a_track_where_a_low_resolution_lost_its_grid():
    """A mud log's gas track at 72 dpi: its grey grid averaged under a line's darkness, no line found inside, the
    curve's ink thin but along nearly all of the body; a description column is inked along a third of it at most,
    and a summary log's depth column inked along all of it is under an inch wide."""
    from core.digitize.calibrate.columns import Column, decide
    from core.digitize.page.body_lines import BodyLine

    lost_grid = dict(lo=0.0, hi=144.0, inner=[], ink=0.07, inked=0.84, busy=0.27)
    assert decide(Column(**lost_grid), 100.0)[:2] == ("track", "traced")
    assert classify(Column(**{**lost_grid, "inked": 0.33}), 100.0) == "other"  # a description's text
    assert classify(Column(**{**lost_grid, "hi": 73.0, "inked": 0.98}), 100.0) == "other"  # a depth column
    # its faint grid's lines, paler than its borders, leave it a track; a line as dark as the borders inside it (a
    # track and the depth column beside it, their shared border not framed) leaves its kind untold
    faint = [BodyLine(50.0 * k, 0.19, 0.19) for k in (1, 2)]
    assert classify(Column(**{**lost_grid, "inner": faint}, border_darkness=0.39), 100.0) == "track"
    border = [BodyLine(100.0, 0.48, 0.48)]
    assert classify(Column(**{**lost_grid, "inner": border}, border_darkness=0.48), 100.0) == "other"


def test_a_fill_the_grid_reading_took_with_a_line_inside_the_column_is_still_its_ink():
    """A JPEG'd casing print's thickness track: a 1-px line against a checkerboard fill, which the grid reading
    groups with the line (its rows 204-231 where the line's core is 1 px). Only the line's core and two rows each
    side are left out of the interior; the fill is the column's ink, and the column a filled track (the develop
    half's JPEG variant of 02311-0001 read ink 0.04 with the whole group left out, 0.35 on the original)."""
    from core.digitize.calibrate.columns import Column, decide, measure
    from core.digitize.page.body_lines import BodyLine

    body = np.zeros((65, 400), np.float32)  # across × along depth
    body[24] = 1.0  # the line
    yy, xx = np.mgrid[22:48, 0:400]
    body[22:48] = ((yy // 4 + xx // 4) % 2).astype(np.float32)  # the checkerboard beside and over it
    line = BodyLine(24.0, 0.9, 0.9, rows=(21, 48))
    col = Column(0.0, 65.0, inner=[line])
    measure(col, body)
    assert col.ink > 0.15 and col.inked == 1.0  # the whole group left out: 0
    assert decide(col, 70.0)[:2] == ("track", "filled")
    # a grid line's own group (its core and a row or two of anti-aliasing) is left out whole, as before
    thin = Column(0.0, 65.0, inner=[BodyLine(24.0, 0.9, 0.9, rows=(22, 27))])
    grid = np.zeros((65, 400), np.float32)
    grid[23:26] = 1.0
    measure(thin, grid)
    assert thin.ink == 0.0
