"""The rules after the path, as one ordered list of passes over a scan's traces.

A path says where a curve's evidence leads; the passes say which of it is a reading and how far it is trusted. Each
pass reads the traces (and the page: its grid, its ink, the evidence) and does one thing over the columns it names:

- **no reading**: the value is taken away (NULL in the LAS: the ink does not show one);
- **doubt**: the value is written and the pass's flag is set there, one of the signals the calibrated confidence
  is computed from (``core/digitize/rules/confidence.py``): how often such a value is right was measured on held-out
  prints, not set by hand;
- **fill**: a value is given where the path had none (a curve hidden under its neighbour's stroke).

Every column a pass acted on carries the pass's bit in ``Trace.flags``: the warnings and the QC picture name the
reasons (:func:`reasons`), and the calibrator reads the flags. :data:`PASSES` is the order they run in, from the
per-curve passes (``rules/curve.py``, ``rules/group_curves.py: trace_group_curves``) to the scan's
(``rules/all_curves.py: trace_all``), the picture's (``job/pipeline.py``) and the values' (``output/values.py``);
``TraceParams.passes_off`` switches any of them off by name, which is how each earns its place
(``docs/accuracy.md``, *What each pass buys*).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np


class Effect(Enum):
    NULL = "no reading"
    DOUBT = "doubted"
    FILL = "filled"


@dataclass(frozen=True)
class Pass:
    name: str
    stage: str  # where it runs: "curve" (one curve's path), "scan" (every curve of the scan), "picture", "values"
    effect: Effect
    reads: str  # what it looks at
    reason: str  # what it says of a column it acted on (warnings, the QC picture)


PASSES: tuple[Pass, ...] = (
    Pass("border_ride", "curve", Effect.NULL, "the path's positions and where it was seen; the track's ends",
         "rides the track's border"),
    Pass("grid_ride", "curve", Effect.NULL, "the path, where it was seen; the printed grid's lines along depth and the "
         "band's ink (a stretch on a line inside the log, seen along most of it, is written: rules/riding.py)",
         "rides a grid line"),
    Pass("unresolved_wrap", "curve", Effect.NULL, "a wrapping curve's moves across its track and the ink at its "
         "edges (trace/wraps.py)", "crosses its track by a way the ink does not show"),
    Pass("gap", "curve", Effect.NULL, "where the path was seen, and the grid's lines across depth",
         "not seen for longer than a bridged gap"),
    Pass("backup_level", "curve", Effect.DOUBT, "a backup-scale curve's crossings of its track's edges "
         "(trace/wraps.py: two_level_wraps)", "main or backup scale uncertain"),
    Pass("second_pass", "curve", Effect.NULL, "where the path rode a line: the path traced again off every line; "
         "what it still reads on a line there, open at the log's start or end (inside the log it is written)",
         "on a line beside a ride"),
    Pass("ink_level", "curve", Effect.DOUBT, "the ink colour under the path of a curve whose backup scale has an "
         "ink of its own (rules/ink_levels.py)", "main or backup scale uncertain between its inks"),
    Pass("borrowed_map", "scan", Effect.FILL, "a dashed or dotted curve's own map over its track, empty, and the "
         "other broken style's strokes its curves leave (rules/borrowed_map.py)", "read from the other broken pen's "
         "map, where the network names its pen"),
    Pass("pen_naming", "scan", Effect.DOUBT, "the marks and gaps in the ink along the traces read from one broken "
         "style's map (rules/borrowed_map.py: pattern)", "which pen is which is uncertain: their marks and gaps are "
         "of like length"),
    Pass("neighbour_ride", "scan", Effect.NULL, "every curve of the track, each style's map along the trace and "
         "the pen's pattern in the ink (rules/riding.py, rules/pen_pattern.py; a stroke only the maps or only the ink "
         "give to the other curve is written)", "rides another curve's stroke"),
    Pass("hidden_fill", "scan", Effect.FILL, "every curve of the track: a NULL stretch whose ends lie on a "
         "neighbour's line", "hidden under another curve's stroke"),
    Pass("identity", "scan", Effect.DOUBT, "the curves of one line style in one track, over each stretch between "
         "their meetings (trace/crossings.py: settle_identities)", "which curve is which after a meeting is "
         "uncertain"),
    Pass("steep", "scan", Effect.DOUBT, "the trace's move from column to column", "drawn steeper than a row places"),
    Pass("unclaimed_stroke", "scan", Effect.DOUBT, "every curve of the track and its style's map "
         "(rules/unclaimed.py)", "beside a neighbour while a stroke of its own style goes untraced"),
    Pass("released_ruling", "scan", Effect.DOUBT, "the path's straightness, the lines the grid's still-curve test "
         "released that look ruled (page/still_curves.py: ruled_released) and the curve's own style untraced elsewhere "
         "in its track (the signals' rival; rules/released_ruling.py: along_released_ruling)",
         "lies straight along a ruled line the grid took for a curve lying still, its own stroke elsewhere"),
    Pass("line_detour", "scan", Effect.DOUBT, "the path's jumps and the lines the grid's still-curve test released "
         "(rules/detour.py: line_detours)", "jumps onto a ruled line the grid took for a curve lying still, and off it"),
    Pass("outside_body", "picture", Effect.NULL, "the picture's log body (page/sections.py)", "outside the log body"),
    Pass("off_scale", "values", Effect.NULL, "the value against the printed scale", "beyond its printed scale"),
    Pass("far_from_column", "values", Effect.NULL, "the depth sample against the traced columns",
         "no traced column near the sample"),
)

BY_NAME: dict[str, Pass] = {p.name: p for p in PASSES}
BIT: dict[str, int] = {p.name: 1 << i for i, p in enumerate(PASSES)}
DOUBTS: tuple[str, ...] = tuple(p.name for p in PASSES if p.effect is Effect.DOUBT)


def check_names(names) -> frozenset[str]:
    """``names`` as a set of pass names; raises ValueError naming any that is no pass."""
    names = frozenset(names)
    unknown = sorted(names - BY_NAME.keys())
    if unknown:
        raise ValueError(f"no pass named {', '.join(unknown)}; the passes: {', '.join(BY_NAME)}")
    return names


def no_reading(trace, where: np.ndarray, name: str) -> None:
    """Take the value away over the columns ``where`` (in place): no position, not seen, confidence 0, and the
    pass's bit set there."""
    if not np.any(where):
        return
    trace.position[where] = np.nan
    trace.observed[where] = False
    trace.confidence[where] = 0.0
    trace.flags[where] |= BIT[name]


