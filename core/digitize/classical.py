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


def paper_tone(g: np.ndarray, k: int) -> np.ndarray:
    """The local paper tone: the brightest value within ``k`` pixels, smoothed over ``k / 3``.

    It varies over hundreds of pixels, so it is computed at 1/f of the resolution (max-pooled first, so
    paper stays the brightest value) and scaled back: the full-resolution blur alone took 9 s on a
    30-megapixel scan."""
    h, w = g.shape
    f = max(1, k // 16)
    if f > 1:
        pooled = cv2.dilate(g, np.ones((f, f), np.uint8))[f // 2 :: f, f // 2 :: f]
        kk = max(3, (k // f) | 1)
        small = cv2.dilate(pooled, cv2.getStructuringElement(cv2.MORPH_RECT, (kk, kk)))
        small = cv2.GaussianBlur(small, (0, 0), kk / 3)
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    paper = cv2.dilate(g, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    return cv2.GaussianBlur(paper, (0, 0), k / 3)


def ink_map(img: np.ndarray) -> np.ndarray:
    """Darkness in [0, 1] relative to the local paper tone (handles uneven illumination)."""
    g = img.astype(np.float32)
    k = max(15, (min(img.shape) // 8) | 1)
    paper = paper_tone(g, k)
    # in place: two float maps of the scan at most (a 75-megapixel scan's temporaries were 1.5 GB)
    dark = np.subtract(paper, g, out=g)
    dark /= np.maximum(paper, 1.0, out=paper)
    del paper
    np.clip(dark, 0.0, 1.0, out=dark)
    step = max(1, int(np.sqrt(dark.size / 2_000_000)))  # percentiles of ~2 million pixels are as good as all
    lo, hi = np.percentile(dark[::step, ::step], [50, 99.7])
    dark -= lo
    dark /= max(hi - lo, 1e-3)
    return np.clip(dark, 0.0, 1.0, out=dark)


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
