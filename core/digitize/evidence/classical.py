"""The classical tracer: no model, dark-ink extraction with grid-line suppression.

It is the first pass that pre-fills masks in the GUI and the baseline the
network must beat. Grid lines are long straight runs: along depth (amplitude
grid lines, track borders) and across the tracks (depth lines); a
morphological opening with a long line element finds them, and they are
removed from the ink. Works in the canonical frame.
"""

from __future__ import annotations

import cv2
import numpy as np

from core.digitize.page.ink import ink_map


def suppress_grid(ink: np.ndarray, along_len: int = 151, across_frac: float = 0.5, keep: float = 0.35) -> np.ndarray:
    """Weaken long straight runs along both axes (rows = across, columns = along depth) to ``keep`` of
    their ink: weak enough that a wiggling curve outranks them, strong enough that a curve lying on a
    grid line for a stretch still counts as seen there (the tracer's grid damping does the rest)."""
    binary = (ink > 0.35).astype(np.uint8)
    along = cv2.morphologyEx(binary, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (along_len, 1)))
    across_len = max(15, int(ink.shape[0] * across_frac) // 4)
    across = cv2.morphologyEx(binary, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (1, across_len)))
    grid = cv2.dilate(np.maximum(along, across), np.ones((3, 3), np.uint8))
    return np.where(grid > 0, keep * ink, ink).astype(np.float32)


def evidence(img: np.ndarray) -> np.ndarray:
    """Curve evidence in [0, 1] for a canonical uint8 image."""
    ev = suppress_grid(ink_map(img))
    return cv2.GaussianBlur(ev, (0, 0), 0.8)


def mask(img: np.ndarray, threshold: float = 0.4) -> np.ndarray:
    """A class-1 pre-fill mask (canonical frame) from the classical evidence."""
    return (evidence(img) > threshold).astype(np.uint8)
