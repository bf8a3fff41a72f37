"""Every calibrated curve of a scan traced, each in the light of the others.

One curve is traced by ``core/digitize/rules/curve.py``; the curves of a track are not independent. Curves of one line
style sharing a track are traced jointly through their crossings (``core/digitize/trace/group.py``) and named by
the calibration's order (``core/digitize/trace/crossings.py``); a curve whose style another wrapping curve of the track
shares traces on what that curve's stroke leaves (``line_removal.remove_line``); a dashed or dotted curve whose own map is empty
over its track, where the other broken style's map holds strokes its curves leave, is read from that map on what they
leave (``borrowed_map.borrowed_maps``: the network named its pen the other broken one); a curve riding the stroke of a curve of
another style is no reading there (``_drop_neighbour_rides``); a curve lost under a neighbour's stroke takes
that line (``_fill_hidden``); and, every curve placed, a value on a stroke steeper than a row can place or drawn
steeper than a row can place is doubted (``confidence.steep_columns``); then each column's confidence is calibrated
(``confidence_model.py``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.common.runs import true_runs
from core.common.threads import in_order, once_per_key
from core.digitize.evidence.style import style_evidence
from core.digitize.page.grid import Grid
from core.digitize.rules.borrowed_map import borrowed_maps
from core.digitize.rules.confidence import capped_by_flags, steep_columns
from core.digitize.rules.confidence_model import calibrator_for
from core.digitize.rules.curve import trace_curve
from core.digitize.rules.detour import line_detours
from core.digitize.rules.group_curves import trace_group_curves
from core.digitize.rules.ink_levels import levels_by_ink
from core.digitize.rules.line_removal import remove_line
from core.digitize.rules.passes import BIT, doubt, flagged, no_reading
from core.digitize.rules.pen_pattern import unbroken_stroke
from core.digitize.rules.released_ruling import along_released_ruling
from core.digitize.rules.riding import neighbour_rides, strength_along
from core.digitize.rules.signals import scan_signals
from core.digitize.rules.stroke_values import written_smoothed
from core.digitize.rules.unclaimed import beside_an_unclaimed_stroke, unclaimed_columns
from core.digitize.trace.params import Trace, TraceParams
from core.io.calibration import Calibration, CurveSpec


def trace_all(evidence_by_class: dict[int, np.ndarray], calib: Calibration, params: TraceParams | None = None,
              grid: Grid | None = None, by_curve: dict[int, tuple] | None = None,
              ink: np.ndarray | None = None, body_start: int = 0) -> list[Trace]:
    """One trace per calibration curve; ``evidence_by_class`` maps class → canonical map (0 = any curve).
    ``ink``: the scan's darkness in the canonical frame (uint8), where a pen's pattern is checked
    (``core/digitize/rules/pen_pattern.py``); None checks none.

    ``body_start``: the first column of log body (``core/digitize/page/sections.py``), where same-style curves are
    named.

    ``by_curve`` maps a curve's index to its own evidence (first row, map of its track's band, whether the
    grid damps it, and the main and backup scales' ink maps where the print draws them in two inks, else None):
    a curve told apart by its ink colour (``core/io/colour.py``) follows that alone, outside any joint group.

    Curves of one line style sharing one track (a multiclass model gives them one map) are traced
    together, through their crossings (``core/digitize/trace/group.py``), and named by the calibration order
    (``core/digitize/trace/crossings.py``). Every other curve follows its own class's map; where two of those share a
    class and a track (one wraps), each one's stroke is explained away before the next is traced.

    Class-blind evidence (the classical tracer's ink, key 0) is left alone: there every curve of a
    track follows the strongest line. Explaining it away was tried and measured worse: on the demo
    logs the classical median r fell from 0.578 to 0.104, since without line styles the second and
    third lines land on the wrong curves, where the strongest line often correlates with them all.
    """
    try:
        return _traced(evidence_by_class, calib, params, grid, by_curve, ink, body_start)
    finally:  # the bands' dampings the passes shared (``Grid.band_damping``) are the scan's tracing's alone
        if grid is not None:
            grid.let_go_of_dampings()


def _chains(rest: list[int], curves: list, evidence_by_class: dict[int, np.ndarray]) -> list[list[int]]:
    """The curves traced alone (``rest``, in the calibration's order) cut into chains that do not depend on each
    other. A curve reads its class's map with the lines of the earlier curves of its class explained away wherever
    one of them shares a track with a later one of that class (``_traced``'s ``chain``): such a class stays one chain,
    in order; every other curve reads the map as it is and is a chain of its own. The same traces as one chain of
    all, whoever takes which.

    Why: KGS's GR, CALI and SPHI were one chain, 2.1 s of the trace stage's 2.4 s beside DT and LTEN's joint trace
    on the other core, though none of them reads another's (docs/benchmarks.md, issue #64, twelfth round)."""
    kept = {curves[i].klass for n, i in enumerate(rest)  # classes whose curves read each other's work
            if _explained_for_later(curves[i], [curves[j] for j in rest[n + 1:]], evidence_by_class)}
    chains = [[i for i in rest if curves[i].klass == k] for k in dict.fromkeys(curves[i].klass for i in rest)
              if k in kept]
    return chains + [[i] for i in rest if curves[i].klass not in kept]


def _explained_for_later(spec: CurveSpec, later: list[CurveSpec], evidence_by_class: dict[int, np.ndarray]) -> bool:
    """Whether a curve's traced line is explained away from its class's map for a later curve of that class that
    shares its track (a map of its own class only)."""
    return spec.klass in evidence_by_class and any(s.klass == spec.klass and s.shares_track_with(spec) for s in later)


def _traced(evidence_by_class: dict[int, np.ndarray], calib: Calibration, params: TraceParams | None, grid: Grid | None,
            by_curve: dict[int, tuple] | None, ink: np.ndarray | None, body_start: int) -> list[Trace]:
    """:func:`trace_all`'s work."""
    from core.digitize.trace.crossings import order_at_top, same_style_groups

    params = params or TraceParams()
    by_curve = by_curve or {}
    traces: list[Trace | None] = [None] * len(calib.curves)
    identity: dict[int, np.ndarray] = {}  # a same-style group's curves: the margin of their naming per column

    def own_ink(i: int) -> None:  # a curve told apart by its ink follows its own map
        offset, band, damp, inks = by_curve[i]
        spec = calib.curves[i]
        # a damped colour map is ink a grey or same-tinted grid shares: on a grid line it is the grid's own
        own_params = replace(params, observe_on_grid=False)
        own_params = own_params if spec.klass == 1 else own_params.broken()
        traces[i] = trace_curve(band, spec, own_params, grid if damp else None, row_offset=offset)
        if inks is not None:  # its backup scale in an ink of its own: the ink under the path names the scale
            levels_by_ink(traces[i], spec, *inks, offset, own_params.max_gap_px)

    def joint(idx: list[int]) -> None:  # a same-style group, traced through its crossings and named
        ev = style_evidence(evidence_by_class, calib.curves[idx[0]], calib.curves, params.unclaimed_styles)
        group = trace_group_curves(ev, [calib.curves[i] for i in idx], params, grid)
        order_at_top(group, [calib.curves[i] for i in idx], body_start)
        margins = _settled(group, [calib.curves[i] for i in idx], params, body_start)
        for i, tr, m in zip(idx, group, margins):
            traces[i] = tr
            identity[i] = m

    groups = [idx for idx in same_style_groups(calib.curves, skip=by_curve)
              if calib.curves[idx[0]].klass in evidence_by_class]
    placed = set(by_curve).union(*groups)
    # the rest follow their own class's map; where another curve of the same class shares the track (one of
    # them wraps, so they are no joint group), each traced stroke is explained away before the next: that class's
    # curves one chain, in the calibration's order (``_chains``)
    rest = [i for i in range(len(calib.curves)) if i not in placed]

    def chain(members: list[int]) -> None:
        explained: dict[int, np.ndarray] = {}
        for n, i in enumerate(members):
            spec = calib.curves[i]
            own = spec.klass in evidence_by_class
            ev = (style_evidence(evidence_by_class, spec, calib.curves, params.unclaimed_styles) if own
                  else evidence_by_class.get(0))
            if ev is None:
                raise ValueError(f"no evidence for class {spec.klass}")
            own_params = params if spec.klass == 1 or not own else params.broken()
            traces[i] = trace_curve(explained.get(spec.klass, ev), spec, own_params, grid)
            if _explained_for_later(spec, [calib.curves[j] for j in members[n + 1:]], evidence_by_class):
                if spec.klass not in explained:
                    explained[spec.klass] = ev.astype(np.float32, copy=True)
                remove_line(explained[spec.klass], traces[i].position, core_px=params.refine_radius)

    # each piece reads the maps and writes only its own curves' traces: spread over the process's threads
    # (``core/common/threads.py``), the groups first; the traces are the same as one after another
    pieces = [lambda idx=idx: joint(idx) for idx in groups] \
        + [lambda members=members: chain(members) for members in _chains(rest, calib.curves, evidence_by_class)] \
        + [lambda i=i: own_ink(i) for i in by_curve]
    in_order(lambda piece: piece(), pieces)
    # a broken pen whose own map is empty over its track, read from the other broken style's map: curve -> the class
    # whose map it was traced on, read by every pass and signal after this one
    read_on = borrowed_maps(traces, calib.curves, evidence_by_class, params, grid, set(by_curve), ink) \
        if params.ink_checks and ink is not None and params.runs("borrowed_map") else {}
    if params.ink_checks and params.runs("neighbour_ride"):
        _drop_neighbour_rides(traces, calib.curves, evidence_by_class, params, ink, read_on)
    if params.runs("hidden_fill"):
        _fill_hidden(traces, calib.curves, params)
    positions = [tr.position for tr in traces]

    def unclaimed_scan(i: int) -> tuple | None:  # what curve i's pass ``unclaimed_stroke`` reads; None: it looks not
        spec = calib.curves[i]
        ev = evidence_by_class.get(read_on.get(i, spec.klass)) if i not in by_curve else None
        if ev is None or not params.ink_checks or spec.wrap or not params.runs("unclaimed_stroke"):
            return None
        lo, hi = spec.track_rows(ev.shape[0])
        shares = [j != i and o.shares_track_with(spec) and j not in by_curve for j, o in enumerate(calib.curves)]
        return (ev, lo, hi, shares) if any(shares) else None

    scans = [unclaimed_scan(i) for i in range(len(traces))]
    # the curves of one style in one track (KGS's DT and LTEN) read the same unclaimed strokes: the same map, rows
    # and traced curves (any of them covers a row: their order changes nothing), read once
    keys = [None if sc is None else (id(sc[0]), sc[1], sc[2], frozenset([i] + np.flatnonzero(sc[3]).tolist()))
            for i, sc in enumerate(scans)]

    def strokes(i: int) -> np.ndarray:
        ev, lo, hi, shares = scans[i]
        damping = None if grid is None else grid.band_damping(slice(lo, hi + 1), params.grid_floor)
        return unclaimed_columns([positions[i]] + [p for j, p in enumerate(positions) if shares[j]], ev, lo, hi,
                                 params.threshold, damping)

    unclaimed = once_per_key(strokes, keys)

    def checked(i: int) -> None:  # with every curve's place and scale final: doubts on this curve's flags alone
        tr, spec = traces[i], calib.curves[i]
        if params.runs("steep"):
            doubt(tr, steep_columns(spec.fraction_of(tr.position) + tr.wraps), "steep")
        if scans[i] is not None:
            ev, lo, hi, shares = scans[i]
            doubt(tr, beside_an_unclaimed_stroke(i, positions, shares, ev, lo, hi, params.threshold,
                                                 unclaimed=unclaimed[i]), "unclaimed_stroke")

    in_order(checked, range(len(traces)))
    unnamed = frozenset(i for i, tr in enumerate(traces) if flagged(tr.flags, "pen_naming").any())
    scan_signals(traces, calib.curves, evidence_by_class, by_curve, grid, params, identity, ink, read_on, unnamed)
    if grid is not None and params.runs("released_ruling"):  # reads the rival the signals measured
        for tr in traces:
            doubt(tr, along_released_ruling(tr.position, grid, tr.signals["rival"]), "released_ruling")
            tr.signals["released_ruling"] = flagged(tr.flags, "released_ruling").astype(np.float32)
    if grid is not None and params.runs("line_detour"):
        for tr, spec in zip(traces, calib.curves):
            doubt(tr, line_detours(tr.position, grid, spec.track_width), "line_detour")
            tr.signals["line_detour"] = flagged(tr.flags, "line_detour").astype(np.float32)
    model = calibrator_for(params)
    for tr, spec in zip(traces, calib.curves):
        if not params.ink_checks:  # a painted mask, followed as painted: the user's labels are as sure as they are
            tr.confidence = capped_by_flags(np.isfinite(tr.position).astype(np.float32), tr.flags)
        elif model is None:  # not calibrated (the classical tracer's ink, the fit itself) or no calibrator shipped
            tr.confidence = capped_by_flags(tr.confidence, tr.flags)
        else:
            p = model.predict(tr.signals, spec.klass, spec.log, spec.wrap)
            tr.confidence = np.where(np.isfinite(tr.position), p, 0.0).astype(np.float32)
    for tr in traces:  # the values written on their strokes' quadratics, the passes and the confidence read as read
        written_smoothed(tr)
    return traces


_PER_COLUMN = ("position", "observed", "confidence", "flags")


def _settled(group: list[Trace], specs: list[CurveSpec], params: TraceParams, start: int) -> list[np.ndarray]:
    """The pass ``identity``: which trace of a same-style group each curve reads, decided over every stretch between
    the places it could change (``core/digitize/trace/crossings.py: settle_identities``; the traces' columns
    exchanged in place), the curves then named where the log starts to be sure (``order_at_top``), and each curve's
    margin per column; a column named by a margin under ``IDENTITY_DOUBT_NATS`` is doubted. Switched off, the joint
    tracer's naming stands (the margins are still measured)."""
    from core.digitize.trace.crossings import IDENTITY_DOUBT_NATS, order_at_top, settle_identities

    pos = np.stack([t.position for t in group])
    take, margin = settle_identities(pos, specs[0].track_width, np.stack([t.observed for t in group]))
    if params.runs("identity"):
        cols = np.arange(pos.shape[1])
        old = {n: np.stack([getattr(t, n) for t in group]) for n in _PER_COLUMN}
        strength = np.stack([t.signals["strength"] for t in group])
        for k, t in enumerate(group):
            for n, v in old.items():
                setattr(t, n, v[take[:, k], cols].copy())
            t.signals = {"strength": strength[take[:, k], cols].copy()}
        order_at_top(group, specs, start)  # the settled traces named (whole traces exchanged; signals with them)
        for t in group:
            doubt(t, margin < IDENTITY_DOUBT_NATS, "identity")
    return [margin.copy() for _ in group]


def _drop_neighbour_rides(traces: list[Trace], curves: list[CurveSpec], evidence_by_class: dict,
                          params: TraceParams, ink: np.ndarray | None = None, read_on: dict | None = None) -> None:
    """A curve riding the stroke of a curve of another line style in its track, where the maps see that
    style more, or a dashed or dotted one on a solid curve's unbroken ink (``ink``: the canonical darkness;
    ``core/digitize/rules/pen_pattern.py``), is written NULL there, or flagged where only the maps or only the ink
    say so (in place; ``core/digitize/rules/riding.py: neighbour_rides``). ``read_on``: the class whose map a curve
    was traced on where it is not its own (``borrowed_map.borrowed_maps``): its strength is read there, and two curves traced
    on one map were told apart by the joint tracer, not here."""
    read_on = read_on or {}
    for i, (tr, spec) in enumerate(zip(traces, curves)):
        if spec.klass not in evidence_by_class:
            continue
        own = None
        mine = read_on.get(i, spec.klass)
        for j, (other, ospec) in enumerate(zip(traces, curves)):
            if j == i or ospec.klass == spec.klass or ospec.klass not in evidence_by_class \
                    or not ospec.shares_track_with(spec) or read_on.get(j, ospec.klass) == mine:
                continue
            if own is None:
                own = strength_along(evidence_by_class[mine], tr.position)
            theirs = strength_along(evidence_by_class[ospec.klass], tr.position)
            unbroken = None
            if ink is not None and spec.klass in (2, 3) and ospec.klass == 1:
                def unbroken(lo, hi, pos=tr.position):
                    return unbroken_stroke(pos, ink, lo, hi)
            # where only the maps say so, or only the ink, the stretch is written (``neighbour_rides``: mostly right)
            ride, _ = neighbour_rides(tr.position, tr.observed, other.position, own, theirs,
                                      (spec.track_lo, spec.track_hi), unbroken)
            no_reading(tr, ride, "neighbour_ride")


def _fill_hidden(traces: list[Trace], curves: list[CurveSpec], params: TraceParams) -> None:
    """A curve lost where it runs under a neighbour's stroke takes the neighbour's line there (in place).

    Two curves of one track that read the same (a deep and a medium resistivity in a shale, a curve and its
    repeat) are drawn one over the other: the map sees the top pen only, and the other curve came out NULL
    over the whole stretch (log-decade prints: 44 % of a medium resistivity under its deep one). A NULL
    stretch longer than a bridged gap whose ends lie within ``params.hidden_px`` of another curve of the
    track, traced over the whole stretch, and that is seen apart from it within ``params.hidden_apart_cols``
    either side, is that curve's line; a stretch whose ends are apart (the curve left the track, or the map
    lost it on paper) stays NULL. Wrapping curves are left alone: their
    positions are within one scale of many."""
    for i, (tr, spec) in enumerate(zip(traces, curves)):
        if spec.wrap:
            continue
        # the unseen stretches that went NULL: from the last column seen before to the first seen after
        starts, stops = true_runs(~tr.observed)
        for a, b in zip(starts.tolist(), stops.tolist()):
            if a == 0 or b == tr.position.size or np.isfinite(tr.position[a:b]).all():
                continue
            for j, (other, ospec) in enumerate(zip(traces, curves)):
                if j == i or ospec.wrap or not ospec.shares_track_with(spec):
                    continue
                beside = other.position[a - 1 : b + 1]
                if not np.isfinite(beside).all():
                    continue
                if max(abs(tr.position[a - 1] - beside[0]), abs(tr.position[b] - beside[-1])) > params.hidden_px:
                    continue
                # ... and it joins the neighbour's line and leaves it again, seen apart from it on either side:
                # a curve that was on that line all along (a dashed curve off scale lying on a solid neighbour
                # the network calls dashed here and there) is no curve under it
                w = params.hidden_apart_cols
                before, after = slice(max(0, a - w), a), slice(b, min(tr.position.size, b + w))
                if all((np.abs(tr.position[s] - other.position[s]) > 2 * params.hidden_px)[tr.observed[s]].any()
                       for s in (before, after)):
                    tr.position[a:b] = beside[1:-1]
                    tr.flags[a:b] |= BIT["hidden_fill"]
                    break
