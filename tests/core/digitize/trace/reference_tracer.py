"""The NumPy tracers of d36c861, kept to hold the compiled ones (``core/digitize/trace/path_kernels.py``,
``group_kernels.py``) to their values: the Viterbi path of one curve (``path_search.viterbi_path``) and the joint
trace of a group (``group.trace_group``), verbatim but for their imports. Not part of the product: the tests
alone import it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from core.digitize.trace.group import GroupParams


def _dt_path(cost: np.ndarray, travel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact min_j cost[j] + |travel[i] − travel[j]| and its argmin, for a non-decreasing ``travel``.

    ``travel[i]`` is the cost of moving from row 0 to row i (a cumulative sum of per-row step costs), so
    ``|travel[i] − travel[j]|`` is the cost of moving between rows j and i along the column. Split at i: the
    min over j ≤ i is a running minimum of cost[j] − travel[j] (plus travel[i]), the min over j ≥ i the same
    from the other end. The running argmin is the latest index that set the running minimum, so ties go to
    the nearer source. With ``travel = λ·i`` this is the L1 distance transform. This is the Viterbi inner
    loop, once per depth column: a handful of vectorised scans.
    """
    n = cost.size
    j = np.arange(n)
    a = cost - travel
    pre = np.minimum.accumulate(a)
    pre_arg = np.maximum.accumulate(np.where(a == pre, j, 0))
    b = (cost + travel)[::-1]
    suf_rev = np.minimum.accumulate(b)
    suf_arg = (n - 1 - np.maximum.accumulate(np.where(b == suf_rev, j, 0)))[::-1]
    left = pre + travel
    right = suf_rev[::-1] - travel
    take_left = left <= right
    return np.where(take_left, left, right), np.where(take_left, pre_arg, suf_arg)


TRAVEL_BLOCK_COLS = 2048  # columns of travel cost held at once: 8 MB at 500 rows, not 200 MB for a 50,000-column log


