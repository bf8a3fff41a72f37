"""The QC picture of a digitised scan: the LAS values drawn back over the scan, page by page.

A petrophysicist checks a digitised log by looking: does each traced line sit on its printed curve, where is it
NULL, what did the digitiser warn about. The values drawn are the LAS file's own, mapped back to pixels through
the calibration (depth picks and curve scales), so a wrong scale or depth pick shows as a line off its curve,
not only a wrong trace. The scan is drawn faded grey so the traces in their colours stand out on it; depth runs
down the page whatever the scan's orientation; a long log is cut into pages of a size a screen shows whole.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from core.common.runs import true_runs
from core.digitize.rules.confidence import LOW_CONFIDENCE, low_confidence_share
from core.io.calibration import Calibration, CurveSpec, Section
from core.io.file_names import qc_page_paths

# the curves' colours where they name none the page can show (or one a curve before them took), in this order
# first; no red: red marks NULL
CURVE_COLOURS = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#e377c2", "#bcbd22", "#000080",
                 "#006400"]
NULL_COLOUR = (220, 30, 30)  # RGB
BACKUP_COLOUR = (30, 90, 230)  # values read on a backup scale
LOW_CONFIDENCE_COLOUR = (230, 150, 0)  # values flagged low-confidence (``core/digitize/rules/confidence.py``)
PAGE_WIDTH_PX = 1400  # the widest a page is drawn: a scan wider than this is scaled down
MIN_PAGE_WIDTH_PX = 900  # a narrower scan gets a page this wide: the header's legend and warnings need it
PAGE_HEIGHT_PX = 1800  # the log drawn per page (below the page's header band)
MARGIN_PX = 84  # the depth column at the left of each page
FADE = 0.45  # the scan's ink is drawn at this share of its darkness


# two curves' colours closer than this (RGB distance, of 441) are one colour to the eye on a page; a colour lighter
# than MAX_LUMA vanishes on its white paper (a yellow ink, a white "color")
MIN_APART = 60.0
MAX_LUMA = 200.0


def _luma(rgb) -> float:
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def _spares() -> list[tuple[int, int, int]]:
    """Colours past the palette, for a page of many curves (a mud log prints up to 38): an RGB grid without its
    greys (the scan is drawn grey) and without what its paper hides."""
    levels = range(0, 256, 40)
    return [(r, g, b) for r in levels for g in levels for b in levels
            if max(r, g, b) - min(r, g, b) >= 80 and _luma((r, g, b)) <= MAX_LUMA]


def qc_colours(curves: list[CurveSpec]) -> list[str]:
    """The colour of each curve on a page, one of its own: the display colour the calibration names ("color"),
    else its ink, where the page can show it and no curve before it took it (within :data:`MIN_APART`); else the
    palette's next colour free of those taken, and past the palette the spare colour farthest from all taken.
    The scan is drawn grey beneath, so a trace in its own ink still stands out; the app draws its curves in the
    same colours (the palette repeated after six: ROP and C4 both blue on a ten-curve mud log)."""
    from core.io.colour import hex_colour, parse_colour

    taken: list[tuple[int, int, int]] = []

    def free(rgb, marks=()) -> bool:
        return all(np.linalg.norm(np.subtract(rgb, t)) >= MIN_APART for t in [*taken, *marks])

    out = []
    for spec in curves:
        own = None
        for named in (spec.plot_colour, spec.colour):
            try:
                own = tuple(int(v) for v in parse_colour(named)) if named else None
            except ValueError:  # a display colour is a hint: one that names no colour is passed over
                own = None
            if own is not None:
                break
        if own is not None and _luma(own) <= MAX_LUMA and free(own):
            pick = own
        else:
            pick = next((hex_rgb(c) for c in CURVE_COLOURS if free(hex_rgb(c))), None)
            if pick is None:  # a colour of ours is never NULL's red (a curve's own may be: a red ink)
                spares = [c for c in _spares() if c not in taken and free(c, [NULL_COLOUR])] or \
                    [c for c in _spares() if c not in taken]
                pick = max(spares, key=lambda c: min(np.linalg.norm(np.subtract(c, t)) for t in taken))
        taken.append(pick)
        out.append(hex_colour(pick))
    return out


def hex_rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@dataclass
class QcPart:
    """One LAS of the scan: its values (``DigitizeResult``), the calibration they were read with, and where its
    picture lies along the scan's depth axis (``offset``: the section's first pixel, 0 without sections)."""

    name: str  # "main pass", "repeat pass", …
    result: object  # core.digitize.job.pipeline.DigitizeResult
    calib: Calibration
    offset: int
    span: tuple[int, int]


def qc_parts(parts: list[tuple[str, Section | None, object]], calib: Calibration, length: int) -> list[QcPart]:
    """``digitize_sections``' output as QC parts, each with its own calibration and place on the scan."""
    out = []
    for _suffix, sec, res in parts:
        if sec is None:
            out.append(QcPart("log", res, calib, 0, (0, length)))
        else:
            index = calib.sections.index(sec)
            out.append(QcPart(f"{sec.kind} pass" if sec.kind != "log" else f"section {index + 1}", res,
                              calib.section_calibration(index), sec.start, (sec.start, min(sec.stop, length))))
    return out


