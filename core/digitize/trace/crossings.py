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

import itertools

import numpy as np

from core.common.runs import true_runs

MEET_PX = 3.0  # traces this close (px across) are meeting: their strokes merge
JOIN = 24  # meetings fewer columns apart than this are one place to check

_FIELDS = ("position", "wraps", "confidence", "observed", "flags", "signals")


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
    data = [{n: None if getattr(traces[k], n) is None else getattr(traces[k], n).copy() for n in _FIELDS}
            for k in order]
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


# ---- which trace is which curve after a meeting, decided over the whole stretch (issue #60 item 4) --------------
#
# The joint tracer keeps the curves of one style apart where their strokes are apart, and takes each curve up again
# where it was lost; the choice at a meeting, or of which stroke a lost curve takes up, is a path cost's, and a
# small change of the evidence (bf16 maps, the scan shifted by a pixel) can tip it: on KGS the tension curve, lost
# for two feet under a depth label, was taken up on the sonic's stroke, and the two read each other's lines for 400
# ft. Here the traces are cut where identities could change (a meeting, a trace lost, a jump), and each stretch
# between is given to the curves by what each curve is over the whole log: where it was before (its level and
# drift carried over the cut) and how it moves (its smoothness: a tension curve's line against a sonic's swings). Each curve's
# moves are modelled as a random walk with Laplace steps of the curve's own scale; the assignment of stretches that
# is likeliest under that model wins where it beats the joint tracer's own by odds of 19:1 (the tracer saw the ink
# at the meeting, its momentum through a crossing), and the log-likelihood the naming of a column wins by (in nats)
# is that decision's margin: small where two curves are alike and met, so a swap could not be told from a bounce.

JUMP_SHARE = 0.05  # a move this large (a share of the track) between two neighbouring readings may be a change of curve
NOISE_PX = 0.5  # the refined position's own noise (a pen's centroid), added to every step's scale
MIN_SCALE_PX = 0.15  # the smallest step scale a curve is given (a ruler-straight line still moves a little)
SLOPE_BASE = 16  # readings apart between which a curve's drift at a cut is read (over twice as many readings)
IDENTITY_NATS = float(np.log(19.0))  # a margin below this (odds under 19:1) leaves which curve is which in doubt


def _cuts(pos: np.ndarray, width: float) -> np.ndarray:
    """The columns where a stretch ends (sorted, within 1..cols−1): a meeting's ends, a trace found again after it
    was lost, a jump between two neighbouring readings."""
    k_n, cols = pos.shape
    cuts = set()
    for i in range(k_n):
        for j in range(i + 1, k_n):
            for a, b in meetings(pos[i], pos[j]):
                cuts.update((a, b))
        finite = np.isfinite(pos[i])
        cuts.update((np.flatnonzero(~finite[:-1] & finite[1:]) + 1).tolist())
        c = np.flatnonzero(finite)
        jump = np.abs(np.diff(pos[i, c])) > JUMP_SHARE * width
        cuts.update(c[1:][jump].tolist())
    return np.asarray(sorted(c for c in cuts if 0 < c < cols), np.int64)


def _step_scale(steps: np.ndarray, gaps: np.ndarray) -> float:
    """A curve's Laplace step scale (px per column, its steps taken over ``gaps`` columns): the median absolute step."""
    if steps.size == 0:
        return MIN_SCALE_PX
    return max(MIN_SCALE_PX, float(np.median(np.abs(steps) / np.sqrt(gaps))))


def _laplace_nll(d, g, scale):
    b = np.sqrt(np.asarray(scale) ** 2 * g + 2 * NOISE_PX**2)
    return np.abs(d) / b + np.log(2 * b)


