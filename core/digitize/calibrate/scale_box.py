"""The curves a log's header prints in its scale box, read so that nobody types them.

Above the log body every print has a box that says, per track and row, which curve is drawn how:
``0  Gamma Ray (GAPI)  150`` with a sample of the curve's pen drawn as the rule beneath it (solid, dashed,
dotted). A second row of the same curve whose scale goes on where the first ends (``150  Gamma Ray (GAPI)
300``) is its backup scale: the curve wraps. This module reads that box with Tesseract, track by track, and
proposes one curve per row: mnemonic, unit, scale ends, line style, track, wrap and backup side. What it
cannot read (a row without a number at both ends, a name it cannot map) it leaves out: the user adds it. The
names and units it knows are ``core/digitize/calibrate/curve_names.py``.

Work in the scan's upright frame (depth down the rows); ``tracks`` are the proposal's (lo, hi) columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cv2
import numpy as np

from core.digitize.calibrate.curve_names import mnemonic_for, names_a_curve, unit_for, unit_in_name

NUMBER = re.compile(r"^[-+−–]?\d+(?:[.,]\d+)?$")
RULE_LEN_PX = 40  # ink runs this long (twice a letter at 200 dpi) are box rules, erased before OCR
SOLID_RUN_PX = 40  # a pen sample whose ink lies mostly in runs this long is solid ...
DASH_MIN_PX = 7  # ... else dashed when most lies in runs this long or longer, dotted when in shorter ones
BOX_ROWS_PER_INCH = 3.0  # the box is looked for this far above the log body (3 in: a dozen rows of text)


@dataclass
class ScaleRow:
    """One row of the box: a curve on one scale, and the pen sample ruled beneath it."""

    track: tuple[float, float]
    name: str
    unit: str
    left: float
    right: float
    klass: int  # 1 solid, 2 dashed, 3 dotted (the sample beneath; solid when there is none)
    top: int  # row of the text in the box (for ordering)
    colour: str | None = None  # the sample's ink "#rrggbb" on a colour print; None: black or grey, or no sample


def _number(text: str) -> float | None:
    t = text.strip().strip("|/{}[]()").replace("−", "-").replace("–", "-").replace(",", ".")
    return float(t) if NUMBER.match(t) else None


def _erase_rules(img: np.ndarray) -> np.ndarray:
    """The box's rules whitened (a border read as ``|`` or ``/`` glues the numbers either side into one)."""
    ink = (img < 128).astype(np.uint8)
    across = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, RULE_LEN_PX), np.uint8))
    along = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((RULE_LEN_PX, 1), np.uint8))
    # dashed rules too: short dashes in a row, closed into one run before the opening
    closed = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((1, 9), np.uint8))
    dashed = cv2.morphologyEx(closed, cv2.MORPH_OPEN, np.ones((1, 3 * RULE_LEN_PX), np.uint8)) & ink
    out = img.copy()
    out[(across | along | dashed) > 0] = 255
    return out


def _words(crop: np.ndarray) -> list[tuple[int, int, int, int, str]]:
    """(left, top, width, height, text) of Tesseract's words in a crop, rules erased, padded with paper."""
    from core.digitize.calibrate.ocr import image_to_data

    pad = 12
    clean = cv2.copyMakeBorder(_erase_rules(crop), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)
    data = image_to_data(clean, config="--psm 11")
    out = []
    for i, text in enumerate(data["text"]):
        text = text.strip()
        if re.search(r"[A-Za-z0-9]", text) and data["height"][i] >= 6:  # not a dashed rule read as "-----"
            out.append((data["left"][i] - pad, data["top"][i] - pad, data["width"][i], data["height"][i], text))
    return out


def _edge_number(crop: np.ndarray, top: int, bottom: int, x0: int, x1: int) -> float | None:
    """A scale end Tesseract's page reading dropped (a lone ``0`` or ``6`` against the box's edge): the strip
    between the track's edge and the row's first (or last) word read again alone, as one line of digits."""
    from core.digitize.calibrate.ocr import image_to_string

    x0, x1 = max(0, x0), min(crop.shape[1], x1)
    if x1 - x0 < 4:
        return None
    strip = _erase_rules(crop[max(0, top - 3) : bottom + 3, x0:x1])
    if (strip < 128).sum() < 8:
        return None
    strip = cv2.copyMakeBorder(cv2.resize(strip, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC), 16, 16, 16, 16,
                               cv2.BORDER_CONSTANT, value=255)
    for psm in (6, 7):  # a lone digit is found as a block more often than as a line
        value = _number(image_to_string(strip, config=f"--psm {psm} -c tessedit_char_whitelist=0123456789.-"))
        if value is not None:
            return value
    return None


