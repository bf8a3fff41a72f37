"""The curves a log's scale boxes print, read so that nobody types them.

Above each stretch of log body a print has a box that says, per track, which curve is drawn how:
``0  Gamma Ray (GAPI)  150`` with a sample of the curve's pen ruled beneath it, or the name on one line and
``6  in  16`` under it, or a name over five lines of a narrow cell. A second row of the same curve whose scale
goes on where the first ends (``150 … 300``) is its backup scale: the curve wraps. Mud logs print a legend of
names and pen samples instead, and the scales in the log body (``core/digitize/calibrate/body_scales.py``).

This module finds the box above each section (up to the top of the box's own frame), reads its words once
(``scale_words.py``), makes its entries (``scale_entries.py``) and proposes one curve per entry: mnemonic (the one printed in brackets, else from the
name: ``curve_names.py``), unit, the ends as printed (a reversed scale stays reversed), log or linear, pen style,
ink colour, track, wrap and backup side. A box over a later section that repeats the first box's curves adds
nothing; one that prints other curves (another log on the page) adds them. What it cannot read is left out and
said: the user adds it.

Work in the scan's upright frame (depth down the rows); ``tracks`` are the proposal's (lo, hi) columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cv2
import numpy as np

from core.digitize.calibrate import printed_words as pw
from core.digitize.calibrate import scale_entries as se
from core.digitize.calibrate import scale_words as sw
from core.digitize.calibrate.curve_names import mnemonic_for

SOLID_RUN_PX = 40  # a pen sample whose ink lies mostly in runs this long is solid ...
DASH_MIN_PX = 7  # ... else dashed when most lies in runs this long or longer, dotted when in shorter ones
BOX_MAX_IN = 11.0  # a box is looked for this far above its section at most (the archive's tallest: 9.8 in)
BOX_LOOK_IN = 3.0  # without a frame to follow up, this far (a dozen rows of text)
FRAME_TOL_IN = 0.08  # the box's walls start within this of one another at its top frame
MIN_DPI = 30.0  # a resolution below this in a file's header is no resolution
LETTER_IN = 0.1  # a box's letters (8-10 pt type, capitals with brackets) measure this tall, median
BOX_ABOVE_IN = 0.25  # a title printed just above a box's frame (``Curve Track 1``) is read with it


@dataclass
class ScaleRow:
    """One curve on one scale as a box prints it, and the pen sample drawn for it."""

    track: tuple[float, float]
    name: str
    unit: str
    left: float
    right: float
    klass: int  # 1 solid, 2 dashed, 3 dotted or dash-dot (the sample; solid when there is none)
    top: int  # row of the text in its region (for ordering)
    colour: str | None = None  # the sample's ink "#rrggbb" on a colour print; None: black or grey, or no sample
    mnemonic: str | None = None  # as printed in brackets, else from the name
    continues: bool = False  # a row of bare ends under another row of the same curve: its backup scale
    row: float | None = None  # where it is printed, in the scan's rows (a scale change applies from there)
    section: int = 0  # the section whose box (or body) prints it


# -- pens ------------------------------------------------------------------------------------------------------


def _sample_rows(crop: np.ndarray, below: int, until: int) -> tuple[int, int] | None:
    """Rows [a, b) of the rule drawn under a row (the most inked row between ``below`` and ``until`` and one
    either side), None where no rule is drawn there."""
    if until - below < 2:
        return None
    ink = crop[below:until, 3:-3] < 128
    if ink.size == 0:
        return None
    cover = ink.mean(axis=1)
    r = int(np.argmax(cover))
    if cover[r] < 0.2:
        return None
    return below + max(0, r - 1), min(until, below + r + 2)


def _pen_sample(crop: np.ndarray, below: int, until: int) -> int:
    """The line style of the rule drawn under a row: the most inked row between ``below`` and ``until``."""
    return _style(crop, _sample_rows(crop, below, until))


def _style(crop: np.ndarray, rows: tuple[int, int] | None) -> int:
    """1 solid, 2 dashed, 3 dotted: the stroke that holds most of a rule's ink (rows [a, b) of ``crop``)."""
    if rows is None:
        return 1  # no sample drawn: a solid pen is the common case
    row = (crop[rows[0] : rows[1], 3:-3] < 128).any(axis=0)
    from core.common.runs import true_runs

    # which kind of stroke holds most of the row's ink: one long run (solid; a 1-bit dropout may break it),
    # dashes, or dots. By ink, not by count: a digit the row passes through adds short runs, little ink
    starts, stops = true_runs(row)
    runs = stops - starts
    solid, dashes = runs[runs >= SOLID_RUN_PX].sum(), runs[(runs >= DASH_MIN_PX) & (runs < SOLID_RUN_PX)].sum()
    if solid >= 0.5 * runs.sum():
        return 1
    return 2 if dashes >= runs[runs < DASH_MIN_PX].sum() else 3


