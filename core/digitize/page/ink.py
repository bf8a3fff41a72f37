"""The scan's ink: darkness relative to the local paper tone, what the grid, the tracks and the pens are read from."""

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

