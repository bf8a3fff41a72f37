"""Stretches of a trace that ride printed structure instead of the curve: no value the ink does not show.

A tracer's path is happy on any long dark line, and on the prints that matter most it sees plenty: a
network reads a heavy track border or a heavy grid line as a solid pen with p 0.996 (the North Dakota log
``iqa_33-023-01146-0006``: GR read 299 API along the right border before the curve starts, ROP 75 along the
track's middle line for 50 ft), and a broken curve with nothing of its own in view rides a neighbour's
stroke (KGS: SPHI −7.9 pu along the tension curve for 28 ft while the sonic porosity was off scale). The
evidence is strong on all of these, so strength decides nothing; what does is how the trace got there:

- a **track border** or an **interior grid line** (``core/digitize/page/grid.py``: rows that are lines along
  depth, the bunched 7-8-9 lines of a log decade among them) ridden for more than :data:`RIDE_COLS` columns
  (a border for any stretch) is a reading only where the curve *joins or leaves it*: on one side of the
  stretch at least the trace is seen off the line within :data:`JOIN_COLS` columns, no farther from it than
  a curve's own slope carries it (:data:`JOIN_PX` plus :data:`JOIN_SLOPE_PX` a column). A caliper in gauge
  hole lying on a grid line and a curve parked on its border off scale are read; a trace that jumps onto a
  line across the paper and off again (an excursion), or runs on one from the log's start to a jump (the
  curve had not begun) or from a jump to the log's end, is not; nor, judged by what the trace saw of it, is one
  jumped onto across paper no drawn move crosses (the band's ink) and left along the curve on the other side;
- **another curve's stroke** (a curve of another line style in the same track) is ridden by whichever of
  the two the maps see less there, on the same join-and-leave rule; the other keeps it.

What is not a reading is written NULL (position NaN, not observed). Some stretches are *doubted* instead,
written and flagged low-confidence, because the ink cannot tell them from a curve lying along the line and
most of them were right (held-out families and the foreign hard prints, stage by stage in docs/accuracy.md):

- a stretch on a grid line inside the log that the trace saw at :data:`SEEN_SHARE` of its columns or more
  (:func:`grid_rides`; stage 3 at 95 % seen: 96 % of its columns right; stage 7 at 60 %: 97 %);
- a neighbour's stroke that only the maps give to the other style, away from the track's edges
  (:func:`neighbour_rides`: 83 % right), and an unbroken stroke the maps give to the broken curve's own
  style there (two curves lying along each other: 81 of 81 samples right);
- what the second pass of ``trace.trace_curve`` still reads on a line beside a ride, inside the log (a curve
  crossing a ruled line there: 85 %).

The rules act on traces, whichever tracer made them; a hand-painted mask is followed as painted and never
checked (``TraceParams.ink_checks``).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from core.common.runs import true_runs
from core.digitize.page.grid import Grid
from core.io.calibration import CurveSpec

RIDE_COLS = 24  # columns on a line beyond which a stretch must prove itself (a shallow crossing stays shorter)
LINE_PX = 2  # a trace within this many rows of a line row is on the line
BORDER_PX = 4.0  # ... and within this many of the track's end, on its border
BLIP_COLS = 4  # off-line blips this short inside a stretch on a line do not split it
JOIN_COLS = 24  # where the trace must be seen off the line on either side of a stretch ...
JOIN_PX = 6.0  # ... and how far from the line, plus ...
JOIN_SLOPE_PX = 2.0  # ... this many rows per column between the two
LINE_GRIDNESS = 0.5  # a row this grid-like in a window is a line there
SETTLE_COLS = 2 * BLIP_COLS + 1  # columns either side of a jump that say which line the trace is on


def _closed(flags: np.ndarray, blip: int = BLIP_COLS) -> np.ndarray:
    """``flags`` with the False runs of at most ``blip`` inside True runs filled: a trace flickers off a
    line by a pixel now and then while it rides it."""
    out = flags.copy()
    a, b = true_runs(~flags)
    inner = (a > 0) & (b < flags.size) & (b - a <= blip)
    for lo, hi in zip(a[inner], b[inner]):
        out[lo:hi] = True
    return out


def on_grid_line(position: np.ndarray, grid: Grid, spec: CurveSpec) -> np.ndarray:
    """Per column, whether ``position`` (canonical rows, NaN: none) lies on an along-depth line of ``grid`` in
    ``spec``'s track: a line of the printed ruling (``printed_lines``), counted as the grid's damping counts it
    (``Grid.ruled``: on a ruling of 2-px lines every 3-4 px every position is on a line, which says nothing)."""
    lo, hi = spec.track_rows()
    lo = max(0, lo)
    along = grid.ruled(slice(lo, hi + 1))
    along = along * printed_lines(along)[:, None]
    along = cv2.dilate(along, np.ones((2 * LINE_PX + 1, 1), np.uint8), borderType=cv2.BORDER_REPLICATE)
    cols = np.arange(position.size)
    window = np.clip(np.searchsorted(grid.windows, cols, side="right") - 1, 0, along.shape[1] - 1)
    rows = np.rint(np.nan_to_num(position, nan=-1.0)).astype(np.int64) - lo
    inside = np.isfinite(position) & (rows >= 0) & (rows < along.shape[0])
    return inside & (along[np.clip(rows, 0, along.shape[0] - 1), window] >= LINE_GRIDNESS)


COMB_TOLERANCE = 0.25  # a line whose removal leaves a gap within this share of the ruling's pitch is no ruling


def printed_lines(along: np.ndarray) -> np.ndarray:
    """Per row of a track's ``along`` lines, 1 where a line the grid reading found belongs to the printed ruling, 0 where
    it is a curve lying still that the reading took for a line (a caliper in gauge hole: straight over most of
    a log, its row is as dark as a ruled one's). A ruling has a pitch: a line between two ruled neighbours
    whose own gaps add up to about one pitch was not ruled (without it the comb is regular); the lines at the
    track's ends and any line of an irregular ruling (a log grid's decades) are kept."""
    keep = np.ones(along.shape[0], np.float32)
    if along.shape[1] == 0:
        return keep
    is_line = np.median(along, axis=1) >= LINE_GRIDNESS
    if int(is_line.sum()) < 4:
        return keep
    a, b = true_runs(is_line)
    centres = (a + b - 1) / 2.0
    gaps = np.diff(centres)
    if gaps.size < 2:  # one band of lines, or two: no comb to judge a line against
        return keep
    pitch = float(np.median(gaps))
    if pitch <= 0:
        return keep
    for k in range(1, centres.size - 1):
        between = max(gaps[k - 1], gaps[k]) < (1 - COMB_TOLERANCE) * pitch
        if between and abs(gaps[k - 1] + gaps[k] - pitch) <= COMB_TOLERANCE * pitch:
            keep[a[k] : b[k]] = 0.0
    return keep


def on_border(position: np.ndarray, spec: CurveSpec) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return (np.abs(position - spec.track_lo) <= BORDER_PX) | (np.abs(position - spec.track_hi) <= BORDER_PX)


def inside_log(observed: np.ndarray, lo: int, hi: int) -> bool:
    """Whether the stretch [lo, hi) lies inside the log: the curve was read before it and after it. A stretch open
    at the log's start or end (a curve not yet begun, or ended) is not."""
    return bool(observed[:lo].any() and observed[hi:].any())