def _colour(rgb: np.ndarray | None, crop: np.ndarray, rows: tuple[int, int] | None) -> str | None:
    """The ink colour of a rule (rows [a, b) of ``crop``) on a colour print: "#rrggbb" where it has colour, None
    for a black or grey pen or no rule (the pen's line style tells such curves apart)."""
    if rgb is None or rows is None:
        return None
    from core.io.colour import hex_colour

    ink = crop[rows[0] : rows[1], 3:-3] < 128
    pixels = rgb[rows[0] : rows[1], 3:-3][ink]
    if len(pixels) < 8:
        return None
    colour = sw.chroma_colour(pixels)
    return hex_colour(colour) if colour else None


def _pen_near(reading: sw.Reading, ink: np.ndarray, rgb: np.ndarray | None, cell: tuple[float, float],
              top: float, bottom: float, height: float, numbers_row: float, line_height: float
              ) -> tuple[int, str | None]:
    """The line style and ink of the pen sample ruled for an entry: the first row inked across its cell below its
    ends (within a line's height), else the rule with the most ink from half a line above its name down to its
    ends (between name and ends, or through the name's line): every layout of the archive's boxes. The box's own
    rule under the next entry is further."""
    c, d = max(0, int(cell[0]) + 2), min(ink.shape[1], int(cell[1]) - 1)
    if d - c < 8:
        return 1, None
    dark = ink[:, c:d] < 128
    cover = dark.mean(axis=1)
    ruled = reading.across[:, c:d].mean(axis=1)
    line = range(max(0, int(numbers_row - 0.5 * line_height)), min(ink.shape[0], int(np.ceil(bottom)) + 1))
    between = [r for r in line if ruled[r] >= 0.3]  # ``1 ——— 300``: the pen between the ends
    below = [r for r in range(int(np.ceil(bottom)) + 1, min(ink.shape[0], int(bottom + 1.3 * height) + 1))
             if cover[r] >= 0.2]
    if between:
        r = max(between, key=lambda r: ruled[r])
    elif below:
        r = below[0]
    else:
        ruled = reading.across[:, c:d].mean(axis=1)
        a, b = max(0, int(top - 0.5 * height)), min(ink.shape[0], int(bottom) + 1)
        if b - a < 2 or ruled[a:b].max() < 0.15:
            return 1, None
        r = a + int(np.argmax(ruled[a:b]))
    rows = (max(0, r - 1), min(ink.shape[0], r + 2))
    crop = np.ascontiguousarray(ink[:, c:d])
    return _style(crop, rows), _colour(None if rgb is None else rgb[:, c:d], crop, rows)


def _hex(ink: tuple[int, int, int] | None) -> str | None:
    from core.io.colour import hex_colour

    return hex_colour(ink) if ink else None


# -- one region ------------------------------------------------------------------------------------------------


def _track_of(cell: tuple[float, float], tracks: list[tuple[float, float]], walled: bool) -> tuple[float, float]:
    """The track an entry's scale spans: the proposed track its cell overlaps most, or the cell itself where the
    box's own walls bound it inside a track (iqa_01146: ROP's box covers the first half of a track whose grid runs
    on unbroken; the box, not the grid, says where ROP's scale ends)."""
    best, overlap = None, 0.0
    for lo, hi in tracks:
        o = min(hi, cell[1]) - max(lo, cell[0])
        if o > overlap:
            best, overlap = (float(lo), float(hi)), o
    if best is None:
        return float(cell[0]), float(cell[1])
    narrower = cell[1] - cell[0] < 0.9 * (best[1] - best[0])
    inside = cell[0] >= best[0] - 5 and cell[1] <= best[1] + 5
    return (float(cell[0]), float(cell[1])) if walled and narrower and inside else best


