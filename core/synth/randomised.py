"""Domain randomisation: a print style with every parameter drawn on its own.

The named families vary what real prints vary *together* (a fax is 1-bit and
blurred, a service-company print dark and busy). A network trained only on
them learns those bundles; one that also sees every parameter drawn
independently, over wider ranges than any family uses, has to read a curve
from what makes it a curve. ``random`` was the first such family and is
kept as a held-out measure; ``domain`` (issue #44) draws every convention a
printer chose on its own over the whole range met on paper, the ones the
named families never vary included: dash and dot patterns of any length,
fractional pen weights, grids heavier than the pens, linear curves over log
decades and log curves over linear grids, tracks of broken pens only, toner
speckle, skew to half a degree. The bundled model learns the hard prints'
space from ``domain`` without ever seeing the hard families themselves.

``neighbours`` (training only, sixteenth round) is ``domain`` with every track's two or three curves running
close in three distinct line styles drawn evenly, at 1 bit and faint more often: what teaches a network whose
stroke is whose where a pen runs beside, or crosses, a neighbour of another style.
"""

from __future__ import annotations

import numpy as np

from .hard_families import decade_rulings
from .print_style import PrintStyle


def _chance(rng: np.random.Generator, hi: float = 1.0) -> float:
    return float(rng.uniform(0.0, hi))


def randomised(rng: np.random.Generator) -> PrintStyle:
    gw = int(rng.integers(1, 4))
    pens = tuple(sorted(set(int(w) for w in rng.integers(1, 5, size=int(rng.integers(2, 6))))))
    lo_pen = int(rng.uniform(110, 230))
    weights = rng.dirichlet(np.ones(3))
    most = int(rng.integers(1, 4))
    return PrintStyle(
        "random", tracks=int(rng.integers(1, 5)), depth_column=rng.random() < 0.7, api_layout=rng.random() < 0.5,
        log_track_share=_chance(rng, 0.8), decades=(2, int(rng.integers(2, 6))), decade_lines=decade_rulings(rng),
        divisions=int(rng.choice([4, 5, 6, 8, 10, 12, 16, 20])),
        heavy_every=[None, 2, 4, 5, 10][int(rng.integers(5))], grid_strength=float(rng.uniform(30, 256)),
        grid_width=gw, heavy_gain=float(rng.uniform(1.0, 2.2)), heavy_width=int(rng.integers(1, 5)),
        depth_line_px=float(rng.uniform(5, 30)), border_strength=float(rng.uniform(100, 256)),
        border_width=int(rng.integers(1, 5)), pen_widths=pens, pen_strength=(lo_pen, 256),
        dash_scale=float(rng.uniform(0.6, 1.8)), curves_per_track=(1, most),
        line_styles=tuple(float(w) for w in weights), close_curves=_chance(rng, 0.7), faint_curve=_chance(rng, 0.5),
        numbers_in_tracks=rng.random() < 0.4, annotations=int(rng.integers(0, 9)), scanned=rng.random() < 0.75,
        artefacts={"bilevel": _chance(rng, 0.6), "jpeg": _chance(rng, 0.8), "faded": _chance(rng),
                   "blur": _chance(rng), "salt": _chance(rng), "skew": _chance(rng), "stains": _chance(rng, 0.5),
                   "folds": _chance(rng, 0.5), "low_contrast": _chance(rng, 0.6)},
    )


def domain(rng: np.random.Generator) -> PrintStyle:
    """Every convention drawn on its own (domain randomisation), over wider ranges than any family or print."""
    pen_lo = float(rng.uniform(0.8, 2.0))
    gw = int(rng.integers(1, 5))  # grid lines 1-4 px: fainter, as heavy as or heavier than the pens
    weights = rng.dirichlet(np.ones(3) * 0.7)
    return PrintStyle(
        "domain", tracks=int(rng.integers(1, 5)), depth_column=rng.random() < 0.7, api_layout=rng.random() < 0.5,
        log_track_share=_chance(rng, 0.8), decades=(2, 5), decade_lines=decade_rulings(rng),
        divisions=int(rng.choice([2, 4, 5, 6, 8, 10, 12, 16, 20])),
        heavy_every=[None, 2, 4, 5, 10][int(rng.integers(5))], grid_strength=float(rng.uniform(20, 256)),
        grid_width=gw, heavy_gain=float(rng.uniform(1.0, 2.5)), heavy_width=int(rng.integers(gw, gw + 3)),
        depth_line_px=float(rng.uniform(4, 30)), border_strength=float(rng.uniform(80, 256)),
        border_width=int(rng.integers(1, 6)), pen_range=(pen_lo, float(rng.uniform(pen_lo, 3.0))),
        pen_strength=(int(rng.uniform(100, 230)), 256), wide_dashes=True, curves_per_track=(1, 3),
        line_styles=tuple(float(w) for w in weights), cross_scale=_chance(rng, 0.4), broken_track=_chance(rng, 0.5),
        close_curves=_chance(rng, 0.7), faint_curve=_chance(rng, 0.5), numbers_in_tracks=rng.random() < 0.5,
        annotations=int(rng.integers(0, 9)), scanned=rng.random() < 0.85, skew_px=float(rng.uniform(0.8, 10.0)),
        artefacts={"bilevel": _chance(rng, 0.7), "jpeg": _chance(rng, 0.8), "faded": _chance(rng),
                   "blur": _chance(rng), "salt": _chance(rng), "speckle": _chance(rng, 0.6), "skew": _chance(rng),
                   "stains": _chance(rng, 0.5), "folds": _chance(rng, 0.5), "low_contrast": _chance(rng, 0.6)},
    )


def neighbours(rng: np.random.Generator) -> PrintStyle:
    """``domain``'s conventions with every track's curves close neighbours: two or three a track, each in its own
    line style (solid, dashed, dotted drawn evenly, never a broken-pens-only track, so no two share a style), run
    close (a few pen widths apart, crossing now and then) on nine tracks in ten, one often faint, and 1 bit on
    half the pages. A training-only family: it is not ``dense`` (grids over the whole range, not as dark as the
    pens; domain's dash patterns and fractional pens, not the house set) nor ``random`` (domain's wider ranges;
    every track close, not 0-70 % of them)."""
    style = domain(rng)
    style.family = "neighbours"
    style.curves_per_track = (2, 3)
    style.line_styles = (1 / 3, 1 / 3, 1 / 3)
    style.broken_track = 0.0
    style.close_curves = 0.9
    style.faint_curve = float(rng.uniform(0.3, 0.7))
    style.artefacts["bilevel"] = float(rng.uniform(0.3, 0.8))
    return style
