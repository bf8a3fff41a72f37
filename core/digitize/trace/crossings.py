"""Which traced line is which curve: the naming rule, where identities are uncertain, the user's swap.

Curves of one line style in one track are traced jointly (``core/digitize/trace/group.py``),
which keeps the traces apart wherever their strokes are apart. Where two
strokes merge, nothing in the image says whether the curves crossed or touched
and parted. Measured on the truth of 24 synthetic logs with two same-style
curves per track (583 places where they come within 3 px): the slopes of the
two curves on either side of such a *meeting* predicted which it was only
53–64 % of the time (real curves jitter at the sample scale, so two curves a
few pixels apart cross and re-cross like random walks), and rules built on
the traces (slope continuity, a quadratic through the signed difference, the
meeting's length) were right at 53 % of 983 traced meetings: chance. So the
joint tracker's own choice stands, and the places where two such traces meet
are *reported* (:func:`meeting_columns`) for the user to check, with
:func:`swap_range` (the app's *Swap curves over a range…*) as the fix. A
curve's ink colour, where the scan has one, tells them apart for real.

Which trace is which curve at the top of the log is a convention, since the
image cannot say: the curves take the traces in calibration order from the
track's ``track[0]`` side (the first curve listed is the one nearer the
pixel of ``scale[0]`` where the log starts).
"""

from __future__ import annotations

import numpy as np

from core.common.runs import true_runs

MEET_PX = 3.0  # traces this close (px across) are meeting: their strokes merge
JOIN = 24  # meetings fewer columns apart than this are one place to check

_FIELDS = ("position", "wraps", "confidence", "observed")


def meetings(p: np.ndarray, q: np.ndarray, meet_px: float = MEET_PX) -> list[tuple[int, int]]:
    """Column runs [a, b) where two traces lie within ``meet_px`` of each other, or pass through each other
    between two columns; runs fewer than ``JOIN`` columns apart are one meeting."""
    both = np.isfinite(p) & np.isfinite(q)
    d = np.where(both, p - q, np.nan)
    close = both & (np.abs(d) <= meet_px)
    crossed = np.zeros_like(close)
    crossed[1:] = both[1:] & both[:-1] & (np.sign(d[1:]) * np.sign(d[:-1]) < 0)
    starts, stops = true_runs(close | crossed)
    joined: list[tuple[int, int]] = []
    for a, b in zip(starts.tolist(), stops.tolist()):
        if joined and a - joined[-1][1] < JOIN:
            joined[-1] = (joined[-1][0], b)
        else:
            joined.append((a, b))
    return joined


SURE_COLS = 8  # columns every trace is seen and apart from the others: where the naming rule is read


def order_at_top(traces: list, specs: list, start: int = 0) -> None:
    """Assign the traces to the curves in calibration order from the ``track[0]`` side (in place: swaps whole
    traces' data), where the log starts to be sure: the first column of ``SURE_COLS`` running at which every
    trace is seen (a solid one observed, not carried across a gap) and apart from the others by more than
    ``MEET_PX``; failing that, the first column where all are traced. The first column where all are traced
    was often one where a trace was only carried across a gap or had just been taken up on a stroke of the
    other line: on a window of the KGS sonic log the sonic and tension curves were named the wrong way round
    from there to the end. ``start``: the first column of log body (``log_sections.picked_body``); columns before
    it (a header's boxes and scale lines) name nothing, unless no column after it has every trace."""
    pos = np.stack([t.position for t in traces])
    traced = np.isfinite(pos).all(0)
    if traced[start:].any():
        traced[:start] = False
    if not traced.any():
        return
    # seen: a solid pen where it was observed (not carried across a gap); a dashed or dotted pen is unseen
    # between its dashes as a matter of course, so there, traced
    seen = np.stack([t.observed if s.klass == 1 else np.isfinite(t.position) for t, s in zip(traces, specs)])
    sure = seen.all(0) & traced
    for i in range(len(traces)):
        for j in range(i + 1, len(traces)):
            sure &= np.abs(np.where(traced, pos[i] - pos[j], 0.0)) > MEET_PX
    starts, stops = true_runs(sure)
    long_enough = starts[(stops - starts) >= SURE_COLS]
    col = int(long_enough[0]) if long_enough.size else int(np.flatnonzero(traced)[0])
    sign = 1.0 if specs[0].track[1] >= specs[0].track[0] else -1.0
    order = np.argsort(sign * pos[:, col], kind="stable")  # nearest track[0] first
    data = [{n: getattr(traces[k], n).copy() for n in _FIELDS} for k in order]
    for t, d in zip(traces, data):
        for n, v in d.items():
            setattr(t, n, v)


def same_style_groups(specs: list, skip=()) -> list[list[int]]:
    """Indices of the curves that share one line style and one track (two or more, none wrapping), in
    calibration order: the curves traced jointly and told apart here, and whose order names them.
    ``skip``: indices of curves told apart another way (by their ink colour), in no group."""
    groups: dict[tuple, list[int]] = {}
    for i, s in enumerate(specs):
        if not s.wrap and i not in skip:
            groups.setdefault((s.klass, s.track_lo, s.track_hi), []).append(i)
    return [idx for idx in groups.values() if len(idx) >= 2]


def meeting_columns(traces: list) -> list[int]:
    """The middle column of every meeting between any two of a group's traces, in depth order."""
    cols = []
    for i in range(len(traces)):
        for j in range(i + 1, len(traces)):
            cols += [(a + b) // 2 for a, b in meetings(traces[i].position, traces[j].position)]
    return sorted(cols)


def swap_range(values: dict[str, np.ndarray], a: str, b: str, depth: np.ndarray, top: float, bottom: float) -> int:
    """Swap the values of curves ``a`` and ``b`` between two depths (inclusive), in place; the user's fix
    for a crossing the tracer read wrong. Returns the number of samples swapped; raises ValueError for
    an unknown curve or a range outside the log."""
    for name in (a, b):
        if name not in values:
            raise ValueError(f"no curve {name!r} in this result")
    if a == b:
        raise ValueError("choose two different curves to swap")
    lo, hi = sorted((float(top), float(bottom)))
    d0, d1 = float(np.min(depth)), float(np.max(depth))
    if hi < d0 or lo > d1:
        raise ValueError(f"the range {lo:g}–{hi:g} lies outside the log ({d0:g}–{d1:g})")
    sel = (depth >= lo) & (depth <= hi)
    tmp = values[a][sel].copy()
    values[a][sel] = values[b][sel]
    values[b][sel] = tmp
    return int(sel.sum())
