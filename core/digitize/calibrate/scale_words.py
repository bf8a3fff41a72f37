"""The words of a scale box, read once with their places and inks, and the entries they make.

A scale box prints, per curve, its name (often with its mnemonic in brackets), its unit and the values at the
track's two ends, in one of a few layouts: ``0  Gamma Ray (GAPI)  150`` on one line; the name on one line and
``6  in  16`` or ``0  50  100`` beneath it; the name on up to five lines of a narrow cell with ``-7.5  7.5``
beneath; a legend of names and pen samples whose ends are printed in the log body. This module reads the words
of a region once (one Tesseract call: the picture cleaned of rules and graphics, scaled to a size Tesseract
reads well), groups them into the cells the box's rules draw and into lines, and makes an :class:`Entry` of each
line whose first and last words are numbers, its name the words between them or the lines above them in its
cell. ``scale_box.py`` reads the header's boxes with it, ``body_scales.py`` the scale rows printed in the log.

Everything here works in an upright region (depth down its rows) and reports positions in its pixels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import cv2
import numpy as np

from core.digitize.calibrate.curve_names import (
    known_name,
    mnemonic_for,
    names_a_curve,
    split_name,
    unit_for,
    unit_in_name,
)

# The sizes below are in inches of print (times the scan's dpi) unless named in px; each was set on the develop
# half of the labelled archive (tests/data/archive_labels, 292 curves in 23 scans of 70-200 dpi), never on the
# held-out half, and kept where it read more of those boxes' curves than its neighbours did.
READ_PX = 32.0  # a region's text is enlarged until its lines are about this tall (Tesseract reads 8-px digits badly)
READ_DPI = 250.0  # without text to measure, a region is enlarged by READ_DPI / dpi
MAX_UPSCALE = 4.0  # ... at most this many times (a 70-dpi print's 7-px digits read no better beyond)
STRIP_PX = 40.0  # a number read again alone is enlarged to about this height, and half as much again
INK_LEVEL = 170  # a pixel darker than this (in its darkest channel away from black ink: yellow reads dark) is ink
WALL_IN = 0.3  # a rule down the rows this long is a wall (a title's letters can stand 0.2 in tall)
RULE_IN = 0.2  # ink runs across this long (about twice a capital's width) are rules or pen samples, not letters
GRAPHIC_IN = 0.28  # a blob taller than this after the rules are gone is no letter: a fill, a colour legend, a curve
GROUP_GAP_IN = 0.07  # letters this close (a word space and more at 8 pt) are read as one run of text
MAX_STACK_PX = 30000  # Tesseract refuses a picture taller than 32,767 px
PITCH_TOL = 0.6  # characters a number's reading may be off the count its length holds at the batch's pitch
HEIGHT_TOL = 0.2  # ... and its letters' height off the batch's by no more than this share
SOFT_READ_PX = 42.0  # a number is enlarged to about this tall for Tesseract (8-px digits read best at about 5 times)
APART = 0.9  # a scale end stands at least this many text heights from the words beside it
NAME_LINES = 7  # a name is printed on up to this many lines (a cement log's 0.75-in cells: name, sector, mnemonic
# broken over two lines, unit)
TURNED_RATIO = 2.0  # a box is printed sideways when its letters run this much more down than along (the develop
# half's sideways boxes measure 2.5, its upright ones at most 1.65)
THIN_IN = 0.045  # a rule is at most this thick (9 px at 200 dpi); a line of text closed into a band is thicker
DASH_THIN_IN = 0.02  # a dashed rule is at most this thick (4 px at 200 dpi)
BLACK_LEVEL = 60  # on a colour print a black word's pixels are darker than this; a grey grid line is lighter
COLOURED = 60  # a pixel whose channels spread this far apart is coloured ink (a red or blue word), not grey
TEXT_LEVEL = 110  # on a grey print words are darker than this; a grey grid line is lighter
_BRACKETS = str.maketrans("{}[]", "()()")  # Tesseract reads a small print's round brackets as curly or square
NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d+)?|\.\d+)$")


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


def ink_picture(grey: np.ndarray, rgb: np.ndarray | None) -> np.ndarray:
    """The region as Tesseract should see it: its grey, and away from dark ink the darkest channel of its colour
    (a yellow or pale red word is as legible as a black one). Beside dark ink the grey stays: a black word's
    antialiased colour fringes (orange and blue on a 70-dpi print) would otherwise thicken every letter into a blob."""
    if rgb is None:
        return grey
    least = rgb.min(axis=2)
    near_dark = cv2.dilate((grey < INK_LEVEL).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    return np.where(near_dark, grey, np.minimum(grey, least))


def rule_masks(ink: np.ndarray, dpi: float) -> tuple[np.ndarray, np.ndarray]:
    """(horizontal, vertical) masks of the rules: ink runs :data:`RULE_IN` long or longer, dashed rules closed
    into runs first (a dashed pen sample under a name is a rule too)."""
    dark = (ink < INK_LEVEL).astype(np.uint8)
    n = max(8, int(round(RULE_IN * dpi)))
    across = cv2.morphologyEx(dark, cv2.MORPH_OPEN, np.ones((1, n), np.uint8))
    closed = cv2.morphologyEx(dark, cv2.MORPH_CLOSE, np.ones((1, max(3, n // 3)), np.uint8))
    dashed = cv2.morphologyEx(closed, cv2.MORPH_OPEN, np.ones((1, 3 * n), np.uint8))
    tall = max(10, int(round(WALL_IN * dpi)))
    along = cv2.morphologyEx(dark, cv2.MORPH_OPEN, np.ones((tall, 1), np.uint8))
    # a solid pen sample may be heavy; a dashed one is a thin run once closed (letters close into a band)
    ruled = _ruled_only(across, dark, dpi, along > 0, THIN_IN) | _ruled_only(dashed, dark, dpi, along > 0, DASH_THIN_IN)
    return ruled, along > 0


def _ruled_only(runs: np.ndarray, dark: np.ndarray, dpi: float, along: np.ndarray, thin: float) -> np.ndarray:
    """The ink of the long runs across that are rules: thin, and with paper above or below them. A row through a
    line of small bold text (a 70-dpi box's ``Gamma Ray``, its letters a pixel apart) is a long run too, but it is
    as tall as the letters once closed, or has their ink on both sides."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(runs.astype(np.uint8), connectivity=8)
    keep = np.zeros(count, bool)
    inked = dark > 0
    dark = inked & ~along  # a grid's lines along the rows ink every row: they say nothing of letters
    thick = max(2, int(round(thin * dpi)))
    reach = max(2, int(round(0.015 * dpi)))
    for i in range(1, count):
        x, y, w, h = stats[i, :4]
        if h > thick:
            continue
        above = dark[max(0, y - reach), x : x + w].mean() if y - reach >= 0 else 0.0
        below = dark[min(dark.shape[0] - 1, y + h - 1 + reach), x : x + w].mean() if y + h - 1 + reach < dark.shape[0] else 0.0
        keep[i] = min(above, below) < 0.12
    return keep[labels] & inked


def _clean(ink: np.ndarray, dpi: float, rules: tuple[np.ndarray, np.ndarray], rgb: np.ndarray | None = None
           ) -> np.ndarray:
    """The ink picture with its rules, pen samples and graphics (fills, colour legends, curves: blobs taller than
    a letter can be) whitened."""
    out = ink.copy()
    ruled = rules[0] | rules[1]
    # a track's border (an inch or more of rule) goes whole: a scale end printed against it must not keep a
    # stroke of it (``|0`` reads as ``D``); a shorter rule touching a letter keeps the letter's pixels
    n = max(8, int(round(dpi)))
    long_walls = cv2.morphologyEx(rules[1].astype(np.uint8), cv2.MORPH_OPEN, np.ones((n, 1), np.uint8)) > 0
    # a coloured pixel on a black or grey wall is a word printed over it (a mud log's ends sit on its decade
    # lines): it stays
    coloured = np.zeros_like(long_walls) if rgb is None else (
        rgb.max(axis=2).astype(np.int16) - rgb.min(axis=2) >= COLOURED)
    out[long_walls & ~coloured] = 255
    # the row of a rule that touches a letter stays: at 70-80 dpi a name printed a pixel under its pen sample loses
    # its letters' tops with the rule's antialiased edge, and Tesseract reads "Gamma Ray" as "G@---=-+-"
    letters = ((ink < INK_LEVEL) & ~ruled).astype(np.uint8)
    touching = cv2.dilate(letters, np.ones((3, 3), np.uint8)) > 0
    # a grid line through a word in the log body is lighter than the word, or grey where the word has colour:
    # its pixels go, the word's stay
    if rgb is None:
        word = ink <= TEXT_LEVEL
    else:
        spread = rgb.max(axis=2).astype(np.int16) - rgb.min(axis=2)
        word = (ink <= BLACK_LEVEL) | (spread >= COLOURED)
    out[ruled & ~(touching & word)] = 255
    dark = (out < INK_LEVEL).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(dark, connectivity=8)
    big = (stats[:, cv2.CC_STAT_HEIGHT] > GRAPHIC_IN * dpi) | (stats[:, cv2.CC_STAT_AREA] > (GRAPHIC_IN * dpi) ** 2)
    big[0] = False
    if big.any():
        out[big[labels]] = 255
    return out


@dataclass
class Reading:
    """A region read: its words, their lines (in the cells its ``walls`` make), the cleaned picture Tesseract read
    and the factor it was scaled by, and the region's rules across (pen samples among them)."""

    words: list[Word]
    lines: list[Line]
    clean: np.ndarray
    scale: float
    across: np.ndarray
    walls: list[tuple[float, int, int]]
    ink: np.ndarray | None = None  # the ink picture before cleaning (pen samples, dotted ones too)


def read_region(grey: np.ndarray, rgb: np.ndarray | None, dpi: float, borders: tuple[float, ...] = (),
                box_walls: bool = True) -> Reading:
    """Every word of an upright region (``rgb``: its colour pixels on a colour print) with its box and ink, in
    lines within cells: the box's own vertical rules (``box_walls``; not in the log body, whose grid would cut
    every line) and ``borders`` (track borders, columns) bound the cells; ends Tesseract dropped read again."""
    ink = ink_picture(grey, rgb)
    across, along = rule_masks(ink, dpi)
    walls = (wall_segments(along, dpi) if box_walls else []) + [(float(x), 0, grey.shape[0]) for x in borders]
    clean = _clean(ink, dpi, (across, along), rgb)
    groups, owner = text_groups(clean, walls, dpi)
    scale = read_scale(groups, dpi)
    words = []
    for (x0, y0, x1, y1), found in zip(groups, read_groups(clean, groups, owner, scale)):
        for wx0, wy0, wx1, wy1, text in found:
            text = text.translate(_BRACKETS)
            if re.search(r"[A-Za-z0-9]", text) and wy1 - wy0 >= 0.03 * dpi:
                words.append(Word(x0 + wx0, y0 + wy0, x0 + wx1, y0 + wy1, text,
                                  _word_ink(rgb, ink, x0 + wx0, y0 + wy0, x0 + wx1, y0 + wy1)))
    lines = lines_in_cells(words, walls, grey.shape[1])
    reread_struck_numbers(lines, clean, scale)
    complete_ends(lines, clean, scale)
    minus_signs(lines, clean)
    decimal_points(lines, clean)
    reread_lone_digits(lines, clean)
    return Reading(words, lines, clean, scale, across, walls, ink)


def read_scale(groups: list[tuple[int, int, int, int]], dpi: float) -> float:
    """How much a region's text is enlarged for Tesseract: to :data:`READ_PX` tall lines (its runs' median
    height), at most :data:`MAX_UPSCALE` times; the print's resolution says it where there is no text."""
    if not groups:
        return float(np.clip(READ_DPI / dpi, 1.0, MAX_UPSCALE))
    typical = float(np.median([y1 - y0 for _, y0, _, y1 in groups]))
    return float(np.clip(READ_PX / max(typical, 1.0), 1.0, MAX_UPSCALE))


def text_groups(clean: np.ndarray, walls: list[tuple[float, int, int]], dpi: float
                ) -> tuple[list[tuple[int, int, int, int]], np.ndarray]:
    """Boxes (x0, y0, x1, y1) of the runs of text in a cleaned region (letters a word space apart joined along
    their line, never across a wall, never with the line above or below), and the picture with only their ink
    (each run read alone must not show a neighbour's letters in its margin)."""
    dark = (clean < INK_LEVEL).astype(np.uint8)
    if dark.sum() < 8:
        return [], clean
    gap = max(3, int(round(GROUP_GAP_IN * dpi)))
    joined = cv2.dilate(dark, np.ones((1, gap), np.uint8))
    for x, a, b in walls:
        c = int(round(x))
        if 0 <= c < joined.shape[1]:
            joined[max(0, a) : b + 1, max(0, c - 1) : c + 2] = 0
    count, labels, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    out, ids = [], []
    lo, hi = 0.03 * dpi, GRAPHIC_IN * dpi
    for i in range(1, count):
        x, y, w, h = stats[i, :4]
        half = gap // 2  # the dilation's reach either side (none past the region's edges)
        a, b = (x + half if x > 0 else x), (x + w - half if x + w < joined.shape[1] else x + w)
        if lo <= h <= hi and b - a >= 2:
            out.append((int(a), int(y), int(b), int(y + h)))
            ids.append(i)
    # each run's ink in a picture of its own label: a run cut out with a margin shows no neighbour's letter
    owner = np.zeros(count, np.int32)
    owner[ids] = np.arange(1, len(ids) + 1)
    owner = owner[labels]
    return _one_line_each(out, owner, dark), owner


def _one_line_each(groups: list[tuple[int, int, int, int]], owner: np.ndarray, dark: np.ndarray
                   ) -> list[tuple[int, int, int, int]]:
    """Runs of text two or three lines tall (a small print's lines touch where a bracket meets the letters below)
    cut into lines where their ink is thinnest, the owner picture relabelled to match (in place)."""
    if not groups:
        return groups
    typical = float(np.median([y1 - y0 for _, y0, _, y1 in groups]))
    out = list(groups)
    for k, (x0, y0, x1, y1) in enumerate(groups):
        if y1 - y0 < 1.7 * typical:
            continue
        mine = (owner[y0:y1, x0:x1] == k + 1) & (dark[y0:y1, x0:x1] > 0)
        profile = mine.sum(axis=1)
        lo, hi = int(0.6 * typical), (y1 - y0) - int(0.6 * typical)
        if hi <= lo:
            continue
        low = lo + int(np.argmin(profile[lo:hi]))
        if profile[low] > 0.2 * profile.max():
            continue  # no gap between lines: one line of large type (a title), not two of small
        cut = y0 + low
        out[k] = (x0, y0, x1, cut)
        new_id = len(out) + 1
        lower = owner[cut:y1, x0:x1]
        lower[lower == k + 1] = new_id
        out.append((x0, cut, x1, y1))
    return out


def read_groups(clean: np.ndarray, groups: list[tuple[int, int, int, int]], owner: np.ndarray, scale: float
                ) -> list[list[tuple[float, float, float, float, str]]]:
    """The words of each text group (boxes in the group's own pixels), read in as few Tesseract calls as fit its
    picture size: each group cut out, scaled, and stacked one under another with paper between, read as a block
    of lines (Tesseract's own page layout drops lone digits and whole cells of a box; here it only reads)."""
    from core.digitize.calibrate.ocr import image_to_data

    out: list[list] = [[] for _ in groups]
    margin = 3
    width = int(max((x1 - x0 for x0, _, x1, _ in groups), default=0) * scale) + 2 * margin * int(scale) + 40
    batch: list[tuple[int, np.ndarray, int]] = []  # (group index, its part of the stack, rows of paper above it)

    def flush() -> None:
        if not batch:
            return
        data = image_to_data(np.concatenate([p for _, p, _ in batch], axis=0), config="--psm 6")
        starts = np.cumsum([0] + [p.shape[0] for _, p, _ in batch[:-1]])
        for i, text in enumerate(data["text"]):
            text = text.strip()
            if not text:
                continue
            top, h = data["top"][i], data["height"][i]
            j = int(np.searchsorted(starts, top + h / 2, side="right") - 1)
            if j < 0:
                continue
            k, _, gap = batch[j]
            x0, y0 = groups[k][0], groups[k][1]
            wx0 = (data["left"][i] - 20) / scale - min(margin, x0)
            wy0 = (top - starts[j] - gap) / scale - min(margin, y0)
            out[k].append((wx0, wy0, wx0 + data["width"][i] / scale, wy0 + h / scale, text))
        batch.clear()

    height = 0
    for k, (x0, y0, x1, y1) in enumerate(groups):
        rows, cols = slice(max(0, y0 - margin), y1 + margin), slice(max(0, x0 - margin), x1 + margin)
        cut = np.where(owner[rows, cols] == k + 1, clean[rows, cols], 255).astype(np.uint8)
        darkest = int(cut.min())
        if 0 < darkest < 200:  # a pale red or green word read as boldly as a black one
            cut = ((cut.astype(np.int32) - darkest) * 255 // (255 - darkest)).astype(np.uint8)
        big = cv2.resize(cut, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC) if scale > 1 else cut
        gap = max(10, big.shape[0] // 2)
        part = np.full((big.shape[0] + 2 * gap, width), 255, np.uint8)
        part[gap : gap + big.shape[0], 20 : 20 + big.shape[1]] = big
        if height + part.shape[0] > MAX_STACK_PX:
            flush()
            height = 0
        batch.append((k, part, gap))
        height += part.shape[0]
    flush()
    return out


def _word_ink(rgb: np.ndarray | None, ink: np.ndarray, x0: float, y0: float, x1: float, y1: float):
    """The median colour of a word's inked pixels, None on a grey region or where the ink is black or grey."""
    if rgb is None:
        return None
    a, b = max(0, int(y0)), min(ink.shape[0], int(np.ceil(y1)))
    c, d = max(0, int(x0)), min(ink.shape[1], int(np.ceil(x1)))
    mask = ink[a:b, c:d] < INK_LEVEL
    if mask.sum() < 4:
        return None
    return chroma_colour(rgb[a:b, c:d][mask])


def chroma_colour(pixels: np.ndarray) -> tuple[int, int, int] | None:
    """The colour of a set of ink pixels (N × 3): their median where it has colour, None for black or grey."""
    from core.io.colour import NEUTRAL_CHROMA, lab_of

    median = np.median(pixels.astype(np.float32), axis=0)
    _, a, b = lab_of(median)
    return tuple(int(v) for v in median) if float(np.hypot(a, b)) >= NEUTRAL_CHROMA else None


# -- cells and lines -------------------------------------------------------------------------------------------


def wall_segments(vertical: np.ndarray, dpi: float) -> list[tuple[float, int, int]]:
    """The box's vertical rules as (column, first row, last row)."""
    n, _, stats, centroids = cv2.connectedComponentsWithStats(vertical.astype(np.uint8), connectivity=8)
    out = []
    for i in range(1, n):
        x, y, w, h = stats[i, :4]
        if w <= max(4, 0.05 * dpi):
            out.append((float(centroids[i][0]), int(y), int(y + h - 1)))
    return out


def cell_of(word: Word, walls: list[tuple[float, int, int]], width: int) -> tuple[float, float]:
    """The columns between the nearest walls left and right of a word that run past its middle row."""
    left, right = 0.0, float(width - 1)
    for x, a, b in walls:
        if a - 2 <= word.yc <= b + 2:
            if x <= word.x0 + 1 and x > left:
                left = x
            elif x >= word.x1 - 1 and x < right:
                right = x
    return left, right


def split_at_walls(words: list[Word], walls: list[tuple[float, int, int]]) -> list[Word]:
    """Words cut where a wall runs through them: two scale ends printed either side of a track border with no gap
    Tesseract can see (``6|6`` read as ``6,6``) are two words, one in each track."""
    out = []
    for w in words:
        cut = next((x for x, a, b in walls if w.x0 + 2 < x < w.x1 - 2 and a - 2 <= w.yc <= b + 2), None)
        if cut is None or len(w.text) < 2:
            out.append(w)
            continue
        k = int(round(len(w.text) * (cut - w.x0) / (w.x1 - w.x0)))
        head, tail = w.text[:k].strip(" ,.|'"), w.text[k:].strip(" ,.|'")
        out += [Word(w.x0, w.y0, cut - 1, w.y1, head, w.ink)] if head else []
        out += [Word(cut + 1, w.y0, w.x1, w.y1, tail, w.ink)] if tail else []
    return out


def lines_in_cells(words: list[Word], walls: list[tuple[float, int, int]], width: int) -> list[Line]:
    """Words grouped into lines, each line in one cell: a word joins a line of its cell whose rows hold its middle
    row, and lines are ordered top to bottom, words left to right."""
    lines: list[Line] = []
    for w in sorted(split_at_walls(words, walls), key=lambda w: (w.y0, w.x0)):
        cell = cell_of(w, walls, width)
        for line in lines:
            if line.cell == cell and line.y0 - 1 <= w.yc <= line.y1 + 1 and w.height < 2.2 * line.height:
                line.words.append(w)
                break
        else:
            lines.append(Line([w], cell))
    for line in lines:
        line.words.sort(key=lambda w: w.x0)
    return sorted(lines, key=lambda ln: (ln.y0, ln.cell[0]))


# -- ends Tesseract dropped ---------------------------------------------------------------------------------------


def read_strips(strips: list[np.ndarray], scale: float, digits: bool = True) -> list[str]:
    """The text of each small picture (ink dark on paper), all read in one Tesseract call: stacked one under
    another with paper between, read as a block, each line of text given back to the strip it lies in. Each is
    stacked twice, at about :data:`STRIP_PX` tall and half as large again, and the first reading that is a number
    (with ``digits``) or text is kept: Tesseract drops a lone 0 at one size and reads it at another."""
    from core.digitize.calibrate.ocr import image_to_data

    if not strips:
        return []
    base = float(np.clip(STRIP_PX / max(1.0, float(np.median([s.shape[0] for s in strips]))), 1.0, 5.0))
    parts, spans, y = [], [], 0
    width = int(max(s.shape[1] for s in strips) * base * 1.5) + 40
    for s in strips:
        for size in (base, 1.5 * base):
            big = cv2.resize(s, None, fx=size, fy=size, interpolation=cv2.INTER_CUBIC)
            gap = max(12, big.shape[0] // 2)
            part = np.full((big.shape[0] + 2 * gap, width), 255, np.uint8)
            part[gap : gap + big.shape[0], 20 : 20 + big.shape[1]] = big
            parts.append(part)
            spans.append((y, y + part.shape[0]))
            y += part.shape[0]
    config = "--psm 6" + (" -c tessedit_char_whitelist=0123456789.-" if digits else "")
    data = image_to_data(np.concatenate(parts, axis=0), config=config)
    read = [""] * len(parts)
    starts = np.array([a for a, _ in spans])
    for i, text in enumerate(data["text"]):
        if text.strip():
            k = int(np.searchsorted(starts, data["top"][i] + data["height"][i] / 2, side="right") - 1)
            if k >= 0:
                read[k] = (read[k] + " " + text.strip()).strip()
    out = []
    for k in range(len(strips)):
        first, second = read[2 * k], read[2 * k + 1]
        good = [t for t in (first, second) if (number(t.replace(" ", "")) is not None if digits else t)]
        out.append(good[0] if good else first)
    return out


def minus_signs(lines: list[Line], clean: np.ndarray) -> None:
    """A minus sign Tesseract dropped from a small print's end (``-7.5`` read as ``7.5``: two pixels of dash at
    75 dpi) put back: the leftmost blob at the number's front is a short flat dash, level with the middle of the
    digits (in place)."""
    dark = (clean < INK_LEVEL).astype(np.uint8)
    for line in lines:
        toks = tokens(line)
        for w in (toks[0], toks[-1]) if len(toks) > 1 else toks:
            if number(w.text) is None or w.text.lstrip().startswith("-") or w not in line.words:
                continue
            h = w.y1 - w.y0
            a, b = max(0, int(w.y0)), min(dark.shape[0], int(np.ceil(w.y1)) + 1)
            # within its cell: the end of the cell to the left stands a pixel or two past the wall
            c0 = max(0, int(w.x0 - 0.8 * h), int(line.cell[0]) + 1)
            c1 = min(dark.shape[1], int(np.ceil(w.x0 + 0.8 * h)))
            if b - a < 4 or c1 - c0 < 3:
                continue
            count, labels, stats, _ = cv2.connectedComponentsWithStats(dark[a:b, c0:c1], connectivity=8)
            if count < 2:
                continue
            first = 1 + int(np.argmin(stats[1:, 0]))
            x, y, cw, ch = stats[first, :4]
            mid = a + y + ch / 2
            flat = ch <= max(2, 0.25 * h) and 0.2 * h <= cw <= 0.8 * h
            level = w.y0 + 0.3 * h <= mid <= w.y1 - 0.25 * h
            rest = [i for i in range(1, count) if i != first]
            apart = all(stats[i, 0] >= x + cw for i in rest)  # the digits begin right of the dash
            if count >= 3 and flat and level and apart:
                w.text = "-" + w.text
            elif not w.text.startswith("4") and _fused_dash(labels[:, x : x + cw] == first, a - w.y0, h):
                w.text = "-" + w.text


def _fused_dash(blob: np.ndarray, offset: float, h: float) -> bool:
    """Whether a number's first blob (its rows from ``offset`` below the word's top; ``h`` the word's height)
    begins with a minus sign fused to its first digit (``-0.05`` in 14-px type, the dash touching the 0): its
    first columns hold a thin bar at mid-height, at least a fifth of the height long, and then the digit's stroke
    rises at once to 0.4 of the height and more. A 4's bar runs into a slanted stroke that rises gradually and a
    4 is never taken (the caller leaves it out)."""
    spans = []
    for col in blob.T:
        rows = np.flatnonzero(col)
        spans.append((rows[0] + offset, rows[-1] + offset) if rows.size else None)
    run = 0
    for k, span in enumerate(spans):
        if span is None:
            return False
        top, bottom = span
        thin = bottom - top + 1 <= max(2, 0.25 * h) and 0.3 * h <= 0.5 * (top + bottom) <= 0.75 * h
        if thin:
            run += 1
            continue
        tall = bottom - top + 1 >= 0.4 * h  # a round digit's first column is shorter than its height
        return tall and 0.2 * h <= run <= 0.8 * h and k == run
    return False


def decimal_points(lines: list[Line], clean: np.ndarray) -> None:
    """A decimal point Tesseract dropped from a small print's end (``7.5`` read ``75``, ``2.7`` read ``27``: one
    pixel of ink at 70 dpi) put back: between two of the number's digits lies a blob no wider or taller than a
    quarter of the digits' height, sitting on their baseline (in place). The number's digits must be its blobs
    one for one, so a digit broken in two is never taken for a point."""
    dark = (clean < INK_LEVEL).astype(np.uint8)
    for line in lines:
        toks = tokens(line)
        for w in (toks[0], toks[-1]) if len(toks) > 1 else toks:
            digits = w.text.lstrip("-+")
            if w not in line.words or not re.fullmatch(r"\d{2,}", digits):
                continue
            h = w.y1 - w.y0
            a, b = max(0, int(w.y0) - 1), min(dark.shape[0], int(np.ceil(w.y1)) + 2)
            c0, c1 = max(0, int(w.x0) - 1), min(dark.shape[1], int(np.ceil(w.x1)) + 2)
            if b - a < 5 or c1 - c0 < 4:
                continue
            count, _, stats, _ = cv2.connectedComponentsWithStats(dark[a:b, c0:c1], connectivity=8)
            blobs = sorted((stats[i, 0], stats[i, 1], stats[i, 2], stats[i, 3]) for i in range(1, count))
            tall = [s for s in blobs if s[3] >= 0.55 * h]
            if len(tall) != len(digits):
                continue
            # between the first digit and the last (a minus sign stands left of them all), in the digits' rows (a
            # speck of the rule above, left by the cleaning, is no point)
            top = min(y for _, y, _, _ in tall)
            inside = [s for s in blobs if s not in tall and s[0] >= tall[0][0] + tall[0][2] and s[0] < tall[-1][0]
                      and s[1] >= top]
            small = [s for s in inside if s[2] <= max(2, 0.25 * h) and s[3] <= max(2, 0.25 * h)]
            if len(small) != 1 or len(inside) != 1:
                continue
            bottom = max(y + ch for _, y, _, ch in tall)
            x, y, cw, ch = small[0]
            on_baseline = bottom - 0.25 * h <= y + ch <= bottom + 1
            k = sum(1 for s in tall if s[0] + s[2] <= x)  # digits left of the point
            if on_baseline and 0 < k < len(digits):
                sign = w.text[: len(w.text) - len(digits)]
                w.text = f"{sign}{digits[:k]}.{digits[k:]}"


def _stray(word: Word) -> bool:
    """A word too short and narrow to be a name's: a lone end digit Tesseract misread (``it)`` for a 0)."""
    return (number(word.text) is None and len(word.text) <= 3 and word.x1 - word.x0 <= 1.3 * word.height
            and not re.fullmatch(r"[A-Za-z]{2,3}", word.text))


_STRUCK = re.compile(r"^(?=(?:\D*\d){2})\d[\d.]*[^\d\s().,/]{1,2}[\d.]*$")  # digits, a stray mark or two: "10€"


def reread_struck_numbers(lines: list[Line], clean: np.ndarray, scale: float) -> None:
    """Numbers a grid line or a wall runs through, read with a stray mark for a digit (a mud log's ``100`` over the
    gas track's grid read ``10€``, ``1000`` read ``10NI0``), read again alone with digits only, in lines that are
    mostly numbers already (a row of ends or ticks; a name's words are left alone); in place. Kept only where
    the reading is a number with a digit for each of the word's marks (``10€`` read ``1010`` is no 100)."""
    wanted: list[tuple[Word, tuple[int, int, int, int]]] = []
    for line in lines:
        nums = sum(number(w.text) is not None for w in line.words)
        for w in line.words:
            if nums >= 1 and 2 * (nums + 1) >= len(line.words) + 1 and _STRUCK.match(w.text):
                a, b = max(0, int(w.y0) - 1), min(clean.shape[0], int(np.ceil(w.y1)) + 2)
                c0, c1 = max(0, int(w.x0) - 2), min(clean.shape[1], int(np.ceil(w.x1)) + 3)
                if b - a >= 4 and c1 - c0 >= 4:
                    wanted.append((w, (a, b, c0, c1)))
    texts = read_strips([clean[a:b, c0:c1] for _, (a, b, c0, c1) in wanted], scale)
    for (w, _), text in zip(wanted, texts):
        text = text.replace(" ", "")
        if number(text) is not None and sum(ch.isdigit() for ch in text) == len(w.text.replace(".", "")):
            w.text = text


def read_small_numbers(crops: list[np.ndarray]) -> list[float | None]:
    """The numbers of upright crops (ink dark on paper), read in one Tesseract call, digits only: each enlarged to
    about :data:`SOFT_READ_PX` tall and softened (a print's square pixels enlarged sharp read a 1 as a 4), stacked with
    paper between. A reading with fewer characters than the crop has blobs is none: read with digits only, a
    name's letters come out as a digit or two, and a number half hidden under another ink as a 1."""
    from core.digitize.calibrate.ocr import image_to_data

    if not crops:
        return []
    parts, starts, y = [], [], 0
    scales = [float(np.clip(SOFT_READ_PX / max(1, c.shape[0]), 2.0, 8.0)) for c in crops]
    width = int(max(c.shape[1] * s for c, s in zip(crops, scales))) + 60
    for crop, s in zip(crops, scales):
        big = cv2.GaussianBlur(cv2.resize(crop, None, fx=s, fy=s, interpolation=cv2.INTER_LINEAR), (0, 0), s / 3)
        gap = max(12, big.shape[0] // 2)
        part = np.full((big.shape[0] + 2 * gap, width), 255, np.uint8)
        part[gap : gap + big.shape[0], 30 : 30 + big.shape[1]] = big
        parts.append(part)
        starts.append(y)
        y += part.shape[0]
    data = image_to_data(np.concatenate(parts, axis=0), config="--psm 6 -c tessedit_char_whitelist=0123456789.-")
    text = [""] * len(crops)
    first = np.array(starts)
    for i, t in enumerate(data["text"]):
        if t.strip():
            k = int(np.searchsorted(first, data["top"][i] + data["height"][i] / 2, side="right") - 1)
            text[k] += t.strip()
    out: list[float | None] = []
    for crop, t in zip(crops, text):
        blobs = cv2.connectedComponents((crop < 128).astype(np.uint8), connectivity=8)[0] - 1
        out.append(number(t) if 0 < blobs <= len(t) else None)
    # one type prints every number of a batch: a reading with more or fewer characters than its picture's length
    # holds at their pitch is a part of the number (a curve through ``200000`` read ``200``) or more than it
    # (and its letters are as tall as the others': a dash of a dashed curve, or a dot, is read as a 1 or a 4)
    pitches = [c.shape[1] / len(t) for c, t, v in zip(crops, text, out) if v is not None and len(t) >= 2]
    if len(pitches) >= 3:
        pitch = float(np.median(pitches))
        tall = float(np.median([c.shape[0] for c, t, v in zip(crops, text, out) if v is not None and len(t) >= 2]))
        for k, (c, t) in enumerate(zip(crops, text)):
            if out[k] is None:
                continue
            if (len(t) >= 2 and abs(c.shape[1] / pitch - len(t)) > PITCH_TOL) or abs(c.shape[0] - tall) > max(
                    1.0, HEIGHT_TOL * tall):
                out[k] = None
    return out


def reread_lone_digits(lines: list[Line], clean: np.ndarray) -> None:
    """An end of one digit read again alone, enlarged and softened (:func:`read_small_numbers`): in the one
    call that reads a box, a 6 against a wall in 10-px type comes out a 5 (a caliper's ``6 … 16``). Where the
    second reading is one digit too and differs, it is the end (in place); where it is none, the first stands."""
    lone = []
    for line in lines:
        toks = tokens(line)
        for w in {id(t): t for t in (toks[0], toks[-1])}.values():
            if re.fullmatch(r"\d", w.text):
                y0, y1 = max(0, int(w.y0) - 1), min(clean.shape[0], int(np.ceil(w.y1)) + 1)
                x0, x1 = max(0, int(w.x0) - 1), min(clean.shape[1], int(np.ceil(w.x1)) + 1)
                if y1 - y0 >= 4 and x1 - x0 >= 2:
                    lone.append((w, np.ascontiguousarray(clean[y0:y1, x0:x1])))
    for (w, _), value in zip(lone, read_small_numbers([c for _, c in lone])):
        if value is not None and re.fullmatch(r"\d", f"{value:g}") and f"{value:g}" != w.text:
            w.text = f"{value:g}"


def complete_ends(lines: list[Line], clean: np.ndarray, scale: float) -> None:
    """A scale end Tesseract dropped or misread (a lone ``0`` or ``6`` against a cell's wall) read again: where a
    line's outer word on one side is a number or a name and the other side holds ink between it and the cell's
    wall, or a stray short word, that ink is read alone as a number (one Tesseract call for them all) and put in
    the line (in place)."""
    wanted: list[tuple[Line, bool, tuple[int, int, int, int], Word | None]] = []
    for line in lines:
        toks = tokens(line)
        first, last = number(toks[0].text) is not None, number(toks[-1].text) is not None
        if first and last and len(toks) >= 2:
            continue
        if not (first or last or re.search("[A-Za-z]{2}", line.text)):
            continue
        h = line.height
        a, b = max(0, int(line.y0 - 1)), min(clean.shape[0], int(np.ceil(line.y1 + 1)))
        for left_side in (True, False):
            if (left_side and first) or (not left_side and last):
                continue
            outer = toks[0] if left_side else toks[-1]
            # a short word against the wall across from a number is that end misread (``7.5`` read ``Ze`` in a
            # 70-dpi cement log's cells): a name's words stand clear of the walls
            walled = (outer.x0 - line.cell[0] if left_side else line.cell[1] - outer.x1) <= 0.5 * h
            opposite = last if left_side else first
            stray = outer if len(toks) >= 2 and (_stray(outer) or (walled and opposite and len(outer.text) <= 3
                                                                   and "(" not in outer.text)) else None
            if left_side:
                x0, x1 = int(np.ceil(line.cell[0] + 2)), int((outer.x1 + 2) if stray else (outer.x0 - 2))
            else:
                x0, x1 = int((outer.x0 - 2) if stray else (outer.x1 + 2)), int(line.cell[1] - 2)
            x0, x1 = max(0, x0), min(clean.shape[1], x1)
            if x1 - x0 < 3:
                continue
            ink = clean[a:b, x0:x1] < INK_LEVEL
            cols = np.flatnonzero(ink.any(axis=0))
            if ink.sum() < 6 or cols.size == 0:
                continue
            # the run of ink nearest the wall, if it starts at the wall: an end stands against its track's edge
            runs = np.split(cols, np.flatnonzero(np.diff(cols) > max(2, 0.6 * h)) + 1)
            run = runs[0] if left_side else runs[-1]
            c0, c1 = x0 + int(run[0]), x0 + int(run[-1]) + 1
            near = (c0 - line.cell[0]) if left_side else (line.cell[1] - c1)
            if c1 - c0 > 6 * h or (stray is None and near > 2.0 * h):
                continue
            wanted.append((line, left_side, (a, b, max(0, c0 - 3), min(clean.shape[1], c1 + 3)), stray))
    texts = read_strips([clean[a:b, c0:c1] for _, _, (a, b, c0, c1), _ in wanted], scale)
    for (line, left_side, (a, b, c0, c1), stray), text in zip(wanted, texts):
        value = number(text.replace(" ", ""))
        if value is None:
            continue
        if stray is not None and stray in line.words:
            line.words.remove(stray)
        w = Word(float(c0 + 3), float(a + 2), float(c1 - 3), float(b - 2), text.replace(" ", ""), None)
        line.words.insert(0, w) if left_side else line.words.append(w)


# -- entries ---------------------------------------------------------------------------------------------------

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


def ends_of(line: Line) -> tuple[float, float, list[Word]] | None:
    """(left, right, the words between) of a line that begins and ends with a number set apart from the rest:
    a scale's ends stand at the track's edges, a word space or more from its name, while a number a letter's
    space from a word is the name's own (``3' Amplitude x 5``); one glued to a bracket is an end (``(mV)100``)."""
    toks = tokens(line)
    if len(toks) < 2:
        return None
    left, right = number(toks[0].text), number(toks[-1].text)
    if left is None or right is None:
        return None
    if len(toks) > 2:
        h = line.height
        if toks[1].x0 - toks[0].x1 < APART * h and not toks[1].text.startswith("("):
            return None
        if toks[-1].x0 - toks[-2].x1 < APART * h and not toks[-2].text.endswith(")"):
            return None
    fitted = _ends_by_spacing(toks, line.cell, line.height)
    if fitted is not None:
        left, right = fitted
    return left, right, toks[1:-1]


def _nice(value: float) -> float | None:
    """A value a print labels a track's end with (1, 2, 2.5, 5 times a power of ten, or a whole number of them),
    when ``value`` is within 4 % of one; None otherwise."""
    if value <= 0 or not np.isfinite(value):
        return None
    power = 10.0 ** np.floor(np.log10(value))
    for m in (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.5, 8.0, 10.0):
        if abs(value - m * power) <= 0.04 * m * power:
            return float(round(m * power, 10))
    return None


def _ends_by_spacing(toks: list[Word], cell: tuple[float, float], h: float) -> tuple[float, float] | None:
    """The track's ends where a line of three or more numbers is a scale's ticks (decades ``1 10 100 1000``, or
    steps ``0 50 100``) and an end is not printed at its wall (a log track's ``10 100 1000`` over 5-5000, or a first
    ``1`` lost against the border): the ticks' places fix the scale, the wall's place gives the end, kept only when
    it is a value a print would label (:func:`_nice`). None where the numbers are no such series."""
    nums = [(w, number(w.text)) for w in toks if number(w.text) is not None]
    # a tick struck through by the grid and read with a stray mark (``10€`` for 100) holds its place in the
    # series; the fit must then say a value whose digits begin with the ones read
    struck = [w for w in toks if number(w.text) is None and _STRUCK.match(w.text)]
    if len(nums) < 3 - len(struck) or len(nums) < 2 or len(nums) + len(struck) != len(toks):
        return None
    values = np.array([v for _, v in nums])
    width = cell[1] - cell[0]
    if width <= 0:
        return None
    at_left = nums[0][0].x0 - cell[0] <= 1.5 * h
    at_right = cell[1] - nums[-1][0].x1 <= 1.5 * h
    if at_left and at_right:
        return None  # both ends printed at their walls: nothing to fix
    ratios = values[1:] / np.where(values[:-1] == 0, np.nan, values[:-1])
    log = bool(np.all(values > 0) and np.allclose(ratios, ratios[0], rtol=0.02) and ratios[0] >= 2)
    steps = np.diff(values)
    linear = bool(np.allclose(steps, steps[0], rtol=0.02) and steps[0] != 0)
    if not (log or linear):
        return None
    # each tick's place: its number is centred on its line (a decade's, a step's); an end against its wall
    # stands for the wall
    places = []
    for k, (w, _) in enumerate(nums):
        if k == 0 and at_left:
            places.append(cell[0])
        elif k == len(nums) - 1 and at_right:
            places.append(cell[1])
        else:
            places.append(0.5 * (w.x0 + w.x1))
    t = (np.array(places) - cell[0]) / width
    y = np.log10(values) if log else values
    slope, offset = np.polyfit(t, y, 1)
    if np.max(np.abs(offset + slope * t - y)) > (0.08 if log else 0.04 * abs(values[-1] - values[0])):
        return None  # the ticks are not evenly placed: no scale to extend
    for w in struck:
        at = offset + slope * (0.5 * (w.x0 + w.x1) - cell[0]) / width
        said = _nice(10.0**at if log else at)
        lead = re.match(r"\d+", w.text).group(0)
        if said is None or not f"{said:g}".startswith(lead):
            return None
    ends = [offset, offset + slope]
    if log:
        ends = [10.0 ** e for e in ends]
    left = (_decade_end(nums[0][1], log) if at_left else _nice(ends[0]) if log or ends[0] > 0
            else (0.0 if abs(ends[0]) < 0.04 * abs(slope) else None))
    right = _decade_end(nums[-1][1], log) if at_right else _nice(ends[1])
    if left is None or right is None:
        return None
    return float(left), float(right)


def _decade_end(value: float, log: bool) -> float:
    """An end printed against its wall in a series of decades, as read: its last digit can merge with the wall
    (``1000`` read ``1006``), so on a log series a value within 1 % of one a print labels is that value."""
    nice = _nice(value) if log else None
    return nice if nice is not None and abs(value - nice) <= 0.01 * nice else value


def _ruled_between(across: np.ndarray | None, cell: tuple[float, float], top: float, bottom: float) -> bool:
    """Whether a rule across most of a cell's width runs between rows ``top`` and ``bottom``."""
    if across is None or bottom - top < 1:
        return False
    a, b = max(0, int(np.floor(top))), min(across.shape[0], int(np.ceil(bottom)) + 1)
    c, d = max(0, int(cell[0]) + 2), min(across.shape[1], int(cell[1]) - 1)
    if b <= a or d - c < 4:
        return False
    return bool((across[a:b, c:d].mean(axis=1) >= 0.5).any())


def _name_lines(lines: list[Line], k: int, across: np.ndarray | None = None) -> list[Line]:
    """The lines above line ``k`` in its cell that name it: up to five, each within two line heights of the next,
    none of them a line of ends itself, and no rule between two of them (a pen sample may run between a name and
    its ends, but a rule above a name closes the entry above: ``Collar Locator`` is not ``Temperature``'s)."""
    here = lines[k]
    out: list[Line] = []
    below = here
    for j in range(k - 1, -1, -1):
        ln = lines[j]
        if ln.cell != here.cell:
            continue
        if below.y0 - ln.y1 > 2.2 * max(here.height, ln.height) or len(out) >= NAME_LINES:
            break
        ends = ends_of(ln)
        if ends is not None and ends[0] != ends[1] and ln.height > 0.7 * here.height:
            break  # another curve's ends (a superscript "2  2" marking a second scale is none)
        if out and _ruled_between(across, here.cell, ln.y1, below.y0):
            break
        out.insert(0, ln)
        below = ln
    return out


_SCALE_SAID = re.compile(r"^(?P<name>[A-Za-z][A-Za-z ]*?)\s+Scale\s*:?\s*(?P<a>-?\d+(?:\.\d+)?)\s*-\s*"
                         r"(?P<b>-?\d+(?:\.\d+)?)\s*(?P<unit>[A-Za-z/%]+)?\s*$", re.IGNORECASE)


def _scale_said(line: Line) -> Entry | None:
    """A scale written out in the log body (``Gas Scale: 0-100 units``, ``ROP Scale: 0-5 min/ft``) as an entry."""
    m = _SCALE_SAID.match(line.text.strip())
    if m is None:
        return None
    name, left, right = m.group("name").strip(), float(m.group("a")), float(m.group("b"))
    mnemonic = mnemonic_for(name)
    if mnemonic is None or left == right:
        return None
    inks = [w.ink for w in line.words if w.ink is not None]
    return Entry(name, mnemonic, unit_for(m.group("unit") or ""), left, right, line.cell, line.y0, line.y1,
                 0.5 * (line.y0 + line.y1), inks[0] if inks else None)


def entries(lines: list[Line], across: np.ndarray | None = None) -> list[Entry]:
    """Every line whose first and last words are numbers, as an entry: named by the words between the numbers
    when they name a curve, else by the lines above it in its cell; a line of bare ends right under another
    entry's (no name between) continues that entry (its backup scale)."""
    out: list[Entry] = []
    for k, line in enumerate(lines):
        said = _scale_said(line)
        if said is not None:
            out.append(said)
            continue
        ends = ends_of(line)
        if ends is None:
            continue
        left, right, middle = ends
        if left == right:
            continue
        mid_text = " ".join(w.text for w in middle if number(w.text) is None)
        above = _name_lines(lines, k, across)
        name_words = [w for w in middle if number(w.text) is None]
        name_text, unit = "", ""
        if mid_text and names_a_curve(*split_name(mid_text)[:2]):
            name_text = mid_text
        else:
            unit = unit_for(mid_text) if mid_text else ""
            name_text = " ".join(ln.text for ln in above)
            name_words = [w for ln in above for w in ln.words] + name_words
        top = min([line.y0] + [ln.y0 for ln in above]) if above else line.y0
        if not name_text.strip():
            toks = tokens(line)
            at_walls = (toks[0].x0 - line.cell[0] <= 1.5 * line.height and line.cell[1] - toks[-1].x1 <= 1.5 * line.height)
            if re.search("[A-Za-z]{2}", mid_text) and not at_walls:
                continue  # words between the ends that name nothing known: no curve, and no backup of another
            if re.search("[A-Za-z]{2}", mid_text):
                mid_text = ""  # ends against both walls, words of a title printed over the track between them
            prev = next((e for e in reversed(out) if e.cell == line.cell), None)
            row = 0.5 * (line.y0 + line.y1)
            if prev is not None and prev.name and 0 <= line.y0 - prev.bottom <= 2.5 * line.height:
                out.append(Entry(prev.name, prev.mnemonic, prev.unit, left, right, line.cell, line.y0, line.y1,
                                 row, prev.ink, continues=True))
            else:  # bare ends: a mud log's ends for the curves its legend names (core/digitize/calibrate/body_scales.py)
                inks = [w.ink for w in line.words if w.ink is not None]
                out.append(Entry("", None, unit, left, right, line.cell, line.y0, line.y1, row,
                                 inks[0] if inks else None))
            continue
        name, name_unit, mnem = split_name(name_text)
        if not names_a_curve(name, unit or name_unit) and mnem is None:
            if not re.search("[A-Za-z]{2}", mid_text) and len(above) == 1:
                # bare ends under one line that names nothing legible: ends still, for a legend to name by order
                out.append(Entry("", None, unit, left, right, line.cell, line.y0, line.y1,
                                 0.5 * (line.y0 + line.y1), None))
            continue
        # a sector's number in the name (``Acoustic Impedance #4``) says more than a small print's bracket, misread
        mnemonic = (mnemonic_for(name) if re.search(r"#\s*\d", name) or known_name(name) else None) or mnem \
            or mnemonic_for(name)
        if mnemonic is None:
            continue
        inks = [w.ink for w in name_words if w.ink is not None]
        ink = inks[len(inks) // 2] if inks and len(inks) * 2 >= len(name_words) else None
        out.append(Entry(name, mnemonic, unit or name_unit or unit_in_name(name), left, right, line.cell, top, line.y1,
                         0.5 * (line.y0 + line.y1), ink))
    return out


@dataclass
class LegendItem:
    """A legend's line: a curve's name (and unit) beside its pen sample, with no scale (a mud log's header)."""

    name: str
    unit: str
    mnemonic: str
    cell: tuple[float, float]
    y0: float
    y1: float
    ink: tuple[int, int, int] | None
    pen: tuple[int, int]  # the columns of the pen sample beside it


def legend(reading: Reading) -> list[LegendItem]:
    """The lines of a region that name a curve beside a pen sample (a rule on the same rows, right of the name)
    and print no scale: the legend of a mud log's header."""
    out = []
    for line in reading.lines:
        if ends_of(line) is not None or number(line.words[0].text) is not None:
            continue
        name, unit, mnem = split_name(line.text)
        if not (mnem or names_a_curve(name, unit)):
            continue
        mnemonic = mnem or mnemonic_for(name)
        if mnemonic is None:
            continue
        h = line.height
        a, b = max(0, int(line.y0 - 0.3 * h)), min(reading.across.shape[0], int(line.y1 + 0.3 * h) + 1)
        c, d = int(max(line.words[-1].x1, line.cell[0])), int(min(line.cell[1], reading.across.shape[1]))
        if d - c < 0.5 * h or b <= a:
            continue
        # the pen sample: ink beside the name on its rows (a rule, or dashes or dots: any ink, a legend prints nothing
        # else there), spanning twice the name's height or more
        beside = (reading.ink[a:b, c:d] < INK_LEVEL) if reading.ink is not None else reading.across[a:b, c:d]
        cols = np.flatnonzero(beside.any(axis=0))
        if cols.size == 0 or cols[-1] - cols[0] < 2 * h or beside.sum() > 0.6 * beside.size:
            continue
        inks = [w.ink for w in line.words if w.ink is not None]
        out.append(LegendItem(name, unit, mnemonic, line.cell, line.y0, line.y1, inks[len(inks) // 2] if inks else None,
                              (c + int(cols[0]), c + int(cols[-1]) + 1)))
    return out


def turned(grey: np.ndarray, rgb: np.ndarray | None, dpi: float) -> bool:
    """Whether a region's words are printed turned by 90° (a mud log printed to be read sideways): its letters
    join into more and longer runs stacked down the rows than along them."""
    ink = ink_picture(grey, rgb)
    clean = _clean(ink, dpi, rule_masks(ink, dpi))
    dark = (clean < INK_LEVEL).astype(np.uint8)
    gap = max(3, int(round(GROUP_GAP_IN * dpi)))

    def wordy(mask: np.ndarray, along: int) -> int:
        count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        length, across = (stats[1:, 2], stats[1:, 3]) if along == 1 else (stats[1:, 3], stats[1:, 2])
        ok = (length >= 2.5 * across) & (across >= 0.04 * dpi) & (across <= GRAPHIC_IN * dpi)
        return int(length[ok].sum())

    upright = wordy(cv2.dilate(dark, np.ones((1, gap), np.uint8)), 1)
    sideways = wordy(cv2.dilate(dark, np.ones((gap, 1), np.uint8)), 0)
    return sideways > TURNED_RATIO * upright


def turn(picture: np.ndarray | None) -> np.ndarray | None:
    """A region turned a quarter to the left (text that reads down the page then reads along it)."""
    return None if picture is None else np.ascontiguousarray(np.rot90(picture, 1))
