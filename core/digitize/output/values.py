"""A trace's values and confidences on the LAS depth grid."""

from __future__ import annotations

import numpy as np

from core.digitize.trace.params import Trace
from core.io.calibration import Calibration, CurveSpec

OFF_SCALE_PX = 1.5  # how far past its track's end a curve without a backup scale may read (a pen's half width)


def trace_to_values(trace: Trace, spec: CurveSpec, calib: Calibration, depths: np.ndarray) -> np.ndarray:
    """Curve values at LAS depths: unwrapped track fraction interpolated along depth, read on the scale in force at
    each depth (``CurveSpec.scales_at``). A curve without a backup scale never reads past its printed scale: a
    position beyond the track's end is NULL."""
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
    # a scale printed anew partway down (scale_changes) holds from its depth on, down the page
    scale = spec.scales_at(depths, calib.depth_increases_with_pixel) if spec.scale_changes else None
    return spec.value_of_fraction(np.where(inside & near, ti, np.nan), scale)


def trace_to_confidence(trace, calib: Calibration, values: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Each LAS sample's confidence in [0, 1] (``column_confidence``; the least of the two columns it lies
    between), NaN where the value is NULL."""
    cols = trace.confidence.size
    px = np.clip(calib.pixel_at(depths), 0, max(cols - 1, 0))
    conf = np.asarray(trace.confidence, np.float64)
    lo = np.floor(px).astype(np.int64)
    hi = np.minimum(lo + 1, cols - 1)
    out = np.minimum(conf[lo], conf[hi])
    return np.where(np.isfinite(values), np.round(out, 3), np.nan)

