"""What the tracer knows of each column it read, as numbers the calibrated confidence is computed from.

Every curve placed and every pass run (``core/digitize/rules/passes.py``), each column of a trace gets signals, all
dimensionless, so a print's size and resolution do not change what they mean:

- ``strength``: the map's evidence at the path (the curve seen, or not), and ``support``, that evidence over
  ``CONFIDENT_EVIDENCE`` averaged over a few columns and fading across a bridged gap
  (``confidence.column_confidence``);
- ``rival``: the strongest evidence of the curve's own style elsewhere in its track, away from every traced curve
  (a stroke of its style the path did not take and no curve explains: the runner-up), averaged like ``support``;
- ``neighbour``: how far the nearest other curve of the track lies, and ``same_style``, the nearest of the curve's
  own line style, in track widths;
- ``edge``: how far the track's nearer edge lies, in track widths; ``on_line``: whether the trace lies on a printed
  line along depth;
- ``slope``: the largest move across the track to a neighbouring column, in track widths, and ``wiggle``, the range
  the trace spans over ``WIGGLE_COLS`` columns either side: a value between a broken pen's marks on a wiggling
  stretch is read on a straight line between them; ``curve_wiggle``, the median wiggle over the whole log: a calm
  curve read between a broken pen's marks is read on its line, a busy one's bridged values are guesses (the foreign
  hard prints' values written at 0.5-0.9: right ones on curves of median wiggle 0.011, wrong 0.024);
- ``unseen``: how far the nearest column where the curve was seen lies, over the bridged gap's length;
- ``to_null``: columns to the nearest column without a value, over ``NULL_REACH``: a value at the end of a stretch
  the tracer gave up on is less sure than one in the middle of a long reading; ``run_cols``, the length of the
  unbroken reading the column is in (over ``RUN_REACH``), and ``run_strength``, the evidence along all of it: a
  short island of values between NULLs, or a long one seen faintly throughout, is a reading to doubt;
- ``stroke``: the curve's stroke width across, in track widths (the median over every 4th column it was seen on of
  the run of its evidence at the path, ``STROKE_EVIDENCE`` and over): a value is judged in shares of the scale, and
  a stroke a twentieth of the track wide holds the truth anywhere in it (on the foreign hard prints the calibrator
  fitted on the synthetic families with it writes 1.6 points more of their samples confident and right:
  ``docs/accuracy.md``, the sixth round);
- ``curve_strength`` and ``curve_null``: over the whole log, the median evidence where the curve was read and the
  share of its columns without a value: a curve the network barely sees anywhere is read less surely everywhere;
- ``backup``: the value is read on a backup scale; for a wrapping curve ``level_pinned`` and ``level_open``, what
  bounds the stretch of its scale (``rules/curve.py: level_anchors``; a curve that cannot wrap is pinned);
- one per doubting pass, 1 where it doubted the column (``passes.DOUBTS``), ``hidden_fill``, and ``borrowed_map``
  (the curve read from the other broken style's map: ``borrowed_map.borrowed_maps``; its signals read that map);
- ``identity_margin``: the margin, in nats, by which the curves of one line style were told apart over the stretch
  (``core/digitize/trace/crossings.py: settle_identities``), 0 where the curve is alone in its style;
- ``other_style``: the strongest evidence, at the trace's row, of the line styles of the other curves in its track
  that are not its own (:func:`ink_at_path`; 0 where every other curve there is of its style, or follows its own
  ink's map): a pen read on a close neighbour's stroke of another style reads that style's ink under its path. Of
  the confident values (0.9 and over) the fit's logs hold, those with any of it (0.01 and over) were right 95.8 % of
  the time at a mean confidence of 0.973, those without 98.8 % at 0.980; at 0.5-0.7 the other way round (64.8 % at
  0.62 against 57.5 %): a weight in the regression cannot follow that, a score read through its own map can
  (``confidence_model.ConfidenceModel.strata``; docs/accuracy.md, #60's eighteenth round, helper B);
- ``duty`` and ``curve_duty``: the pen's own pattern under the path, read from the ink (:func:`ink_duty`): the share
  of the path's still columns whose pixel, or one either side, is ink, over ``DUTY_COLS`` columns around the column
  and over the whole log. A solid pen's path inks nearly every column, a dashed or dotted one's a steady share; where
  the path leaves its pen's stroke for one of another pattern, the local share moves away from the curve's own (a
  solid pen read on a dashed neighbour's stroke reads broken there, a broken pen on a solid one unbroken). The maps
  name a style by its look; the ink is the pattern itself, read on any print. The calibrator reads their log ratio
  through a threshold (``confidence_model.PATTERN_MISMATCH``: ``pattern_mismatch``, a stratum). On the fit's logs
  (seed 515151, logs 0-19 of the five families) 5.0 % of the written values raise it, right 63.9 % of the time at a
  mean confidence of 0.745 (main's calibrator) against 88.7 % at 0.876 for the rest; in 0.5-0.7 43.7 % right at 0.62
  (the rest 63.8 %), in 0.9-1.0 90.8 % at 0.966 (the rest 98.2 % at 0.976); on ``broken_fast``'s fit logs 0-59 it is
  raised on 10.5 %, right 57.4 % against 70.1 % (docs/accuracy.md, #60's nineteenth round, helper A).

Columns without a value have signals too; nothing reads them.
"""

