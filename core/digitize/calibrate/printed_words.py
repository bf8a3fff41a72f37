"""The words a scale box prints, as read: a word with its box and ink, a line of words in one cell, a curve's scale
entry, and a printed number.

Shared by the reading of a region (``scale_words.py``), the ends read again where Tesseract dropped them
(``dropped_ends.py``) and the entries made of the lines (``scale_entries.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

INK_LEVEL = 170  # a pixel darker than this (in its darkest channel away from black ink: yellow reads dark) is ink
NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d+)?|\.\d+)$")
STRUCK = re.compile(r"^(?=(?:\D*\d){2})\d[\d.]*[^\d\s().,/]{1,2}[\d.]*$")  # digits, a stray mark or two: "10€"


@dataclass
class Word:
    """A word Tesseract read: its box in the region's pixels, its text, its ink ("#rrggbb" on a colour region,
    None when black or grey)."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    ink: tuple[int, int, int] | None = None

    @property
    def yc(self) -> float:
        return 0.5 * (self.y0 + self.y1)

    @property
    def height(self) -> float:
        return self.y1 - self.y0


@dataclass
class Line:
    """Words of one text line in one cell, left to right; ``cell``: the cell's columns (lo, hi)."""

    words: list[Word]
    cell: tuple[float, float]

    @property
    def y0(self) -> float:
        return min(w.y0 for w in self.words)

    @property
    def y1(self) -> float:
        return max(w.y1 for w in self.words)

    @property
    def height(self) -> float:
        return float(np.median([w.height for w in self.words]))

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


@dataclass
class Entry:
    """One curve's scale as a box prints it: the name as printed (lines joined), its mnemonic and unit, the values
    at the cell's left and right ends, and where it lies (``cell`` columns, ``top``/``bottom`` rows of its text,
    ``numbers_row`` the row of its ends). ``ink``: the colour its words are printed in, where coloured."""

    name: str
    mnemonic: str | None
    unit: str
    left: float
    right: float
    cell: tuple[float, float]
    top: float
    bottom: float
    numbers_row: float
    ink: tuple[int, int, int] | None = None
    continues: bool = False  # a row of bare ends right under another entry's: its backup scale
    extra: dict = field(default_factory=dict)


def number(text: str) -> float | None:
    """A printed scale end: ``150``, ``-7.5``, ``0.2``, ``10,000``; None for anything else."""
    t = text.strip()
    if t.startswith("(") and t.endswith(")"):
        t = t[1:-1]  # "(100)"; an unmatched bracket ("10)") is a misread, no number
    t = t.strip("|/{}[]!`").replace("−", "-").replace("–", "-").replace("—", "-")
    t = t.rstrip(".,:;")
    if re.fullmatch(r"[-+]?\d{1,3}(,\d{3})+", t):
        t = t.replace(",", "")
    t = t.replace(",", ".")
    if t.startswith("-.") or t.startswith("."):
        t = t.replace(".", "0.", 1)
    return float(t) if NUMBER.match(t) else None


_GLUED = re.compile(r"^(.*[)A-Za-z])([-+]?\d+(?:\.\d+)?)$|^([-+]?\d+(?:\.\d+)?)([(A-Za-z].*)$")


def tokens(line: Line) -> list[Word]:
    """A line's words with a number glued to a bracket or a word split off it (``(mV)100`` → ``(mV)``, ``100``),
    and digits a letter's space apart joined (``1 50`` → ``150``: a wide ``1`` in some fonts)."""
    out: list[Word] = []
    for w in line.words:
        m = _GLUED.match(w.text)
        if m and (m.group(1) and number(m.group(2)) is not None and ")" in m.group(1)
                  or m.group(3) and number(m.group(3)) is not None and m.group(4).startswith("(")):
            head, tail = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            cut = w.x0 + (w.x1 - w.x0) * len(head) / max(1, len(w.text))
            parts = [Word(w.x0, w.y0, cut, w.y1, head, w.ink), Word(cut, w.y0, w.x1, w.y1, tail, w.ink)]
        else:
            parts = [w]
        for p in parts:
            prev = out[-1] if out else None
            if (prev is not None and re.fullmatch(r"-?\d+", prev.text) and re.fullmatch(r"\d+(\.\d+)?", p.text)
                    and p.x0 - prev.x1 < 0.45 * max(p.height, prev.height)):
                out[-1] = Word(prev.x0, min(prev.y0, p.y0), p.x1, max(prev.y1, p.y1), prev.text + p.text, prev.ink)
            else:
                out.append(p)
    return out
