"""A calibration proposed from the scan itself: track bounds from its grid, depth picks from its printed depths.

Calibrating a scan by hand is a click and a typed depth per pick and a drag
per track, although both are printed on the log. The proposal reads them:

- **Tracks.** Runs of lines along depth between separators (the depth
  column, margins): ``core/digitize/calibrate/tracks.py``.
- **Sections.** The log body is where the track grid (borders and grid lines) runs
  (``core/digitize/page/sections.py``): header, tail and the header of a
  repeat pass end one stretch and start the next. Each section reads the
  depth column of its own track layout.
- **Depths.** The separators that carry ink are read with Tesseract (digits
  only, sparse text, in windows along depth: ``core/digitize/calibrate/depth_numbers.py``),
  each number placed at its box's centre along depth (depth numbers are
  printed centred on their depth line) and snapped to that line; the numbers
  that agree on one straight line at a standard log scale become the
  section's picks (``core/digitize/calibrate/depth_fit.py``). Where no section passes
  upright, the numbers are read turned by 90° (mud logs).

Nothing here is silently wrong: every number read, kept or rejected, and
every reason is in the proposal's messages for the user to accept or correct.
Tesseract is optional (``pip install pytesseract`` and the ``tesseract-ocr``
program); without it the tracks are still proposed and the message says how
to install it.
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
    snap_to_depth_lines,
    split_passes,
)
from core.digitize.calibrate.tracks import (
    SEPARATOR_INK,
    along_depth_lines,
    body_lines,
    ink_share,
    propose_tracks,
    split_at_boxes,
)
from core.digitize.page.grid import detect_grid


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
        out = {**self._file_dict([], depth_unit, step),
               "draft": f"no depth picks proposed ({reason}): pick two depths by hand"}
        if len(self.sections) > 1 or (self.sections and self.sections[0].start > 0):
            out["sections"] = [{"kind": s.kind, "span": [s.start, s.stop]} for s in self.sections]
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


def depth_line_positions(canon: np.ndarray, tracks: list[tuple[float, float]],
                         dark: np.ndarray | None = None) -> np.ndarray:
    """Centres (columns, canonical frame) of the lines drawn across the tracks: the depth lines. ``dark``: the
    image's ink map, when already computed."""
    bands = [(int(a) + 2, int(b) - 1) for a, b in tracks] or None
    cols = detect_grid(canon if dark is None else None, bands, dark).line_cols(0.5)
    if cols.size == 0:
        return np.zeros(0)
    groups = np.split(cols, np.flatnonzero(np.diff(cols) > 1) + 1)
    return np.array([g.mean() for g in groups])


def propose(image: np.ndarray, depth_axis: str | None = None, ocr: bool = True, dpi: float | None = None,
            depth_unit: str = "FT", progress=None, rgb: np.ndarray | None = None) -> Proposal:
    """Propose tracks, log sections and their depth picks for a scan (grey, in its own frame; ``dpi`` its
    resolution along depth, for the scale check; ``rgb`` its colour pixels on a colour print, for the ink
    colours of the curves read from the scale box). ``progress(done, total)``: per cent of the work, reported as
    the tracks, the scale box and each window of printed depths are read."""

    def report(share: float) -> None:
        if progress:
            progress(int(round(100 * min(1.0, share))), 100)

    from core.digitize.page.frame import to_canonical
    from core.digitize.page.ink import ink_map
    from core.digitize.page.sections import find_sections

    axis = depth_axis or ("y" if image.shape[0] >= image.shape[1] else "x")
    canon = to_canonical(image, axis)
    prop = Proposal(axis)
    darkness = ink_map(canon)
    picture_lines = along_depth_lines(canon, darkness)
    spans = find_sections(darkness, [r for r, _ in picture_lines]) if picture_lines else []
    found = body_lines(canon, darkness, picture_lines, spans)
    prop.tracks, prop.separators = propose_tracks(canon, darkness, found)
    if prop.tracks:
        prop.messages.append(f"{len(prop.tracks)} track(s) between the long lines along depth: "
                             + ", ".join(f"{a:.0f}–{b:.0f} px" for a, b in prop.tracks))
    else:
        prop.messages.append("no track borders found (no long lines along depth): drag the tracks by hand")
    prop.sections = [ProposedSection(a, b) for a, b in spans if prop.tracks] or [ProposedSection(0, canon.shape[1])]
    report(0.15)
    if not ocr:
        return prop
    missing = ocr_available()
    if missing:
        prop.messages.append(missing + "; pick the depths by hand meanwhile")
        return prop
    # the depth lines are looked for across the runs of the picture's lines, not across the tracks that the body's
    # lines or a scale box split them into: one more band is one more chance of a line that is none (iqa_01146: a
    # pick drawn 5.5 px off its line; the mud logs' lithology column, whose colour blocks have edges across)
    line_tracks = list(prop.tracks) if found is picture_lines else propose_tracks(canon, darkness, picture_lines)[0]
    if prop.tracks and prop.sections[0].start > 0:  # the scale box sits above the first stretch of log body
        _read_box(prop, canon, [r for r, _ in found], dpi, rgb)
    report(0.3)
    if not _read_depths(prop, canon, darkness, line_tracks, dpi, depth_unit, report):
        return prop
    name_sections(prop.sections)
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