from __future__ import annotations

import numpy as np

from core.common.runs import distance_to_true, true_runs
from core.common.threads import in_order, once_per_key
from core.digitize.evidence.coded_map import compiled_reading
from core.digitize.rules.confidence import CONFIDENCE_COLS, column_confidence
from core.digitize.rules.passes import BIT, DOUBTS
from core.digitize.rules.pen_pattern import MIN_STILL_COLS, inked_columns
from core.digitize.rules.track_scans import damping_arguments, read_where_spread, strongest_uncovered

TOLERANCE_SHARE = 0.05  # rows within this share of the track of a traced curve are its stroke (the tolerance a
# reading is judged by): evidence there is no rival
FAR = 0.25  # a neighbour or an edge farther than this share of the track is far: the signal saturates
NULL_REACH = 48  # columns beyond which a NULL is too far to tell anything of a column
RUN_REACH = 400  # an unbroken reading this long is long: the signal saturates
WIGGLE_COLS = 8  # columns either side over which a trace's wiggle is its range
CHUNK = 4096  # columns of a track's band read at a time (a few MB of a long scan's map)
ALONE_NATS = 20.0  # the identity signal of a curve alone in its style: as sure as a clear decision
STROKE_EVIDENCE = 0.5  # a stroke is where the map says its style more likely than not
DUTY_COLS = 16  # a column's duty, the share of the path's still columns inked, is read over it and half this either side ...
DUTY_MIN_STILL = 8  # ... where that many of them are still; else it reads the curve's own duty (no local evidence)


