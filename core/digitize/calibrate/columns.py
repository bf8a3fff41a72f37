"""The columns of a stretch of log body: the lines along depth that frame them, and what each column holds.

A log body is a row of columns across the page: curve tracks (gridded, empty gridded, or an image), the depth
column, and on a mud log the lithology, porosity, show and description columns. Inside a curve track the grid's
lines run along depth as the borders do, often as heavy (a log decade's line, a coarse linear grid's major line),
so the lines alone do not say where one column ends. What does is the print's own frame: a column's borders are
drawn on into the header's scale box above the body (the box is ruled column by column) and the footer's below,
where a grid line stops at the body's edge. :func:`section_lines` finds each line of a body with that
continuation measured (:func:`frame_share`); the framing lines part the body into columns.

All positions are canonical: rows across, columns along depth; a body is the columns [start, stop).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.digitize.page.grid import detect_grid

MIN_LINE_DARKNESS = 0.15  # a line whose core is paler than this over the body is none (a stroke that sometimes lies there)
CORE_SHARE = 0.6  # a line's core: its rows at least this share of its darkest row (not a fill or a curve beside it)
FRAME_SHARE = 0.9  # a line drawn along this share of the header's (or footer's) first box row frames a column
BAND_IN = 0.2  # the box row looked at: a fifth of an inch from the first ink beside the body (longer than a glyph)
REACH_IN = 2.5  # that ink is looked for this far from the body's edge (a box may stand clear of the body)
LOCAL_IN = 0.25  # ... within this far across either side of the line (the box cell over it, not its neighbours')
FRAME_WEIGHT = 0.4  # ... and weighs at least this share of the median of the lines that do
SNAP_ROWS = 4  # a border's box rule is looked for this far across from the line's centre
RULE_SHARE = 0.5  # a column along depth dark over this share of those rows is a rule across (a box's edge)
ROW_SHARE = 0.8  # an inner framing line is drawn along this share of its box row, to the row's next rule across
#   (the develop half's inner borders 1.00 each, 170 lines; the mud logs' pen samples standing on a gas-track grid
#   line 0.46-0.54; the outermost borders, framing anyway, 0.59 and up)


@dataclass
class BodyLine:
    """A line along depth of one body: its centre row, how heavy it is, and whether it frames a column."""

    centre: float
    strength: float  # core width × typical darkness: a border outweighs a grid line
    darkness: float  # its core's typical darkness over the body
    up: float = 0.0  # share of the header's first box row along which it runs on (FRAME_SHARE: it frames)
    down: float = 0.0  # ... of the footer's
    up_row: float | None = None  # share of that whole box row, to its next rule across, along which it is drawn
    down_row: float | None = None  # ... of the footer's (None: not measured, the line is judged by the band alone)
    shift: float = 0.0  # rows its centre moved onto the box's rule that runs on from it
    rows: tuple[int, int] = (0, 0)  # [lo, hi) the rows the grid reading took for it (a border and a fill beside it)

    frame: bool = False  # it frames a column (section_lines)

    @property
    def runs_on(self) -> bool:
        return max(self.up, self.down) >= FRAME_SHARE

    @property
    def along_row(self) -> bool:
        """It runs on along the whole box row it runs on into (a cell's border), not along a stretch of it: a
        legend's pen sample printed over a track stands where a grid line would run on, and a 1-bit scan draws
        that grid line as black as the borders (see :data:`ROW_SHARE`)."""
        rows = [r for r, share in ((self.up_row, self.up), (self.down_row, self.down))
                if share >= FRAME_SHARE and r is not None]
        return not rows or max(rows) >= ROW_SHARE


@dataclass
class BodyLines:
    """The lines along depth of one stretch of body, and whether its header or footer could be read at all."""

    lines: list[BodyLine] = field(default_factory=list)
    framed: bool = False  # a box beside the body was found and a line inside the body runs on into it
    boxed: bool = False  # a box beside the body was found (its lines' ``up``/``down`` were measured)


def _dpi_or(dpi: float | None) -> float:
    return float(dpi) if dpi and dpi >= 50 else 100.0


def _core(profile: np.ndarray) -> tuple[int, int]:
    """[a, b) of the contiguous rows about the darkest one that reach :data:`CORE_SHARE` of it."""
    k = int(np.argmax(profile))
    top = profile[k] * CORE_SHARE
    a, b = k, k + 1
    while a > 0 and profile[a - 1] >= top:
        a -= 1
    while b < profile.size and profile[b] >= top:
        b += 1
    return a, b


def _lines_of(dark: np.ndarray) -> list[BodyLine]:
    """The lines along depth of a body's darkness (rows × columns along depth), each centred on its core: the rows
    dark along nearly all of the body (its lower quartile of darkness), not an image or a fill printed beside it,
    which is dark along much of it only."""
    # every column: one in five read a dotted grid line as paper where its dots fell between (a mud log's gas-track
    # grid lost all its lines to a 1-px shift of the body's start), and darkest-of-five smeared text into lines;
    # a 60,000-column body's lines take half a second
    sample = dark
    groups = detect_grid(dark=sample, still_curves=False).line_groups(0.5)
    typical = sample[:, :: max(1, sample.shape[1] // 4000)]
    out: list[BodyLine] = []
    for g in groups:
        lo, hi = max(0, int(g.min()) - 1), min(dark.shape[0], int(g.max()) + 2)
        profile = np.percentile(typical[lo:hi], 25, axis=1)
        if profile.max() < MIN_LINE_DARKNESS:
            continue
        a, b = _core(profile)
        rows = np.arange(lo + a, lo + b, dtype=np.float64)
        weight = profile[a:b]
        out.append(BodyLine(float((rows * weight).sum() / weight.sum()), float(weight.sum()), float(profile.max()),
                            rows=(lo, hi)))
    return out


def _run_end(dark: np.ndarray, line: BodyLine, inside: int, direction: int, limit: int) -> int:
    """The first column along depth, going from ``inside`` the body outward (``direction``), where ``line`` is no
    longer drawn (a pixel's gap is none: a scan's speck)."""
    c = int(round(line.centre))
    a, b = (max(0, inside - limit), inside + 1) if direction < 0 else (inside, min(dark.shape[1], inside + limit))
    drawn = dark[max(0, c - 1) : c + 2, a:b].max(axis=0) >= max(0.1, 0.5 * line.darkness)
    if direction < 0:
        drawn = drawn[::-1]
    gap = np.flatnonzero(~drawn[:-1] & ~drawn[1:]) if drawn.size > 1 else np.zeros(0, int)
    k = int(gap[0]) if gap.size else drawn.size
    return inside - k if direction < 0 else inside + k


def frame_share(dark: np.ndarray, line: BodyLine, edge: int, direction: int, dpi: float,
                ink: float = 0.5) -> tuple[float, int, float]:
    """How far ``line`` runs on into the first box row beside the body, past its ``edge`` (the column along depth
    where the body's grid ends; ``direction`` −1: up into the header, +1: down into the footer): the share of a
    fifth of an inch of box along which it is drawn, from the first ink near it (within a quarter of an inch
    across) that is no rule across, looked for within :data:`REACH_IN` (a box may stand clear of the body).
    Rules across (a box's edges, the body's own edge line) count neither way; ``ink`` is the darkness that is
    print there (:func:`rule_ink`). Returns the share and the offset
    across at which the box's rule runs on (within :data:`SNAP_ROWS`, and within the rows the grid reading took for
    the line): a border beside an image or a fill is found a few rows off its centre, the box's rule is not."""
    n = dark.shape[1]
    c = int(round(line.centre))
    w = max(4, int(round(LOCAL_IN * dpi)))
    rows = slice(max(0, c - w), min(dark.shape[0], c + w + 1))
    reach = int(round(REACH_IN * dpi))
    cols = np.arange(edge - 1, max(-1, edge - 1 - reach), -1) if direction < 0 else np.arange(edge, min(n, edge + reach))
    if cols.size == 0:
        return 0.0, 0, 0.0
    strip = dark[rows, cols.min() : cols.max() + 1]
    if direction < 0:
        strip = strip[:, ::-1]  # walking away from the body
    inked = strip > ink
    rule = inked.mean(axis=0) >= RULE_SHARE
    content = np.flatnonzero(inked.any(axis=0) & ~rule)
    if content.size == 0:
        return 0.0, 0, 0.0
    band = max(6, int(round(BAND_IN * dpi)))
    first = int(content[0])
    keep = ~rule[first : first + band]
    if keep.sum() < 3:
        return 0.0, 0, 0.0
    drawn = strip[:, first : first + band][:, keep] >= max(0.1, 0.5 * line.darkness)
    best, at = 0.0, 0
    lo, hi = line.rows if line.rows[1] > line.rows[0] else (c, c + 1)
    for off in sorted(range(max(-SNAP_ROWS, lo - c), min(SNAP_ROWS, hi - 1 - c) + 1), key=abs):
        a, b = c + off - 1 - rows.start, c + off + 2 - rows.start
        if a < 0 or b > drawn.shape[0]:
            continue
        # along one row of the box at least: a line runs straight through it, where a dotted fill's dots (a cement
        # row's, as dark as a faint grid line once a low-resolution scan has blurred them) stand in rows turn about
        share = float(drawn[a:b].mean(axis=1).max())
        if share > best + 1e-9:
            best, at = share, off
    # the whole box row: from the first ink to the next rule across (a cell's border is drawn along all of it,
    # a legend's pen sample standing on a grid line's row along a stretch of it)
    ends = np.flatnonzero(rule[first:])
    stop = first + (int(ends[0]) if ends.size else rule.size - first)
    c0, c1 = c + at - 1 - rows.start, c + at + 2 - rows.start
    row_share = 0.0
    if c0 >= 0 and c1 <= strip.shape[0] and stop > first:
        along = strip[c0:c1, first:stop][:, ~rule[first:stop]] >= max(0.1, 0.5 * line.darkness)
        row_share = float(along.max(axis=0).mean()) if along.size else 0.0
    return best, at, row_share


def section_lines(dark: np.ndarray, start: int, stop: int, dpi: float | None) -> BodyLines:
    """The lines along depth of the body [start, stop) of a page's darkness (rows across × columns along depth),
    each with how far it runs on into the header's first box row above the body and the footer's below. The
    body's edge is where most of its lines end (its grid lines stop at its edge line); where no line inside the
    body runs on from that edge on either side (the grid lost, the borders running through the whole box, or the
    body's span taking in the box), the rule drawn across the whole body nearer it (:func:`_rules_across`) is
    tried as the edge instead."""
    lines = _lines_of(dark[:, start:stop])
    if not lines:
        return BodyLines()
    d = _dpi_or(dpi)
    margin = max(10, int(round(0.1 * d)))
    limit = int(round(REACH_IN * d))
    framed = False
    ink = rule_ink(lines)
    sides = []  # (direction, the walk's start inside the body, the edge, each line's frame_share from it)
    for direction, at in ((-1, start + margin), (+1, stop - 1 - margin)):
        if not 0 <= at < dark.shape[1]:
            continue
        ends = [_run_end(dark, ln, at, direction, limit + margin) for ln in lines]
        edge = int(np.median(ends))
        if not (0 < edge < dark.shape[1] - 1):
            continue
        framed = True
        sides.append((direction, at, edge, [frame_share(dark, ln, edge, direction, d, ink) for ln in lines]))
    if sides and not any(_frames_inside(lines, measured) for *_, measured in sides):
        # nothing runs on from either side: most lines ran on past the box to its far edge (the grid lost, only
        # the borders left, and they run through the box) or the body's span took in the box; the rule drawn
        # across the whole body nearer it is the body's edge
        for k, (direction, at, edge, _) in enumerate(sides):
            for rule in _rules_across(dark, lines, edge, at - direction * limit, -direction, d, ink):
                tried = [frame_share(dark, ln, rule, direction, d, ink) for ln in lines]
                if _frames_inside(lines, tried):
                    sides[k] = (direction, at, rule, tried)
                    break
    for direction, _, _, measured in sides:
        for ln, (share, off, row) in zip(lines, measured):
            if direction < 0:
                ln.up, ln.up_row = share, row
            else:
                ln.down, ln.down_row = share, row
            if share >= FRAME_SHARE and off and share >= max(ln.up, ln.down):
                ln.shift = float(off)
    for ln in lines:
        ln.centre += ln.shift
    return mark_frames(BodyLines(lines, boxed=framed), d)


EDGE_RULE_SHARE = 0.9  # a body's edge line is dark across this share of the body (between its outermost lines)
EDGE_GAP_IN = 0.05  # ... and another edge is looked for this far on from one that framed nothing (not its own rule)


def rule_ink(lines: list[BodyLine]) -> float:
    """The darkness over which a box's print is ink: half that of the body's darkest line, at most 0.5. A page
    scanned at 72 dpi draws a 1-px rule as one pale pixel (the box's rules and the borders 0.49 darkness on a
    develop mud log resampled to 72 dpi), where a black border at 150 dpi reads 1.0."""
    return min(0.5, 0.5 * max((ln.darkness for ln in lines), default=1.0))


def _frames_inside(lines: list[BodyLine], measured: list[tuple[float, int, float]]) -> bool:
    """Whether a line inside the body (not its outermost two) runs on into the box from the edge measured."""
    order = sorted(range(len(lines)), key=lambda i: lines[i].centre)[1:-1]
    return any(measured[i][0] >= FRAME_SHARE for i in order)


def _rules_across(dark: np.ndarray, lines: list[BodyLine], edge: int, far: int, inward: int, dpi: float,
                  ink: float) -> list[int]:
    """The columns along depth between ``edge`` (exclusive, :data:`EDGE_GAP_IN` on) and ``far``, walking ``inward``
    (+1: down the page), that are dark across :data:`EDGE_RULE_SHARE` of the body's width: the rules drawn across
    it (the body's own edge line, the box's rules), nearest ``edge`` first."""
    centres = sorted(ln.centre for ln in lines)
    lo, hi = int(round(centres[0])), int(round(centres[-1])) + 1
    if hi - lo < 2:
        return []
    first = edge + inward * max(2, int(round(EDGE_GAP_IN * dpi)))
    a, b = sorted((first, far))
    a, b = max(0, a), min(dark.shape[1], b + 1)
    if b <= a:
        return []
    across = (dark[lo:hi, a:b] > ink).mean(axis=0) >= EDGE_RULE_SHARE
    cols = a + np.flatnonzero(across)
    if inward < 0:
        cols = cols[::-1]
    # one rule a run of dark columns: its first column met walking inward (the box side of it)
    out: list[int] = []
    last = None
    for c in cols.tolist():
        if last is None or abs(c - last) > 1:
            out.append(c)
        last = c
    return out


def mark_frames(found: BodyLines, dpi: float | None = None) -> BodyLines:
    """``found`` with each line's ``frame`` set from how far it runs on into the boxes (``up``, ``down``) and how
    heavy it is (and a shared border of two equal tracks, :func:`_frame_halves`), and ``framed`` kept only where a
    line inside the body frames a column; in place."""
    lines = found.lines
    # a legend's pen sample printed sideways in the box over a track is a stroke along depth that may stand where a
    # grid line would run on (the mud logs' legends, over grid lines of a quarter of their borders' weight); a
    # column's border is never that much lighter than the others (01146's lightest, half their weight)
    running = [ln.strength for ln in lines if ln.runs_on]
    if running:
        least = FRAME_WEIGHT * float(np.median(running))
        for ln in lines:
            ln.frame = ln.runs_on and ln.strength >= least and ln.along_row
        _frame_halves(lines, dpi)
    # the outermost lines frame the body anyway: only a framing line inside it says how its columns are parted
    ordered = sorted(lines, key=lambda ln: ln.centre)
    found.framed = found.boxed and any(ln.frame for ln in ordered[1:-1])
    return found


HALF_SHARE = 0.5  # a shared border of two equal tracks runs on along at least this share of both boxes' rows ...
HALF_HEAVIER = 1.25  # ... and outweighs every other line inside its column by this factor ...
HALF_TOLERANCE = 0.02  # ... at the column's middle, the column twice a framed track's width, within this share of it


def _frame_halves(lines: list[BodyLine], dpi: float | None) -> None:
    """Frame the shared border of two touching tracks of equal width where the box's row over it is crossed by
    print (a caliper's mirrored scales written across the border), so that the border runs on along part of the
    row only: the API layout prints tracks 2 and 3 as wide as track 1, so a framed column twice as wide as a framed
    track beside it, whose heaviest inner line lies at its middle, outweighs every other line inside it and runs
    on into both the header's and the footer's box (a grid line stops at the body's edge) is two tracks. In place.
    """
    ordered = sorted(lines, key=lambda ln: ln.centre)
    if len(ordered) < 3:
        return
    frames = [ln for i, ln in enumerate(ordered) if ln.frame or i in (0, len(ordered) - 1)]
    widths = [b.centre - a.centre for a, b in zip(frames, frames[1:])]
    tracks = [w for w in widths if w >= MIN_TRACK_IN * _dpi_or(dpi)]
    for a, b in zip(frames, frames[1:]):
        inner = [ln for ln in ordered if a.centre < ln.centre < b.centre]
        width = b.centre - a.centre
        if len(inner) < 2 or not any(abs(2 * w - width) <= HALF_TOLERANCE * width for w in tracks):
            continue
        middle = min(inner, key=lambda ln: abs(ln.centre - (a.centre + b.centre) / 2))
        others = [ln for ln in inner if ln is not middle]
        # heavier in its weight (core width × darkness), or in its darkness alone: a line under a pixel wide (a
        # 3-px border scanned at 72 dpi) is drawn paler, not narrower, and a pale smear beside a curve may be as
        # wide as it
        if (abs(middle.centre - (a.centre + b.centre) / 2) <= HALF_TOLERANCE * width
                and min(middle.up, middle.down) >= HALF_SHARE
                and all(middle.strength >= HALF_HEAVIER * ln.strength or middle.darkness >= HALF_HEAVIER * ln.darkness
                        for ln in others)):
            middle.frame = True


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

    @property
    def width(self) -> float:
        return self.hi - self.lo


MIN_COLUMN_PX = 6  # two framing lines closer than this are one double line, not a column between them
MIN_TRACK_IN = 0.7  # no curve track is narrower (the archive's narrowest: 0.74 in; its depth columns up to 0.88 in)
GRID_LINES = 4  # a column this wide with this many lines inside is a gridded track ...
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
            out.append(Column(a.centre, b.centre, [ln for ln in lines if a.centre < ln.centre < b.centre]))
    return out


def measure(col: Column, body: np.ndarray) -> None:
    """A column's interior measured on the body's darkness (rows across × columns along depth, sampled), in place:
    its inner lines' rows left out."""
    a, b = int(np.ceil(col.lo)) + 3, int(np.floor(col.hi)) - 2
    if b <= a:
        return
    keep = np.ones(b - a, bool)
    for ln in col.inner:
        keep[max(0, ln.rows[0] - a) : max(0, ln.rows[1] - a)] = False
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

    width = col.width / _dpi_or(dpi)
    if by_width and width < MIN_TRACK_IN:
        return "other", "narrow", gap(width, MIN_TRACK_IN)
    margin = gap(width, MIN_TRACK_IN) if by_width else np.inf
    if col.busy >= BUSY_SHARE:
        margin = min(margin, gap(col.busy, BUSY_SHARE))
        ruled = col.crossings * _dpi_or(dpi)  # lines wholly across it, per inch along depth
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
    ruled = col.crossings * _dpi_or(dpi)
    if col.inked >= OPEN_INKED and ruled >= RULED_TRACK_IN:
        return "track", "ruled", min(margin, gap(col.inked, OPEN_INKED), gap(ruled, RULED_TRACK_IN))
    return "other", "open", min(margin, max(gap(col.inked, OPEN_INKED) if col.inked < OPEN_INKED else 0.0,
                                            min(gap(col.ink, OPEN_INK) if col.ink < OPEN_INK else 0.0,
                                                gap(ruled, RULED_TRACK_IN) if ruled < RULED_TRACK_IN else 0.0)))


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
