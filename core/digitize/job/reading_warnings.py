"""What a reading asks the user to check, said in the run's warnings (the command's lines, the summary, the QC
picture's header, the app's list): the places where a decision the tracer made could not be made from the print,
each named with its depths or curves and the fix."""

from __future__ import annotations

import numpy as np

from core.digitize.trace.params import Trace
from core.io.calibration import Calibration


def reading_warnings(traces: list[Trace], calib: Calibration, by_colour: set[int]) -> list[str]:
    """Every warning of :func:`same_style_meetings`, :func:`uncertain_levels` and :func:`unnamed_pens`, in that
    order (``by_colour``: the curves told apart by their ink colour)."""
    return same_style_meetings(traces, calib, by_colour) + uncertain_levels(traces, calib) + unnamed_pens(traces, calib)


def same_style_meetings(traces: list[Trace], calib: Calibration, by_colour: set[int]) -> list[str]:
    """Where curves of one line style in one track meet, which is which afterwards is uncertain
    (``core/digitize/trace/crossings.py``): name the depths, so the user checks them and swaps where needed. Curves told
    apart by their ink colour (``by_colour``) are not uncertain."""
    from core.digitize.trace.crossings import meeting_columns, same_style_groups

    out = []
    for idx in same_style_groups(calib.curves, skip=by_colour):
        cols = meeting_columns([traces[i] for i in idx])
        if not cols:
            continue
        depths = calib.depth_at(np.asarray(cols, np.float64))
        names = " and ".join(calib.curves[i].mnemonic for i in idx)
        shown = ", ".join(f"{d:.1f}" for d in depths[:6]) + (" …" if len(cols) > 6 else "")
        out.append(f"{names} share one line style in one track and meet at {len(cols)} place(s) ({shown} "
                   f"{calib.depth_unit}): which is which after a meeting is uncertain; check there and fix with "
                   "Swap curves over a range")
    return out


def uncertain_levels(traces: list[Trace], calib: Calibration) -> list[str]:
    """The depth ranges where a backup-scale curve's scale could not be told from the ink
    (``core/digitize/trace/wraps.py: two_level_wraps``): flagged low-confidence, named here so the user checks them."""
    from core.common.runs import true_runs

    out = []
    for tr in traces:
        if tr.level_unsure is None or not tr.level_unsure.any():
            continue
        a, b = true_runs(tr.level_unsure)
        spans = [calib.depth_at(np.array([x, y - 1], np.float64)) for x, y in zip(a, b)]
        shown = ", ".join(f"{min(s):.1f}–{max(s):.1f}" for s in spans[:6]) + (" …" if len(spans) > 6 else "")
        out.append(f"{tr.mnemonic}: main or backup scale uncertain over {shown} {calib.depth_unit} (a crossing of "
                   "the track's edge was missed); flagged low-confidence: check the QC picture there")
    return out


def unnamed_pens(traces: list[Trace], calib: Calibration) -> list[str]:
    """The broken pens of a track read from one map (``rules/borrowed_map.py``: the network named one pen as the
    other) whose marks in the ink did not say which stroke is whose (the pass ``pen_naming``): which is which is
    then a coin's guess and their values are written no surer than one (``confidence_model.DECISION_FLAGS``).
    Named here, a track at a time, so the user checks them and swaps where needed; a curve read from the other
    pen's map whose pens the marks did name is named too (its values are capped as well)."""
    from core.digitize.rules.passes import flagged

    unnamed = [i for i, tr in enumerate(traces) if flagged(tr.flags, "pen_naming").any()]
    out = []
    while unnamed:
        group = [unnamed.pop(0)]
        group += [j for j in unnamed if calib.curves[j].shares_track_with(calib.curves[group[0]])]
        unnamed = [j for j in unnamed if j not in group]
        names = " and ".join(calib.curves[i].mnemonic for i in group)
        out.append(f"{names}: read from one line style's map (the network names one broken pen as the other), and "
                   "the marks in the ink do not say which stroke is whose; flagged low-confidence: check the QC "
                   "picture and fix with Swap curves over a range")
    for tr in traces:
        if flagged(tr.flags, "borrowed_map").any() and not flagged(tr.flags, "pen_naming").any():
            out.append(f"{tr.mnemonic}: read from the other broken pen's map (the network names its pen as the "
                       "other): check the QC picture")
    return out
