"""Runs of True in a boolean array: the one place the start/stop idiom lives."""

from __future__ import annotations

import numpy as np


def true_runs(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and stops (exclusive) of the maximal runs of True in a 1-D boolean array."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], np.asarray(flags, bool).astype(np.int8), [0]])))
    return edges[::2], edges[1::2]
