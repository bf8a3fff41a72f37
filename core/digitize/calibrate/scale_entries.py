"""A scale box's entries made of its lines: per curve, its printed name, mnemonic and unit, and the values at the
track's two ends; and a mud log's legend (names beside pen samples, no scale).

A box prints its entries in one of a few layouts: ``0  Gamma Ray (GAPI)  150`` on one line; the name on one line
and ``6  in  16`` or ``0  50  100`` beneath it; the name on up to five lines of a narrow cell with ``-7.5  7.5``
beneath; a legend of names and pen samples whose ends are printed in the log body. The lines come from
``scale_words.read_region``; an :class:`~core.digitize.calibrate.printed_words.Entry` is made of each line whose
first and last words are numbers, its name the words between them or the lines above them in its cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from core.digitize.calibrate.curve_names import (
    known_name,
    mnemonic_for,
    names_a_curve,
    split_name,
    unit_for,
    unit_in_name,
)
from core.digitize.calibrate.printed_words import INK_LEVEL, STRUCK, Entry, Line, Word, number, tokens
from core.digitize.calibrate.scale_words import Reading

# The sizes below are in inches of print (times the scan's dpi) unless named in px; each was set on the develop
# half of the labelled archive (tests/data/archive_labels, 292 curves in 23 scans of 70-200 dpi), never on the
# held-out half, and kept where it read more of those boxes' curves than its neighbours did.
APART = 0.9  # a scale end stands at least this many text heights from the words beside it
NAME_LINES = 7  # a name is printed on up to this many lines (a cement log's 0.75-in cells: name, sector, mnemonic
# broken over two lines, unit)


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
    struck = [w for w in toks if number(w.text) is None and STRUCK.match(w.text)]
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
