"""From an evidence map to one trace per calibration curve.

Per curve, a Viterbi path over the track's columns of evidence (the curve
class's probability, or classical ink): emission cost −log p, a transition
cost linear in the jump across the track (cyclic when the curve wraps, so a
backup excursion re-enters from the other edge), refined to sub-pixel by a
probability-weighted centroid around the path. On a wrapping curve the path
only says where the curve is, not how it got there: the wrap count is then
decided between observed columns from the ink (see ``resolve_wraps``). Where there is no evidence
the value is NULL, bridged over at most ``max_gap_px`` along depth.

All maps are canonical: rows across the tracks, columns along depth.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.io.calibration import Calibration, CurveSpec
from .grid import Grid
from .riding import BORDER_PX, JOIN_COLS, on_border, on_grid_line, riding_columns, riding_neighbour, strength_along
from .runs import true_runs
from .wraps import main_scale_level, resolve_wraps, two_level_wraps


@dataclass
class Trace:
    mnemonic: str
    position: np.ndarray  # per depth column: sub-pixel position across the amplitude axis (NaN = gap)
    wraps: np.ndarray  # per column: whole track widths wrapped
    confidence: np.ndarray  # per column: how far the reading can be trusted, in [0, 1] (``column_confidence``)
    observed: np.ndarray  # per column: evidence above the threshold
    ridden: np.ndarray | None = None  # per column: where the path rode a line it was not given (NaN elsewhere)
    level_unsure: np.ndarray | None = None  # per column of a backup-scale curve: whether its scale is uncertain


@dataclass
class TraceParams:
    jump_cost: float = 0.04  # per pixel of jump across the track between neighbouring columns, along the curve's ink
    # ... and across paper or a grid line (``travel_costs``); equal to ``jump_cost``: the first tracer's flat cost
    gap_jump_cost: float = 0.25
    support_cols: int = 1  # columns either side whose evidence supports a steep move (dashed, dotted: more)
    eps: float = 1e-3
    threshold: float = 0.3  # evidence that counts as seeing the curve
    max_gap_px: int = 16  # gaps (dash gaps, crossings) bridged along depth
    refine_radius: int = 3
    wrap_min_jump_px: int = 6  # moves shorter than this are never read as a wrap
    wrap_ink_gap_px: int = 16  # a direct move leaves no longer run of rows without ink than this ...
    wrap_ink_gap_share: float = 0.25  # ... and a longer one than this share of the track is a wrap
    grid_floor: float = 0.15  # evidence on a certain grid line keeps this share (see core/digitize/grid.py)
    # whether evidence on a grid line counts as seeing the curve. A network's class map says "a curve of this
    # style is here" wherever it is high, on a grid line too, so the damping only steers the path and a flat
    # curve lying along a grid line (a caliper in gauge hole) is read, not written NULL: the demo model's
    # curves were 14-22 % NULL per family with the damped test, 0-8 % with this, r as good or better
    # (eval-styles, 8 logs a family). Class-blind ink on a grid line is the grid's own: there the damped
    # evidence decides, and a stretch on a grid line counts only between observations (``_grid_supported``)
    observe_on_grid: bool = False
    # the evidence floor of a dashed or dotted curve: its gaps are expected, and with a floor of 1e-3 (−log 6.9 a
    # column) a path in a dash gap detoured to any other curve's faint evidence up to ~60 px away and back, the
    # spikes of dashed traces; 0.08 measured best of 0.02–0.25 (eval-styles worst family r 0.940 → 0.967)
    broken_eps: float = 0.08
    # a network's map of a style no curve of the track is drawn in: whose evidence it joins (``unclaimed_styles``);
    # "none" for evidence that is not a network's (a hand-painted mask is followed as painted)
    unclaimed_styles: str = "none"
    broken_support_cols: int = 4  # a dashed or dotted curve's steep stretch is supported by its dashes this near
    # whether stretches riding a border, a grid line or another curve's stroke are written NULL
    # (``core/digitize/riding.py``); off for a hand-painted mask, which is followed as painted
    check_riding: bool = True
    hidden_px: float = 4.0  # a curve NULL between two points this near a neighbour ran under it (``_fill_hidden``) ...
    hidden_apart_cols: int = 48  # ... when it is seen apart from the neighbour within this many columns either side

    def broken(self) -> "TraceParams":
        """These params for a dashed or dotted curve: its gaps are expected (``broken_eps``) and a steep stretch
        of it is ink in its dashes only (``broken_support_cols``)."""
        return replace(self, eps=self.broken_eps, support_cols=self.broken_support_cols)


MODEL_UNCLAIMED_STYLES = "broken"
# a network's map counts as seeing its curve from 0.12 (ink: 0.3), over gaps of up to 24 columns (ink: 16). On
# prints it was not trained on the bundled model is often sure there is a curve at 0.1-0.3 (thin 1-px pens under
# a dark grid, faint curves): at 0.3 those stretches were NULL where the trace lay on the curve (eval-styles, 5
# logs a family: dense 10.7 -> 4.4 % NULL, dotted_fax 8.9 -> 4.3 %, fax 9.9 -> 7.2 %, r the same or better,
# RMSE within 0.25 points)
MODEL_THRESHOLD = 0.12
MODEL_MAX_GAP_PX = 24


def model_params(params: TraceParams | None = None) -> TraceParams:
    """``params`` for tracing a network's class maps: they see curves, not ink, so a curve on a grid line is
    seen (``TraceParams.observe_on_grid``). Digitising and training-time validation both trace with these,
    so the figures a run is chosen by are the figures the LAS files get."""
    return replace(params or TraceParams(), observe_on_grid=True, unclaimed_styles=MODEL_UNCLAIMED_STYLES,
                   threshold=MODEL_THRESHOLD, max_gap_px=MODEL_MAX_GAP_PX)


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


def trace_curve(evidence_full: np.ndarray, spec: CurveSpec, params: TraceParams | None = None,
                grid: Grid | None = None, row_offset: int = 0) -> Trace:
    """Trace one curve through its track of a canonical evidence map (rows across, columns along depth).

    With a ``grid``, the evidence on its lines is damped (``params.grid_floor``) so a straight grid line
    never outranks a wiggling curve. Where the path does run on a grid line (a curve crossing one, or
    lying on one for a stretch) and the undamped evidence there is strong, those columns count as
    observed: always with ``params.observe_on_grid`` (a network's map), otherwise when real
    observations flank them, so the stretch is traced, not left NULL.
    ``row_offset``: the canonical row ``evidence_full``'s first row is (a map of one track's band).
    """
    params = params or TraceParams()
    band_rows, cols = evidence_full.shape
    rows_total = grid.shape[0] if grid is not None else band_rows + row_offset
    lo = int(np.clip(np.floor(spec.track_lo), row_offset, min(rows_total, row_offset + band_rows) - 1))
    hi = int(np.clip(np.ceil(spec.track_hi), lo + 1, min(rows_total, row_offset + band_rows) - 1))
    raw = evidence_full[lo - row_offset : hi - row_offset + 1].astype(np.float32)
    ev = raw * grid.damping(slice(lo, hi + 1), params.grid_floor) if grid is not None else raw
    trace, riding = _trace_band(raw, ev, lo, spec, params, grid)
    if riding.any():
        # the path rode a border or a grid line: where it did, take every line's evidence away (the borders and
        # the grid's along lines, not only the one it rode) and trace again, so a faint curve beside heavy lines
        # (a thin blue GR by the border of a North Dakota log) is followed where it is drawn, and a curve the
        # map does not see there stays unseen rather than move to the next line
        again = ev.copy()
        cols_r = np.flatnonzero(riding)
        edge = int(np.ceil(BORDER_PX))
        again[: edge + 1, cols_r] = 0.0
        again[-edge - 1 :, cols_r] = 0.0
        if grid is not None:
            again[:, cols_r] *= 1.0 - grid.map(slice(lo, lo + ev.shape[0]))[:, cols_r]
        trace, _ = _trace_band(raw, again, lo, spec, params, grid)
        # where the first pass rode a line, the second reads only off every line: on one again, however briefly,
        # it found no curve there (the ROP of the North Dakota log went from the middle line to a thin one)
        lined = on_border(trace.position, spec) | (on_grid_line(trace.position, grid, spec) if grid is not None
                                                   else False)
        near_ride = np.convolve(riding.astype(np.float32), np.ones(2 * JOIN_COLS + 1, np.float32), "same") > 0
        again_lined = near_ride & lined
        trace.position[again_lined] = np.nan
        trace.observed[again_lined] = False
        trace.confidence[again_lined] = 0.0
    return trace


def _trace_band(raw: np.ndarray, ev: np.ndarray, lo: int, spec: CurveSpec, params: TraceParams,
                grid: Grid | None) -> tuple[Trace, np.ndarray]:
    """One pass of :func:`trace_curve` over a track's band (``raw``: its evidence, ``ev``: as traced):
    the trace, and the columns where it rode a border or a grid line (positions kept in ``Trace.ridden``)."""
    cols = raw.shape[1]
    path, wrap_step = viterbi_path(ev, params, cyclic=spec.wrap)
    # sub-pixel refinement: probability-weighted centroid around the path
    r = params.refine_radius
    offsets = np.arange(-r, r + 1)
    idx = path[None, :] + offsets[:, None]
    valid = (idx >= 0) & (idx < ev.shape[0])
    idxc = np.clip(idx, 0, ev.shape[0] - 1)
    w = np.where(valid, ev[idxc, np.arange(cols)[None, :]], 0.0)
    conf = ev[path, np.arange(cols)]
    wsum = w.sum(0)
    centroid = np.where(wsum > 1e-6, (w * idxc).sum(0) / np.maximum(wsum, 1e-6), path)
    pos = centroid + lo
    strong_raw = raw[path, np.arange(cols)] >= params.threshold
    if grid is None or params.observe_on_grid:
        observed = strong_raw
    else:
        observed = _grid_supported(conf >= params.threshold, strong_raw, path, params.max_gap_px)
    # stretches riding a border or a grid line are no reading (``core/digitize/riding.py``): unseen, and
    # NULL below, before the wrap count is decided from what is seen
    riding = riding_columns(pos, observed, spec, grid) if params.check_riding else np.zeros(cols, bool)
    observed &= ~riding
    # the track's pixel direction: wrapping past track[1] adds one whole width
    sign = 1 if spec.track[1] > spec.track[0] else -1
    doubtful = riding
    level_unsure = None
    if spec.wrap:
        steps, unsure = resolve_wraps(path, wrap_step, ev, observed, params, edges=params.check_riding)
        wrap_step, doubtful = steps * sign, doubtful | unsure
        if spec.backup:
            wraps, level_unsure = two_level_wraps(wrap_step, spec.backup)
        else:
            wraps = np.cumsum(wrap_step)
            wraps = wraps - main_scale_level(wraps[observed])
    else:
        wraps = np.zeros(cols, np.int64)
    # honest gaps: NaN where the nearest observed column is farther than max_gap_px, and where the trace is
    # no reading
    dist = _distance_to_observed(observed)
    pos = np.where((dist <= params.max_gap_px) & ~doubtful, pos, np.nan)
    strength = raw[path, np.arange(cols)]
    ridden = np.where(riding, centroid + lo, np.nan)
    confidence = column_confidence(strength, observed, pos, params)
    if level_unsure is not None:
        confidence = np.where(level_unsure, np.minimum(confidence, UNSURE_LEVEL_CONFIDENCE), confidence)
    trace = Trace(spec.mnemonic, pos, wraps, confidence, observed, ridden, level_unsure)
    return trace, riding


UNSURE_LEVEL_CONFIDENCE = 0.3  # a column whose scale (main or backup) is uncertain reads no surer than this


CONFIDENT_EVIDENCE = 0.5  # a map's evidence at the path from which a column's reading is fully confident
CONFIDENCE_COLS = 9  # columns a column's confidence is averaged over (a dash gap is no doubt)
LOW_CONFIDENCE = 0.5  # below this a written value is flagged low-confidence (QC picture, summary, metrics)


def column_confidence(strength: np.ndarray, observed: np.ndarray, position: np.ndarray,
                      params: TraceParams) -> np.ndarray:
    """How far each column's reading can be trusted, in [0, 1] (0 where there is none).

    From the evidence along the path: the (undamped) evidence at the path over ``CONFIDENT_EVIDENCE``,
    averaged over ``CONFIDENCE_COLS`` columns with unseen columns counting 0, and in a bridged gap falling
    linearly with the distance to the nearest observation. A curve the map sees faintly (a thin pen under a
    dark grid, p 0.12–0.3) or a stretch bridged across many dash gaps reads low; a clean stroke reads 1.
    """
    seen = np.where(observed, np.clip(np.asarray(strength, np.float64) / CONFIDENT_EVIDENCE, 0.0, 1.0), 0.0)
    k = CONFIDENCE_COLS
    smooth = np.convolve(np.pad(seen, k // 2, mode="edge"), np.ones(k) / k, mode="valid")
    bridged = 1.0 - _distance_to_observed(observed) / (params.max_gap_px + 1.0)
    out = np.where(observed, smooth, smooth * np.clip(bridged, 0.0, 1.0))
    return np.where(np.isfinite(position), out, 0.0).astype(np.float32)


def _grid_supported(observed: np.ndarray, strong_raw: np.ndarray, path: np.ndarray, max_gap: int,
                    slope_px: float = 2.0, step_px: float = 4.0) -> np.ndarray:
    """Observed columns, plus runs where the path lies on damped grid evidence that was strong before
    damping, when a real observation lies within ``max_gap`` at both ends of the run and the path runs
    on into the run without a jump (within ``step_px`` plus ``slope_px`` per column between): a curve
    crossing or following a grid line. A run open at either end (a grid line where the curve is
    absent), or one the path jumped onto (it left the curve for a grid line), is not."""
    extra = strong_raw & ~observed
    if not extra.any() or not observed.any():
        return observed
    a, b = true_runs(extra)  # runs [a, b)
    obs = np.flatnonzero(observed)
    i_before = np.searchsorted(obs, a) - 1
    i_after = np.searchsorted(obs, b)
    ok = (i_before >= 0) & (i_after < obs.size)
    gap_before = a - obs[np.clip(i_before, 0, obs.size - 1)]
    gap_after = obs[np.clip(i_after, 0, obs.size - 1)] - (b - 1)
    ok &= (gap_before <= max_gap + 1) & (gap_after <= max_gap + 1)
    p_before = path[obs[np.clip(i_before, 0, obs.size - 1)]]
    p_after = path[obs[np.clip(i_after, 0, obs.size - 1)]]
    ok &= np.abs(path[a] - p_before) <= step_px + slope_px * gap_before
    ok &= np.abs(path[b - 1] - p_after) <= step_px + slope_px * gap_after
    out = observed.copy()
    for lo, hi in zip(a[ok], b[ok]):
        out[lo:hi] = True
    return out


def _distance_to_observed(observed: np.ndarray) -> np.ndarray:
    n = observed.size
    big = n + 1
    idx = np.arange(n)
    last = np.where(observed, idx, -big)
    last = np.maximum.accumulate(last)
    nxt = np.where(observed, idx, 2 * big)
    nxt = np.minimum.accumulate(nxt[::-1])[::-1]
    return np.minimum(idx - last, nxt - idx)


OFF_SCALE_PX = 1.5  # how far past its track's end a curve without a backup scale may read (a pen's half width)


def trace_to_values(trace: Trace, spec: CurveSpec, calib: Calibration, depths: np.ndarray) -> np.ndarray:
    """Curve values at LAS depths: unwrapped track fraction interpolated along depth. A curve without a backup
    scale never reads past its printed scale: a position beyond the track's end is NULL."""
    cols = trace.position.size
    position = trace.position
    if not spec.wrap:
        margin = OFF_SCALE_PX / max(spec.track_width, 1.0)
        with np.errstate(invalid="ignore"):
            f = spec.fraction_of(position)
            position = np.where((f >= -margin) & (f <= 1.0 + margin), position, np.nan)
    t = spec.fraction_of(position) + trace.wraps
    px = calib.pixel_at(depths)
    inside = (px >= 0) & (px <= cols - 1)
    ok = np.isfinite(t)
    out = np.full(depths.size, np.nan)
    if ok.sum() < 2:
        return out
    col = np.arange(cols)
    ti = np.interp(px, col[ok], t[ok])
    # a depth sample takes a value only if an observed (or bridged) column lies within one pixel
    near = np.interp(px, col, ok.astype(np.float64)) > 0.5
    return spec.value_of_fraction(np.where(inside & near, ti, np.nan))


