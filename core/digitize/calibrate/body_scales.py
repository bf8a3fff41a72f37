"""The scales a mud log prints in its log body, and the scale changes printed partway down.

A mud log's header box is a legend: each track's curves by name and pen sample (``ROP (min/ft) ———``,
``C1 (ppm) - - -``), with no numbers. The scales are printed in the log body, in small coloured type at the top of
each track and again every hundred feet or so: ``0  ROP (min/ft)  10`` across the track, or ``1  10  100  1000``
under ``TG (Units)``, or bare ends for all the curves of a track. When a gas scale is changed while drilling, the
rows printed from there on carry the new ends (often under a ``Scale Change`` title).

This module reads the body's first inch in each track that has a legend (``scale_words.py``, its entries
``scale_entries.py``), gives each legend
curve its ends (by name, else the track's bare ends), and then finds the rows again down the section: the first
rows' names are a template matched along the track (cheap: the section downscaled, one correlation per track),
and only where the ends beside a match differ from the first rows' is it read; ends that differ from the scale
in force are a scale change from that row on (``scale_changes`` of the curve, ``from_pixel`` in the proposal).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from core.digitize.calibrate import printed_words as pw
from core.digitize.calibrate import scale_entries as se
from core.digitize.calibrate import scale_words as sw
from core.digitize.calibrate.scale_box import ScaleRow, _colour, _hex, _mnemonics, _same, _style

BAND_IN = 1.3  # a mud log prints its first scale rows within this of the body's top
MATCH_SCALE = 0.5  # the section is matched at half size: the rows' names are 6-10 px tall there
MATCH_MIN = 0.55  # a template of the first rows' names matched this well (normalised correlation) is the rows again
ENDS_SAME = 0.8  # ends beside a match that correlate this well with the first rows' ends are the same numbers
MAX_READ = 24  # at most this many matches are read per track (a scale changes a few times in a well)


@dataclass
class ScaleChange:
    """New ends for the curves of a track, printed in the body from row ``from_pixel`` on."""

    mnemonics: list[str]
    track: tuple[float, float]
    from_pixel: float
    left: float
    right: float
    said: str = ""
    kept: bool = True


@dataclass
class BodyReading:
    rows: list[ScaleRow] = field(default_factory=list)
    changes: list[ScaleChange] = field(default_factory=list)


@dataclass
class _TrackRows:
    """The first scale rows printed in one track: where they lie and which curve each gives."""

    track: tuple[float, float]
    top: float
    bottom: float
    ends: list[tuple[tuple[float, float, float, float], tuple[float, float, float, float]]]  # (left box, right box)
    names: tuple[float, float]  # columns of the names between the ends
    rows: list[ScaleRow]


def _pen_of(reading: sw.Reading, item: se.LegendItem, box_rgb: np.ndarray | None) -> tuple[int, str | None]:
    """The line style and ink of a legend item's pen sample: the most inked row of the ink beside its name."""
    h = item.y1 - item.y0
    a, b = max(0, int(item.y0 - 0.3 * h)), min(reading.across.shape[0], int(item.y1 + 0.3 * h) + 1)
    c, d = item.pen
    ink = reading.ink if reading.ink is not None else np.where(reading.across, 0, 255).astype(np.uint8)
    crop = cv2.copyMakeBorder(np.ascontiguousarray(ink[a:b, c:d]), 0, 0, 3, 3, cv2.BORDER_CONSTANT, value=255)
    rgb = None if box_rgb is None else cv2.copyMakeBorder(np.ascontiguousarray(box_rgb[a:b, c:d]), 0, 0, 3, 3,
                                                         cv2.BORDER_CONSTANT, value=(255, 255, 255))
    heavy = int(np.argmax((crop < 128).sum(axis=1)))
    rows = (max(0, heavy - 1), min(crop.shape[0], heavy + 2))
    return _style(crop, rows), _colour(rgb, crop, rows)


def _track_of(cell: tuple[float, float], tracks: list[tuple[float, float]]) -> tuple[float, float] | None:
    best, overlap = None, 0.0
    for lo, hi in tracks:
        o = min(hi, cell[1]) - max(lo, cell[0])
        if o > overlap:
            best, overlap = (float(lo), float(hi)), o
    return best


