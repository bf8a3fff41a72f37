"""The tracers' inner loops in compiled code (numba): the Viterbi recursion of one curve and the joint tracer of
a group of curves, one call for all of a track's columns.

Both recursions run along depth, one column after the other, each column depending on the one before: nothing
to vectorise over columns. In NumPy each column cost a dozen array calls of a few hundred elements (the Python
overhead was most of the time: KGS's trace stage took 8–14 s on 2 cores, two thirds of it in these loops, and
on an H200 the tracer was two thirds of a scan's wall time). Here the same arithmetic runs as one loop.

The arithmetic is the NumPy tracers' own, operation for operation and in the same order (sums of a few terms
left to right, as NumPy reduces short rows; the state tables' pair costs and the runs' ``−log`` precomputed by
NumPy itself), so ties between equal costs go the same way and the paths are the same, not merely close:
``tests/core/digitize/trace/test_kernels.py`` holds them equal against the NumPy tracers kept there.

Compiled on first use and cached beside this file (``cache=True``; numba falls back to the user's cache
folder where this one is read-only): the first run on a machine pays a few seconds, later ones none.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# -- one curve: the Viterbi path and its travel costs ------------------------------------------------------


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
def viterbi_block(acc, logs, ev, offset, first, back, cyclic, reach, threshold, jump_cost, gap_jump_cost):
    """Advance the Viterbi recursion over a block of a track's columns, [``first``, ``first`` + n), in place:
    ``acc`` (rows, float64) is the running cost into each row of the column before, ``back`` (columns × rows)
    receives each column's best previous row (beyond the track's edges for a cyclic path: −rows.. or rows..).

    The maps are column by column (columns × rows, each column's rows contiguous: read down a column, a
    rows × columns map strides a whole row's bytes a step): ``logs`` (n × rows) the log of the block's evidence,
    floored (``path_search._log_evidence``), ``ev`` the evidence of the block from ``offset`` columns in, with the
    columns its support reaches either side (:func:`_column_support`). A step from one row to the next costs
    ``jump_cost`` where both rows are inked (support at ``threshold``), up to ``gap_jump_cost`` where neither is
    (:func:`_column_travel`). Column 0 has no column before it and is skipped.

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


# -- the curves of one line style in one track, jointly (``group.py``) --------------------------------------


@njit(cache=True, nogil=True, error_model="numpy")
def on_pixels(ev, damping, damped, threshold):
    """The pixels of ``ev`` (rows × columns) at or above ``threshold`` (of ``ev``'s dtype), in (column, row) order,
    and its runs of them down each column: (values: ev × damping as NumPy multiplies them, in float64 — ``ev``
    alone where not ``damped`` —, ev in float64, row of each, and per run, in (column, row) order, its column,
    first row and end row (exclusive)). What ``group._runs`` took from the transposed map in NumPy (a transposed
    boolean mask, its padding and differences, two gathers through it: 0.2 s of KGS's 0.25 s group tracer),
    here in two passes along the map's rows with each column's state beside them."""
    rows, cols = ev.shape
    count = np.zeros(cols, np.int64)
    runs = np.zeros(cols, np.int64)
    above = np.zeros(cols, np.bool_)
    for r in range(rows):
        for c in range(cols):
            on = ev[r, c] >= threshold
            count[c] += on
            runs[c] += on and not above[c]
            above[c] = on
    fill = np.zeros(cols, np.int64)
    run_fill = np.zeros(cols, np.int64)
    for c in range(1, cols):
        fill[c] = fill[c - 1] + count[c - 1]
        run_fill[c] = run_fill[c - 1] + runs[c - 1]
    total = fill[cols - 1] + count[cols - 1] if cols else 0
    n_runs = run_fill[cols - 1] + runs[cols - 1] if cols else 0
    values = np.empty(total)
    peaks = np.empty(total)
    row_of = np.empty(total, np.int64)
    run_col = np.empty(n_runs, np.int64)
    run_start = np.empty(n_runs, np.int64)
    run_end = np.empty(n_runs, np.int64)
    above[:] = False
    for r in range(rows):
        for c in range(cols):
            on = ev[r, c] >= threshold
            if on:
                i = fill[c]
                fill[c] += 1
                values[i] = np.float64(ev[r, c] * damping[r, c]) if damped else np.float64(ev[r, c])
                peaks[i] = np.float64(ev[r, c])
                row_of[i] = r
                if not above[c]:
                    j = run_fill[c]
                    run_fill[c] += 1
                    run_col[j] = c
                    run_start[j] = r
            elif above[c]:
                run_end[run_fill[c] - 1] = r
            above[c] = on
    for c in range(cols):
        if above[c]:
            run_end[run_fill[c] - 1] = rows
    return values, peaks, row_of, run_col, run_start, run_end


@njit(cache=True, nogil=True, error_model="numpy")
def _clip(x, lo, hi):
    return min(max(x, lo), hi)


@njit(cache=True, nogil=True, error_model="numpy")
def group_viterbi(run_start, lo_r, hi_r, ctr_r, peak_r, weak_r, strength_r,
                  t_start, t_states, t_options, t_shared, t_taken, t_pair,
                  gap, continuity, prediction, prediction_cap, momentum, unexplained_cost, stroke_px, lost_cost,
                  reacquire, reacquire_per_px, max_gap_px, beam, steep_px):
    """The joint Viterbi of ``group.trace_group`` over every column; returns (positions, observed, confidence),
    each (K, columns).

    The runs of all columns lie concatenated (``run_start``: column c's are [run_start[c], run_start[c + 1]));
    ``weak_r`` is each run's ``weak_run · −log(peak)``. The joint-state tables of a column with m runs are rows
    [t_start[m], t_start[m] + t_states[m]) of ``t_options`` (run per curve, −1 a gap), ``t_shared``,
    ``t_taken`` (run taken by some curve, m columns of ``max_runs``) and ``t_pair`` (the pair costs of the state,
    summed by NumPy). ``gap``: per curve, the cost of a column unseen."""
    cols = run_start.size - 1
    k_n = gap.size
    max_runs = t_taken.shape[1]
    max_states = 0
    for m in range(t_states.size):
        max_states = max(max_states, t_states[m])
    keep_n = min(beam, max_states)
    # per column, per kept state: its table row, best previous kept state, every curve's row (NaN: lost)
    chosen = np.empty((cols, keep_n), np.int64)
    back = np.empty((cols, keep_n), np.int64)
    chosen_pos = np.empty((cols, keep_n, k_n))
    kept = np.zeros(cols, np.int64)
    # the previous column's kept states
    n_prev = 1
    pos = np.full((keep_n, k_n), np.nan)
    vel = np.zeros((keep_n, k_n))
    gaps = np.full((keep_n, k_n), max_gap_px + 1, np.int64)
    seen_at = np.full((keep_n, k_n), np.nan)
    acc = np.zeros(keep_n)
    npos_all = np.empty((keep_n, k_n))
    nvel_all = np.empty((keep_n, k_n))
    ngaps_all = np.empty((keep_n, k_n), np.int64)
    nseen_all = np.empty((keep_n, k_n))
    cost_best = np.empty(max_states)
    best_prev = np.empty(max_states, np.int64)
    near = np.zeros(max_runs, np.bool_)
    unexplained = np.zeros(max_states)
    per_curve = np.empty(k_n)
    for c in range(cols):
        r0 = run_start[c]
        m = run_start[c + 1] - r0
        s0 = t_start[m]
        n_new = t_states[m]
        # what leaving the strong runs no curve takes costs, per new state
        for s in range(n_new):
            total = 0.0
            if m:
                for j in range(m):
                    near[j] = False
                for i in range(m):
                    if t_taken[s0 + s, i]:
                        for j in range(m):
                            apart = max(lo_r[r0 + j] - hi_r[r0 + i], lo_r[r0 + i] - hi_r[r0 + j])
                            if apart <= stroke_px:
                                near[j] = True
                for j in range(m):
                    term = _clip(strength_r[r0 + j], 0.0, 1.0) if not (t_taken[s0 + s, j] or near[j]) else 0.0
                    total = term if j == 0 else total + term
            unexplained[s] = total
        # the best previous state of each new one
        for s in range(n_new):
            row = s0 + s
            extra = t_pair[row] + unexplained_cost * unexplained[s]
            best_cost = np.inf
            best_at = 0
            for q in range(n_prev):
                for k in range(k_n):
                    j = t_options[row, k]
                    last = pos[q, k]
                    lost = math.isnan(last)
                    if j >= 0:
                        lo = lo_r[r0 + j]
                        hi = hi_r[r0 + j]
                        weak = weak_r[r0 + j]
                        if lost:
                            since = 0.0
                            if not math.isnan(seen_at[q, k]):
                                since = max(0.0, max(lo - seen_at[q, k], seen_at[q, k] - hi))
                            per_curve[k] = reacquire + reacquire_per_px * since + weak
                        else:
                            pred = last + vel[q, k]
                            between = max(0.0, max(lo - last, last - hi))
                            miss = min(max(0.0, max(lo - pred, pred - hi)), prediction_cap)
                            per_curve[k] = continuity * between + prediction * miss + weak
                    else:
                        per_curve[k] = min(gap[k], lost_cost) if lost else gap[k]
                summed = per_curve[0]
                for k in range(1, k_n):
                    summed += per_curve[k]
                cost = acc[q] + summed + extra
                if cost < best_cost:
                    best_cost = cost
                    best_at = q
            cost_best[s] = best_cost
            best_prev[s] = best_at
        # the cheapest ``beam`` new states, in order of cost (ties in table order)
        if n_new > beam:
            order = np.argsort(cost_best[:n_new], kind="mergesort")[:beam]
        else:
            order = np.arange(n_new)
        n_keep = order.size
        low = np.inf
        for i in range(n_keep):
            low = min(low, cost_best[order[i]])
        for i in range(n_keep):
            s = order[i]
            row = s0 + s
            q = best_prev[s]
            for k in range(k_n):
                j = t_options[row, k]
                last = pos[q, k]
                pred = last + vel[q, k]
                if j >= 0:
                    lo = lo_r[r0 + j]
                    hi = hi_r[r0 + j]
                    ctr = ctr_r[r0 + j]
                    if t_shared[row, k]:  # a crossing: the point of the run nearest the curve's prediction
                        exit_ = _clip(ctr if math.isnan(pred) else pred, lo, hi)
                    elif hi - lo + 1.0 > steep_px:  # a steep stroke: the end away from where the curve came in
                        entry = _clip(ctr if math.isnan(last) else last, lo, hi)
                        exit_ = hi if entry - lo < hi - entry else lo
                    else:
                        exit_ = ctr
                    npos = exit_
                    ngaps = 0
                else:
                    npos = pred
                    ngaps = gaps[q, k] + 1
                if j >= 0 and not math.isnan(last):
                    nvel = momentum * vel[q, k] + (1 - momentum) * (npos - last)
                else:
                    nvel = vel[q, k]
                if ngaps > max_gap_px:  # lost: taken up again anywhere, at a cost
                    npos_all[i, k] = np.nan
                    nvel_all[i, k] = 0.0
                else:
                    npos_all[i, k] = npos
                    nvel_all[i, k] = 0.0 if math.isnan(nvel) else nvel
                ngaps_all[i, k] = ngaps
                nseen_all[i, k] = npos if j >= 0 else seen_at[q, k]
            chosen[c, i] = row
            back[c, i] = q
            for k in range(k_n):
                chosen_pos[c, i, k] = npos_all[i, k]
        for i in range(n_keep):
            acc[i] = cost_best[order[i]] - low
            for k in range(k_n):
                pos[i, k] = npos_all[i, k]
                vel[i, k] = nvel_all[i, k]
                gaps[i, k] = ngaps_all[i, k]
                seen_at[i, k] = nseen_all[i, k]
        kept[c] = n_keep
        n_prev = n_keep
    # back from the cheapest last state
    positions = np.full((k_n, cols), np.nan)
    observed = np.zeros((k_n, cols), np.bool_)
    confidence = np.zeros((k_n, cols))
    s = 0
    for i in range(1, n_prev):
        if acc[i] < acc[s]:
            s = i
    for c in range(cols - 1, -1, -1):
        row = chosen[c, s]
        r0 = run_start[c]
        for k in range(k_n):
            positions[k, c] = chosen_pos[c, s, k]
            j = t_options[row, k]
            if j >= 0:
                observed[k, c] = True
                confidence[k, c] = peak_r[r0 + j]
                # the point reported for a column: the run's centre, unless two curves share it (a crossing):
                # then each curve's own point in it
                if not t_shared[row, k]:
                    positions[k, c] = ctr_r[r0 + j]
        s = back[c, s]
    return positions, observed, confidence
