"""Which scale a wrapping curve is on: the wrap count per column, decided by the ink at the track's edges.

A curve with a backup scale (GR 0–150 → 150–300) that leaves the track at one edge is drawn on from the
other, one scale further on. The cyclic Viterbi (``core/digitize/trace/path_search.py``) finds *where* such a curve is,
not how it got there, so the count is decided here, between observed columns:

- a move across the track between two neighbouring observations is direct or a wrap by the ink between
  them (:func:`resolve_wraps`: a direct move draws the rows between, a wrap draws none); a depth line
  inks every row, so a move along it that took no crossing is judged again on the ink beside the line;
- and a wrap must be *seen at the edges*: the last observation before it lies at the edge the curve
  leaves by, the first after it at the edge it enters from (:func:`edge_zone` of them), or the strokes
  either side run on to those edges (a steep stroke), or, hidden under a depth line, the ink beside the
  line does. A curve near one edge that the path carried to the far border and back (the North Dakota
  GR 15–95 API read as 325 API, flipping between the two levels) changes no level; the move between is
  neither direct nor a wrap, so those columns are doubtful (NULL);
- with the backup's side named, a curve lives on two levels only (:func:`two_level_wraps`).

Nothing here depends on how the evidence was computed, only on what it shows, so the level of a sample is
the same whichever window, worker or thread count read the scan.
"""

from __future__ import annotations

import numpy as np

from core.common.runs import true_runs

EDGE_PX = 12  # a wrap's last and first observations lie this near the track's edges ...
EDGE_SHARE = 0.10  # ... or this share of the track, if more (KGS: a GR spike left at 21 px and came in at 26 px from
# the edges, between two observed columns of its steep stroke)


def edge_zone(rows: int) -> float:
    """Rows from a track edge within which a trace counts as at the edge (a steep stroke's last column
    before the border can lie a pen-stroke's slope inside it)."""
    return max(EDGE_PX, EDGE_SHARE * rows)


def at_edges(before: float, after: float, step: int, rows: int) -> bool:
    """Whether a wrap by ``step`` (+1: out through the last row, in at row 0; −1 the other way) is seen at
    the edges: ``before`` at the edge it leaves by, ``after`` at the one it enters from."""
    zone = edge_zone(rows)
    top = rows - 1 - zone
    return (before >= top and after <= zone) if step > 0 else (before <= zone and after >= top)


