"""Printed depths read from a depth column with Tesseract: in windows along depth, upright or sideways.

Tesseract refuses pictures over 32,767 px on a side, and a third of the scans in one public set of well
files are taller than that (up to 86,743 rows). The strip is read in windows of :data:`WINDOW_ROWS` that
overlap by :data:`OVERLAP_ROWS` (over twice the tallest printed number), and a number read in two windows
is kept once. Mud logs print their depths along the depth column, turned by 90° ("10000" running down the
page): :func:`read_numbers` reads a window turned both ways as well when asked.
"""

from __future__ import annotations

import numpy as np

WINDOW_ROWS = 8000  # well inside Tesseract's limit, and a window's OCR stays a few seconds
OVERLAP_ROWS = 400
MAX_DIGITS = 5  # no well is deeper than 99,999 ft: longer runs of digits are glued neighbours (6780-6810)
SAME_NUMBER_PX = 12.0  # a number read twice in overlapping windows lies this close to itself
ORIENTATIONS = {"upright": 0, "sideways": (1, 3)}


def _tesseract_numbers(img: np.ndarray) -> list[tuple[float, float, float, float, str]]:
    """(left, top, width, height, text) of every run of digits Tesseract reads in ``img``."""
    from core.digitize.calibrate.ocr import image_to_data

    data = image_to_data(img, config="--psm 11 -c tessedit_char_whitelist=0123456789")
    out = []
    for text, left, top, width, height in zip(data["text"], data["left"], data["top"], data["width"],
                                              data["height"]):
        t = text.strip()
        if t.isdigit() and len(t) <= MAX_DIGITS:
            out.append((float(left), float(top), float(width), float(height), t))
    return out


def _read_window(win: np.ndarray, turns: int) -> list[tuple[float, str]]:
    """(centre row in ``win``, text) read with the window turned ``turns`` quarter turns anticlockwise."""
    rows = win.shape[0]
    out = []
    for left, top, width, height, text in _tesseract_numbers(np.rot90(win, turns) if turns else win):
        if turns == 0:
            centre = top + height / 2.0
        elif turns == 1:  # np.rot90: the turned picture's column j is the window's row j
            centre = left + width / 2.0
        else:  # three turns: column j is row rows − 1 − j
            centre = rows - 1.0 - (left + width / 2.0)
        out.append((centre, text))
    return out


def windows(length: int, size: int = WINDOW_ROWS, overlap: int = OVERLAP_ROWS) -> list[tuple[int, int]]:
    """[start, stop) windows along ``length`` rows, each at most ``size``, neighbours sharing ``overlap``."""
    if length <= size:
        return [(0, length)]
    starts = list(range(0, length - size, size - overlap)) + [length - size]
    return [(s, s + size) for s in sorted(set(starts))]


def read_numbers(strip_tall: np.ndarray, sideways: bool = False,
                 progress=None) -> list[tuple[float, str]]:
    """(centre row, text) of every run of digits in a strip whose depth runs down its rows, any length.

    ``sideways``: read the numbers printed turned by 90° either way instead of the upright ones."""
    turns = ORIENTATIONS["sideways"] if sideways else (ORIENTATIONS["upright"],)
    found: list[tuple[float, str]] = []
    parts = windows(strip_tall.shape[0])
    for i, (a, b) in enumerate(parts):
        for t in turns:
            for centre, text in _read_window(strip_tall[a:b], t):
                row = a + centre
                # in an overlap the same number is read by both windows: keep the first reading
                if not any(text == k and abs(row - r) <= SAME_NUMBER_PX for r, k in found):
                    found.append((row, text))
        if progress:
            progress(i + 1, len(parts))
    return sorted(found)
