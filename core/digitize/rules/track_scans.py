"""The scans over a track's band that the signals and the pass ``unclaimed_stroke`` make, in compiled code (numba).

Both read a chunk of a style's map over a track's rows, damped by the grid, and ask of every pixel whether a traced
curve covers it: ``signals.rival_strength`` the strongest evidence no curve covers, ``unclaimed.
beside_an_unclaimed_stroke`` how many inked rows no curve covers. In NumPy each curve's cover was a mask the size of
the band (a difference, an absolute value, a comparison and a logical and per curve, or an interval table summed
along the rows): on KGS, 4 of its 6.5-s trace stage. Here one pass over the band does it per column, with the
NumPy's arithmetic (the same float64 differences and roundings, the damped value rounded to float32 where NumPy
multiplied in place), so the flags and signals are bit for bit the same
(``tests/core/digitize/rules/test_track_scans.py``).

Each reads the map where it lies: a coded map's codes, decoded pixel by pixel by its table
(``evidence/coded_map.py: compiled_reading``), and the grid's damping from the form it is spread from
(``page/grid.py: BandDamping``), a row at a time (:func:`damping_row`). Decoded and spread for every chunk of every
curve's two scans, a track's band was decoded and its float64 damping written ten times a scan (KGS: the damping
9 times over 8.9 and 17.8 megapixels, 0.3 s; the decoding as often, 0.1 s); here neither is written at all.
:func:`damped_product` is the tracer's damped band (``rules/curve.py: _damped_band``) made the same way.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from core.digitize.page.grid import BandDamping

_UNDAMPED = (False, np.zeros((1, 1)), np.zeros(1, np.int64), np.zeros((0, 1), np.float32), np.zeros(0, np.int64),
             np.zeros(0, np.int64), np.zeros(1))


def read_where_spread(damping, lo: int, hi: int) -> bool:
    """Whether the scans read ``damping`` where it is spread: a grid's band damping (``page/grid.py:
    BandDamping``) of the rows ``lo``..``hi`` (one of other rows is refused), not a function giving the factor at
    some columns, nor None."""
    if not isinstance(damping, BandDamping):
        return False
    if (damping.r0, damping.r1) != (lo, hi + 1):
        raise ValueError(f"the damping of rows {damping.r0}..{damping.r1 - 1} for a scan of rows {lo}..{hi}")
    return True


def damping_arguments(damping) -> tuple:
    """The compiled scans' damping arguments for a grid's band damping (``page/grid.py: BandDamping``), or None:
    (damped, along, window, across, lo, hi, scale)."""
    if damping is None:
        return _UNDAMPED
    return (True, np.ascontiguousarray(damping.along, np.float64), damping.window,
            np.ascontiguousarray(damping.across), damping.lo, damping.hi, np.asarray(damping.scale, np.float64))


def evidence_value(band, table, r, j):
    """The map's value at [r, j]: ``table[band[r, j]]`` for codes (an integer band), ``band[r, j]`` otherwise."""
    return table[band[r, j]] if np.issubdtype(band.dtype, np.integer) else band[r, j]


@overload(evidence_value, jit_options={"nogil": True})
def _evidence_value(band, table, r, j):
    if isinstance(band.dtype, types.Integer):
        return lambda band, table, r, j: table[band[r, j]]
    return lambda band, table, r, j: band[r, j]


@njit(cache=True, nogil=True, error_model="numpy")
def damping_row(along, window, across, lo, hi, scale, r, c0, line, out):
    """The grid's damping at row ``r`` of a band (``page/grid.py: BandDamping``'s arrays), columns ``c0`` … ``c0 +
    out.size − 1``, into ``out``: the values ``_spread_lines`` spreads (the lines' maximum taken in float64 in
    ``line``, then 1 − ``scale`` · that in ``out``'s dtype), one row at a time."""
    one = np.ones(1, out.dtype)[0]
    k = scale[0]
    n = out.size
    for j in range(n):
        line[j] = along[r, window[c0 + j]]
    for b in range(lo.size):
        if lo[b] <= r < hi[b]:
            for j in range(n):
                line[j] = max(line[j], np.float64(across[b, c0 + j]))
    for j in range(n):
        out[j] = line[j]
        out[j] = one - k * out[j]


