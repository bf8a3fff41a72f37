"""The words of a scale box's region, read once with their places and inks, in lines within the cells its rules
draw.

This module reads the words of a region once (one Tesseract call: the picture cleaned of rules and graphics,
scaled to a size Tesseract reads well), groups them into the cells the box's rules draw and into lines, and reads
again the ends Tesseract dropped (``dropped_ends.py``). ``scale_entries.py`` makes the curves' entries of the
lines; ``scale_box.py`` reads the header's boxes with both, ``body_scales.py`` the scale rows printed in the log.

Everything here works in an upright region (depth down its rows) and reports positions in its pixels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cv2
import numpy as np

from core.digitize.calibrate.dropped_ends import (
    complete_ends,
    decimal_points,
    minus_signs,
    reread_lone_digits,
    reread_struck_numbers,
)
from core.digitize.calibrate.printed_words import INK_LEVEL, Line, Word

# The sizes below are in inches of print (times the scan's dpi) unless named in px; each was set on the develop
# half of the labelled archive (tests/data/archive_labels, 292 curves in 23 scans of 70-200 dpi), never on the
# held-out half, and kept where it read more of those boxes' curves than its neighbours did.
READ_PX = 32.0  # a region's text is enlarged until its lines are about this tall (Tesseract reads 8-px digits badly)
READ_DPI = 250.0  # without text to measure, a region is enlarged by READ_DPI / dpi
MAX_UPSCALE = 4.0  # ... at most this many times (a 70-dpi print's 7-px digits read no better beyond)
WALL_IN = 0.3  # a rule down the rows this long is a wall (a title's letters can stand 0.2 in tall)
RULE_IN = 0.2  # ink runs across this long (about twice a capital's width) are rules or pen samples, not letters
GRAPHIC_IN = 0.28  # a blob taller than this after the rules are gone is no letter: a fill, a colour legend, a curve
GROUP_GAP_IN = 0.07  # letters this close (a word space and more at 8 pt) are read as one run of text
MAX_STACK_PX = 30000  # Tesseract refuses a picture taller than 32,767 px
TURNED_RATIO = 2.0  # a box is printed sideways when its letters run this much more down than along (the develop
# half's sideways boxes measure 2.5, its upright ones at most 1.65)
THIN_IN = 0.045  # a rule is at most this thick (9 px at 200 dpi); a line of text closed into a band is thicker
DASH_THIN_IN = 0.02  # a dashed rule is at most this thick (4 px at 200 dpi)
BLACK_LEVEL = 60  # on a colour print a black word's pixels are darker than this; a grey grid line is lighter
COLOURED = 60  # a pixel whose channels spread this far apart is coloured ink (a red or blue word), not grey
TEXT_LEVEL = 110  # on a grey print words are darker than this; a grey grid line is lighter
_BRACKETS = str.maketrans("{}[]", "()()")  # Tesseract reads a small print's round brackets as curly or square


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
