"""A trace's values and confidences on the LAS depth grid."""

from __future__ import annotations

import numpy as np

from core.digitize.trace.params import Trace
from core.io.calibration import Calibration, CurveSpec

OFF_SCALE_PX = 1.5  # how far past its track's end a curve without a backup scale may read (a pen's half width)


def trace_to_values(trace: Trace, spec: CurveSpec, calib: Calibration, depths: np.ndarray,
                    passes_off: frozenset[str] = frozenset()) -> np.ndarray:
    """Curve values at LAS depths: unwrapped track fraction interpolated along depth, read on the scale in force at
    each depth (``CurveSpec.scales_at``), with the values' passes (``core/digitize/rules/passes.py``;
    ``passes_off`` switches them off by name): ``off_scale``, a curve without a backup scale never reads past its
    printed scale (a position beyond the track's end is NULL), and ``far_from_column``, a depth sample takes a value
    only where a traced column lies within one pixel."""
    cols = trace.position.size
    position = trace.position
    if not spec.wrap and "off_scale" not in passes_off:
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
    near = np.interp(px, col, ok.astype(np.float64)) > 0.5 if "far_from_column" not in passes_off else True
    # a scale printed anew partway down (scale_changes) holds from its depth on, down the page
    scale = spec.scales_at(depths, calib.depth_increases_with_pixel) if spec.scale_changes else None
    return spec.value_of_fraction(np.where(inside & near, ti, np.nan), scale)


def trace_to_confidence(trace, calib: Calibration, values: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Each LAS sample's confidence in [0, 1]: its nearest column's (``Trace.confidence``: the probability the value is
    within 5 % of its scale, ``core/digitize/rules/confidence_model.py``), NaN where the value is NULL. The nearest
    column is the one the calibrator was fitted with (``core/evaluation/confidence_fit.py``)."""
    cols = trace.confidence.size
    col = np.clip(np.rint(calib.pixel_at(depths)), 0, max(cols - 1, 0)).astype(np.int64)
    out = np.asarray(trace.confidence, np.float64)[col]
    return np.where(np.isfinite(values), np.round(out, 3), np.nan)


def sample_flags(trace, spec: CurveSpec, calib: Calibration, values: np.ndarray, depths: np.ndarray,
                 passes_off: frozenset[str] = frozenset()) -> np.ndarray:
    """Each LAS sample's passes (``core/digitize/rules/passes.py``): its nearest column's (``Trace.flags``), and the
    values' own, ``off_scale`` and ``far_from_column``, where they made the sample NULL: what the warnings and the QC
    picture say of it."""
    from core.digitize.rules.passes import BIT, PASSES, Effect

    cols = trace.flags.size
    col = np.clip(np.rint(calib.pixel_at(depths)), 0, max(cols - 1, 0)).astype(np.int64)
    flags = np.asarray(trace.flags)[col].copy()
    null = ~np.isfinite(values)
    pos = trace.position[col]
    if not spec.wrap and "off_scale" not in passes_off:
        margin = OFF_SCALE_PX / max(spec.track_width, 1.0)
        with np.errstate(invalid="ignore"):
            f = spec.fraction_of(pos)
            off = np.isfinite(pos) & ~((f >= -margin) & (f <= 1.0 + margin))
        flags[null & off] |= BIT["off_scale"]
    nulling = sum(BIT[p.name] for p in PASSES if p.effect is Effect.NULL)
    if "far_from_column" not in passes_off:
        flags[null & ((flags & nulling) == 0)] |= BIT["far_from_column"]
    return flags
