"""The Viterbi path of one curve through its track's evidence: the dynamic programme and its travel costs.

Per depth column, the cost of the path into each row is the best of every row of the column before plus the
cost of moving across (``travel_costs``: cheap along the curve's own ink, dearer across paper or a grid line),
computed exactly by a distance transform in a handful of vectorised scans a column (``_dt_path``). A cyclic
path (a curve with a backup scale) may leave at one edge of the track and come in at the other.

All maps are canonical: rows across the tracks, columns along depth.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from core.digitize.trace.params import TraceParams


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


def _dt_l1(cost: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact L1 distance transform, min_j cost[j] + lam·|i − j|, and its argmin."""
    return _dt_path(cost, lam * np.arange(cost.size, dtype=np.float64))


def travel_costs(evidence: np.ndarray, params: TraceParams) -> np.ndarray:
    """Per column, the cumulative cost of moving across the rows (rows × columns, float64).

    A curve that moves far between two depth columns draws the rows in between: a steep stretch is ink
    along its way. So a step from one row to the next costs ``jump_cost`` where the curve's evidence (in
    this column or the one before, the two the stroke joins) says the curve is there, and up to
    ``gap_jump_cost`` where it is paper or a grid line (damped evidence): the path no longer leaves its
    curve along a depth line or across the paper for a stretch of better evidence elsewhere and comes back
    (the excursions the first tracer made on log-decade and dense prints), while a resistivity spike drawn
    in ink still costs what it did. A dashed or dotted curve's steep stretch is ink in its dashes only, so
    its support is taken over ``broken_support_cols`` columns either side. The whole map at once: for a
    look at it; the tracer takes it a block of columns at a time (``_travel_blocks``)."""
    return np.concatenate([block for _, block in _travel_blocks(evidence, params, evidence.shape[1])], axis=1)


TRAVEL_BLOCK_COLS = 2048  # columns of travel cost held at once: 8 MB at 500 rows, not 200 MB for a 50,000-column log


def _travel_blocks(evidence: np.ndarray, params: TraceParams, block: int = TRAVEL_BLOCK_COLS):
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
        inked = np.clip(support / params.threshold, 0.0, 1.0)
        inked = np.minimum(inked[:-1], inked[1:]) if rows > 1 else inked[:0]  # a step is inked when both rows are
        step = params.jump_cost + (params.gap_jump_cost - params.jump_cost) * (1.0 - inked)
        yield c0, np.concatenate([np.zeros((1, c1 - c0)), np.cumsum(step, axis=0, dtype=np.float64)], axis=0)


def viterbi_path(evidence: np.ndarray, params: TraceParams, cyclic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Best path through ``evidence`` (rows × columns): row per column and wrap steps per column."""
    rows, cols = evidence.shape
    unary = -np.log(np.clip(evidence, params.eps, 1.0))
    back = np.zeros((cols, rows), np.int32)
    acc = unary[:, 0].astype(np.float64)
    ink_aware = params.gap_jump_cost > params.jump_cost
    blocks = _travel_blocks(evidence, params) if ink_aware else None
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
