"""Print-style families: named, listable distributions over how a paper log looks.

A network trained on one look learns that look: the first bundled model,
trained on a single grid style (tenths with a heavier middle line, mid-grey),
took every straight grid line of another print for a curve. So the
generator draws from *families* that differ in what a print shop or a
logging company varied: grid darkness (faint to as dark as the curves) and
line width, heavier lines every 5th/10th or none, pitch, log decades, track
count and the depth column, pen widths, dash patterns, text printed inside
the tracks, and what copying and scanning did to the paper.

A family (``grey_families.py``, ``hard_families.py``, ``randomised.py``) is a function from a random generator to one concrete
:class:`PrintStyle`; ``mixed`` samples the families evenly. Leave-one-family-
out evaluation (``welltrace eval-styles``) trains on all families but one and
measures on the one left out, so the families must differ in kind, not only
in degree.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from . import grey_families as grey
from . import hard_families as hard
from .print_style import PrintStyle
from .randomised import domain, neighbours, randomised

__all__ = ["FAMILIES", "DEFAULT_FAMILIES", "GREY_FAMILIES", "HARD_FAMILIES", "PrintStyle", "STYLE_CHOICES",
           "parse_families", "sample_style"]


FAMILIES: dict[str, Callable[[np.random.Generator], PrintStyle]] = {
    "classic": grey.classic,
    "uniform": grey.uniform,
    "dark_grid": grey.dark_grid,
    "annotated": grey.annotated,
    "fax": grey.fax,
    "worn": grey.worn,
    "colour": grey.colour,
    "log_decades": hard.log_decades,
    "dotted_fax": hard.dotted_fax,
    "dense": hard.dense,
    "random": randomised,
    "domain": domain,
    "neighbours": neighbours,  # training only: domain with every track's curves close, in distinct styles
    # held out (the calibrator's fit reads it): worn prints of broken pens over fast, spiky logs at a coarse scale.
    # Last, so every other family keeps its seed index (evaluation/styles.FAMILY_SEED_ORDER) and its logs
    "broken_fast": hard.broken_fast,
}
# what "mixed" draws from when no family is named: the grey families. The bundled model was trained, and the
# demo's and eval-styles' figures measured, before the colour family existed; name it to draw colour logs.
GREY_FAMILIES = ("classic", "uniform", "dark_grid", "annotated", "fax", "worn")
# the hard prints (#32): resistivity tracks on log decades, dotted pens at 1 bit, busy dense prints; and
# ``random``, every style parameter drawn independently (domain randomisation). The bundled model trains on the
# grey families and ``random`` and never on the three named hard ones, so their figures are held out
HARD_FAMILIES = ("log_decades", "dotted_fax", "dense")
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
        return grey.classic(rng, scanned=False)
    if style == "scanned":
        return grey.classic(rng, scanned=True)
    if style == "mixed":
        pool = families or DEFAULT_FAMILIES
        style = pool[int(rng.integers(len(pool)))]
    if style not in FAMILIES:
        raise ValueError(f"style must be one of {', '.join(STYLE_CHOICES)}, got {style!r}")
    return FAMILIES[style](rng)
