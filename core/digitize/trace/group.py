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
    bounds, lo, hi, centre, peak, strength = _runs(ev, threshold, max_runs, damping)
    return [ColumnRuns(lo[a:b], hi[a:b], centre[a:b], peak[a:b], strength[a:b])
            for a, b in zip(bounds[:-1], bounds[1:])]


def _runs(ev: np.ndarray, threshold: float, max_runs: int, damping: np.ndarray | None):
    """:func:`column_runs` as flat arrays: (bounds, lo, hi, centre, peak, strength), column c's runs at
    [bounds[c], bounds[c + 1])."""
    from core.digitize.trace import group_kernels

    rows, cols = ev.shape
    # the on-pixels in (column, row) order: each run is a consecutive block of them, so sums and maxima per run
    # are reductions over blocks (no cumulative sums over the whole map); found compiled, summed by NumPy
    ev = np.ascontiguousarray(ev)
    damped = damping is not None
    vals, ev_on, row_of, sc, sr, er = group_kernels.on_pixels(
        ev, np.ascontiguousarray(damping) if damped else np.ones((1, 1), ev.dtype), damped,
        np.asarray(threshold, ev.dtype)[()])  # compared in the map's dtype, as NumPy compares it
    lengths = er - sr
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    if sc.size:
        mass = np.add.reduceat(vals, starts)
        centre = np.add.reduceat(vals * row_of, starts) / np.maximum(mass, 1e-9)
        strength = np.maximum.reduceat(vals, starts)
        peak = strength if damping is None else np.maximum.reduceat(ev_on, starts)
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
    return bounds, lo, hi, centre, peak, strength


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


def _tables(max_runs: int, k_n: int, pair_cost: np.ndarray):
    """The joint-state tables of every run count 0..``max_runs`` stacked for the compiled tracer: (first row of
    each count's table, states of each, options, shared, taken (``max_runs`` wide), pair cost of each state).
    A state's pair cost is summed here, by NumPy, as the tracer always summed it."""
    cache: dict = {}
    tables = [_table(m, k_n, cache) for m in range(max_runs + 1)]
    states = np.array([t.options.shape[0] for t in tables], np.int64)
    start = np.concatenate([[0], np.cumsum(states)[:-1]]).astype(np.int64)
    width = max(max_runs, 1)
    taken = np.zeros((int(states.sum()), width), bool)
    for t, a in zip(tables, start):
        taken[a : a + t.taken.shape[0], : t.taken.shape[1]] = t.taken
    pair = np.concatenate([(t.pairs * pair_cost).sum((1, 2)) / 2.0 for t in tables])
    return (start, states, np.ascontiguousarray(np.concatenate([t.options for t in tables])),
            np.ascontiguousarray(np.concatenate([t.shared for t in tables])), taken, pair)


def trace_group(ev: np.ndarray, classes: list[int], params: GroupParams | None = None,
                damping: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint trace of K curves through one evidence map (rows × columns, the track's rows only);
    ``damping``: the grid's factor on it (``column_runs``).

    Returns (positions, observed, confidence), each (K, columns): the row of each curve per column (NaN
    where it is lost), whether a run was assigned to it there, and that run's strongest evidence.

    Per column, the cost of every joint state from each kept state of the column before (the module docstring
    lists the terms), the cheapest way into each, the ``beam`` cheapest states kept with every curve's exit row,
    velocity, gap length and the row it was last seen at (the best path into a state decides them); then back
    from the cheapest last state. The recursion runs compiled (``group_kernels.group_viterbi``); the runs, the state
    tables and the runs' evidence costs are found here."""
    from core.digitize.trace import group_kernels

    p = params or GroupParams()
    k_n = len(classes)
    # a run or two beyond the curves' count for noise and text; three curves keep one, so the joint states
    # stay (runs + 1)^K ≤ 125
    max_runs = min(p.max_runs, k_n + (2 if k_n <= 2 else 1))
    bounds, lo, hi, centre, peak, strength = _runs(ev, p.threshold, max_runs, damping)
    weak = p.weak_run * -np.log(np.clip(peak, 1e-3, 1.0))
    gap = np.array([p.gap_cost[min(max(c, 1), 3) - 1] for c in classes], np.float64)
    solid = np.array([c == 1 for c in classes])
    pair_cost = np.where(solid[:, None] & solid[None, :], p.share_solid_cost, p.share_cost)[None]  # (1, K, K)
    start, states, options, shared, taken, pair = _tables(max_runs, k_n, pair_cost)
    return group_kernels.group_viterbi(
        bounds.astype(np.int64), lo, hi, centre, peak, weak, strength, start, states, options, shared, taken, pair,
        gap, float(p.continuity), float(p.prediction), float(p.prediction_cap), float(p.momentum),
        float(p.unexplained), float(p.stroke_px), float(p.lost_cost), float(p.reacquire), float(p.reacquire_per_px),
        int(p.max_gap_px), int(p.beam), float(p.steep_px))