def doubt(trace, where: np.ndarray, name: str) -> None:
    """Flag the columns ``where`` with the pass's bit (in place); the value stays, the confidence reads the flag."""
    trace.flags[np.asarray(where, bool) & np.isfinite(trace.position)] |= BIT[name]


def mark(trace, where: np.ndarray, name: str) -> None:
    """Set the pass's bit over the columns ``where`` (in place), whatever they hold: a fill, a doubt of a NULL."""
    trace.flags[np.asarray(where, bool)] |= BIT[name]


def flagged(flags: np.ndarray, name: str) -> np.ndarray:
    """Per column, whether the pass ``name`` acted there."""
    return (np.asarray(flags) & BIT[name]) != 0


def reasons(flags: np.ndarray, where: np.ndarray | None = None, effect: Effect | None = None
            ) -> list[tuple[str, float]]:
    """(pass name, share of the columns ``where`` it acted on), the most frequent first; ``effect`` keeps the
    passes of one kind (the doubts behind a low confidence, the rules behind a NULL)."""
    flags = np.asarray(flags)
    sel = flags if where is None else flags[np.asarray(where, bool)]
    if sel.size == 0:
        return []
    out = [(p.name, float(np.mean((sel & BIT[p.name]) != 0))) for p in PASSES
           if effect is None or p.effect is effect]
    return sorted([r for r in out if r[1] > 0], key=lambda r: -r[1])