def _nice_step(units_per_px: float, min_px: float = 90.0) -> float:
    """The smallest 1-2-5 depth step whose ticks lie at least ``min_px`` apart."""
    raw = units_per_px * min_px
    base = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 5, 10):
        if m * base >= raw:
            return m * base
    return 10 * base


def _put(canvas: np.ndarray, text: str, x: int, y: int, colour=(0, 0, 0), scale: float = 0.5,
         thick: int = 1) -> int:
    """Write a line of text; returns the x just past it."""
    cv2.putText(canvas, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thick, cv2.LINE_AA)
    return x + cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)[0][0]


def _mark(page: np.ndarray, spec: CurveSpec, scale: float, y0: int, y1: int, slot: int, curve_colour, colour,
          label: str, side: str) -> None:
    """Tint a stretch [y0, y1] of a curve's track in ``colour``, with a bar in the curve's colour edged in
    ``colour`` (``slot``-th from the track's ``side`` edge) and, where the stretch is tall enough, a label."""
    x0, x1 = int(spec.track_lo * scale), int(spec.track_hi * scale)
    tint = page[y0:y1 + 1, x0:x1 + 1].astype(np.float32)
    page[y0:y1 + 1, x0:x1 + 1] = (0.84 * tint + 0.16 * np.array(colour)).astype(np.uint8)
    xb = x0 + 2 + 6 * slot if side == "left" else x1 - 6 - 6 * slot
    cv2.rectangle(page, (xb, y0), (xb + 4, y1), curve_colour, -1)
    cv2.rectangle(page, (xb, y0), (xb + 4, y1), colour, 1)
    if y1 - y0 > 18 + 13 * (slot % 3):
        width = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.42, 1)[0][0]
        x = xb + 8 if side == "left" else xb - 4 - width
        _put(page, label, x, y0 + 14 + 13 * (slot % 3), colour, 0.42)


def render_qc(image: np.ndarray, calib: Calibration, parts: list[QcPart], scan_name: str, source: str = "",
              page_height: int = PAGE_HEIGHT_PX, page_width: int = PAGE_WIDTH_PX) -> list[np.ndarray]:
    """The QC pages (RGB uint8) of a scan (grey or RGB pixels, the scan's own layout) and its digitised parts."""
    grey = image if image.ndim == 2 else cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2GRAY)
    tall = grey if calib.depth_axis == "y" else grey.T  # depth down the rows
    length, across = tall.shape
    scale = min(1.0, page_width / across)
    lo = min(p.span[0] for p in parts)
    hi = max(p.span[1] for p in parts)
    rows_per_page = max(1, int(page_height / scale))
    starts = list(range(lo, hi, rows_per_page))
    warnings = [w for p in parts for w in p.result.warnings]
    curves = calib.curves
    colours = [hex_rgb(c) for c in qc_colours(curves)]
    drawn = _as_scan_pixels(parts, curves)
    legend_lines = _legend(parts, curves)
    wrapped_warnings = [ln for w in warnings for ln in textwrap.wrap("! " + w, 150, subsequent_indent="   ")]
    pages = []
    for n, a in enumerate(starts):
        b = min(a + rows_per_page, hi)
        out_h = max(1, int(round((b - a) * scale)))
        out_w = max(1, int(round(across * scale)))
        header_lines = 2 + (len(legend_lines) + 2) // 3 + (len(wrapped_warnings) if n == 0 else int(bool(warnings)))
        header_h = 14 + 20 * header_lines
        canvas = np.full((header_h + out_h, max(MIN_PAGE_WIDTH_PX, MARGIN_PX + out_w), 3), 255, np.uint8)
        crop = tall[a:b]
        small = cv2.resize(crop, (out_w, out_h), interpolation=cv2.INTER_AREA) if scale < 1 else crop
        faded = (255 - (255 - small.astype(np.float32)) * FADE).astype(np.uint8)
        canvas[header_h:, MARGIN_PX:MARGIN_PX + out_w] = faded[..., None]
        page = canvas[header_h:, MARGIN_PX:MARGIN_PX + out_w]  # a view: drawing on it draws on the page
        for p, rows, cols in drawn:
            if min(p.span[1], b) > max(p.span[0], a):
                _draw_part(canvas, page, header_h, p, rows, cols, (a, b), scale, curves, colours, len(parts) > 1)
        # the header band: what this is, the legend with NULL shares, the warnings
        depth_a = next((float(p.calib.depth_at(max(p.span[0], a) - p.offset)) for p, _, _ in drawn
                        if p.span[1] > a and p.span[0] < b), None)
        depth_b = next((float(p.calib.depth_at(min(p.span[1], b) - 1 - p.offset)) for p, _, _ in reversed(drawn)
                        if p.span[1] > a and p.span[0] < b), None)
        decimals = max(0, -math.floor(math.log10(calib.step))) if calib.step > 0 else 2
        where = (f"{depth_a:.{decimals}f}-{depth_b:.{decimals}f} {calib.depth_unit}" if depth_a is not None
                 else "no log on this page")
        title = (f"{scan_name}  -  QC of the digitised curves  -  page {n + 1} of {len(starts)}  -  {where}"
                 + (f"  -  {source}" if source else ""))
        notes = wrapped_warnings if n == 0 else ([f"! {len(warnings)} warning(s): see page 1"] if warnings else [])
        _draw_header(canvas, header_h, title, legend_lines, colours, notes)
        pages.append(canvas)
    return pages


