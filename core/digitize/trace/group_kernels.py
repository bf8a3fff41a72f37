"""The joint tracer of a group of curves in compiled code (numba): the curves of one line style in one track
traced together over all the track's columns in one call, and the runs of ink it chooses among, for ``group.py``.

Like one curve's Viterbi path (``path_kernels.py``, apart: the two share no code and no caller), the recursion runs
along depth, each column depending on the one before, and NumPy spent most of its time in Python overhead, a dozen
small array calls a column. The arithmetic is the NumPy tracer's own, operation for operation and in the same order
(the state tables' pair costs and the runs' ``−log`` precomputed by NumPy itself), so ties between equal costs go
the same way and the joint traces are the same, not merely close: ``tests/core/digitize/trace/test_kernels.py``
holds them equal against the NumPy tracers kept there.

Compiled on first use and cached beside this file (``cache=True``; numba falls back to the user's cache
folder where this one is read-only): the first run on a machine pays a few seconds, later ones none.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


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