class _Stretches:
    """The traces of a group cut into stretches, with what the naming needs of each: per stretch and trace its
    first and last reading, and the steps inside it."""

    def __init__(self, pos: np.ndarray, width: float, seen: np.ndarray | None = None):
        self.cuts = _cuts(pos, width)
        pos = pos if seen is None else np.where(seen, pos, np.nan)  # only where read: a carried place says nothing
        self.pos = pos
        k_n, cols = pos.shape
        self.bounds = np.concatenate([[0], self.cuts, [cols]])
        self.n = self.bounds.size - 1
        self.seg_of = np.searchsorted(self.cuts, np.arange(cols), side="right")
        self.first = np.full((self.n, k_n), -1, np.int64)
        self.last = np.full((self.n, k_n), -1, np.int64)
        self.steps = []  # per trace: (stretch, move, columns moved over) of each step inside a stretch
        self.slope_in = np.zeros((k_n, cols))  # per column read: the trace's drift arriving there (rows per column) ...
        self.slope_out = np.zeros((k_n, cols))  # ... and leaving it
        for k in range(k_n):
            c = np.flatnonzero(np.isfinite(pos[k]))
            seg = self.seg_of[c]
            if c.size:
                change = np.flatnonzero(np.diff(seg)) + 1
                starts, stops = np.concatenate([[0], change]), np.concatenate([change, [c.size]]) - 1
                self.first[seg[starts], k], self.last[seg[stops], k] = c[starts], c[stops]
            same = seg[1:] == seg[:-1]
            self.steps.append((seg[1:][same], np.diff(pos[k, c])[same], np.diff(c)[same].astype(np.float64)))
            if c.size > 2 * SLOPE_BASE:
                # the drift at each reading: the median of the slopes between readings SLOPE_BASE apart among the last
                # 2·SLOPE_BASE (a Theil-Sen slope: a few unsteady readings move it little, a pen's whole-pixel steps
                # average out over the base)
                p = pos[k, c]
                base = (p[SLOPE_BASE:] - p[:-SLOPE_BASE]) / (c[SLOPE_BASE:] - c[:-SLOPE_BASE])  # at reading i+base
                win = np.lib.stride_tricks.sliding_window_view(base, SLOPE_BASE)
                med = np.median(win, axis=1)  # at readings 2·base−1 ... end: the drift arriving there
                arrive = np.concatenate([np.full(2 * SLOPE_BASE - 1, med[0]), med])
                leave = np.concatenate([med, np.full(2 * SLOPE_BASE - 1, med[-1])])
                self.slope_in[k, c] = arrive
                self.slope_out[k, c] = leave

    def character(self, scales: np.ndarray) -> np.ndarray:
        """(stretches, curve, trace): the trace's steps inside each stretch under the curve's step scale, in nats."""
        k_n = len(self.steps)
        out = np.zeros((self.n, k_n, k_n))
        for k, (seg, d, g) in enumerate(self.steps):
            for j in range(k_n):
                out[:, j, k] = np.bincount(seg, _laplace_nll(d, g, scales[j]), minlength=self.n)
        return out

    def carry(self, c_from, k_from, c_to, k_to, scale) -> np.ndarray:
        """A curve read trace ``k_from`` last at column ``c_from`` and trace ``k_to`` next at ``c_to``: the move
        between, less its drift (``slope_in`` before it, ``slope_out`` after, the mean of the two), under its step
        scale, in nats; 0 where either reading is missing (−1). A median slope, not the last few steps': the KGS
        tension, unsteady for a few readings before it was lost, pointed at the sonic's stroke 55 columns on."""
        ok = (c_from >= 0) & (c_to >= 0)
        cf, ct = np.maximum(c_from, 0), np.maximum(c_to, 0)
        g = np.maximum(np.abs(ct - cf), 1).astype(np.float64)
        drift = 0.5 * (self.slope_in[k_from, cf] + self.slope_out[k_to, ct])
        d = self.pos[k_to, ct] - self.pos[k_from, cf] - drift * (ct - cf)
        return np.where(ok, _laplace_nll(np.nan_to_num(d), g, scale), 0.0)


