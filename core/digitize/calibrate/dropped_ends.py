"""Scale ends Tesseract dropped or misread in a box's lines, read again from the cleaned picture.

A box's ends are short numbers set apart from the words beside them, in small type over rules: Tesseract, reading
the whole region at once, drops a lone digit, reads a minus as nothing and a decimal point as a speck, and takes a
struck-through number for letters. Each function here looks where a line's end should be (beside its cell's wall,
under its neighbours' ends, at the batch's pitch) and reads that crop again, alone or a few in one call, enlarged
to a size Tesseract reads well; ``scale_words.read_region`` runs them in turn on every region it reads.
"""

from __future__ import annotations

import re

import cv2
import numpy as np

from core.digitize.calibrate.printed_words import INK_LEVEL, STRUCK, Line, Word, number, tokens

# The sizes below are in inches of print (times the scan's dpi) unless named in px; each was set on the develop
# half of the labelled archive (tests/data/archive_labels, 292 curves in 23 scans of 70-200 dpi), never on the
# held-out half, and kept where it read more of those boxes' curves than its neighbours did.
STRIP_PX = 40.0  # a number read again alone is enlarged to about this height, and half as much again
PITCH_TOL = 0.6  # characters a number's reading may be off the count its length holds at the batch's pitch
HEIGHT_TOL = 0.2  # ... and its letters' height off the batch's by no more than this share
SOFT_READ_PX = 42.0  # a number is enlarged to about this tall for Tesseract (8-px digits read best at about 5 times)


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




def reread_struck_numbers(lines: list[Line], clean: np.ndarray, scale: float) -> None:
    """Numbers a grid line or a wall runs through, read with a stray mark for a digit (a mud log's ``100`` over the
    gas track's grid read ``10€``, ``1000`` read ``10NI0``), read again alone with digits only, in lines that are
    mostly numbers already (a row of ends or ticks; a name's words are left alone); in place. Kept only where
    the reading is a number with a digit for each of the word's marks (``10€`` read ``1010`` is no 100)."""
    wanted: list[tuple[Word, tuple[int, int, int, int]]] = []
    for line in lines:
        nums = sum(number(w.text) is not None for w in line.words)
        for w in line.words:
            if nums >= 1 and 2 * (nums + 1) >= len(line.words) + 1 and STRUCK.match(w.text):
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
