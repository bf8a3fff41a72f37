"""The first print-style families: grey prints that differ in grid, pens and scanning, and colour prints."""

from __future__ import annotations

import numpy as np

from .print_style import PrintStyle


def classic(rng: np.random.Generator, scanned: bool | None = None) -> PrintStyle:
    """The look of the first generator: tenths with a heavier middle line, mid-grey, API layout."""
    scanned = bool(rng.random() < 0.65) if scanned is None else scanned
    return PrintStyle(
        "classic", tracks=2 if rng.random() < 0.75 else 1, divisions=10, heavy_every=5,
        # the first generator drew minor lines at 0.6 of a heavy line's strength, heavy ones at 90–190
        grid_strength=0.6 * float(rng.uniform(90, 190)), heavy_gain=1.0 / 0.6, grid_width=1, heavy_width=2,
        border_strength=float(rng.uniform(210, 256)), scanned=scanned,
        artefacts={"bilevel": 0.3, "jpeg": 0.4, "faded": 0.5, "blur": 0.8, "salt": 0.5, "skew": 0.6},
    )


def uniform(rng: np.random.Generator) -> PrintStyle:
    """Uniform grids of any pitch, no heavy lines, faint to mid-grey; few tracks, light compression."""
    return PrintStyle(
        "uniform", tracks=int(rng.choice([1, 1, 2, 3])), depth_column=rng.random() < 0.6,
        api_layout=rng.random() < 0.5, divisions=int(rng.choice([4, 5, 6, 8, 10, 12, 16, 20])), heavy_every=None,
        grid_strength=float(rng.uniform(50, 170)), grid_width=int(rng.choice([1, 1, 2])),
        depth_line_px=float(rng.uniform(6, 30)), border_strength=float(rng.uniform(120, 256)),
        border_width=int(rng.choice([1, 2, 3])), pen_widths=(2, 2, 3, 3, 4), curves_per_track=(1, 2),
        decades=(2, 5), scanned=rng.random() < 0.5,
        artefacts={"bilevel": 0.0, "jpeg": 0.8, "faded": 0.2, "blur": 0.5, "salt": 0.1, "skew": 0.5},
    )


def dark_grid(rng: np.random.Generator) -> PrintStyle:
    """Grids as dark and as thick as the curves, pens no thicker than the grid."""
    gw = int(rng.choice([1, 2, 2, 3]))
    return PrintStyle(
        "dark_grid", tracks=int(rng.choice([1, 2, 2, 3])), depth_column=rng.random() < 0.8,
        divisions=int(rng.choice([5, 10, 10, 20])), heavy_every=[None, 5, 10][int(rng.integers(3))],
        grid_strength=float(rng.uniform(180, 256)), grid_width=gw, heavy_gain=1.2, heavy_width=min(4, gw + 1),
        depth_line_px=float(rng.uniform(6, 14)), border_strength=255.0, border_width=int(rng.choice([2, 3, 4])),
        pen_widths=tuple(w for w in (1, 2, 3) if w <= max(gw, 1)) or (1,), curves_per_track=(1, 3),
        decades=(2, 5), scanned=rng.random() < 0.6,
        artefacts={"bilevel": 0.35, "jpeg": 0.4, "faded": 0.3, "blur": 0.7, "salt": 0.3, "skew": 0.5},
    )


def annotated(rng: np.random.Generator) -> PrintStyle:
    """Busy prints: depth numbers and remarks printed inside the tracks, stamps, 1–4 tracks."""
    return PrintStyle(
        "annotated", tracks=int(rng.integers(1, 5)), depth_column=rng.random() < 0.5, api_layout=rng.random() < 0.5,
        divisions=int(rng.choice([5, 10, 10])), heavy_every=[None, 5][int(rng.integers(2))],
        grid_strength=float(rng.uniform(70, 220)), grid_width=int(rng.choice([1, 1, 2])),
        depth_line_px=float(rng.uniform(7, 20)), border_strength=float(rng.uniform(180, 256)),
        pen_widths=(1, 2, 2, 3, 4), curves_per_track=(1, 3), numbers_in_tracks=True,
        annotations=int(rng.integers(2, 9)), decades=(2, 5), scanned=rng.random() < 0.7,
        artefacts={"bilevel": 0.3, "jpeg": 0.4, "faded": 0.3, "blur": 0.7, "salt": 0.3, "skew": 0.5},
    )


def fax(rng: np.random.Generator) -> PrintStyle:
    """1-bit scans (fax, CCITT G4 archives): thresholded after blur and noise, broken thin lines."""
    return PrintStyle(
        "fax", tracks=int(rng.choice([1, 2, 2, 3])), depth_column=rng.random() < 0.8,
        divisions=int(rng.choice([5, 10, 10])), heavy_every=[None, 5, 5][int(rng.integers(3))],
        grid_strength=float(rng.uniform(110, 256)), grid_width=int(rng.choice([1, 1, 2])),
        depth_line_px=float(rng.uniform(7, 16)), border_strength=255.0, pen_widths=(1, 2, 2, 3),
        curves_per_track=(1, 3), decades=(2, 4), dash_scale=float(rng.uniform(0.8, 1.5)), scanned=True,
        artefacts={"bilevel": 1.0, "jpeg": 0.0, "faded": 0.4, "blur": 0.9, "salt": 0.7, "skew": 0.6},
    )


def worn(rng: np.random.Generator) -> PrintStyle:
    """Copies of copies: low contrast, faded ink, stains, folds, heavy JPEG."""
    return PrintStyle(
        "worn", tracks=int(rng.choice([1, 2, 2, 3])), depth_column=rng.random() < 0.7,
        divisions=int(rng.choice([5, 8, 10, 10])), heavy_every=[None, 5, 10][int(rng.integers(3))],
        grid_strength=float(rng.uniform(60, 200)), grid_width=int(rng.choice([1, 2])),
        depth_line_px=float(rng.uniform(6, 20)), border_strength=float(rng.uniform(150, 256)),
        pen_widths=(1, 2, 3, 3, 4), pen_strength=(130, 230), curves_per_track=(1, 3), decades=(2, 5),
        dash_scale=float(rng.uniform(0.7, 1.6)), scanned=True,
        artefacts={"bilevel": 0.15, "jpeg": 0.8, "faded": 0.9, "blur": 0.9, "salt": 0.5, "skew": 0.6,
                   "stains": 0.7, "folds": 0.6, "low_contrast": 0.7},
    )


def colour(rng: np.random.Generator) -> PrintStyle:
    """Colour prints and digital-born rasters: each curve in its own ink, crossing in shared tracks, on a
    light coloured grid, with shading between a curve and its track edge; faded colour, colour JPEG."""
    return PrintStyle(
        "colour", tracks=int(rng.choice([1, 2, 2, 3])), depth_column=rng.random() < 0.7,
        api_layout=rng.random() < 0.5, divisions=int(rng.choice([5, 10, 10, 20])),
        heavy_every=[None, 5, 10][int(rng.integers(3))], grid_strength=float(rng.uniform(150, 256)),
        grid_width=int(rng.choice([1, 1, 2])), heavy_gain=1.3, depth_line_px=float(rng.uniform(6, 20)),
        border_strength=255.0, border_width=int(rng.choice([1, 2, 3])), pen_widths=(1, 2, 2, 3, 3),
        curves_per_track=(1, 3), decades=(2, 5), scanned=rng.random() < 0.6, colour=True,
        artefacts={"jpeg": 0.7, "faded": 0.4, "blur": 0.6, "skew": 0.5, "fills": 0.5},
    )
