"""The Viterbi path of one curve in compiled code (numba): its travel costs per column and the recursion over all
of a track's columns in one call, for ``path_search.py``.

The recursion runs along depth, one column after the other, each column depending on the one before: nothing to
vectorise over columns. In NumPy each column cost a dozen array calls of a few hundred elements (the Python
overhead was most of the time: KGS's trace stage took 8–14 s on 2 cores, two thirds of it in the tracers' loops,
and on an H200 the tracer was two thirds of a scan's wall time). Here the same arithmetic runs as one loop.

The arithmetic is the NumPy tracer's own, operation for operation and in the same order (sums of a few terms
left to right, as NumPy reduces short rows), so ties between equal costs go the same way and the paths are the
same, not merely close: ``tests/core/digitize/trace/test_kernels.py`` holds them equal against the NumPy tracers
kept there. Apart from the group tracer's loops (``group_kernels.py``): the two share no code and no caller.

Compiled on first use and cached beside this file (``cache=True``; numba falls back to the user's cache
folder where this one is read-only): the first run on a machine pays a few seconds, later ones none.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def _min_plus_travel(cost, travel, lo, hi, val, arg, shift, pre, pre_at):
    """min_j cost[j] + |travel[i] − travel[j]| and its argmin for rows i in [lo, hi), written at i − lo into
    ``val`` and (argmin − ``shift``) into ``arg``; ``travel`` non-decreasing (``path_search._dt_path``).

    The running minimum from the top takes the latest row that reaches it (``<=``), the one from the bottom the
    earliest: ties go to the nearer source, and between the two sides to the upper one, as NumPy's did.
    ``pre``, ``pre_at``: room for the running minimum from the top (``hi`` long at least)."""
    n = cost.size
    best = np.inf
    best_at = 0
    for j in range(hi):
        a = cost[j] - travel[j]
        if a <= best:
            best = a
            best_at = j
        pre[j] = best
        pre_at[j] = best_at
    best = np.inf
    best_at = n - 1
    for j in range(n - 1, lo - 1, -1):
        b = cost[j] + travel[j]
        if b <= best:
            best = b
            best_at = j
        if j < hi:
            left = pre[j] + travel[j]
            right = best - travel[j]
            if left <= right:
                val[j - lo] = left
                arg[j - lo] = pre_at[j] - shift
            else:
                val[j - lo] = right
                arg[j - lo] = best_at - shift


@njit(cache=True, nogil=True, error_model="numpy")
def distance_transform(cost, travel):
    """Exact min_j cost[j] + |travel[i] − travel[j]| and its argmin for every row i (``travel``
    non-decreasing): the Viterbi inner step of one column."""
    n = cost.size
    val = np.empty(n)
    arg = np.empty(n, np.int64)
    _min_plus_travel(cost, travel, 0, n, val, arg, 0, np.empty(n), np.empty(n, np.int64))
    return val, arg


@njit(cache=True, nogil=True, error_model="numpy")
def _column_support(ev, i, reach, out):
    """The evidence a stroke into column ``i`` of ``ev`` (columns × rows, each column's rows contiguous) has, in
    float32 (``out``): its own and the column before's, taken over ``reach`` columns either side (a dashed or
    dotted pen's dashes), within the columns ``ev`` holds (its first and last stand for the map's edges)."""
    rows = out.size
    first = max(0, i - reach - 1)
    last = min(ev.shape[0] - 1, i + reach)
    for r in range(rows):
        out[r] = np.float32(ev[first, r])
    for j in range(first + 1, last + 1):
        for r in range(rows):
            out[r] = max(out[r], np.float32(ev[j, r]))


@njit(cache=True, nogil=True, error_model="numpy")
def _column_steps(support, thr, jump, dearer, ink, steps):
    """The cost of a step from row r − 1 to row r of a column (``steps[r]``, float32, r ≥ 1): ``jump`` where both
    rows are inked (``support`` at ``thr``), up to ``jump`` + ``dearer`` where neither is. Two loops without a
    carried dependence: they vectorise; their running sum in float64 is the column's travel."""
    one = np.float32(1.0)
    zero = np.float32(0.0)
    for r in range(ink.size):
        ink[r] = min(max(support[r] / thr, zero), one)
    for r in range(1, ink.size):
        steps[r] = jump + dearer * (one - min(ink[r - 1], ink[r]))


