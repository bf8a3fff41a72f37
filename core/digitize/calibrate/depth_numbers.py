"""Printed depths read with Tesseract from a strip of the log body (a depth column, a track's edge): only where
numbers can be, upright or sideways, two pictures at a time.

Tesseract's time grows with the picture it is given, and a depth column is mostly paper: on a 58,000-row mud log
the numbers fill a fifth of it. So the strip is looked at first (:func:`number_rows`): its ink's connected
components the size of a printed digit (a curve, a rule, a border is far longer; a speck far smaller), grouped
into numbers where they stand close, give the rows that can hold a number; only those rows, packed one after
another with paper between them, are read (:func:`read_numbers`), and each number read is put back at its own
row. How the digits of a group lie says how the numbers are printed: side by side across the strip (upright) or
stacked along it (turned by 90°, as mud logs print their depths), and that way is read first.

Tesseract refuses pictures over 32,767 px on a side: a packed strip is read in windows of :data:`WINDOW_ROWS`.
Windows are read two at a time (``PARALLEL``: one Tesseract process each, one thread each: ``ocr.py``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import cv2
import numpy as np

WINDOW_ROWS = 8000  # well inside Tesseract's limit, and a window's OCR stays a few seconds
PACKED_WINDOW_ROWS = 3000  # a packed strip is read in windows this long (before enlarging): a second or so each
OVERLAP_ROWS = 400
MAX_DIGITS = 5  # no well is deeper than 99,999 ft: longer runs of digits are glued neighbours (6780-6810)
SAME_NUMBER_PX = 12.0  # a number read twice in overlapping windows lies this close to itself
ORIENTATIONS = {"upright": 0, "sideways": (1, 3)}
PARALLEL = 2  # Tesseract pictures read at once (the 2-core machine the proposal is timed on)

DIGIT_IN = (0.04, 0.4)  # a printed digit's box, its long side, in inches (the archive's least: 8 px at 72 dpi, 0.11 in)
DIGIT_ASPECT = 0.35  # ... its short side at least this share of its long side
DIGIT_GAP_IN = 0.06  # digits of one number stand this close (glyph spacing); numbers stand farther apart
PAD_IN = 0.05  # paper kept about a number's rows
SPACER_PX = 12  # paper between two packed stretches (Tesseract reads them as separate lines) ...
SPACER_DIGITS = 2.5  # ... and at least this many digits' height
MAX_GROUP_IN = 0.8  # a group of digit-sized blobs longer than this along depth is text, not one number
KEEP_DIGITS = 1.2  # paper kept about a number's digits before reading: a digit's height and a little more
MAX_NUMBER_SHARE = 0.6  # numbers fill less of a strip than this (labels every 10 ft on a mud log: under half)
READ_DIGIT_PX = 24.0  # digits this tall read best (Tesseract's own advice: a capital 20-30 px high) ...
MAX_ZOOM = 4.0  # ... enlarged this much at most
RETRY_GROUPS = 3  # a packed strip read as one block gives no number: read as sparse text where this many numbers lie
# an upright number's glyphs are one digit high: a group of blobs taller than this many digits is glyphs run together
# (a number and the text or ticks beside it), whose centre is no number's
TALL_GROUP_DIGITS = 1.5


@dataclass
class NumberRows:
    """Where numbers can be in a strip (rows along depth), and how their digits lie."""

    spans: list[tuple[int, int]]  # [a, b) rows, in order, apart
    stacked: int = 0  # groups of two or more digits stacked along depth (sideways print)
    side_by_side: int = 0  # groups of two or more digits side by side across (upright print)
    digit_px: float = 0.0  # a digit's typical height, in pixels (the longer side of its box)
    groups: list[tuple[int, int]] = field(default_factory=list)  # [y0, y1) of each number's glyphs, in order
    boxes: list[tuple[int, int, int, int]] = field(default_factory=list)  # (y0, y1, x0, x1) of every group

    @property
    def zoom(self) -> float:
        """How much to enlarge the strip for Tesseract, whose digits read best :data:`READ_DIGIT_PX` tall (an 8-px
        digit of an 80-dpi scan read 4700 as 470)."""
        if self.digit_px <= 0:
            return 1.0
        return float(np.clip(READ_DIGIT_PX / self.digit_px, 1.0, MAX_ZOOM))

    @property
    def sideways(self) -> bool:
        return self.stacked > self.side_by_side

    @property
    def rows(self) -> int:
        return sum(b - a for a, b in self.spans)


def _dpi(dpi: float | None) -> float:
    return float(dpi) if dpi and dpi >= 50 else 100.0


def _digit_height(box: tuple[int, int, int, int]) -> int:
    """A blob's digit height: its long side where it is one digit, its short side where it is a run of touching
    digits (a low-resolution print's 4500 in one blob)."""
    h, w = box[1] - box[0], box[3] - box[2]
    return max(h, w) if min(h, w) >= DIGIT_ASPECT * max(h, w) else min(h, w)


def number_rows(ink: np.ndarray, dpi: float | None) -> NumberRows:
    """The rows of a strip (depth down its rows; ``ink`` boolean) that hold digit-sized blobs, grouped into
    numbers: each group's rows padded by :data:`PAD_IN`, overlapping spans merged. A blob is a digit (its box no
    sliver: a dash of a dashed curve, a tick or a rule's end is one; a narrow 1 is lost, its number's other
    digits stand) or a run of digits that touch (as long as a number, as high as a digit)."""
    d = _dpi(dpi)
    lo, hi = max(3.0, DIGIT_IN[0] * d), DIGIT_IN[1] * d
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    boxes = []
    for x, y, w, h, area in stats[1:]:
        short, long_ = min(w, h), max(w, h)
        digit = lo <= long_ <= hi and short >= DIGIT_ASPECT * long_
        run = lo <= short <= hi and long_ <= MAX_GROUP_IN * d and short < DIGIT_ASPECT * long_
        if (digit or run) and area >= 0.15 * w * h:
            boxes.append((int(y), int(y + h), int(x), int(x + w)))
    if not boxes:
        return NumberRows([])
    boxes.sort()
    gap = DIGIT_GAP_IN * d
    groups: list[list[tuple[int, int, int, int]]] = []
    for box in boxes:
        for g in groups[-4:]:  # a digit joins a group it stands close to (along or across)
            y0, y1 = min(b[0] for b in g), max(b[1] for b in g)
            x0, x1 = min(b[2] for b in g), max(b[3] for b in g)
            if box[0] <= y1 + gap and box[1] >= y0 - gap and box[2] <= x1 + gap and box[3] >= x0 - gap:
                g.append(box)
                break
        else:
            groups.append([box])
    # a group is a number when it holds two digits or more, or one run of them
    numbers = [g for g in groups if len(g) >= 2 or _digit_height(g[0]) != max(g[0][1] - g[0][0], g[0][3] - g[0][2])]
    out = NumberRows([], digit_px=float(np.median([_digit_height(b) for g in numbers for b in g] or [0.0])))
    pad = int(round(PAD_IN * d))
    spans = []
    # how the digits lie, by the groups of several digits; by runs of touching digits only where there are none (a
    # curve cut by a grid into bits is a run along depth, a low-resolution print's numbers runs across)
    multi, single = [0, 0], [0, 0]
    for g in groups:
        y0, y1 = min(b[0] for b in g), max(b[1] for b in g)
        x0, x1 = min(b[2] for b in g), max(b[3] for b in g)
        if y1 - y0 > MAX_GROUP_IN * d:
            continue
        if len(g) >= 2:  # digits stacked along depth or side by side across
            ys = sorted((b[0] + b[1]) / 2 for b in g)
            xs = sorted((b[2] + b[3]) / 2 for b in g)
            along = ys[-1] - ys[0] > xs[-1] - xs[0]
        else:  # one run of digits: it lies the way it is long
            along = y1 - y0 > x1 - x0
        if g in numbers:
            votes = multi if len(g) >= 2 else single
            votes[0] += along
            votes[1] += not along
            out.groups.append((y0, y1))
        spans.append((max(0, y0 - pad), min(ink.shape[0], y1 + pad)))
        out.boxes.append((y0, y1, x0, x1))
    out.stacked, out.side_by_side = multi if sum(multi) else single
    spans.sort()
    for a, b in spans:
        if out.spans and a <= out.spans[-1][1]:
            out.spans[-1] = (out.spans[-1][0], max(out.spans[-1][1], b))
        else:
            out.spans.append((a, b))
    if out.rows > MAX_NUMBER_SHARE * ink.shape[0]:
        return NumberRows([])  # a texture, not numbers on paper: a curve broken into bits, a pattern, a fill
    out.groups.sort()
    return out


def only_numbers(grey: np.ndarray, found: NumberRows) -> np.ndarray:
    """The strip with everything but its numbers whitened: paper outside each group of digits' box (padded by
    :data:`KEEP_DIGITS` digits, for a narrow leading 1 not taken for a digit: 10500 read 500 with half a digit):
    a curve, a dashed line or a border beside a number draws Tesseract's eye off it (a packed column of 5000 …
    5550 beside a dashed curve read 000, 0, 002)."""
    keep = np.zeros(grey.shape, bool)
    pad = max(2, int(round(KEEP_DIGITS * found.digit_px)))
    for y0, y1, x0, x1 in found.boxes:
        keep[max(0, y0 - pad) : y1 + pad, max(0, x0 - pad) : x1 + pad] = True
    paper = np.uint8(np.percentile(grey[keep], 90)) if keep.any() else np.uint8(255)  # no pale box about each
    return np.where(keep, grey, paper).astype(grey.dtype)


def _on_glyphs(row: float, groups: list[tuple[int, int]], reach: float, tallest: float | None = None) -> float:
    """A number's row, Tesseract's box centre, moved to the centre of the glyphs it stands on (their connected
    components: to the pixel, where a box drawn by Tesseract on an enlarged picture wanders by one or two), where
    a group lies within ``reach``. A group taller than ``tallest`` rows is no one number's glyphs (an upright
    number's 10500 run together with the ink above it, 45 rows for 13-row digits, put its centre 7 px, 0.9 ft, off
    the line it labels, where Tesseract's box was within half a pixel of it): the number stays where it was read."""
    if not groups:
        return row
    k = int(np.searchsorted([a for a, _ in groups], row))
    best = None
    for a, b in groups[max(0, k - 2) : k + 2]:
        if tallest is not None and b - a > tallest:
            continue
        centre = (a + b) / 2.0
        if a - reach <= row <= b + reach and (best is None or abs(centre - row) < abs(best - row)):
            best = centre
    return row if best is None else best


def glyph_rows(row: float, found: NumberRows | None) -> tuple[int, int] | None:
    """[first, last + 1) rows of the glyphs of the number read at ``row`` (a row :func:`read_numbers` gives: their
    centre, where it stood on them), or None where it stood on none (read off Tesseract's box alone)."""
    if found is None:
        return None
    for a, b in found.groups:
        if abs((a + b) / 2.0 - row) < 1e-6:
            return a, b
    return None


def _pack(strip: np.ndarray, spans: list[tuple[int, int]], spacer: int = SPACER_PX
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The strip's ``spans`` one after another with ``spacer`` rows of paper before each and after the last, and as
    much paper either side of the strip (Tesseract reads a number flush with the picture's edge short of its first digit: 10250
    read 0250); returns the packed picture and, per span, its first packed row and its first row in the strip."""
    tone = np.uint8(np.percentile(strip, 90)) if strip.size else np.uint8(255)
    paper = np.full((spacer, strip.shape[1]), tone, strip.dtype)
    parts, starts, origins, at = [paper], [], [], spacer  # paper above the first too (its number was not read)
    for a, b in spans:
        parts += [strip[a:b], paper]
        starts.append(at)
        origins.append(a)
        at += (b - a) + spacer
    packed = np.concatenate(parts) if parts else strip[:0]
    side = np.full((packed.shape[0], spacer), tone, strip.dtype)
    return np.hstack([side, packed, side]), np.array(starts), np.array(origins)


PSM_SPARSE, PSM_BLOCK = 11, 6  # Tesseract's page layouts: text anywhere (a whole strip); one block of lines (packed)


def _tesseract_numbers(img: np.ndarray, psm: int = PSM_SPARSE) -> list[tuple[float, float, float, float, str]]:
    """(left, top, width, height, text) of every run of digits Tesseract reads in ``img``, laid out as ``psm``
    says: a packed strip is one block of lines (one number a line, or one line of numbers turned), which its
    "sparse text" layout read with numbers left out (5000 and 5400 of 5000 … 5550 packed; none so as a block)."""
    from core.digitize.calibrate.ocr import image_to_data

    data = image_to_data(img, config=f"--psm {psm} -c tessedit_char_whitelist=0123456789")
    out = []
    for text, left, top, width, height in zip(data["text"], data["left"], data["top"], data["width"],
                                              data["height"]):
        t = text.strip()
        if t.isdigit() and len(t) <= MAX_DIGITS:
            out.append((float(left), float(top), float(width), float(height), t))
    return out


def _read_window(win: np.ndarray, turns: int, zoom: float = 1.0, psm: int = PSM_SPARSE) -> list[tuple[float, str]]:
    """(centre row in ``win``, text) read with the window turned ``turns`` quarter turns anticlockwise, enlarged
    ``zoom`` times, in Tesseract's layout ``psm``."""
    if zoom > 1.0:
        big = cv2.resize(win, None, fx=zoom, fy=zoom, interpolation=cv2.INTER_CUBIC)
        return [(centre / zoom, text) for centre, text in _read_window(big, turns, 1.0, psm)]
    rows = win.shape[0]
    out = []
    try:
        read = _tesseract_numbers(np.ascontiguousarray(np.rot90(win, turns)) if turns else win, psm)
    except (RuntimeError, OSError):  # Tesseract failing on one picture costs its numbers, not the proposal
        return []
    for left, top, width, height, text in read:
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


def _packed_windows(starts: np.ndarray, spans: list[tuple[int, int]], size: int, spacer: int = 0
                    ) -> list[tuple[int, int]]:
    """[a, b) packed rows per window: whole spans with the paper before each (a number flush with the picture's top
    edge is not read), at most ``size`` rows each; a span longer than that alone, in overlapping windows of its own
    (Tesseract refuses a picture over 32,767 px on a side)."""
    out: list[tuple[int, int]] = []
    a: int | None = None
    for s, (x, y) in zip(starts.tolist(), spans):
        end = s + (y - x)
        s = max(0, s - spacer)
        if end - s > size:
            if a is not None:
                out.append((a, s))
                a = None
            out += [(s + u, s + v) for u, v in windows(end - s, size, OVERLAP_ROWS)]
            continue
        if a is None:
            a = s
        elif end - a > size:
            out.append((a, s))
            a = s
    if a is not None:
        out.append((a, int(starts[-1]) + (spans[-1][1] - spans[-1][0]) + spacer))
    return out


def read_numbers(strip_tall: np.ndarray, sideways: bool = False, progress=None,
                 found: NumberRows | None = None) -> list[tuple[float, str]]:
    """(centre row, text) of every run of digits in a strip whose depth runs down its rows, any length.

    ``sideways``: read the numbers printed turned by 90° either way instead of the upright ones. ``found``: the
    rows that can hold numbers (:func:`number_rows`): only those are read, packed; without it, the whole strip in
    overlapping windows. ``progress(done, total)`` after each window."""
    turns = ORIENTATIONS["sideways"] if sideways else (ORIENTATIONS["upright"],)
    if found is not None:
        if not found.spans:
            return []
        # turned, the packed numbers stand in one line of text: apart by more than a digit's height, or Tesseract
        # runs two into one (10500 and the 1 of 10550 read 0501)
        spacer = max(SPACER_PX, int(round(SPACER_DIGITS * found.digit_px)))
        packed, starts, origins = _pack(strip_tall, found.spans, spacer)
        parts = _packed_windows(starts, found.spans, PACKED_WINDOW_ROWS, spacer)

        def to_row(p: float) -> float:
            k = max(0, int(np.searchsorted(starts, p, side="right")) - 1)
            return float(origins[k] + (p - starts[k]))
    else:
        packed = strip_tall
        parts = windows(strip_tall.shape[0])

        def to_row(p: float) -> float:
            return p

    def place(packed_row: float) -> float:
        row = to_row(packed_row)
        if found is None:
            return row
        # an upright number's glyphs are a digit high; a turned one's run along depth its length
        tallest = None if sideways or found.digit_px <= 0 else TALL_GROUP_DIGITS * found.digit_px
        return _on_glyphs(row, found.groups, found.digit_px, tallest)

    zoom = found.zoom if found is not None else 1.0
    if found is None:
        return _read_parts(packed, parts, turns, zoom, PSM_SPARSE, place, True, progress)
    numbers = _read_parts(packed, parts, turns, zoom, PSM_BLOCK, place, False, progress)
    if not numbers and len(found.groups) >= RETRY_GROUPS:
        # Tesseract's block layout finds no line at all in some packed strips of small, touching digits (a 72-dpi
        # mud log's sideways 8000 … 8800, 8 px high: nothing read either way, at any enlargement), where its
        # sparse layout reads them: read them so before giving the strip up
        numbers = _read_parts(packed, parts, turns, zoom, PSM_SPARSE, place, False, progress)
    return numbers


def _read_parts(packed: np.ndarray, parts: list[tuple[int, int]], turns: tuple[int, ...], zoom: float, psm: int,
                place, overlapping: bool, progress) -> list[tuple[float, str]]:
    """(row, text) of the numbers read in the windows ``parts`` of ``packed`` (placed by ``place``), in Tesseract's
    layout ``psm``; with several ``turns``, the first window read each way says which way the rest is read."""
    found_numbers: list[tuple[float, str]] = []
    overlapping = overlapping and len(parts) > 1
    pool = ThreadPoolExecutor(max_workers=PARALLEL)
    try:
        if len(turns) > 1 and parts:
            # a number printed turned reads as a number one way only (the other way, 10600 reads 00901): the first
            # window read both ways says which, and the rest is read that way alone
            trial = [pool.submit(_read_window, np.ascontiguousarray(packed[parts[0][0] : parts[0][1]]), t, zoom, psm)
                     for t in turns]
            readings = [f.result() for f in trial]
            best = max(range(len(turns)), key=lambda k: sum(_label_like(text) for _, text in readings[k]))
            for centre, text in readings[best]:
                found_numbers.append((place(parts[0][0] + centre), text))
            if progress:
                progress(1, len(parts))
            jobs, done0 = [(a, b, turns[best]) for a, b in parts[1:]], 1
        else:
            jobs, done0 = [(a, b, t) for a, b in parts for t in turns], 0
        futures = [pool.submit(_read_window, np.ascontiguousarray(packed[a:b]), t, zoom, psm) for a, b, t in jobs]
        for done, ((a, _, _), fut) in enumerate(zip(jobs, futures), done0 + 1):
            for centre, text in fut.result():
                row = place(a + centre)
                # in an overlap the same number is read by both windows: keep the first reading
                if not (overlapping and any(text == k and abs(row - r) <= SAME_NUMBER_PX for r, k in found_numbers)):
                    found_numbers.append((row, text))
            if progress:
                progress(done, len(jobs) + done0)  # may raise (the app's Cancel): the windows not begun are dropped
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return sorted(found_numbers)


def _label_like(text: str) -> bool:
    """Whether a reading looks like a depth label: two digits or more, no leading zero, a round number."""
    return len(text) >= 2 and text[0] != "0" and int(text) % 5 == 0
