"""Printed depth numbers to depth picks: the numbers that agree on one straight line at a standard log scale.

Per section, numbers that fit no straight line with the others are rejected by name: misreads, header text,
table entries, a description's numbers. The line that holds the most labels (RANSAC over neighbouring pairs,
then least squares) at a plausible scale gives the picks (:func:`fit_section`): depths increasing down the log,
a standard log scale at the scan's dpi, labels a round number of feet, spread over a quarter of the section at
least. A section whose depths restart is two passes (:func:`split_passes`: lines of labels taken one by one; a
straight run of misreads is not); the first with depths is the main pass, a later one that repeats its range a
repeat pass (:func:`name_sections`). A short repeat that prints two depths borrows the main pass's scale to
check them. The picks are the kept numbers as printed, never extrapolated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FIT_TOLERANCE_PX = 6.0  # a number this far (in pixels along depth) from the line of the others is rejected
MIN_NUMBERS = 3  # numbers that must agree before picks are proposed
SNAP_PX = 8.0  # a number is placed on the depth line it is printed on, when one lies this close
SNAP_AGREE_PX = 2.5  # ... and moves by about what the scan's other numbers moved (snap_to_depth_lines)
# the depth scales logs are printed at (1:240 is 5 in per 100 ft, 1:600 2 in, 1:1200 1 in; 1:12000, 0.1 in per
# 100 ft, the compressed summary a cement-evaluation print adds: 4 of the archive's 36 scans): a proposed scale
# must be one of them at the scan's resolution, within the stretch of paper and scanner
STANDARD_SCALES = (200, 240, 500, 600, 1000, 1200, 12000)
SCALE_TOLERANCE = 0.06
PX_PER_FT_BOUNDS = (0.2, 200.0)  # without a resolution: from 1:1200 at 20 dpi to 1:200 at 3,000 dpi
MIN_SPREAD = 0.25  # the kept numbers span at least this share of their section's length
LABEL_STEP_FT = 5  # printed depths step by a round interval (10, 50, 100 ft): their differences share a factor
MAX_TOLERANCE_PX = 24.0  # the drift allowance stops here: a misread 100 px off a line is no drift
EDGE_PX = 40  # a number printed this close outside a section's border lines still belongs to it
NEIGHBOUR_PAIRS = 16  # a line is proposed through each number and each of its next this many along depth


@dataclass
class DepthNumber:
    pixel: float  # along depth, at the centre of the printed number
    value: float
    text: str
    kept: bool = False
    across: float | None = None  # where across it was read (the centre of its strip), when known
    glyphs: tuple[float, float] | None = None  # [first, last + 1) rows along depth of its glyphs, when known


@dataclass
class ProposedSection:
    """A stretch of log body (canonical columns [start, stop)): its curve tracks and other columns across, and
    what its printed depths gave."""

    start: int
    stop: int
    kind: str = "log"  # "main" (the first with depths), "repeat" (its depths repeat a main's), "log"
    picks: list[tuple[float, float]] = field(default_factory=list)
    rms_px: float | None = None
    refused: str | None = None  # why no picks were proposed for it
    tracks: list[tuple[float, float]] = field(default_factory=list)  # its curve tracks, (lo, hi) across
    # its other columns: {"kind": "depth" | "other", "cols": [lo, hi], and where measured "lines" inside, "ink" share}
    columns: list[dict] = field(default_factory=list)
    framed: bool = False  # its tracks parted by the lines that run on into its box (page/body_lines.py)

    def with_span(self, start: int, stop: int) -> ProposedSection:
        """A part of this stretch (a pass of its own): the same layout across, no depths yet."""
        return ProposedSection(start, stop, tracks=list(self.tracks), columns=[dict(c) for c in self.columns],
                               framed=self.framed)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "span": [self.start, self.stop], "picks": [list(p) for p in self.picks],
                "rms_px": self.rms_px, "refused": self.refused,
                "tracks": [[round(float(a), 1), round(float(b), 1)] for a, b in self.tracks],
                "columns": [dict(c) for c in self.columns]}


def fit_numbers(numbers: list[DepthNumber], tolerance_px: float = FIT_TOLERANCE_PX) -> float | None:
    """Mark the numbers that lie on one straight line depth = a + b · pixel (the most of them, RANSAC over
    neighbouring pairs, then least squares), in place; returns the RMS of the kept ones about it in pixels."""
    fit = fit_line(numbers, tolerance_px)
    return None if fit is None else fit[2]


def _pairs(n: int, reach: int = NEIGHBOUR_PAIRS) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), i < j ≤ i + ``reach``: each number with its next neighbours along depth."""
    i = np.repeat(np.arange(n), reach)
    j = i + np.tile(np.arange(1, reach + 1), n)
    ok = j < n
    return i[ok], j[ok]