def _read_depths(prop: Proposal, canon: np.ndarray, darkness: np.ndarray, line_tracks: list[tuple[float, float]],
                 dpi: float | None, depth_unit: str, report) -> bool:
    """The printed depths, read where the scan prints them, and its sections split and fitted to them (in place):
    upright in the depth columns; turned along them where that gives no depth scale (mud logs print them so);
    inside the tracks where neither does (a log with no depth column prints its depths in a track, on the grid's
    depth lines). The first reading's numbers and reasons stand unless a later one gives depths. False when there
    is no depth column and the tracks print no depths either (said in the messages)."""
    from core.digitize.calibrate.depth_numbers import read_numbers

    depth_lines = depth_line_positions(canon, line_tracks, darkness)
    columns = _depth_columns(prop, canon, darkness)

    def read(strips, sideways: bool, lo: float, hi: float) -> tuple[list[DepthNumber], list[ProposedSection]]:
        def strip_progress(k: int):
            return lambda i, n: report(lo + (hi - lo) * (k + i / max(1, n)) / len(strips))

        numbers = [DepthNumber(start + centre, float(text), text) for k, (start, strip) in enumerate(strips)
                   for centre, text in read_numbers(strip, sideways, strip_progress(k))]
        numbers.sort(key=lambda n: n.pixel)
        snap_to_depth_lines(numbers, depth_lines)
        # a section whose depths restart holds two passes (the grid running on between them): one section each
        sections = [part for s in prop.sections for part in split_passes(ProposedSection(s.start, s.stop), numbers)]
        for sec in sections:
            fit_section(sec, numbers, dpi, depth_unit)
        return numbers, sections

    readings = [(lambda: columns, False, 0.3, 0.65, None),
                (lambda: columns, True, 0.65, 0.9, "the depths are printed turned along the depth column: read sideways"),
                (lambda: _track_strips(prop, canon), False, 0.9, 0.99,
                 "no depth column prints the depths: read inside the tracks")]
    first = None
    for strips, sideways, lo, hi, said in readings:
        strips = strips()
        if not strips:
            continue
        numbers, sections = read(strips, sideways, lo, hi)
        first = first or (numbers, sections)
        if any(sec.picks for sec in sections):
            prop.numbers, prop.sections = numbers, sections
            if said:
                prop.messages.append(said)
            return True
    if not columns:
        prop.messages.append("no depth column found (a strip between tracks with printed numbers) and no depths "
                             "printed inside the tracks: pick the depths by hand")
        return False
    prop.numbers, prop.sections = first
    return True


def _track_strips(prop: Proposal, canon: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(first column, strip) of every track in every section, clear of its borders, turned so depth runs down its
    rows: where a log with no depth column prints its depths."""
    return [(sec.start, np.ascontiguousarray(canon[int(np.ceil(lo)) + 3 : int(np.floor(hi)) - 2,
                                                   sec.start : sec.stop].T))
            for sec in prop.sections for lo, hi in prop.tracks if hi - lo > 8]


def _read_box(prop: Proposal, canon: np.ndarray, lines: list[float], dpi: float | None, rgb: np.ndarray | None
              ) -> None:
    """The curves of the scale boxes above the sections and the scales printed in the log body
    (``core/digitize/calibrate/scale_box.py: read_scales``; ``rgb``: the scan's colour pixels, in its own frame,
    for the pens' inks), and the tracks split where a box ends on a line inside one
    (``track_finder.split_at_boxes``); in place."""
    from core.digitize.calibrate.scale_box import read_scales

    # upright, as the boxes are read: a tall scan's rows are already depth down, a wide one's columns are turned
    upright_rgb = None if rgb is None else rgb if prop.depth_axis == "y" else rgb.swapaxes(0, 1)
    prop.curves, said = read_scales(canon.T, upright_rgb, prop.tracks, [(s.start, s.stop) for s in prop.sections],
                                    dpi)
    prop.messages += said
    split = split_at_boxes(prop.tracks, [tuple(c["track"]) for c in prop.curves], lines)
    if len(split) > len(prop.tracks):
        prop.messages.append("tracks split where a scale box ends on a line inside them: "
                             + ", ".join(f"{a:.0f}–{b:.0f} px" for a, b in split))
        prop.tracks = split


def _depth_columns(prop: Proposal, canon: np.ndarray, darkness: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(first column, strip) of every depth column with ink, per section, each strip turned so depth runs down
    its rows. Each section reads its own depth column: a repeat pass or another log on the scan may lay its
    tracks out differently from the rest."""
    dark = darkness > 0.5
    strips: list[tuple[int, np.ndarray]] = []
    for sec in prop.sections:
        part = dark[:, sec.start : sec.stop]
        _, separators = (propose_tracks(canon[:, sec.start : sec.stop], darkness[:, sec.start : sec.stop])
                         if len(prop.sections) > 1 else (prop.tracks, prop.separators))
        for a, b in separators:
            if ink_share(part, a, b) >= SEPARATOR_INK[0]:
                lo, hi = int(max(0, np.floor(a) + 3)), int(min(canon.shape[0], np.ceil(b) - 2))
                # depth down the rows, as printed on a tall log
                strips.append((sec.start, np.ascontiguousarray(canon[lo:hi, sec.start : sec.stop].T)))
    return strips


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
            prop.messages.append(f"{where}: no depth picks ({sec.refused})")
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
