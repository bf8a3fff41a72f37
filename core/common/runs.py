"""Runs of True in a boolean array: the one place the start/stop idiom lives."""

from __future__ import annotations

import numpy as np


def true_runs(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and stops (exclusive) of the maximal runs of True in a 1-D boolean array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], np.asarray(flags, bool).astype(np.int8), [0]])))
    return edges[::2], edges[1::2]


def distance_to_true(flags: np.ndarray) -> np.ndarray:
    """Per index, how far the nearest True of a 1-D boolean array is (beyond its length where none is)."""
    observed = np.asarray(flags, bool)
    n = observed.size
    big = n + 1
    idx = np.arange(n)
    last = np.where(observed, idx, -big)
    last = np.maximum.accumulate(last)
    nxt = np.where(observed, idx, 2 * big)
    nxt = np.minimum.accumulate(nxt[::-1])[::-1]
    return np.minimum(idx - last, nxt - idx)
