"""A calibration proposed from the scan itself: its log sections, each section's tracks, and their depth picks.

Calibrating a scan by hand is a click and a typed depth per pick and a drag per track, although both are printed
on the log. The proposal reads them:

- **Sections.** The log body is where the track grid (borders and grid lines) runs
  (``core/digitize/page/sections.py``): header, tail, the header of a repeat pass and another log body on the
  page end one stretch and start the next.
- **Tracks.** Each section's columns are parted by the lines that run on into the header's scale box or the
  footer's (``core/digitize/page/body_lines.py``); a column is a curve track (gridded, empty, an image) or not
  (the depth column, lithology, descriptions: ``core/digitize/calibrate/columns.py``). A scan whose body has no
  box beside it is read as before: tracks are runs of lines between separators
  (``core/digitize/calibrate/tracks.py``).
- **Depths.** Each section's depth columns are read with Tesseract where numbers can be (digit-sized ink, packed;
  upright or sideways as the digits lie: ``core/digitize/calibrate/depth_numbers.py``), each number placed at
  its centre along depth and snapped to the depth line it labels; the labels that agree on one straight line at
  a standard log scale become the section's picks (``core/digitize/calibrate/depth_fit.py``). Where no depth
  column gives a scale, the numbers printed inside the tracks are read. A section whose depths restart holds two
  passes; a short repeat with two printed depths borrows another section's scale.

Nothing here is silently wrong: every number read, kept or rejected, and every reason is in the proposal's
messages for the user to accept or correct; a section without picks says which picks to make by hand. Tesseract
is optional (``pip install pytesseract`` and the ``tesseract-ocr`` program); without it the sections and tracks
are still proposed and the message says how to install it. ``progress(done, total)`` is called at least every
second or so of work (a window of numbers read, a section's layout), so a caller can cancel from it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

import numpy as np

from core.digitize.calibrate.depth_fit import (
    EDGE_PX,
    DepthNumber,
    ProposedSection,
    fit_section,
    name_sections,
    place_without_lines,
    snap_to_depth_lines,
    split_passes,
)
from core.digitize.calibrate.depth_lines import depth_lines, lines_beside
from core.digitize.calibrate.tracks import along_depth_lines, propose_tracks, split_at_boxes


@dataclass
class Proposal:
    depth_axis: str
    tracks: list[tuple[float, float]] = field(default_factory=list)  # (lo, hi) across, in pixels
    separators: list[tuple[float, float]] = field(default_factory=list)  # depth columns and margins found
    numbers: list[DepthNumber] = field(default_factory=list)
    picks: list[tuple[float, float]] = field(default_factory=list)  # (pixel along depth, depth)
    rms_px: float | None = None  # of the kept numbers about their straight line
    messages: list[str] = field(default_factory=list)
    sections: list[ProposedSection] = field(default_factory=list)  # every stretch of log body found
    curves: list[dict] = field(default_factory=list)  # read from the header's scale box (scale_box.py)

    def as_dict(self) -> dict:
        return {"depth_axis": self.depth_axis, "tracks": [list(t) for t in self.tracks],
                "separators": [list(s) for s in self.separators],
                "numbers": [{"pixel": n.pixel, "value": n.value, "text": n.text, "kept": n.kept} for n in self.numbers],
                "picks": [list(p) for p in self.picks], "rms_px": self.rms_px, "messages": list(self.messages),
                "sections": [s.as_dict() for s in self.sections], "curves": [dict(c) for c in self.curves]}

    def _file_dict(self, picks, depth_unit: str, step: float) -> dict:
        """The fields a calibration file and a refusal's draft share: these picks, the curves, the tracks."""
        from core.digitize.calibrate.scale_box import changes_by_depth

        return {"version": 1, "depth_axis": self.depth_axis, "depth_unit": depth_unit,
                "depth_picks": [[round(p, 2), v] for p, v in picks], "step": step,
                "curves": changes_by_depth(self.curves, [(s.start, s.stop, s.picks) for s in self.sections], picks),
                "proposed_tracks": [[round(a, 1), round(b, 1)] for a, b in self.tracks]}

    def draft_dict(self, depth_unit: str = "FT", step: float = 0.5) -> dict | None:
        """What a refused proposal found, kept (the tracks, the sections' spans, the curves of the scale box) with
        the depth picks left empty and ``"draft"`` saying why: the user picks two depths by hand and goes on.
        Not yet a calibration (``digitize`` refuses it, naming the missing picks); None when nothing was found."""
        if not self.tracks and not self.curves:
            return None
        reason = next((s.refused for s in self.sections if s.refused), None) or "no printed depths were read"
        where = "; ".join(f"section {i + 1} ({s.start}–{s.stop})" for i, s in enumerate(self.sections))
        out = {**self._file_dict([], depth_unit, step),
               "draft": f"no depth picks proposed ({reason}): pick two depths by hand"
                        + (f" in each section: {where}" if len(self.sections) > 1 else "")}
        if len(self.sections) > 1 or (self.sections and self.sections[0].start > 0):
            out["sections"] = [{"kind": s.kind, "span": [s.start, s.stop],
                                **({"refused": s.refused} if s.refused else {})} for s in self.sections]
        return out

    def calibration_dict(self, depth_unit: str = "FT", step: float = 0.5) -> dict | None:
        """A draft calibration (version 1): the main section's picks, the sections with picks of their own (log
        body only: header and tail are no section), the curves read from the scale box (the user checks them and
        adds what it did not print or could not be read), and the proposed tracks under ``proposed_tracks`` for
        the app to offer; None without picks."""
        if len(self.picks) < 2:
            return None
        out = self._file_dict(self.picks, depth_unit, step)
        valid = [s for s in self.sections if len(s.picks) >= 2]
        if valid:
            out["sections"] = [{"kind": s.kind, "span": [s.start, s.stop],
                                "depth_picks": [[round(p, 2), v] for p, v in s.picks]} for s in valid]
        return out


