"""A calibration proposed from the scan itself: track bounds from its grid, depth picks from its printed depths.

Calibrating a scan by hand is a click and a typed depth per pick and a drag
per track, although both are printed on the log. The proposal reads them:

- **Tracks.** Runs of lines along depth between separators (the depth
  column, margins): ``core/digitize/track_finder.py``.
- **Sections.** The log body is where the track grid (borders and grid lines) runs
  (``core/digitize/log_sections.py``): header, tail and the header of a
  repeat pass end one stretch and start the next. Each section reads the
  depth column of its own track layout.
- **Depths.** The separators that carry ink are read with Tesseract (digits
  only, sparse text, in windows along depth: ``core/digitize/depth_numbers.py``),
  each number placed at its box's centre along depth (depth numbers are
  printed centred on their depth line) and snapped to that line. Per section,
  numbers that fit no straight line with the others are rejected by name:
  misreads, header text, table entries. A straight line through the rest
  (RANSAC, then least squares) is then checked for sanity (``_fit_section``):
  depths increasing down the log, a standard log scale at the scan's dpi,
  labels that step by a round interval, spread over a quarter of the section
  at least. Where no section passes upright, the numbers are read turned by
  90° (mud logs). The picks are the kept numbers as printed, never
  extrapolated: the section's span says where the log runs. The first section
  with depths is the main pass; a later one whose depths repeat its range is a
  repeat pass.

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

from .grid import detect_grid
from .track_finder import SEPARATOR_INK, along_depth_lines, ink_share, propose_tracks

FIT_TOLERANCE_PX = 6.0  # a number this far (in pixels along depth) from the line of the others is rejected
MIN_NUMBERS = 3  # numbers that must agree before picks are proposed
SNAP_PX = 8.0  # a number is placed on the depth line it is printed on, when one lies this close
# the depth scales logs are printed at (1:240 is 5 in per 100 ft, 1:600 2 in, 1:1200 1 in): a proposed scale
# must be one of them at the scan's resolution, within the stretch of paper and scanner
STANDARD_SCALES = (200, 240, 500, 600, 1000, 1200)
SCALE_TOLERANCE = 0.06
PX_PER_FT_BOUNDS = (0.2, 200.0)  # without a resolution: from 1:1200 at 20 dpi to 1:200 at 3,000 dpi
MIN_SPREAD = 0.25  # the kept numbers span at least this share of their section's length
LABEL_STEP_FT = 5  # printed depths step by a round interval (10, 50, 100 ft): their differences share a factor
MAX_TOLERANCE_PX = 24.0  # the drift allowance stops here: a misread 100 px off a line is no drift
EDGE_PX = 40  # a number printed this close outside a section's border lines still belongs to it


@dataclass
class DepthNumber:
    pixel: float  # along depth, at the centre of the printed number
    value: float
    text: str
    kept: bool = False


@dataclass
class ProposedSection:
    """A stretch of log body (canonical columns [start, stop)) and what its printed depths gave."""

    start: int
    stop: int
    kind: str = "log"  # "main" (the first with depths), "repeat" (its depths repeat a main's), "log"
    picks: list[tuple[float, float]] = field(default_factory=list)
    rms_px: float | None = None
    refused: str | None = None  # why no picks were proposed for it

    def as_dict(self) -> dict:
        return {"kind": self.kind, "span": [self.start, self.stop], "picks": [list(p) for p in self.picks],
                "rms_px": self.rms_px, "refused": self.refused}


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
        return {"version": 1, "depth_axis": self.depth_axis, "depth_unit": depth_unit,
                "depth_picks": [[round(p, 2), v] for p, v in picks], "step": step,
                "curves": [dict(c) for c in self.curves],
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


def fit_numbers(numbers: list[DepthNumber], tolerance_px: float = FIT_TOLERANCE_PX) -> float | None:
    """Mark the numbers that lie on one straight line depth = a + b · pixel (the most of them, RANSAC over
    every pair, then least squares), in place; returns the RMS of the kept ones about it in pixels."""
    fit = fit_line(numbers, tolerance_px)
    return None if fit is None else fit[2]


def fit_line(numbers: list[DepthNumber], tolerance_px: float = FIT_TOLERANCE_PX
             ) -> tuple[float, float, float] | None:
    """:func:`fit_numbers`, returning (a, b, RMS in px) of depth = a + b · pixel through the kept numbers."""
    if len(numbers) < 2:
        return None
    px = np.array([n.pixel for n in numbers])
    val = np.array([n.value for n in numbers])
    best: tuple[int, float, np.ndarray] | None = None
    for i in range(len(numbers)):
        for j in range(i + 1, len(numbers)):
            if px[j] == px[i] or val[j] == val[i]:
                continue
            b = (val[j] - val[i]) / (px[j] - px[i])
            miss_px = np.abs(px - (px[i] + (val - val[i]) / b))  # how far each number is from the line, in px
            inl = miss_px <= tolerance_px
            score = (int(inl.sum()), -float(np.sum(miss_px[inl] ** 2)))
            if best is None or score > best[:2]:
                best = (score[0], score[1], inl)
    if best is None or best[0] < 2:
        return None
    inl = best[2]
    b, a = np.polyfit(px[inl], val[inl], 1)
    resid_px = (px[inl] - (val[inl] - a) / b)
    for n, k in zip(numbers, inl):
        n.kept = bool(k)
    return float(a), float(b), float(np.sqrt(np.mean(resid_px ** 2)))


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


def _snap_to_depth_lines(numbers: list[DepthNumber], lines: np.ndarray) -> None:
    """Move each number onto the depth line (``depth_line_positions``) it is printed on (in place): a printed
    depth is centred on its line, and the line is a sharper mark than the box OCR draws around the digits."""
    if lines.size == 0:
        return
    for n in numbers:
        i = int(np.argmin(np.abs(lines - n.pixel)))
        if abs(lines[i] - n.pixel) <= SNAP_PX:
            n.pixel = float(lines[i])


def _monotonic(picks: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Picks whose depths change one way along the pixels (the calibration requires it): where two numbers
    break the order (a misread that still fell near the line), the one off the majority's direction goes."""
    if len(picks) < 2:
        return picks
    picks = sorted(picks)
    direction = np.sign(picks[-1][1] - picks[0][1]) or 1.0
    out = [picks[0]]
    for px, v in picks[1:]:
        if px > out[-1][0] and (v - out[-1][1]) * direction > 0:
            out.append((px, v))
    return out


