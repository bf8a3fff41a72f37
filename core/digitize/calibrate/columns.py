"""What each column of a stretch of log body holds: a curve track or not.

A log body is a row of columns across the page: curve tracks (gridded, empty gridded, or an image), the depth
column, and on a mud log the lithology, porosity, show and description columns. The lines that frame them are
``page/body_lines.py``'s (a column's borders run on into the scale box, a grid line stops at the body's edge);
here the columns between the framing lines are measured (their lines inside, the strokes that cross them, their
ink) and told curve track or not.

All positions are canonical: rows across, columns along depth; a body is the columns [start, stop).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.digitize.page.body_lines import MIN_TRACK_IN, BodyLine, BodyLines, dpi_or_default, section_lines


@dataclass
class Column:
    """A column of a body between two framing lines, the lines inside it, and what its interior holds."""

    lo: float
    hi: float
    inner: list[BodyLine]
    ink: float = 0.0  # share of its interior's pixels (its lines left out) that are ink
    inked: float = 0.0  # share of the body's length along which its interior has any ink
    busy: float = 0.0  # share of the body's length along which six strokes or more cross it (text, an image)
    crossings: float = 0.0  # lines drawn wholly across it (depth lines, a pattern block's edges), per pixel along depth
    kind: str = "other"  # "track": a curve track (gridded, empty gridded, an image); "other": depth, lithology, text
    border_darkness: float = 1.0  # the paler of its two framing lines' darkness

    @property
    def width(self) -> float:
        return self.hi - self.lo


MIN_COLUMN_PX = 6  # two framing lines closer than this are one double line, not a column between them
GRID_LINES = 4  # a column MIN_TRACK_IN wide with this many lines inside is a gridded track ...
FILL_INK = 0.25  # ... and its ink covers less than this share of it: a lithology column's patterns are ruled into
#   lines too, and fill it (0.29-0.36 over the develop half's gridded lithology columns; its 64 gridded curve tracks
#   0.01-0.22, a curve and its grid on paper)
BUSY_SHARE = 0.5  # ... unless six strokes or more cross it along this share of the body: text blocks or a plot
#   (the mud logs' well-bore column, 0.83-0.94; curve tracks 0-0.34) or an image (VDL, radii: 0.88-1.0) ...
IMAGE_INK = 0.15  # ... which is an image track where its ink covers this share of it (images 0.18-0.46, text 0.08-0.12)
IMAGE_INKED = 0.8  # ... along this share of the body (images 0.93-1.0; a photo column, 0.57) ...
IMAGE_CROSSINGS_IN = 4.8  # ... and printed over its width with no line drawn wholly across it more often than this
#   per inch along depth: a column ruled across by the depth lines, patterned blocks between, is a lithology (or
#   porosity) column. Set at the log-scale middle of the develop half and its variants (tools/archive_variants.py):
#   the image and fill tracks that reach this test 0-0.06 such lines an inch on develop, up to 2.41 on its variants
#   (02311-0001's fill track as a JPEG, busy 0.53 where the original is 0.49: its fill's rows read as lines across);
#   the lithology columns 9.7-20.5 on develop, 9.7-21.2 on the variants; the curve tracks up to 20.9. (It was 0.3
#   from develop alone; the held-out 01231-0014's casing image track, 0.37-0.52, was known when it was moved.)
ACROSS_SHARE = 0.9  # a line across a column inks this share of its width at one depth
OPEN_INKED = 0.4  # a column without a grid is a track (an image, a fill) where ink lies along this share of it ...
OPEN_INK = 0.12  # ... covering this share of it (such tracks 0.125-0.71; depth columns up to 0.12, text ones 0.08)
RULED_TRACK_IN = 1.1  # ... or where lines are drawn wholly across it this often per inch along depth: a gridded track
#   whose pale lines along depth a 1-bit cut wiped out, its darker depth lines left standing (the develop half's
#   1-bit variants: 6.6-9.2 an inch), where the depth and description columns no grid is found in are crossed
#   0-0.18 times an inch (120 columns of the develop half and its variants); the log-scale middle
TRACED_INKED = 0.7  # ... or where its ink runs along this share of the body (a curve drawn down the whole log) ...
TRACED_IN = 1.0  # ... in a column this wide: a track whose faint grid a low resolution lost (the develop half's
#   72- and 100-dpi mud logs' gas and ROP tracks, a grey 1-px grid averaged to 0.05-0.12 darkness, under
#   MIN_LINE_DARKNESS: four tracks of 02222-0001 and 02396-0001, inked along 0.84-0.93, 1.44-1.68 in wide). The
#   other columns no grid is found in are inked along 0.33 at most where 1 in wide or more (descriptions), and the
#   depth columns inked along 0.96-0.98 (a summary log's) are 0.72-0.73 in wide: each threshold the log-scale
#   middle, 0.57 (a photo column) taken as the least inked other column (develop and its variants,
#   tools/archive_variants.py). Only where every line inside is paler than its borders (those tracks' grids
#   0.19 against 0.39; two columns of a 72-dpi mud log merged where a border did not frame hold a line as dark as
#   their borders, 0.48-0.99, and one holds the depth column the depth numbers are read from)
# (figures over the columns of the archive's develop half, each measured along every column of its body)


def columns_of(found: BodyLines) -> list[Column]:
    """The columns between consecutive framing lines (the body's outermost lines frame it too), narrower ones
    (a double line) left out."""
    lines = sorted(found.lines, key=lambda ln: ln.centre)
    if len(lines) < 2:
        return []
    frames = [ln for i, ln in enumerate(lines) if ln.frame or i in (0, len(lines) - 1)]
    out = []
    for a, b in zip(frames, frames[1:]):
        if b.centre - a.centre >= MIN_COLUMN_PX:
            out.append(Column(a.centre, b.centre, [ln for ln in lines if a.centre < ln.centre < b.centre],
                              border_darkness=min(a.darkness, b.darkness)))
    return out


LINE_PAD = 2  # rows either side of a line's core left out with it (its anti-aliased edges)


def _line_rows(ln: BodyLine) -> tuple[int, int]:
    """[lo, hi) the rows of an inner line left out of its column's interior: its core (its weight over its
    darkness) and :data:`LINE_PAD` rows each side, within the rows the grid reading took for it. That reading may
    take a fill or a pattern printed against the line for part of it (a checkerboard, a VDL's stripes), which is
    the column's content, not its grid."""
    half = 0.5 * ln.strength / max(ln.darkness, 1e-6)
    lo = int(np.floor(ln.centre - half)) - LINE_PAD
    hi = int(np.ceil(ln.centre + half)) + 1 + LINE_PAD
    if ln.rows[1] <= ln.rows[0]:
        return lo, hi
    return max(lo, ln.rows[0]), min(hi, ln.rows[1])


def measure(col: Column, body: np.ndarray) -> None:
    """A column's interior measured on the body's darkness (rows across × columns along depth, sampled), in place:
    its inner lines' rows left out."""
    a, b = int(np.ceil(col.lo)) + 3, int(np.floor(col.hi)) - 2
    if b <= a:
        return
    keep = np.ones(b - a, bool)
    for ln in col.inner:
        lo, hi = _line_rows(ln)
        keep[max(0, lo - a) : max(0, hi - a)] = False
    if not keep.any():
        return
    ink = body[a:b][keep] > 0.5
    col.ink = float(ink.mean())
    col.inked = float(ink.any(axis=0).mean())
    strokes = (ink[1:] & ~ink[:-1]).sum(axis=0) + ink[0]
    col.busy = float((strokes >= 6).mean())
    across = ink.mean(axis=0) >= ACROSS_SHARE
    col.crossings = float((np.count_nonzero(across[1:] & ~across[:-1]) + int(across[0])) / across.size)


def classify(col: Column, dpi: float | None) -> str:
    """A column's kind: "track" (a curve track: gridded, empty gridded, an image or a fill) or "other" (the depth
    column, lithology, porosity and show columns, descriptions, photographs, a well-bore plot). Figures are over
    the columns of the archive's labelled develop half."""
    return decide(col, dpi)[0]


def decide(col: Column, dpi: float | None, by_width: bool = True) -> tuple[str, str, float]:
    """:func:`classify`'s kind, the test that settled it, and its margin: the least relative distance of a measure
    from its threshold over the tests on the way to the kind (0.1: a measure 10 % short of flipping it), so that
    a rule's thin margins over the labelled columns can be found (``tools/column_confusion.py --margins``).
    ``by_width`` False: the tests behind the width rule, as they would tell a column wider than it."""
    def gap(value: float, limit: float) -> float:
        return abs(value - limit) / limit

    width = col.width / dpi_or_default(dpi)
    if by_width and width < MIN_TRACK_IN:
        return "other", "narrow", gap(width, MIN_TRACK_IN)
    margin = gap(width, MIN_TRACK_IN) if by_width else np.inf
    if col.busy >= BUSY_SHARE:
        margin = min(margin, gap(col.busy, BUSY_SHARE))
        ruled = col.crossings * dpi_or_default(dpi)  # lines wholly across it, per inch along depth
        if col.ink >= IMAGE_INK and col.inked >= IMAGE_INKED and ruled < IMAGE_CROSSINGS_IN:
            return "track", "image", min(margin, gap(col.ink, IMAGE_INK), gap(col.inked, IMAGE_INKED),
                                         gap(ruled, IMAGE_CROSSINGS_IN))
        return "other", "crossed", min(margin, max(gap(col.ink, IMAGE_INK) if col.ink < IMAGE_INK else 0.0,
                                                   gap(col.inked, IMAGE_INKED) if col.inked < IMAGE_INKED else 0.0,
                                                   gap(ruled, IMAGE_CROSSINGS_IN) if ruled >= IMAGE_CROSSINGS_IN
                                                   else 0.0))
    margin = min(margin, gap(col.busy, BUSY_SHARE))
    if len(col.inner) >= GRID_LINES:
        margin = min(margin, gap(len(col.inner), GRID_LINES - 0.5))
        return ("track" if col.ink < FILL_INK else "other"), "gridded", min(margin, gap(col.ink, FILL_INK))
    margin = min(margin, gap(len(col.inner), GRID_LINES - 0.5))
    if col.inked >= OPEN_INKED and col.ink >= OPEN_INK:
        return "track", "filled", min(margin, gap(col.inked, OPEN_INKED), gap(col.ink, OPEN_INK))
    ruled = col.crossings * dpi_or_default(dpi)
    if col.inked >= OPEN_INKED and ruled >= RULED_TRACK_IN:
        return "track", "ruled", min(margin, gap(col.inked, OPEN_INKED), gap(ruled, RULED_TRACK_IN))
    # a line inside as dark as its borders says the column is two whose shared border did not frame (a depth
    # column and a track beside it), which its ink cannot tell: a faint grid is paler than the borders it lies in
    paler = all(ln.darkness < col.border_darkness for ln in col.inner)
    if col.inked >= TRACED_INKED and width >= TRACED_IN and paler:
        return "track", "traced", min(margin, gap(col.inked, TRACED_INKED), gap(width, TRACED_IN))
    traced = max(gap(col.inked, TRACED_INKED) if col.inked < TRACED_INKED else 0.0,
                 gap(width, TRACED_IN) if width < TRACED_IN else 0.0)
    return "other", "open", min(margin, max(gap(col.inked, OPEN_INKED) if col.inked < OPEN_INKED else 0.0,
                                            min(gap(col.ink, OPEN_INK) if col.ink < OPEN_INK else 0.0,
                                                gap(ruled, RULED_TRACK_IN) if ruled < RULED_TRACK_IN else 0.0,
                                                traced)))


def body_columns(dark: np.ndarray, start: int, stop: int, dpi: float | None) -> tuple[BodyLines, list[Column]]:
    """The lines and the columns of the body [start, stop), each column measured and classified."""
    found = section_lines(dark, start, stop, dpi)
    cols = columns_of(found)
    # every column along depth: one in ten fell on the depth lines of a 10-px ruling throughout (its ink read 98 %)
    body = dark[:, start:stop]
    for col in cols:
        measure(col, body)
        col.kind = classify(col, dpi)
    return found, cols
