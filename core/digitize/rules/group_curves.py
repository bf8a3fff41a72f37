"""The curves of one line style in one track traced jointly through their crossings, as a scan's traces.

``core/digitize/trace/group.py`` finds the joint paths; this turns each into a :class:`Trace` with the same per-curve
doubts a lone curve's path gets (``rules/curve.py``: border and grid rides, gaps) and, on a steep stroke, the value at
the centre of the whole stroke rather than the piece the joint tracer took (``_stroke_centred``). Called by
``rules/all_curves.py``, which decides which curves are traced jointly.
"""

from __future__ import annotations

import numpy as np

from core.common.runs import distance_to_true, true_runs
from core.digitize.page.grid import Grid
from core.digitize.rules.confidence import column_confidence
from core.digitize.rules.curve import _rides
from core.digitize.rules.passes import BIT
from core.digitize.rules.stroke_values import steep_gap, stroke_cap, stroke_runs, weighted_centre
from core.digitize.trace.params import Trace, TraceParams
from core.io.calibration import CurveSpec


def trace_group_curves(evidence_full: np.ndarray, specs: list[CurveSpec], params: TraceParams,
                       grid: Grid | None = None) -> list[Trace]:
    """The curves of one line style in one track (same ``track``, none wrapping), traced jointly."""
    from core.digitize.trace.group import GroupParams, trace_group

    rows_total, cols = evidence_full.shape
    lo, hi = specs[0].track_rows(rows_total)
    ev = evidence_full[lo : hi + 1].astype(np.float32)
    damping = grid.damping(slice(lo, hi + 1), params.grid_floor) if grid is not None else None
    gp = GroupParams(threshold=params.threshold, max_gap_px=params.max_gap_px)
    pos, observed, conf = trace_group(ev, [s.klass for s in specs], gp, damping)
    out = []
    for k, s in enumerate(specs):
        # a curve lost for a few columns is carried on at its last velocity: past the track's edge that is a
        # curve gone off scale (KGS: DT carried to 192.5 on its 140-40 scale), no reading
        seen = observed[k].copy()
        p = np.where((pos[k] >= 0) & (pos[k] <= ev.shape[0] - 1), pos[k] + lo, np.nan)
        flags = np.zeros(cols, np.uint32)
        riding = _rides(p, seen, s, grid, params, flags)  # border_ride, grid_ride
        seen &= ~riding
        gone = riding.copy()
        if params.runs("gap"):
            far = distance_to_true(seen) > params.max_gap_px
            gone |= far
            flags[far & ~riding] |= BIT["gap"]
        if params.refine_runs and params.stroke_gaps:  # the value on a steep stroke read in pieces: the rides above
            # keep the joint tracer's run, as they were chosen on it
            centred = _stroke_centred(ev, pos[k], observed[k], params.threshold)
            p = np.where(np.isfinite(p), centred + lo, p)
        p = np.where(gone, np.nan, p)
        tr = Trace(s.mnemonic, p, np.zeros(cols, np.int64), column_confidence(conf[k], seen, p, params.max_gap_px),
                   seen, flags=flags)
        tr.signals = {"strength": conf[k].astype(np.float32)}
        out.append(tr)
    return out


LOST_COLS = 2  # a joint trace lost for at most this many columns between two it took a run in is read between them


def _stroke_centred(ev: np.ndarray, pos: np.ndarray, observed: np.ndarray, threshold: float) -> np.ndarray:
    """A joint trace's rows (``pos``, the centre of the run it took in each column) on a steep stroke: the centre of
    the whole stroke in the column, its breaks bridged (``rules/stroke_values.py: stroke_runs``, ``steep_gap``), as a lone
    curve's path is refined. The joint tracer takes one run of a column, and where the network reads a steep
    stroke in pieces which piece it takes moves with the scan's phase (KGS's sonic shifted by a pixel). A column or
    two it took no run in (:data:`LOST_COLS`; a steep stroke's pieces outnumber the runs it keeps) lies between
    the columns either side: the tracer carries a lost curve on at its velocity, which on a steep stroke overshoots
    by the stroke's turn (KGS's sonic: 2-3 % of its scale, where the reading shifted a pixel found the run)."""
    rows, cols = ev.shape
    out = pos.copy()
    seen = observed & np.isfinite(pos)
    starts, stops = true_runs(~seen)
    short = (starts > 0) & (stops < cols) & (stops - starts <= LOST_COLS)
    starts, stops = starts[short], stops[short]
    for j in range(LOST_COLS):  # the j-th column of each short loss, on the line from the column before to the one after
        has = stops - starts > j
        at, before, after = starts[has] + j, starts[has] - 1, stops[has]
        ok = np.isfinite(pos[at])
        at, before, after = at[ok], before[ok], after[ok]
        out[at] = pos[before] + (pos[after] - pos[before]) * (at - before) / (after - before)
        seen[at] = True
    gap = steep_gap(out)
    steep = seen & (gap >= 1)
    if not steep.any():
        return out
    c = np.flatnonzero(steep)
    path = np.clip(np.rint(out[c]), 0, rows - 1).astype(np.int64)
    inked = ev >= threshold
    first, last = stroke_runs(inked, path, stroke_cap(1, rows), gap[c], columns=c)
    on = inked[path, c]  # a row between two columns that is paper stays where it lies
    c, first, last = c[on], first[on], last[on]
    out[c] = weighted_centre(ev, first, last, out[c], columns=c)
    return out