def read_body(upright: np.ndarray, rgb: np.ndarray | None, tracks: list[tuple[float, float]],
              span: tuple[int, int], dpi: float, box, section: int = 0) -> BodyReading:
    """The scales a section's body prints for the curves its box's legend names (none when the box is no legend),
    and the scale changes printed down the section (``box``: ``scale_box.Box``)."""
    if box is None or box.reading is None:
        return BodyReading()
    if box.turned:
        return _read_turned(upright, rgb, tracks, span, dpi, box, section)
    reading, box_row = box.reading, box.top
    # a curve the box prints its ends for is no legend entry, though a pen sample stands beside its name (an
    # open-hole box's dashed PEFZ): the body's bare ends are not its
    given = {m for r in box.rows for m in _mnemonics(r)}
    items = [i for i in se.legend(reading) if i.mnemonic not in given]
    if not items:
        return BodyReading()
    start, stop = span
    a, b = max(0, start - int(0.05 * dpi)), min(stop, start + int(BAND_IN * dpi))  # the first row may touch the border
    grey = np.ascontiguousarray(upright[a:b])
    colour = None if rgb is None else np.ascontiguousarray(rgb[a:b])
    borders = tuple(float(x) for t in tracks for x in t)
    band = sw.read_region(grey, colour, dpi, borders, box_walls=False)
    found = se.entries(band.lines, band.across)
    box_rgb = None if rgb is None else rgb[box_row : box_row + reading.clean.shape[0]]
    by_track: dict[tuple[float, float], list[ScaleRow]] = {}
    firsts: list[_TrackRows] = []
    for track in {t for t in (_track_of(e.cell, tracks) for e in found) if t is not None}:
        entries = [e for e in found if _track_of(e.cell, tracks) == track]
        legend = [i for i in items if _track_of(i.cell, tracks) == track]
        rows = _name_ends(entries, legend, reading, box_rgb, track, a, section)
        by_track[track] = rows
        first = _first_rows(entries, band, track, a, rows)
        if first is not None:
            firsts.append(first)
    # each legend curve's ends read from its ink alone where its print is coloured, for the curves the band read
    # whole gives no ends (a row struck through by the grid, run into its neighbours), and their tracks' changes:
    # the ends printed again in those inks
    placed = [(i, t) for i in items for t in [_track_of(i.cell, tracks)] if t is not None]
    by_ink, ink_changes = _read_inks(rgb, placed, (a, b), stop, dpi, upright=True)
    inked_tracks = {placed[k][1] for k in by_ink}
    for k, ends in by_ink.items():
        item, track = placed[k]
        rows = by_track.setdefault(track, [])
        if any(item.mnemonic in _mnemonics(r) for r in rows):
            continue
        klass, pen_colour = _pen_of(reading, item, box_rgb)
        rows.append(ScaleRow(track, item.name, item.unit, ends.left, ends.right, klass, int(item.y0),
                             pen_colour or _hex(item.ink), item.mnemonic, False, float(start), section))
    out = BodyReading([r for rows in by_track.values() for r in rows], ink_changes)
    for first in firsts:
        if first.track not in inked_tracks:
            out.changes += _changes(upright, rgb, first, (b, stop), dpi)
    return out


def _name_ends(entries: list[pw.Entry], legend: list[se.LegendItem], reading: sw.Reading,
               box_rgb: np.ndarray | None, track: tuple[float, float], offset: int, section: int) -> list[ScaleRow]:
    """Scale rows for a track: each named entry of the body (its pen from the legend item of its name), and each
    legend curve without one given the track's bare ends."""
    rows: list[ScaleRow] = []
    matched: set[int] = set()
    for e in entries:
        if not e.name or e.continues:
            continue
        names = _mnemonics(ScaleRow(track, e.name, e.unit, e.left, e.right, 1, 0, mnemonic=e.mnemonic))
        k = next((k for k, i in enumerate(legend) if i.mnemonic in names and k not in matched), None)
        klass, colour = (1, _hex(e.ink))
        if k is not None:
            matched.add(k)
            klass, pen_colour = _pen_of(reading, legend[k], box_rgb)
            colour = pen_colour or _hex(legend[k].ink) or colour
        rows.append(ScaleRow(track, e.name, e.unit, e.left, e.right, klass, int(e.top), colour, e.mnemonic,
                             False, offset + e.numbers_row, section))
    bare = [e for e in entries if not e.name]
    rest = [i for k, i in enumerate(legend) if k not in matched]
    if bare and rest:
        for k, item in enumerate(rest):
            e = bare[k] if len(bare) == len(rest) else bare[0]
            klass, pen_colour = _pen_of(reading, item, box_rgb)
            rows.append(ScaleRow(track, item.name, item.unit or e.unit, e.left, e.right, klass, int(e.top),
                                 pen_colour or _hex(item.ink), item.mnemonic, False, offset + e.numbers_row, section))
    return rows


