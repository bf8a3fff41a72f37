"""The straight line depth = a + b · pixel that the most printed depths agree on: RANSAC over neighbouring pairs,
then least squares through the numbers it holds.

A robust line fit, apart from what the numbers are: the section's fit (``depth_fit.py``) asks it for the line
of its labels at a plausible scale, the split into passes (``log_passes.py``) for one line after another.
Its tolerance grows with the span read (a paper-speed drift bends a long log's scale a little).
"""

from __future__ import annotations

import numpy as np

from core.digitize.calibrate.proposal_records import DepthNumber

FIT_TOLERANCE_PX = 6.0  # a number this far (in pixels along depth) from the line of the others is rejected
MAX_TOLERANCE_PX = 24.0  # the drift allowance stops here: a misread 100 px off a line is no drift
NEIGHBOUR_PAIRS = 16  # a line is proposed through each number and each of its next this many along depth


def fit_numbers(numbers: list[DepthNumber], tolerance_px: float = FIT_TOLERANCE_PX) -> float | None:
    """Mark the numbers that lie on one straight line depth = a + b · pixel (the most of them, RANSAC over
    neighbouring pairs, then least squares), in place; returns the RMS of the kept ones about it in pixels."""
    fit = fit_line(numbers, tolerance_px)
    return None if fit is None else fit[2]


def _pairs(n: int, reach: int = NEIGHBOUR_PAIRS) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), i < j ≤ i + ``reach``: each number with its next neighbours along depth."""
    i = np.repeat(np.arange(n), reach)
    j = i + np.tile(np.arange(1, reach + 1), n)
    ok = j < n
    return i[ok], j[ok]


def best_line(px: np.ndarray, val: np.ndarray, tolerance_px: float, slope_ok=None
              ) -> tuple[np.ndarray, float, float] | None:
    """(inlier mask, a, b) of the straight line depth = a + b · pixel that holds the most numbers within
    ``tolerance_px`` (ties: the smaller squared miss), its candidates drawn through neighbouring pairs (sorted
    by pixel: the numbers of one log are printed in order along it, so any two of them next to each other, or
    with fewer than :data:`NEIGHBOUR_PAIRS` misreads between, propose its line). ``slope_ok(b)``: a filter on the
    candidates' slopes (ft per pixel). Work is pairs × numbers: a mud log's 1,245 numbers fit in a fraction of a
    second, where every pair (its n² candidates against n numbers, then again at each of n steps back) ran for
    minutes."""
    order = np.argsort(px, kind="stable")
    spx, sval = px[order], val[order]
    i, j = _pairs(len(spx))
    dp, dv = spx[j] - spx[i], sval[j] - sval[i]
    ok = (dp != 0) & (dv != 0)
    i, j = i[ok], j[ok]
    if i.size == 0:
        return None
    b = (sval[j] - sval[i]) / (spx[j] - spx[i])
    a = sval[i] - b * spx[i]
    if slope_ok is not None:
        keep = np.array([bool(slope_ok(x)) for x in b]) if b.size else np.zeros(0, bool)
        a, b = a[keep], b[keep]
        if b.size == 0:
            return None
    best_key, best = None, None
    chunk = max(1, 4_000_000 // max(1, len(px)))
    for k in range(0, b.size, chunk):
        aa, bb = a[k : k + chunk, None], b[k : k + chunk, None]
        miss = np.abs(px[None, :] - (val[None, :] - aa) / bb)
        inl = miss <= tolerance_px
        count = inl.sum(axis=1)
        sse = np.where(inl, miss ** 2, 0.0).sum(axis=1)
        m = int(np.lexsort((sse, -count))[0])
        key = (int(count[m]), -float(sse[m]))
        if best_key is None or key > best_key:
            best_key, best = key, (inl[m].copy(), float(aa[m, 0]), float(bb[m, 0]))
    if best is None or best_key[0] < 2:
        return None
    return best


def fit_line(numbers: list[DepthNumber], tolerance_px: float = FIT_TOLERANCE_PX, slope_ok=None
             ) -> tuple[float, float, float] | None:
    """:func:`fit_numbers`, returning (a, b, RMS in px) of depth = a + b · pixel through the kept numbers
    (least squares through the inliers of the best line); ``slope_ok`` as in :func:`best_line`."""
    if len(numbers) < 2:
        return None
    px = np.array([n.pixel for n in numbers], np.float64)
    val = np.array([n.value for n in numbers], np.float64)
    found = best_line(px, val, tolerance_px, slope_ok)
    if found is None:
        return None
    inl = found[0]
    b, a = np.polyfit(px[inl], val[inl], 1) if np.ptp(px[inl]) > 0 else (found[2], found[1])
    resid_px = (px[inl] - (val[inl] - a) / b)
    for n, k in zip(numbers, inl):
        n.kept = bool(k)
    return float(a), float(b), float(np.sqrt(np.mean(resid_px ** 2)))


def fit_tolerance(numbers: list[DepthNumber]) -> float:
    """The fit's tolerance in pixels: a paper-speed drift bends a long log's scale a little, so it grows with the
    span read (0.3 %), up to :data:`MAX_TOLERANCE_PX`."""
    extent = numbers[-1].pixel - numbers[0].pixel if numbers else 0.0
    return max(FIT_TOLERANCE_PX, min(MAX_TOLERANCE_PX, 0.003 * extent))
