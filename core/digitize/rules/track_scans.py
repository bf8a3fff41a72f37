"""The scans over a track's band that the signals and the pass ``unclaimed_stroke`` make, in compiled code (numba).

Both read a chunk of a style's map over a track's rows, damped by the grid, and ask of every pixel whether a traced
curve covers it: ``signals.rival_strength`` the strongest evidence no curve covers, ``unclaimed.
beside_an_unclaimed_stroke`` how many inked rows no curve covers. In NumPy each curve's cover was a mask the size of
the band (a difference, an absolute value, a comparison and a logical and per curve, or an interval table summed
along the rows): on KGS, 4 of its 6.5-s trace stage. Here one pass over the band does it per column, with the
NumPy's arithmetic (the same float64 differences and roundings, the damped value rounded to float32 where NumPy
multiplied in place), so the flags and signals are bit for bit the same
(``tests/core/digitize/rules/test_track_scans.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def strongest_uncovered(band, damping, damped, positions, lo, keep_px, out):
    """Per column j of ``band`` (rows × columns, float32: the map's rows ``lo``… of a track), the largest value at
    the rows no curve covers, 0 counted for a covered row (``out``, float32). A curve at row q of
    ``positions[k, j]`` (NaN: none) covers the rows ceil(q − ``keep_px``) … floor(q + ``keep_px``). With
    ``damped``, each value is first multiplied by ``damping[r, j]`` (float64) and rounded to float32."""
    height, n = band.shape
    k = positions.shape[0]
    first = np.zeros((k, n), np.int64)
    past = np.zeros((k, n), np.int64)
    for c in range(k):
        for j in range(n):
            q = positions[c, j]
            if math.isfinite(q):
                first[c, j] = int(min(max(np.ceil(q - keep_px) - lo, 0.0), float(height)))
                past[c, j] = int(min(max(np.floor(q + keep_px) - lo + 1, 0.0), float(height)))
    for r in range(height):
        for j in range(n):
            v = band[r, j]
            if damped:
                v = np.float32(np.float64(v) * damping[r, j])
            for c in range(k):
                if first[c, j] <= r < past[c, j]:
                    v = np.float32(0.0)
                    break
            if r == 0 or v > out[j]:
                out[j] = v


@njit(cache=True, nogil=True, error_model="numpy")
def uncovered_ink_rows(band, damping, damped, threshold, positions, lo, claim_px, out):
    """Per column j of ``band`` (rows × columns, float32: the map's rows ``lo``… of a track), how many rows hold ink
    (the value, times ``damping[r, j]`` in float64 where ``damped``, at ``threshold`` or above) farther than
    ``claim_px`` from every curve of ``positions[k, j]`` (NaN: none), added into ``out``."""
    height, n = band.shape
    k = positions.shape[0]
    for r in range(height):
        row = np.float64(np.float32(lo + r))
        for j in range(n):
            v = np.float64(band[r, j])
            if damped:
                v = v * damping[r, j]
            if not v >= threshold:
                continue
            covered = False
            for c in range(k):
                if abs(row - positions[c, j]) <= claim_px:  # NaN compares False: a NULL curve covers nothing
                    covered = True
                    break
            if not covered:
                out[j] += 1