def scale_check(px_per_unit: float, dpi: float | None, unit: str = "FT") -> str | None:
    """None when ``px_per_unit`` is a standard log scale at ``dpi`` (any resolution: a physical bound), else
    why not."""
    per_ft = px_per_unit * (0.3048 if unit == "M" else 1.0)
    if dpi:
        inch_per_unit = 12.0 if unit == "FT" else 1.0 / 0.0254
        near = [r for r in STANDARD_SCALES if abs(px_per_unit / (dpi * inch_per_unit / r) - 1.0) <= SCALE_TOLERANCE]
        if near:
            return None
        return (f"{px_per_unit:.3g} px per {unit.lower()} is no standard depth scale at {dpi:.0f} dpi (1:"
                + ", 1:".join(str(r) for r in STANDARD_SCALES) + " would be "
                + ", ".join(f"{dpi * inch_per_unit / r:.3g}" for r in STANDARD_SCALES) + ")")
    lo, hi = PX_PER_FT_BOUNDS
    if lo <= per_ft <= hi:
        return None
    return f"{per_ft:.3g} px per ft is no physical depth scale (between {lo:g} and {hi:g} at any resolution)"


def _fit_section(sec: ProposedSection, numbers: list[DepthNumber], dpi: float | None, unit: str) -> None:
    """Picks for one section from the numbers printed in it, or the reason there are none (in place)."""
    mine = [n for n in numbers if sec.start - EDGE_PX <= n.pixel < sec.stop + EDGE_PX]
    length = sec.stop - sec.start
    if len(mine) < MIN_NUMBERS:
        sec.refused = f"{len(mine)} number(s) read in it, {MIN_NUMBERS} needed"
        return
    extent = mine[-1].pixel - mine[0].pixel
    # a paper-speed drift bends a long log's scale a little: the tolerance grows with the span read
    tolerance = max(FIT_TOLERANCE_PX, min(MAX_TOLERANCE_PX, 0.003 * extent))
    fit = fit_line(mine, tolerance)
    kept = [n for n in mine if n.kept]
    if unit == "FT" and fit is not None:
        # printed depths in feet step by a round interval: a misread that fell near the line (99 among 200 …
        # 600 on a casing log vetoed the lot through the step test below) leaves the consensus, the rest refit
        odd = [n for n in kept if int(round(n.value)) % LABEL_STEP_FT]
        if odd and len(kept) - len(odd) >= MIN_NUMBERS:
            for n in odd:
                n.kept = False
            fit = fit_line([n for n in kept if n.kept], tolerance)
            kept = [n for n in mine if n.kept]
    shown = ", ".join(f"{n.text} at {n.pixel:.0f}" for n in mine[:6]) + (" …" if len(mine) > 6 else "")
    if fit is None or len(kept) < MIN_NUMBERS:
        sec.refused = f"no {MIN_NUMBERS} of its {len(mine)} numbers agree on a depth scale ({shown})"
        for n in mine:
            n.kept = False
        return
    _, b, rms = fit
    reasons = []
    if b <= 0:
        reasons.append(f"its depths decrease down the log ({kept[0].text} above {kept[-1].text})")
    why = scale_check(1.0 / abs(b), dpi, unit)
    if why:
        reasons.append(why)
    step = int(np.gcd.reduce(np.abs(np.diff([int(round(n.value)) for n in kept]))))
    if unit == "FT" and step < LABEL_STEP_FT:
        reasons.append(f"the numbers that agree ({', '.join(n.text for n in kept[:6])}) are no depth labels: printed "
                       f"depths step by a round interval, these by {step}")
    spread = (kept[-1].pixel - kept[0].pixel) / max(1, length)
    if spread < MIN_SPREAD:
        reasons.append(f"the numbers that agree ({kept[0].text}–{kept[-1].text}) span {spread:.0%} of it, "
                       f"under {MIN_SPREAD:.0%}")
    if reasons:
        sec.refused = "; ".join(reasons)
        for n in mine:
            n.kept = False
        return
    sec.picks = [(float(p), float(round(v, 3))) for p, v in _monotonic([(n.pixel, n.value) for n in kept])]
    sec.rms_px = rms


