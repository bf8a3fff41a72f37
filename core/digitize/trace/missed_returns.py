"""Returns from a backup scale the move judge (``core/digitize/trace/wraps.py``) did not take, taken from the ink.

A wrapping curve's level is decided at the moves between observed columns (:func:`wraps.resolve_wraps`). Two kinds of
return escape it: one the path cut short, running straight across from one steep stroke to the other where they
crossed, unseen (:func:`hidden_returns`), and one the judge called direct on the path's own motion while the path
stood still, the stroke coming in from the far edge seen (:func:`still_returns`). Either is taken only from the
backup scale, and only where no crossing seen later contradicts it (:func:`take_hidden_returns`,
:func:`take_still_returns`): a step away taken wrongly carries the rest of a log a scale off.
"""

from __future__ import annotations

import numpy as np

from core.digitize.trace.wraps import (
    edge_zone,
    move_ink_gap,
    no_move_rows,
    stroke_reach,
    strokes_reach_edges,
    two_level_wraps,
    velocity_along,
)


def hidden_returns(path: np.ndarray, inked: np.ndarray, observed: np.ndarray, taken: np.ndarray, returning: int,
                   max_gap_px: int, gap_px: int) -> np.ndarray:
    """Columns where a wrapping curve may have come back from its backup scale unseen by its path: between two
    neighbouring observed columns with unseen ones between (at most ``max_gap_px`` apart), where no crossing was
    taken (``taken``: :func:`resolve_wraps`' steps), the curve's own ink (``inked``) runs from the path's place
    before to the edge a return by ``returning`` leaves by and in from the other edge to its place after
    (:func:`strokes_reach_edges`, over gaps of up to ``gap_px`` rows: the longest a drawn move leaves,
    ``TraceParams.wrap_ink_gap_px``; a dotted pen's steep stroke leaves 7-8). The column returned is the first
    unseen one.

    A return drawn in two steep strokes that cross each other can be cut short by the path: ``dense``'s real-shapes
    log 0's CALI came down its backup in a stroke to the track's row-0 edge and in from the far edge in another,
    and the path ran straight across from the one stroke to the other where they crossed, unseen for 7 columns (a
    depth line among them); the move was no move, the return was never judged, and the rest of the log (24 %) read a
    whole scale up at confidence 0.97-1.00. Only a return is taken on this evidence, and only from the backup scale
    (``rules/curve.py``): a step away taken wrongly carries the rest of a log a scale off (``wraps.resolve_wraps``)."""
    out = []
    if not returning:
        return np.zeros(0, np.int64)
    obs = np.flatnonzero(observed)
    for a, b in zip(obs[:-1], obs[1:]):
        if b - a < 2 or b - a > max_gap_px + 1 or taken[a + 1 : b + 1].any():
            continue
        if strokes_reach_edges(inked, int(a), int(b), path[a], path[b], returning, gap_px):
            out.append(int(a) + 1)
    return np.asarray(out, np.int64)


