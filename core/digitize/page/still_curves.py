"""A curve lying nearly still, told from the ruled lines the grid's row profile takes it for.

``grid.detect_grid`` calls a row a line along depth where it is dark in more than a third of a window's columns; a
curve that hardly moves (a cable tension, a caliper in gauge hole, a resistivity varying by a few per cent) does
that too. :func:`release_still_curves` takes such rows back out of the profile, by how often the band's rows are
dark and by how far its ink wobbles about a straight line.
"""

from __future__ import annotations

import numpy as np

from core.common.runs import true_runs
from core.common.threads import in_order

STILL_CURVE_ROWS = 6  # a band of along-line rows at least this wide may be a curve lying nearly still ...
STILL_CURVE_FILL = 0.6  # ... and is one when its rows are dark this much less often than a ruled line's
STILL_CURVE_WOBBLE_PX = 0.2  # ... or when its ink, smoothed along depth, wobbles this far about a straight line
WOBBLE_SMOOTH_COLS = 15  # the smoothing: a line's pixel noise averages out, a curve's wobble does not
WOBBLE_MARGIN_ROWS = 2  # rows either side of a line's band its wobble is measured over (a still curve's core
#  rows may be all that the profile calls a line; its ink wobbles about them) ...
WOBBLE_GUARD_ROWS = 4  # ... in the columns where the this many rows beyond are paper: the band's ink is alone there
ALONE_DARK = 0.3  # a guard row darker than this holds other ink: a curve crossing the band, text
TRACK_END_PX = 3  # bands this near a track's end are its border, never released


def release_still_curves(along: np.ndarray, prof: np.ndarray, dark: np.ndarray, edges: np.ndarray,
                         bands: list[tuple[int, int]], pool: str, released: np.ndarray | None = None) -> np.ndarray:
    """Take back the along-line rows that are a curve lying nearly still (in place; the windows over the threads of
    the pool named ``pool``: ``core/common/threads.py: in_order``), and say which of the lines taken back look ruled
    (:func:`ruled_released`): (rows, windows), 1 on their rows.

    A curve that hardly moves over a window (a cable tension, a caliper in gauge hole) darkens a few rows
    in more than a third of the columns, as a ruled line does: on the KGS sonic log the tension curve was
    damped as grid over 250-1050 ft and the tracer put it on the sonic's line. What tells them apart is
    that a ruled line, or a bunch of them (a decade's 7-10 lines), is dark in nearly every column in every
    row of its band, while a curve wanders across the band: each row is dark in a share of the columns
    only. So in a band of ``STILL_CURVE_ROWS`` or more rows, where a row's mean darkness over the window is
    below ``STILL_CURVE_FILL`` of its 65th percentile on average and its ink wanders about a straight line
    (``_wobble``: a ruled line on a skewed scan drifts across a band too, but straight), it is released.

    A curve lying *very* still (a resistivity varying by 5 % on a four-decade track: 2 px over the log) fills
    its band as a line does; it is told by its wobble alone. Smoothed along depth over
    ``WOBBLE_SMOOTH_COLS`` columns, a ruled line's centroid stays within 0.16 px RMS of straight on every
    interior line of the shared scans (0.00-0.16 on iqa_01146, iqa_01135 and KGS, 1-bit included) and of the
    foreign pages (0.02-0.06); such a curve wobbles 0.29 px and more. A track's border is never released:
    a curve touching it makes it wobble too (0.26 px on iqa_01146)."""
    ends = np.array([e for band in bands for e in band], np.float64)
    ruled = np.zeros(along.shape, np.float32)
    # a window reads the map and its own column of ``along`` and writes only that column (and ``ruled``'s): the windows
    # over the threads change nothing (within a window the runs stay in order: a run released is paper to the next
    # one's guard)
    in_order(lambda w: _release_in_window(along, prof, dark, edges, ends, w, ruled, released), range(len(edges) - 1),
             pool=pool)
    return ruled


def _release_in_window(along: np.ndarray, prof: np.ndarray, dark: np.ndarray, edges: np.ndarray, ends: np.ndarray,
                       w: int, ruled: np.ndarray, released_out: np.ndarray | None = None) -> None:
    """:func:`release_still_curves` in the window ``w`` (the columns [edges[w], edges[w + 1])), in place; the lines
    it releases that look ruled marked in ``ruled`` (:func:`ruled_released`)."""
    a, b = int(edges[w]), int(edges[w + 1])
    before = along[:, w] >= 0.5
    starts, stops = true_runs(before)
    for lo, hi in zip(starts, stops):
        if ends.size and np.min(np.abs(ends - (lo + hi - 1) / 2.0)) <= (hi - lo) / 2.0 + TRACK_END_PX:
            continue
        smooth = _still_wobble(dark[:, a:b], along[:, w] >= 0.5, lo, hi)
        if smooth > STILL_CURVE_WOBBLE_PX:
            along[lo:hi, w] = 0.0
            continue
        if hi - lo < STILL_CURVE_ROWS:
            continue
        rows = slice(lo + 1, hi - 1)  # the spread rows either side belong to no line
        p = prof[rows, w]
        fill = dark[rows, a:b].mean(axis=1) / np.maximum(p, 1e-6)
        inked = p > 0.05
        if inked.any() and float(np.mean(fill[inked])) < STILL_CURVE_FILL and _wobble(dark[rows, a:b])[0] > WANDER_PX:
            along[lo:hi, w] = 0.0
    released = [(lo, hi) for lo, hi in zip(starts, stops) if not (along[lo:hi, w] >= 0.5).any()]
    if released_out is not None:
        for lo, hi in released:
            released_out[lo:hi, w] = 1.0
    for lo, hi in ruled_released(dark[:, a:b], before, along[:, w] >= 0.5, released):
        ruled[lo:hi, w] = 1.0


