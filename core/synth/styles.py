"""Print-style families: named, listable distributions over how a paper log looks.

A network trained on one look learns that look: the first bundled model,
trained on a single grid style (tenths with a heavier middle line, mid-grey),
took every straight grid line of another print for a curve. So the
generator draws from *families* that differ in what a print shop or a
logging company varied: grid darkness (faint to as dark as the curves) and
line width, heavier lines every 5th/10th or none, pitch, log decades, track
count and the depth column, pen widths, dash patterns, text printed inside
the tracks, and what copying and scanning did to the paper.

A family is a function from a random generator to one concrete
:class:`PrintStyle`; ``mixed`` samples the families evenly. Leave-one-family-
out evaluation (``welltrace eval-styles``) trains on all families but one and
measures on the one left out, so the families must differ in kind, not only
in degree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class PrintStyle:
    family: str
    tracks: int = 2  # tracks across the log (1–4)
    depth_column: bool = True
    api_layout: bool = True  # with two tracks: track 1 | depth | track 2
    log_track_share: float = 0.35  # chance a track after the first is logarithmic
    decades: tuple[int, int] = (2, 4)  # log tracks: 2..4 decades (inclusive)
    divisions: int = 10  # linear tracks: grid lines per track width
    heavy_every: int | None = 5  # every k-th linear division is heavier (None: uniform)
    grid_strength: float = 140.0  # ink coverage 0..255 of a minor grid line
    grid_width: int = 1
    heavy_gain: float = 1.6  # a heavy line's strength ÷ a minor one's (capped at 255)
    heavy_width: int = 2
    depth_line_px: float = 9.0  # least spacing of minor depth lines
    border_strength: float = 230.0
    border_width: int = 2
    pen_widths: tuple[int, ...] = (1, 2, 2, 3, 3, 4)
    pen_strength: tuple[int, int] = (200, 256)
    dash_scale: float = 1.0  # dash and gap lengths × this
    curves_per_track: tuple[int, int] = (1, 3)
    numbers_in_tracks: bool = False  # depth numbers printed inside the tracks (over the grid)
    annotations: int = 0  # words / stamps printed over the tracks
    scanned: bool = True
    artefacts: dict = field(default_factory=dict)  # probabilities and ranges of the scanner artefacts
    colour: bool = False  # drawn in colour: an ink per curve, a coloured grid, shading (colour_page.py)

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _classic(rng: np.random.Generator, scanned: bool | None = None) -> PrintStyle:
    """The look of the first generator: tenths with a heavier middle line, mid-grey, API layout."""
    scanned = bool(rng.random() < 0.65) if scanned is None else scanned
    return PrintStyle(
        "classic", tracks=2 if rng.random() < 0.75 else 1, divisions=10, heavy_every=5,
        # the first generator drew minor lines at 0.6 of a heavy line's strength, heavy ones at 90–190
        grid_strength=0.6 * float(rng.uniform(90, 190)), heavy_gain=1.0 / 0.6, grid_width=1, heavy_width=2,
        border_strength=float(rng.uniform(210, 256)), scanned=scanned,
        artefacts={"bilevel": 0.3, "jpeg": 0.4, "faded": 0.5, "blur": 0.8, "salt": 0.5, "skew": 0.6},
    )


def _uniform(rng: np.random.Generator) -> PrintStyle:
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


def _dark_grid(rng: np.random.Generator) -> PrintStyle:
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


def _annotated(rng: np.random.Generator) -> PrintStyle:
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


def _fax(rng: np.random.Generator) -> PrintStyle:
    """1-bit scans (fax, CCITT G4 archives): thresholded after blur and noise, broken thin lines."""
    return PrintStyle(
        "fax", tracks=int(rng.choice([1, 2, 2, 3])), depth_column=rng.random() < 0.8,
        divisions=int(rng.choice([5, 10, 10])), heavy_every=[None, 5, 5][int(rng.integers(3))],
        grid_strength=float(rng.uniform(110, 256)), grid_width=int(rng.choice([1, 1, 2])),
        depth_line_px=float(rng.uniform(7, 16)), border_strength=255.0, pen_widths=(1, 2, 2, 3),
        curves_per_track=(1, 3), decades=(2, 4), dash_scale=float(rng.uniform(0.8, 1.5)), scanned=True,
        artefacts={"bilevel": 1.0, "jpeg": 0.0, "faded": 0.4, "blur": 0.9, "salt": 0.7, "skew": 0.6},
    )


def _worn(rng: np.random.Generator) -> PrintStyle:
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


def _colour(rng: np.random.Generator) -> PrintStyle:
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


FAMILIES: dict[str, Callable[[np.random.Generator], PrintStyle]] = {
    "classic": _classic,
    "uniform": _uniform,
    "dark_grid": _dark_grid,
    "annotated": _annotated,
    "fax": _fax,
    "worn": _worn,
    "colour": _colour,
}
# what "mixed" draws from when no family is named: the grey families. The bundled model was trained, and the
# demo's and eval-styles' figures measured, before the colour family existed; name it to draw colour logs.
GREY_FAMILIES = ("classic", "uniform", "dark_grid", "annotated", "fax", "worn")
DEFAULT_FAMILIES = GREY_FAMILIES
LEGACY = ("clean", "scanned")  # the first generator's two looks: the classic family without / with a scanner
STYLE_CHOICES = ("mixed", *FAMILIES, *LEGACY)


def parse_families(text: str | None) -> tuple[str, ...]:
    """``"uniform,fax"`` → the named families; ``None`` or ``"mixed"`` → the default (grey) families,
    ``"all"`` → every family. Unknown names raise."""
    if text is None or text.strip() in ("", "mixed"):
        return DEFAULT_FAMILIES
    if text.strip() == "all":
        return tuple(FAMILIES)
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    bad = [n for n in names if n not in FAMILIES]
    if bad:
        raise ValueError(f"unknown style famil{'ies' if len(bad) > 1 else 'y'} {', '.join(bad)}; "
                         f"known: {', '.join(FAMILIES)}")
    return names


def sample_style(style: str, rng: np.random.Generator, families: tuple[str, ...] | None = None) -> PrintStyle:
    """One concrete print style: of the named family, or of a family drawn evenly from ``families``
    (the grey ones by default) when ``style`` is ``"mixed"``."""
    if style == "clean":
        return _classic(rng, scanned=False)
    if style == "scanned":
        return _classic(rng, scanned=True)
    if style == "mixed":
        pool = families or DEFAULT_FAMILIES
        style = pool[int(rng.integers(len(pool)))]
    if style not in FAMILIES:
        raise ValueError(f"style must be one of {', '.join(STYLE_CHOICES)}, got {style!r}")
    return FAMILIES[style](rng)