@njit(cache=True, nogil=True, error_model="numpy")
def _edge_steps(ink, steps, zone, arrive, jump):
    """A wrapping curve's steps into the track's edge zones (``zone`` rows at either edge) at ``jump`` (as along
    ink) where the column's ink reaches that zone, within ``arrive`` rows of it: a stroke that runs into the
    zone runs on to the edge and leaves by it (:func:`viterbi_block`)."""
    rows = ink.size
    z = min(zone, rows // 2)
    top = False
    for r in range(z, min(rows, z + arrive)):
        if ink[r] >= 1.0:
            top = True
            break
    bottom = False
    for r in range(max(0, rows - z - arrive), rows - z):
        if ink[r] >= 1.0:
            bottom = True
            break
    if top:
        for r in range(1, z + 1):
            steps[r] = jump
    if bottom:
        for r in range(rows - z, rows):
            steps[r] = jump


@njit(cache=True, nogil=True, error_model="numpy")
def _column_travel(steps, travel):
    """The cost of moving from row 0 to each row of a column (``travel``, float64): the steps summed a row at a
    time."""
    t = 0.0
    travel[0] = 0.0
    for r in range(1, travel.size):
        t = t + np.float64(steps[r])
        travel[r] = t


@njit(cache=True, nogil=True, error_model="numpy")
def travel_block(ev, offset, n, reach, threshold, jump_cost, gap_jump_cost):
    """The travel (``path_search.travel_costs``) of columns [``offset``, ``offset`` + n) of ``ev`` (columns × rows,
    a block of a track and the columns its support reaches), n × rows float64."""
    rows = ev.shape[1]
    out = np.empty((n, rows))
    support, ink, steps = np.empty(rows, np.float32), np.empty(rows, np.float32), np.empty(rows, np.float32)
    thr, jump, dearer = np.float32(threshold), np.float32(jump_cost), np.float32(gap_jump_cost - jump_cost)
    for k in range(n):
        _column_support(ev, offset + k, reach, support)
        _column_steps(support, thr, jump, dearer, ink, steps)
        _column_travel(steps, out[k])
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def viterbi_block(acc, logs, ev, offset, first, back, cyclic, reach, threshold, jump_cost, gap_jump_cost, edge_zone,
                  edge_arrive):
    """Advance the Viterbi recursion over a block of a track's columns, [``first``, ``first`` + n), in place:
    ``acc`` (rows, float64) is the running cost into each row of the column before, ``back`` (columns × rows)
    receives each column's best previous row (beyond the track's edges for a cyclic path: −rows.. or rows..).

    The maps are column by column (columns × rows, each column's rows contiguous: read down a column, a
    rows × columns map strides a whole row's bytes a step): ``logs`` (n × rows) the log of the block's evidence,
    floored (``path_search._log_evidence``), ``ev`` the evidence of the block from ``offset`` columns in, with the
    columns its support reaches either side (:func:`_column_support`). A step from one row to the next costs
    ``jump_cost`` where both rows are inked (support at ``threshold``), up to ``gap_jump_cost`` where neither is
    (:func:`_column_travel`). Column 0 has no column before it and is skipped.

    A cyclic path's steps into the ``edge_zone`` rows at either edge cost ``jump_cost`` where the column's ink
    reaches the zone (within ``edge_arrive`` rows: :func:`_edge_steps`; 0 rows: none). A curve that crosses
    the edge steeply is drawn up to its last sample before the edge and on from its first beyond it, so the
    rows between its strokes and the edges, up to a column's move, are paper (random_08's CALI, 80-90 rows a
    column, left 40-60 rows blank at either edge): priced as paper, the crossing cost the path more than
    standing still on the main scale and bridging, and it kept the main scale through 39 of the curve's 44
    changes of level. Within the zone the wrap judge counts the curve as at the edge (``wraps.edge_zone``).

    Per column, the distance transform of :func:`_min_plus_travel` and the settling of :func:`_settle` in two
    passes over the rows: down, the running minimum from the top; up, the running minimum from the bottom,
    the nearer of the two ways in and the column's new costs. A cyclic path takes the rows three times over
    (the track, and the track a span beyond either edge: ``path_search``'s tripled column), without writing
    them out."""
    rows = acc.size
    n = logs.shape[0]
    thr, jump, dearer = np.float32(threshold), np.float32(jump_cost), np.float32(gap_jump_cost - jump_cost)
    support, ink, steps = np.empty(rows, np.float32), np.empty(rows, np.float32), np.empty(rows, np.float32)
    travel = np.empty(rows)
    pre, suf = np.empty(rows), np.empty(rows)
    pre_at, suf_at = np.empty(rows, np.int64), np.empty(rows, np.int64)
    shift = rows if cyclic else 0  # the index in the tripled column of row 0 of the track
    for k in range(n):
        c = first + k
        if c == 0:
            continue
        _column_support(ev, offset + k, reach, support)
        _column_steps(support, thr, jump, dearer, ink, steps)
        if cyclic and edge_zone > 0:
            _edge_steps(ink, steps, edge_zone, edge_arrive, jump)
        log_p = logs[k]
        best = np.inf
        best_at = 0
        if cyclic:  # around the track edge: the pen jumps from one edge to the other, drawing nothing between
            _column_travel(steps, travel)
            span = travel[rows - 1] + jump_cost
            for r in range(rows):  # the track a span above its first row
                a = acc[r] - (travel[r] - span)
                if a <= best:
                    best = a
                    best_at = r
            for r in range(rows):
                a = acc[r] - travel[r]
                if a <= best:
                    best = a
                    best_at = shift + r
                pre[r] = best
                pre_at[r] = best_at
        else:  # the travel's running sum and the running minimum in one loop: two chains that overlap
            t = 0.0
            for r in range(rows):
                if r:
                    t = t + np.float64(steps[r])
                travel[r] = t
                a = acc[r] - t
                if a <= best:
                    best = a
                    best_at = r
                pre[r] = best
                pre_at[r] = best_at
            span = 0.0
        best = np.inf
        best_at = 0
        if cyclic:
            for r in range(rows - 1, -1, -1):  # the track a span below its last row
                b = acc[r] + (travel[r] + span)
                if b <= best:
                    best = b
                    best_at = 2 * rows + r
        for r in range(rows - 1, -1, -1):  # the running minimum from the bottom: its own loop, one short chain
            b = acc[r] + travel[r]
            if b <= best:
                best = b
                best_at = shift + r
            suf[r] = best
            suf_at[r] = best_at
        for r in range(rows):  # the nearer way in and the column's own cost: no carried dependence, vectorised
            left = pre[r] + travel[r]
            right = suf[r] - travel[r]
            up = left <= right
            back[c, r] = (pre_at[r] if up else suf_at[r]) - shift
            acc[r] = (left if up else right) - np.float64(log_p[r])  # plus −log p, the column's own cost
        low = _lowest(acc)
        for r in range(rows):
            acc[r] -= low


@njit(cache=True, nogil=True, error_model="numpy")
def _lowest(values):
    """min(values), in four interleaved runs (a minimum is exact in any order: four short chains, not one long)."""
    n = values.size
    m0 = m1 = m2 = m3 = np.inf
    r = 0
    while r + 4 <= n:
        m0 = min(m0, values[r])
        m1 = min(m1, values[r + 1])
        m2 = min(m2, values[r + 2])
        m3 = min(m3, values[r + 3])
        r += 4
    while r < n:
        m0 = min(m0, values[r])
        r += 1
    return min(min(m0, m1), min(m2, m3))


@njit(cache=True, nogil=True, error_model="numpy")
def viterbi_flat(acc, logs, first, back, cyclic, flat):
    """:func:`viterbi_block` with one travel for every column (``flat``: jump_cost × row, 3 × rows long for a
    cyclic path), the first tracer's flat cost of a step."""
    rows = acc.size
    val = np.empty(rows)
    arg = np.empty(rows, np.int64)
    cost3 = np.empty(3 * rows if cyclic else 0)
    pre = np.empty(3 * rows if cyclic else rows)
    pre_at = np.empty(3 * rows if cyclic else rows, np.int64)
    for k in range(logs.shape[0]):
        c = first + k
        if c == 0:
            continue
        if cyclic:
            for r in range(rows):
                cost3[r] = acc[r]
                cost3[rows + r] = acc[r]
                cost3[2 * rows + r] = acc[r]
            _min_plus_travel(cost3, flat, rows, 2 * rows, val, arg, rows, pre, pre_at)
        else:
            _min_plus_travel(acc, flat[:rows], 0, rows, val, arg, 0, pre, pre_at)
        _settle(acc, val, arg, logs[k], c, back)


@njit(cache=True, nogil=True, error_model="numpy")
def _settle(acc, val, arg, log_p, c, back):
    """Column ``c``'s running costs: the best way in plus its own evidence's (−``log_p``: the column's), less
    their minimum (12,800 columns of −log p would cost precision), and where each way in came from."""
    rows = acc.size
    low = np.inf
    for r in range(rows):
        back[c, r] = arg[r]
        acc[r] = val[r] - np.float64(log_p[r])
        low = min(low, acc[r])
    for r in range(rows):
        acc[r] -= low


@njit(cache=True, nogil=True, error_model="numpy")
def viterbi_backtrack(acc, back):
    """The best path back from the last column's cheapest row: row and wrap step per column."""
    cols, rows = back.shape
    path = np.zeros(cols, np.int64)
    wrap_step = np.zeros(cols, np.int64)
    best = 0
    for r in range(1, rows):
        if acc[r] < acc[best]:
            best = r
    path[cols - 1] = best
    for c in range(cols - 1, 0, -1):
        prev = np.int64(back[c, path[c]])
        q = prev // rows  # floor division: prev < 0 came from beyond the low edge, etc.
        wrap_step[c] = -q
        path[c - 1] = prev - q * rows
    return path, wrap_step