def resolve_wraps(path: np.ndarray, wrap_step: np.ndarray, ev: np.ndarray, observed: np.ndarray,
                  params, edges: bool = True, lines: np.ndarray | None = None,
                  returning: int = 0, inked: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Wrap steps of a wrapping curve, decided from the ink between observed columns, and the columns whose
    scale cannot be told (``params``: the tracer's ``TraceParams``).

    The cyclic Viterbi path takes the shorter way round, but a fast curve can
    leave the track and re-enter by a way that is *longer* than the direct
    move across it. The ink tells them apart: a pen moving directly across the
    track draws the rows in between (a dashed or dotted pen all but its gaps,
    which a steep stretch spreads over many rows), while at a wrap the pen
    jumps to the other edge and draws nothing between. So between two
    neighbouring observed columns whose positions differ by more than
    ``wrap_min_jump_px``, the longest run of rows between them without ink
    (in any column of the stretch) decides: up to ``wrap_ink_gap_px`` the move
    is direct, beyond ``wrap_ink_gap_share`` of the track it is a wrap, and in
    between the curve's own motion on either side does: heading against the
    direct move means it left through the edge behind it (a wrap), heading
    with it means a steep stretch whose ink fell in dash gaps; standing still,
    the shorter way round wins.

    A wrap counts only where it is seen at the edges (:func:`at_edges`); a move the ink calls no direct
    move and the edges no wrap leaves the columns between doubtful (returned True there: their values
    are NULL). Across a gap longer than the tracer bridges, the level changes only where the observations
    either side lie at opposite edges, the way the path went round. ``edges`` False (a hand-painted mask,
    followed as painted) takes the ink's word alone, and the path's count across long gaps.

    A crossing is also seen at the edges where the strokes either side of it run on to them
    (:func:`strokes_reach_edges`): a steep stroke leaves its last observation well inside the track (random_00's
    GR came back from its backup scale 23 and 50 px inside the edges; the North Dakota GR left for it 56 px
    inside, along a depth line).

    ``lines``: the columns an across line (a depth line) inks at every row of the track. Its ink shows no move,
    direct or round, so where the moves across a line's columns took no crossing, the move is judged again
    between the observations either side of the line, by their ink alone. (The line's columns are judged as
    before first: KGS's GR comes back from its backup scale at the 830-ft line with the path on the line's
    column at the track's edge, a crossing seen there.) A return to the main scale hidden under the line
    (``returning``: the step that brings a curve with a named backup side back, −1 for a "high" backup in the
    track's row direction, +1 for a "low" one, 0 when the side is not named) is seen where the ink beside the
    line runs from the curve to the edge it leaves by and in from the other (:func:`hidden_crossing`). A step
    *away* is not taken on that evidence: the crossing itself is unseen, and one taken wrongly carries the rest
    of the log a scale off, while a return taken wrongly from the main scale is dropped by
    :func:`two_level_wraps` (taken on it too, steps away put 97 more samples of random_00's GR a scale off).
    Before these rules a step away from the main scale needed the path itself at the edges, so that one taken
    wrongly would not carry the rest of a log a scale off while its return went unseen under a depth line; with
    that return seen, the synthetic oracle of wrapped curves unwraps 29 of 36, where it unwrapped 25.
    """
    rows = ev.shape[0]
    raw_inked = ev >= params.threshold if inked is None else inked  # ``inked``: that mask, where the caller has it
    out = np.zeros_like(wrap_step)
    doubtful = np.zeros(wrap_step.size, bool)
    obs = np.flatnonzero(observed)
    if obs.size < 2:
        return out, doubtful
    judge = _MoveJudge(path, wrap_step, rows, params, edges, returning)
    for a, b in zip(obs[:-1], obs[1:]):
        judge.decide(raw_inked, a, b, out, doubtful)
    round_trips(wrap_step, out, params.max_gap_px + 1, judge.refused)
    if lines is None or not lines.any():
        return out, doubtful
    # a depth line inks every row, so a path along it (the North Dakota GR's return along the 8,460-ft line:
    # 65 → 203 → 284 px, each move "drawn") shows no move: where the moves across a line's columns took no
    # crossing, the move is judged again between the observations either side, by their ink alone
    beside = raw_inked & ~lines[None, :]
    seen = np.flatnonzero(observed & ~lines)
    for lo, hi in zip(*true_runs(lines)):
        i = np.searchsorted(seen, lo)
        if i == 0 or i >= seen.size:
            continue
        a, b = int(seen[i - 1]), int(seen[i])
        if b - a > params.max_gap_px + 1 or out[a + 1 : b + 1].any():
            continue
        doubtful[a + 1 : b] = False
        judge.decide(beside, a, b, out, doubtful, hidden=True)
    return out, doubtful


def round_trips(wrap_step: np.ndarray, out: np.ndarray, span: int, refused) -> None:
    """Take a short excursion of the path whole or not at all (``out``, the crossings taken, in place): where the
    path left the track at one edge and came back by the other within ``span`` columns (two crossings of
    opposite steps, ``wrap_step``), and the judge took one of the two, it is dropped.

    The two crossings are one excursion: taken alone, one of them puts the rest of the log a scale off, or
    tips which scale the log starts on (``two_level_wraps``). Where the edges show the leave but not the return
    (dotted_fax_14's NPHI of the real shapes, 496 → 498: the return came in 39 rows inside the edge, between two
    neighbouring observed columns, so it was carried on as direct), the leave alone took the rest of the log to
    the backup scale, and 1,033 samples confident and right on the main scale were doubted. random_16's NPHI:
    the return at 1,218 refused the same way and the leave 22 columns later taken, the return seen at 1,313 then
    fitted, and the doubt a dropped crossing had put over 1,091-1,313 was lifted (153 samples a scale off).
    Dropped, the excursion's few columns keep the level around them. ``span``: the columns the tracer bridges
    (``max_gap_px``), the reach of one move."""
    refused = set(int(c) for c in refused)
    at = np.flatnonzero(wrap_step)
    for c1, c2 in zip(at[:-1], at[1:]):
        if c2 - c1 <= span and wrap_step[c1] == -wrap_step[c2] and (
                out[c1] and not out[c2] and int(c2) in refused or out[c2] and not out[c1] and int(c1) in refused):
            out[c1] = out[c2] = 0


def untaken_round_trips(path_step: np.ndarray, taken: np.ndarray, level: np.ndarray) -> np.ndarray:
    """The columns whose scale is not known for a round trip the path took and the judge did not: where the path
    crossed the track's edge (``path_step``, the cyclic path's steps) and came back by the other at its next
    crossing, the judge took neither crossing nor any between (``taken``: :func:`resolve_wraps`' steps), and the
    level (``level``, per column, after every rule) does not change at either, the columns from the first up to
    the second are returned True. The crossings are paired in order, each at most once.

    A crossing the judge refuses between two neighbouring observed columns leaves no column between to doubt, so it
    is carried on as if direct (the judge's hole); a round trip of two such keeps the level around it, but between
    them the path was where its crossings put it: on the curve beyond the edge whose crossings the ink does not show,
    or on other ink. The level read there is the one outside, which only the refusals chose: random_06's SPHI came
    back from its backup scale at 1,542 and left again at 1,566, both refused, and 16 columns between were written a
    scale off at 0.95-1.00. Over the fit's 80 logs (seed 515151), the held-out families' 24 of each draw and the
    foreign prints, 151 samples confidently wrong are doubted so and one confidently right; no set's share rises
    (``random`` 1.411 -> 1.331 %: docs/accuracy.md, the fifteenth round). Pairing in order matters: the path's
    crossings 169/175/412/419 of dense_23's PEF (real shapes) are two short excursions, not also one long one between
    175 and 412 (231 columns right)."""
    out = np.zeros(path_step.size, bool)
    at = np.flatnonzero(path_step)
    paired = -1
    for c1, c2 in zip(at[:-1], at[1:]):
        if c1 == paired or path_step[c1] != -path_step[c2] or np.any(taken[c1 : c2 + 1]):
            continue
        if (c1 > 0 and level[c1] != level[c1 - 1]) or level[c2] != level[c2 - 1]:  # column 0 has no before
            continue
        out[c1:c2] = True
        paired = c2
    return out


class _MoveJudge:
    """Whether the move of a wrapping curve's path between two neighbouring observed columns is direct or a
    crossing of the track's edge, and whether the edges show that crossing (:func:`resolve_wraps`)."""

    def __init__(self, path, wrap_step, rows, params, edges, returning):
        self.path, self.wrap_step, self.rows, self.params = path, wrap_step, rows, params
        self.edges, self.returning = edges, returning
        self.surely_wrap = no_move_rows(params, rows)
        self.refused = []  # the path's crossings the ink calls a wrap and the edges do not show (``round_trips``)

    def decide(self, inked, a, b, out, doubtful, hidden=False):
        """Write the crossing between ``a`` and ``b`` into ``out``, or mark the columns between doubtful.
        ``hidden``: the move runs under an across line whose columns ``inked`` leaves blank."""
        path, rows, params = self.path, self.rows, self.params
        if b - a > params.max_gap_px + 1:  # unseen for long: NULL between; a level change only at the edges
            if not self.edges:
                out[a + 1 : b + 1] = self.wrap_step[a + 1 : b + 1]
                return
            net = int(self.wrap_step[a + 1 : b + 1].sum())
            if net and at_edges(path[a], path[b], int(np.sign(net)), rows):
                out[a + 1 + int(np.flatnonzero(self.wrap_step[a + 1 : b + 1])[0])] = np.sign(net)
            return
        direct = int(path[b]) - int(path[a])
        if abs(direct) <= params.wrap_min_jump_px:
            return
        gap = move_ink_gap(inked, path, a, b)
        if gap <= params.wrap_ink_gap_px:
            return
        if gap <= self.surely_wrap:
            along = velocity_along(path, a, b, direct, rows)
            if along > 0 or (along == 0 and abs(direct) <= rows - abs(direct)):
                return
        # a wrap: the curve crossed the edge the direct move turns away from, if the edges show it. Where the ink
        # between already rules the direct move out (no ink over more than ``surely_wrap`` rows), the strokes either
        # side are followed to the edges across the breaks a drawn move leaves (``wrap_ink_gap_px``, as
        # ``missed_returns.hidden_returns`` follows them): a network reads a stroke steeper than a row can place in pieces, and
        # a crossing the edges do not show between two neighbouring observed columns leaves no column to doubt, so
        # it was carried on as if direct (random_06's SPHI came back from its backup scale in runs up to 15 rows
        # apart, the last 21 rows inside the edge: 28 columns a scale off at confidence 0.94-1.00). Where the ink leaves
        # the move in doubt, a thin stroke's breaks (``RUN_GAP_PX``) only: followed across more, 16-row breaks in a
        # dashed PEF's track hopped to the edge over others' ink (dotted_fax_10: 314 samples confidently a scale off)
        step = 1 if direct < 0 else -1
        reach_gap = max(params.wrap_ink_gap_px, RUN_GAP_PX) if gap > self.surely_wrap else RUN_GAP_PX
        if self.edges and not at_edges(path[a], path[b], step, rows) and not (
                strokes_reach_edges(inked, a, b, path[a], path[b], step, reach_gap)
                or hidden and step == self.returning and hidden_crossing(inked, a, b, path[a], step)):
            doubtful[a + 1 : b] = True
            self.refused.extend((a + 1 + np.flatnonzero(self.wrap_step[a + 1 : b + 1])).tolist())
            return
        within = np.flatnonzero(self.wrap_step[a + 1 : b + 1])
        at = a + 1 + (int(within[0]) if within.size else int(np.argmax(np.abs(np.diff(path[a : b + 1])))))
        out[at] = step


RUN_GAP_PX = 6  # gaps a stroke's run of inked rows may have on its way to the edge (a dashed pen, a thin stroke)


def strokes_reach_edges(inked: np.ndarray, a: int, b: int, before: float, after: float, step: int,
                        gap_px: int = RUN_GAP_PX) -> bool:
    """Whether the ink runs from ``before`` (the path at column ``a``) on to the edge a wrap by ``step`` leaves
    by, and from ``after`` (at ``b``) on to the edge it enters from, each over the columns about its side of
    the move (``inked``: the band's evidence above threshold, rows across). random_00's GR came back from its
    backup scale in two strokes, one from 36 px to the row-0 edge and one from the far edge to 68 px, both
    inked in the columns of the move; the path's own last and first observations lay 23 and 50 px inside."""
    rows, cols = inked.shape
    zone = edge_zone(rows)
    leave = inked[:, max(0, a - 2) : b].any(axis=1)
    enter = inked[:, a + 1 : min(cols, b + 3)].any(axis=1)
    if step > 0:  # out through the last row, in at row 0
        return (stroke_reach(leave, int(before), +1, gap_px) >= rows - 1 - zone
                and stroke_reach(enter, int(after), -1, gap_px) <= zone)
    return stroke_reach(leave, int(before), -1, gap_px) <= zone and stroke_reach(enter, int(after), +1, gap_px) >= rows - 1 - zone


BORDER_SPAN = 40  # columns either side of a move whose ink at the track's edge is the border's own, not a stroke


def hidden_crossing(inked: np.ndarray, a: int, b: int, before: float, step: int) -> bool:
    """Whether a crossing of the track's edge by ``step`` hidden under an across line between columns ``a`` and
    ``b`` shows in the ink beside the line (``inked``: the band's evidence above threshold, the line's columns
    blanked): the stroke runs from ``before`` (the path at ``a``) on to the edge it leaves by, and a stroke
    runs in from the other edge, deeper than the border's own ink there. iqa_01146's GR came back from its red
    backup scale along the 8,460-ft depth line: left of the line its stroke ran to the track's left edge and
    its return from the right edge was drawn 22 px in; the descent between lay under the line."""
    rows, cols = inked.shape
    zone = edge_zone(rows)
    window = np.zeros(cols, bool)
    window[max(0, a - 2) : min(cols, b + 3)] = True
    near = np.zeros(cols, bool)
    near[max(0, a - BORDER_SPAN) : min(cols, b + BORDER_SPAN)] = True
    near &= ~window
    beside = inked[:, window].any(axis=1)
    edge, inward = (rows - 1, -1) if step < 0 else (0, +1)  # the edge the curve enters from, and the way
    leaves = stroke_reach(beside, int(before), inward)  # from it to the edge it leaves by
    if (leaves > zone) if step < 0 else (leaves < rows - 1 - zone):
        return False
    border = [abs(stroke_reach(inked[:, c], edge, inward) - edge) for c in np.flatnonzero(near)]
    border_depth = float(np.median(border)) if border else 0.0
    return abs(stroke_reach(beside, edge, inward) - edge) >= border_depth + EDGE_PX


def stroke_reach(profile: np.ndarray, start: int, direction: int, gap_px: int = RUN_GAP_PX) -> int:
    """The farthest row from ``start`` in ``direction`` that ``profile``'s ink reaches, over gaps of at most
    ``gap_px`` rows (``start`` itself if there is no ink there)."""
    start = int(np.clip(start, 0, profile.size - 1))
    far, gap, r = start, 0, start
    while 0 <= r + direction < profile.size:
        r += direction
        if profile[r]:
            far, gap = r, 0
        else:
            gap += 1
            if gap > gap_px:
                break
    return far


MOSTLY_BACKUP = 0.5  # a curve read on its backup scale over more of the log than this has likely missed a crossing


def two_level_wraps(wrap_step: np.ndarray, backup: str) -> tuple[np.ndarray, np.ndarray]:
    """Wrap level per column when the print has one backup scale: main (0) or backup (+1 "high", −1 "low"),
    and the columns whose level is uncertain.

    Such a curve lives on two levels only, so a crossing that would leave them (a second wrap upwards
    while already on the backup, one downwards while on the main scale) is a misread (a shading hatch,
    a pair of fast swings) and is dropped rather than added up: a plain running sum lets every misread
    shift the rest of the log by a whole scale (on a 1,750 ft KGS sonic log, GR read as 380–550 API).
    The image cannot say on which scale the log starts: the start that needs fewer crossings dropped
    wins, the main scale on a tie.

    A dropped crossing also says a crossing the other way was missed since the last one kept (KGS: the
    return of a GR spike drawn through its own shading hatch): between those two the level is uncertain,
    and the columns are returned True, for the confidence and a warning that names the range.

    A backup scale carries excursions, so a curve read on it over most of the log (:data:`MOSTLY_BACKUP`) has
    likely missed a crossing: its backup stretches open at the log's start or end (no crossing seen there to
    pin them) are uncertain too. random_02's dotted RHOB (``eval-styles --las-dir``) swept once round its scale
    in a few rows and came in again on the main scale, the dots of the sweep stopping 14 px short of the edge;
    the move looked direct and the last 60 % of the log read a whole scale width off at confidence 0.6-0.9.
    """
    backup_level = 1 if backup == "high" else -1
    lo, hi = sorted((0, backup_level))
    at = np.flatnonzero(wrap_step)
    best = None
    for start in (0, backup_level):
        level, last_kept, dropped, levels = start, 0, [], []
        for col, step in zip(at, wrap_step[at]):
            nxt = level + int(step)
            if lo <= nxt <= hi:
                level, last_kept = nxt, col
            else:
                dropped.append((last_kept, col))  # a crossing the other way was missed in between
            levels.append(level)
        if best is None or len(dropped) < len(best[0]):
            best = (dropped, start, levels)
    dropped, start, levels = best
    uncertain = np.zeros(wrap_step.size, bool)
    for a, b in dropped:
        uncertain[a:b] = True
    # a crossing's level holds from its column to the next crossing
    held = np.asarray([start] + levels, np.int64)
    level = held[np.searchsorted(at, np.arange(wrap_step.size), side="right")]
    on_backup = level != 0
    if on_backup.mean() > MOSTLY_BACKUP:
        for a, b in zip(*true_runs(on_backup)):
            if a == 0 or b == level.size:
                uncertain[a:b] = True
    return level, uncertain



def _velocity(path: np.ndarray, at: int, direction: int, rows: int, span: int = 3) -> float:
    """Rows per column the path moves over ``span`` columns before (−1) or after (+1) ``at``;
    0 across an apparent wrap (a move of more than half the track)."""
    other = int(np.clip(at + direction * span, 0, path.size - 1))
    if other == at:
        return 0.0
    d = (int(path[at]) - int(path[other])) * (1 if direction < 0 else -1)
    return 0.0 if abs(d) > rows // 2 else d / abs(other - at)


def no_move_rows(params, rows: int) -> float:
    """The longest run of rows without ink a curve's drawn move across a band of ``rows`` leaves (``params``, a
    ``TraceParams``): a longer one rules the move out and calls it a wrap (a quarter of the track); the judge's, and
    the rides' (``rules/riding.py: LineInk``)."""
    return max(params.wrap_ink_gap_px, params.wrap_ink_gap_share * rows)


def move_ink_gap(inked: np.ndarray, path: np.ndarray, a: int, b: int) -> int:
    """The longest run of rows without ink (``inked``, rows × columns) between the path's rows at columns ``a`` and
    ``b``, over the columns of the move: a drawn move leaves none longer than ``wrap_ink_gap_px``."""
    lo, hi = sorted((int(path[a]), int(path[b])))
    return _longest_false_run(inked[lo : hi + 1, a : b + 1].any(axis=1))


def velocity_along(path: np.ndarray, a: int, b: int, direct: int, rows: int) -> float:
    """Rows per column the path moves the way of the move ``direct`` (its rows from ``a`` to ``b``), before ``a``
    and after ``b`` together: positive where the path was already moving that way (a drawn move), 0 standing still."""
    return float(np.sign(direct) * (_velocity(path, a, -1, rows) + _velocity(path, b, 1, rows)))


def _longest_false_run(flags: np.ndarray) -> int:
    idx = np.flatnonzero(np.concatenate([[True], flags, [True]]))
    return int(np.max(np.diff(idx)) - 1) if idx.size > 1 else int(flags.size)


def main_scale_level(observed_wraps: np.ndarray) -> int:
    """The wrap count that is the main scale when the calibration does not name the backup side.

    The image cannot say on which scale a trace starts: the main scale is the level the curve spends
    most of its length on, as a backup scale carries only excursions. (With the side named, see
    ``two_level_wraps``.)
    """
    if observed_wraps.size == 0:
        return 0
    levels, counts = np.unique(observed_wraps, return_counts=True)
    return int(levels[np.argmax(counts)])


