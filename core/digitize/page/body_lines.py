"""The lines along depth of a stretch of log body, and which of them frame its columns.

Inside a curve track the grid's lines run along depth as the borders do, often as heavy (a log decade's line, a
coarse linear grid's major line), so the lines alone do not say where one column ends. What does is the print's own
frame: a column's borders are drawn on into the header's scale box above the body (the box is ruled column by
column) and the footer's below, where a grid line stops at the body's edge. :func:`section_lines` finds each line of
a body with that continuation measured (:func:`frame_share`), the box row it runs along, and the body's edge (where
most lines end, or the rule drawn across the body); :func:`mark_frames` says which lines frame a column. What each
column holds (a curve track or the depth, lithology, description ... column) is ``calibrate/columns.py``'s.

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


def dpi_or_default(dpi: float | None) -> float:
    """The scan's resolution, or 100 dpi where it says none (or an implausible one, under 50)."""
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


def _lines_of(dark: np.ndarray, dpi: float) -> list[BodyLine]:
    """The lines along depth of a body's darkness (rows × columns along depth), each centred on its core: the rows
    dark along nearly all of the body (its lower quartile of darkness), not an image or a fill printed beside it,
    which is dark along much of it only."""
    # every column: one in five read a dotted grid line as paper where its dots fell between (a mud log's gas-track
    # grid lost all its lines to a 1-px shift of the body's start), and darkest-of-five smeared text into lines;
    # a 60,000-column body's lines take half a second
    sample = dark
    groups = detect_grid(dark=sample, still_curves=False).line_groups(0.5)
    wide = max(8, int(round(WIDE_GROUP_IN * dpi)))
    typical = sample[:, :: max(1, sample.shape[1] // 4000)]
    out: list[BodyLine] = []
    for g in groups:
        lo, hi = max(0, int(g.min()) - 1), min(dark.shape[0], int(g.max()) + 2)
        profile = np.percentile(typical[lo:hi], 25, axis=1)
        if profile.max() < MIN_LINE_DARKNESS:
            continue
        for a, b in [_core(profile)] + _more_cores(profile, wide):
            rows = np.arange(lo + a, lo + b, dtype=np.float64)
            weight = profile[a:b]
            out.append(BodyLine(float((rows * weight).sum() / weight.sum()), float(weight.sum()),
                                float(profile[a:b].max()), rows=(lo, hi)))
    return out


WIDE_GROUP_IN = 0.25  # a group of rows the grid reading took for one line this wide holds an image or a fill ...
PEAK_SHARE = 0.9  # ... and another line where another row is this dark of its darkest ...
DIP_SHARE = 0.75  # ... and the rows on both sides of it fall under this share of its darkness (or the group ends)
#   before any row as dark as it: a border against a fill (72 dpi: 0.95 against the sector map's 0.64)


def _dips(side: np.ndarray, peak: float) -> bool:
    """Whether ``side`` (the rows walking away from a peak) falls under :data:`DIP_SHARE` of ``peak`` before any
    row as dark as it, or runs out (the group's end)."""
    pale = np.flatnonzero(side < DIP_SHARE * peak)
    dark = np.flatnonzero(side >= peak)
    if dark.size == 0:
        return True
    return pale.size > 0 and pale[0] < dark[0]


def _more_cores(profile: np.ndarray, wide: int) -> list[tuple[int, int]]:
    """In a group of rows ``wide`` or more (:data:`WIDE_GROUP_IN`), the cores of the lines beside its darkest one:
    each row as dark as :data:`PEAK_SHARE` of the darkest that stands out of the rows on both sides (:func:`_dips`:
    a border drawn against an image track or a fill, which a low resolution blurred into one group with it: a
    72-dpi cement print's VDL|sector-map border, 0.95 beside the VDL's 1.0 stripes), its core the rows reaching
    :data:`PEAK_SHARE` of it."""
    if profile.size < wide:
        return []
    top = float(profile.max())
    first = _core(profile)
    peaks = [k for k in np.flatnonzero(profile >= PEAK_SHARE * top).tolist() if not first[0] <= k < first[1]]
    out: list[tuple[int, int]] = []
    for k in peaks:
        if any(a <= k < b for a, b in out):
            continue
        if not all(_dips(side, profile[k]) for side in (profile[:k][::-1], profile[k + 1 :])):
            continue
        a, b = k, k + 1
        while a > 0 and profile[a - 1] >= PEAK_SHARE * profile[k]:
            a -= 1
        while b < profile.size and profile[b] >= PEAK_SHARE * profile[k]:
            b += 1
        if b <= first[0] or a >= first[1]:
            out.append((a, b))
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
    band = max(6, int(round(BAND_IN * dpi)))
    # drawn: as dark as half the line, or half the box's ink where the line is darker than that (a black bar's
    # edges ruled on through the box in grey, a 1-px rule at 100 dpi: 0.3-0.5 beside the bar's 0.99)
    drawn = strip >= max(0.1, 0.5 * min(line.darkness, ink))
    lo, hi = line.rows if line.rows[1] > line.rows[0] else (c, c + 1)
    offsets = [off for off in sorted(range(max(-SNAP_ROWS, lo - c), min(SNAP_ROWS, hi - 1 - c) + 1), key=abs)
               if c + off - 1 - rows.start >= 0 and c + off + 2 - rows.start <= drawn.shape[0]]
    starts = [int(content[0])] if content.size else []
    # the line itself drawn on from the body's edge is the box's print too: a border paler than the box's ink
    # (a 1-px border at 100 dpi, 0.3-0.5) is no ink to start the box row at, and the first ink beyond it may lie
    # past the row's own rule, where the border stops. Only along a box row a band long or more: a track's grid
    # drawn on through a thin strip of ticks before the box's first rule (a tenth of an inch) is no border
    lead = int(np.argmax(~rule)) if (~rule).any() else rule.size
    ends = np.flatnonzero(rule[lead:])
    if (ends[0] if ends.size else rule.size - lead) >= band and any(
            drawn[c + off - 1 - rows.start : c + off + 2 - rows.start, lead : lead + 2].any(axis=0).all()
            for off in offsets):
        starts.append(lead)
    best: tuple[float, int, float] | None = None
    for first in starts:
        measured = _share_from(strip, drawn, rule, first, band, offsets, c - rows.start)
        if measured is not None and (best is None or measured[0] > best[0] + 1e-9):
            best = measured
    return best if best is not None else (0.0, 0, 0.0)


def _share_from(strip: np.ndarray, drawn: np.ndarray, rule: np.ndarray, first: int, band: int,
                offsets: list[int], c: int) -> tuple[float, int, float] | None:
    """:func:`frame_share`'s measure from the box row's start ``first`` (columns walking away from the body):
    the best share of the band along which the line is drawn at an offset across, the offset, and the share of the
    whole box row. ``c``: the line's centre row in ``strip``. None where the band holds under 3 columns of box."""
    keep = ~rule[first : first + band]
    if keep.sum() < 3:
        return None
    in_band = drawn[:, first : first + band][:, keep]
    best, at = 0.0, 0
    for off in offsets:
        # along one row of the box at least: a line runs straight through it, where a dotted fill's dots (a cement
        # row's, as dark as a faint grid line once a low-resolution scan has blurred them) stand in rows turn about
        share = float(in_band[c + off - 1 : c + off + 2].mean(axis=1).max())
        if share > best + 1e-9:
            best, at = share, off
    # the whole box row: from the first ink to the next rule across (a cell's border is drawn along all of it,
    # a legend's pen sample standing on a grid line's row along a stretch of it)
    ends = np.flatnonzero(rule[first:])
    stop = first + (int(ends[0]) if ends.size else rule.size - first)
    c0, c1 = c + at - 1, c + at + 2
    row_share = 0.0
    if c0 >= 0 and c1 <= strip.shape[0] and stop > first:
        along = drawn[c0:c1, first:stop][:, ~rule[first:stop]]
        row_share = float(along.max(axis=0).mean()) if along.size else 0.0
    return best, at, row_share


def section_lines(dark: np.ndarray, start: int, stop: int, dpi: float | None) -> BodyLines:
    """The lines along depth of the body [start, stop) of a page's darkness (rows across × columns along depth),
    each with how far it runs on into the header's first box row above the body and the footer's below. The
    body's edge is where most of its lines end (its grid lines stop at its edge line); where no line inside the
    body runs on from that edge on either side (the grid lost, the borders running through the whole box, or the
    body's span taking in the box), the rule drawn across the whole body nearer it (:func:`_rules_across`) is
    tried as the edge instead."""
    d = dpi_or_default(dpi)
    lines = _lines_of(dark[:, start:stop], d)
    if not lines:
        return BodyLines()
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


MIN_TRACK_IN = 0.7  # no curve track is narrower (the archive's narrowest: 0.74 in; its depth columns up to 0.88 in)
#   (here for the framing of two tracks as wide as track 1; calibrate/columns.py tells a narrower column apart)
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
    tracks = [w for w in widths if w >= MIN_TRACK_IN * dpi_or_default(dpi)]
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