def _box_span(crop: np.ndarray, top: int, bottom: int, x0: int, x1: int) -> tuple[int, int] | None:
    """The box a row's text sits in, where the box is narrower than its track: the nearest vertical rules left of
    ``x0`` and right of ``x1`` that run through the row and a text height beyond it (a letter's stroke does
    not), or None when the track's own edges bound it. The North Dakota log prints ROP's box over the first
    half of a track whose grid runs on unbroken: the box, not the grid, says where ROP's scale ends."""
    height = bottom - top
    lo, hi = max(0, top - height), min(crop.shape[0], bottom + height)
    ink = crop[lo:hi] < 128
    if ink.shape[0] < 2 * height or crop.shape[1] < 8:
        return None
    ruled = np.flatnonzero(ink.mean(axis=0) >= 0.95)  # columns inked through the row and beyond it
    margin = 6  # rules this near the crop's ends are the track's own borders
    inner = ruled[(ruled > margin) & (ruled < crop.shape[1] - margin)]
    left = inner[inner < x0]
    right = inner[inner > x1]
    a = int(left.max()) if left.size else None
    b = int(right.min()) if right.size else None
    if a is None and b is None:
        return None
    return (a if a is not None else 0), (b if b is not None else crop.shape[1] - 1)


def _lines(words: list) -> list[list]:
    """Words grouped into text lines (their vertical extents overlap by half), each sorted left to right."""
    lines: list[list] = []
    for w in sorted(words, key=lambda w: w[1]):
        mid = w[1] + w[3] / 2
        for line in lines:
            top, bot = min(v[1] for v in line), max(v[1] + v[3] for v in line)
            if top <= mid <= bot:
                line.append(w)
                break
        else:
            lines.append([w])
    return [sorted(line, key=lambda w: w[0]) for line in lines]


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


def _pen(crop: np.ndarray, rgb: np.ndarray | None, below: int, until: int) -> tuple[int, str | None]:
    """The line style and ink colour (:func:`_colour`) of the rule under a row, found once."""
    rows = _sample_rows(crop, below, until)
    return _style(crop, rows), _colour(rgb, crop, rows)


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
    """The ink colour of a rule (rows [a, b) of ``crop``) on a colour print (``rgb``: the box's colour pixels, as
    ``crop``): the median of its inked pixels, "#rrggbb" where it has colour, None for a black or grey pen or no
    rule (the pen's line style tells such curves apart; a colour, where printed, tells which curve is which for
    real)."""
    if rgb is None or rows is None:
        return None
    from core.io.colour import NEUTRAL_CHROMA, hex_colour, lab_of

    ink = crop[rows[0] : rows[1], 3:-3] < 128
    pixels = rgb[rows[0] : rows[1], 3:-3][ink]
    if len(pixels) < 8:
        return None
    median = np.median(pixels.astype(np.float32), axis=0)
    _, a, b = lab_of(median)
    return hex_colour(median) if float(np.hypot(a, b)) >= NEUTRAL_CHROMA else None


def _rule_between(crop: np.ndarray, top: int, bottom: int, x0: int, x1: int, rgb: np.ndarray | None = None
                  ) -> tuple[int, str | None] | None:
    """The pen sample drawn between a row's two numbers (``1 ——— 300``): its line style and ink colour
    (:func:`_pen`), None if none."""
    if x1 - x0 < 20:
        return None
    ink = crop[max(0, top) : bottom + 1, x0 + 3 : x1 - 3] < 160
    if ink.size == 0 or ink.mean(axis=1).max() < 0.3:
        return None
    return _pen(crop[:, x0:x1], None if rgb is None else rgb[:, x0:x1], max(0, top), bottom + 1)