def _best_line(px: np.ndarray, val: np.ndarray, tolerance_px: float, slope_ok=None
               ) -> tuple[np.ndarray, float, float] | None:
    """(inlier mask, a, b) of the straight line depth = a + b · pixel that holds the most numbers within
    ``tolerance_px`` (ties: the smaller squared miss), its candidates drawn through neighbouring pairs (sorted
    by pixel: the numbers of one log are printed in order along it, so any two of them next to each other, or
    with fewer than :data:`NEIGHBOUR_PAIRS` misreads between, propose its line). ``slope_ok(b)``: a filter on the
    candidates' slopes (ft per pixel). Work is pairs × numbers: a mud log's 1,245 numbers fit in a fraction of a
    second, where every pair (its n² candidates against n numbers, then again at each of n steps back) ran for
    minutes."""
    order = np.argsort(px, kind="stable")
    spx, sval = px[order], val[order]
    i, j = _pairs(len(spx))
    dp, dv = spx[j] - spx[i], sval[j] - sval[i]
    ok = (dp != 0) & (dv != 0)
    i, j = i[ok], j[ok]
    if i.size == 0:
        return None
    b = (sval[j] - sval[i]) / (spx[j] - spx[i])
    a = sval[i] - b * spx[i]
    if slope_ok is not None:
        keep = np.array([bool(slope_ok(x)) for x in b]) if b.size else np.zeros(0, bool)
        a, b = a[keep], b[keep]
        if b.size == 0:
            return None
    best_key, best = None, None
    chunk = max(1, 4_000_000 // max(1, len(px)))
    for k in range(0, b.size, chunk):
        aa, bb = a[k : k + chunk, None], b[k : k + chunk, None]
        miss = np.abs(px[None, :] - (val[None, :] - aa) / bb)
        inl = miss <= tolerance_px
        count = inl.sum(axis=1)
        sse = np.where(inl, miss ** 2, 0.0).sum(axis=1)
        m = int(np.lexsort((sse, -count))[0])
        key = (int(count[m]), -float(sse[m]))
        if best_key is None or key > best_key:
            best_key, best = key, (inl[m].copy(), float(aa[m, 0]), float(bb[m, 0]))
    if best is None or best_key[0] < 2:
        return None
    return best


def fit_line(numbers: list[DepthNumber], tolerance_px: float = FIT_TOLERANCE_PX, slope_ok=None
             ) -> tuple[float, float, float] | None:
    """:func:`fit_numbers`, returning (a, b, RMS in px) of depth = a + b · pixel through the kept numbers
    (least squares through the inliers of the best line); ``slope_ok`` as in :func:`_best_line`."""
    if len(numbers) < 2:
        return None
    px = np.array([n.pixel for n in numbers], np.float64)
    val = np.array([n.value for n in numbers], np.float64)
    found = _best_line(px, val, tolerance_px, slope_ok)
    if found is None:
        return None
    inl = found[0]
    b, a = np.polyfit(px[inl], val[inl], 1) if np.ptp(px[inl]) > 0 else (found[2], found[1])
    resid_px = (px[inl] - (val[inl] - a) / b)
    for n, k in zip(numbers, inl):
        n.kept = bool(k)
    return float(a), float(b), float(np.sqrt(np.mean(resid_px ** 2)))


def snap_to_depth_lines(numbers: list[DepthNumber], lines: np.ndarray, page_usual: float | None = None,
                        beside: list[np.ndarray] | None = None) -> float | None:
    """Move each number onto the depth line (``depth_lines.depth_lines``) it is printed on (in place): a printed
    depth is centred on its line, and the line is a sharper mark than the box OCR draws around the digits.

    A scan prints its labels the same way on every line, so a true snap moves a number by about what it moves
    the others (iqa_33-025-02289-0001: 3.5 px, every label). Where the nearest line lies otherwise (a grid's
    finer line, a curve's stroke taken for a line) or no line is near, the number moves by the others' median:
    on a synthetic log, 5700 and 5800 ft went 7 px either way onto finer lines, a 2.5-ft pick; on
    iqa_33-023-01135-0001 four labels read 500 px apart to the pixel went +4.5, +4.5, +4.5 and −5 px. Where too few
    of a section's numbers snap to say how it prints them (a short repeat pass's two labels), ``page_usual`` says:
    how the page's other sections' numbers moved (a page prints its labels one way); a repeat's 10600 went 5 px onto
    the 2-ft line below its own, a 1.1-ft error at 5 px per ft, where the main pass's labels moved by half a pixel.
    ``beside``: per number, the lines it may label (those of the track beside it), where not ``lines``.
    Returns this section's usual move (None where too few numbers snapped to say it): a section of the page
    without depth lines prints its labels the same way."""
    if lines.size == 0 or not numbers:
        return None
    pixels = np.array([n.pixel for n in numbers])
    near = [lines] * len(numbers) if beside is None else [b if b.size else lines for b in beside]
    nearest = np.array([ls[np.argmin(np.abs(ls - p))] for ls, p in zip(near, pixels)])
    shift = nearest - pixels
    snapped = np.abs(shift) <= SNAP_PX
    own = float(np.median(shift[snapped])) if snapped.sum() >= MIN_NUMBERS else None
    # too few snaps here to say how it prints its labels: as the page does, where a line lies near one at least
    # (none near any: no line of its own to go by, each stays where it was read); else each on its nearest line
    usual = own if own is not None else page_usual if snapped.any() else None
    for n, s, ok in zip(numbers, shift, snapped):
        agrees = ok and (usual is None or abs(s - usual) <= SNAP_AGREE_PX)
        n.pixel += float(s) if agrees else (usual or 0.0)
    return own


CENTRED_SHARE = 0.25  # numbers that moved less than this share of half a glyph onto their lines are centred on them


def place_without_lines(numbers: list[DepthNumber], moves: list[float]) -> None:
    """Place the numbers of a section that prints no depth lines (a cement print's 1:12,000 summary) as the page's
    other sections' numbers stand to their lines (in place): ``moves``, how far each of those sections' numbers
    moved onto their lines (:func:`snap_to_depth_lines`). Numbers centred on their lines moved by next to nothing:
    each number moves as they did. Numbers that sit on their lines (moved down by a good share of half a glyph) or
    hang from them (moved up) stand on the depth they label with their glyphs' foot (or head): the drawn line keeps
    a pixel or two clear of the glyphs, a gap an undrawn line does not leave, so moving by the others' move puts a
    number that much past its depth (a 1:12,000 summary's 10000 ft 2.4 px low, 32 ft at 0.075 px/ft, where its
    foot is within a pixel of where the body's ends put it). A number whose glyphs are unknown moves as the others
    did."""
    if not moves:
        return
    usual = float(np.median(moves))
    for n in numbers:
        if n.glyphs is None:
            n.pixel += usual
            continue
        head, foot = n.glyphs
        half = (foot - head) / 2.0
        if abs(usual) <= CENTRED_SHARE * half:
            n.pixel += usual
        else:  # the pixel rows' edges: the last row of ink ends half a row below its index
            n.pixel = foot - 0.5 if usual > 0 else head - 0.5


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


def _mine(sec: ProposedSection, numbers: list[DepthNumber]) -> list[DepthNumber]:
    """The numbers printed in a section (or within :data:`EDGE_PX` outside its border lines), along depth."""
    return sorted((n for n in numbers if sec.start - EDGE_PX <= n.pixel < sec.stop + EDGE_PX), key=lambda n: n.pixel)


def _labels(numbers: list[DepthNumber], unit: str) -> list[DepthNumber]:
    """The numbers that may be printed depths: in feet, a multiple of :data:`LABEL_STEP_FT` (depth lines are
    labelled every 10, 50 or 100 ft; a description's 7, 38 or 146 is no label), in metres every one."""
    if unit != "FT":
        return list(numbers)
    return [n for n in numbers if n.value == round(n.value) and int(round(n.value)) % LABEL_STEP_FT == 0]


def _tolerance(numbers: list[DepthNumber]) -> float:
    """The fit's tolerance in pixels: a paper-speed drift bends a long log's scale a little, so it grows with the
    span read (0.3 %), up to :data:`MAX_TOLERANCE_PX`."""
    extent = numbers[-1].pixel - numbers[0].pixel if numbers else 0.0
    return max(FIT_TOLERANCE_PX, min(MAX_TOLERANCE_PX, 0.003 * extent))


def _plausible_slope(dpi: float | None, unit: str):
    """A filter on a line's slope (depth per pixel): depths increasing down the log, at a standard scale."""
    return lambda b: b > 0 and scale_check(1.0 / b, dpi, unit) is None


def _reasons(kept: list[DepthNumber], b: float, dpi: float | None, unit: str, length: int) -> list[str]:
    """Why the numbers ``kept`` on a line of slope ``b`` (depth per pixel) are no depth scale of a section
    ``length`` pixels long; empty when they are one."""
    reasons = []
    if b <= 0:
        reasons.append(f"its depths decrease down the log ({kept[0].text} above {kept[-1].text})")
    why = scale_check(1.0 / abs(b), dpi, unit)
    if why:
        reasons.append(why)
    values = [int(round(n.value)) for n in kept]
    step = int(np.gcd.reduce(np.abs(np.diff(values)))) if len(values) > 1 else 0
    # every label a multiple of the round interval, not only their differences: 0, 8 and 2000 read in a track
    # (fragments of text 9 px apart, and one label) step by 8 and fell on one line by chance
    if unit == "FT" and (step < LABEL_STEP_FT or any(v % LABEL_STEP_FT for v in values)):
        reasons.append(f"the numbers that agree ({', '.join(n.text for n in kept[:6])}) are no depth labels: printed "
                       f"depths step by a round interval, these by {step}")
    spread = (kept[-1].pixel - kept[0].pixel) / max(1, length)
    if spread < MIN_SPREAD:
        reasons.append(f"the numbers that agree ({kept[0].text}–{kept[-1].text}) span {spread:.0%} of it, "
                       f"under {MIN_SPREAD:.0%}")
    return reasons


def _borrowed_line(labels: list[DepthNumber], slopes: list[float]) -> tuple[list[DepthNumber], float]:
    """The most labels (two at least) that one line of a borrowed slope holds within :data:`FIT_TOLERANCE_PX`,
    and that slope (depth per pixel): a short repeat pass prints two or three depths, and the main pass's scale
    says whether they agree."""
    best: list[DepthNumber] = []
    slope = 0.0
    for b in slopes:
        for anchor in labels:
            on = [n for n in labels if abs(n.pixel - anchor.pixel - (n.value - anchor.value) / b) <= FIT_TOLERANCE_PX]
            if len({n.value for n in on}) == len(on) and len(on) > len(best):
                best, slope = on, b
    return (best, slope) if len(best) >= 2 else ([], 0.0)


def fit_section(sec: ProposedSection, numbers: list[DepthNumber], dpi: float | None, unit: str,
                borrowed: list[float] | None = None) -> None:
    """Picks for one section from the numbers printed in it, or the reason there are none (in place).

    The line that holds the most labels at a plausible scale (depths increasing down the log, a standard scale at
    the scan's dpi, labels a round number of feet) gives the picks, if it spans a quarter of the section. Where no
    three labels agree, two do when they lie on the line of a scale ``borrowed`` from another section of the scan
    (its depth per pixel: a repeat pass printed at the main pass's scale). A refusal names what the numbers that
    agree best (at any scale) lack."""
    mine = _mine(sec, numbers)
    for n in mine:
        n.kept = False
    length = sec.stop - sec.start
    labels = _labels(mine, unit)
    tolerance = _tolerance(mine)
    fit = fit_line(labels, tolerance, _plausible_slope(dpi, unit)) if len(labels) >= 2 else None
    kept = [n for n in labels if n.kept] if fit is not None else []
    if len(kept) < MIN_NUMBERS and borrowed:
        pair, b = _borrowed_line(labels, borrowed)
        if len(pair) >= 2:  # the borrowed slope, through the labels' mean: two labels alone set no scale
            a = float(np.mean([n.value - b * n.pixel for n in pair]))
            if not _reasons(pair, b, dpi, unit, length):
                chosen = {id(n) for n in pair}
                for n in mine:
                    n.kept = id(n) in chosen
                resid = [n.pixel - (n.value - a) / b for n in pair]
                sec.picks = [(float(p), float(round(v, 3))) for p, v in _monotonic([(n.pixel, n.value) for n in pair])]
                sec.rms_px = float(np.sqrt(np.mean(np.square(resid))))
                sec.refused = None
                return
    if fit is not None and len(kept) >= MIN_NUMBERS:
        reasons = _reasons(kept, fit[1], dpi, unit, length)
        if not reasons:
            _drop_local_outliers(kept)
            kept = [n for n in kept if n.kept]
            if unit == "FT":  # as near the line as its own labels lie: a completed label never moves a depth
                near = min(FIT_TOLERANCE_PX, max(1.0, 2.0 * fit[2]))
                kept += _complete_leading_digits([n for n in mine if not n.kept], fit, near)
                _drop_local_outliers(kept)
                kept = [n for n in kept if n.kept]
            sec.picks = [(float(p), float(round(v, 3))) for p, v in _monotonic([(n.pixel, n.value) for n in kept])]
            sec.rms_px = fit[2]
            sec.refused = None
            return
    else:
        for n in mine:
            n.kept = False
        if len(mine) < MIN_NUMBERS:
            sec.refused = f"{len(mine)} number(s) read in it, {MIN_NUMBERS} needed"
            return
        # no plausible line: say what the numbers that agree best, at any scale, lack
        probe = [DepthNumber(n.pixel, n.value, n.text) for n in mine]
        fit = fit_line(probe, tolerance)
        kept = [n for n in probe if n.kept]
        shown = ", ".join(f"{n.text} at {n.pixel:.0f}" for n in mine[:6]) + (" …" if len(mine) > 6 else "")
        if fit is None or len(kept) < MIN_NUMBERS:
            sec.refused = f"no {MIN_NUMBERS} of its {len(mine)} numbers agree on a depth scale ({shown})"
            return
        reasons = _reasons(kept, fit[1], dpi, unit, length) or [
            f"no {MIN_NUMBERS} of its {len(mine)} numbers agree on a depth scale ({shown})"]
    sec.refused = "; ".join(reasons)
    for n in mine:
        n.kept = False


LOCAL_PX = 3.0  # a label this far (px) from the line through its neighbours is no label (a note's number)


def _drop_local_outliers(kept: list[DepthNumber]) -> None:
    """Unkeep, in place, the labels that lie off the line through their neighbours (two either side, three from
    the one side at an end; least squares) by more than :data:`LOCAL_PX`, the worst first, while three stay: the
    fit's tolerance grows with a long log's length (its scale may drift, 24 px at most), and a printed note's
    round number (1280, a casing shoe's depth, printed in the depth column) within it made a pick 9 ft off; a
    drift bends the line between neighbours by a fraction of a pixel."""
    while True:
        ks = sorted((n for n in kept if n.kept), key=lambda n: n.pixel)
        if len(ks) <= MIN_NUMBERS:
            return
        worst, miss = None, LOCAL_PX
        for i, n in enumerate(ks):
            near = [ks[j] for j in range(max(0, i - 2), min(len(ks), i + 3)) if j != i]
            if len(near) < 3:
                near = ks[i + 1 : i + 4] if i == 0 else ks[max(0, i - 3) : i]
            values = np.array([x.value for x in near])
            if len(near) < 2 or np.ptp(values) == 0:
                continue
            slope, at0 = np.polyfit(values, [x.pixel for x in near], 1)
            off = abs(at0 + slope * n.value - n.pixel)
            if off > miss:
                worst, miss = n, off
        if worst is None:
            return
        worst.kept = False


LAST_DIGITS = 1000  # a label read short of its leading digits keeps its last three (10250 read 250 or 40250)


def _complete_leading_digits(rest: list[DepthNumber], fit: tuple[float, float, float], tolerance_px: float
                             ) -> list[DepthNumber]:
    """The numbers of ``rest`` (three digits or more read) whose last three digits are those of the depth the
    section's line gives at their row, within ``tolerance_px`` (as near as its own labels lie): labels whose leading digits were lost or misread (a
    line beside them took their first strokes: 8600 read 3600 on a cement log; 10250 read 0250 on a mud log).
    Each is given the line's leading digits (its text stays as read) and kept, in place: at its row it agrees with
    the line as closely as the labels read whole do, so it moves no depth more than they do; it extends the picks to
    where the labels were read short."""
    a, b, _ = fit
    tolerance_ft = abs(b) * tolerance_px
    out = []
    for n in rest:
        if len(n.text) < 3:
            continue
        at = a + b * n.pixel
        whole = n.value + round((at - n.value) / LAST_DIGITS) * LAST_DIGITS
        if whole != n.value and abs(whole - at) <= tolerance_ft and int(round(whole)) % LABEL_STEP_FT == 0:
            n.value, n.kept = float(whole), True
            out.append(n)
    return out


@dataclass
class _Pass:
    members: list[DepthNumber]  # the labels its line holds, along depth
    count: int  # how many labels the line took from those still free when it was found

    @property
    def first(self) -> DepthNumber:
        return self.members[0]

    @property
    def last(self) -> DepthNumber:
        return self.members[-1]


MAX_PASSES = 6  # lines looked for in one stretch of log body (a main pass, a repeat or two, a misread run)


def split_passes(sec: ProposedSection, numbers: list[DepthNumber], dpi: float | None = None, unit: str = "FT"
                 ) -> list[ProposedSection]:
    """A section whose printed depths restart (a repeat pass logged over the main pass's depths, the grid running
    on between them) as one section per pass, split half-way between the last number of one pass and the first
    of the next.

    The section's labels are taken line by line: the line at a plausible scale that holds the most of them, then
    the line that holds the most of the rest, and so on (:data:`MAX_PASSES`). A line is a pass of its own where
    the labels it holds (of all the section's) lie clear of every stronger pass's, and where it restarts: the
    later pass begins below where the earlier one ends. A straight run of misreads among a pass's numbers (1000-1900
    read 4000-4900 among 200-9700) lies within that pass; one past its end that carries on upwards (9800-10400 read
    40000-40400) is no restart; one misread splits nothing (a line holds three labels at least)."""
    mine = _labels(_mine(sec, numbers), unit)
    if len(mine) < 2 * MIN_NUMBERS:
        return [sec]
    tolerance = _tolerance(mine)
    slope_ok = _plausible_slope(dpi, unit)
    px = np.array([n.pixel for n in mine])
    val = np.array([n.value for n in mine])
    free = np.ones(len(mine), bool)
    lines: list[_Pass] = []
    while free.sum() >= MIN_NUMBERS and len(lines) < MAX_PASSES:
        found = _best_line(px[free], val[free], tolerance, slope_ok)
        if found is None or found[0].sum() < MIN_NUMBERS:
            break
        inl, a, b = found
        on_all = np.abs(px - (val - a) / b) <= tolerance  # every label it holds, taken or not
        lines.append(_Pass([n for n, k in zip(mine, on_all) if k], int(inl.sum())))
        free[np.flatnonzero(free)[inl]] = False
    passes: list[_Pass] = []
    for line in sorted(lines, key=lambda p: -p.count):
        if all(line.last.pixel < p.first.pixel or line.first.pixel > p.last.pixel for p in passes):
            passes.append(line)
    passes.sort(key=lambda p: p.first.pixel)
    # each later pass restarts below where the one before it ends; where one does not, the weaker of the two goes
    changed = True
    while changed and len(passes) > 1:
        changed = False
        for p, q in zip(passes, passes[1:]):
            if q.first.value >= p.last.value:
                passes.remove(min(p, q, key=lambda x: x.count))
                changed = True
                break
    # a restart whose labels are the pass before's depths but for their leading digits is that pass read wrong
    # where a line beside its labels took their first strokes (8600 read 3600, 9700 read 4700 on a cement log)
    while len(passes) > 1:
        misread = [q for p, q in zip(passes, passes[1:]) if _leading_digits_misread(p, q, tolerance)]
        if not misread:
            break
        passes.remove(misread[0])
    # each pass spans a quarter of the part it would make at least (the test its picks must pass): a short run
    # of misreads at a pass's end that happens to restart is no pass of its own
    while len(passes) > 1:
        cuts = [int(round((p.last.pixel + q.first.pixel) / 2)) for p, q in zip(passes, passes[1:])]
        edges = [sec.start, *cuts, sec.stop]
        short = [p for p, a, b in zip(passes, edges[:-1], edges[1:])
                 if p.last.pixel - p.first.pixel < MIN_SPREAD * (b - a)]
        if not short:
            return [sec.with_span(a, b) for a, b in zip(edges[:-1], edges[1:])]
        passes.remove(min(short, key=lambda x: x.count))
    return [sec]


def _px_per_unit(sec: ProposedSection) -> float:
    (p0, d0), (p1, d1) = sec.picks[0], sec.picks[-1]
    return abs((p1 - p0) / (d1 - d0)) if d1 != d0 else 0.0


def _leading_digits_misread(p: _Pass, q: _Pass, tolerance_px: float) -> bool:
    """Whether most of ``q``'s labels end in the last three digits of the depth ``p``'s line gives at their rows:
    ``p`` run on, its leading digits misread."""
    px = np.array([n.pixel for n in p.members])
    if np.ptp(px) == 0:
        return False
    b, a = np.polyfit(px, [n.value for n in p.members], 1)
    tolerance_ft = abs(b) * tolerance_px
    off = np.array([n.value - (a + b * n.pixel) for n in q.members])
    wrapped = (off + 500.0) % 1000.0 - 500.0
    return bool(np.mean(np.abs(wrapped) <= tolerance_ft) >= 0.5) and bool(np.all(np.abs(off) > tolerance_ft))


def name_sections(sections: list[ProposedSection]) -> None:
    """The first section with depths is the main pass; a later one whose depths lie within a main pass's, printed
    at its scale, is a repeat; any other is a log of its own (another interval, or the same one at another scale:
    a cement-evaluation print's 1:12,000 summary and 1:240 correlation log beside its 1:600 main log); in place."""
    mains: list[tuple[float, float, float]] = []
    for sec in sections:
        if not sec.picks:
            continue
        lo, hi, scale = sec.picks[0][1], sec.picks[-1][1], _px_per_unit(sec)
        if not mains:
            sec.kind = "main"
            mains.append((lo, hi, scale))
        elif any(lo < m_hi and hi > m_lo and abs(scale / m_scale - 1.0) <= SCALE_TOLERANCE
                 for m_lo, m_hi, m_scale in mains if m_scale > 0):
            sec.kind = "repeat"
        else:
            sec.kind = "log"
