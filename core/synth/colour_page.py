"""Colour prints: inks per curve, a coloured grid, lithology shading, faded colour, colour JPEG.

Modern prints and digital-born rasters draw each curve in its own ink on a
coloured grid (green, orange, blue …), often with shading between a curve and
the track edge (sand yellow, shale green). The grey families cannot teach a
tracer that colour tells curves apart, nor test it; this module composites
the same ink layers the grey page uses (``page.py``) in colour. The class
mask is unchanged: colour is evidence of *which* curve, not of line style.
"""

from __future__ import annotations

import io

import cv2
import numpy as np
from PIL import Image

from . import artefacts as art

# Inks of colour log prints (sRGB): distinct hues and a black, so that any two in one track differ by ΔE > 40
INKS = {
    "red": (205, 30, 35), "blue": (25, 70, 195), "green": (15, 135, 55), "purple": (125, 45, 155),
    "black": (25, 25, 30), "orange": (230, 120, 10), "brown": (125, 70, 30), "magenta": (205, 30, 145),
    "teal": (0, 130, 140),
}
GRIDS = ((110, 185, 120), (235, 150, 95), (125, 165, 225), (225, 125, 125), (160, 160, 160), (205, 175, 95))
FILLS = ((250, 225, 105), (165, 205, 145), (205, 205, 205), (235, 185, 140), (150, 195, 235))


def ink_palette(count: int, rng: np.random.Generator, grid_rgb: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """``count`` inks in print order, neighbours distinct, none close to the grid's colour."""
    from core.io.colour import delta_e

    names = [n for n in rng.permutation(list(INKS)) if delta_e(INKS[n], grid_rgb) > 35.0]
    return [INKS[names[i % len(names)]] for i in range(count)]


def grid_colour(rng: np.random.Generator) -> tuple[int, int, int]:
    return GRIDS[int(rng.integers(len(GRIDS)))]


def fill_layer(shape: tuple[int, int], track: tuple[float, float], position: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:
    """Shading between a curve and one edge of its track (a "sand" or "shale" fill), as coverage in [0, 1]."""
    cols = np.arange(shape[1], dtype=np.float32)[None, :]
    pos = np.nan_to_num(position, nan=track[0]).astype(np.float32)[:, None]
    left, right = min(track), max(track)
    if rng.random() < 0.5:  # from the left edge to the curve
        inside = (cols >= left) & (cols <= np.clip(pos, left, right))
    else:
        inside = (cols <= right) & (cols >= np.clip(pos, left, right))
    return inside.astype(np.float32) * float(rng.uniform(0.25, 0.55))


def composite(paper: np.ndarray, frame: np.ndarray, grid_rgb, fills: list[tuple[np.ndarray, tuple]],
              layers: list[np.ndarray], inks: list[tuple[int, int, int]], rng: np.random.Generator) -> np.ndarray:
    """Paper (rows × cols, grey tone) → RGB float32: fills, then the grid, then each curve in its ink (a faded
    print passes faded inks: :func:`faded_inks`)."""
    tint = np.array([1.0, rng.uniform(0.97, 1.0), rng.uniform(0.90, 0.99)], np.float32)  # cream paper
    img = paper[..., None] * tint[None, None, :]
    for cover, rgb in fills:
        img = img * (1 - cover[..., None]) + np.asarray(rgb, np.float32) * cover[..., None]
    a = (frame.astype(np.float32) / 255.0)[..., None]
    img = img * (1 - a) + np.asarray(grid_rgb, np.float32) * a
    for layer, ink in zip(layers, inks):
        a = layer.astype(np.float32) / 255.0
        img = img * (1 - a[..., None]) + np.asarray(ink, np.float32) * a[..., None]
    return img


def faded_inks(inks: list[tuple[int, int, int]], rng: np.random.Generator) -> list[tuple[int, int, int]]:
    """A sun-faded or weakly printed colour log: every ink pulled towards paper white by one amount."""
    k = rng.uniform(0.1, 0.35)
    return [tuple(int(round(c + k * (245 - c))) for c in ink) for ink in inks]


def scanner(img: np.ndarray, mask: np.ndarray, rng: np.random.Generator, p: dict, applied: dict):
    """The scanner on a colour page: illumination, blur, noise, skew (same transform for all channels)."""
    grey = np.ones(img.shape[:2], np.float32)
    art.uneven_illumination(grey, rng)
    img *= grey[..., None]
    if rng.random() < p.get("blur", 0.7):
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 0.7))
        applied["blur"] = True
    img += rng.normal(0, rng.uniform(1.5, 5.0), img.shape).astype(np.float32)
    if rng.random() < p.get("skew", 0.5):
        img, mask, angle = art.skew(img, mask, rng)
        applied["skew_deg"] = round(angle, 5)
    return img, mask


def colour_jpeg(rgb8: np.ndarray, rng: np.random.Generator, quality_range=(40, 90)) -> tuple[np.ndarray, int]:
    """JPEG as scanners write colour: 4:2:0 chroma subsampling smears colour across thin lines."""
    quality = int(rng.integers(*quality_range))
    buf = io.BytesIO()
    Image.fromarray(rgb8, "RGB").save(buf, "JPEG", quality=quality, subsampling=2)
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB")).copy(), quality