def trace_to_confidence(trace: Trace, calib: Calibration, values: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Each LAS sample's confidence in [0, 1] (``column_confidence``; the least of the two columns it lies
    between), NaN where the value is NULL."""
    cols = trace.confidence.size
    px = np.clip(calib.pixel_at(depths), 0, max(cols - 1, 0))
    conf = np.asarray(trace.confidence, np.float64)
    lo = np.floor(px).astype(np.int64)
    hi = np.minimum(lo + 1, cols - 1)
    out = np.minimum(conf[lo], conf[hi])
    return np.where(np.isfinite(values), np.round(out, 3), np.nan)


# how alike two line styles look (1 solid, 2 dashed, 3 dotted or dash-dot): a network that is unsure of a
# pen reads a dashed stretch as dotted far more often than as solid
STYLE_DISTANCE = {(1, 2): 2, (1, 3): 3, (2, 3): 1}


def unclaimed_styles(spec: CurveSpec, curves: list[CurveSpec], mode: str = "broken") -> list[tuple[int, float]]:
    """The line styles no curve of ``spec``'s track is drawn in whose probability ``spec``'s evidence takes
    in, with their weights.

    A network reading a print it was not trained on is sure there is a curve long before it is sure of
    the pen: on log-decade prints a dashed GR read as dotted over half its length, and the trace of the
    dashed class was NULL there (p 0.005 on the curve, 0.95 for dotted). The calibration says which pens a
    track holds: a style no curve of the track is drawn in claims nothing there, so its probability goes
    to the curve of the nearest style (``STYLE_DISTANCE``; shared on a tie). ``mode``: ``"broken"`` passes
    only between dashed and dotted, ``"all"`` from any style, ``"none"`` not at all."""
    if mode == "none":
        return []
    present = {c.klass for c in curves if c.shares_track_with(spec)} | {spec.klass}
    out = []
    for absent in {1, 2, 3} - present:
        if mode == "broken" and {absent, spec.klass} != {2, 3}:
            continue
        dist = {k: STYLE_DISTANCE[tuple(sorted((absent, k)))] for k in present}
        nearest = [k for k, d in dist.items() if d == min(dist.values())]
        if spec.klass in nearest:
            out.append((absent, 1.0 / len(nearest)))
    return out


class MergedEvidence:
    """A class's map with the probabilities of unclaimed styles added (``unclaimed_styles``), read band by band
    like the maps it sums (a coded map decodes only the rows sliced)."""

    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(self, maps: dict[int, np.ndarray], klass: int, extra: list[tuple[int, float]]):
        self.maps, self.klass, self.extra = maps, klass, extra

    @property
    def shape(self) -> tuple[int, int]:
        return self.maps[self.klass].shape

    def __getitem__(self, key) -> np.ndarray:
        out = np.array(self.maps[self.klass][key], np.float32)
        for k, w in self.extra:
            out += w * np.asarray(self.maps[k][key], np.float32)
        return np.minimum(out, 1.0, out=out)

    def astype(self, dtype, copy: bool = True) -> np.ndarray:
        return self[:, :].astype(dtype, copy=False)


def style_evidence(evidence_by_class: dict, spec: CurveSpec, curves: list[CurveSpec], mode: str):
    """The map ``spec`` is traced on: its class's, taking in the unclaimed styles' (``unclaimed_styles``)."""
    extra = [(k, w) for k, w in unclaimed_styles(spec, curves, mode) if k in evidence_by_class]
    own = evidence_by_class[spec.klass]
    return MergedEvidence(evidence_by_class, spec.klass, extra) if extra else own


def trace_all(evidence_by_class: dict[int, np.ndarray], calib: Calibration, params: TraceParams | None = None,
              grid: Grid | None = None, by_curve: dict[int, tuple[int, np.ndarray, bool]] | None = None
              ) -> list[Trace]:
    """One trace per calibration curve; ``evidence_by_class`` maps class → canonical map (0 = any curve).

    ``by_curve`` maps a curve's index to its own evidence (first row, map of its track's band, whether the
    grid damps it): a curve told apart by its ink colour (``core/io/colour.py``) follows that alone, outside any
    joint group.

    Curves of one line style sharing one track (a multiclass model gives them one map) are traced
    together, through their crossings (``core/digitize/group_trace.py``), and named by the calibration order
    (``core/digitize/crossings.py``). Every other curve follows its own class's map; where two of those share a
    class and a track (one wraps), each one's stroke is explained away before the next is traced.

    Class-blind evidence (the classical tracer's ink, key 0) is left alone: there every curve of a
    track follows the strongest line. Explaining it away was tried and measured worse: on the demo
    logs the classical median r fell from 0.578 to 0.104, since without line styles the second and
    third lines land on the wrong curves, where the strongest line often correlates with them all.
    """
    from .crossings import order_at_top, same_style_groups

    params = params or TraceParams()
    by_curve = by_curve or {}
    traces: list[Trace | None] = [None] * len(calib.curves)
    for i, (offset, band, damp) in by_curve.items():
        spec = calib.curves[i]
        # a damped colour map is ink a grey or same-tinted grid shares: on a grid line it is the grid's own
        own_params = replace(params, observe_on_grid=False)
        own_params = own_params if spec.klass == 1 else own_params.broken()
        traces[i] = trace_curve(band, spec, own_params, grid if damp else None, row_offset=offset)
    for idx in same_style_groups(calib.curves, skip=by_curve):
        klass = calib.curves[idx[0]].klass
        if klass in evidence_by_class:
            ev = style_evidence(evidence_by_class, calib.curves[idx[0]], calib.curves, params.unclaimed_styles)
            group = trace_group_curves(ev, [calib.curves[i] for i in idx], params, grid)
            order_at_top(group, [calib.curves[i] for i in idx])
            for i, tr in zip(idx, group):
                traces[i] = tr
    # the rest follow their own class's map; where another curve of the same class shares the track (one of
    # them wraps, so they are no joint group), each traced stroke is explained away before the next
    explained: dict[int, np.ndarray] = {}
    rest = [i for i in range(len(calib.curves)) if traces[i] is None]
    for n, i in enumerate(rest):
        spec = calib.curves[i]
        own = spec.klass in evidence_by_class
        ev = (style_evidence(evidence_by_class, spec, calib.curves, params.unclaimed_styles) if own
              else evidence_by_class.get(0))
        if ev is None:
            raise ValueError(f"no evidence for class {spec.klass}")
        own_params = params if spec.klass == 1 or not own else params.broken()
        traces[i] = trace_curve(explained.get(spec.klass, ev), spec, own_params, grid)
        later = [calib.curves[j] for j in rest[n + 1:]]
        if own and any(s.klass == spec.klass and s.shares_track_with(spec) for s in later):
            if spec.klass not in explained:
                explained[spec.klass] = ev.astype(np.float32, copy=True)
            _remove_line(explained[spec.klass], traces[i], core_px=params.refine_radius)
    if params.check_riding:
        _drop_neighbour_rides(traces, calib.curves, evidence_by_class, params)
    _fill_hidden(traces, calib.curves, params)
    return traces


def _drop_neighbour_rides(traces: list[Trace], curves: list[CurveSpec], evidence_by_class: dict,
                          params: TraceParams) -> None:
    """A curve riding the stroke of a curve of another line style in its track, where the maps see that
    style more, is written NULL there (in place; ``core/digitize/riding.py``)."""
    for i, (tr, spec) in enumerate(zip(traces, curves)):
        if spec.klass not in evidence_by_class:
            continue
        for j, (other, ospec) in enumerate(zip(traces, curves)):
            if j == i or ospec.klass == spec.klass or ospec.klass not in evidence_by_class \
                    or not ospec.shares_track_with(spec):
                continue
            own = strength_along(evidence_by_class[spec.klass], tr.position)
            theirs = strength_along(evidence_by_class[ospec.klass], tr.position)
            ride = riding_neighbour(tr.position, tr.observed, other.position, own, theirs)
            if ride.any():
                tr.position[ride] = np.nan
                tr.observed[ride] = False
                tr.confidence[ride] = 0.0


def _fill_hidden(traces: list[Trace], curves: list[CurveSpec], params: TraceParams) -> None:
    """A curve lost where it runs under a neighbour's stroke takes the neighbour's line there (in place).

    Two curves of one track that read the same (a deep and a medium resistivity in a shale, a curve and its
    repeat) are drawn one over the other: the map sees the top pen only, and the other curve came out NULL
    over the whole stretch (log-decade prints: 44 % of a medium resistivity under its deep one). A NULL
    stretch longer than a bridged gap whose ends lie within ``params.hidden_px`` of another curve of the
    track, traced over the whole stretch, and that is seen apart from it within ``params.hidden_apart_cols``
    either side, is that curve's line; a stretch whose ends are apart (the curve left the track, or the map
    lost it on paper) stays NULL. Wrapping curves are left alone: their
    positions are within one scale of many."""
    for i, (tr, spec) in enumerate(zip(traces, curves)):
        if spec.wrap:
            continue
        # the unseen stretches that went NULL: from the last column seen before to the first seen after
        starts, stops = true_runs(~tr.observed)
        for a, b in zip(starts.tolist(), stops.tolist()):
            if a == 0 or b == tr.position.size or np.isfinite(tr.position[a:b]).all():
                continue
            for j, (other, ospec) in enumerate(zip(traces, curves)):
                if j == i or ospec.wrap or not ospec.shares_track_with(spec):
                    continue
                beside = other.position[a - 1 : b + 1]
                if not np.isfinite(beside).all():
                    continue
                if max(abs(tr.position[a - 1] - beside[0]), abs(tr.position[b] - beside[-1])) > params.hidden_px:
                    continue
                # ... and it joins the neighbour's line and leaves it again, seen apart from it on either side:
                # a curve that was on that line all along (a dashed curve off scale lying on a solid neighbour
                # the network calls dashed here and there) is no curve under it
                w = params.hidden_apart_cols
                before, after = slice(max(0, a - w), a), slice(b, min(tr.position.size, b + w))
                if all((np.abs(tr.position[s] - other.position[s]) > 2 * params.hidden_px)[tr.observed[s]].any()
                       for s in (before, after)):
                    tr.position[a:b] = beside[1:-1]
                    break


def trace_group_curves(evidence_full: np.ndarray, specs: list[CurveSpec], params: TraceParams,
                       grid: Grid | None = None) -> list[Trace]:
    """The curves of one line style in one track (same ``track``, none wrapping), traced jointly."""
    from .group_trace import GroupParams, trace_group

    rows_total, cols = evidence_full.shape
    spec = specs[0]
    lo = int(np.clip(np.floor(spec.track_lo), 0, rows_total - 1))
    hi = int(np.clip(np.ceil(spec.track_hi), lo + 1, rows_total - 1))
    ev = evidence_full[lo : hi + 1].astype(np.float32)
    damping = grid.damping(slice(lo, hi + 1), params.grid_floor) if grid is not None else None
    gp = GroupParams(threshold=params.threshold, max_gap_px=params.max_gap_px)
    pos, observed, conf = trace_group(ev, [s.klass for s in specs], gp, damping)
    out = []
    for k, s in enumerate(specs):
        # a curve lost for a few columns is carried on at its last velocity: past the track's edge that is a
        # curve gone off scale (KGS: DT carried to 192.5 on its 140-40 scale), no reading
        seen = observed[k].copy()
        p = np.where((pos[k] >= 0) & (pos[k] <= ev.shape[0] - 1), pos[k] + lo, np.nan)
        riding = riding_columns(p, seen, s, grid) if params.check_riding else np.zeros(cols, bool)
        seen &= ~riding
        dist = _distance_to_observed(seen)
        p = np.where((dist <= params.max_gap_px) & ~riding, p, np.nan)
        out.append(Trace(s.mnemonic, p, np.zeros(cols, np.int64), column_confidence(conf[k], seen, p, params),
                         seen))
    return out


def _remove_line(ev: np.ndarray, trace: Trace, core_px: int, reach_px: int = 16, floor: float = 0.05) -> None:
    """Zero a traced line's stroke in the evidence wherever it has a position (in place).

    Per column the stroke spans the rows the path passes through on its way from the previous column
    to the next (a steep swing covers many rows in one column), widened by ``core_px``; from there it
    goes on outwards while the evidence stays above ``floor`` (at most ``reach_px`` more), so a thick or
    blurred stroke goes whole and leaves no fringe for the next curve to follow a pen-width off.
    Faint stretches count too; across a bridged gap there is nothing to remove.
    """
    cols = np.flatnonzero(np.isfinite(trace.position))
    if cols.size == 0:
        return
    rows = ev.shape[0]
    centre = np.clip(np.rint(trace.position[cols]).astype(np.int64), 0, rows - 1)
    lo, hi = centre.copy(), centre.copy()
    for shift in (1, -1):  # halfway towards each neighbouring column's position
        nb = np.roll(centre, shift)
        adjacent = np.abs(np.roll(cols, shift) - cols) == 1
        half = np.where(adjacent, (nb + centre) // 2, centre)
        lo, hi = np.minimum(lo, half), np.maximum(hi, half)
    lo, hi = np.maximum(lo - core_px, 0), np.minimum(hi + core_px, rows - 1)
    lengths = hi - lo + 1
    starts = np.repeat(lo - np.cumsum(lengths) + lengths, lengths)
    ev[starts + np.arange(lengths.sum()), np.repeat(cols, lengths)] = 0.0
    for edge, direction in ((hi, 1), (lo, -1)):
        alive = np.ones(cols.size, bool)
        for k in range(1, reach_px + 1):
            r = edge + direction * k
            alive &= (r >= 0) & (r < rows)
            rc = np.clip(r, 0, rows - 1)
            alive &= ev[rc, cols] > floor
            if not alive.any():
                break
            ev[rc[alive], cols[alive]] = 0.0