def rows_of(reading: sw.Reading, ink: np.ndarray, rgb: np.ndarray | None, tracks: list[tuple[float, float]],
            offset: int = 0, section: int = 0) -> list[ScaleRow]:
    """The entries of a read region as scale rows: their tracks, pens and inks (``offset``: the region's first row
    in the scan, so that each row says where it is printed)."""
    walls = {round(x) for x, _, _ in reading.walls}
    out = []
    for e in se.entries(reading.lines, reading.across):
        walled = round(e.cell[0]) in walls and round(e.cell[1]) in walls
        track = _track_of(e.cell, tracks, walled)
        line_height = max(4.0, 2.0 * (e.bottom - e.numbers_row))
        klass, colour = _pen_near(reading, ink, rgb, e.cell, e.top, e.bottom, line_height, e.numbers_row, line_height)
        out.append(ScaleRow(track, e.name, e.unit, e.left, e.right, klass, int(e.top), colour or _hex(e.ink),
                            e.mnemonic, e.continues, offset + e.numbers_row, section))
    return out


def read_rows(box: np.ndarray, tracks: list[tuple[float, float]], rgb: np.ndarray | None = None,
              dpi: float = 200.0) -> list[ScaleRow]:
    """Every row of a box (an upright grey crop, tracks across its columns) that gives a curve on a scale:
    ``0  Gamma Ray (GAPI)  150`` over its pen sample, ``Gamma Ray`` over ``0  GAPI  150``, or ``1 ——— 300``
    under the curve's name. ``rgb``: the box's colour pixels on a colour print, for the pens' ink colours."""
    borders = tuple(float(x) for t in tracks for x in t)
    reading = sw.read_region(box, rgb, dpi, borders)
    return rows_of(reading, sw.ink_picture(box, rgb), rgb, tracks)


# -- rows to curves ----------------------------------------------------------------------------------------------


def log_scale(left: float, right: float) -> bool:
    """Whether a scale's ends are a log track's: both above zero, two or more whole decades apart (0.2–2000,
    1–1000); a linear scale is never printed so."""
    if left <= 0 or right <= 0:
        return False
    decades = abs(float(np.log10(right / left)))
    return decades >= 2 - 1e-6 and abs(decades - round(decades)) < 1e-6


def _mnemonics(r: ScaleRow) -> list[str]:
    """The curves a row names: its mnemonic, or each gas component of a range (``C1-C4 (PPM)``: C1, C2, C3, C4)."""
    span = re.match(r"^\s*C\s*([1-5])\s*[-–]\s*C\s*([1-5])\b", r.name, re.IGNORECASE)
    if span and int(span.group(1)) < int(span.group(2)):
        return [f"C{k}" for k in range(int(span.group(1)), int(span.group(2)) + 1)]
    m = r.mnemonic or mnemonic_for(r.name)
    return [m] if m else []


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def curves_from_rows(rows: list[ScaleRow], keep_names: bool = False) -> list[dict]:
    """One calibration curve (``NAME.calib.json`` form) per curve of the box: a row whose scale goes on where
    another row of the same curve in the same track ends is that curve's backup scale (wrap, its side).
    ``keep_names``: each curve keeps ``_base``, the mnemonic its row gave before a second one was numbered (GR2),
    for the scale changes to find it."""
    out: list[dict] = []
    used: set[str] = set()
    for r in sorted(rows, key=lambda r: (r.track, r.top)):
        names = _mnemonics(r)
        if not names:
            continue
        first = next((c for c in reversed(out) if c["_name"] == r.name and tuple(c["track"]) == r.track), None)
        if first is not None and (r.continues or len(names) == 1):
            lo, hi = first["scale"]
            if _same(r.left, hi) and (r.right - r.left) * (hi - lo) > 0:
                first.update(wrap=True, backup="high")  # it goes on past scale[1]
            elif _same(r.right, lo) and (r.right - r.left) * (hi - lo) > 0:
                first.update(wrap=True, backup="low")  # it goes on before scale[0]
            elif r.continues:
                continue
            else:
                first = None
            if first is not None:
                if r.colour != first.get("colour"):
                    if r.colour and first.get("colour"):
                        # its backup scale in another ink (iqa_01146: blue GR, red backup): both inks are the curve's,
                        # and which one the path lies on says which scale it reads (core/digitize/rules/ink_levels.py)
                        first["backup_colour"] = r.colour
                    else:
                        # one of them black: one colour would follow the coloured scale's ink only and leave the
                        # other's stretches NULL, so the line style decides
                        first.pop("colour", None)
                continue
        if r.continues:
            continue
        for base in names:
            mnem, k = base, 2
            while mnem in used:
                mnem, k = f"{base}{k}", k + 1
            used.add(mnem)
            out.append({"mnemonic": mnem, "unit": r.unit, "description": f"{r.name} (read from the scale box)",
                        "class": r.klass, "track": [r.track[0], r.track[1]], "scale": [r.left, r.right],
                        "log": log_scale(r.left, r.right), "wrap": False, "proposed": True, "_name": r.name,
                        "_base": base,
                        **({"colour": r.colour} if r.colour else {})})
    for c in out:
        c.pop("_name")
        if not keep_names:
            c.pop("_base")
        if not c["wrap"]:
            c.pop("wrap")
    return out


