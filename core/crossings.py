"""Keeping the identity of curves of one line style through their crossings.

Two curves drawn in the same line style in one track (two solid
resistivities, a repeat pass) share one evidence map. Traced one after the
other, each path follows *a* line everywhere, but where the two lines meet a
path is as happy to turn back along the other line as to go on along its
own: a first-order path (positions, jump costs) cannot tell a crossing from a
bounce, since both cost the same. The two paths together cover both curves,
piecewise, with their identities swapped after some meetings.

This is the second pass of a track-then-resolve-crossings tracer: find each
*meeting* of two paths (a run of columns where they lie within a few pixels
of each other), measure each path's slope just before and just after it,
and keep or swap the paths' tails after the meeting, whichever keeps the
slopes continuous (a pen does not reverse at the instant it meets another).
Chosen over a joint Viterbi over pairs of rows because that costs rows² states
per column (a 500-row track: 250,000) and, being first-order, would still
need the slope to tell a crossing from a bounce; the second pass is linear
in the log's length and reads the slope directly.

Which path is which curve at the top of the log is a convention, since the
image cannot say: the curves take the paths in calibration order from the
track's ``track[0]`` side (the first curve listed is the one nearer the
pixel of ``scale[0]`` where the log starts). A user can swap two traced
curves over a depth range afterwards (:func:`swap_range`).
"""

from __future__ import annotations

import numpy as np

from .runs import true_runs

MEET_PX = 6.0  # paths this close (px across) are meeting
LONGEST_MEETING = 40  # columns: curves that run together longer say nothing by their slopes at the ends
MARGIN = 0.3  # px per column: how much more continuous a swap must be than keeping
SLOPE_SPAN = 12  # columns each side of a meeting over which a slope is measured
SETTLE = 3  # columns skipped next to a meeting (the strokes merge there)


def _slope(pos: np.ndarray, a: int, b: int) -> float | None:
    """Least-squares slope (px per column) of ``pos`` over columns [a, b), NaN-free part only."""
    a, b = max(0, a), min(pos.size, b)
    if b - a < 3:
        return None
    x = np.arange(a, b, dtype=np.float64)
    y = pos[a:b]
    ok = np.isfinite(y)
    if ok.sum() < 3:
        return None
    return float(np.polyfit(x[ok], y[ok], 1)[0])


def meetings(p: np.ndarray, q: np.ndarray, meet_px: float = MEET_PX) -> list[tuple[int, int]]:
    """Column runs [a, b) where two paths lie within ``meet_px`` of each other."""
    close = np.abs(p - q) <= meet_px
    close &= np.isfinite(p) & np.isfinite(q)
    starts, stops = true_runs(close)
    return list(zip(starts.tolist(), stops.tolist()))


def resolve_pair(traces: list, i: int, j: int) -> int:
    """Swap the tails of traces ``i`` and ``j`` after each meeting where that keeps both slopes
    continuous (in place). Returns how many meetings were read as crossings."""
    swaps = 0
    for a, b in meetings(traces[i].position, traces[j].position):
        p, q = traces[i].position, traces[j].position
        sp = _slope(p, a - SETTLE - SLOPE_SPAN, a - SETTLE)
        sq = _slope(q, a - SETTLE - SLOPE_SPAN, a - SETTLE)
        tp = _slope(p, b + SETTLE, b + SETTLE + SLOPE_SPAN)
        tq = _slope(q, b + SETTLE, b + SETTLE + SLOPE_SPAN)
        if None in (sp, sq, tp, tq) or b - a > LONGEST_MEETING:
            continue  # at a gap, an end of the log, or a long run together: the slopes say nothing
        keep = abs(sp - tp) + abs(sq - tq)
        swap = abs(sp - tq) + abs(sq - tp)
        if swap + MARGIN < keep and swap < 0.5 * keep:
            mid = (a + b) // 2
            _swap_tails(traces[i], traces[j], mid)
            swaps += 1
    return swaps