def split_passes(sec: ProposedSection, numbers: list[DepthNumber]) -> list[ProposedSection]:
    """A section whose printed depths restart (a repeat pass logged over the main pass's depths, the grid running
    on between them) as one section per pass, split half-way between the last number before the restart and
    the first after it. A restart is a step back of more than one label interval after which the numbers climb
    again; it splits only where each side has its own straight line of depths (``fit_line``) and one line does
    not hold them all, so one misread (a 90 among 800 … 950) splits nothing."""
    mine = sorted((n for n in numbers if sec.start - EDGE_PX <= n.pixel < sec.stop + EDGE_PX), key=lambda n: n.pixel)
    values = np.array([n.value for n in mine])

    def agreeing(part: list[DepthNumber]) -> int:  # how many of ``part`` one straight line holds (copies: no marks)
        probe = [DepthNumber(n.pixel, n.value, n.text) for n in part]
        return sum(n.kept for n in probe) if fit_line(probe) is not None else 0

    for i in range(MIN_NUMBERS - 1, len(mine) - MIN_NUMBERS):
        if values[i + 1] >= values[i] - LABEL_STEP_FT or not np.all(np.diff(values[i + 1 : i + 1 + MIN_NUMBERS]) > 0):
            continue
        if min(agreeing(mine[: i + 1]), agreeing(mine[i + 1 :])) < MIN_NUMBERS or agreeing(mine) >= 0.8 * len(mine):
            continue
        cut = int(round((mine[i].pixel + mine[i + 1].pixel) / 2))
        return [ProposedSection(sec.start, cut), *split_passes(ProposedSection(cut, sec.stop), numbers)]
    return [sec]