def _first_rows(entries: list[pw.Entry], band: sw.Reading, track: tuple[float, float], offset: int,
                rows: list[ScaleRow]) -> _TrackRows | None:
    """Where a track's first scale rows lie: their rows, the boxes of their ends, the columns of their names."""
    named = [e for e in entries if e.name and not e.continues]
    if not named or not rows:
        return None
    ends = []
    lefts, rights = [], []
    for e in named:
        line = next((ln for ln in band.lines if ln.cell == e.cell and ln.y0 - 1 <= e.numbers_row <= ln.y1 + 1), None)
        if line is None:
            continue
        toks = pw.tokens(line)
        lw, rw = toks[0], toks[-1]
        ends.append(((lw.x0, lw.y0 + offset, lw.x1, lw.y1 + offset), (rw.x0, rw.y0 + offset, rw.x1, rw.y1 + offset)))
        lefts.append(lw.x1)
        rights.append(rw.x0)
    if not ends:
        return None
    top = min(e.top for e in named) + offset
    bottom = max(e.bottom for e in named) + offset
    return _TrackRows(track, top, bottom, ends, (max(lefts) + 2, min(rights) - 2), rows)


def _changes(upright: np.ndarray, rgb: np.ndarray | None, first: _TrackRows, span: tuple[int, int], dpi: float
             ) -> list[ScaleChange]:
    """The scale changes down a track: the first rows' names matched along the section; where the ends beside a
    match differ from the first rows' ends, the match is read, and ends that differ from the scale in force are
    a change from the match's top row on."""
    lo, hi = int(first.track[0]), int(first.track[1])
    n0, n1 = int(first.names[0]), int(first.names[1])
    t0, t1 = int(first.top) - 2, int(np.ceil(first.bottom)) + 2
    a, b = span
    if n1 - n0 < 10 or b - a < 3 * (t1 - t0):
        return []
    small = MATCH_SCALE
    template = cv2.resize(upright[t0:t1, n0:n1], None, fx=small, fy=small, interpolation=cv2.INTER_AREA)
    pad = 4
    strip = cv2.resize(upright[a:b, max(0, n0 - pad) : n1 + pad], None, fx=small, fy=small,
                       interpolation=cv2.INTER_AREA)
    if template.shape[0] < 4 or strip.shape[0] <= template.shape[0] or strip.shape[1] < template.shape[1]:
        return []
    score = cv2.matchTemplate(strip, template, cv2.TM_CCOEFF_NORMED).max(axis=1)
    found = _peaks(score, MATCH_MIN, template.shape[0])
    matches = [a + int(round(p / small)) for p in found]
    reference = [_patch(upright, box, t0) for pair in first.ends for box in pair]
    differ = []
    for m in matches:
        patches = [_patch(upright, box, t0, m) for pair in first.ends for box in pair]
        if any(_similarity(p, q) < ENDS_SAME for p, q in zip(patches, reference)):
            differ.append(m)
    differ = differ[:MAX_READ]
    if not differ:
        return []
    height = t1 - t0
    parts, places = [], []
    for m in differ:
        parts.append(np.ascontiguousarray(upright[m : m + height, max(0, lo - 2) : hi + 3]))
        places.append(m)
    gap = max(8, height // 2)
    stack = np.full((sum(p.shape[0] + gap for p in parts), parts[0].shape[1]), 255, np.uint8)
    colour = None if rgb is None else np.full(stack.shape + (3,), 255, np.uint8)
    y = 0
    offsets = []
    for p, m in zip(parts, places):
        stack[y : y + p.shape[0], : p.shape[1]] = p
        if colour is not None:
            colour[y : y + p.shape[0], : p.shape[1]] = rgb[m : m + p.shape[0], max(0, lo - 2) : hi + 3]
        offsets.append(y)
        y += p.shape[0] + gap
    left = lo - max(0, lo - 2)
    reading = sw.read_region(stack, colour, dpi, (float(left), float(left + hi - lo)), box_walls=False)
    found_entries = se.entries(reading.lines, reading.across)
    changes: list[ScaleChange] = []
    current = {tuple(_mnemonics(r)): (r.left, r.right) for r in first.rows}
    for y, m in zip(offsets, places):
        here = [e for e in found_entries if y - 2 <= e.numbers_row < y + height + 2]
        for e in here:
            if e.continues:
                continue
            names = tuple(_mnemonics(ScaleRow(first.track, e.name, e.unit, e.left, e.right, 1, 0,
                                              mnemonic=e.mnemonic))) if e.name else None
            keys = [k for k in current if names and set(k) & set(names)] if names else list(current)
            for key in keys:
                old = current[key]
                if _same(old[0], e.left) and _same(old[1], e.right):
                    continue
                if names is None and len(current) > 1:
                    continue  # bare ends where several curves share the track: whose, the rows don't say
                current[key] = (e.left, e.right)
                changes.append(ScaleChange(list(key), first.track, float(m), e.left, e.right,
                                           f"scale change printed at row {m}: {'/'.join(key)} "
                                           f"{e.left:g}–{e.right:g} from there on"))
    return changes


def _peaks(score: np.ndarray, floor: float, apart: int) -> list[int]:
    """Rows of the local maxima of a match score above ``floor``, at least ``apart`` rows apart, best first kept."""
    order = np.argsort(-score)
    taken: list[int] = []
    for i in order:
        if score[i] < floor:
            break
        if all(abs(int(i) - t) >= apart for t in taken):
            taken.append(int(i))
    return sorted(taken)


def _patch(upright: np.ndarray, box: tuple[float, float, float, float], top: int, at: int | None = None
           ) -> np.ndarray:
    """The pixels of an end's box (as found in the first rows at ``top``), at the first rows or moved to ``at``."""
    x0, y0, x1, y1 = box
    shift = 0 if at is None else at - top
    a, b = int(y0) - 1 + shift, int(np.ceil(y1)) + 1 + shift
    return upright[max(0, a) : max(0, b), max(0, int(x0) - 1) : int(np.ceil(x1)) + 1]


def _similarity(p: np.ndarray, q: np.ndarray) -> float:
    if p.shape != q.shape or p.size == 0:
        return 0.0
    a, b = p.astype(np.float32).ravel(), q.astype(np.float32).ravel()
    a, b = a - a.mean(), b - b.mean()
    denom = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / denom) if denom > 0 else 1.0