# -- depths ---------------------------------------------------------------------------------

MIN_DPI, MAX_DPI = 50.0, 2400.0  # a resolution tag outside these is no scanner's (a TIFF that says 1 dpi)
PAGE_WIDTH_IN = 8.5  # a log's page across, for sizes where the file gives no resolution
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


def ocr_available() -> str | None:
    """None when Tesseract can be used, else how to install it."""
    try:
        import pytesseract  # noqa: F401
    except ImportError:
        return "reading printed depths needs pytesseract and Tesseract: pip install pytesseract, and install " \
               "the tesseract-ocr program (Debian/Ubuntu: apt install tesseract-ocr)"
    if shutil.which("tesseract") is None:
        return "reading printed depths needs the tesseract-ocr program (Debian/Ubuntu: apt install tesseract-ocr; " \
               "Windows and macOS: see github.com/tesseract-ocr/tesseract)"
    return None


def _sane_dpi(dpi: float | None) -> float | None:
    return float(dpi) if dpi and MIN_DPI <= dpi <= MAX_DPI else None


def propose(image: np.ndarray, depth_axis: str | None = None, ocr: bool = True, dpi: float | None = None,
            depth_unit: str = "FT", progress=None, rgb: np.ndarray | None = None) -> Proposal:
    """Propose the log sections of a scan (grey, in its own frame), each with its tracks and depth picks (``dpi``
    its resolution along depth, for the scale check; ``rgb`` its colour pixels on a colour print, for the ink
    colours of the curves read from the scale box). ``progress(done, total)``: per cent of the work."""

    def report(share: float) -> None:
        if progress:
            progress(int(round(100 * min(1.0, share))), 100)

    from core.digitize.page.frame import to_canonical
    from core.digitize.page.ink import ink_map
    from core.digitize.page.sections import find_all_sections

    axis = depth_axis or ("y" if image.shape[0] >= image.shape[1] else "x")
    dpi = _sane_dpi(dpi)
    canon = to_canonical(image, axis)
    prop = Proposal(axis)
    report(0.0)
    darkness = _beating(lambda: ink_map(canon), lambda: report(0.0))
    report(0.04)
    picture_lines = _beating(lambda: along_depth_lines(canon, darkness), lambda: report(0.04))
    report(0.08)
    def lines_of(a: int, b: int) -> list[float]:
        return [r for r, _ in along_depth_lines(canon[:, a:b], darkness[:, a:b])]

    spans = find_all_sections(darkness, [r for r, _ in picture_lines], lines_of) if picture_lines else []
    report(0.1)
    # sizes across (a track's least width, a digit's) need a resolution: where the file gives none, the page's
    # width says it (the archive's 36 scans are 8.25-10.2 in across)
    size_dpi = dpi or canon.shape[0] / PAGE_WIDTH_IN
    prop.sections = _lay_out(canon, darkness, spans, picture_lines, size_dpi, lambda k, n: report(0.1 + 0.15 * k / n))
    longest = max(prop.sections, key=lambda s: s.stop - s.start)
    prop.tracks = list(longest.tracks)
    prop.separators = [tuple(c["cols"]) for c in longest.columns]
    if prop.tracks:
        prop.messages.append(f"{len(prop.tracks)} track(s) in the log body: "
                             + ", ".join(f"{a:.0f}–{b:.0f} px" for a, b in prop.tracks))
    else:
        prop.messages.append("no track borders found (no long lines along depth): drag the tracks by hand")
    report(0.25)
    if not ocr:
        return prop
    missing = ocr_available()
    if missing:
        prop.messages.append(missing + "; pick the depths by hand meanwhile")
        return prop
    if prop.sections[0].tracks and prop.sections[0].start > 0:  # the scale box sits above the first stretch of body
        _beating(lambda: _read_box(prop, canon, darkness, dpi, rgb), lambda: report(0.25))
    report(0.3)
    _read_depths(prop, canon, darkness, dpi, size_dpi, depth_unit, lambda share: report(0.3 + 0.68 * share))
    name_sections(prop.sections)
    main = next((s for s in prop.sections if s.kind == "main"), None)
    if main is not None and main.tracks:
        prop.tracks = list(main.tracks)
    _report(prop, canon.shape[1])
    report(1.0)
    return prop