def take_hidden_returns(wrap_step: np.ndarray, candidates: np.ndarray, backup: str
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`two_level_wraps` with the returns :func:`hidden_returns` found (``candidates``, columns) taken where the
    curve is on its backup scale there and no crossing was taken at the column: the wrap steps, the levels and the
    columns whose level is uncertain. A candidate while on the main scale says nothing (a curve by the edge beside
    its own steep strokes), so it is no crossing and no misread; nor does one inside a stretch a later return
    pins (taking it would make that seen return a misread): on the fit's 80 logs (``confidence_fit.FIT_SEED``) the
    only two candidates taken inside such stretches were both wrong (random_13's RHOB: 56 columns of its backup read
    on the main scale), and with this rule no value there changes."""
    level, unsure = two_level_wraps(wrap_step, backup)
    return _take_returns(wrap_step, level, unsure, candidates, backup, entry_only=False)


STILL_ROWS_PER_COL = 1.0  # a path moving no more than this, on average either side of a move, stood still before it
ENTRY_GAP_PX = 48  # breaks a stroke read in pieces may have on its way in from the edge (``still_returns``)


def still_returns(path: np.ndarray, inked: np.ndarray, observed: np.ndarray, taken: np.ndarray, returning: int,
                  params) -> np.ndarray:
    """Columns where a wrapping curve came back from its backup scale though the move judge called the move direct
    on the path's own motion while the path stood still: between two neighbouring observed columns (at most
    ``params.max_gap_px`` apart) where no crossing was taken (``taken``: :func:`resolve_wraps`' steps), a move whose
    way round is a return by ``returning``, whose ink gap rules out a drawn move (more than ``wrap_ink_gap_px`` rows
    without ink, up to ``surely_wrap``), with the path moving along it by at most :data:`STILL_ROWS_PER_COL` a column
    on average either side, and the stroke it arrives on running in from the edge a return enters from (in the
    move's columns, over breaks of up to :data:`ENTRY_GAP_PX` rows: a network reads a stroke steeper than a row can
    place in pieces). The column returned is the first after the move's start.

    The velocity's "direct" (a steep stretch whose ink fell in dash gaps) needs a stroke to carry: a path moving a
    row or two a column against a move of 44-68 rows carries none, and the move is then the shorter way round only
    by default. The leave is not asked for: it is the side these moves lack (random_06's SPHI went out under a depth
    line; dotted_fax_10's PEF had no ink toward its edge in the move's columns at any break), so only a return is
    taken on this evidence, and only from the backup scale (:func:`take_still_returns`). On the fit's 80 logs and the
    first 12 held-out logs of each family and draw, 8 moves are such returns (of 67 the velocity called direct with
    the path still); the trace had the curve on its backup scale at 5 (random_06's SPHI twice in each draw, the fit's
    log_decades_03 PEF), and the truth was on the main scale after each. A bound of 4 rows a column (with the moves
    under depth lines) also took random_00's DT on its fast strokes: 47 more samples confidently wrong."""
    rows, cols = inked.shape
    if not returning:
        return np.zeros(0, np.int64)
    surely = no_move_rows(params, rows)
    zone = edge_zone(rows)
    out = []
    obs = np.flatnonzero(observed)
    for a, b in zip(obs[:-1], obs[1:]):
        a, b = int(a), int(b)
        if b - a > params.max_gap_px + 1 or taken[a + 1 : b + 1].any():
            continue
        direct = int(path[b]) - int(path[a])
        if abs(direct) <= params.wrap_min_jump_px or (1 if direct < 0 else -1) != returning:
            continue
        gap = move_ink_gap(inked, path, a, b)
        if not params.wrap_ink_gap_px < gap <= surely:
            continue
        along = velocity_along(path, a, b, direct, rows)
        if not 0 < along <= 2 * STILL_ROWS_PER_COL:  # against the move the judge calls it a wrap already
            continue
        enter = inked[:, a + 1 : min(cols, b + 3)].any(axis=1)
        reach = stroke_reach(enter, int(path[b]), -returning, ENTRY_GAP_PX)
        if (reach <= zone) if returning > 0 else (reach >= rows - 1 - zone):
            out.append(a + 1)
    return np.asarray(out, np.int64)


def take_still_returns(wrap_step: np.ndarray, level: np.ndarray, unsure: np.ndarray, candidates: np.ndarray,
                       backup: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`take_hidden_returns`' result (``wrap_step``, ``level``, ``unsure``) with the returns :func:`still_returns`
    found (``candidates``, columns) taken where the curve is on its backup scale there and no crossing was taken at
    the column: the wrap steps, the levels and the columns whose level is uncertain.

    The entry alone says where the curve is after the move, not since when: a taken one keeps every doubt the levels
    had (measured where the doubt was lifted: random_00's DT, its return under a depth line taken, read the stretch
    before it, and one after it with unseen excursions to its backup scale, confidently: +80 samples wrong; the fit's
    log_decades_03 PEF, back at column 1,007, reads r 0.77 where it read -0.12, still doubted). Where a crossing seen
    later no longer fits (a stretch that return pins), the return is not taken, but the level from it to the next
    crossing is in doubt: random_06's SPHI came back at column 123 (its entry in pieces 39 rows apart, the leave under
    a depth line), left again unseen at 172-176 and came back seen at 192; 49 columns read a scale off at confidence
    0.9-1.0 are doubted (260 -> 190 samples confidently wrong)."""
    return _take_returns(wrap_step, level, unsure, candidates, backup, entry_only=True)


def _take_returns(wrap_step: np.ndarray, level: np.ndarray, unsure: np.ndarray, candidates: np.ndarray, backup: str,
                  entry_only: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The returns at ``candidates`` taken into the levels (``wrap_step``, ``level``, ``unsure``) where the curve is
    on its backup scale there, no crossing was taken at the column and no crossing seen later stops fitting (the
    stretch was pinned by it). ``entry_only``: the return was seen by its entry alone (:func:`take_still_returns`),
    so a taken one keeps every doubt the levels had, and one a later crossing pins leaves the level from it to the
    next crossing in doubt; otherwise the levels' doubt is recomputed with it (:func:`take_hidden_returns`)."""
    wrap_step, unsure = wrap_step.copy(), unsure.copy()
    back = -1 if backup == "high" else 1
    for c in candidates:
        if level[c - 1] == 0 or wrap_step[c] != 0:
            continue
        wrap_step[c] = back
        with_level, with_unsure = two_level_wraps(wrap_step, backup)
        if (with_unsure & ~unsure).any():  # a crossing seen later no longer fits: the stretch was pinned by it
            wrap_step[c] = 0
            if entry_only:
                nxt = np.flatnonzero(wrap_step[c:])
                unsure[c : c + int(nxt[0]) if nxt.size else wrap_step.size] = True
            continue
        level, unsure = with_level, (with_unsure | unsure) if entry_only else with_unsure
    return wrap_step, level, unsure