def _name_above(lines: list[list], k: int, height: float) -> tuple[str, str] | None:
    """The name (and unit) printed above a row of bare numbers: the nearest line above, within four text
    heights, that names a curve (``Gamma API (TVD) Track: 1``); a word alone between them that is a unit
    (``API``, ``Ft/Hr``) is its unit, else the unit in the name's brackets."""
    top = min(w[1] for w in lines[k])
    near = [ln for ln in lines[:k] if top - max(w[1] + w[3] for w in ln) <= 4 * height]
    for j in range(len(near) - 1, -1, -1):
        name, _, rest = " ".join(w[4] for w in near[j]).partition("(")
        unit = unit_for(rest.split(")")[0]) if rest else ""
        between = [unit_for(ln[0][4]) for ln in near[j + 1 :] if len(ln) == 1]
        unit = next((u for u in between if u), unit)
        if re.search("[A-Za-z]{2}", name) and names_a_curve(name.strip(), unit):
            return name.strip(), unit or unit_in_name(name)
    return None


def read_rows(box: np.ndarray, tracks: list[tuple[float, float]], rgb: np.ndarray | None = None) -> list[ScaleRow]:
    """Every row of the box (an upright grey crop, tracks across its columns) that gives a curve on a scale:
    ``0  Gamma Ray (GAPI)  150`` over its pen sample, or ``1 ——— 300`` (the sample between the numbers) under
    the curve's name. ``rgb``: the box's colour pixels on a colour print, for the pens' ink colours."""
    rows: list[ScaleRow] = []
    for lo, hi in tracks:
        a, b = int(max(0, np.floor(lo))), int(min(box.shape[1], np.ceil(hi) + 1))
        if b - a < 40:
            continue
        crop = box[:, a:b]
        crop_rgb = None if rgb is None else rgb[:, a:b]
        lines = _lines(_words(crop))
        for k, line in enumerate(lines):
            top, bottom = min(w[1] for w in line), max(w[1] + w[3] for w in line)
            left, right = _number(line[0][4]), _number(line[-1][4])
            if len(line) == 1 and left is not None:  # one number: the other end was dropped, on one side
                w = line[0]
                before = _edge_number(crop, top, bottom, 0, w[0] - 2)
                after = _edge_number(crop, top, bottom, w[0] + w[2] + 2, crop.shape[1])
                if (before is None) == (after is None):
                    continue
                line = ([(0, top, 0, 0, str(before)), w] if before is not None else
                        [w, (crop.shape[1], top, 0, 0, str(after))])
                left, right = _number(line[0][4]), _number(line[1][4])
            if left is None and re.search("[A-Za-z]", line[0][4]):
                left = _edge_number(crop, top, bottom, 0, line[0][0] - 2)
                line = [(0, top, 0, 0, str(left)), *line] if left is not None else line
            if right is None and re.search("[A-Za-z()]", line[-1][4]):
                right = _edge_number(crop, top, bottom, line[-1][0] + line[-1][2] + 2, crop.shape[1])
                line = [*line, (crop.shape[1], top, 0, 0, str(right))] if right is not None else line
            middle = " ".join(w[4] for w in line[1:-1])
            height = max(w[3] for w in line)
            if left is None or right is None or left == right:
                continue
            span = _box_span(crop, top, bottom, line[0][0], line[-1][0] + line[-1][2])
            track = (float(lo), float(hi)) if span is None else (float(a + span[0]), float(a + span[1]))
            if len(line) == 2:  # bare numbers: the sample between them, the name above
                pen = _rule_between(crop, top, bottom, line[0][0] + line[0][2], line[1][0], crop_rgb)
                named = _name_above(lines, k, height) if pen is not None else None
                if named and names_a_curve(*named):
                    rows.append(ScaleRow(track, named[0], named[1], left, right, pen[0], top, pen[1]))
                continue
            if not re.search("[A-Za-z]", middle):
                continue
            name, _, rest = middle.partition("(")
            unit = unit_for(rest.split(")")[0]) if rest else ""
            if not names_a_curve(name, unit):
                continue
            unit = unit or unit_in_name(name)
            nxt = min((min(w[1] for w in ln) for ln in lines[k + 1 :]), default=bottom + 2 * height)
            klass, colour = _pen(crop, crop_rgb, bottom + 1, min(crop.shape[0], max(nxt, bottom + 4)))
            rows.append(ScaleRow(track, name.strip(), unit, left, right, klass, top, colour))
    return rows


