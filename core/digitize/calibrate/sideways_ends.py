"""The ends a mud log printed sideways prints for each curve, read one ink at a time.

The Sunburst layout (six of the labelled archive's 36 scans) prints each curve's ends at the top of its track, and
again under every ``Scale Change``, as turned numbers 7-9 px tall in the curve's own ink, staggered across the
track: the left ends stand in a row of columns against the left border, the right ends against the right border,
and the names between them. Read as one picture the prints run into one another (a red ``0`` printed over the
magenta ``C4`` beside it, a magenta ``10000`` over the red ``TG (units)``) and into the grid, and Tesseract reads
them as one garbled word or not at all.

Here each curve's ink is taken apart from the rest: the pixels nearest that ink (and near it in colour), with the
grid, black print and every other ink left out; its curve's line, a long blob, is dropped; what stays is grouped
into turned words, and the words nearest each border are cut out, turned upright and read together, digits only,
in one Tesseract call (``dropped_ends.read_small_numbers``). The number nearest the left border is the left end,
the one nearest the right border the right end.

A colour mud log printed upright (``0  TG (units)  100``, a row per ink, struck through by the grid) is read the
same way through its transpose, each ink's ends on the line of its first word against the right border.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from core.digitize.calibrate import dropped_ends as de
from core.digitize.calibrate import scale_words as sw

INK_DE = 35.0  # a pixel this near an ink (CIE76 ΔE) and nearer to it than to the track's other inks is that ink's
GLYPH_MAX_IN = (0.25, 0.35)  # a blob wider (across the rows) or longer (down them) than this is a curve, no letter
WORD_GAP_IN = 0.07  # turned letters this close down the rows are one word (as ``scale_words.GROUP_GAP_IN``)
TEXT_IN = (0.04, 0.15)  # a turned number's letters are this tall (its width across the rows)
WORD_MAX_IN = 0.6  # ... and the number no longer than this down the rows
TOP_IN = 0.35  # a band's turned ends begin within this of its top row
LINE_IN = 0.05  # an upright print's ends stand on one line: their tops within this of one another
PER_SIDE = 3  # of an ink's words on a side, this many nearest the border are read
SIDE = 0.45  # a left end stands within this share of the track's width from its left border, a right end alike


@dataclass
class InkEnds:
    """A curve's ends read from its ink: the values and the columns of the two numbers (None: not read)."""

    left: float | None
    right: float | None
    left_x: float | None
    right_x: float | None

    @property
    def both(self) -> bool:
        return self.left is not None and self.right is not None and self.left != self.right


