"""Colour as vocabulary: ``"#rrggbb"`` parsed and written, CIELAB and ΔE, luma, the paper's colour, an ink
sampled at a point (the eyedropper, :func:`sample_ink`), whether a picture has colour at all.

Colour here is the ink colour a calibration names (``"colour": "#rrggbb"``), picked with the eyedropper or given
by hand; how an ink becomes evidence of where a curve is, is ``core/digitize/evidence/colour.py``'s.
"""

from __future__ import annotations

import re

import cv2
import numpy as np

HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
MIN_CONTRAST_DE = 12.0  # an ink closer than this to the paper cannot be told from it by colour
NEUTRAL_CHROMA = 20.0  # an ink with less chroma (a*, b*) than this is black or grey


def parse_colour(text: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` → (r, g, b); anything else raises ValueError naming the text."""
    if not isinstance(text, str) or not HEX.match(text.strip()):
        raise ValueError(f"{text!r} is not a colour: expected \"#rrggbb\" (six hex digits)")
    s = text.strip()
    return int(s[1:3], 16), int(s[3:5], 16), int(s[5:7], 16)


def hex_colour(rgb) -> str:
    r, g, b = (int(np.clip(round(float(v)), 0, 255)) for v in rgb[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def to_lab(rgb: np.ndarray) -> np.ndarray:
    """uint8 RGB (… × 3) → float32 CIELAB (L 0–100, a and b about ±127)."""
    arr = np.asarray(rgb)
    flat = arr.reshape(-1, 1, 3).astype(np.float32) / 255.0
    return cv2.cvtColor(flat, cv2.COLOR_RGB2Lab).reshape(arr.shape[:-1] + (3,))


def luma(rgb8: np.ndarray) -> np.ndarray:
    """The grey of colour pixels: Pillow's ITU-R 601 luma, as every scan has always been converted."""
    from PIL import Image

    return np.asarray(Image.fromarray(rgb8, "RGB").convert("L"), dtype=np.uint8).copy()


def lab_of(rgb) -> np.ndarray:
    """CIELAB of one colour (r, g, b), its channels taken as 8-bit values."""
    return to_lab(np.clip(np.array([rgb], np.float32), 0, 255).astype(np.uint8))[0]


def delta_e(rgb_a, rgb_b) -> float:
    """CIE76 distance between two colours given as (r, g, b)."""
    return float(np.linalg.norm(lab_of(rgb_a) - lab_of(rgb_b)))


def paper_colour(rgb: np.ndarray, sample: int = 200_000) -> np.ndarray:
    """The paper's colour (RGB float): the median of the lightest tenth of the pixels (by sum)."""
    flat = rgb.reshape(-1, 3)
    step = max(1, flat.shape[0] // sample)
    s = flat[::step].astype(np.float32)
    light = s.sum(1)
    return np.median(s[light >= np.quantile(light, 0.9)], axis=0)


def sample_ink(rgb: np.ndarray, x: float, y: float, radius: int = 4) -> tuple[int, int, int] | None:
    """The eyedropper: the ink colour at pixel (``x``, ``y``) of a scan.

    A click lands on or beside a 1–3 px stroke, so the window around it is mostly paper: the ink is the
    median of the pixels farthest from the paper's colour (the darkest or most saturated fifth). None
    when the window holds no ink (every pixel within :data:`MIN_CONTRAST_DE` of the paper)."""
    h, w = rgb.shape[:2]
    xi, yi = int(round(x)), int(round(y))
    if not (0 <= xi < w and 0 <= yi < h):
        return None
    win = rgb[max(0, yi - radius) : yi + radius + 1, max(0, xi - radius) : xi + radius + 1].reshape(-1, 3)
    paper = paper_colour(rgb[max(0, yi - 40) : yi + 41, max(0, xi - 40) : xi + 41])
    lab = to_lab(win)
    p = lab_of(paper)
    dist = np.linalg.norm(lab - p, axis=1)
    if dist.max() < MIN_CONTRAST_DE:
        return None
    far = win[dist >= np.quantile(dist, 0.8)]
    return tuple(int(v) for v in np.median(far, axis=0).round())


def has_colour(rgb: np.ndarray, spread: int = 24, share: float = 1e-3) -> bool:
    """Whether an RGB image holds colour worth keeping: more than ``share`` of its pixels (sampled) have
    channels more than ``spread`` apart. A grey scan saved as RGB is not colour."""
    flat = rgb.reshape(-1, 3)
    s = flat[:: max(1, flat.shape[0] // 500_000)].astype(np.int16)
    return float(((s.max(1) - s.min(1)) > spread).mean()) > share


def is_neutral(ink) -> bool:
    """Black or grey ink: its colour evidence cannot tell it from a grey grid, so grid damping applies."""
    lab = lab_of(ink)
    return float(np.hypot(lab[1], lab[2])) < NEUTRAL_CHROMA