def propose_scan(scan, depth_axis: str | None = None, depth_unit: str = "FT", progress=None) -> Proposal:
    """:func:`propose` for a loaded scan (``core.io.scan.Scan``): its depth axis the long one unless given, its
    resolution along depth from the file (for the scale check), its colour pixels for the curves' inks. The
    command line's ``calibrate --propose`` and ``eval-calibration`` both read a scan this way."""
    image = scan.image
    axis = depth_axis or ("y" if image.shape[0] >= image.shape[1] else "x")
    dpi = scan.info.dpi[1 if axis == "y" else 0] if scan.info.dpi else None
    return propose(image, axis, dpi=dpi, depth_unit=depth_unit, progress=progress, rgb=scan.rgb)


HEADER_EDGE_IN = 1.0  # a stretch found in its own lines that starts this near the page's top edge is the header's
#   tables (a cement log's header printed sideways, its rules a grid): the archive's 49 labelled log bodies start
#   7.6 in and more below the top, every one under its header
HEARTBEAT_S = 0.5  # a step that reports nothing itself is waited for in beats this long, each reported


def _beating(work, beat):
    """``work()``'s result, run in a thread while this one calls ``beat()`` every :data:`HEARTBEAT_S` until it is
    done: a step that says nothing of its progress (the ink map and the lines of a 66,000-row scan, 1-4 s each; the
    scale box's reading) still lets a caller cancel from ``beat`` within a beat. A cancel leaves the step to end on
    its own (a second or two)."""
    from concurrent.futures import ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        future = pool.submit(work)
        while not wait([future], timeout=HEARTBEAT_S).done:
            beat()
        return future.result()
    finally:
        pool.shutdown(wait=False)


