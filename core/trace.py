"""From an evidence map to one trace per calibration curve.

Per curve, a Viterbi path over the track's columns of evidence (the curve
class's probability, or classical ink): emission cost −log p, a transition
cost linear in the jump across the track (cyclic when the curve wraps, so a
backup excursion re-enters from the other edge), refined to sub-pixel by a
probability-weighted centroid around the path. Where there is no evidence
the value is NULL, bridged over at most ``max_gap_px`` along depth.

All maps are canonical: rows across the tracks, columns along depth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .calibration import Calibration, CurveSpec


@dataclass
class Trace:
    mnemonic: str
    position: np.ndarray  # per depth column: sub-pixel position across the amplitude axis (NaN = gap)
    wraps: np.ndarray  # per column: whole track widths wrapped
    confidence: np.ndarray  # per column: evidence at the path in [0, 1]
    observed: np.ndarray  # per column: evidence above the threshold


@dataclass
class TraceParams:
    jump_cost: float = 0.04  # per pixel of jump across the track between neighbouring columns
    eps: float = 1e-3
    threshold: float = 0.3  # evidence that counts as seeing the curve
    max_gap_px: int = 16  # gaps (dash gaps, crossings) bridged along depth
    refine_radius: int = 3


def _dt_l1(cost: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised exact L1 distance transform by doubling sweeps (O(n log n) numpy ops)."""
    n = cost.size
    val = cost.copy()
    arg = np.arange(n)
    shift = 1
    while shift < n:
        # neighbour at distance ``shift`` on either side
        for direction in (1, -1):
            if direction == 1:
                cand = np.full(n, np.inf)
                cand[shift:] = val[:-shift] + lam * shift
                carg = np.full(n, -1)
                carg[shift:] = arg[:-shift]
            else:
                cand = np.full(n, np.inf)
                cand[:-shift] = val[shift:] + lam * shift
                carg = np.full(n, -1)
                carg[:-shift] = arg[shift:]
            better = cand < val
            val = np.where(better, cand, val)
            arg = np.where(better, carg, arg)
        shift *= 2
    return val, arg


def viterbi_path(evidence: np.ndarray, params: TraceParams, cyclic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Best path through ``evidence`` (rows × columns): row per column and wrap steps per column."""
    rows, cols = evidence.shape
    unary = -np.log(np.clip(evidence, params.eps, 1.0))
    back = np.zeros((cols, rows), np.int32)
    acc = unary[:, 0].copy()
    lam = params.jump_cost
    for c in range(1, cols):
        if cyclic:
            tripled = np.concatenate([acc, acc, acc])
            val, arg = _dt_l1(tripled, lam)
            val, arg = val[rows : 2 * rows], arg[rows : 2 * rows] - rows
        else:
            val, arg = _dt_l1(acc, lam)
        back[c] = arg
        acc = val + unary[:, c]
    path = np.zeros(cols, np.int64)
    wrap_step = np.zeros(cols, np.int64)
    path[-1] = int(np.argmin(acc))
    for c in range(cols - 1, 0, -1):
        prev = int(back[c, path[c]])
        wrap_step[c] = -(prev // rows)  # prev < 0: came from beyond the low edge, etc.
        path[c - 1] = prev % rows
    return path, wrap_step


def trace_curve(evidence_full: np.ndarray, spec: CurveSpec, params: TraceParams | None = None) -> Trace:
    """Trace one curve through its track of a canonical evidence map (rows across, columns along depth)."""
    params = params or TraceParams()
    rows_total, cols = evidence_full.shape
    lo = int(np.clip(np.floor(spec.track_lo), 0, rows_total - 1))
    hi = int(np.clip(np.ceil(spec.track_hi), lo + 1, rows_total - 1))
    ev = evidence_full[lo : hi + 1].astype(np.float32)
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
    observed = conf >= params.threshold
    # the track's pixel direction: wrapping past track[1] adds one whole width
    sign = 1 if spec.track[1] > spec.track[0] else -1
    wraps = np.cumsum(wrap_step) * sign if spec.wrap else np.zeros(cols, np.int64)
    if spec.wrap:
        # The image cannot say whether the trace starts on the backup scale; assume the curve
        # spends most of its length on the main scale (median fraction in [0, 1)).
        t = spec.fraction_of(pos) + wraps
        t_obs = t[observed & np.isfinite(t)]
        if t_obs.size:
            wraps = wraps - int(np.floor(np.median(t_obs)))
    # honest gaps: NaN where the nearest observed column is farther than max_gap_px
    dist = _distance_to_observed(observed)
    pos = np.where(dist <= params.max_gap_px, pos, np.nan)
    return Trace(spec.mnemonic, pos, wraps, conf, observed)


def _distance_to_observed(observed: np.ndarray) -> np.ndarray:
    n = observed.size
    big = n + 1
    idx = np.arange(n)
    last = np.where(observed, idx, -big)
    last = np.maximum.accumulate(last)
    nxt = np.where(observed, idx, 2 * big)
    nxt = np.minimum.accumulate(nxt[::-1])[::-1]
    return np.minimum(idx - last, nxt - idx)


def trace_to_values(trace: Trace, spec: CurveSpec, calib: Calibration, depths: np.ndarray) -> np.ndarray:
    """Curve values at LAS depths: unwrapped track fraction interpolated along depth."""
    cols = trace.position.size
    t = spec.fraction_of(trace.position) + trace.wraps
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


def trace_all(evidence_by_class: dict[int, np.ndarray], calib: Calibration, params: TraceParams | None = None,
              ) -> list[Trace]:
    """One trace per calibration curve; ``evidence_by_class`` maps class → canonical map (0 = any curve)."""
    traces = []
    for spec in calib.curves:
        ev = evidence_by_class.get(spec.klass, evidence_by_class.get(0))
        if ev is None:
            raise ValueError(f"no evidence for class {spec.klass}")
        traces.append(trace_curve(ev, spec, params))
    return traces