def _travel_blocks(evidence: np.ndarray, params, block: int = TRAVEL_BLOCK_COLS, edges: tuple[int, int] = (0, 0)):
    """``travel_costs`` a block of columns at a time: (first column, rows × block float64). A whole tall
    track's travel in float64 was most of digitising's peak memory on the tallest shared scan (52,000
    columns); a column's travel needs only its own and its neighbours' evidence, so a block is computed
    from the block's columns and a halo as far as the support reaches."""
    import cv2

    rows, cols = evidence.shape
    reach = params.support_cols if params.support_cols > 1 else 0  # the dilation's reach along depth
    for c0 in range(0, cols, block):
        c1 = min(cols, c0 + block)
        # halo: the dilation's reach either side, plus the column before the first for its stroke
        h0, h1 = max(0, c0 - reach - 1), min(cols, c1 + reach)
        ev = evidence[:, h0:h1].astype(np.float32)
        # the stroke between a column and the one before it: both columns' evidence (the map's first column
        # has none before it; a halo's first column is only a predecessor)
        support = np.maximum(ev, np.concatenate([ev[:, :1], ev[:, :-1]], axis=1))
        if reach:
            support = cv2.dilate(support, np.ones((1, 2 * reach + 1), np.uint8), borderType=cv2.BORDER_REPLICATE)
        support = support[:, c0 - h0 : c1 - h0]
        row_ink = np.clip(support / params.threshold, 0.0, 1.0)
        inked = np.minimum(row_ink[:-1], row_ink[1:]) if rows > 1 else row_ink[:0]  # a step is inked when both rows are
        step = params.jump_cost + (params.gap_jump_cost - params.jump_cost) * (1.0 - inked)
        zone, arrive = edges
        if zone:  # a cyclic path's steps into an edge zone its ink reaches: along ink (``path_kernels._edge_steps``;
            # added in the fourteenth round, not d36c861's)
            z = min(zone, rows // 2)
            top = (row_ink[z : min(rows, z + arrive)] >= 1.0).any(axis=0)
            bottom = (row_ink[max(0, rows - z - arrive) : rows - z] >= 1.0).any(axis=0)
            step[:z, top] = params.jump_cost
            step[rows - z - 1 :, bottom] = params.jump_cost
        yield c0, np.concatenate([np.zeros((1, c1 - c0)), np.cumsum(step, axis=0, dtype=np.float64)], axis=0)


def viterbi_path(evidence: np.ndarray, params, cyclic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Best path through ``evidence`` (rows × columns): row per column and wrap steps per column."""
    from core.digitize.trace.path_search import edge_steps
    rows, cols = evidence.shape
    unary = -np.log(np.clip(evidence, params.eps, 1.0))
    back = np.zeros((cols, rows), np.int32)
    acc = unary[:, 0].astype(np.float64)
    ink_aware = params.gap_jump_cost > params.jump_cost
    blocks = _travel_blocks(evidence, params, edges=edge_steps(rows) if cyclic else (0, 0)) if ink_aware else None
    lin = params.jump_cost * np.arange(3 * rows if cyclic else rows, dtype=np.float64)
    block_start, block = 0, np.zeros((rows, 0))
    for c in range(1, cols):
        if not ink_aware:
            t = lin
        else:
            if c >= block_start + block.shape[1]:
                block_start, block = next(blocks)
            t = block[:, c - block_start]
            if cyclic:  # around the track edge: the pen jumps from one edge to the other, drawing nothing between
                span = t[-1] + params.jump_cost
                t = np.concatenate([t - span, t, t + span])
        if cyclic:
            tripled = np.concatenate([acc, acc, acc])
            val, arg = _dt_path(tripled, t)
            val, arg = val[rows : 2 * rows], arg[rows : 2 * rows] - rows
        else:
            val, arg = _dt_path(acc, t)
        back[c] = arg
        acc = val + unary[:, c]
        acc -= acc.min()  # keep the running cost small: 12,800 columns of −log p would cost precision
    path = np.zeros(cols, np.int64)
    wrap_step = np.zeros(cols, np.int64)
    path[-1] = int(np.argmin(acc))
    for c in range(cols - 1, 0, -1):
        prev = int(back[c, path[c]])
        wrap_step[c] = -(prev // rows)  # prev < 0: came from beyond the low edge, etc.
        path[c - 1] = prev % rows
    return path, wrap_step


@dataclass
class ColumnRuns:
    lo: np.ndarray  # first row
    hi: np.ndarray  # last row (inclusive)
    centre: np.ndarray  # evidence-weighted centre row
    peak: np.ndarray  # strongest evidence in the run
    strength: np.ndarray  # strongest grid-damped evidence in the run (``peak`` without a grid)


def column_runs(ev: np.ndarray, threshold: float, max_runs: int,
                damping: np.ndarray | None = None) -> list[ColumnRuns]:
    """Per column of ``ev`` (rows × columns), its runs of rows at or above ``threshold``, the ``max_runs``
    strongest (by summed evidence) in row order.

    ``damping`` (the grid's factor, same shape) weighs the runs without cutting them: runs are found, and
    their ``peak`` taken, on the evidence itself; their ``strength`` (what leaving one unexplained costs) and
    their rank on the damped evidence. So a grid line no curve takes costs little, and no curve is pulled
    onto one, while a curve that runs along a grid line for a stretch keeps its own evidence there.
    Thresholding the damped evidence instead cut each curve at every grid line it crosses, and a curve
    lying on an amplitude line became a run too weak to take: the second curve of the pair then rode the
    first one's stroke (a shared run is cheap, to let curves cross) and the first went untraced."""
    rows, cols = ev.shape
    on_t = (ev >= threshold).T  # (cols, rows): runs are read down each column
    edge = np.diff(np.pad(on_t, ((0, 0), (1, 1))).astype(np.int8), axis=1)  # (cols, rows + 1)
    sc, sr = np.nonzero(edge == 1)  # run starts, sorted by column then row
    _, er = np.nonzero(edge == -1)  # run ends (exclusive)
    # the on-pixels in (column, row) order: each run is a consecutive block of them, so sums and maxima per run
    # are reductions over blocks (no cumulative sums over the whole map)
    weighted = ev if damping is None else ev * damping
    vals = weighted.T[on_t].astype(np.float64)
    row_of = np.nonzero(on_t)[1]
    lengths = er - sr
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    if sc.size:
        mass = np.add.reduceat(vals, starts)
        centre = np.add.reduceat(vals * row_of, starts) / np.maximum(mass, 1e-9)
        strength = np.maximum.reduceat(vals, starts)
        peak = strength if damping is None else np.maximum.reduceat(ev.T[on_t].astype(np.float64), starts)
    else:
        mass = centre = strength = peak = np.zeros(0)
    # the max_runs strongest of each column, kept in row order: rank the runs within their column by mass
    by_mass = np.lexsort((-mass, sc))
    first = np.searchsorted(sc[by_mass], sc[by_mass], side="left")
    keep = np.zeros(sc.size, bool)
    keep[by_mass[np.arange(sc.size) - first < max_runs]] = True
    sc, lo, hi = sc[keep], sr[keep].astype(np.float64), er[keep].astype(np.float64) - 1.0
    centre, peak, strength = centre[keep], peak[keep], strength[keep]
    bounds = np.searchsorted(sc, np.arange(cols + 1))
    return [ColumnRuns(lo[a:b], hi[a:b], centre[a:b], peak[a:b], strength[a:b])
            for a, b in zip(bounds[:-1], bounds[1:])]


@dataclass
class _Table:
    """Every joint assignment of K curves to m runs (−1: a gap), and what depends on it alone."""

    options: np.ndarray  # (states, K) run index per curve, −1 for a gap
    seen: np.ndarray  # (states, K)
    shared: np.ndarray  # (states, K): the curve's run is also another curve's
    pairs: np.ndarray  # (states, K, K) curves i and j (i ≠ j) on one run
    taken: np.ndarray  # (states, m): the run is some curve's


def _table(m: int, k_n: int, cache: dict) -> _Table:
    if (m, k_n) not in cache:
        opt = np.array(list(itertools.product(range(-1, m), repeat=k_n)), np.int64).reshape(-1, k_n)
        seen = opt >= 0
        same = (opt[:, :, None] == opt[:, None, :]) & seen[:, :, None] & seen[:, None, :]
        same &= ~np.eye(k_n, dtype=bool)[None]
        taken = np.zeros((opt.shape[0], max(m, 1)), bool)
        for k in range(k_n):
            taken[seen[:, k], opt[seen[:, k], k]] = True
        cache[(m, k_n)] = _Table(opt, seen, same.any(2), same, taken[:, :m])
    return cache[(m, k_n)]


def _runs_apart(lo: np.ndarray, hi: np.ndarray, within: float) -> np.ndarray:
    """(m, m): runs of one column no more than ``within`` rows apart."""
    apart = np.maximum(lo[None, :] - hi[:, None], lo[:, None] - hi[None, :])
    return apart <= within


def trace_group(ev: np.ndarray, classes: list[int], params: GroupParams | None = None,
                damping: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint trace of K curves through one evidence map (rows × columns, the track's rows only);
    ``damping``: the grid's factor on it (``column_runs``).

    Returns (positions, observed, confidence), each (K, columns): the row of each curve per column (NaN
    where it is lost), whether a run was assigned to it there, and that run's strongest evidence."""
    p = params or GroupParams()
    rows, cols = ev.shape
    k_n = len(classes)
    # a run or two beyond the curves' count for noise and text; three curves keep one, so the joint states
    # stay (runs + 1)^K ≤ 125
    runs = column_runs(ev, p.threshold, min(p.max_runs, k_n + (2 if k_n <= 2 else 1)), damping)
    gap = np.array([p.gap_cost[min(max(c, 1), 3) - 1] for c in classes])[None, None, :]  # (1, 1, K)
    tables: dict = {}
    solid = np.array([c == 1 for c in classes])
    pair_cost = np.where(solid[:, None] & solid[None, :], p.share_solid_cost, p.share_cost)[None]  # (1, K, K)

    # per state: every curve's exit row (NaN: lost), velocity, gap length
    pos = np.full((1, k_n), np.nan)
    vel = np.zeros((1, k_n))
    gaps = np.full((1, k_n), p.max_gap_px + 1, np.int64)
    seen_at = np.full((1, k_n), np.nan)  # the row each curve was last seen at (NaN: never)
    acc = np.zeros(1)
    back: list[np.ndarray] = []  # per column: best previous state of each state
    chosen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per column and kept state: runs, shared, rows
    for c in range(cols):
        r = runs[c]
        m = r.lo.size
        t = _table(m, k_n, tables)
        j = np.where(t.seen, t.options, 0)  # (S_new, K)
        if m:
            lo, hi, ctr = r.lo[j][None], r.hi[j][None], r.centre[j][None]  # (1, S_new, K)
            weak = p.weak_run * -np.log(np.clip(r.peak[j], 1e-3, 1.0))[None]
        else:
            lo = hi = ctr = weak = np.zeros((1,) + j.shape)
        last = pos[:, None, :]  # (S_prev, 1, K)
        pred = (pos + vel)[:, None, :]
        lost = np.isnan(last)
        between = np.maximum(0.0, np.maximum(lo - last, last - hi))
        miss = np.minimum(np.maximum(0.0, np.maximum(lo - pred, pred - hi)), p.prediction_cap)
        since = np.nan_to_num(np.maximum(0.0, np.maximum(lo - seen_at[:, None, :], seen_at[:, None, :] - hi)))
        c_run = np.where(lost, p.reacquire + p.reacquire_per_px * since + weak,
                         p.continuity * between + p.prediction * miss + weak)
        per_curve = np.where(t.seen[None], c_run, np.where(lost, np.minimum(gap, p.lost_cost), gap))  # (S_prev, S_new, K)
        cost = acc[:, None] + per_curve.sum(2)
        strength = np.clip(r.strength, 0.0, 1.0)
        if m:  # a run this near a taken one is the same stroke, broken where grid lines or blur thin it
            near_taken = (t.taken.astype(np.float32) @ _runs_apart(r.lo, r.hi, p.stroke_px).astype(np.float32)) > 0
            unexplained = ((~(t.taken | near_taken)) * strength[None]).sum(1)
        else:
            unexplained = 0.0
        cost += ((t.pairs * pair_cost).sum((1, 2)) / 2.0 + p.unexplained * unexplained)[None]
        best = np.argmin(cost, axis=0)
        acc = cost[best, np.arange(best.size)]
        keep = np.argsort(acc, kind="stable")[: p.beam] if acc.size > p.beam else np.arange(acc.size)
        best, acc = best[keep], acc[keep] - acc[keep].min()
        opts, seen, shared = t.options[keep], t.seen[keep], t.shared[keep]
        # where each curve leaves this column, from its best previous state: a short run at its centre, a tall
        # one (a steep stroke) at the end away from where it came in, a shared run (a crossing) at the point
        # nearest its prediction
        last_b, pred_b = pos[best], (pos + vel)[best]  # (S_new, K)
        exit_ = _exits(last_b, pred_b, lo[0][keep], hi[0][keep], ctr[0][keep], shared, p.steep_px)
        npos = np.where(seen, exit_, pred_b)
        ngaps = np.where(seen, 0, gaps[best] + 1)
        moved = npos - last_b
        nvel = np.where(seen & ~np.isnan(last_b), p.momentum * vel[best] + (1 - p.momentum) * moved, vel[best])
        lost_now = ngaps > p.max_gap_px
        pos = np.where(lost_now, np.nan, npos)  # lost: taken up again anywhere, at a cost
        vel = np.where(lost_now, 0.0, np.nan_to_num(nvel))
        gaps = ngaps
        seen_at = np.where(seen, npos, seen_at[best])
        back.append(best)
        chosen.append((opts, shared, pos))
    return _backtrack(runs, chosen, back, int(np.argmin(acc)), k_n)


def _exits(last: np.ndarray, pred: np.ndarray, lo: np.ndarray, hi: np.ndarray, ctr: np.ndarray, shared: np.ndarray,
           steep_px: float) -> np.ndarray:
    """Where each curve leaves the run it takes in a column (states × K): a short run at its centre, a tall one
    (a steep stroke) at the end away from where the curve came in, a shared run (a crossing) at the point
    nearest the curve's prediction."""
    entry = np.clip(np.where(np.isnan(last), ctr, last), lo, hi)
    far_end = np.where(entry - lo < hi - entry, hi, lo)
    exit_ = np.where(hi - lo + 1.0 > steep_px, far_end, ctr)
    at_pred = np.clip(np.where(np.isnan(pred), ctr, pred), lo, hi)
    return np.where(shared, at_pred, exit_)


def _backtrack(runs: list, chosen: list, back: list, s: int, k_n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions, observed, confidence) of the K curves along the best path, from its last state ``s`` back."""
    cols = len(chosen)
    positions = np.full((k_n, cols), np.nan)
    observed = np.zeros((k_n, cols), bool)
    confidence = np.zeros((k_n, cols))
    for c in range(cols - 1, -1, -1):
        opts, shared, state_pos = chosen[c]
        positions[:, c] = state_pos[s]
        observed[:, c] = opts[s] >= 0
        r = runs[c]
        for k in range(k_n):
            j = opts[s, k]
            if j >= 0:
                confidence[k, c] = r.peak[j]
                # the point reported for a column: the run's centre, unless two curves share it (a crossing):
                # then each curve's own point in it
                if not shared[s, k]:
                    positions[k, c] = r.centre[j]
        s = int(back[c][s])
    return positions, observed, confidence