def log_scale(left: float, right: float) -> bool:
    """Whether a scale's ends are a log track's: both above zero, two or more whole decades apart (0.2–2000,
    1–1000); a linear scale is never printed so."""
    if left <= 0 or right <= 0:
        return False
    decades = abs(float(np.log10(right / left)))
    return decades >= 2 - 1e-6 and abs(decades - round(decades)) < 1e-6


def curves_from_rows(rows: list[ScaleRow]) -> list[dict]:
    """One calibration curve (``NAME.calib.json`` form) per curve of the box: a row whose scale goes on where
    another row of the same curve in the same track ends is that curve's backup scale (wrap, its side)."""
    out: list[dict] = []
    used: set[str] = set()
    for i, r in enumerate(sorted(rows, key=lambda r: (r.track, r.top))):
        mnem = mnemonic_for(r.name)
        if mnem is None:
            continue
        first = next((c for c in out if c["_name"] == r.name and tuple(c["track"]) == r.track), None)
        if first is not None:
            lo, hi = first["scale"]
            if abs(r.left - hi) <= 1e-6 * max(1.0, abs(hi)) and (r.right - r.left) * (hi - lo) > 0:
                first.update(wrap=True, backup="high")  # it goes on past scale[1]
            elif abs(r.right - lo) <= 1e-6 * max(1.0, abs(lo)) and (r.right - r.left) * (hi - lo) > 0:
                first.update(wrap=True, backup="low")  # it goes on before scale[0]
            else:
                continue
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
        base, k = mnem, 2
        while mnem in used:
            mnem, k = f"{base}{k}", k + 1
        used.add(mnem)
        out.append({"mnemonic": mnem, "unit": r.unit, "description": f"{r.name} (read from the scale box)",
                    "class": r.klass, "track": [r.track[0], r.track[1]], "scale": [r.left, r.right],
                    "log": log_scale(r.left, r.right),
                    "wrap": False, "proposed": True, "_name": r.name, **({"colour": r.colour} if r.colour else {})})
    for c in out:
        c.pop("_name")
        if not c["wrap"]:
            c.pop("wrap")
    return out


def box_columns(body_start: int, dpi: float | None) -> tuple[int, int]:
    """Columns [a, b) along depth (canonical) where the scale box is looked for: the stretch above the body."""
    return max(0, body_start - int(BOX_ROWS_PER_INCH * (dpi or 200.0))), body_start


def read_scale_box(canon: np.ndarray, tracks: list[tuple[float, float]], body_start: int,
                   dpi: float | None = None, box_rgb: np.ndarray | None = None) -> tuple[list[dict], str]:
    """The curves of the scale box just above the log body (canonical image: rows across, columns along depth;
    ``body_start`` the first column of the log body), and a line saying what was read. ``box_rgb``: the colour
    pixels of the :func:`box_columns` stretch, upright as the box is read (depth down its rows), on a colour
    print: each pen's ink colour is proposed with its curve."""
    if not tracks or body_start < 20:
        return [], "no scale box read: the log body starts at the top of the scan"
    a, b = box_columns(body_start, dpi)
    box = np.ascontiguousarray(canon[:, a:b].T)  # upright: depth down
    try:
        rows = read_rows(box, tracks, box_rgb)
    except (RuntimeError, OSError) as exc:  # Tesseract failing on one picture costs the curves, not the proposal
        return [], f"the scale box could not be read ({' '.join(str(exc).split())[:120]}): add the curves by hand"
    curves = curves_from_rows(rows)
    if not curves:
        return [], "no curve read from the scale box above the log body: add the curves by hand"
    style = {1: "solid", 2: "dashed", 3: "dotted"}
    said = ", ".join(f"{c['mnemonic']} {c['scale'][0]:g}–{c['scale'][1]:g}"
                     + (f" ({c['unit']})" if c["unit"] else "") + f" {style[c['class']]}"
                     + (f", backup {c['backup']}" if c.get("wrap") else "")
                     + (f", ink {c['colour']}" if c.get("colour") else "") for c in curves)
    return curves, f"{len(curves)} curve(s) read from the scale box (check them): {said}"