def _ink_masks(rgb: np.ndarray, inks: list[tuple[int, int, int]]) -> list[np.ndarray]:
    """For each ink, the pixels of ``rgb`` nearer to it than to any other of ``inks`` and within :data:`INK_DE`.
    Where every ink is a colour only the coloured pixels are measured (paper, grid and black print are most of a
    track, and a section's worth of them in Lab takes seconds)."""
    from core.io.colour import lab_of, to_lab

    pixels = np.ascontiguousarray(rgb, dtype=np.uint8)
    r, g, b = cv2.split(pixels)
    spread = cv2.subtract(cv2.max(cv2.max(r, g), b), cv2.min(cv2.min(r, g), b))
    if all(max(i) - min(i) > sw.COLOURED for i in inks):
        where = np.flatnonzero(spread.ravel() > sw.COLOURED // 2)
    else:
        where = np.arange(spread.size)
    masks = [np.zeros(spread.shape, np.uint8) for _ in inks]
    if where.size == 0:
        return masks
    lab = to_lab(pixels.reshape(-1, 3)[where])
    dist = np.stack([np.linalg.norm(lab - lab_of(ink), axis=1) for ink in inks])
    nearest = dist.argmin(axis=0)
    for k, mask in enumerate(masks):
        mask.ravel()[where[(nearest == k) & (dist[k] < INK_DE)]] = 1
    return masks


def _words(mask: np.ndarray, dpi: float) -> list[tuple[int, int, int, int, np.ndarray]]:
    """The turned words of an ink's mask (x, y, width, height, their letters' mask): its letters, with the rules
    across (a red line drawn at a scale change) and the curve's long blobs dropped, joined down the rows; only those
    the size of a number's letters."""
    rule = max(3, int(round(GLYPH_MAX_IN[0] * dpi)))
    mask = cv2.subtract(mask, cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((1, rule), np.uint8)))
    # the grid is drawn over the curves and cuts them into pieces a letter's size: pieces a pixel or two apart
    # are joined before the long blobs are told from letters
    count, labels, stats, _ = cv2.connectedComponentsWithStats(cv2.dilate(mask, np.ones((3, 3), np.uint8)),
                                                               connectivity=8)
    big = np.flatnonzero((stats[1:, 2] > GLYPH_MAX_IN[0] * dpi) | (stats[1:, 3] > GLYPH_MAX_IN[1] * dpi)) + 1
    letters = mask.copy()
    curve = np.isin(labels, big) if big.size else np.zeros(mask.shape, bool)
    letters[curve] = 0
    gap = max(3, int(round(WORD_GAP_IN * dpi)))
    joined = cv2.dilate(letters, np.ones((gap, 1), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    out = []
    for x, y, w, h, _ in stats[1:]:
        if not (TEXT_IN[0] * dpi <= w <= TEXT_IN[1] * dpi and h <= WORD_MAX_IN * dpi):
            continue
        # a word the curve of its ink runs through has lost the letters the curve touches ("10000" left as "10")
        if curve[max(0, y - 2) : y + h + 2, max(0, x - 1) : x + w + 1].any():
            continue
        out.append((int(x), int(y), int(w), int(h), letters[y : y + h, x : x + w]))
    return out


def _frame_words(mask: np.ndarray, dpi: float, upright: bool) -> list[tuple[int, int, int, int, np.ndarray]]:
    """The words of an ink's mask in the scan's frame (column, row, columns, rows) with each word's letters as an
    upright picture (ink dark on paper): a print turned sideways is looked through as it is, an upright one
    through its transpose (its lines then run down the rows as a turned print's do)."""
    out = []
    if upright:
        for x, y, w, h, letters in _words(np.ascontiguousarray(mask.T), dpi):
            out.append((y, x, h, w, np.where(letters.T > 0, 0, 255).astype(np.uint8)))
    else:
        for x, y, w, h, letters in _words(mask, dpi):
            out.append((x, y, w, h, sw.turn(np.where(letters > 0, 0, 255).astype(np.uint8))))
    return out


def _candidates(rgb: np.ndarray, track: tuple[float, float], inks: list[tuple[int, int, int]], dpi: float,
                upright: bool = False) -> tuple[list[np.ndarray], list[tuple[int, str, float]]]:
    """The words of each ink in a band of a track that may be an end: upright crops, and for each its ink, its side
    (``L``, ``R``) and the column of its border-side edge. A turned print's ends stand at the band's top (its names
    run on below them); an upright print's on the line of its ink's first word against the right border."""
    lo, hi = int(np.floor(track[0])), int(np.ceil(track[1])) + 1
    masks = _ink_masks(rgb[:, lo:hi], inks)
    width = track[1] - track[0]
    crops: list[np.ndarray] = []
    owners: list[tuple[int, str, float]] = []
    for k, mask in enumerate(masks):
        sides: dict[str, list[tuple[float, int, np.ndarray]]] = {"L": [], "R": []}
        for x, y, w, _, crop in _frame_words(mask, dpi, upright):
            left_edge, right_edge = lo + x, lo + x + w
            if left_edge < track[0] + SIDE * width:
                sides["L"].append((float(left_edge), y, crop))
            elif right_edge > track[1] - SIDE * width:
                sides["R"].append((float(right_edge), y, crop))
        if upright:  # the line of the ink's first word against the right border (a title above it is no end)
            found = [y for _, y, _ in sides["R"]] or [y for _, y, _ in sides["L"]]
            line = min(found, default=0)
            rows = (line - LINE_IN * dpi, line + LINE_IN * dpi)
        else:
            rows = (-1.0, TOP_IN * dpi)
        # the words nearest each border (the end, and more should it not read): the rest is names
        for side, words in sides.items():
            words = sorted((t for t in words if rows[0] <= t[1] <= rows[1]), key=lambda t: t[0], reverse=side == "R")
            for edge, _, crop in words[:PER_SIDE]:
                crops.append(crop)
                owners.append((k, side, edge))
    return crops, owners


def _ends(owners: list[tuple[int, str, float]], values: list[float | None], count: int) -> list[InkEnds]:
    """Each ink's ends: of the numbers read on each side, the one nearest that side's border."""
    out: list[InkEnds] = []
    for k in range(count):
        lefts = [(x, v) for (o, s, x), v in zip(owners, values) if o == k and s == "L" and v is not None]
        rights = [(x, v) for (o, s, x), v in zip(owners, values) if o == k and s == "R" and v is not None]
        (lx, lv), (rx, rv) = min(lefts, default=(None, None)), max(rights, default=(None, None))
        out.append(InkEnds(lv, rv, lx, rx))
    return out


def read_ends(bands: list[np.ndarray], track: tuple[float, float], inks: list[tuple[int, int, int]], dpi: float,
              upright: bool = False) -> list[list[InkEnds]]:
    """Each ink's ends in each band of a track printed sideways (``bands``: rows of the scan's colour, its whole
    width; ``inks``: the track's curves' inks), all read in one Tesseract call."""
    if not inks or track[1] - track[0] < 10:
        return [[InkEnds(None, None, None, None) for _ in inks] for _ in bands]
    found = [_candidates(band, track, inks, dpi, upright) for band in bands]
    values = de.read_small_numbers([c for crops, _ in found for c in crops])
    out, at = [], 0
    for band, (crops, owners) in zip(bands, found):
        ends = _ends(owners, values[at : at + len(crops)], len(inks))
        if not upright:
            _hidden_lefts(band, track, inks, ends, dpi)
        out.append(ends)
        at += len(crops)
    return out


HIDDEN_SEEN = 0.4  # a glyph half hidden under another ink shows this share of itself at least ...
HIDDEN_UNDER = 0.8  # ... and the rest of it lies under other inks' print, this share at least


def _hidden_lefts(band: np.ndarray, track: tuple[float, float], inks: list[tuple[int, int, int]],
                  ends: list[InkEnds], dpi: float) -> None:
    """A left end printed under another ink's letters (a sideways gas track's red TG ``0`` lies under the start of
    the magenta ``C4 (ppm)``): where every other ink's left end reads one value, an ink whose right end reads and
    whose left does not takes that value when its unread left word is that value's glyph (another ink's left end,
    the same type) half seen: every pixel of it on the glyph, the glyph shown in part, and the rest of the glyph
    under other inks (in place)."""
    known = [(k, e) for k, e in enumerate(ends) if e.left is not None and e.left_x is not None]
    wanting = [k for k, e in enumerate(ends) if e.left is None and e.right is not None]
    if not wanting or len(known) < 2 or len({e.left for _, e in known}) != 1:
        return
    value = known[0][1].left
    lo, hi = int(np.floor(track[0])), int(np.ceil(track[1])) + 1
    masks = _ink_masks(band[:, lo:hi], inks)
    top = TOP_IN * dpi

    def left_words(k: int) -> list[tuple[int, int, np.ndarray]]:
        out = []
        for x, y, _, _, letters in _words(masks[k], dpi):
            if y <= top and lo + x < track[0] + SIDE * (track[1] - track[0]):
                rows, cols = np.nonzero(letters)
                if rows.size:
                    out.append((x + int(cols.min()), y + int(rows.min()),
                                letters[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1] > 0))
        return out

    k0, e0 = known[0]
    glyph = next((g for x, _, g in left_words(k0) if lo + x == int(e0.left_x) or abs(lo + x - e0.left_x) <= 1), None)
    if glyph is None or glyph.sum() < 6:
        return
    grown = cv2.dilate(glyph.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    for k in wanting:
        others = np.zeros(masks[k].shape, bool)
        for j, m in enumerate(masks):
            if j != k:
                others |= m > 0
        others = cv2.dilate(others.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
        mine = masks[k] > 0
        for x, y, seen in sorted(left_words(k)):
            if _half_seen(seen, (x, y), glyph, grown, mine, others):
                ends[k] = InkEnds(value, ends[k].right, float(lo + x), ends[k].right_x)
                break


def _half_seen(seen: np.ndarray, at: tuple[int, int], glyph: np.ndarray, grown: np.ndarray, mine: np.ndarray,
               others: np.ndarray) -> bool:
    """Whether the word ``seen`` (its ink's pixels, its box's top-left ``at``) is ``glyph`` half seen: placed at
    some offset that holds the whole word, every pixel of the word lies on the glyph's strokes (``grown``: dilated
    by a pixel), at least :data:`HIDDEN_SEEN` of the glyph shows, and at least :data:`HIDDEN_UNDER` of the rest
    lies under other inks."""
    gh, gw = glyph.shape
    if seen.shape[0] > gh + 1 or seen.shape[1] > gw + 1:
        return False
    x, y = at
    for dy in range(seen.shape[0] - gh, 1):
        for dx in range(seen.shape[1] - gw, 1):
            y0, x0 = y + dy, x + dx
            if y0 < 0 or x0 < 0 or y0 + gh > mine.shape[0] or x0 + gw > mine.shape[1]:
                continue
            here = mine[y0 : y0 + gh, x0 : x0 + gw]
            if here.sum() < seen.sum() or (here & ~grown).any():
                continue  # the word is not all inside the glyph's place, or strays off its strokes
            shown = (here & glyph).sum() / glyph.sum()
            hidden = glyph & ~here
            under = (hidden & others[y0 : y0 + gh, x0 : x0 + gw]).sum() / max(1, hidden.sum())
            if shown >= HIDDEN_SEEN and under >= HIDDEN_UNDER:
                return True
    return False


CHANGE_INKS = 3  # ends printed again stand in this many of a track's inks at least (or in all, when fewer) ...
CHANGE_IN = 0.4  # ... their right ends within this many inches down the rows of one another
CHANGE_BAND_IN = (0.1, 0.8)  # ends printed again are read from this far above their first right end to this below
CHUNK_ROWS = 4000  # the section is looked through this many rows at a time
SAME_SHARE = 0.15  # a right end whose picture differs from the one before in this share of its ink or less is the same
MAX_CHANGES = 16  # at most this many places are read per track (a gas scale changes a few times in a well)


def _right_words(rgb: np.ndarray, track: tuple[float, float], inks: list[tuple[int, int, int]],
                 span: tuple[int, int], dpi: float, upright: bool) -> list[tuple[int, int, int, np.ndarray]]:
    """Every word of the track's inks against its right border down a span of rows: (row, ink, right edge, its
    upright picture). Only the columns next to the right border are looked at, a chunk of rows at a time."""
    lo, hi = track
    zone = (int(np.floor(hi - SIDE * (hi - lo))), int(np.ceil(hi)) + 1)
    out = []
    a, b = span
    for top in range(a, b, CHUNK_ROWS):
        masks = _ink_masks(rgb[top : min(b, top + CHUNK_ROWS), zone[0] : zone[1]], inks)
        for k, mask in enumerate(masks):
            for x, y, w, _, letters in _frame_words(mask, dpi, upright):
                out.append((top + y, k, zone[0] + x + w, letters))
    out.sort(key=lambda t: t[0])
    return out


def _places(words: list[tuple[int, int, int, np.ndarray]], count: int, dpi: float
            ) -> list[tuple[int, dict[int, np.ndarray]]]:
    """Where ends are printed again: rows where words of :data:`CHANGE_INKS` inks stand within :data:`CHANGE_IN`
    of one another; for each, every ink's word nearest the right border there."""
    need = min(CHANGE_INKS, count)
    reach = CHANGE_IN * dpi
    places: list[tuple[int, dict[int, np.ndarray]]] = []
    for i, (row, _, _, _) in enumerate(words):
        if places and row - places[-1][0] < 2 * reach:
            continue
        near = [w for w in words[i:] if w[0] - row <= reach]
        if len({k for _, k, _, _ in near}) < need:
            continue
        rightmost: dict[int, tuple[int, int, np.ndarray]] = {}
        for r, k, edge, mask in near:
            if k not in rightmost or edge > rightmost[k][0]:
                rightmost[k] = (edge, r, mask)
        # the place begins at its first end (a word of a curve's ink above the ends may have begun the search)
        places.append((min(r for _, r, _ in rightmost.values()), {k: m for k, (_, _, m) in rightmost.items()}))
    return places


def _same_print(p: np.ndarray, q: np.ndarray) -> bool:
    """Two words' masks are one print: the same size within a pixel, and differing in few pixels."""
    if abs(p.shape[0] - q.shape[0]) > 1 or abs(p.shape[1] - q.shape[1]) > 1:
        return False
    h, w = min(p.shape[0], q.shape[0]), min(p.shape[1], q.shape[1])
    a, b = p[:h, :w] < 128, q[:h, :w] < 128  # ink dark on paper
    return float((a ^ b).sum()) <= SAME_SHARE * max(1, int((a | b).sum()))


def read_changes(rgb: np.ndarray, track: tuple[float, float], inks: list[tuple[int, int, int]],
                 first: tuple[int, int], span: tuple[int, int], dpi: float, upright: bool = False
                 ) -> list[tuple[int, list[InkEnds]]]:
    """The places down a sideways section where a track's ends are printed again and differ from the ends before
    them (``first``: the rows of the first ends; ``span``: the rows below them), with the ends each ink prints
    there. A mud log prints its ends again every few hundred feet: a place whose right ends are the pictures of
    those before it is the same scale, and is not read."""
    before = _places(_right_words(rgb, track, inks, first, dpi, upright), len(inks), dpi)
    if not before:
        return []
    last = dict(before[0][1])
    rows = []
    for row, words in _places(_right_words(rgb, track, inks, span, dpi, upright), len(inks), dpi):
        if any(k not in last or not _same_print(m, last[k]) for k, m in words.items()):
            rows.append(row)
        last.update(words)
    rows = rows[:MAX_CHANGES]
    above, below = (int(f * dpi) for f in CHANGE_BAND_IN)
    bands = [rgb[max(0, r - above) : min(rgb.shape[0], r + below)] for r in rows]
    return list(zip(rows, read_ends(bands, track, inks, dpi, upright))) if rows else []
