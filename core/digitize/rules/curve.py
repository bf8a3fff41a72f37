"""From an evidence map to one trace per calibration curve.

Per curve, a Viterbi path over the track's columns of evidence (the curve
class's probability, or classical ink; ``core/digitize/trace/path_search.py``),
refined to sub-pixel by a probability-weighted centroid around the path
(``core/digitize/rules/stroke_values.py``).
Stretches that ride a border or a grid line are no reading
(``core/digitize/rules/riding.py``); on a wrapping curve the path only says where
the curve is, not how it got there: the wrap count is then decided between
observed columns from the ink at the track's edges (``core/digitize/trace/wraps.py``).
Where there is no evidence the value is NULL, bridged over at most
``max_gap_px`` along depth; each column's confidence is
``core/digitize/rules/confidence.py``'s. The curves of a scan together:
``core/digitize/rules/all_curves.py``.

All maps are canonical: rows across the tracks, columns along depth.
"""

from __future__ import annotations

import numpy as np

from core.common.runs import distance_to_true, true_runs
from core.digitize.evidence.coded_map import DECODE_TABLE, compiled_reading
from core.digitize.evidence.style import merged_codes
from core.digitize.page.grid import BandDamping, Grid
from core.digitize.rules.confidence import column_confidence
from core.digitize.rules.passes import BIT, doubt, no_reading
from core.digitize.rules.riding import (
    BORDER_PX,
    JOIN_COLS,
    LineInk,
    border_rides,
    inside_log,
    line_rides,
    on_border,
    on_grid_line,
)
from core.digitize.rules.stroke_values import (
    bridged_rows,
    one_stroke,
    refined_rows,
    smoothed_rows,
    steep_gap,
    stroke_cap,
    stroke_runs,
)
from core.digitize.rules.track_scans import damped_product, damping_arguments, merged_damped_product
from core.digitize.trace.missed_returns import hidden_returns, still_returns, take_hidden_returns, take_still_returns
from core.digitize.trace.params import Trace, TraceParams
from core.digitize.trace.path_search import viterbi_path
from core.digitize.trace.wraps import main_scale_level, no_move_rows, resolve_wraps, untaken_round_trips
from core.io.calibration import CurveSpec