def _as_scan_pixels(parts: list[QcPart], curves: list[CurveSpec]) -> list[tuple[QcPart, np.ndarray, list]]:
    """Each part's curves as scan pixels: depth -> row through its own picks, value -> column through the scale."""
    drawn = []
    for p in parts:
        rows = p.offset + p.calib.pixel_at(p.result.depth)
        cols = []
        for spec in curves:
            v = p.result.values.get(spec.mnemonic)
            pos = spec.position_of(v)[0] if v is not None else np.full(rows.shape, np.nan)
            cols.append(np.where(np.isfinite(pos), pos, np.nan))
        drawn.append((p, rows, cols))
    return drawn


def _legend(parts: list[QcPart], curves: list[CurveSpec]) -> list[tuple[int, str]]:
    """(curve index, text) per curve: name, unit, scale, and its NULL and low-confidence shares per part."""
    legend_lines = []
    for i, spec in enumerate(curves):
        shares = []
        for p in parts:
            v = p.result.values.get(spec.mnemonic)
            if v is not None and v.size:
                conf = p.result.confidence.get(spec.mnemonic) if p.result.confidence else None
                low = f", low {100 * low_confidence_share(v, conf):.1f} %" if conf is not None else ""
                shares.append(f"{100 * float(np.mean(~np.isfinite(v))):.1f} %{low}"
                              + (f" ({p.name})" if len(parts) > 1 else ""))
        unit = f" [{spec.unit}]" if spec.unit else ""  # a curve without a unit: no empty brackets
        legend_lines.append((i, f"{spec.mnemonic}{unit} {spec.scale[0]:g}-{spec.scale[1]:g}"
                                f"{' log' if spec.log else ''}: NULL {', '.join(shares) or '-'}"))
    return legend_lines


def _draw_part(canvas: np.ndarray, page: np.ndarray, header_h: int, p: QcPart, rows: np.ndarray, cols: list,
               rows_shown: tuple[int, int], scale: float, curves: list[CurveSpec], colours: list, named: bool) -> None:
    """One part's curves, their marks and its depth column on a page showing scan rows ``rows_shown``."""
    a, b = rows_shown
    out_h, out_w = page.shape[:2]
    s0, s1 = max(p.span[0], a), min(p.span[1], b)
    if named and p.span[0] >= a:  # the part's top edge on this page: a dashed rule and its name
        y = int((p.span[0] - a) * scale)
        for x in range(0, out_w, 16):
            cv2.line(page, (x, y), (min(x + 8, out_w - 1), y), (90, 90, 90), 1)
        _put(page, f"{p.name} starts", 4, min(out_h - 4, y + 14), (60, 60, 60), 0.45)
    here = (rows >= s0 - 1) & (rows <= s1)
    for i, spec in enumerate(curves):
        col = cols[i]
        ok = here & np.isfinite(col)
        for r0, r1 in zip(*true_runs(ok)):
            x, y = col[r0:r1] * scale, (rows[r0:r1] - a) * scale
            pts = np.round(np.stack([x, y], 1) * 16).astype(np.int32)  # 4 fractional bits: sub-pixel lines
            cv2.polylines(page, [pts], False, colours[i], 1, cv2.LINE_AA, shift=4)  # thin: the ink shows beside it
        # what a checker must see, each a tint over the track, a bar in the curve's colour edged in the
        # mark's colour and a label: NULL where the curve had a value on paper (red, at the track's left
        # edge), values read on the backup scale (blue, at its right edge: the line is drawn folded into
        # the track, so without the mark a GR of 325 looks like one of 25), and values flagged
        # low-confidence (amber, beside the NULL bar)
        values = p.result.values.get(spec.mnemonic, np.zeros(rows.shape))
        flags = p.result.flags.get(spec.mnemonic) if p.result.flags else None
        marks = [(here & ~np.isfinite(values), NULL_COLOUR, "NULL", "left", 0)]
        if spec.wrap:
            with np.errstate(invalid="ignore"):
                level = np.floor(spec.unwrapped_fraction(values))
            marks.append((here & np.isfinite(values) & (level != 0), BACKUP_COLOUR, "backup", "right", 0))
        conf = p.result.confidence.get(spec.mnemonic) if p.result.confidence else None
        if conf is not None:
            with np.errstate(invalid="ignore"):
                low = here & np.isfinite(values) & (conf < LOW_CONFIDENCE)
            marks.append((low, LOW_CONFIDENCE_COLOUR, "low confidence", "left", 3 * len(curves)))
        for where, colour, label, side, shift in marks:
            for r0, r1 in zip(*true_runs(where)):
                y0 = int(max(0, (rows[r0] - a) * scale))
                y1 = int(min(out_h - 1, (rows[r1 - 1] - a) * scale + 1))
                why = _why(flags, r0, r1, label)
                _mark(page, spec, scale, y0, y1, i + shift, colours[i], colour,
                      f"{spec.mnemonic} {label}" + (f": {why}" if why else ""), side)
    # the depth column: ticks at round depths of this part
    d_a, d_b = p.calib.depth_at(np.array([s0 - p.offset, s1 - 1 - p.offset], float))
    per_px = abs(d_b - d_a) / max(1.0, (s1 - s0) * scale)
    step = _nice_step(per_px)
    for d in np.arange(math.ceil(min(d_a, d_b) / step) * step, max(d_a, d_b) + 1e-9, step):
        y = int(round((p.offset + float(p.calib.pixel_at(d)) - a) * scale)) + header_h
        cv2.line(canvas, (MARGIN_PX - 10, y), (MARGIN_PX - 1, y), (0, 0, 0), 1)
        _put(canvas, f"{d:g}", 4, y + 5, (0, 0, 0), 0.45)


