"""The Viterbi path of one curve through its track's evidence: the dynamic programme and its travel costs.

Per depth column, the cost of the path into each row is the best of every row of the column before plus the
cost of moving across (``travel_costs``: cheap along the curve's own ink, dearer across paper or a grid line),
computed exactly by a distance transform in two scans a column (``_dt_path``). A cyclic path (a curve with a
backup scale) may leave at one edge of the track and come in at the other. The recursion over the columns runs
compiled (``core/digitize/trace/path_kernels.py``); the step costs are computed here, a block of columns at a time.

All maps are canonical: rows across the tracks, columns along depth.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.digitize.trace import path_kernels
from core.digitize.trace.wraps import RUN_GAP_PX, edge_zone

if TYPE_CHECKING:
    from core.digitize.trace.params import TraceParams


def _dt_path(cost: np.ndarray, travel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact min_j cost[j] + |travel[i] − travel[j]| and its argmin, for a non-decreasing ``travel``.

    ``travel[i]`` is the cost of moving from row 0 to row i (a cumulative sum of per-row step costs), so
    ``|travel[i] − travel[j]|`` is the cost of moving between rows j and i along the column. Split at i: the
    min over j ≤ i is a running minimum of cost[j] − travel[j] (plus travel[i]), the min over j ≥ i the same
    from the other end. The running argmin is the latest index that set the running minimum, so ties go to
    the nearer source. With ``travel = λ·i`` this is the L1 distance transform. This is the Viterbi inner
    step, once per depth column (``path_kernels.distance_transform``; the recursion runs it inside its own loop)."""
    return path_kernels.distance_transform(np.ascontiguousarray(cost, np.float64),
                                           np.ascontiguousarray(travel, np.float64))


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
    look at it; the tracer computes a column's as it reaches it (``path_kernels.viterbi_block``), from the same
    code (``path_kernels.travel_block``)."""
    out = [path_kernels.travel_block(cols, offset, n, _reach(params), float(params.threshold), float(params.jump_cost),
                                float(params.gap_jump_cost)).T
           for _, n, offset, cols in _column_blocks(evidence, params, TRAVEL_BLOCK_COLS)]
    return np.concatenate(out, axis=1) if out else np.zeros(evidence.shape)


TRAVEL_BLOCK_COLS = 2048  # columns turned column by column at once: 16 MB at 1,000 rows, not a 50,000-column log's


def _reach(params: TraceParams) -> int:
    """Columns either side whose evidence supports a steep move (0: the column and the one before only)."""
    return params.support_cols if params.support_cols > 1 else 0


def _column_blocks(evidence: np.ndarray, params: TraceParams, block: int):
    """The evidence a block of columns at a time, column by column (each column's rows contiguous: the tracer
    reads down a column), with the columns either side that its travel costs reach (the support's reach, and
    the column before the first for its stroke): (first column, columns in the block, the block's first column
    in the array, the array). A column's travel needs only its own and its neighbours' evidence, so a tall
    track (52,000 columns on the tallest shared scan) is never turned, nor costed, whole."""
    rows, cols = evidence.shape
    reach = _reach(params) if params.gap_jump_cost > params.jump_cost else 0
    for c0 in range(0, cols, block):
        c1 = min(cols, c0 + block)
        h0, h1 = max(0, c0 - reach - 1), min(cols, c1 + reach)
        yield c0, c1 - c0, c0 - h0, np.ascontiguousarray(np.asarray(evidence[:, h0:h1]).T)


def _log_evidence(columns: np.ndarray, eps: float) -> np.ndarray:
    """log of the evidence floored at ``eps`` (a copy), in the evidence's own precision as the tracer always took
    it (float64 for any but float32): NumPy's logarithm, whose last bits the paths' ties depend on."""
    dtype = columns.dtype if columns.dtype in (np.float32, np.float64) else np.float64
    out = np.clip(columns, eps, 1.0).astype(dtype, copy=False)
    return np.log(out, out=out)


def edge_steps(rows: int) -> tuple[int, int]:
    """The rows at either edge of a track whose steps a cyclic path takes at ``jump_cost`` where a stroke reaches
    them, and how near it must come (``path_kernels._edge_steps``): the wrap judge's edge zone, within which it
    counts a curve as at the edge (``wraps.edge_zone``), and a thin stroke's break (``wraps.RUN_GAP_PX``), over
    which the judge follows a stroke to the edge (``wraps.strokes_reach_edges``). Without the test of the
    strokes (every edge zone along ink) the path hopped between the edges of a dashed caliper lying near one of
    them (log_decades_07's CALI of the real shapes: 58 → 207 samples confidently wrong); with the strokes within
    half the zone, 26 (docs/accuracy.md, the fourteenth round)."""
    return int(edge_zone(rows)), RUN_GAP_PX


def viterbi_path(evidence: np.ndarray, params: TraceParams, cyclic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Best path through ``evidence`` (rows × columns): row per column and wrap steps per column. The recursion
    runs compiled (``path_kernels.viterbi_block``), a block of columns at a time turned column by column for it."""
    rows, cols = evidence.shape
    back = np.zeros((cols, rows), np.int32)
    ink_aware = params.gap_jump_cost > params.jump_cost
    flat = params.jump_cost * np.arange(3 * rows if cyclic else rows, dtype=np.float64)
    acc = None
    for c0, n, offset, columns in _column_blocks(evidence, params, TRAVEL_BLOCK_COLS):
        logs = _log_evidence(columns[offset : offset + n], params.eps)
        if acc is None:
            acc = -logs[0].astype(np.float64)
        if ink_aware:
            path_kernels.viterbi_block(acc, logs, columns, offset, c0, back, cyclic, _reach(params),
                                  float(params.threshold), float(params.jump_cost), float(params.gap_jump_cost),
                                  *edge_steps(rows))
        else:
            path_kernels.viterbi_flat(acc, logs, c0, back, cyclic, flat)
    return path_kernels.viterbi_backtrack(acc, back)
