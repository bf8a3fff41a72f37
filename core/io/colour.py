"""Ink colour as evidence: which pixels of a colour scan are printed in one curve's ink.

A printed line is ink mixed with paper: thin and anti-aliased strokes, faded
ink and a JPEG's smeared chroma all move a pixel along the straight line from
the ink's colour to the paper's, not away from it. So a pixel is scored by two
numbers in CIELAB (OpenCV's, L 0–100): how far along that line it lies from
the paper towards the ink (its *coverage*), and how far off the line it lies
(its *mismatch*, in ΔE units). A red curve crossing a blue one, or lying on a
green grid line, is then told apart by the off-line distance, whatever the
shared grey level says.

Colour here is the ink colour a calibration names (``"colour": "#rrggbb"``),
picked with the eyedropper (:func:`sample_ink`) or given by hand.
"""

from __future__ import annotations

import re

import cv2
import numpy as np

HEX = re.compile(r"^#[0-9a-fA-F]{6}$")
SIGMA_DE = 18.0  # mismatch (ΔE) at which a pixel keeps e^-1 of its colour evidence
FULL_COVERAGE = 0.6  # a pixel this far from paper towards the ink counts as fully inked (thin strokes blend)
MIN_CONTRAST_DE = 12.0  # an ink closer than this to the paper cannot be told from it by colour
DISTINCT_DE = 20.0
CHROMA_LOSS_WEIGHT = 1.0 / 3.0
NEUTRAL_CHROMA = 20.0  # an ink with less chroma (a*, b*) than this is black or grey
GRID_INK_EVIDENCE = 0.2  # a grid whose pixels' median colour evidence reaches this is printed in the ink  # two inks closer than this are one colour to the tracer


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


def colour_evidence(rgb: np.ndarray, ink, paper=None, sigma: float = SIGMA_DE) -> np.ndarray:
    """Per pixel in [0, 1]: printed in ``ink`` (r, g, b) on ``paper`` (default: estimated).

    coverage × exp(−(mismatch / sigma)²), coverage saturating at :data:`FULL_COVERAGE`."""
    paper = paper_colour(rgb) if paper is None else np.asarray(paper, np.float32)
    lab = to_lab(rgb)
    p, k = lab_of(paper), lab_of(ink)
    d = p - k
    dd = float(d @ d)
    if dd < MIN_CONTRAST_DE**2:
        return np.zeros(rgb.shape[:2], np.float32)
    off = p - lab  # from the pixel back to paper
    alpha = np.clip((off @ d) / dd, 0.0, 1.0)
    resid = off - alpha[..., None] * d  # expected (paper − α·d) minus the pixel, negated
    # a JPEG's 4:2:0 chroma and the scanner's blur share a thin line's colour with the paper beside it: its
    # pixels are as dark as the ink mixture says but less saturated. That loss of chroma (towards the neutral
    # axis) is expected and weighs a third; a shift of hue or lightness weighs in full.
    expected_ab = p[1:] - alpha[..., None] * d[1:]
    norm = np.linalg.norm(expected_ab, axis=-1, keepdims=True)
    outward = np.where(norm > 1e-3, expected_ab / np.maximum(norm, 1e-3), 0.0)  # away from the neutral axis
    loss = np.maximum(np.einsum("...c,...c->...", resid[..., 1:], outward), 0.0)  # expected − pixel, outwards
    mismatch2 = np.einsum("...c,...c->...", resid, resid) - loss**2 * (1.0 - CHROMA_LOSS_WEIGHT**2)
    coverage = np.minimum(alpha / FULL_COVERAGE, 1.0)
    return (coverage * np.exp(-mismatch2 / sigma**2)).astype(np.float32)


def combine(colour_ev: np.ndarray, style_ev: np.ndarray | None) -> np.ndarray:
    """A curve's evidence from its ink colour and its line style: colour says which curve, the line
    style (the model's class map or the classical ink) weighs it between one half and all of it, so a
    curve the grey network barely sees in a light ink is still traced, and two curves of one colour in
    different line styles are still told apart."""
    if style_ev is None:
        return colour_ev
    return colour_ev * (0.5 + 0.5 * np.clip(style_ev, 0.0, 1.0))


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


