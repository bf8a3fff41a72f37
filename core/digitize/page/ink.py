"""The scan's ink: darkness relative to the local paper tone, what the grid, the tracks and the pens are read from."""

from __future__ import annotations

import cv2
import numpy as np

from core.common.threads import in_order, work_threads

POOL = "page"  # the page stage's threads (``grid.POOL``)


def paper_tone(g: np.ndarray, k: int) -> np.ndarray:
    """The local paper tone: the brightest value within ``k`` pixels, smoothed over ``k / 3`` (float32).

    It varies over hundreds of pixels, so it is computed at 1/f of the resolution (max-pooled first, so
    paper stays the brightest value) and scaled back: the full-resolution blur alone took 9 s on a
    30-megapixel scan. ``g``: the grey picture, bytes or float32; the pooling is taken in its own dtype (the
    maximum of bytes is the maximum of their floats), so a scan's bytes need no float copy for it."""
    h, w = g.shape
    f = max(1, k // 16)
    if f > 1:
        pooled = cv2.dilate(g, np.ones((f, f), np.uint8))[f // 2 :: f, f // 2 :: f].astype(np.float32)
        kk = max(3, (k // f) | 1)
        small = cv2.dilate(pooled, cv2.getStructuringElement(cv2.MORPH_RECT, (kk, kk)))
        small = cv2.GaussianBlur(small, (0, 0), kk / 3)
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    paper = cv2.dilate(g.astype(np.float32), cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    return cv2.GaussianBlur(paper, (0, 0), k / 3)


def ink_map(img: np.ndarray) -> np.ndarray:
    """Darkness in [0, 1] relative to the local paper tone (handles uneven illumination), float32.

    The darkness (paper − grey) / paper, clipped to [0, 1], is stretched so its median is 0 (paper) and its
    99.7th percentile 1 (the ink), then clipped again. It is written over the paper tone's own map, a few rows at
    a time (``_stretched``): the NumPy of before made a float copy of the scan and a float dilation of it, and
    took five passes over the whole map (KGS, a fresh process on the loaded 2-core EPYC: three float maps of 119 MB
    faulted in, 0.66-1.23 s, against 0.15-0.44 s now in three runs of four; docs/benchmarks.md, issue #64, tenth
    round). The operations are that NumPy's, element for element in the same
    dtypes, so the values are the same bits (``tests/core/digitize/page/test_ink.py``)."""
    grey = img if img.dtype == np.uint8 else img.astype(np.float32)  # what the darkness is taken of, as before
    k = max(15, (min(grey.shape) // 8) | 1)
    paper = paper_tone(grey, k)
    step = max(1, int(np.sqrt(grey.size / 2_000_000)))  # percentiles of ~2 million pixels are as good as all
    sample = paper[::step, ::step].copy()
    _darkness(sample, grey[::step, ::step])
    lo, hi = np.percentile(sample, [50, 99.7])
    span = max(hi - lo, 1e-3)
    rows = paper.shape[0]
    blocks = max(1, min(rows, 2 * work_threads()))
    cuts = np.linspace(0, rows, blocks + 1).round().astype(np.int64).tolist()
    in_order(lambda cut: _stretched(paper, grey, cut[0], cut[1], lo, span), list(zip(cuts[:-1], cuts[1:])), pool=POOL)
    return paper


CHUNK_PX = 1 << 16  # a piece of the map that stays in a core's cache through every step


def _darkness(paper: np.ndarray, grey: np.ndarray) -> np.ndarray:
    """(paper − grey) / max(paper, 1), clipped to [0, 1], over ``paper`` (in place)."""
    floor = np.maximum(paper, 1.0)
    np.subtract(paper, grey, out=paper)
    paper /= floor
    return np.clip(paper, 0.0, 1.0, out=paper)


def _stretched(paper: np.ndarray, grey: np.ndarray, r0: int, r1: int, lo, span) -> None:
    """Rows [r0, r1) of ``paper`` become the stretched darkness (:func:`ink_map`), ``CHUNK_PX`` pixels at a time.
    ``lo`` and ``span`` keep their types: NumPy divides a float32 map by a NumPy float64 in float64 and by a
    Python float in float32."""
    step = max(1, CHUNK_PX // max(1, paper.shape[1]))
    for a in range(r0, r1, step):
        b = min(r1, a + step)
        dark = _darkness(paper[a:b], grey[a:b])
        dark -= lo
        dark /= span
        np.clip(dark, 0.0, 1.0, out=dark)
