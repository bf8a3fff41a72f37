"""From an evidence map to one trace per calibration curve.

Per curve, a Viterbi path over the track's columns of evidence (the curve
class's probability, or classical ink; ``core/digitize/path_search.py``),
refined to sub-pixel by a probability-weighted centroid around the path.
Stretches that ride a border or a grid line are no reading
(``core/digitize/riding.py``); on a wrapping curve the path only says where
the curve is, not how it got there: the wrap count is then decided between
observed columns from the ink at the track's edges (``core/digitize/wraps.py``).
Where there is no evidence the value is NULL, bridged over at most
``max_gap_px`` along depth; each column's confidence is
``core/digitize/confidence.py``'s. The curves of a scan together:
``core/digitize/all_curves.py``.

All maps are canonical: rows across the tracks, columns along depth.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.io.calibration import Calibration, CurveSpec

from .confidence import STEEP_CONFIDENCE, UNSURE_LEVEL_CONFIDENCE, capped, column_confidence
from .grid import Grid
from .path_search import viterbi_path
from .riding import BORDER_PX, JOIN_COLS, grid_rides, inside_log, on_border, on_grid_line
from .runs import distance_to_true, true_runs
from .style_evidence import UnclaimedStyles
from .wraps import main_scale_level, resolve_wraps, two_level_wraps


@dataclass
class Trace:
    mnemonic: str
    position: np.ndarray  # per depth column: sub-pixel position across the amplitude axis (NaN = gap)
    wraps: np.ndarray  # per column: whole track widths wrapped
    confidence: np.ndarray  # per column: how far the reading can be trusted, in [0, 1] (``column_confidence``)
    observed: np.ndarray  # per column: evidence above the threshold
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
    unclaimed_styles: UnclaimedStyles = UnclaimedStyles.NONE
    broken_support_cols: int = 4  # a dashed or dotted curve's steep stretch is supported by its dashes this near
    # whether a reading must be one the ink supports: stretches riding a border, a grid line or another curve's
    # stroke are NULL (``core/digitize/riding.py``) and a wrap counts only where the trace is seen at both edges
    # (``core/digitize/wraps.py``); off for a hand-painted mask, which is followed as painted
    ink_checks: bool = True
    hidden_px: float = 4.0  # a curve NULL between two points this near a neighbour ran under it (``_fill_hidden``) ...
    hidden_apart_cols: int = 48  # ... when it is seen apart from the neighbour within this many columns either side

    def broken(self) -> "TraceParams":
        """These params for a dashed or dotted curve: its gaps are expected (``broken_eps``) and a steep stretch
        of it is ink in its dashes only (``broken_support_cols``)."""
        return replace(self, eps=self.broken_eps, support_cols=self.broken_support_cols)


MODEL_UNCLAIMED_STYLES = UnclaimedStyles.BROKEN
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
        again = ev if ev is not raw else ev.copy()  # the first pass is done with its damped copy: reused
        cols_r = np.flatnonzero(riding)
        edge = int(np.ceil(BORDER_PX))
        again[: edge + 1, cols_r] = 0.0
        again[-edge - 1 :, cols_r] = 0.0
        if grid is not None:
            again[:, cols_r] *= 1.0 - grid.map(slice(lo, lo + ev.shape[0]), cols_r)
        trace, _ = _trace_band(raw, again, lo, spec, params, grid)
        # where the first pass rode a line, the second reads only off every line: on one again, however briefly,
        # it found no curve there (the ROP of the North Dakota log went from the middle line to a thin one)
        lined = on_border(trace.position, spec) | (on_grid_line(trace.position, grid, spec) if grid is not None
                                                   else False)
        near_ride = distance_to_true(riding) <= JOIN_COLS
        again_lined = near_ride & lined
        # ... but a stretch of it inside the log (the curve read before and after it) is mostly the curve crossing
        # or touching a line (85 % of such columns right on the held-out families and foreign prints, stage 7):
        # written, flagged. Open at the log's start or end it is a curve not yet begun or ended: NULL
        doubt = np.zeros(again_lined.size, bool)
        for a, b in zip(*true_runs(again_lined)):
            doubt[a:b] = inside_log(trace.observed, a, b)
        gone = again_lined & ~doubt
        trace.position[gone] = np.nan
        trace.observed[gone] = False
        trace.confidence[gone] = 0.0
        trace.confidence = capped(trace.confidence, doubt, STEEP_CONFIDENCE)
    return trace


def _trace_band(raw: np.ndarray, ev: np.ndarray, lo: int, spec: CurveSpec, params: TraceParams,
                grid: Grid | None) -> tuple[Trace, np.ndarray]:
    """One pass of :func:`trace_curve` over a track's band (``raw``: its evidence, ``ev``: as traced):
    the trace, and the columns where it rode a border or a grid line."""
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
    riding, doubt = grid_rides(pos, observed, spec, grid) if params.ink_checks else (np.zeros(cols, bool),) * 2
    observed &= ~riding
    # the track's pixel direction: wrapping past track[1] adds one whole width
    sign = 1 if spec.track[1] > spec.track[0] else -1
    doubtful = riding
    level_unsure = None
    if spec.wrap:
        lines = grid.across_columns(slice(lo, lo + raw.shape[0])) if grid is not None else None
        returning = (-1 if spec.backup == "high" else 1 if spec.backup == "low" else 0) * sign
        steps, unsure = resolve_wraps(path, wrap_step, ev, observed, params, edges=params.ink_checks, lines=lines,
                                      returning=returning)
        wrap_step, doubtful = steps * sign, doubtful | unsure
        if spec.backup:
            wraps, level_unsure = two_level_wraps(wrap_step, spec.backup)
        else:
            wraps = np.cumsum(wrap_step)
            wraps = wraps - main_scale_level(wraps[observed])
    else:
        wraps = np.zeros(cols, np.int64)
    # honest gaps: NaN where the nearest observed column is farther than max_gap_px, and where the trace is
    # no reading. A depth line or a box edge is ink at every row of the track: "the curve" seen on it alone
    # shows no curve is there (the GR of the North Dakota log read 10 ft above its start, bridged from the
    # header box's lower edge), so it bridges nothing; a curve crossing one is bridged over it. (The wrap
    # count above keeps it: a return across the track's edge at a depth line is seen there.)
    seen = observed & ~grid.across_columns(slice(lo, lo + raw.shape[0])) if grid is not None else observed
    dist = distance_to_true(seen)
    pos = np.where((dist <= params.max_gap_px) & ~doubtful, pos, np.nan)
    strength = raw[path, np.arange(cols)]
    confidence = column_confidence(strength, observed, pos, params.max_gap_px)
    if level_unsure is not None:
        confidence = capped(confidence, level_unsure, UNSURE_LEVEL_CONFIDENCE)
    confidence = capped(confidence, doubt, STEEP_CONFIDENCE)  # on a grid line, seen along most of it: flagged
    trace = Trace(spec.mnemonic, pos, wraps, confidence, observed, level_unsure)
    return trace, riding


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