def _swap_tails(t, u, start: int, stop: int | None = None) -> None:
    for name in ("position", "wraps", "confidence", "observed"):
        x, y = getattr(t, name), getattr(u, name)
        seg = slice(start, stop)
        tmp = x[seg].copy()
        x[seg] = y[seg]
        y[seg] = tmp


def order_at_top(traces: list, specs: list) -> None:
    """Assign the paths to the curves in calibration order from the ``track[0]`` side, at the first
    column where all are traced (in place: swaps whole traces' data)."""
    pos = np.stack([t.position for t in traces])
    both = np.flatnonzero(np.isfinite(pos).all(0))
    if both.size == 0:
        return
    col = int(both[0])
    sign = 1.0 if specs[0].track[1] >= specs[0].track[0] else -1.0
    order = np.argsort(sign * pos[:, col], kind="stable")  # nearest track[0] first
    data = [{n: getattr(traces[k], n).copy() for n in ("position", "wraps", "confidence", "observed")}
            for k in order]
    for t, d in zip(traces, data):
        for n, v in d.items():
            setattr(t, n, v)


def same_style_groups(specs: list) -> list[list[int]]:
    """Indices of the curves that share one line style and one track (two or more, none wrapping), in
    calibration order: the curves this module tells apart, and whose order names them (see above)."""
    groups: dict[tuple, list[int]] = {}
    for i, s in enumerate(specs):
        if not s.wrap:
            groups.setdefault((s.klass, s.track_lo, s.track_hi), []).append(i)
    return [idx for idx in groups.values() if len(idx) >= 2]


def share_crossings(traces: list, i: int, j: int, longest: int = 4 * LONGEST_MEETING) -> int:
    """Fill trace ``i``'s gaps that lie where it meets trace ``j`` with ``j``'s positions (in place).

    The curve traced second had the first one's stroke removed from its evidence, and with it their
    common pixels at a crossing: a gap, NULL though the curve is plainly there (under the other). A gap
    no longer than ``longest`` columns whose two ends both lie on ``j`` is such a crossing. Returns the
    columns filled."""
    p, q = traces[i].position, traces[j].position
    gap = ~np.isfinite(p)
    filled = 0
    for a, b in zip(*true_runs(gap)):
        if a == 0 or b >= p.size or b - a > longest or not np.isfinite(q[a - 1 : b + 1]).all():
            continue
        if abs(p[a - 1] - q[a - 1]) <= 2 * MEET_PX and abs(p[b] - q[b]) <= 2 * MEET_PX:
            p[a:b] = q[a:b]
            traces[i].wraps[a:b] = traces[j].wraps[a:b]
            filled += b - a
    return filled


def resolve_group(traces: list, specs: list) -> int:
    """Resolve the crossings within a group of same-style curves sharing one track (in place)."""
    if len(traces) < 2:
        return 0
    for i in range(len(traces)):
        for j in range(len(traces)):
            if i != j:
                share_crossings(traces, i, j)
    swaps = 0
    for i in range(len(traces)):
        for j in range(i + 1, len(traces)):
            swaps += resolve_pair(traces, i, j)
    order_at_top(traces, specs)
    return swaps


def swap_range(values: dict[str, np.ndarray], a: str, b: str, depth: np.ndarray, top: float, bottom: float) -> int:
    """Swap the values of curves ``a`` and ``b`` between two depths (inclusive), in place; the user's fix
    for a crossing the tracer read wrong. Returns the number of samples swapped; raises ValueError for
    an unknown curve or a range outside the log."""
    for name in (a, b):
        if name not in values:
            raise ValueError(f"no curve {name!r} in this result")
    if a == b:
        raise ValueError("choose two different curves to swap")
    lo, hi = sorted((float(top), float(bottom)))
    d0, d1 = float(np.min(depth)), float(np.max(depth))
    if hi < d0 or lo > d1:
        raise ValueError(f"the range {lo:g}–{hi:g} lies outside the log ({d0:g}–{d1:g})")
    sel = (depth >= lo) & (depth <= hi)
    tmp = values[a][sel].copy()
    values[a][sel] = values[b][sel]
    values[b][sel] = tmp
    return int(sel.sum())