def _side(position: np.ndarray, observed: np.ndarray, on_line: np.ndarray, a: int, b: int,
          side: int) -> tuple[str, int]:
    """How the trace meets the stretch [a, b) on one side (``side`` −1: where it comes to it, +1: where it leaves
    it), and the column it is seen at off the line there (−1: none): ``"join"`` along the curve (within
    :data:`JOIN_COLS` columns, the first column seen off the line is within reach of the stretch's end), ``"off"``
    (that column is out of reach) or ``"open"`` (no column seen off the line there: a gap, the log's start or
    end)."""
    edge = a if side < 0 else b - 1
    span = np.arange(edge - 1, max(-1, edge - 1 - JOIN_COLS), -1) if side < 0 else \
        np.arange(edge + 1, min(position.size, edge + 1 + JOIN_COLS))
    seen = span[observed[span] & ~on_line[span] & np.isfinite(position[span])]
    if seen.size == 0:
        return "open", -1
    c = int(seen[0])
    return ("join" if abs(position[c] - position[edge]) <= JOIN_PX + JOIN_SLOPE_PX * abs(c - edge) else "off"), c


def _jumped(position: np.ndarray, observed: np.ndarray, a: int, b: int, side: int, c: int,
            ink: "LineInk") -> bool:
    """Whether the trace, seen off the line at column ``c`` beside the stretch [a, b) and out of reach of it, jumped
    onto the line across paper (``side`` as :func:`_side`'s): it is seen on the line within :data:`JOIN_COLS` columns
    of the stretch's end (a path bridging an unseen stretch onto the line may meet the curve there), and between
    the two places, over the columns between, no ink runs across more rows than a drawn move leaves
    (``ink.no_move_rows``)."""
    near = slice(a, min(b, a + JOIN_COLS)) if side < 0 else slice(max(a, b - JOIN_COLS), b)
    if not observed[near].any():
        return False
    edge = a if side < 0 else b - 1
    c0, c1 = sorted((c, edge))
    r0, r1 = sorted((int(round(position[c])), int(round(position[edge]))))
    r0, r1 = max(r0 - ink.row0, 0), min(r1 - ink.row0, ink.inked.shape[0] - 1)
    if r1 <= r0:
        return False
    blank = ~ink.inked[r0 : r1 + 1, c0 : c1 + 1].any(axis=1)
    s, e = true_runs(blank)
    return bool(s.size) and int((e - s).max()) > ink.no_move_rows


