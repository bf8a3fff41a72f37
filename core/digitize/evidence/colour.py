"""A curve's ink colour as evidence of where it is: which pixels of a colour scan are printed in one curve's ink.

A printed line is ink mixed with paper: thin and anti-aliased strokes, faded ink and a JPEG's smeared chroma all
move a pixel along the straight line from the ink's colour to the paper's, not away from it. So a pixel is scored by
two numbers in CIELAB (OpenCV's, L 0–100): how far along that line it lies from the paper towards the ink (its
*coverage*), and how far off the line it lies (its *mismatch*, in ΔE units). A red curve crossing a blue one, or
lying on a green grid line, is then told apart by the off-line distance, whatever the shared grey level says. The
colour vocabulary (parsing, CIELAB, the paper's colour) is ``core/io/colour.py``'s.
"""

from __future__ import annotations

import numpy as np

from core.io.colour import MIN_CONTRAST_DE, delta_e, is_neutral, lab_of, paper_colour, parse_colour, to_lab

SIGMA_DE = 18.0  # mismatch (ΔE) at which a pixel keeps e^-1 of its colour evidence
FULL_COVERAGE = 0.6  # a pixel this far from paper towards the ink counts as fully inked (thin strokes blend)
DISTINCT_DE = 20.0  # two inks closer than this are one colour to the tracer
CHROMA_LOSS_WEIGHT = 1.0 / 3.0
GRID_INK_EVIDENCE = 0.2  # a grid whose pixels' median colour evidence reaches this is printed in the ink


ROWS_AT_ONCE_PX = 1 << 16  # pixels of a band scored at once: its dozen float temporaries stay in the cache


def colour_evidence(rgb: np.ndarray, ink, paper=None, sigma: float = SIGMA_DE,
                    out: np.ndarray | None = None) -> np.ndarray:
    """Per pixel in [0, 1]: printed in ``ink`` (r, g, b) on ``paper`` (default: estimated).

    coverage × exp(−(mismatch / sigma)²), coverage saturating at :data:`FULL_COVERAGE`. Scored a few rows at a
    time (every step is per pixel, so the values are those of one pass over the whole band) into ``out`` (a float32
    array of the band's shape; default: a new one): what it holds beyond the result is a few hundred kilobytes, not
    the dozen band-sized temporaries of one pass (60 bytes a pixel)."""
    paper = paper_colour(rgb) if paper is None else np.asarray(paper, np.float32)
    out = np.empty(rgb.shape[:2], np.float32) if out is None else out
    p, k = lab_of(paper), lab_of(ink)
    d = p - k
    dd = float(d @ d)
    if dd < MIN_CONTRAST_DE**2:
        out[...] = 0.0
        return out
    step = max(1, ROWS_AT_ONCE_PX // max(1, rgb.shape[1]))
    for r0 in range(0, rgb.shape[0], step):
        out[r0 : r0 + step] = _scored(rgb[r0 : r0 + step], p, d, dd, sigma)
    return out


def _scored(rgb: np.ndarray, p: np.ndarray, d: np.ndarray, dd: float, sigma: float) -> np.ndarray:
    lab = to_lab(rgb)
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
    return coverage * np.exp(-mismatch2 / sigma**2)


def combine(colour_ev: np.ndarray, style_ev: np.ndarray | None) -> np.ndarray:
    """A curve's evidence from its ink colour and its line style: colour says which curve, the line
    style (the model's class map or the classical ink) weighs it between one half and all of it, so a
    curve the grey network barely sees in a light ink is still traced, and two curves of one colour in
    different line styles are still told apart."""
    if style_ev is None:
        return colour_ev
    # in one buffer beside the two maps (the same float operations as ``colour_ev * (0.5 + 0.5 * clip)``): a
    # band's weighing held three band-sized temporaries at once
    weight = np.clip(style_ev, 0.0, 1.0)
    weight *= 0.5
    weight += 0.5
    return np.multiply(colour_ev, weight, out=weight if weight.dtype == np.result_type(colour_ev, weight) else None)


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
        lo, hi = spec.track_rows(rows_total)
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


def grid_in_ink(cev: np.ndarray, grid_map: np.ndarray) -> bool:
    """Whether the track's grid is printed in a tint of the curve's ink (a light-blue grid under a blue
    curve lies on the blue ink's line to paper): then its lines carry the curve's colour evidence and the
    grid's damping applies. Otherwise it does not: a chromatic curve is told from a grid of another colour
    by colour alone, and a straight stretch of it (a caliper in gauge) is no grid line; under the damping a
    straight green caliper on the colour logs was 83 % NULL. The median over all grid pixels decides, so one
    straight curve the grid reading took for a line does not."""
    on = grid_map > 0.5
    return bool(on.sum() > 0.002 * on.size and float(np.median(cev[on])) >= GRID_INK_EVIDENCE)

