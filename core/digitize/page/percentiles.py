"""A percentile of every row or every column of a page's map, the value ``np.percentile`` gives, bit for bit.

The grid's profiles (``grid.py``) are percentiles of the darkness map along each row of a window and across each
column of a track: on KGS 30 million pixels each way, 0.27 s of its 0.55-s page stage in ``np.percentile``, which
copies the map and partitions every lane in full (issue #64, tenth round). A darkness map is mostly paper, and
paper is exactly 0 (``ink.ink_map`` clips below the median): 90 % of KGS's pixels, so the 65th percentile of 94 %
of its rows and the 40th of 95 % of its tracks' columns are 0. Here each lane's zeros (and values below zero) are
counted in one pass; a rank that falls among the zeros is 0 with no selection, and only the other lanes' non-zero
values are copied out and selected (quickselect). (The page stage's percentiles of bytes, ``sections.py``'s 32 a
KGS read, take 3 ms in all: NumPy keeps them.)

The values are NumPy's: an order statistic is the value it is whatever finds it, and the two are interpolated by
NumPy's own arithmetic (``_lerp`` of its default ``linear`` method, the weight a Python float as ``np.percentile``
makes it for a scalar ``q``). The one place order statistics are not unique is a lane that holds both +0.0 and
-0.0 (they compare equal, and which one NumPy's partition leaves is its own); such a lane, and a lane with a NaN,
is handed to ``np.percentile`` itself. ``tests/core/digitize/page/test_percentiles.py`` holds the values equal on
random data of every shape, dtype and ``q``, ties and one-element lanes among them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_SELECTED = (np.float32, np.float64)  # the dtypes whose ranks are selected here


def percentile(x: np.ndarray, q: float, axis: int) -> np.ndarray:
    """``np.percentile(x, q, axis=axis)`` for a 1-D or 2-D float32 or float64 array ``x`` and a scalar ``q`` (a
    Python int or float in [0, 100]), NumPy's default method: the same dtype, shape and bits. Other inputs (a ``q``
    sequence, another dtype, more dimensions) go to ``np.percentile``."""
    x = np.asarray(x)
    if (type(q) not in (int, float) or not 0 <= q <= 100 or x.ndim not in (1, 2) or x.size == 0
            or x.dtype.type not in _SELECTED):
        return np.percentile(x, q, axis=axis)
    if x.ndim == 1:
        return percentile(x[None, :], q, axis=1)[0]
    axis = axis % 2
    n = x.shape[axis]
    lo, hi, gamma = _ranks(n, q)
    if axis == 1:
        prev, nxt, fallback = _selected_rows(x, lo, hi)
    else:
        prev, nxt, fallback = _selected_cols(x, lo, hi)
    out = _lerp(prev, nxt, gamma)
    if fallback.size:
        out[fallback] = np.percentile(x[fallback] if axis == 1 else x[:, fallback], q, axis=axis)
    return out


def _ranks(n: int, q: float) -> tuple[int, int, float]:
    """The ranks either side of the ``q``-th percentile of ``n`` values and the weight between them, as
    ``numpy.lib._function_base_impl._quantile`` computes them (its ``linear`` method): the virtual index
    (n − 1)·(q / 100) in float64; at or beyond the last value both ranks are the last and the weight is taken from
    NumPy's index −1 (the virtual index + 1), which its interpolation then multiplies by zero."""
    virtual = (n - 1) * np.true_divide(q, 100)
    if virtual >= n - 1:
        return n - 1, n - 1, float(virtual - (-1))
    lo = int(math.floor(virtual))
    return lo, lo + 1, float(virtual - lo)


def _lerp(prev: np.ndarray, nxt: np.ndarray, t: float) -> np.ndarray:
    """NumPy's ``_lerp`` with a Python-float weight (``np.percentile``'s for a scalar ``q``), the same operations
    in the same dtypes: from the lower value up by ``t``, or from the upper value down by 1 − ``t`` where ``t`` is
    at least one half."""
    diff = nxt - prev
    out = np.add(prev, diff * t)
    np.subtract(nxt, diff * (1 - t), out=out, where=t >= 0.5, casting="unsafe", dtype=type(out.dtype))
    return out


