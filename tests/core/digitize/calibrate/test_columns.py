"""A log body's columns: the lines that frame them (they run on into the box above the body) and what each holds."""

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from core.digitize.calibrate.columns import body_columns, classify, columns_of, section_lines
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
    from core.digitize.calibrate.columns import BodyLine, Column

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
    from core.digitize.calibrate.columns import BodyLine, BodyLines

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
    from core.digitize.calibrate.columns import BodyLine, Column

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
    from core.digitize.calibrate.columns import BodyLine, Column

    table = Counter()
    for c in _develop()["columns"]:
        col = Column(*map(float, c["cols"]), inner=[BodyLine(0.0, 1.0, 1.0)] * c["lines"], ink=c["ink"],
                     inked=c["inked"], busy=c["busy"])
        table[(c["truth"], classify(col, c["dpi"]))] += 1
    assert table[("track", "track")] == 97 and table[("track", "other")] == 0, table
    assert table[("other", "other")] >= 94 and table[("other", "track")] <= 1, table


def test_the_framing_lines_of_the_archives_develop_half_part_its_labelled_tracks():
    """Each labelled section's lines (how far each runs on into the boxes, how heavy) framed as
    :func:`mark_frames` does: every labelled curve track is a column within 5 px but 01135-0002's two resistivity
    tracks, whose shared border runs on along 0.76 of the header's first box row and 0.61 of the footer's (a heavy
    grid line of the held-out 02079's density track runs on as far: no share tells them apart)."""
    from core.digitize.calibrate.columns import BodyLine, BodyLines, mark_frames

    missed, labelled = [], 0
    for b in _develop()["bodies"]:
        lines = [BodyLine(c, s, d, up=u, down=w) for c, s, d, u, w in b["lines"]]
        cols = columns_of(mark_frames(BodyLines(lines, boxed=b["boxed"])))
        for lo, hi in b["tracks"]:
            labelled += 1
            if not any(abs(c.lo - lo) <= 5 and abs(c.hi - hi) <= 5 for c in cols):
                missed.append((b["scan"], lo, hi))
    assert labelled == 97 and missed == [("33-023-01135-0002", 670, 1170), ("33-023-01135-0002", 1170, 1670)], missed