@njit(cache=True, nogil=True, error_model="numpy")
def strongest_uncovered(band, table, damped, along, window, across, dlo, dhi, scale, c0, positions, lo, keep_px, out):
    """Per column j of ``band`` (rows × columns: the map's rows ``lo``… of a track, columns ``c0``…; codes decoded by
    ``table``, or float32 values), the largest value at the rows no curve covers, 0 counted for a covered row
    (``out``, float32). A curve at row q of ``positions[k, j]`` (NaN: none) covers the rows ceil(q − ``keep_px``) …
    floor(q + ``keep_px``). With ``damped``, each value is first multiplied by the grid's damping there (float64,
    :func:`damping_row` of the band's rows from ``along``… ``scale``) and rounded to float32."""
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
    line = np.empty(n)
    factor = np.ones(n)
    value = np.empty(n, np.float32)
    for r in range(height):  # a row at a time, in loops the compiler vectorises: 25 % less than pixel by pixel
        for j in range(n):
            value[j] = np.float32(evidence_value(band, table, r, j))
        if damped:
            damping_row(along, window, across, dlo, dhi, scale, r, c0, line, factor)
            for j in range(n):
                value[j] = np.float32(np.float64(value[j]) * factor[j])
        for c in range(k):
            for j in range(n):
                if first[c, j] <= r and r < past[c, j]:
                    value[j] = np.float32(0.0)
        for j in range(n):
            if r == 0 or value[j] > out[j]:
                out[j] = value[j]


@njit(cache=True, nogil=True, error_model="numpy")
def uncovered_ink_rows(band, table, damped, along, window, across, dlo, dhi, scale, c0, threshold, positions, lo,
                       claim_px, out):
    """Per column j of ``band`` (rows × columns: the map's rows ``lo``… of a track, columns ``c0``…; codes decoded by
    ``table``, or values), how many rows hold ink (the value, times the grid's damping there in float64 where
    ``damped``, :func:`damping_row`, at ``threshold`` or above) farther than ``claim_px`` from every curve of
    ``positions[k, j]`` (NaN: none), added into ``out``."""
    height, n = band.shape
    k = positions.shape[0]
    line = np.empty(n)
    factor = np.ones(n)
    for r in range(height):
        row = np.float64(np.float32(lo + r))
        if damped:
            damping_row(along, window, across, dlo, dhi, scale, r, c0, line, factor)
        for j in range(n):
            v = np.float64(evidence_value(band, table, r, j))
            if damped:
                v = v * factor[j]
            if not v >= threshold:
                continue
            covered = False
            for c in range(k):
                if abs(row - positions[c, j]) <= claim_px:  # NaN compares False: a NULL curve covers nothing
                    covered = True
                    break
            if not covered:
                out[j] += 1


@njit(cache=True, nogil=True, error_model="numpy")
def damped_product(band, table, along, window, across, dlo, dhi, scale, out):
    """``out`` (float64, rows × columns): each value of ``band`` (codes decoded by ``table``, or float32 values) times
    the grid's damping there (:func:`damping_row`, the band's rows from its first and every column), as NumPy
    multiplies a float32 band by a float64 damping."""
    height, n = band.shape
    line = np.empty(n)
    factor = np.empty(n)
    for r in range(height):
        damping_row(along, window, across, dlo, dhi, scale, r, 0, line, factor)
        for j in range(n):
            out[r, j] = np.float64(np.float32(evidence_value(band, table, r, j))) * factor[j]


@njit(cache=True, nogil=True, error_model="numpy")
def merged_damped_product(own, extras, weights, table, along, window, across, dlo, dhi, scale, out):
    """:func:`damped_product` of a style's map with the unclaimed styles' added (``evidence/style.py:
    MergedEvidence``), from their codes (``own`` and each of ``extras``, decoded by ``table``): per pixel the merged
    value as NumPy sums it in float32 (the own value, plus ``weights[e]`` · each extra's, at most 1), times the grid's
    damping there in float64. One pass, where NumPy decoded, copied, weighed and added band-sized arrays."""
    height, n = own.shape
    line = np.empty(n)
    factor = np.empty(n)
    one = np.float32(1.0)
    for r in range(height):
        damping_row(along, window, across, dlo, dhi, scale, r, 0, line, factor)
        for j in range(n):
            v = table[own[r, j]]
            for e in range(len(extras)):
                v = v + weights[e] * table[extras[e][r, j]]
            out[r, j] = np.float64(min(v, one)) * factor[j]
