"""A broken pen the network names as the other broken pen: read from that pen's map, on what its curves leave.

On the foreign hard prints the bundled model reads the renderer's dotted pens (short marks) as DASHED: over the
track of a dotted curve its dotted map is empty, and the dotted strokes lie in the dashed map beside the track's
dashed curve's (hard_000's NPHI, hard_008's PR, hard_006's RDEP: 61.6 % of the dotted samples NULL). The same
happens on our own families, rarely (random_08's SFLU2, a dashed pen its dashed map sees in 0.4 % of its track's
columns). So where a dashed or dotted curve's own map is empty over its track (:func:`style_share` at most
:data:`EMPTY_SHARE`) and the other broken style's map there holds strokes its own curves do not explain
(:data:`UNEXPLAINED_SHARE`), the curve is traced on that map with those curves' strokes taken away
(:func:`borrowed_maps`, run by ``rules/all_curves.py``). Which stroke is which pen the map cannot say; the marks in
the ink can (:func:`pattern`): a dotted pen's marks and gaps are the shorter (:data:`CLEAR_RATIO`). The marks never
move a trace: where they do not clearly name the curve's trace its own pen's, every value of it and of the other
style's curves of the track is doubted (the pass ``pen_naming``).

The thresholds were read on the fit logs (seed 515151) of the six families, never on the foreign prints
(``docs/accuracy.md``, the nineteenth round, helper B).
"""

from __future__ import annotations

import numpy as np

from core.digitize.evidence.style import style_evidence
from core.digitize.page.grid import Grid
from core.digitize.rules.curve import trace_curve
from core.digitize.rules.line_removal import remove_line
from core.digitize.rules.passes import doubt, mark
from core.digitize.rules.pen_pattern import inked_columns
from core.digitize.rules.signals import TOLERANCE_SHARE, rival_strength
from core.digitize.trace.params import TraceParams
from core.io.calibration import CurveSpec

# A curve's own map is empty over its track when its evidence reaches the tracer's threshold in at most this share of
# the track's columns. On the fit logs (seed 515151, logs 0-39 of six families) a dashed or dotted curve sharing its
# track with the other broken style, its pen drawn along the whole log, had its own map at the threshold (0.3) in a
# share of the columns running continuously down from 1.0 to 0.004: 4 of 208 curves at or under 0.02 (random_08's
# SFLU2 the lowest), and none of them meets the rest of the rule. The simulated confusion (the dotted map moved into
# the dashed one, ``tools/dotted_as_dashed.py``) gives 0.
EMPTY_SHARE = 0.02
# ... and the other broken style's map holds strokes none of its curves explains (``signals.rival_strength``, at the
# tracer's threshold) in at least this share of the columns: a stroke to read, not the noise beside a traced line. On
# the simulated fit logs 0.05 / 0.10 / 0.20 left the dotted curves 18.4 / 25.2 / 36.4 % NULL and 44.3 / 40.8 / 34.7 %
# wrong anywhere at 4.37 / 4.37 / 4.29 % confidently wrong (named by the marks alone then): what it admits is about
# as often right as wrong
UNEXPLAINED_SHARE = 0.10
# A pen's pattern is the mean length of its marks times that of its gaps (:func:`pattern`): a dotted pen's is the
# finer. Measured on the fit logs (seed 515151, logs 0-39 of six families; 129 pairs of a dashed and a dotted curve in
# one track, both traced at r > 0.9 on the maps as given): the dotted pen's marks were the shorter in 88, its gaps in
# 110, its pattern the finer in 117; where one pattern was 1.5 / 2 / 2.5 / 3 times the other's, the dotted one was
# the finer in 93 of 96 / 66 of 69 / 47 of 48 / 28 of 29. (The pens' thickness says nothing of their kind: our dotted
# pens were the thicker in 47 pairs, the thinner in 47.) The two are told apart at :data:`CLEAR_RATIO`; under it the
# naming is doubted
CLEAR_RATIO = 2.5
MIN_MARKS = 20  # fewer marks or gaps than this along a trace tell nothing of its pen


def style_share(ev, lo: int, hi: int, threshold: float) -> float:
    """The share of the columns in which ``ev`` (a canonical map) reaches ``threshold`` in rows ``lo``..``hi``."""
    band = np.asarray(ev[lo : hi + 1], np.float32)
    if band.size == 0:
        return 0.0
    return float((band.max(axis=0) >= threshold).mean())


def pattern(position: np.ndarray, ink: np.ndarray) -> tuple[float, float, int]:
    """The marks of ink under ``position`` (canonical rows; a column is ink where its pixel, or one either side
    across, is ink: ``pen_pattern.inked_columns``): their mean length and their gaps' mean length, in columns along
    depth, and how many marks or gaps there were, the fewer. Read only over columns the trace moves less than a row
    across, as there: along a steep stroke the rows beside the path are the stroke itself and hide its gaps. A mark is
    a run of inked still columns, a gap one of paper; a run ends where the still columns break off."""
    still, inked_all = inked_columns(np.asarray(position, np.float64), ink)
    cols = np.flatnonzero(still)
    if cols.size == 0:
        return 0.0, 0.0, 0
    inked = inked_all[cols]
    joined = np.concatenate([[False], np.diff(cols) == 1])
    out = []
    for on in (inked, ~inked):
        runs = int((on & ~(joined & np.concatenate([[False], on[:-1]]))).sum())
        out.append((float(on.sum()) / runs if runs else 0.0, runs))
    (mark, marks), (gap, gaps) = out
    return mark, gap, min(marks, gaps)