def merge(box_rows: list[ScaleRow], body_rows: list[ScaleRow]) -> list[ScaleRow]:
    """A section's rows: its box's, and the body's that the box does not give (same curve, same ends)."""
    out = list(box_rows)
    for r in body_rows:
        if not any(_mnemonics(o) == _mnemonics(r) and _same(o.left, r.left) and _same(o.right, r.right) for o in out):
            out.append(r)
    return out


def attach_changes(curves: list[dict], changes: list[ScaleChange]) -> None:
    """Each change written on the curves it names (``scale_changes``: ``from_pixel`` and the new ``scale``), in
    order down the scan; a change no curve takes is dropped (``kept`` False)."""
    for ch in sorted(changes, key=lambda c: c.from_pixel):
        took = False
        for c in curves:
            if c.get("_base", c["mnemonic"]) in ch.mnemonics:
                if abs(min(c["track"]) - min(ch.track)) > 5 or abs(max(c["track"]) - max(ch.track)) > 5:
                    continue
                c.setdefault("scale_changes", []).append({"from_pixel": round(ch.from_pixel, 1),
                                                          "scale": [ch.left, ch.right]})
                took = True
        ch.kept = took


# -- printed sideways ------------------------------------------------------------------------------------------

INK_SAME_DE = 35.0  # a number printed in the ink of a legend's name (ΔE) is that curve's


def _read_turned(upright: np.ndarray, rgb: np.ndarray | None, tracks: list[tuple[float, float]],
                 span: tuple[int, int], dpi: float, box, section: int) -> BodyReading:
    """A mud log printed to be read sideways (six of the labelled archive's 36 scans): the legend's names and the body's
    ends are turned, and a track's curves' ends are printed staggered across the track's top, each in its curve's
    ink. Each legend curve's ends are read from its ink alone (``sideways_ends.py``); a curve whose ends that does
    not give (a black pen, a grey scan) takes the numbers of its ink in the band read whole: the one nearest the
    left border is the left end, the one nearest the right border the right end."""
    width = box.width
    items = se.legend(box.reading)
    if not items:
        return BodyReading()
    start, stop = span
    a, b = max(0, start - int(0.05 * dpi)), min(stop, start + int(BAND_IN * dpi))
    box_rgb = sw.turn(None if rgb is None else rgb[box.top : box.top + box.reading.clean.shape[1]])
    placed = []  # (item, its track)
    for item in items:
        x = width - 1 - 0.5 * (item.y0 + item.y1)
        track = next(((float(lo), float(hi)) for lo, hi in tracks if lo <= x <= hi), None)
        if track is not None:
            placed.append((item, track))
    by_ink, changes = _read_inks(rgb, placed, (a, b), stop, dpi, upright=False)
    numbers = None
    rows = []
    for k, (item, track) in enumerate(placed):
        if k in by_ink:
            lv, rv = by_ink[k].left, by_ink[k].right
        else:
            if numbers is None:
                numbers = _band_numbers(upright, rgb, (a, b), dpi, width)
            ends = _ends_by_ink(numbers, track, item.ink)
            if ends is None:
                continue
            lv, rv = ends
        klass, pen_colour = _pen_of(box.reading, item, box_rgb)
        rows.append(ScaleRow(track, item.name, item.unit, lv, rv, klass, int(item.y0), pen_colour or _hex(item.ink),
                             item.mnemonic, False, float(start), section))
    return BodyReading(rows, changes)


