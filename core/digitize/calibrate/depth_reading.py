"""Where each section's printed depths are read, and how: its depth columns the way their digits lie, then the
other way, then inside its tracks (:func:`read_depths`), each number placed on the depth line it labels
(``number_placement.py``), the section split into passes (``log_passes.py``) and fitted (``depth_fit.py``).

Apart from the assembly (``proposal.py``): this is the one step that runs Tesseract over the log body, its
choice of strips and its budget of megapixels read inside tracks are its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.digitize.calibrate.depth_fit import fit_section
from core.digitize.calibrate.depth_lines import depth_lines, lines_beside
from core.digitize.calibrate.log_passes import split_passes
from core.digitize.calibrate.number_placement import place_without_lines, snap_to_depth_lines
from core.digitize.calibrate.proposal_records import DepthNumber, Proposal, ProposedSection

DEPTH_COLUMN_IN = 1.0  # a column narrower than this, with a line inside at most, may print the depths ...
DEPTH_COLUMN_SHARE = 0.6  # ... or than this share of the section's typical track (the archive's depth columns:
#   0.1-0.4 of it; its description and photo columns, its well-bore plots 0.5 and more, over an inch)
DEPTH_COLUMN_INK = 0.3  # ... where ink covers less than this share of it (numbers on paper, not a fill)
LINE_STRIP_IN = 0.3  # straight ink this long (a rule, a border, a curve lying still) is no digit ...
FAINT_INK = 0.2  # ... and is whitened before reading, down to this darkness (grey borders)
DIGIT_INK = 0.3  # a digit's pixels: an 80-dpi print's 7-px digits, half grey at their edges, break apart at 0.5
MIN_TRACK_PX = 8  # a track narrower than this holds no readable number
TRACK_READING_MPX = 12.0  # megapixels (as enlarged for Tesseract) read inside tracks at most over a scan: about 4 s
#   of Tesseract on the 2-core EPYC (0.3 s a megapixel); a mud log's two tracks hold 53


@dataclass
class _Strip:
    """A strip of a section read for numbers: a column across [lo, hi), its pixels upright (depth down), where
    numbers can be in it."""

    lo: float
    hi: float
    grey: np.ndarray
    rows: object  # depth_numbers.NumberRows
    column: dict | None = None  # the section's column it is, when it is one of its other columns


def _strips(sec: ProposedSection, canon: np.ndarray, darkness: np.ndarray, dpi: float | None,
            inside_tracks: bool) -> list[_Strip]:
    """The strips of a section where depths can be printed: its other columns narrow enough to be a depth column
    and not filled (``inside_tracks``: its tracks instead), clear of their border lines, with the rows that hold
    digit-sized ink (``depth_numbers.number_rows``)."""
    import cv2

    from core.digitize.calibrate.depth_numbers import number_rows, only_numbers

    d = dpi or 100.0
    out = []
    if inside_tracks:
        spans = [(lo, hi, None) for lo, hi in sec.tracks if hi - lo > MIN_TRACK_PX]
    else:
        spans = []
        widest = max(DEPTH_COLUMN_IN * d, DEPTH_COLUMN_SHARE * float(np.median([b - a for a, b in sec.tracks] or [0])))
        for c in sec.columns:
            lo, hi = c["cols"]
            if hi - lo > widest or hi - lo < 4:
                continue
            if c.get("lines", 0) > 1 or c.get("ink", 0.0) > DEPTH_COLUMN_INK:
                continue
            spans.append((lo, hi, c))
    reach = max(5, int(round(LINE_STRIP_IN * d)))
    for lo, hi, c in spans:
        # the whole column, its border lines too (they are straight, and whitened below): a column cut clear of
        # its borders cuts the digits of a mud log's sideways depths (14 px across), and their cut edges line up
        # into a straight run that is whitened with the rules (7250 read 725)
        a, b = max(0, int(np.floor(lo)) - 1), min(canon.shape[0], int(np.ceil(hi)) + 2)
        if b - a < 3:
            continue
        part = np.ascontiguousarray(darkness[a:b, sec.start : sec.stop].T)  # depth down the rows
        ink = part > DIGIT_INK
        # straight ink a digit is not part of: rules across, borders and curves along (grey ones too)
        faint = (part > FAINT_INK).astype(np.uint8)
        straight = cv2.morphologyEx(faint, cv2.MORPH_OPEN, np.ones((1, reach), np.uint8)) | \
            cv2.morphologyEx(faint, cv2.MORPH_OPEN, np.ones((reach, 1), np.uint8))
        rows = number_rows(ink & (straight == 0), dpi)
        if rows.spans:
            grey = np.ascontiguousarray(canon[a:b, sec.start : sec.stop].T)
            # a rule or a curve beside a number glues to it (|1300 read 300), a grey border beside it draws
            # Tesseract's eye (a packed column of 4500 … 4800 between two grey borders read as 4700 alone)
            grey[straight > 0] = 255
            out.append(_Strip(lo, hi, only_numbers(grey, rows), rows, c))
    return out


def read_depths(prop: Proposal, canon: np.ndarray, darkness: np.ndarray, dpi: float | None, size_dpi: float,
                depth_unit: str, report) -> None:
    """The printed depths of every section, read where they can be, and the sections split and fitted to them (in
    place). Each section reads its depth columns the way their digits lie (upright or turned), then the other
    way, and, where neither gives a depth scale, the numbers printed inside its tracks, the narrowest track
    first and track by track until they do (:data:`TRACK_READING_MPX` at most, over the whole scan: a mud log's
    tracks hold 50 megapixels of curves and text to read, minutes). Its numbers go onto the depth lines they
    label; a section without depth lines (a compressed summary log) places them as the page's other sections'
    numbers stand to their lines (a print sets its labels one way: centred on their line, or on it: then the
    undrawn line is at their glyphs' foot; ``number_placement.place_without_lines``). A section left without three
    agreeing labels then borrows the scale of a section that has picks, for two printed depths."""
    from core.digitize.calibrate.depth_numbers import read_numbers

    n = len(prop.sections)
    lines: list[np.ndarray] = []
    track_lines: list[list[np.ndarray]] = []
    for k, s in enumerate(prop.sections):  # each reported: a 66,000-row page's three bodies take a second or two
        pooled, per_track = depth_lines(canon[:, s.start : s.stop], s.tracks, darkness[:, s.start : s.stop])
        lines.append(pooled + s.start)
        track_lines.append([t + s.start for t in per_track])
        report(0.02 * (k + 1) / n)
    order = sorted(range(n), key=lambda k: lines[k].size == 0)  # sections with depth lines first
    moves: list[float] = []
    budget = [TRACK_READING_MPX]
    done: dict[int, tuple[list[DepthNumber], list[ProposedSection]]] = {}
    for j, k in enumerate(order):
        sec = prop.sections[k]
        lo, hi = 0.02 + 0.98 * j / n, 0.02 + 0.98 * (j + 1) / n
        first: tuple[list[DepthNumber], list[ProposedSection]] | None = None
        columns = _strips(sec, canon, darkness, size_dpi, inside_tracks=False)
        report(lo)
        tries = _tries(sec, columns, lambda: _strips(sec, canon, darkness, size_dpi, inside_tracks=True), budget)
        read: dict[tuple[int, bool], list[DepthNumber]] = {}  # (strip, turned) → its numbers, read once
        for i, (strips, turns, inside) in enumerate(tries):
            share = (lo + (hi - lo) * (1 - 0.5 ** i), lo + (hi - lo) * (1 - 0.5 ** (i + 1)))  # however many tries
            for m, (strip, turned) in enumerate(zip(strips, turns)):
                if (id(strip), turned) not in read:
                    def step(a: int, b: int, m: int = m) -> None:
                        report(share[0] + (share[1] - share[0]) * (m + a / max(1, b)) / len(strips))

                    read[id(strip), turned] = _read_strip(sec, strip, turned, read_numbers, step)
            found = sorted((DepthNumber(x.pixel, x.value, x.text, across=x.across, glyphs=x.glyphs)
                            for strip, turned in zip(strips, turns) for x in read[id(strip), turned]),
                           key=lambda x: x.pixel)
            turned = any(turns)
            beside = [lines_beside(x.across, sec.tracks, track_lines[k], lines[k]) for x in found]
            move = snap_to_depth_lines(found, lines[k], float(np.median(moves)) if moves else None, beside)
            if lines[k].size == 0:
                place_without_lines(found, moves)
            parts = split_passes(sec.with_span(sec.start, sec.stop), found, dpi, depth_unit)  # each try its own
            for part in parts:
                fit_section(part, found, dpi, depth_unit)
            first = first or (found, parts)
            if any(p.picks for p in parts):
                first = (found, parts)
                if move is not None:
                    moves.append(move)
                printed = [(s.lo, s.hi) for s in strips if s.column is not None
                           and any(x.kept and x.across is not None and s.lo <= x.across < s.hi for x in found)]
                for part in parts:  # the columns its depths were read in
                    for c in part.columns:
                        if tuple(c["cols"]) in printed:
                            c["kind"] = "depth"
                if inside:
                    prop.messages.append(f"section {k + 1}: no depth column prints the depths: read inside the tracks"
                                         + (", turned" if turned else ""))
                elif turned:
                    prop.messages.append(f"section {k + 1}: the depths are printed turned along the depth column: "
                                         "read sideways")
                break
        if budget[0] <= 0 and not (first and any(p.picks for p in first[1])):
            prop.messages.append(f"section {k + 1}: the numbers inside its tracks were not all read (more than "
                                 f"{TRACK_READING_MPX:g} megapixels of the scan's tracks to read)")
        if first is None:
            part = sec.with_span(sec.start, sec.stop)
            part.refused = "no number is printed where depths are (no depth column, none inside the tracks)"
            first = ([], [part])
        done[k] = first
        report(hi)
    numbers = [x for k in range(n) for x in done[k][0]]
    sections = [p for k in range(n) for p in done[k][1]]
    slopes = [1.0 / px_per_unit for px_per_unit in _scales(sections)]
    for sec in sections:
        if not sec.picks and slopes:
            fit_section(sec, numbers, dpi, depth_unit, borrowed=slopes)
    numbers.sort(key=lambda x: x.pixel)
    prop.numbers, prop.sections = numbers, sections


def _tries(sec: ProposedSection, columns: list[_Strip], in_tracks, budget: list[float]):
    """The readings a section tries in turn, each (strips, turned or not for each, inside the tracks): its depth
    columns the way their digits lie, then the other way; then its tracks, the narrowest first, adding one at a
    time, each the way its own digits lie (a curve cut by the grid into bits lies along depth in every track; the
    numbers lie one way in the track that prints them), while the scan's budget of megapixels read inside tracks
    lasts (``budget``, spent in place)."""
    if columns:
        sideways = sum(s.rows.stacked for s in columns) > sum(s.rows.side_by_side for s in columns)
        yield columns, [sideways] * len(columns), False
        yield columns, [not sideways] * len(columns), False
    tracks = sorted(in_tracks(), key=lambda s: s.hi - s.lo)
    for m, strip in enumerate(tracks):
        cost = strip.rows.rows * strip.grey.shape[1] * strip.rows.zoom ** 2 / 1e6
        if cost > budget[0]:
            budget[0] = 0.0
            return
        budget[0] -= cost
        yield tracks[: m + 1], [s.rows.sideways for s in tracks[: m + 1]], True


def _scales(sections: list[ProposedSection]) -> list[float]:
    """The px per unit of the sections with picks (from their first and last pick)."""
    out = []
    for s in sections:
        if len(s.picks) >= 2:
            (p0, d0), (p1, d1) = s.picks[0], s.picks[-1]
            if d1 != d0:
                out.append(abs((p1 - p0) / (d1 - d0)))
    return out


def _read_strip(sec: ProposedSection, strip: _Strip, turned: bool, read_numbers, progress) -> list[DepthNumber]:
    """Every number read in a strip (upright or ``turned``), placed at its row along depth; an upright one with the
    rows of its glyphs (where a section prints no depth lines, its foot or head is the row it labels)."""
    from core.digitize.calibrate.depth_numbers import glyph_rows

    out = []
    for centre, text in read_numbers(strip.grey, turned, progress, found=strip.rows):
        glyphs = None if turned else glyph_rows(centre, strip.rows)  # a turned number's glyphs run along depth
        out.append(DepthNumber(sec.start + centre, float(text), text, across=(strip.lo + strip.hi) / 2.0,
                               glyphs=None if glyphs is None else (sec.start + glyphs[0], sec.start + glyphs[1])))
    return out
