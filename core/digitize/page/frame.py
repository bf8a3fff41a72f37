"""The canonical frame every engine stage works in: rows across the track, columns along depth.

Scans come tall (depth down the rows, ``depth_axis == "y"``) or wide (depth along the columns); the network,
the grid detector and the tracers all read the wide layout, so a tall scan is turned on its side once on the
way in and back on the way out. Its own module, below both the training data and the tracing, so neither
imports the other for it.
"""

from __future__ import annotations

import numpy as np


def to_canonical(arr: np.ndarray, depth_axis: str) -> np.ndarray:
    """Tall (depth down the rows) → wide (depth along the columns); a colour image keeps its channels last."""
    return np.ascontiguousarray(arr.swapaxes(0, 1)) if depth_axis == "y" else arr


def from_canonical(arr: np.ndarray, depth_axis: str) -> np.ndarray:
    """Wide → the scan's own layout (the inverse of :func:`to_canonical`)."""
    return np.ascontiguousarray(arr.swapaxes(0, 1)) if depth_axis == "y" else arr
