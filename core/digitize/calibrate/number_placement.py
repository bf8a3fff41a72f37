"""Where along depth a printed number labels its depth: onto the depth line it is printed on, moved as the page's
other numbers moved onto theirs (:func:`snap_to_depth_lines`), or, in a section that prints no depth lines,
placed as the page's other sections' numbers stand to their lines (:func:`place_without_lines`).

Apart from the fit: it moves each number by a pixel or a few before any line is fitted, and the fit takes the
numbers where they are placed.
"""

from __future__ import annotations

import numpy as np

from core.digitize.calibrate.depth_fit import MIN_NUMBERS
from core.digitize.calibrate.proposal_records import DepthNumber

SNAP_PX = 8.0  # a number is placed on the depth line it is printed on, when one lies this close
SNAP_AGREE_PX = 2.5  # ... and moves by about what the scan's other numbers moved (snap_to_depth_lines)


def snap_to_depth_lines(numbers: list[DepthNumber], lines: np.ndarray, page_usual: float | None = None,
                        beside: list[np.ndarray] | None = None) -> float | None:
    """Move each number onto the depth line (``depth_lines.depth_lines``) it is printed on (in place): a printed
    depth is centred on its line, and the line is a sharper mark than the box OCR draws around the digits.

    A scan prints its labels the same way on every line, so a true snap moves a number by about what it moves
    the others (iqa_33-025-02289-0001: 3.5 px, every label). Where the nearest line lies otherwise (a grid's
    finer line, a curve's stroke taken for a line) or no line is near, the number moves by the others' median:
    on a synthetic log, 5700 and 5800 ft went 7 px either way onto finer lines, a 2.5-ft pick; on
    iqa_33-023-01135-0001 four labels read 500 px apart to the pixel went +4.5, +4.5, +4.5 and −5 px. Where too few
    of a section's numbers snap to say how it prints them (a short repeat pass's two labels), ``page_usual`` says:
    how the page's other sections' numbers moved (a page prints its labels one way); a repeat's 10600 went 5 px onto
    the 2-ft line below its own, a 1.1-ft error at 5 px per ft, where the main pass's labels moved by half a pixel.
    ``beside``: per number, the lines it may label (those of the track beside it), where not ``lines``.
    Returns this section's usual move (None where too few numbers snapped to say it): a section of the page
    without depth lines prints its labels the same way."""
    if lines.size == 0 or not numbers:
        return None
    pixels = np.array([n.pixel for n in numbers])
    near = [lines] * len(numbers) if beside is None else [b if b.size else lines for b in beside]
    nearest = np.array([ls[np.argmin(np.abs(ls - p))] for ls, p in zip(near, pixels)])
    shift = nearest - pixels
    snapped = np.abs(shift) <= SNAP_PX
    own = float(np.median(shift[snapped])) if snapped.sum() >= MIN_NUMBERS else None
    # too few snaps here to say how it prints its labels: as the page does, where a line lies near one at least
    # (none near any: no line of its own to go by, each stays where it was read); else each on its nearest line
    usual = own if own is not None else page_usual if snapped.any() else None
    for n, s, ok in zip(numbers, shift, snapped):
        agrees = ok and (usual is None or abs(s - usual) <= SNAP_AGREE_PX)
        n.pixel += float(s) if agrees else (usual or 0.0)
    return own


CENTRED_SHARE = 0.25  # numbers that moved less than this share of half a glyph onto their lines are centred on them


def place_without_lines(numbers: list[DepthNumber], moves: list[float]) -> None:
    """Place the numbers of a section that prints no depth lines (a cement print's 1:12,000 summary) as the page's
    other sections' numbers stand to their lines (in place): ``moves``, how far each of those sections' numbers
    moved onto their lines (:func:`snap_to_depth_lines`). Numbers centred on their lines moved by next to nothing:
    each number moves as they did. Numbers that sit on their lines (moved down by a good share of half a glyph) or
    hang from them (moved up) stand on the depth they label with their glyphs' foot (or head): the drawn line keeps
    a pixel or two clear of the glyphs, a gap an undrawn line does not leave, so moving by the others' move puts a
    number that much past its depth (a 1:12,000 summary's 10000 ft 2.4 px low, 32 ft at 0.075 px/ft, where its
    foot is within a pixel of where the body's ends put it). A number whose glyphs are unknown moves as the others
    did."""
    if not moves:
        return
    usual = float(np.median(moves))
    for n in numbers:
        if n.glyphs is None:
            n.pixel += usual
            continue
        head, foot = n.glyphs
        half = (foot - head) / 2.0
        if abs(usual) <= CENTRED_SHARE * half:
            n.pixel += usual
        else:  # the pixel rows' edges: the last row of ink ends half a row below its index
            n.pixel = foot - 0.5 if usual > 0 else head - 0.5