def rival_strength(evidence, lo: int, hi: int, positions: list[np.ndarray], keep_px: float,
                   damping=None, row_offset: int = 0) -> np.ndarray:
    """Per column, the strongest evidence of ``evidence`` (a canonical map of one style) in rows ``lo``..``hi``
    farther than ``keep_px`` from every one of ``positions`` (the track's traced curves, canonical rows; NaN where
    NULL). ``damping``: the grid's factor for those rows, so a ruled line the map calls a pen is no rival: the grid's
    damping of the band (``page/grid.py: BandDamping``, read where it is spread), or a function giving the factor
    at some columns. ``row_offset``: the canonical row of ``evidence``'s first (a map of one track's band)."""
    cols = positions[0].size if positions else evidence.shape[1]
    out = np.zeros(cols, np.float32)
    traced = (np.stack([np.asarray(p, np.float64) for p in positions]) if positions
              else np.zeros((0, cols)))
    spread = read_where_spread(damping, lo, hi)
    for c0 in range(0, cols, CHUNK):
        c1 = min(cols, c0 + CHUNK)
        rows = slice(lo - row_offset, hi + 1 - row_offset)
        if damping is None or spread:
            band, table = compiled_reading(evidence, (rows, slice(c0, c1)))
        else:  # a factor given at the columns: multiplied here, rounded to the map's float32 as NumPy did in place
            band = np.asarray(evidence[rows, c0:c1], np.float32)
            band = (band * np.asarray(damping(np.arange(c0, c1)), np.float64)).astype(np.float32)
            table = np.zeros(1, np.float32)  # not read: the band is values
        # the rows each curve covers (|row - position| <= keep_px) taken out, the largest of the rest per column
        # (compiled: ``track_scans.py``)
        strongest_uncovered(band, table, *damping_arguments(damping if spread else None), c0,
                            np.ascontiguousarray(traced[:, c0:c1]), lo, float(keep_px), out[c0:c1])
    return out