def trace_curve(evidence_full: np.ndarray, spec: CurveSpec, params: TraceParams | None = None,
                grid: Grid | None = None, row_offset: int = 0) -> Trace:
    """Trace one curve through its track of a canonical evidence map (rows across, columns along depth), with the
    per-curve passes of ``core/digitize/rules/passes.py`` (``border_ride`` to ``second_pass``, in that order).

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
    lo, hi = spec.track_rows(min(rows_total, row_offset + band_rows), row_offset)
    rows = slice(lo - row_offset, hi - row_offset + 1)
    if grid is None:
        raw = ev = evidence_full[rows].astype(np.float32)
    else:
        raw, ev = _damped_band(evidence_full, rows, grid.band_damping(slice(lo, hi + 1), params.grid_floor))
    trace, riding = _trace_band(raw, ev, lo, spec, params, grid)
    if riding.any() and params.runs("second_pass"):
        trace = _second_pass(raw, ev, lo, spec, params, grid, riding)
    return trace


def _damped_band(evidence_full, rows: slice, damping) -> tuple:
    """The band's undamped evidence as the tracer reads it (``raw``: only where the path runs, so a coded or merged
    map's band stays a view of its codes, decoded where it is read: ``band``) and the damped evidence (``ev``).

    ``damping``: the grid's damping of the band (``page/grid.py: BandDamping``): the product is written in one
    compiled pass, each code decoded and each row's damping computed as it is read (``track_scans.damped_product``):
    no decoded band and no spread damping beside it (the tallest shared scan's 501 × 52,313 band: its float32 band
    and two float64 ones at once were the trace stage's peak). Or a function giving the damping spread over the band:
    the band decoded before it is made and multiplied into the damping's own buffer. The same products either way,
    as NumPy multiplies the float32 band by the damping."""
    view = getattr(evidence_full, "band", None)
    if isinstance(damping, BandDamping) and damping.along.dtype == np.float64:
        raw = view(rows) if view is not None else evidence_full[rows].astype(np.float32)
        merged = merged_codes(raw)
        if merged is not None:  # a style's codes and the unclaimed styles', summed as they are read
            ev = np.empty(raw.shape)
            merged_damped_product(*merged, DECODE_TABLE, *damping_arguments(damping)[1:], ev)
            return raw, ev
        band, table = compiled_reading(raw, (slice(None), slice(None)))  # a coded band's codes, any other's floats
        ev = np.empty(band.shape)
        damped_product(band, table, *damping_arguments(damping)[1:], ev)
        return raw, ev
    if view is not None:
        raw = view(rows)
        band = raw[:, :]  # decoded, a fresh array: dropped once multiplied
    else:
        raw = band = evidence_full[rows].astype(np.float32)
    damp = damping.at() if isinstance(damping, BandDamping) else damping()
    if damp.dtype == np.result_type(band.dtype, damp.dtype):
        return raw, np.multiply(band, damp, out=damp)
    return raw, band * damp


def _second_pass(raw: np.ndarray, ev: np.ndarray, lo: int, spec: CurveSpec, params: TraceParams, grid: Grid | None,
                 riding: np.ndarray) -> Trace:
    """The pass ``second_pass``: the path rode a border or a grid line; where it did, every
    line's evidence is taken away (the borders and the grid's along lines, not only the one it rode) and the
    band traced again, so a faint curve beside heavy lines (a thin blue GR by the border of a North Dakota log)
    is followed where it is drawn, and a curve the map does not see there stays unseen rather than move to the
    next line."""
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
    # written (a flag of its own was measured and bought nothing the calibrated confidence does not: docs/accuracy.md,
    # *What each pass buys*). Open at the log's start or end it is a curve not yet begun or ended: NULL
    inside = np.zeros(again_lined.size, bool)
    for a, b in zip(*true_runs(again_lined)):
        inside[a:b] = inside_log(trace.observed, a, b)
    no_reading(trace, again_lined & ~inside, "second_pass")
    return trace


def _trace_band(raw: np.ndarray, ev: np.ndarray, lo: int, spec: CurveSpec, params: TraceParams,
                grid: Grid | None) -> tuple[Trace, np.ndarray]:
    """One pass of :func:`trace_curve` over a track's band (``raw``: its evidence, ``ev``: as traced):
    the trace, and the columns where it rode a border or a grid line."""
    cols = raw.shape[1]
    path, wrap_step = viterbi_path(ev, params, cyclic=spec.wrap)
    inked = ev >= params.threshold  # the band's ink, read by the path's refinement and the wrap rules alike
    pos = refined_rows(ev, path, params, inked) + lo
    conf = ev[path, np.arange(cols)]
    strong_raw = raw[path, np.arange(cols)] >= params.threshold
    if grid is None or params.observe_on_grid:
        observed = strong_raw
    else:
        observed = _grid_supported(conf >= params.threshold, strong_raw, path, params.max_gap_px)
    flags = np.zeros(cols, np.uint32)
    # border_ride, grid_ride: stretches riding a border or a grid line are no reading
    # (``core/digitize/rules/riding.py``): unseen, and NULL below, before the wrap count is decided from what is seen
    riding = _rides(pos, observed, spec, grid, params, flags, LineInk(inked, lo, no_move_rows(params, raw.shape[0])))
    observed &= ~riding
    # the track's pixel direction: wrapping past track[1] adds one whole width
    sign = 1 if spec.track[1] > spec.track[0] else -1
    gone = riding.copy()
    level_unsure = None
    if spec.wrap:
        lines = grid.across_columns(slice(lo, lo + raw.shape[0])) if grid is not None else None
        returning = (-1 if spec.backup == "high" else 1 if spec.backup == "low" else 0) * sign
        steps, unsure = resolve_wraps(path, wrap_step, ev, observed, params, edges=params.ink_checks, lines=lines,
                                      returning=returning, inked=inked)
        path_step, wrap_step = wrap_step, steps * sign
        if params.runs("unresolved_wrap"):  # a move neither direct nor a crossing the edges show: no reading
            gone |= unsure
            flags[unsure] |= BIT["unresolved_wrap"]
        if spec.backup:
            # a return the path cut short is taken where the curve is on its backup scale there
            hidden = (hidden_returns(path, inked, observed, steps, returning, params.max_gap_px,
                                     params.wrap_ink_gap_px) if params.hidden_returns and params.ink_checks
                      else np.zeros(0, np.int64))
            wrap_step, wraps, level_unsure = take_hidden_returns(wrap_step, hidden, spec.backup)
            if params.hidden_returns and params.ink_checks:  # ... and one the velocity called direct, the path still
                wrap_step, wraps, level_unsure = take_still_returns(
                    wrap_step, wraps, level_unsure, still_returns(path, inked, observed, steps, returning, params),
                    spec.backup)
            if params.ink_checks:  # a round trip of the path the judge took neither crossing of: unknown between
                level_unsure = level_unsure | untaken_round_trips(path_step, steps, wraps)
        else:
            wraps = np.cumsum(wrap_step)
            wraps = wraps - main_scale_level(wraps[observed])
    else:
        wraps = np.zeros(cols, np.int64)
    # gap: NaN where the nearest observed column is farther than max_gap_px. A depth line or a box edge is ink at
    # every row of the track: "the curve" seen on it alone shows no curve is there (the GR of the North Dakota log
    # read 10 ft above its start, bridged from the header box's lower edge), so it bridges nothing; a curve
    # crossing one is bridged over it. (The wrap count above keeps it: a return across the track's edge at a depth
    # line is seen there.)
    seen = observed & ~grid.across_columns(slice(lo, lo + raw.shape[0])) if grid is not None else observed
    if params.runs("gap"):
        far = distance_to_true(seen) > params.max_gap_px
        gone |= far
        flags[far & ~riding] |= BIT["gap"]
    smoothed = None
    if params.refine_runs and params.stroke_gaps:
        # the value on a steep stroke its network read in pieces: the whole stroke's centre in the column. The
        # decisions above (rides, wraps) keep the path's own piece, as they were chosen on it
        gap = steep_gap(path, wrap_step)
        pos = bridged_rows(ev, path, params, inked, gap, pos - lo) + lo
        if params.smooth_values:  # ... written, once every pass has read the column's own, on the stroke's quadratic
            first, last = stroke_runs(inked, path, stroke_cap(params.refine_radius, inked.shape[0]), gap)
            link = observed[1:] & observed[:-1] & (np.asarray(wrap_step)[1:] == 0)
            smoothed = smoothed_rows(pos - lo, one_stroke(first, last, link, gap)) + lo
    pos = np.where(gone, np.nan, pos)
    strength = raw[path, np.arange(cols)]
    confidence = column_confidence(strength, observed, pos, params.max_gap_px)
    trace = Trace(spec.mnemonic, pos, wraps, confidence, observed, level_unsure, flags)
    if smoothed is not None:
        trace.smoothed = (pos.copy(), smoothed)
    trace.signals = {"strength": strength.astype(np.float32)}
    if spec.wrap:
        trace.signals.update(level_anchors(wraps, unsure))
    if level_unsure is not None and params.runs("backup_level"):  # main or backup scale uncertain: doubted
        doubt(trace, level_unsure, "backup_level")
    return trace, riding


def level_anchors(wraps: np.ndarray, unresolved: np.ndarray) -> dict[str, np.ndarray]:
    """What pins the scale of each column of a wrapping curve: the stretch it lies in, between two changes of its
    level or unresolved moves (a move neither direct nor a crossing the edges show, ``trace/wraps.py``), is
    ``level_pinned`` (1) where a crossing taken bounds it on one side at least, and ``level_open`` (1) where an
    unresolved move bounds it: a crossing may have been missed there, and the level on one side of it is off by a
    scale. A stretch bounded by the log's ends alone is neither: its scale is the rule's guess (the main scale,
    ``two_level_wraps``), which the picture cannot check."""
    cols = wraps.size
    change = np.flatnonzero(np.diff(wraps) != 0) + 1
    starts, _ = true_runs(unresolved)
    _, stops = true_runs(unresolved)
    events = sorted([(int(c), 1) for c in change] + [(int(c), 2) for c in starts] + [(int(c), 2) for c in stops])
    pinned = np.zeros(cols, np.float32)
    open_ = np.zeros(cols, np.float32)
    edges = [(0, 0)] + events + [(cols, 0)]
    for (a, ka), (b, kb) in zip(edges[:-1], edges[1:]):
        pinned[a:b] = float(ka == 1 or kb == 1)
        open_[a:b] = float(ka == 2 or kb == 2)
    return {"level_pinned": pinned, "level_open": open_}


def _rides(pos: np.ndarray, observed: np.ndarray, spec: CurveSpec, grid: Grid | None, params: TraceParams,
           flags: np.ndarray, ink: LineInk | None = None) -> np.ndarray:
    """The passes ``border_ride`` and ``grid_ride`` (their bits set in ``flags``): the columns they name no reading.
    A stretch on a grid line inside the log that the trace saw along most of it is written (``line_rides``); ``ink``:
    the band's, which tells a jump onto a line from a drawn move."""
    riding = np.zeros(pos.size, bool)
    if not params.ink_checks:  # a hand-painted mask is followed as painted
        return riding
    if params.runs("border_ride"):
        border = border_rides(pos, observed, spec)
        riding |= border
        flags[border] |= BIT["border_ride"]
    if grid is not None and params.runs("grid_ride"):
        on_line, _ = line_rides(pos, observed, spec, grid, ink)
        riding |= on_line
        flags[on_line] |= BIT["grid_ride"]
    return riding


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


