"""Paper and scanner artefacts for synthetic logs.

Photometric artefacts (tone, texture, illumination, blur, noise, JPEG, 1-bit
thresholding) change pixel values only. The one geometric artefact, skew, is
applied to the image and the mask with the same transform, and its size is
bounded so that the calibration (which has no rotation term) still maps truth
onto the mask within a pixel; the domain family (``randomised.py``) skews up
to half a degree for training, where only the mask must follow the ink.
"""

from __future__ import annotations

import cv2
import numpy as np


def paper(shape: tuple[int, int], rng: np.random.Generator, textured: bool) -> np.ndarray:
    """Paper tone in [0, 255] as float32, with low-frequency fibre texture."""
    tone = rng.uniform(228, 252)
    img = np.full(shape, tone, np.float32)
    if textured:
        small = rng.normal(0, 1, (max(2, shape[0] // 16), max(2, shape[1] // 16))).astype(np.float32)
        tex = cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)
        img += tex * rng.uniform(1.5, 5.0)
        fine = cv2.GaussianBlur(rng.normal(0, 1, shape).astype(np.float32), (0, 0), 0.8)
        img += fine * rng.uniform(1.0, 3.0)
    return img


def uneven_illumination(img: np.ndarray, rng: np.random.Generator) -> None:
    h, w = img.shape
    yy = np.linspace(-1, 1, h, dtype=np.float32)[:, None]
    xx = np.linspace(-1, 1, w, dtype=np.float32)[None, :]
    a, b, c = rng.normal(0, 1, 3)
    field = a * yy + b * xx + c * xx * xx
    field = (field - field.min()) / (np.ptp(field) + 1e-6)
    img *= 1.0 - rng.uniform(0.03, 0.15) * field


def blur(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 0.7))


def gaussian_noise(img: np.ndarray, rng: np.random.Generator) -> None:
    img += rng.normal(0, rng.uniform(2.0, 7.0), img.shape).astype(np.float32)


def salt_and_pepper(img: np.ndarray, rng: np.random.Generator) -> None:
    frac = rng.uniform(1e-4, 8e-4)
    n = int(frac * img.size)
    ys = rng.integers(0, img.shape[0], n)
    xs = rng.integers(0, img.shape[1], n)
    img[ys[: n // 2], xs[: n // 2]] = rng.uniform(0, 60)
    img[ys[n // 2 :], xs[n // 2 :]] = 255.0


def speckle(img: np.ndarray, rng: np.random.Generator) -> None:
    """Toner specks and dust of a copied page: small dark blots of 1-4 px, a few hundred to a few thousand a
    page, some as dark as a pen. Unlike salt and pepper they are round and larger than a pixel, so a dotted
    curve's dots have look-alikes the network must tell apart by their arrangement along a line."""
    h, w = img.shape
    n = int(rng.uniform(2e-4, 2e-3) * h * w / 16)
    ys, xs = rng.integers(0, h, n), rng.integers(0, w, n)
    radii, tones = rng.uniform(0.5, 2.0, n), rng.uniform(0, 140, n)
    for y, x, r, t in zip(ys, xs, radii, tones):
        cv2.circle(img, (int(x), int(y)), int(round(r)), float(t), -1, cv2.LINE_AA)


def skew(img: np.ndarray, mask: np.ndarray, rng: np.random.Generator, max_shift_px: float = 0.8):
    """Rotate slightly about the centre; no point moves more than ``max_shift_px``."""
    h, w = img.shape[:2]
    half_diag = 0.5 * float(np.hypot(h, w))
    max_angle = np.degrees(max_shift_px / half_diag)
    angle = rng.uniform(-max_angle, max_angle)
    m = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle, 1.0)
    img = cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    mask = cv2.warpAffine(mask, m, (w, h), flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return img, mask, float(angle)


def jpeg(img8: np.ndarray, rng: np.random.Generator, quality_range: tuple[int, int] = (35, 86)) -> tuple[np.ndarray, int]:
    quality = int(rng.integers(*quality_range))
    ok, buf = cv2.imencode(".jpg", img8, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        return img8, 100
    return cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE), quality


def bilevel(img8: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Fax/G4-like 1-bit scan: a global threshold, 0 or 255 only.

    The threshold is set from the page's own paper tone (its median), as a scanner's auto-threshold is:
    a fixed one turns a washed-out grey copy (paper at 170–215) into a black page."""
    paper = float(np.median(img8))
    thr = int(round(paper * rng.uniform(0.62, 0.8)))
    return np.where(img8 < thr, 0, 255).astype(np.uint8), thr


def ink_dropout(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A worn print's ink lost in patches (a dry pen, a worn ribbon, a copy of a copy): the share of the ink kept
    at each pixel, 0-30 % in 15-60 patches per 1,000 rows, each 2-12 rows along depth and 30-200 px across, so a
    pen breaks where no dash pattern put a gap and its neighbour, a little to the side, does not."""
    rows, cols = shape
    keep = np.ones(shape, np.float32)
    for _ in range(int(rng.integers(15, 61) * rows / 1000)):
        r0, c0 = int(rng.integers(0, rows)), int(rng.integers(0, cols))
        keep[r0 : r0 + int(rng.integers(2, 13)), c0 : c0 + int(rng.integers(30, 201))] = rng.uniform(0.0, 0.3)
    return keep


def stains(img: np.ndarray, rng: np.random.Generator) -> None:
    """Water or coffee stains: a few soft blotches that darken the paper (and what is printed on it)."""
    h, w = img.shape
    for _ in range(int(rng.integers(1, 5))):
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        ry, rx = rng.uniform(0.02, 0.15) * h, rng.uniform(0.15, 0.6) * w
        y0, y1 = int(max(0, cy - 2 * ry)), int(min(h, cy + 2 * ry))
        if y1 <= y0:
            continue
        yy = (np.arange(y0, y1, dtype=np.float32)[:, None] - cy) / ry
        xx = (np.arange(w, dtype=np.float32)[None, :] - cx) / rx
        blob = np.exp(-(yy * yy + xx * xx))
        ring = np.exp(-((np.sqrt(yy * yy + xx * xx) - 1.0) ** 2) / 0.02)  # a dried edge is darker
        img[y0:y1] *= 1.0 - (rng.uniform(0.04, 0.15) * blob + rng.uniform(0.0, 0.12) * ring)


def folds(img: np.ndarray, rng: np.random.Generator) -> None:
    """Fold creases across the page: a dark crease line with a soft shadow on one side."""
    h, w = img.shape
    for _ in range(int(rng.integers(1, 4))):
        y = rng.uniform(0.05, 0.95) * h
        rows = np.arange(h, dtype=np.float32)
        d = rows - y
        shade = rng.uniform(0.05, 0.2) * np.exp(-np.maximum(d, 0) / rng.uniform(4, 20)) * (d >= 0)
        crease = rng.uniform(0.1, 0.35) * np.exp(-(d * d) / 1.5)
        img *= (1.0 - shade - crease)[:, None].astype(np.float32)


def low_contrast(img: np.ndarray, rng: np.random.Generator) -> None:
    """A washed-out copy: everything pulled towards a grey paper."""
    level = rng.uniform(170, 215)
    keep = rng.uniform(0.45, 0.75)
    img *= keep
    img += (1.0 - keep) * level