def smoothed(x: np.ndarray, k: int = CONFIDENCE_COLS) -> np.ndarray:
    """``x`` averaged over ``k`` columns (its ends repeated)."""
    return np.convolve(np.pad(x.astype(np.float64), k // 2, mode="edge"), np.ones(k) / k, mode="valid")


def nearest_apart(position: np.ndarray, others: list[np.ndarray], width: float) -> np.ndarray:
    """Per column, the distance to the nearest of ``others`` (NaN where NULL), in track widths, at most
    :data:`FAR`."""
    out = np.full(position.size, FAR)
    for o in others:
        with np.errstate(invalid="ignore"):
            d = np.abs(position - o) / width
        out = np.where(np.isfinite(d), np.minimum(out, d), out)
    return out


def ink_at_path(maps: list, position: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Per column, the largest of ``maps`` (canonical maps of other line styles) at the row ``position`` rounds to,
    where it lies within rows ``lo``..``hi`` (the track's); 0 where NULL or none. Read ``CHUNK`` columns at a time,
    each chunk's rows between its highest and lowest path row in one read."""
    out = np.zeros(position.size, np.float32)
    cols = np.flatnonzero(np.isfinite(position))
    rows = np.rint(position[cols]).astype(np.int64)
    inside = (rows >= lo) & (rows <= hi)
    cols, rows = cols[inside], rows[inside]
    for m in maps:
        for k in range(0, cols.size, CHUNK):
            c, r = cols[k : k + CHUNK], rows[k : k + CHUNK]
            r0, c0 = int(r.min()), int(c[0])
            band = np.asarray(m[r0 : int(r.max()) + 1, c0 : int(c[-1]) + 1], np.float32)
            out[c] = np.maximum(out[c], band[r - r0, c - c0])
    return out


def ink_duty(position: np.ndarray, ink: np.ndarray | None, cols: int = DUTY_COLS) -> tuple[np.ndarray, float]:
    """The pen's pattern under the path: per column, the share of the still columns among it and ``cols // 2`` either
    side whose pixel at the path, or one either side across, is ink (``pen_pattern.inked_columns``: a column where the trace
    moves fast is left out, as there), and that share over the whole log (the curve's own duty). A column with fewer
    than ``DUTY_MIN_STILL`` still columns around it reads the curve's duty; a curve with fewer than
    ``pen_pattern.MIN_STILL_COLS`` still columns in all, or no ink map (``ink`` None), reads 1 throughout: no gap
    seen."""
    ones = np.ones(position.size, np.float32)
    if ink is None:
        return ones, 1.0
    still, inked = inked_columns(position, ink)
    n = int(still.sum())
    if n < MIN_STILL_COLS:
        return ones, 1.0
    whole = float(inked[still].mean())
    half = cols // 2
    c_still = np.concatenate([[0], np.cumsum(still)])
    c_inked = np.concatenate([[0], np.cumsum(inked)])
    i = np.arange(position.size)
    a, b = np.clip(i - half, 0, position.size), np.clip(i + half + 1, 0, position.size)
    k_still = c_still[b] - c_still[a]
    k_inked = c_inked[b] - c_inked[a]
    with np.errstate(invalid="ignore", divide="ignore"):
        local = np.where(k_still >= DUTY_MIN_STILL, k_inked / np.maximum(k_still, 1), whole)
    return local.astype(np.float32), whole


def trace_signals(trace, spec, positions: list[np.ndarray], same_style: list[np.ndarray], rival: np.ndarray,
                  on_line: np.ndarray, identity: np.ndarray | None, max_gap_px: int,
                  stroke_px: float = 0.0, other_style: np.ndarray | None = None,
                  duty: tuple[np.ndarray, float] | None = None) -> dict[str, np.ndarray]:
    """The signals of one trace (module docstring). ``positions``: the other curves of its track; ``same_style``:
    those of them in its line style; ``rival``: :func:`rival_strength` of its track; ``on_line``: per column,
    whether the trace lies on a printed line; ``identity``: the margin of its naming, None where it is alone;
    ``stroke_px``: its stroke's width (:func:`stroke_width`; 0 where none was measured); ``other_style``: other
    styles' evidence at its path (:func:`ink_at_path`; None: none); ``duty``: :func:`ink_duty` of its path (None:
    no ink map, 1 throughout)."""
    width = max(spec.track_width, 1.0)
    pos = trace.position
    finite = np.isfinite(pos)
    strength = trace.signals.get("strength", np.zeros(pos.size, np.float32)) if trace.signals else \
        np.zeros(pos.size, np.float32)
    support = column_confidence(strength, trace.observed, pos, max_gap_px)
    edge = np.minimum(np.abs(pos - spec.track_lo), np.abs(pos - spec.track_hi)) / width
    fraction = spec.fraction_of(pos) + trace.wraps
    step = np.abs(np.diff(fraction))
    slope = np.zeros(pos.size)
    with np.errstate(invalid="ignore"):
        slope[1:] = np.fmax(slope[1:], step)
        slope[:-1] = np.fmax(slope[:-1], step)
    run_cols = np.zeros(pos.size, np.float32)
    run_strength = np.zeros(pos.size, np.float32)
    for a, b in zip(*true_runs(finite)):
        run_cols[a:b] = min(b - a, RUN_REACH) / RUN_REACH
        run_strength[a:b] = float(np.mean(np.nan_to_num(strength[a:b])))
    read = np.nan_to_num(strength)[finite]
    near = np.lib.stride_tricks.sliding_window_view(np.pad(fraction, WIGGLE_COLS, constant_values=np.nan),
                                                    2 * WIGGLE_COLS + 1)
    with np.errstate(invalid="ignore"):  # a window without a value: NaN, no wiggle (fmax/fmin skip NaN, silently:
        # ``warnings``' filters are the process's, no place to silence NaN-max's warning where curves run in threads)
        wiggle = np.nan_to_num(np.fmax.reduce(near, axis=1) - np.fmin.reduce(near, axis=1))
    wiggle = np.clip(wiggle, 0.0, 1.0)
    out = {
        "wiggle": wiggle.astype(np.float32),
        "curve_wiggle": np.full(pos.size, float(np.median(wiggle[finite])) if finite.any() else 0.0, np.float32),
        "stroke": np.full(pos.size, stroke_px / width, np.float32),
        "unseen": np.minimum(distance_to_true(trace.observed) / max(max_gap_px, 1), 1.0).astype(np.float32),
        "curve_strength": np.full(pos.size, float(np.median(read)) if read.size else 0.0, np.float32),
        "curve_null": np.full(pos.size, 1.0 - float(finite.mean()), np.float32),
        "strength": np.nan_to_num(strength).astype(np.float32),
        "run_cols": run_cols,
        "run_strength": run_strength,
        "support": support.astype(np.float32),
        "rival": smoothed(rival).astype(np.float32),
        "neighbour": nearest_apart(pos, positions, width).astype(np.float32),
        "same_style": nearest_apart(pos, same_style, width).astype(np.float32),
        "edge": np.clip(np.nan_to_num(edge, nan=FAR), 0.0, FAR).astype(np.float32),
        "on_line": on_line.astype(np.float32),
        "slope": np.clip(np.nan_to_num(slope), 0.0, 1.0).astype(np.float32),
        "to_null": np.minimum(distance_to_true(~finite), NULL_REACH).astype(np.float32) / NULL_REACH,
        "backup": (trace.wraps != 0).astype(np.float32),
        "level_pinned": np.asarray(trace.signals.get("level_pinned", np.ones(pos.size)), np.float32)
        if trace.signals else np.ones(pos.size, np.float32),
        "level_open": np.asarray(trace.signals.get("level_open", np.zeros(pos.size)), np.float32)
        if trace.signals else np.zeros(pos.size, np.float32),
        "identity_margin": (np.full(pos.size, ALONE_NATS) if identity is None else np.minimum(identity, ALONE_NATS))
        .astype(np.float32),
        "other_style": (np.zeros(pos.size, np.float32) if other_style is None
                        else np.asarray(other_style, np.float32)),
        "duty": np.ones(pos.size, np.float32) if duty is None else np.asarray(duty[0], np.float32),
        "curve_duty": np.full(pos.size, 1.0 if duty is None else duty[1], np.float32),
    }
    for name in DOUBTS + ("hidden_fill", "borrowed_map"):
        out[name] = ((trace.flags & BIT[name]) != 0).astype(np.float32)
    return out


def stroke_width(ev, position: np.ndarray, observed: np.ndarray, lo: int, hi: int, offset: int) -> float:
    """The median width, in pixels across, of the run of ``ev`` (rows ``offset`` on) at or over ``STROKE_EVIDENCE``
    that holds the path, over every 4th column the curve was seen on within rows [lo, hi]; 0 where there is none.
    The columns are read ``CHUNK`` at a time, each chunk's rows in one read (one column a read was 7,400 reads of a
    coded map on KGS, 0.1 s)."""
    cs = np.flatnonzero(observed & np.isfinite(position))[::4]
    at = np.rint(position[cs]).astype(np.int64) - lo  # the path's row in each column (half to even, as round())
    widths = []
    for k in range(0, cs.size, CHUNK):
        c, r = cs[k : k + CHUNK], at[k : k + CHUNK]
        stroke = np.asarray(ev[lo - offset : hi + 1 - offset, c], np.float32) >= STROKE_EVIDENCE
        inside = np.flatnonzero((r >= 0) & (r < stroke.shape[0]))
        on = inside[stroke[r[inside], inside]]  # the columns whose path row is on the stroke
        stroke, r = stroke[:, on], r[on]
        row = np.arange(stroke.shape[0])[:, None]
        below = np.where(~stroke & (row > r), row, stroke.shape[0]).min(axis=0, initial=stroke.shape[0])
        above = np.where(~stroke & (row < r), row, -1).max(axis=0, initial=-1)
        widths.append(below - (above + 1))
    widths = np.concatenate(widths) if widths else np.zeros(0, np.int64)
    return float(np.median(widths)) if widths.size else 0.0


def scan_signals(traces: list, curves: list, evidence_by_class: dict, by_curve: dict, grid, params,
                 identity: dict[int, np.ndarray], ink: np.ndarray | None = None,
                 read_on: dict[int, int] | None = None, unnamed: frozenset[int] = frozenset()) -> None:
    """Every trace's signals (in place: ``Trace.signals``), every pass run. ``by_curve``: the curves that follow
    their own ink's map (``all_curves.trace_all``); ``identity``: the naming margin of the curves in a same-style
    group, by index; ``ink``: the scan's darkness in the canonical frame (uint8), where the pen's pattern under each
    path is read (:func:`ink_duty`; None: none); ``read_on``: the class whose map a curve was traced on where that
    is not its own (``borrowed_map.borrowed_maps``): its signals read that map, and it is no other style's map to it;
    ``unnamed``: the curves read from one map whose pens the ink did not clearly name (the pass ``pen_naming``)."""
    from core.digitize.rules.riding import on_grid_line

    read_on = read_on or {}

    def scanned(i: int) -> tuple:  # the map and rows curve i's rival and stroke are read from, and its track's curves
        spec = curves[i]
        mates = [j for j, o in enumerate(curves) if j != i and o.shares_track_with(spec)]
        lo, hi = spec.track_rows(grid.shape[0] if grid is not None else None)
        if i in by_curve:
            offset, band = by_curve[i][0], by_curve[i][1]
            lo, hi = max(lo, offset), min(hi, offset + band.shape[0] - 1)
            ev = band
        else:
            klass = read_on.get(i, spec.klass)
            offset, ev = 0, evidence_by_class.get(klass, evidence_by_class.get(0))
            lo, hi = max(lo, 0), min(hi, ev.shape[0] - 1)
        return ev, lo, hi, offset, mates, TOLERANCE_SHARE * spec.track_width

    reads = [scanned(i) for i in range(len(traces))]
    # the curves of one style in one track (KGS's DT and LTEN) read the same rival: the same map, rows, tolerance and
    # traced curves (a row is covered by any of them: their order changes nothing), read once
    # ... but of curves read from one map whose naming is in doubt (``unnamed``), neither explains the other's stroke:
    # each could be on the other's, so the other's stroke is its runner-up
    def explaining(i: int) -> list[int]:
        return [i] + [j for j in reads[i][4] if not (i in unnamed and j in unnamed)]

    keys = [(i,) if i in by_curve else (id(ev), lo, hi, keep, frozenset(explaining(i)))
            for i, (ev, lo, hi, _, mates, keep) in enumerate(reads)]

    def rival(i: int) -> np.ndarray:
        ev, lo, hi, offset, mates, keep = reads[i]
        damping = None if grid is None else grid.band_damping(slice(lo, hi + 1), params.grid_floor)
        return rival_strength(ev, lo, hi, [traces[j].position for j in explaining(i)], keep, damping, offset)

    rivals = once_per_key(rival, keys)

    def other_maps(i: int) -> list:  # the maps of the other line styles in curve i's track (none for own-ink curves)
        if i in by_curve:
            return []
        own = reads[i][0]
        mine = read_on.get(i, curves[i].klass)
        klasses = sorted({curves[j].klass for j in reads[i][4] if j not in by_curve and curves[j].klass != mine})
        maps = [evidence_by_class.get(k) for k in klasses]
        return [m for m in maps if m is not None and m is not own]  # a map for every style, not one for all

    def read(i: int) -> np.ndarray:  # one curve's signals: it reads every trace's place and writes none
        tr, spec = traces[i], curves[i]
        ev, lo, hi, offset, mates, _ = reads[i]
        others = [traces[j].position for j in mates]
        mine = read_on.get(i, spec.klass)  # the curves read from one map are of one style to the signals
        same = [traces[j].position for j in mates if read_on.get(j, curves[j].klass) == mine]
        on_line = on_grid_line(tr.position, grid, spec) if grid is not None else np.zeros(tr.position.size, bool)
        maps = other_maps(i)
        other = ink_at_path(maps, tr.position, *spec.track_rows(maps[0].shape[0])) if maps else None
        return trace_signals(tr, spec, others, same, rivals[i], on_line, identity.get(i), params.max_gap_px,
                             stroke_width(ev, tr.position, tr.observed, lo, hi, offset), other,
                             ink_duty(tr.position, ink))

    for tr, signals in zip(traces, in_order(read, range(len(traces)))):
        tr.signals = signals
