"""The ink map (core/digitize/page/ink.py) written over the paper tone in pieces over the page's threads is the
NumPy of before bit for bit: pages of bytes and of floats, large enough to pool the paper tone and too small to,
a blank page (its stretch a Python float), at one and at two threads."""

import cv2
import numpy as np
import pytest

from core.common.threads import set_work_threads
from core.digitize.page.ink import ink_map


@pytest.fixture(autouse=True)
def _default_threads():
    set_work_threads(None)
    yield
    set_work_threads(None)


def _ink_map_numpy(img: np.ndarray) -> np.ndarray:
    """ink_map as it was: a float copy of the scan, its dilation at full resolution, five passes over the map."""
    g = img.astype(np.float32)
    k = max(15, (min(img.shape) // 8) | 1)
    h, w = g.shape
    f = max(1, k // 16)
    if f > 1:
        pooled = cv2.dilate(g, np.ones((f, f), np.uint8))[f // 2 :: f, f // 2 :: f]
        kk = max(3, (k // f) | 1)
        small = cv2.dilate(pooled, cv2.getStructuringElement(cv2.MORPH_RECT, (kk, kk)))
        small = cv2.GaussianBlur(small, (0, 0), kk / 3)
        paper = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    else:
        paper = cv2.GaussianBlur(cv2.dilate(g, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))), (0, 0), k / 3)
    dark = np.subtract(paper, g, out=g)
    dark /= np.maximum(paper, 1.0, out=paper)
    np.clip(dark, 0.0, 1.0, out=dark)
    step = max(1, int(np.sqrt(dark.size / 2_000_000)))
    lo, hi = np.percentile(dark[::step, ::step], [50, 99.7])
    dark -= lo
    dark /= max(hi - lo, 1e-3)
    return np.clip(dark, 0.0, 1.0, out=dark)


def _pages():
    rng = np.random.default_rng(7)
    # a shaded page with lines and a wandering curve, large enough to pool the paper (k // 16 > 1) and not square
    rows, cols = 420, 2900
    shade = np.linspace(200, 245, cols)[None, :] - np.linspace(0, 25, rows)[:, None]
    page = shade + rng.normal(0, 3, (rows, cols))
    page[::37] = 40
    curve = (rows / 2 + 120 * np.sin(np.arange(cols) / 90.0)).astype(int)
    page[curve, np.arange(cols)] = 15
    page = np.clip(page, 0, 255).astype(np.uint8)
    yield page
    yield np.ascontiguousarray(page.T)  # tall
    yield page[:, 5:2405]  # a view, not contiguous
    yield page.astype(np.float32) / 1.7  # floats
    yield page[:200, :300]  # too small to pool: the full-resolution paper tone
    yield np.full((300, 900), 231, np.uint8)  # blank: the stretch is NumPy's 1e-3, a Python float
    noise = rng.integers(0, 256, (2500, 1300)).astype(np.uint8)
    yield noise  # more than two million pixels: the percentiles of a sample


@pytest.mark.parametrize("threads", [1, 2])
def test_the_ink_map_is_the_numpy_one(threads):
    set_work_threads(threads)
    for page in _pages():
        got, want = ink_map(page), _ink_map_numpy(page)
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
