"""Printed depth numbers to depth picks: the numbers that agree on one straight line at a standard log scale.

Per section, numbers that fit no straight line with the others are rejected by name: misreads, header text,
table entries. A straight line through the rest (RANSAC over every pair, then least squares) is then checked for
sanity (:func:`fit_section`): depths increasing down the log, a standard log scale at the scan's dpi, labels
that step by a round interval, spread over a quarter of the section at least. A section whose depths restart is
two passes (:func:`split_passes`; a straight run of misreads is not); the first with depths is the main pass, a
later one that repeats its range a repeat pass (:func:`name_sections`). The picks are the kept numbers as
printed, never extrapolated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FIT_TOLERANCE_PX = 6.0  # a number this far (in pixels along depth) from the line of the others is rejected
MIN_NUMBERS = 3  # numbers that must agree before picks are proposed
SNAP_PX = 8.0  # a number is placed on the depth line it is printed on, when one lies this close
SNAP_AGREE_PX = 2.5  # ... and moves by about what the scan's other numbers moved (snap_to_depth_lines)
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


def snap_to_depth_lines(numbers: list[DepthNumber], lines: np.ndarray) -> None:
    """Move each number onto the depth line (``depth_line_positions``) it is printed on (in place): a printed
    depth is centred on its line, and the line is a sharper mark than the box OCR draws around the digits.

    A scan prints its labels the same way on every line, so a true snap moves a number by about what it moves
    the others (iqa_33-025-02289-0001: 3.5 px, every label). Where the nearest line lies otherwise (a grid's
    finer line, a curve's stroke taken for a line) or no line is near, the number moves by the others' median:
    on a synthetic log, 5700 and 5800 ft went 7 px either way onto finer lines, a 2.5-ft pick; on
    iqa_33-023-01135-0001 four labels read 500 px apart to the pixel went +4.5, +4.5, +4.5 and −5 px."""
    if lines.size == 0 or not numbers:
        return
    pixels = np.array([n.pixel for n in numbers])
    nearest = lines[np.argmin(np.abs(lines[None, :] - pixels[:, None]), axis=1)]
    shift = nearest - pixels
    snapped = np.abs(shift) <= SNAP_PX
    # too few snaps to say how this scan prints its labels: each number on its nearest line, or left where it is
    usual = float(np.median(shift[snapped])) if snapped.sum() >= MIN_NUMBERS else None
    for n, s, ok in zip(numbers, shift, snapped):
        agrees = ok and (usual is None or abs(s - usual) <= SNAP_AGREE_PX)
        n.pixel += float(s) if agrees else (usual or 0.0)


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


def fit_section(sec: ProposedSection, numbers: list[DepthNumber], dpi: float | None, unit: str) -> None:
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
    values = [int(round(n.value)) for n in kept]
    step = int(np.gcd.reduce(np.abs(np.diff(values))))
    # every label a multiple of the round interval, not only their differences: 0, 8 and 2000 read in a track
    # (fragments of text 9 px apart, and one label) step by 8 and fell on one line by chance
    if unit == "FT" and (step < LABEL_STEP_FT or any(v % LABEL_STEP_FT for v in values)):
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
    again; it splits only where (:func:`_is_restart`) each side has its own straight line of depths, the two lines
    hold clearly more of the numbers than one line does (one misread, a 90 among 800 … 950, splits nothing), the
    later line starts below where the earlier one ends, and neither line runs on across the cut."""
    mine = sorted((n for n in numbers if sec.start - EDGE_PX <= n.pixel < sec.stop + EDGE_PX), key=lambda n: n.pixel)
    values = np.array([n.value for n in mine])
    together: int | None = None  # how many of the section's numbers one line holds: fitted once, at the first step back
    for i in range(MIN_NUMBERS - 1, len(mine) - MIN_NUMBERS):
        if values[i + 1] >= values[i] - LABEL_STEP_FT or not np.all(np.diff(values[i + 1 : i + 1 + MIN_NUMBERS]) > 0):
            continue
        together = len(_agreeing(mine)[0]) if together is None else together
        if not _is_restart(mine[: i + 1], mine[i + 1 :], together):
            continue
        cut = int(round((mine[i].pixel + mine[i + 1].pixel) / 2))
        # the rest is split again from its own numbers: those past the cut (the section's edge allowance holds at
        # its outer borders only; across the cut it took the numbers before it back in, found the same restart
        # and recursed without end: iqa_33-023-01145-0002's proposal died of it)
        after = [n for n in numbers if n.pixel >= cut]
        return [ProposedSection(sec.start, cut), *split_passes(ProposedSection(cut, sec.stop), after)]
    return [sec]


def _agreeing(part: list[DepthNumber]) -> tuple[list[DepthNumber], tuple[float, float, float] | None]:
    """The numbers of ``part`` that one straight line holds (copies, so the caller's marks stay) and that line."""
    probe = [DepthNumber(n.pixel, n.value, n.text) for n in part]
    fit = fit_line(probe)
    return ([n for n in probe if n.kept] if fit is not None else []), fit


def _on_line(numbers: list[DepthNumber], fit: tuple[float, float, float]) -> int:
    """How many of ``numbers`` lie on depth = a + b · pixel, within the fit's tolerance."""
    a, b, _ = fit
    return sum(abs(n.pixel - (n.value - a) / b) <= FIT_TOLERANCE_PX for n in numbers)


def _is_restart(before: list[DepthNumber], after: list[DepthNumber], together: int) -> bool:
    """Whether the depths printed ``before`` and ``after`` a step back are two passes, not one log misread
    (``together``: how many of them all one straight line holds)."""
    (left, left_fit), (right, right_fit) = _agreeing(before), _agreeing(after)
    # each side has its own line, and the two lines hold clearly more numbers than one line does (a repeat's
    # numbers lie off the main pass's line). A share of all the numbers read was the test before: on
    # iqa_33-023-01145-0002 the misreads (110 of 128 numbers) kept one line below it, and a continuous log of
    # 18 agreeing depths was cut in two at a misread
    if min(len(left), len(right)) < MIN_NUMBERS or len(left) + len(right) < together + MIN_NUMBERS:
        return False
    # the restart is between the lines, not among misreads: the later pass begins below where the earlier one
    # ended. iqa_33-025-02289-0001 printed 9600, 9700, then 9800 read "800", 9900 "900" and 10000-10400 read
    # 40000-40400: a line of misreads beyond the log's end is no pass
    if right[0].value >= left[-1].value:
        return False
    # a pass's line stops at its pass: a repeat's depths, run back over the main pass, are a restart's offset
    # off every main number. Where the later line holds numbers printed before the cut (or the earlier one
    # numbers after it), the depths run on across it and the other line is a run of misreads: the same scan
    # read 1000-1900 as 4000-4900 (a 1 read as 4), on a straight line of their own, while 200, 300, 400, 700
    # above them lay on the line of 2000-9700 below
    return _on_line(before, right_fit) < 2 and _on_line(after, left_fit) < 2


def name_sections(sections: list[ProposedSection]) -> None:
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