def pen_order(sizes: list[float], counts: list[int], klass: int) -> tuple[int | None, bool]:
    """Which of a group's traces (their :func:`pattern`: marks × gaps) is the pen of ``klass`` (3: dotted, the
    finest pattern; 2: dashed, the coarsest), and whether that is clear (:data:`CLEAR_RATIO` to the nearest other,
    each trace read over :data:`MIN_MARKS` marks and gaps or more). None where no trace has marks enough to read."""
    read = [k for k, n in enumerate(counts) if n >= MIN_MARKS and sizes[k] > 0]
    if not read:
        return None, False
    key = (lambda k: sizes[k]) if klass == 3 else (lambda k: -sizes[k])
    best = min(read, key=key)
    others = [sizes[k] for k in read if k != best]
    if len(read) < len(sizes) or not others:
        return best, False
    nearest = min(others) if klass == 3 else max(others)
    ratio = nearest / sizes[best] if klass == 3 else sizes[best] / max(nearest, 1e-9)
    return best, bool(ratio >= CLEAR_RATIO)


def unexplained_share(rival: np.ndarray, threshold: float) -> float:
    """The share of columns whose unexplained evidence (``signals.rival_strength``) reaches ``threshold``."""
    return float((np.asarray(rival) >= threshold).mean()) if rival.size else 0.0


def borrowed_maps(traces: list, curves: list[CurveSpec], evidence_by_class: dict, params: TraceParams,
                   grid: Grid | None, own_ink: set, ink: np.ndarray) -> dict[int, int]:
    """The pass ``borrowed_map`` (run by ``rules/all_curves.py`` once every curve is traced): a dashed or dotted
    curve, alone in its style in its track, whose own map is empty there (``EMPTY_SHARE``) while the other broken
    style's map holds strokes its curves do not explain (``UNEXPLAINED_SHARE``), is traced on that map where its
    curves' strokes are taken away (``line_removal.remove_line``): the network named the other style's curves'
    strokes, and the curve takes what they leave. Their traces are left as they were. Unless the marks and gaps in the ink clearly name its trace its
    own pen's (``borrowed_map.pen_order``), every value of it and of those curves is doubted (``pen_naming``).
    Replaces the traces in place; returns each such curve's index -> the class whose map it was traced on.

    Chosen over tracing it jointly with the other style's curves (the same-style group tracer) and naming the traces
    by their marks: on the fit logs with the dotted map moved into the dashed one (``tools/dotted_as_dashed.py``,
    seed 515151, 20 logs of five families) the joint trace left 13.1 % of the dashed curves' samples NULL (0.9 %
    before) and wrote 19.7 % of the dotted samples right, the curve on what they leave 34.0 % with the dashed curves
    unchanged; changing the two traces over where the marks name them the other way round wrote fewer right. With
    an unnamed pair's strokes explained away the dashed curves' rival was gone and their confidently wrong rose
    18.4 → 27.4 %; read as each other's rival (``scan_signals``' ``unnamed``) 20.0 %, and with the pens named by
    marks × gaps (``borrowed_map.pattern``) rather than marks alone 18.35 % (docs/accuracy.md, the nineteenth round,
    helper B)."""
    out: dict[int, int] = {}
    for i, spec in enumerate(curves):
        other = 5 - spec.klass
        if spec.klass not in (2, 3) or i in own_ink or other not in evidence_by_class \
                or spec.klass not in evidence_by_class:
            continue
        track = [j for j, o in enumerate(curves) if j != i and o.shares_track_with(spec) and j not in own_ink]
        mates = [j for j in track if curves[j].klass == other]
        if not mates or any(curves[j].klass == spec.klass for j in track) or any(j in out for j in mates):
            continue
        lo, hi = spec.track_rows(evidence_by_class[spec.klass].shape[0])
        if style_share(style_evidence(evidence_by_class, spec, curves, params.unclaimed_styles), lo, hi,
                       params.threshold) > EMPTY_SHARE:
            continue
        ev = style_evidence(evidence_by_class, curves[mates[0]], curves, params.unclaimed_styles)
        damping = None if grid is None else grid.band_damping(slice(lo, hi + 1), params.grid_floor)
        rival = rival_strength(ev, lo, hi, [traces[j].position for j in track], TOLERANCE_SHARE * spec.track_width,
                               damping)
        if unexplained_share(rival, params.threshold) < UNEXPLAINED_SHARE:
            continue
        band = np.asarray(ev[lo : hi + 1], np.float32).copy()
        for j in mates:
            with np.errstate(invalid="ignore"):
                inside = (traces[j].position >= lo) & (traces[j].position <= hi)
            remove_line(band, np.where(inside, traces[j].position - lo, np.nan), core_px=params.refine_radius)
        tr = trace_curve(band, spec, params.broken(), grid, row_offset=lo)
        marks = [pattern(traces[j].position, ink) for j in mates] + [pattern(tr.position, ink)]
        k, clear = pen_order([m[0] * m[1] for m in marks], [m[2] for m in marks], spec.klass)
        if not (clear and k == len(mates)) and params.runs("pen_naming"):
            for t in [traces[j] for j in mates] + [tr]:
                doubt(t, np.ones(t.position.size, bool), "pen_naming")
        mark(tr, np.isfinite(tr.position), "borrowed_map")
        traces[i] = tr
        out[i] = other
    return out