# -- layout ---------------------------------------------------------------------------------


def _lay_out(canon: np.ndarray, darkness: np.ndarray, spans: list[tuple[tuple[int, int], bool]],
             picture_lines: list[tuple[float, float]], dpi: float | None, report) -> list[ProposedSection]:
    """One section per stretch of log body, each with its own tracks and other columns: the columns its framing
    lines part (``page/body_lines.py``), told apart by ``columns.py``; where no box stands beside a body to say
    which lines frame it, the runs of lines between separators (``tracks.py``). A stretch is a section where it
    holds a curve track: gridded (a header's ruled table, a tail's listing are boxes with a rule or two inside) or,
    between framing lines, an image; one found in its own lines only (``find_all_sections``'s later rounds, where
    the page's main layout did not outvote it) where it holds a gridded track and does not start at the page's top
    edge (:data:`HEADER_EDGE_IN`). A picture with no body found is one section, read whole."""
    from core.digitize.calibrate.columns import GRID_LINES, body_columns

    sections, fallback = [], []
    for k, ((a, b), later) in enumerate(spans or [((0, canon.shape[1]), False)]):
        if later and a < HEADER_EDGE_IN * (dpi or 100.0):
            report(k + 1, max(1, len(spans)))
            continue  # found in its own lines only, at the page's top edge: the header's ruled tables
        found, cols = body_columns(darkness, a, b, dpi) if spans else (None, [])
        if later and not any(c.kind == "track" and len(c.inner) >= GRID_LINES for c in cols):
            report(k + 1, max(1, len(spans)))
            continue  # found in its own lines only, and no gridded track in it: a header's or a tail's boxes
        sec = ProposedSection(a, b)
        if found is not None and found.framed and any(c.kind == "track" for c in cols):
            sec.tracks = [(c.lo, c.hi) for c in cols if c.kind == "track"]
            sec.columns = [{"kind": "other", "cols": [round(c.lo, 1), round(c.hi, 1)], "lines": len(c.inner),
                            "ink": round(c.ink, 3)} for c in cols if c.kind != "track"]
            sec.framed = holds = True
        else:
            lines = (along_depth_lines(canon[:, a:b], darkness[:, a:b]) if spans else picture_lines) or picture_lines
            tracks, separators = propose_tracks(canon[:, a:b], darkness[:, a:b], lines)
            sec.tracks = tracks
            sec.columns = [{"kind": "other", "cols": [round(x, 1), round(y, 1)]} for x, y in separators]
            holds = any(sum(lo < r < hi for r, _ in lines) >= GRID_LINES for lo, hi in tracks)
        (sections if holds else fallback).append(sec)
        report(k + 1, max(1, len(spans)))
    sections = sections or [s for s in fallback if s.tracks]
    if not sections:
        return [ProposedSection(0, canon.shape[1])]
    return sorted(sections, key=lambda s: s.start)