def curve_colour_evidence(rgb_canon: np.ndarray, calib, style_evidence: dict[int, np.ndarray], grid=None,
                          threshold: float = 0.3, min_seen: float = 0.05) -> tuple[dict, list[str]]:
    """Per curve with a ``colour`` in the calibration: (first row, evidence over its track's band, whether the
    grid's damping applies: :func:`is_neutral`, :func:`grid_in_ink`, and for a curve whose backup scale is drawn
    in an ink of its own (``backup_colour``) the two inks' evidence over the band, main then backup, else None),
    and the warnings of the curves left to their line style.

    Used only where it can tell curves apart: a curve whose ink is within :data:`DISTINCT_DE` of another
    coloured curve's in an overlapping track stays with its line style (the joint tracer separates those),
    and so does a curve whose ink matches in fewer than ``min_seen`` of its track's depth columns (the
    colour is wrong, or the ink faded past recognition)."""
    curves = calib.curves
    inks = {i: [parse_colour(c.colour)] + ([parse_colour(c.backup_colour)] if c.backup_colour else [])
            for i, c in enumerate(curves) if c.colour}
    if not inks:
        return {}, []
    rows_total = rgb_canon.shape[0]
    paper = paper_colour(rgb_canon)
    out, warnings = {}, []
    for i, own in inks.items():
        spec = curves[i]
        twins = [curves[j].mnemonic for j, other in inks.items() if j != i
                 and spec.shares_track_with(curves[j])
                 and any(delta_e(a, b) < DISTINCT_DE for a in own for b in other)]
        if twins:
            warnings.append(f"{spec.mnemonic}: its ink {spec.colour} is the colour of {', '.join(twins)} in the "
                            "same track; told apart by line style and continuity")
            continue
        lo = int(np.clip(np.floor(spec.track_lo), 0, rows_total - 1))
        hi = int(np.clip(np.ceil(spec.track_hi), lo + 1, rows_total - 1))
        each = [colour_evidence(rgb_canon[lo : hi + 1], ink, paper) for ink in own]
        cev = each[0] if len(each) == 1 else np.maximum(*each)
        seen = float((cev.max(axis=0) >= threshold).mean())
        if seen < min_seen:
            warnings.append(f"{spec.mnemonic}: no ink in its track matches its colour {spec.colour} (seen in "
                            f"{seen:.0%} of the depth columns); traced by line style")
            continue
        style = style_evidence.get(spec.klass, style_evidence.get(0))
        damp = any(is_neutral(ink) for ink in own) or (grid is not None and grid_in_ink(cev, grid.map(slice(lo, hi + 1))))
        out[i] = (lo, combine(cev, None if style is None else style[lo : hi + 1]), damp,
                  tuple(each) if len(each) == 2 else None)
    return out, warnings


def is_neutral(ink) -> bool:
    """Black or grey ink: its colour evidence cannot tell it from a grey grid, so grid damping applies."""
    lab = lab_of(ink)
    return float(np.hypot(lab[1], lab[2])) < NEUTRAL_CHROMA


def grid_in_ink(cev: np.ndarray, grid_map: np.ndarray) -> bool:
    """Whether the track's grid is printed in a tint of the curve's ink (a light-blue grid under a blue
    curve lies on the blue ink's line to paper): then its lines carry the curve's colour evidence and the
    grid's damping applies. Otherwise it does not: a chromatic curve is told from a grid of another colour
    by colour alone, and a straight stretch of it (a caliper in gauge) is no grid line; under the damping a
    straight green caliper on the colour logs was 83 % NULL. The median over all grid pixels decides, so one
    straight curve the grid reading took for a line does not."""
    on = grid_map > 0.5
    return bool(on.sum() > 0.002 * on.size and float(np.median(cev[on])) >= GRID_INK_EVIDENCE)
