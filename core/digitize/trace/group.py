"""Tracing the curves of one line style in one track together, through their crossings.

Two curves drawn in one line style in one track (two solid resistivities, a
repeat pass) share one evidence map. A path traced through that map alone
follows *a* line, but where two lines come near each other it is as happy to
hop onto the other as to stay, and where they cross it cannot tell a crossing
from a bounce: a first-order path (positions and jump costs) pays the same
for both. So the curves of such a group are traced jointly:

- per depth column, the map's evidence above the threshold forms *runs* of
  rows; a run is one stroke's cut through the column (a steep stroke cuts
  many rows), or two strokes where they merge at a crossing;
- a Viterbi over the joint assignment of the K curves to those runs (or to a
  *gap*: a dash gap, a stroke hidden under another, a lost stretch), where
  each state carries every curve's exit point and velocity (the best path
  into it decides them: Viterbi with memory, an approximation that keeps
  the state space at (runs + 1)^K);
- costs: rows between a curve's last run and its next (continuity), the
  distance from where its velocity predicts it to its next run (so it goes
  straight through a crossing and never reverses at the instant it meets
  another line), the weakness of the run, a gap (cheaper for dashed and
  dotted pens, whose gaps are expected; cheaper still once a curve is lost,
  so a curve the map does not see stays NULL rather than take any line),
  two curves sharing one run (cheap for broken pens: at a crossing they do;
  for two solid pens dearer than a gap, so one is bridged over the crossing
  and a faint solid curve never rides a strong one), a strong run that no
  curve explains and no taken run lies next to (so two curves never both
  follow one line while the other goes untraced, and the pieces of one
  steep stroke cut by grid lines pull no idle curve onto it), and taking a
  lost curve up again, dearer the farther from where it was last seen (so a
  curve comes back as itself, not as its neighbour).

At a run shared by two curves (a crossing) each curve takes the point of the
run nearest its own prediction, so each passes through the crossing on its
own line. Which trace is which curve at the top of the log is the naming
rule of ``core/digitize/trace/crossings.py`` (calibration order from the ``track[0]``
side); the user can swap two traced curves over a depth range.

Chosen over a joint Viterbi over pairs of rows (rows² states a column and
still first-order) and over the former trace-erase-then-swap pass (median r
0.53 on two same-style solid curves traced from their true masks; see the
README for the figures of this tracer).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

GAP = -1


@dataclass
class GroupParams:
    threshold: float = 0.3  # evidence that counts as ink
    max_runs: int = 6  # runs kept per column (the strongest), beyond the curves' count
    continuity: float = 0.06  # per row between a curve's last run and its next
    prediction: float = 0.12  # per row between where the velocity predicts the curve and its next run ...
    prediction_cap: float = 12.0  # ... counted up to this many rows (a bed boundary is a real turn)
    momentum: float = 0.6  # share of the old velocity kept at each column
    gap_cost: tuple[float, float, float] = (1.2, 0.35, 0.45)  # per column unseen: solid, dashed, dotted
    share_cost: float = 0.25  # two curves on one run (a crossing) ...
    # ... two solid curves: more than a solid pen's gap. A solid pen draws without a break, so a solid curve seen
    # nowhere but on another's stroke is not there; at 0.25 a faint one the network barely saw (a thin tension
    # curve, straight as a grid line) rode its strong neighbour's line rather than go unseen (KGS: LTEN on DT's
    # line over 69 % of 250-1050 ft). At a crossing one of the two is bridged over the few columns they merge
    share_solid_cost: float = 1.3
    unexplained: float = 0.8  # a strong run no curve takes ...
    # ... and not within this many rows of a run a curve takes: a steep, thick stroke cut by grid lines is several
    # runs, and its pieces left over pulled an idle curve across the track onto the stroke (KGS: LTEN onto DT)
    stroke_px: float = 24.0
    weak_run: float = 1.0  # × −log(the run's strongest evidence)
    lost_cost: float = 0.5  # per column a curve stays lost
    # taking up a curve again after it was lost ... At 3, the model of stage 7 took the KGS tension curve up on
    # the sonic's steep stroke 200 rows from its line after 2 ft unseen under a depth label, and the two swapped
    # lines for 200 ft; at 5 it waits for its own line. (A dearer price per row, 0.05, did it too but lost the
    # identity of two solid lines crossing in an X, where both lines are equally near after the bridged crossing)
    reacquire: float = 5.0
    # ... plus this per row from where it was last seen: two curves of one style are told apart by where they
    # are, and a curve lost and taken up again anywhere at one price came back as its neighbour as readily as
    # itself (KGS: DT picked up on the tension curve's line where LTEN had gone unseen)
    reacquire_per_px: float = 0.02
    max_gap_px: int = 16  # columns a curve may go unseen before it is lost (and NULL)
    beam: int = 32  # joint states kept per column (the cheapest): three curves have up to 5³ = 125
    steep_px: float = 9.0  # a run taller than this (two pen widths and blur) is a steep stroke: the pen crosses it


@dataclass
class ColumnRuns:
    lo: np.ndarray  # first row
    hi: np.ndarray  # last row (inclusive)
    centre: np.ndarray  # evidence-weighted centre row
    peak: np.ndarray  # strongest evidence in the run
    strength: np.ndarray  # strongest grid-damped evidence in the run (``peak`` without a grid)


def column_runs(ev: np.ndarray, threshold: float, max_runs: int,
                damping: np.ndarray | None = None) -> list[ColumnRuns]:
    """Per column of ``ev`` (rows × columns), its runs of rows at or above ``threshold``, the ``max_runs``
    strongest (by summed evidence) in row order.

    ``damping`` (the grid's factor, same shape) weighs the runs without cutting them: runs are found, and
    their ``peak`` taken, on the evidence itself; their ``strength`` (what leaving one unexplained costs) and
    their rank on the damped evidence. So a grid line no curve takes costs little, and no curve is pulled
    onto one, while a curve that runs along a grid line for a stretch keeps its own evidence there.
    Thresholding the damped evidence instead cut each curve at every grid line it crosses, and a curve
    lying on an amplitude line became a run too weak to take: the second curve of the pair then rode the
    first one's stroke (a shared run is cheap, to let curves cross) and the first went untraced."""
    rows, cols = ev.shape
    on_t = (ev >= threshold).T  # (cols, rows): runs are read down each column
    edge = np.diff(np.pad(on_t, ((0, 0), (1, 1))).astype(np.int8), axis=1)  # (cols, rows + 1)
    sc, sr = np.nonzero(edge == 1)  # run starts, sorted by column then row
    _, er = np.nonzero(edge == -1)  # run ends (exclusive)
    # the on-pixels in (column, row) order: each run is a consecutive block of them, so sums and maxima per run
    # are reductions over blocks (no cumulative sums over the whole map)
    weighted = ev if damping is None else ev * damping
    vals = weighted.T[on_t].astype(np.float64)
    row_of = np.nonzero(on_t)[1]
    lengths = er - sr
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    if sc.size:
        mass = np.add.reduceat(vals, starts)
        centre = np.add.reduceat(vals * row_of, starts) / np.maximum(mass, 1e-9)
        strength = np.maximum.reduceat(vals, starts)
        peak = strength if damping is None else np.maximum.reduceat(ev.T[on_t].astype(np.float64), starts)
    else:
        mass = centre = strength = peak = np.zeros(0)
    # the max_runs strongest of each column, kept in row order: rank the runs within their column by mass
    by_mass = np.lexsort((-mass, sc))
    first = np.searchsorted(sc[by_mass], sc[by_mass], side="left")
    keep = np.zeros(sc.size, bool)
    keep[by_mass[np.arange(sc.size) - first < max_runs]] = True
    sc, lo, hi = sc[keep], sr[keep].astype(np.float64), er[keep].astype(np.float64) - 1.0
    centre, peak, strength = centre[keep], peak[keep], strength[keep]
    bounds = np.searchsorted(sc, np.arange(cols + 1))
    return [ColumnRuns(lo[a:b], hi[a:b], centre[a:b], peak[a:b], strength[a:b])
            for a, b in zip(bounds[:-1], bounds[1:])]


@dataclass
class _Table:
    """Every joint assignment of K curves to m runs (−1: a gap), and what depends on it alone."""

    options: np.ndarray  # (states, K) run index per curve, −1 for a gap
    seen: np.ndarray  # (states, K)
    shared: np.ndarray  # (states, K): the curve's run is also another curve's
    pairs: np.ndarray  # (states, K, K) curves i and j (i ≠ j) on one run
    taken: np.ndarray  # (states, m): the run is some curve's


def _table(m: int, k_n: int, cache: dict) -> _Table:
    if (m, k_n) not in cache:
        opt = np.array(list(itertools.product(range(-1, m), repeat=k_n)), np.int64).reshape(-1, k_n)
        seen = opt >= 0
        same = (opt[:, :, None] == opt[:, None, :]) & seen[:, :, None] & seen[:, None, :]
        same &= ~np.eye(k_n, dtype=bool)[None]
        taken = np.zeros((opt.shape[0], max(m, 1)), bool)
        for k in range(k_n):
            taken[seen[:, k], opt[seen[:, k], k]] = True
        cache[(m, k_n)] = _Table(opt, seen, same.any(2), same, taken[:, :m])
    return cache[(m, k_n)]


def _runs_apart(lo: np.ndarray, hi: np.ndarray, within: float) -> np.ndarray:
    """(m, m): runs of one column no more than ``within`` rows apart."""
    apart = np.maximum(lo[None, :] - hi[:, None], lo[:, None] - hi[None, :])
    return apart <= within


def trace_group(ev: np.ndarray, classes: list[int], params: GroupParams | None = None,
                damping: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint trace of K curves through one evidence map (rows × columns, the track's rows only);
    ``damping``: the grid's factor on it (``column_runs``).

    Returns (positions, observed, confidence), each (K, columns): the row of each curve per column (NaN
    where it is lost), whether a run was assigned to it there, and that run's strongest evidence."""
    p = params or GroupParams()
    rows, cols = ev.shape
    k_n = len(classes)
    # a run or two beyond the curves' count for noise and text; three curves keep one, so the joint states
    # stay (runs + 1)^K ≤ 125
    runs = column_runs(ev, p.threshold, min(p.max_runs, k_n + (2 if k_n <= 2 else 1)), damping)
    gap = np.array([p.gap_cost[min(max(c, 1), 3) - 1] for c in classes])[None, None, :]  # (1, 1, K)
    tables: dict = {}
    solid = np.array([c == 1 for c in classes])
    pair_cost = np.where(solid[:, None] & solid[None, :], p.share_solid_cost, p.share_cost)[None]  # (1, K, K)

    # per state: every curve's exit row (NaN: lost), velocity, gap length
    pos = np.full((1, k_n), np.nan)
    vel = np.zeros((1, k_n))
    gaps = np.full((1, k_n), p.max_gap_px + 1, np.int64)
    seen_at = np.full((1, k_n), np.nan)  # the row each curve was last seen at (NaN: never)
    acc = np.zeros(1)
    back: list[np.ndarray] = []  # per column: best previous state of each state
    chosen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per column and kept state: runs, shared, rows
    for c in range(cols):
        r = runs[c]
        m = r.lo.size
        t = _table(m, k_n, tables)
        j = np.where(t.seen, t.options, 0)  # (S_new, K)
        if m:
            lo, hi, ctr = r.lo[j][None], r.hi[j][None], r.centre[j][None]  # (1, S_new, K)
            weak = p.weak_run * -np.log(np.clip(r.peak[j], 1e-3, 1.0))[None]
        else:
            lo = hi = ctr = weak = np.zeros((1,) + j.shape)
        last = pos[:, None, :]  # (S_prev, 1, K)
        pred = (pos + vel)[:, None, :]
        lost = np.isnan(last)
        between = np.maximum(0.0, np.maximum(lo - last, last - hi))
        miss = np.minimum(np.maximum(0.0, np.maximum(lo - pred, pred - hi)), p.prediction_cap)
        since = np.nan_to_num(np.maximum(0.0, np.maximum(lo - seen_at[:, None, :], seen_at[:, None, :] - hi)))
        c_run = np.where(lost, p.reacquire + p.reacquire_per_px * since + weak,
                         p.continuity * between + p.prediction * miss + weak)
        per_curve = np.where(t.seen[None], c_run, np.where(lost, np.minimum(gap, p.lost_cost), gap))  # (S_prev, S_new, K)
        cost = acc[:, None] + per_curve.sum(2)
        strength = np.clip(r.strength, 0.0, 1.0)
        if m:  # a run this near a taken one is the same stroke, broken where grid lines or blur thin it
            near_taken = (t.taken.astype(np.float32) @ _runs_apart(r.lo, r.hi, p.stroke_px).astype(np.float32)) > 0
            unexplained = ((~(t.taken | near_taken)) * strength[None]).sum(1)
        else:
            unexplained = 0.0
        cost += ((t.pairs * pair_cost).sum((1, 2)) / 2.0 + p.unexplained * unexplained)[None]
        best = np.argmin(cost, axis=0)
        acc = cost[best, np.arange(best.size)]
        keep = np.argsort(acc, kind="stable")[: p.beam] if acc.size > p.beam else np.arange(acc.size)
        best, acc = best[keep], acc[keep] - acc[keep].min()
        opts, seen, shared = t.options[keep], t.seen[keep], t.shared[keep]
        # where each curve leaves this column, from its best previous state: a short run at its centre, a tall
        # one (a steep stroke) at the end away from where it came in, a shared run (a crossing) at the point
        # nearest its prediction
        last_b, pred_b = pos[best], (pos + vel)[best]  # (S_new, K)
        exit_ = _exits(last_b, pred_b, lo[0][keep], hi[0][keep], ctr[0][keep], shared, p.steep_px)
        npos = np.where(seen, exit_, pred_b)
        ngaps = np.where(seen, 0, gaps[best] + 1)
        moved = npos - last_b
        nvel = np.where(seen & ~np.isnan(last_b), p.momentum * vel[best] + (1 - p.momentum) * moved, vel[best])
        lost_now = ngaps > p.max_gap_px
        pos = np.where(lost_now, np.nan, npos)  # lost: taken up again anywhere, at a cost
        vel = np.where(lost_now, 0.0, np.nan_to_num(nvel))
        gaps = ngaps
        seen_at = np.where(seen, npos, seen_at[best])
        back.append(best)
        chosen.append((opts, shared, pos))
    return _backtrack(runs, chosen, back, int(np.argmin(acc)), k_n)


def _exits(last: np.ndarray, pred: np.ndarray, lo: np.ndarray, hi: np.ndarray, ctr: np.ndarray, shared: np.ndarray,
           steep_px: float) -> np.ndarray:
    """Where each curve leaves the run it takes in a column (states × K): a short run at its centre, a tall one
    (a steep stroke) at the end away from where the curve came in, a shared run (a crossing) at the point
    nearest the curve's prediction."""
    entry = np.clip(np.where(np.isnan(last), ctr, last), lo, hi)
    far_end = np.where(entry - lo < hi - entry, hi, lo)
    exit_ = np.where(hi - lo + 1.0 > steep_px, far_end, ctr)
    at_pred = np.clip(np.where(np.isnan(pred), ctr, pred), lo, hi)
    return np.where(shared, at_pred, exit_)


def _backtrack(runs: list, chosen: list, back: list, s: int, k_n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions, observed, confidence) of the K curves along the best path, from its last state ``s`` back."""
    cols = len(chosen)
    positions = np.full((k_n, cols), np.nan)
    observed = np.zeros((k_n, cols), bool)
    confidence = np.zeros((k_n, cols))
    for c in range(cols - 1, -1, -1):
        opts, shared, state_pos = chosen[c]
        positions[:, c] = state_pos[s]
        observed[:, c] = opts[s] >= 0
        r = runs[c]
        for k in range(k_n):
            j = opts[s, k]
            if j >= 0:
                confidence[k, c] = r.peak[j]
                # the point reported for a column: the run's centre, unless two curves share it (a crossing):
                # then each curve's own point in it
                if not shared[s, k]:
                    positions[k, c] = r.centre[j]
        s = int(back[c][s])
    return positions, observed, confidence
