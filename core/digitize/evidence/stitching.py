"""The windows' stitching, compiled: NumPy's float32 arithmetic in its order, one pass where NumPy made a temporary of
each step.

``evidence/network.py: predict_windows`` adds each window's probabilities, weighted, into the sums of the columns it
covers (:func:`add_weighted`), and codes the columns no later window reaches (:func:`settle_columns`: the sums
normalised, each kept class's root code as ``coded_map.encode`` takes it, the class mask as ``argmax`` takes it).
On KGS's 13 windows NumPy's took 0.6 s of the evidence stage at load ~2 (2-core EPYC), between forwards, on one
core. The same codes and mask, bit for bit (``tests/core/digitize/evidence/test_stitching_kernels.py``).

Every row's arithmetic is its own, so the rows are cut into one run a thread (``threads.in_runs``) and the
runs taken at once: the work between two forwards, when PyTorch's threads have nothing to do, on every core.
Which thread takes which rows changes no value.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from core.common.threads import in_runs
from core.digitize.evidence.coded_map import TOP


def add_weighted(acc, p, wt, offset) -> None:
    """``acc[..., offset : offset + len(wt)] += p * wt``: each product rounded to float32, then the sum."""
    in_runs(lambda r0, r1: _add_weighted_rows(acc, p, wt, offset, r0, r1), p.shape[1], pool="stitch")


def settle_columns(acc, wsum, n, coded_classes, codes, mask, binary) -> None:
    """The first ``n`` columns of the stitched sums, coded: ``acc / max(wsum, 1e-12)`` (float32), each kept
    class's codes (``coded_classes[i]`` into ``codes[i]``) and the class mask (a binary model's p > 0.5, else the
    first most probable class, as ``argmax`` takes it)."""
    in_runs(lambda r0, r1: _settle_rows(acc, wsum, n, coded_classes, codes, mask, binary, r0, r1), acc.shape[1],
            pool="stitch")


@njit(cache=True, nogil=True, error_model="numpy")
def _add_weighted_rows(acc, p, wt, offset, r0, r1):
    """:func:`add_weighted` over rows [r0, r1)."""
    for c in range(p.shape[0]):
        for r in range(r0, r1):
            for j in range(p.shape[2]):
                acc[c, r, offset + j] += p[c, r, j] * wt[j]


@njit(cache=True, nogil=True, error_model="numpy")
def code(p):
    """``coded_map.encode`` of one float32 probability: clipped to [0, 1], its float32 root × 65,535, rounded to
    nearest even."""
    if p < 0:
        p = np.float32(0.0)
    elif p > 1:
        p = np.float32(1.0)
    return np.uint16(np.rint(np.sqrt(p) * np.float32(TOP)))


@njit(cache=True, nogil=True, error_model="numpy")
def _settle_rows(acc, wsum, n, coded_classes, codes, mask, binary, r0, r1):
    """:func:`settle_columns` over rows [r0, r1)."""
    classes = acc.shape[0]
    floor = np.float32(1e-12)
    d = np.empty(n, np.float32)
    for j in range(n):
        d[j] = wsum[j] if (wsum[j] >= floor or np.isnan(wsum[j])) else floor  # np.maximum's
    probs = np.empty((classes, n), np.float32)
    top = np.empty(n, np.float32)
    best = np.empty(n, np.uint8)
    for r in range(r0, r1):
        for c in range(classes):
            for j in range(n):
                probs[c, j] = acc[c, r, j] / d[j]
        for i in range(len(codes)):
            out = codes[i]
            c = coded_classes[i]
            for j in range(n):
                out[r, j] = code(probs[c, j])
        if binary:
            for j in range(n):
                mask[r, j] = 1 if probs[0, j] > np.float32(0.5) else 0
            continue
        top[:] = probs[0]
        best[:] = 0
        for c in range(1, classes):
            for j in range(n):
                v = probs[c, j]
                if v > top[j] or (v != v and top[j] == top[j]):  # argmax's: the first NaN, else the first max
                    top[j] = v
                    best[j] = c
        mask[r, :n] = best