def _name_sections(sections: list[ProposedSection]) -> None:
    """The first section with depths is the main pass; a later one whose depths lie within a main pass's is a
    repeat; any other is a log of its own (in place)."""
    mains: list[tuple[float, float]] = []
    for sec in sections:
        if not sec.picks:
            continue
        lo, hi = sec.picks[0][1], sec.picks[-1][1]
        if not mains:
            sec.kind = "main"
            mains.append((lo, hi))
        elif any(lo < m_hi and hi > m_lo for m_lo, m_hi in mains):
            sec.kind = "repeat"
        else:
            sec.kind = "log"


def propose(image: np.ndarray, depth_axis: str | None = None, ocr: bool = True, dpi: float | None = None,
            depth_unit: str = "FT", progress=None) -> Proposal:
    """Propose tracks, log sections and their depth picks for a scan (grey, in its own frame; ``dpi`` its
    resolution along depth, for the scale check). ``progress(done, total)``: per cent of the work, reported as
    the tracks, the scale box and each window of printed depths are read."""

    def report(share: float) -> None:
        if progress:
            progress(int(round(100 * min(1.0, share))), 100)

    from .classical import ink_map
    from .depth_numbers import read_numbers
    from .frame import to_canonical
    from .log_sections import find_sections

    axis = depth_axis or ("y" if image.shape[0] >= image.shape[1] else "x")
    canon = to_canonical(image, axis)
    prop = Proposal(axis)
    darkness = ink_map(canon)
    found = along_depth_lines(canon, darkness)
    prop.tracks, prop.separators = propose_tracks(canon, darkness, found)
    if prop.tracks:
        prop.messages.append(f"{len(prop.tracks)} track(s) between the long lines along depth: "
                             + ", ".join(f"{a:.0f}–{b:.0f} px" for a, b in prop.tracks))
    else:
        prop.messages.append("no track borders found (no long lines along depth): drag the tracks by hand")
    dark = darkness > 0.5
    spans = find_sections(darkness, [r for r, _ in found]) if prop.tracks else []
    prop.sections = [ProposedSection(a, b) for a, b in spans] or [ProposedSection(0, canon.shape[1])]
    report(0.15)
    if not ocr:
        return prop
    missing = ocr_available()
    if missing:
        prop.messages.append(missing + "; pick the depths by hand meanwhile")
        return prop
    if prop.tracks and prop.sections[0].start > 0:  # the scale box sits above the first stretch of log body
        from .scale_box import read_scale_box

        prop.curves, said = read_scale_box(canon, prop.tracks, prop.sections[0].start, dpi)
        prop.messages.append(said)
    report(0.3)
    # each section reads its own depth column: a repeat pass or another log on the scan may lay its tracks out
    # differently from the rest
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
    if not strips:
        prop.messages.append("no depth column found (a strip between tracks with printed numbers): "
                             "pick the depths by hand")
        return prop
    depth_lines = depth_line_positions(canon, prop.tracks, darkness)

    def read(sideways: bool) -> tuple[list[DepthNumber], list[ProposedSection]]:
        lo, hi = (0.65, 0.95) if sideways else (0.3, 0.65)  # the sideways reading is the fallback's share

        def strip_progress(k: int):
            return lambda i, n: report(lo + (hi - lo) * (k + i / max(1, n)) / len(strips))

        numbers = [DepthNumber(start + centre, float(text), text) for k, (start, strip) in enumerate(strips)
                   for centre, text in read_numbers(strip, sideways, strip_progress(k))]
        numbers.sort(key=lambda n: n.pixel)
        _snap_to_depth_lines(numbers, depth_lines)
        # a section whose depths restart holds two passes (the grid running on between them): one section each
        sections = [part for s in prop.sections for part in split_passes(ProposedSection(s.start, s.stop), numbers)]
        for sec in sections:
            _fit_section(sec, numbers, dpi, depth_unit)
        return numbers, sections

    prop.numbers, prop.sections = read(False)
    if not any(sec.picks for sec in prop.sections):
        # mud logs print their depths turned along the depth column; the upright reading's reasons stand
        # unless the sideways one gives depths
        numbers, sections = read(True)
        if any(sec.picks for sec in sections):
            prop.numbers, prop.sections = numbers, sections
            prop.messages.append("the depths are printed turned along the depth column: read sideways")
    _name_sections(prop.sections)
    _report(prop, canon.shape[1])
    report(1.0)
    return prop


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
