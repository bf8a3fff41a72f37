"""The depth scales a log is printed at: whether a proposed scale (pixels per foot or metre) is one of them at the
scan's resolution, or, without a resolution, a physical one.

The fit (``depth_fit.py``), the split of a section into passes (``log_passes.py``) and the naming of a repeat
pass (a repeat is printed at its main pass's scale) all hold a line of labels to these scales.
"""

from __future__ import annotations

# the depth scales logs are printed at (1:240 is 5 in per 100 ft, 1:600 2 in, 1:1200 1 in; 1:12000, 0.1 in per
# 100 ft, the compressed summary a cement-evaluation print adds: 4 of the archive's 36 scans): a proposed scale
# must be one of them at the scan's resolution, within the stretch of paper and scanner
STANDARD_SCALES = (200, 240, 500, 600, 1000, 1200, 12000)
SCALE_TOLERANCE = 0.06
PX_PER_FT_BOUNDS = (0.2, 200.0)  # without a resolution: from 1:1200 at 20 dpi to 1:200 at 3,000 dpi


def scale_check(px_per_unit: float, dpi: float | None, unit: str = "FT") -> str | None:
    """None when ``px_per_unit`` is a standard log scale at ``dpi`` (any resolution: a physical bound), else
    why not."""
    per_ft = px_per_unit * (0.3048 if unit == "M" else 1.0)
    if dpi:
        inch_per_unit = 12.0 if unit == "FT" else 1.0 / 0.0254
        near = [r for r in STANDARD_SCALES if abs(px_per_unit / (dpi * inch_per_unit / r) - 1.0) <= SCALE_TOLERANCE]
        if near:
            return None
        return (f"{px_per_unit:.3g} px per {unit.lower()} is no standard depth scale at {dpi:.0f} dpi (1:"
                + ", 1:".join(str(r) for r in STANDARD_SCALES) + " would be "
                + ", ".join(f"{dpi * inch_per_unit / r:.3g}" for r in STANDARD_SCALES) + ")")
    lo, hi = PX_PER_FT_BOUNDS
    if lo <= per_ft <= hi:
        return None
    return f"{per_ft:.3g} px per ft is no physical depth scale (between {lo:g} and {hi:g} at any resolution)"


def plausible_slope(dpi: float | None, unit: str):
    """A filter on a line's slope (depth per pixel): depths increasing down the log, at a standard scale."""
    return lambda b: b > 0 and scale_check(1.0 / b, dpi, unit) is None
