"""One section's printed depths to depth picks: the labels that agree on one straight line at a standard log
scale (:func:`fit_section`).

Per section, numbers that fit no straight line with the others are rejected by name: misreads, header text,
table entries, a description's numbers. The line that holds the most labels (``line_fit.py``) at a plausible
scale (``depth_scales.py``) gives the picks: depths increasing down the log, a standard log scale at the scan's
dpi, labels a round number of feet, spread over a quarter of the section at least. A short repeat that prints
two depths borrows the main pass's scale to check them. The picks are the kept numbers as printed, never
extrapolated. Where a section's depths restart, ``log_passes.py`` splits it into passes first.
"""

from __future__ import annotations

import numpy as np

from core.digitize.calibrate.depth_scales import plausible_slope, scale_check
from core.digitize.calibrate.line_fit import FIT_TOLERANCE_PX, fit_line, fit_tolerance
from core.digitize.calibrate.proposal_records import DepthNumber, ProposedSection

MIN_NUMBERS = 3  # numbers that must agree before picks are proposed
MIN_SPREAD = 0.25  # the kept numbers span at least this share of their section's length
LABEL_STEP_FT = 5  # printed depths step by a round interval (10, 50, 100 ft): their differences share a factor
EDGE_PX = 40  # a number printed this close outside a section's border lines still belongs to it


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


def numbers_in(sec: ProposedSection, numbers: list[DepthNumber]) -> list[DepthNumber]:
    """The numbers printed in a section (or within :data:`EDGE_PX` outside its border lines), along depth."""
    return sorted((n for n in numbers if sec.start - EDGE_PX <= n.pixel < sec.stop + EDGE_PX), key=lambda n: n.pixel)


def depth_labels(numbers: list[DepthNumber], unit: str) -> list[DepthNumber]:
    """The numbers that may be printed depths: in feet, a multiple of :data:`LABEL_STEP_FT` (depth lines are
    labelled every 10, 50 or 100 ft; a description's 7, 38 or 146 is no label), in metres every one."""
    if unit != "FT":
        return list(numbers)
    return [n for n in numbers if n.value == round(n.value) and int(round(n.value)) % LABEL_STEP_FT == 0]


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
    mine = numbers_in(sec, numbers)
    for n in mine:
        n.kept = False
    length = sec.stop - sec.start
    labels = depth_labels(mine, unit)
    tolerance = fit_tolerance(mine)
    fit = fit_line(labels, tolerance, plausible_slope(dpi, unit)) if len(labels) >= 2 else None
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
