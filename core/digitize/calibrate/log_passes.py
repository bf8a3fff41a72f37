"""A stretch of log body as its passes: split where its printed depths restart (:func:`split_passes`: a repeat
pass logged over the main pass's depths, the grid running on between them), and each section named for what
its depths are (:func:`name_sections`): the first with depths the main pass, a later one that repeats its range
at its scale a repeat, any other a log of its own.

Apart from the fit of one section's picks (``depth_fit.py``): the passes are found first, lines of labels taken
one by one (a straight run of misreads is no pass), and each pass is then fitted on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.digitize.calibrate.depth_fit import MIN_NUMBERS, MIN_SPREAD, depth_labels, numbers_in
from core.digitize.calibrate.depth_scales import SCALE_TOLERANCE, plausible_slope
from core.digitize.calibrate.line_fit import best_line, fit_tolerance
from core.digitize.calibrate.proposal_records import DepthNumber, ProposedSection


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
    mine = depth_labels(numbers_in(sec, numbers), unit)
    if len(mine) < 2 * MIN_NUMBERS:
        return [sec]
    tolerance = fit_tolerance(mine)
    slope_ok = plausible_slope(dpi, unit)
    px = np.array([n.pixel for n in mine])
    val = np.array([n.value for n in mine])
    free = np.ones(len(mine), bool)
    lines: list[_Pass] = []
    while free.sum() >= MIN_NUMBERS and len(lines) < MAX_PASSES:
        found = best_line(px[free], val[free], tolerance, slope_ok)
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