@njit(cache=True, nogil=True)
def _select(a, m, r):
    """The value of rank ``r`` among ``a[:m]`` (no NaN), moving it to ``a[r]`` with no greater value before it:
    Hoare's partition about a median of three, the rest sorted where a lane's values defeat the pivots."""
    lo, hi = 0, m - 1
    rounds = 0
    while hi > lo:
        if rounds > 64:
            a[lo : hi + 1] = np.sort(a[lo : hi + 1])
            break
        rounds += 1
        mid = (lo + hi) // 2
        x, y, z = a[lo], a[mid], a[hi]
        pivot = max(min(x, y), min(max(x, y), z))
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if r <= j:
            hi = j
        elif r >= i:
            lo = i
        else:
            break  # a[j + 1 : i] all equal the pivot, a[r] among them
    return a[r]


@njit(cache=True, nogil=True)
def _lane_pair(scratch, m, below, zeros, lo, hi, zero):
    """The values of ranks ``lo`` and ``hi`` (``hi`` is ``lo`` or ``lo + 1``) of a lane of ``below`` values under
    zero, ``zeros`` zeros and ``m - below`` values above zero, its non-zero values in ``scratch[:m]`` (reordered):
    ``zero`` for a rank among the zeros, else its rank among the non-zero values selected. Two neighbouring ranks
    off the zeros are neighbours in ``scratch`` too: the lower is the greatest value left of the upper's place."""
    lo_zero = below <= lo < below + zeros
    hi_zero = below <= hi < below + zeros
    if lo_zero and hi_zero:
        return zero, zero
    at = hi if hi < below else hi - zeros
    upper = zero if hi_zero else _select(scratch, m, at)
    if lo == hi:
        return upper, upper
    if lo_zero:
        return zero, upper
    if hi_zero:
        return _select(scratch, m, lo), upper
    lower = scratch[0]
    for k in range(1, at):
        lower = max(lower, scratch[k])
    return lower, upper


@njit(cache=True, nogil=True)
def _selected_rows(x, lo, hi):
    """Ranks ``lo`` and ``hi`` of every row of ``x``; rows holding a NaN or a -0.0 are listed for NumPy."""
    rows, n = x.shape
    zero = np.zeros(1, x.dtype)[0]
    prev = np.zeros(rows, x.dtype)
    nxt = np.zeros(rows, x.dtype)
    scratch = np.empty(n, x.dtype)
    fallback = np.zeros(rows, np.bool_)
    for r in range(rows):
        below = 0
        zeros = 0
        m = 0
        for c in range(n):
            v = x[r, c]
            if v == 0:
                zeros += 1
                if np.signbit(v):
                    fallback[r] = True
            elif v != v:
                fallback[r] = True
            else:
                if v < 0:
                    below += 1
                scratch[m] = v
                m += 1
        if not fallback[r]:
            prev[r], nxt[r] = _lane_pair(scratch, m, below, zeros, lo, hi, zero)
    return prev, nxt, np.flatnonzero(fallback)


@njit(cache=True, nogil=True)
def _selected_cols(x, lo, hi):
    """Ranks ``lo`` and ``hi`` of every column of ``x``: zeros and values under zero counted row by row (the map's
    own order in memory), then the columns with a rank off the zeros gathered and selected."""
    n, cols = x.shape
    zero = np.zeros(1, x.dtype)[0]
    zeros = np.zeros(cols, np.int64)
    below = np.zeros(cols, np.int64)
    fallback = np.zeros(cols, np.bool_)
    for r in range(n):
        for c in range(cols):
            v = x[r, c]
            if v == 0:
                zeros[c] += 1
                if np.signbit(v):
                    fallback[c] = True
            elif v != v:
                fallback[c] = True
            elif v < 0:
                below[c] += 1
    prev = np.zeros(cols, x.dtype)
    nxt = np.zeros(cols, x.dtype)
    scratch = np.empty(n, x.dtype)
    for c in range(cols):
        if fallback[c] or (below[c] <= lo and hi < below[c] + zeros[c]):
            continue  # both ranks among the zeros: 0 and 0
        m = 0
        for r in range(n):
            v = x[r, c]
            if v != 0:
                scratch[m] = v
                m += 1
        prev[c], nxt[c] = _lane_pair(scratch, m, below[c], zeros[c], lo, hi, zero)
    return prev, nxt, np.flatnonzero(fallback)