RULED_WOBBLE_GAIN = 2.5  # a released line wobbling at most this many times the median line of its window wobbles
# as the scan's own rulings do (dense_11's broken 2/3-decade line of the real shapes' dense 1.49 times; a curve lying
# still at a place of the comb in the fit's first 20 logs, random_19's GR, 3.65; in its logs 20-59 three wobble 1.31-1.96:
# the wobble does not tell every such curve, ``rules/released_ruling.py: along_released_ruling`` reads more; docs/accuracy.md,
# the fifteenth round)
COMB_PLACE_PX = 1.5  # a line this near where the kept lines' comb puts one stands at a place of the comb


def ruled_released(dark: np.ndarray, before: np.ndarray, after: np.ndarray, released: list[tuple[int, int]]
                   ) -> list[tuple[int, int]]:
    """Of the lines ``released`` ((lo, hi) row runs) from one window's darkness (rows × columns), those that look like
    a ruled line the test took for a curve: one that stands where the comb of the lines kept (``after``) puts a line
    (:func:`at_comb_place`) and wobbles (``_still_wobble``, every line of ``before`` on the line rows) no more than
    ``RULED_WOBBLE_GAIN`` times the median line of the window. A 1-bit print breaks a grey ruling into dashes and
    bends every line of it a row over hundreds of columns: its lines wobble alike, past ``STILL_CURVE_WOBBLE_PX``
    (dense_11's 2/3-decade line 0.243 px, its neighbours 0.14-0.20). A curve lying still lies where it happens to
    and mostly wobbles as a curve (3.65 times its window's median and more at a place of the comb in the 272 logs
    of the fifteenth round's census), but not always (three of 160 more logs: 1.31-1.96). So the lines stay released
    (the grid does not damp them: the twelfth round's cost), and the tracer doubts a path lying straight along one
    only where the curve's own style shows elsewhere (``rules/released_ruling.py: along_released_ruling``)."""
    if not released:
        return []
    runs = list(zip(*true_runs(before)))
    wobble = {run: _still_wobble(dark, before, *run) for run in runs}
    noise = float(np.median(list(wobble.values())))
    s, t = true_runs(after)
    kept = (s + t - 1) / 2.0
    return [(lo, hi) for lo, hi in released
            if noise > 0 and wobble[(lo, hi)] <= RULED_WOBBLE_GAIN * noise and at_comb_place((lo + hi - 1) / 2.0, kept)]


def at_comb_place(centre: float, kept: np.ndarray) -> bool:
    """Whether a line at ``centre`` (a row) stands where the comb of the ``kept`` lines (their centres) puts one: its
    nearer kept neighbour on one side has a partner as far on the other side, within ``COMB_PLACE_PX`` (a linear
    ruling's line lies midway between its neighbours, a log ruling's between the lines of the decades either side)."""
    below, above = kept[kept < centre], kept[kept > centre]
    for near in (below.max() if below.size else None, above.min() if above.size else None):
        if near is not None and np.any(np.abs(kept - (2.0 * centre - near)) <= COMB_PLACE_PX):
            return True
    return False


WANDER_PX = 0.5  # a band's centroid this far (RMS) from straight wanders: 0.0-0.3 px on ruled bands, 0.8 px for the KGS tension curve


def _still_wobble(dark: np.ndarray, lines: np.ndarray, lo: int, hi: int) -> float:
    """The smoothed wobble (``_wobble``) of the ink about the along-line band [lo, hi) of one window's darkness
    (rows × columns), over its rows and ``WOBBLE_MARGIN_ROWS`` more each side, in the columns where that ink is
    alone: the ``WOBBLE_GUARD_ROWS`` rows beyond the margin that are on no line (``lines``) are paper. A curve
    crossing a ruled line comes from afar and inks the guard rows; a curve lying still stays in its band."""
    top, bot = max(0, lo - WOBBLE_MARGIN_ROWS), min(dark.shape[0], hi + WOBBLE_MARGIN_ROWS)
    guard = np.r_[max(0, top - WOBBLE_GUARD_ROWS) : top, bot : min(dark.shape[0], bot + WOBBLE_GUARD_ROWS)]
    guard = guard[~lines[guard]]
    alone = dark[guard].max(axis=0) < ALONE_DARK if guard.size else np.ones(dark.shape[1], bool)
    return _wobble(dark[top:bot][:, alone])[1]


def _wobble(band: np.ndarray) -> tuple[float, float]:
    """How far the ink of a band (rows × columns) wobbles about a straight line, RMS in rows, raw and smoothed
    over ``WOBBLE_SMOOTH_COLS`` columns: the darkness centroid per inked column against a linear fit (a ruled
    line on a skewed scan drifts across its band, but straight). (0, 0) when too few columns are inked."""
    mass = band.sum(axis=0)
    cols = np.flatnonzero(mass > 0.5 * np.median(mass[mass > 0])) if (mass > 0).any() else np.zeros(0, int)
    if cols.size < max(16, 2 * WOBBLE_SMOOTH_COLS):
        return 0.0, 0.0
    centroid = (band[:, cols] * np.arange(band.shape[0])[:, None]).sum(axis=0) / mass[cols]
    residual = centroid - np.polyval(np.polyfit(cols, centroid, 1), cols)
    smooth = np.convolve(residual, np.ones(WOBBLE_SMOOTH_COLS) / WOBBLE_SMOOTH_COLS, mode="valid")
    # the smoothed wobble as a robust spread (1.4826 × the median absolute value: an RMS for normal wobble): a
    # curve crossing the band moves the centroid in a few columns, a curve lying in it in every column
    return float(np.sqrt(np.mean(residual ** 2))), float(1.4826 * np.median(np.abs(smooth)))