def _joined_side(position: np.ndarray, observed: np.ndarray, on_line: np.ndarray, a: int, b: int,
                 side: int) -> bool:
    """Whether the trace comes to the stretch [a, b) (``side`` −1) or leaves it (+1) along the curve (:func:`_side`).
    A stretch open at the log's start or end is never joined there."""
    return _side(position, observed, on_line, a, b, side)[0] == "join"


def joined(position: np.ndarray, observed: np.ndarray, on_line: np.ndarray, a: int, b: int) -> bool:
    """Whether the trace joins the line at the stretch [a, b) and leaves it again (both sides)."""
    return all(_joined_side(position, observed, on_line, a, b, side) for side in (-1, 1))


def _joined_once(position: np.ndarray, observed: np.ndarray, on_line: np.ndarray, a: int, b: int) -> bool:
    return any(_joined_side(position, observed, on_line, a, b, side) for side in (-1, 1))


def _one_line_runs(on_line: np.ndarray, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs of ``on_line`` cut where the trace jumps from one line onto another (more than :data:`JOIN_PX`
    rows in a column, and the :data:`SETTLE_COLS` columns after it lie that far from those before it): a jump
    onto another line is no stretch along one line, and the second line's end passed for the first's way off it
    (a foreign 1-bit print: a gamma ray read along a decade's top lines for 1,150 columns, then jumped onto a
    line of another decade and was taken to leave the first along the curve). A spike off a line and back onto
    it cuts nothing (a resistivity wobbling about a decade's 7 line for 1,000 columns)."""
    a, b = true_runs(on_line)
    with np.errstate(invalid="ignore"):
        jump = np.flatnonzero(np.abs(np.diff(position)) > JOIN_PX) + 1
    starts, stops = [], []
    for lo, hi in zip(a.tolist(), b.tolist()):
        cuts = [j for j in jump[(jump > lo) & (jump < hi)].tolist()
                if abs(np.nanmedian(position[j : min(hi, j + SETTLE_COLS)])
                       - np.nanmedian(position[max(lo, j - SETTLE_COLS) : j])) > JOIN_PX]
        edges = [lo, *cuts, hi]
        starts += edges[:-1]
        stops += edges[1:]
    return np.asarray(starts, np.int64), np.asarray(stops, np.int64)


# a mid-log stretch on a grid line the trace sees this much of is doubted, not dropped. 0.95 with stage 3; stage 7
# sees a curve along a line in patches more often: stretches seen at 60-95 % held 335 right samples of 346 (the
# 11 wrong on the foreign hard prints); those seen at 30-60 % were right on the held-out families (218 of 218)
# but wrong at 92 of 128 on the foreign hard prints, so they stay NULL
SEEN_SHARE = 0.6


def border_rides(position: np.ndarray, observed: np.ndarray, spec: CurveSpec) -> np.ndarray:
    """Columns where the trace rides its track's border (module docstring): every stretch on it that the trace
    neither joins nor leaves along the curve is no reading."""
    no_reading = np.zeros(position.size, bool)
    border = _closed(on_border(position, spec))
    a, b = true_runs(border)
    for lo, hi in zip(a, b):
        # a curve touching its border, crossing it on a backup scale or parked on it off scale comes to it or
        # leaves it along the curve on one side at least; jumped onto and off, or ridden from the log's start
        # to a jump, it is no reading
        if not _joined_once(position, observed, border, lo, hi):
            no_reading[lo:hi] = True
    return no_reading


@dataclass(frozen=True)
class LineInk:
    """A track band's ink as the tracer reads it, for :func:`line_rides` to tell a trace's jump onto a line from a
    curve's drawn move: ``inked`` (rows of the band, columns), the canonical row of its first row, and the longest
    run of rows without ink a drawn move leaves (the wrap judge's ``surely_wrap``: ``trace/wraps.py``)."""

    inked: np.ndarray
    row0: int
    no_move_rows: float


def line_rides(position: np.ndarray, observed: np.ndarray, spec: CurveSpec, grid: Grid,
               ink: LineInk | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Columns where the trace rides a grid line along depth rather than reads the curve, as two masks:
    ``no_reading``, the long stretches on a line not joined at either end; ``doubt``, those of them that lie inside
    the log (the curve was read before and after them) and that the trace saw at :data:`SEEN_SHARE` of their
    columns or more. Measured on the held-out families and the foreign hard prints: such stretches were right at
    96-97 % of their columns (a resistivity along a decade's line, a neutron along a ruled line), the stretches
    seen less were mostly wrong (an excursion across the paper); they are written, doubted.

    A stretch joined or left along the curve on one side is a reading, unless, given the band's ``ink``, the trace
    jumped onto the line on the other side across paper no drawn move crosses (:func:`_jumped`): then it is judged
    as one joined on neither side."""
    no_reading = np.zeros(position.size, bool)
    doubt = np.zeros(position.size, bool)
    border = _closed(on_border(position, spec))
    line = _closed(on_grid_line(position, grid, spec) & ~border)
    a, b = _one_line_runs(line, position)
    for lo, hi in zip(a, b):
        # jumped onto and off again (an excursion), or ridden from the log's start to a jump or from a jump to
        # its end (the curve had not begun, or had ended: the ROP of the North Dakota log on the track's middle
        # line): no reading. A curve lying on a ruled line from the top of the log until it leaves it cannot be
        # told from the ruling there either, and is NULL until it leaves
        if hi - lo <= RIDE_COLS:
            continue
        sides = [_side(position, observed, line | border, lo, hi, side) for side in (-1, 1)]
        # joined or left along the curve on one side at least is a reading (a caliper lying on a line until a bed
        # boundary takes it off), unless the trace jumped onto the line on the other side across paper the ink
        # shows no move over: then the join is no proof, and what the trace saw of the stretch decides, as for a
        # stretch joined on neither side (random_16's RHOB, a straight line along depth the network reads as
        # ruling: the path jumped 0.56 of the track onto a grid line, rode it for 594 columns seen at 55 %, and met
        # a neighbour's stroke at its far end: 394 confidently wrong columns; docs/accuracy.md, the twelfth round)
        if any(k == "join" for k, _ in sides) and not (ink is not None and any(
                k == "off" and _jumped(position, observed, lo, hi, side, c, ink)
                for (k, c), side in zip(sides, (-1, 1)))):
            continue
        seen_most = inside_log(observed, lo, hi) and observed[lo:hi].mean() >= SEEN_SHARE
        (doubt if seen_most else no_reading)[lo:hi] = True
    return no_reading, doubt


def grid_rides(position: np.ndarray, observed: np.ndarray, spec: CurveSpec,
               grid: Grid | None, ink: LineInk | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Columns where the trace rides a track border or a grid line rather than reads the curve, as two masks:
    ``no_reading`` (:func:`border_rides` and :func:`line_rides`'), and ``doubt`` (:func:`line_rides`')."""
    no_reading = border_rides(position, observed, spec)
    if grid is None:
        return no_reading, np.zeros(position.size, bool)
    on_line, doubt = line_rides(position, observed, spec, grid, ink)
    return no_reading | on_line, doubt


PARKED_SHARE = 0.10  # a stretch on a neighbour this near its track's edge (a share of the width) is a parked curve


def neighbour_rides(position: np.ndarray, observed: np.ndarray, other: np.ndarray, own_strength: np.ndarray,
                    other_strength: np.ndarray, edges: tuple[float, float],
                    unbroken=None) -> tuple[np.ndarray, np.ndarray]:
    """Columns where a trace rides another curve's stroke (``other``: that curve's positions), as two masks:
    long stretches within :data:`LINE_PX` + 1 rows of it, not joined at both ends.

    ``no_reading``: where the ink settles it, or the place does. ``unbroken(lo, hi)``, for a broken (dashed or
    dotted) trace beside a solid neighbour: whether the ink of the stretch is one unbroken stroke
    (``core/digitize/rules/pen_pattern.py``); then the stroke is the solid curve's however the trace came onto it (a
    broken pen's gaps would show), and no reading where the maps see the solid style more or by the track's
    edge; where they see the broken curve's own style, the two curves lie along each other (the solid pen's ink
    fills the broken one's gaps: 81 of 81 such samples right) and it is doubted. A stretch the maps give to the
    other curve's style (``own_strength``, ``other_strength``: each style's evidence at the stretch) within
    :data:`PARKED_SHARE` of the track's ``edges`` is a curve gone off scale and parked on the stroke nearest the
    edge (KGS: SPHI on the tension's line at 846-874 ft). ``doubt``: such a stretch elsewhere in the track,
    where only the maps say so: two curves lying along each other read the same there, and the value is
    written, flagged (on the held-out families 83 % of such columns were right; on the foreign hard prints most
    wrong ones were flagged already)."""
    no_reading = np.zeros(position.size, bool)
    doubt = np.zeros(position.size, bool)
    with np.errstate(invalid="ignore"):
        near = _closed(np.abs(position - other) <= LINE_PX + 1)
    a, b = true_runs(near)
    for lo, hi in zip(a, b):
        if hi - lo <= RIDE_COLS:
            continue
        maps_own = np.mean(own_strength[lo:hi]) >= np.mean(other_strength[lo:hi])
        parked = min(abs(np.nanmedian(position[lo:hi]) - e) for e in edges) <= PARKED_SHARE * abs(edges[1] - edges[0])
        if unbroken is not None and unbroken(lo, hi):
            # one unbroken stroke is the solid curve's; where the maps see the broken curve's own style on it all
            # the same, the two lie along each other (dense_02's NPHI on its neighbour's line, every column right)
            # and the reading is doubted, unless it is a curve parked by the edge
            (doubt if maps_own and not parked else no_reading)[lo:hi] = True
            continue
        if maps_own or joined(position, observed, near, lo, hi):
            continue
        (no_reading if parked else doubt)[lo:hi] = True
    return no_reading, doubt


def strength_along(evidence, position: np.ndarray, row_offset: int = 0) -> np.ndarray:
    """A map's evidence at a trace's positions (0 where the trace has none); ``evidence`` may be a coded map, read
    at those pixels alone (the band of rows the trace spans, decoded whole, was 0.09 s of KGS's 11 reads)."""
    ok = np.isfinite(position)
    out = np.zeros(position.size, np.float32)
    if not ok.any():
        return out
    rows = np.rint(position[ok]).astype(np.int64) - row_offset
    lo, hi = int(max(0, rows.min())), int(min(evidence.shape[0] - 1, rows.max()))
    if hi < lo:
        return out
    cols = np.flatnonzero(ok)
    out[cols] = np.asarray(evidence[np.clip(rows, lo, hi), cols], np.float32)
    return out