# -- where boxes are -------------------------------------------------------------------------------------------


def box_top(upright: np.ndarray, stop: int, floor: int, dpi: float) -> int:
    """The first row of the box above row ``stop`` (a section's first row), looked for no higher than ``floor``:
    the top of the box's frame, the highest top that two or more of the walls running down to the section share
    (the page's frame lines, which run on up out of the window, left out), less a title's height; without such
    walls, :data:`BOX_LOOK_IN` above."""
    ink = upright[floor:stop] < pw.INK_LEVEL
    look = max(floor, stop - int(BOX_LOOK_IN * dpi))
    if ink.shape[0] < 8:
        return floor
    n = max(8, int(round(sw.RULE_IN * dpi)))
    along = cv2.morphologyEx(ink.astype(np.uint8), cv2.MORPH_OPEN, np.ones((n, 1), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(along, connectivity=8)
    reach = int(0.15 * dpi)
    tops = [int(stats[i, 1]) for i in range(1, count)
            if stats[i, 1] + stats[i, 3] >= ink.shape[0] - reach and stats[i, 2] <= max(4, 0.05 * dpi)
            and stats[i, 1] > 0.2 * dpi]
    tol = max(3, int(FRAME_TOL_IN * dpi))
    shared = [t for t in tops if sum(abs(u - t) <= tol for u in tops) >= 2]
    if not shared:
        return look
    return max(floor, min(shared) + floor - int(BOX_ABOVE_IN * dpi))


def _upright_rgb(rgb: np.ndarray | None, a: int, b: int) -> np.ndarray | None:
    return None if rgb is None else np.ascontiguousarray(rgb[a:b])


@dataclass
class Box:
    """A box read above a section: its scale rows, its words (``reading``; turned a quarter left when the box is
    printed sideways, ``turned``), its first row and its pixels' width."""

    rows: list[ScaleRow]
    reading: sw.Reading | None
    top: int
    turned: bool = False
    width: int = 0


def read_box(upright: np.ndarray, rgb: np.ndarray | None, tracks: list[tuple[float, float]], start: int,
             floor: int, dpi: float, section: int = 0) -> Box:
    """The box above a section that starts at row ``start`` (looked for down from ``floor``) read: its rows, and
    its words for a legend's names (``body_scales.py``). A box printed sideways (a mud log's) is read turned."""
    top = box_top(upright, start, floor, dpi)
    if start - top < 8:
        return Box([], None, top)
    grey = np.ascontiguousarray(upright[top:start])
    colour = _upright_rgb(rgb, top, start)
    if sw.turned(grey, colour, dpi):
        reading = sw.read_region(sw.turn(grey), sw.turn(colour), dpi)
        return Box([], reading, top, True, grey.shape[1])
    borders = tuple(float(x) for t in tracks for x in t)
    reading = sw.read_region(grey, colour, dpi, borders)
    return Box(rows_of(reading, sw.ink_picture(grey, colour), colour, tracks, top, section), reading, top, False,
               grey.shape[1])


def read_scales(upright: np.ndarray, rgb: np.ndarray | None, tracks: list[tuple[float, float]],
                sections: list[tuple[int, int]], dpi: float | None,
                section_tracks: list[list[tuple[float, float]]] | None = None) -> tuple[list[dict], list[str]]:
    """The curves of a scan's scale boxes (``upright``: the scan with depth down its rows; ``rgb`` its colour
    pixels the same way on a colour print; ``sections`` the (start, stop) rows of each stretch of log body), and
    what was read, said in lines: the box above each section, the scales printed in the log body where a box is
    a legend without them (mud logs), and the scale changes printed partway down. ``tracks`` are the first
    section's; ``section_tracks`` each section's where known (another log on the page lays its tracks out
    otherwise): a later section's box without them is read by its own walls alone."""
    from core.digitize.calibrate import body_scales

    if not tracks or not sections or sections[0][0] < 20:
        return [], ["no scale box read: the log body starts at the top of the scan"]
    if not dpi or dpi < MIN_DPI:  # unknown, or a file that says 1 dpi (the archive has one): the box's letters say
        dpi = guess_dpi(upright[max(0, sections[0][0] - 600) : sections[0][0]])
    said: list[str] = []
    rows: list[ScaleRow] = []
    changes: list[body_scales.ScaleChange] = []
    floor = 0
    for k, (start, stop) in enumerate(sections):
        floor = max(floor, start - int(BOX_MAX_IN * dpi))
        here = (section_tracks[k] if section_tracks and k < len(section_tracks) and section_tracks[k]
                else tracks if k == 0 else [])
        box = read_box(upright, rgb, here, start, floor, dpi, k)
        body = body_scales.read_body(upright, rgb, here or tracks, (start, stop), dpi, box, k)
        box_rows = body_scales.merge(box.rows, body.rows)
        if k > 0:
            box_rows = [r for r in box_rows if not _known(r, rows)]
        rows += box_rows
        changes += body.changes
        floor = stop
    curves = curves_from_rows(rows, keep_names=True)
    body_scales.attach_changes(curves, changes)
    for c in curves:
        c.pop("_base")
    if not curves:
        return [], ["no curve read from the scale box above the log body: add the curves by hand"]
    said.append(f"{len(curves)} curve(s) read from the scale box (check them): " + describe(curves))
    said += [c.said for c in changes if c.kept]
    return curves, said


def guess_dpi(region: np.ndarray) -> float:
    """A print's resolution from its letters: a scale box's capitals and digits stand :data:`LETTER_IN` tall (8-9
    pt type), so the median height of the letter-sized blobs above the log body says the dots per inch."""
    dark = (region < pw.INK_LEVEL).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(dark, connectivity=8)
    h = stats[1:, cv2.CC_STAT_HEIGHT]
    w = stats[1:, cv2.CC_STAT_WIDTH]
    letters = h[(h >= 5) & (h <= 60) & (w <= 1.5 * h) & (w >= 0.2 * h)]
    if letters.size < 10:
        return 150.0
    return float(np.clip(np.median(letters) / LETTER_IN, 60.0, 400.0))


def _known(r: ScaleRow, rows: list[ScaleRow]) -> bool:
    """Whether a row of a later section's box repeats a curve already read (a repeat pass's box)."""
    names = _mnemonics(r)
    return any(_mnemonics(o) == names and _same(o.left, r.left) and _same(o.right, r.right) for o in rows)


def changes_by_depth(curves: list[dict], spans: list[tuple[int, int, list[tuple[float, float]]]],
                     picks: list[tuple[float, float]]) -> list[dict]:
    """The curves as a calibration writes them: each scale change printed at a pixel (``from_pixel``, as the
    proposal reads it) at the depth the picks give there (``from_depth``, as the calibration contract holds it):
    the picks of the section whose ``spans`` (start, stop, picks) hold the pixel, else ``picks``. Without picks (a
    draft) a change has no depth yet and is left out; the proposal's messages name it."""
    out = []
    for c in curves:
        c = dict(c)
        changes = c.pop("scale_changes", [])
        written = []
        for ch in changes:
            pixel = ch["from_pixel"]
            here = next((p for a, b, p in spans if a <= pixel < b and len(p) >= 2), picks)
            if len(here) >= 2:
                written.append({"from_depth": round(_depth_at(here, pixel), 2), "scale": list(ch["scale"])})
        if written:
            c["scale_changes"] = written
        out.append(c)
    return out


def _depth_at(picks: list[tuple[float, float]], pixel: float) -> float:
    """The depth at a pixel through picks: piecewise linear, extrapolated at the ends (as a calibration reads)."""
    p = np.asarray(sorted(picks), np.float64)
    k = int(np.clip(np.searchsorted(p[:, 0], pixel, side="right") - 1, 0, len(p) - 2))
    (x0, d0), (x1, d1) = p[k], p[k + 1]
    return float(d0 + (pixel - x0) * (d1 - d0) / (x1 - x0))


def describe(curves: list[dict]) -> str:
    style = {1: "solid", 2: "dashed", 3: "dotted"}
    return ", ".join(f"{c['mnemonic']} {c['scale'][0]:g}–{c['scale'][1]:g}"
                     + (f" ({c['unit']})" if c["unit"] else "") + f" {style[c['class']]}"
                     + (f", backup {c['backup']}" if c.get("wrap") else "")
                     + (f", ink {c['colour']}" if c.get("colour") else "")
                     + "".join(f", {ch['scale'][0]:g}–{ch['scale'][1]:g} from row {ch['from_pixel']:.0f}"
                               for ch in c.get("scale_changes", []))
                     for c in curves)