def _chain(st: _Stretches, perms: np.ndarray, seg_cost: np.ndarray, scales: np.ndarray, forward: bool) -> np.ndarray:
    """The cheapest naming of the stretches up to each (``forward``) or from each on, per stretch and naming, each
    curve remembering where it was last read (a curve lost over a stretch is carried over it)."""
    n_p, k_n = perms.shape
    order = range(st.n) if forward else range(st.n - 1, -1, -1)
    acc = np.full((st.n, n_p), np.inf)
    mem_k = np.tile(perms[None, :, :], (1, 1, 1))[0].copy()  # (naming, curve): the trace last read ...
    mem_c = np.full((n_p, k_n), -1, np.int64)  # ... and where
    prev = None
    for s in order:
        end = st.last if forward else st.first  # the reading each trace leaves a stretch with, seen from the next
        begin = st.first if forward else st.last
        if prev is None:
            acc[s] = np.where(np.arange(n_p) == 0, seg_cost[s], np.inf) if forward else seg_cost[s]
        else:
            # (from naming u, to naming v, curve j)
            kf = mem_k[:, None, :].repeat(n_p, 1)
            cf = mem_c[:, None, :].repeat(n_p, 1)
            kt = perms[None, :, :].repeat(n_p, 0)
            ct = begin[s][kt]
            cost = st.carry(cf, kf, ct, kt, scales[None, None, :]).sum(2)
            # the joint tracer saw the ink at each cut (its own continuity, through a crossing): a change of its
            # naming there is taken where the whole log says so at odds of 19:1 or more
            cost = cost + IDENTITY_NATS * (np.arange(n_p)[:, None] != np.arange(n_p)[None, :])
            tot = acc[prev][:, None] + cost
            best = np.argmin(tot, axis=0)
            acc[s] = tot[best, np.arange(n_p)] + seg_cost[s]
            mem_k, mem_c = mem_k[best], mem_c[best]
        seen = end[s][perms] >= 0  # (naming, curve): its trace read in this stretch
        mem_k = np.where(seen, perms, mem_k)
        mem_c = np.where(seen, end[s][perms], mem_c)
        prev = s
    return acc


def settle_identities(pos: np.ndarray, width: float, seen: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Which trace each curve of a same-style group reads over each stretch between the places its naming could
    change (the comment above), and the margin of each column's naming.

    ``pos``: (K, columns) the traces' rows, as named at the log's top (:func:`order_at_top`), NaN where lost;
    ``width``: the track's width in rows; ``seen``: (K, columns) where each trace was read, not carried across a gap
    at its last speed (a carried stretch is the tracer's guess: no evidence of how its curve moves, and never a
    curve's last place). Returns ``take`` (columns, K): the trace curve k reads at each column, and
    ``margin`` (columns,): in nats, how much likelier the likeliest naming of the whole log is than the likeliest
    one that names that column otherwise (a min-marginal: forward and backward over the stretches)."""
    k_n, cols = pos.shape
    take = np.tile(np.arange(k_n), (cols, 1))
    margin = np.full(cols, np.inf)
    if k_n < 2 or cols < 2 or not np.isfinite(pos).any():
        return take, margin
    st = _Stretches(pos, width, seen)
    perms = np.asarray(list(itertools.permutations(range(k_n))), np.int64)  # perms[0]: as named at the top
    scales = np.array([_step_scale(d, g) for _, d, g in st.steps])
    # each curve's step scale is read off the stretches it is given, so a naming wrong over most of the log is
    # consistent with itself (the sonic's swings under the name of the tension, and the reverse): every start is
    # tried, each scale given to each curve, and the naming the whole log fits best, moves across the cuts included,
    # is kept. The scales alone cannot tell two such namings apart: the moves at the cuts do
    best_run = None
    for start in perms:
        run = _settle(st, perms, scales[start])
        if best_run is None or run[0] < best_run[0]:
            best_run = run
    _, best, total = best_run
    chosen = total[np.arange(st.n), best]
    other = np.where(np.arange(perms.shape[0])[None, :] == best[:, None], np.inf, total).min(axis=1)
    seg_margin = np.maximum(other - chosen, 0.0)
    return perms[best][st.seg_of], seg_margin[st.seg_of]


def _settle(st: _Stretches, perms: np.ndarray, scales: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The likeliest naming of every stretch from these step scales, the scales then read off it and the naming
    again: (its cost in nats, the naming per stretch, the cost of the whole log through each naming of each
    stretch)."""
    k_n = perms.shape[1]
    for _ in range(2):
        character = st.character(scales)
        seg_cost = character[:, np.arange(k_n)[None, :], perms].sum(2)  # (stretch, naming)
        fwd = _chain(st, perms, seg_cost, scales, True)
        bwd = _chain(st, perms, seg_cost, scales, False)
        total = fwd + bwd - seg_cost  # the cheapest naming of the log through each naming of each stretch
        best = np.argmin(total, axis=1)
        given = [perms[best, j] for j in range(k_n)]  # per curve: the trace it reads in each stretch
        scales = np.array([_step_scale(np.concatenate([st.steps[k][1][given[j][st.steps[k][0]] == k]
                                                       for k in range(k_n)]),
                                       np.concatenate([st.steps[k][2][given[j][st.steps[k][0]] == k]
                                                       for k in range(k_n)])) for j in range(k_n)])
    return float(total[-1].min()), best, total