def _band_numbers(upright: np.ndarray, rgb: np.ndarray | None, rows: tuple[int, int], dpi: float, width: int
                  ) -> list[tuple[float, float, tuple[int, int, int] | None]]:
    """The numbers of a band of a sideways print read whole: (column, value, ink)."""
    a, b = rows
    grey = np.ascontiguousarray(upright[a:b])
    colour = None if rgb is None else np.ascontiguousarray(rgb[a:b])
    band = sw.read_region(sw.turn(grey), sw.turn(colour), dpi, box_walls=False)
    return [(width - 1 - w.yc, pw.number(w.text), w.ink) for w in band.words if pw.number(w.text) is not None]


def _ends_by_ink(numbers: list[tuple[float, float, tuple[int, int, int] | None]], track: tuple[float, float],
                 ink: tuple[int, int, int] | None) -> tuple[float, float] | None:
    """A curve's ends among a band's numbers: those of its ink in its track nearest each border."""
    from core.io.colour import delta_e

    def same_ink(p, q) -> bool:
        return (p is None and q is None) or (p is not None and q is not None and delta_e(p, q) < INK_SAME_DE)

    lo, hi = track
    mine = [(px, v) for px, v, i in numbers if lo <= px <= hi and same_ink(i, ink)]
    left = [m for m in mine if m[0] < lo + 0.45 * (hi - lo)]
    right = [m for m in mine if m[0] > hi - 0.45 * (hi - lo)]
    if not left or not right:
        return None
    lv, rv = min(left)[1], max(right)[1]
    return None if lv == rv else (lv, rv)


def _read_inks(rgb: np.ndarray | None, placed: list, band: tuple[int, int], stop: int, dpi: float, upright: bool
               ) -> tuple[dict, list[ScaleChange]]:
    """The ends each legend curve prints in its ink at the top of its track (``sideways_ends.py``), by the curve's
    index in ``placed`` ((item, track) pairs), and the scale changes printed further down (ends printed again
    that differ from those in force)."""
    from core.digitize.calibrate import sideways_ends

    by_ink: dict[int, sideways_ends.InkEnds] = {}
    changes: list[ScaleChange] = []
    if rgb is None:
        return by_ink, changes
    a, b = band
    for track in dict.fromkeys(t for _, t in placed):
        inked = [(k, item) for k, (item, t) in enumerate(placed) if t == track and item.ink is not None]
        inks = list(dict.fromkeys(item.ink for _, item in inked))
        if not inks:
            continue
        read = sideways_ends.read_ends([rgb[a:b]], track, inks, dpi, upright)[0]
        for k, item in inked:
            if read[inks.index(item.ink)].both:
                by_ink[k] = read[inks.index(item.ink)]
        # ends printed again down the section: where the right end reads and differs, a scale change; a left
        # end under the curves that start there is often unread or misread, and is kept as it is unless two
        # inks read the same new one
        current = {k: (by_ink[k].left, by_ink[k].right) for k, _ in inked if k in by_ink}
        if not current:
            continue
        for row, ends in sideways_ends.read_changes(rgb, track, inks, (a, b), (b, stop), dpi, upright):
            lefts = [e.left for e in ends if e.left is not None]
            for k, item in inked:
                new = ends[inks.index(item.ink)]
                if new.right is None or k not in current:
                    continue
                left = new.left if new.left is not None and lefts.count(new.left) >= 2 else current[k][0]
                if left == new.right or (_same(current[k][0], left) and _same(current[k][1], new.right)):
                    continue
                current[k] = (left, new.right)
                changes.append(ScaleChange([item.mnemonic], track, float(row), left, new.right,
                                           f"scale change printed at row {row}: {item.mnemonic} "
                                           f"{left:g}–{new.right:g} from there on"))
    return by_ink, changes