def _why(flags: np.ndarray | None, r0: int, r1: int, label: str) -> str:
    """What the passes say of a marked stretch (``core/digitize/rules/passes.py``): the reason of the pass that took
    most of a NULL stretch's values away, or that doubted most of a low-confidence one; a low confidence no pass
    names is the evidence's own (faint, a stroke of its style elsewhere, a neighbour near: the calibrated
    confidence's signals)."""
    if flags is None or label not in ("NULL", "low confidence"):
        return ""
    from core.digitize.rules.passes import BY_NAME, Effect, reasons

    found = reasons(flags[r0:r1], effect=Effect.NULL if label == "NULL" else Effect.DOUBT)
    if found:
        return BY_NAME[found[0][0]].reason
    return "" if label == "NULL" else "the evidence there"


def _draw_header(canvas: np.ndarray, header_h: int, title: str, legend_lines: list[tuple[int, str]], colours: list,
                 notes: list[str]) -> None:
    """The page's header band: what this is, the key to its marks, the legend with NULL shares, the warnings."""
    y = 20
    _put(canvas, title, 6, y, (0, 0, 0), 0.52, 1)
    y += 20
    _put(canvas, "lines: the LAS values drawn back through the calibration; grey: the scan; tints and bars: "
         "red NULL, blue backup scale, amber low confidence", 6, y, (70, 70, 70), 0.45)
    for k in range(0, len(legend_lines), 3):
        y += 20
        x = 6
        for i, text in legend_lines[k:k + 3]:
            cv2.rectangle(canvas, (x, y - 10), (x + 22, y - 4), colours[i], -1)
            x = _put(canvas, text, x + 28, y, (0, 0, 0), 0.45) + 24
    for line in notes:
        y += 20
        _put(canvas, line, 6, y, (170, 60, 0), 0.45)
    cv2.line(canvas, (0, header_h - 2), (canvas.shape[1] - 1, header_h - 2), (0, 0, 0), 1)


def write_qc(path: str | Path, image: np.ndarray, calib: Calibration,
             parts: list[tuple[str, Section | None, object]], scan_name: str, source: str = "") -> list[Path]:
    """Render and write the QC picture(s) of a digitised scan; returns the files written."""
    length = calib.depth_length(image.shape[:2])
    pages = render_qc(image, calib, qc_parts(parts, calib, length), scan_name, source)
    paths = qc_page_paths(path, len(pages))
    for page, out in zip(pages, paths):
        write_png(out, page)
    return paths


def write_png(path: str | Path, rgb: np.ndarray) -> Path:
    """Write an RGB picture as PNG, whole or not at all (a reader never sees half a file)."""
    from core.common.atomic import atomic_write_bytes

    ok, png = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    if not ok:
        raise OSError(f"{path}: the PNG could not be encoded")
    atomic_write_bytes(path, png.tobytes())
    return Path(path)