def _read_box(prop: Proposal, canon: np.ndarray, darkness: np.ndarray, dpi: float | None,
              rgb: np.ndarray | None) -> None:
    """The curves of the scale boxes above the sections and the scales printed in the log body
    (``core/digitize/calibrate/scale_box.py: read_scales``, each section's box read against its own tracks;
    ``rgb``: the scan's colour pixels, in its own frame, for the pens' inks), and the first section's tracks split
    where a box ends on a line inside one (``tracks.split_at_boxes``) unless its framing lines parted them
    already (a box's cells over the sectors of a cement log's image track end on its sector lines: the framed
    tracks were right, the split ones not); in place."""
    from core.digitize.calibrate.scale_box import read_scales

    first = prop.sections[0]
    # upright, as the boxes are read: a tall scan's rows are already depth down, a wide one's columns are turned
    upright_rgb = None if rgb is None else rgb if prop.depth_axis == "y" else rgb.swapaxes(0, 1)
    prop.curves, said = read_scales(canon.T, upright_rgb, first.tracks, [(s.start, s.stop) for s in prop.sections],
                                    dpi, section_tracks=[s.tracks for s in prop.sections])
    prop.messages += said
    if first.framed:  # its tracks are already parted by the lines that run on into its box
        return
    lines = [r for r, _ in along_depth_lines(canon[:, first.start : first.stop],
                                             darkness[:, first.start : first.stop])]
    split = split_at_boxes(first.tracks, [tuple(c["track"]) for c in prop.curves], lines)
    if len(split) > len(first.tracks):
        prop.messages.append("tracks split where a scale box ends on a line inside them: "
                             + ", ".join(f"{a:.0f}–{b:.0f} px" for a, b in split))
        same = prop.tracks == first.tracks
        first.tracks = split
        if same:
            prop.tracks = list(split)


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


def _read_depths(prop: Proposal, canon: np.ndarray, darkness: np.ndarray, dpi: float | None, size_dpi: float,
                 depth_unit: str, report) -> None:
    """The printed depths of every section, read where they can be, and the sections split and fitted to them (in
    place). Each section reads its depth columns the way their digits lie (upright or turned), then the other
    way, and, where neither gives a depth scale, the numbers printed inside its tracks, the narrowest track
    first and track by track until they do (:data:`TRACK_READING_MPX` at most, over the whole scan: a mud log's
    tracks hold 50 megapixels of curves and text to read, minutes). Its numbers go onto the depth lines they
    label; a section without depth lines (a compressed summary log) places them as the page's other sections'
    numbers stand to their lines (a print sets its labels one way: centred on their line, or on it: then the
    undrawn line is at their glyphs' foot; ``depth_fit.place_without_lines``). A section left without three
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


def _report(prop: Proposal, length: int) -> None:
    """The proposal's picks (the main section's) and a message per section: what was read, kept, refused."""
    unit_rows = "rows" if prop.depth_axis == "y" else "columns"
    for i, sec in enumerate(prop.sections):
        where = f"section {i + 1} ({unit_rows} {sec.start}–{sec.stop})"
        if sec.picks:
            kept = [n for n in prop.numbers if n.kept and sec.start - EDGE_PX <= n.pixel < sec.stop + EDGE_PX]
            prop.messages.append(f"{where}, {sec.kind}: {len(sec.picks)} printed depths agree "
                                 f"({kept[0].text}–{kept[-1].text}, {sec.rms_px:.1f} px RMS about a straight line)")
        else:
            prop.messages.append(f"{where}: no depth picks ({sec.refused}): pick two depths by hand there")
    header = prop.sections[0].start if prop.sections else 0
    tail = length - prop.sections[-1].stop if prop.sections else 0
    if prop.sections and (header > 0 or tail > 0):
        prop.messages.append(f"not log: {header} {unit_rows} of header above the first section and {tail} of tail "
                             "below the last")
    main = next((s for s in prop.sections if s.kind == "main" and s.picks), None)
    if main is None:
        prop.messages.append("no section has printed depths that make a plausible depth scale: pick the depths "
                             "by hand")
        for n in prop.numbers:
            n.kept = False
        return
    prop.picks, prop.rms_px = list(main.picks), main.rms_px
    rejected = [n for n in prop.numbers if not n.kept]
    if rejected:
        prop.messages.append(f"rejected {len(rejected)} number(s) outside every section's depth scale (misreads, "
                             "header text, table entries): " + ", ".join(f"{n.text} at {n.pixel:.0f} px"
                                                                          for n in rejected[:10])
                             + (" …" if len(rejected) > 10 else ""))
