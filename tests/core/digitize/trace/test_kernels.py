"""The compiled tracers (``core/digitize/trace/path_kernels.py``, ``group_kernels.py``) against the NumPy tracers
of d36c861 they replaced (``reference_tracer.py``, kept here for this): the same paths, the same joint traces, the
same travel, bit for bit, on maps made to tie, to wrap, to cross, and on the maps the network reads off real scans
and the held-out print families (``test_same_las.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from core.digitize.trace import path_kernels, path_search
from core.digitize.trace.group import GroupParams, trace_group
from core.digitize.trace.params import TraceParams
from core.digitize.trace.path_search import _dt_l1, travel_costs, viterbi_path

from . import reference_tracer as reference

PARAMS = {"solid": TraceParams(), "broken": TraceParams().broken(), "flat": TraceParams(gap_jump_cost=0.04),
          "model": TraceParams(threshold=0.12, max_gap_px=24)}


def _map(seed: int) -> np.ndarray:
    """A map of noise and a few strokes; every third one rounded to tenths, so that costs tie."""
    rng = np.random.default_rng(seed)
    rows, cols = int(rng.integers(1, 90)), int(rng.integers(1, 420))
    ev = (rng.random((rows, cols)) ** rng.choice([1, 4, 8])).astype(np.float32)
    for _ in range(int(rng.integers(0, 3))):
        line = np.clip(np.cumsum(rng.normal(0, 2.0, cols)) + rng.integers(0, rows), 0, rows - 1).astype(int)
        ev[line, np.arange(cols)] = rng.uniform(0.3, 1.0)
    return np.round(ev, 1) if seed % 3 == 0 else ev


@pytest.mark.parametrize("kind", sorted(PARAMS))
@pytest.mark.parametrize("cyclic", [False, True])
def test_the_compiled_viterbi_path_is_the_numpy_one(kind, cyclic):
    for seed in range(12):
        ev = _map(seed)
        expected = reference.viterbi_path(ev, PARAMS[kind], cyclic)
        got = viterbi_path(ev, PARAMS[kind], cyclic)
        assert np.array_equal(expected[0], got[0]) and np.array_equal(expected[1], got[1]), (seed, ev.shape)


def test_float64_evidence_is_traced_in_float64_as_before():
    """The rules hand the tracer evidence damped by the grid in float64: its costs stay float64."""
    ev = _map(4).astype(np.float64) * 0.731
    for cyclic in (False, True):
        assert all(np.array_equal(a, b) for a, b in zip(reference.viterbi_path(ev, TraceParams(), cyclic),
                                                          viterbi_path(ev, TraceParams(), cyclic)))


def test_a_wrapping_path_wraps_where_the_numpy_one_did():
    """A curve that leaves the track at one edge and comes in at the other: the same wrap steps."""
    rows, cols = 60, 300
    ev = np.full((rows, cols), 0.002, np.float32)
    x = np.arange(cols)
    ev[(10 + x // 2) % rows, x] = 0.9  # drifts across the last row and on from row 0, twice
    path, wraps = viterbi_path(ev, TraceParams(), cyclic=True)
    assert np.array_equal(np.flatnonzero(wraps), [100, 220]) and np.array_equal(path, (10 + x // 2) % rows)
    expected = reference.viterbi_path(ev, TraceParams(), cyclic=True)
    assert np.array_equal(expected[0], path) and np.array_equal(expected[1], wraps)


def test_the_travel_is_the_numpy_one():
    for seed in range(8):
        ev = _map(seed)
        for kind in ("solid", "broken"):
            expected = np.concatenate([b for _, b in reference._travel_blocks(ev, PARAMS[kind])], axis=1)
            assert np.array_equal(travel_costs(ev, PARAMS[kind]), expected)


def test_the_distance_transform_breaks_ties_as_before():
    rng = np.random.default_rng(5)
    for n in (1, 2, 9, 200):
        cost = np.round(rng.random(n) * 3, 1)
        travel = np.cumsum(np.round(rng.random(n), 1))
        expected = reference._dt_path(cost, travel)
        got = path_search._dt_path(cost, travel)
        assert np.array_equal(expected[0], got[0]) and np.array_equal(expected[1], got[1])
    assert list(_dt_l1(np.zeros(4), 0.04)[1]) == [0, 1, 2, 3]
    cost = rng.random(50)
    val, arg = path_kernels.distance_transform(cost, 0.1 * np.arange(50.0))
    brute = cost[None, :] + 0.1 * np.abs(np.arange(50)[:, None] - np.arange(50)[None, :])
    assert np.allclose(val, brute.min(1), rtol=0, atol=1e-12) and np.array_equal(arg, brute.argmin(1))


def _strokes(seed: int) -> tuple[np.ndarray, list[int], np.ndarray | None]:
    """Evidence of a few wandering strokes (two to five, some faint, with gaps), the classes of the curves
    traced on it, and on every other map a grid's damping."""
    rng = np.random.default_rng(seed)
    rows, cols = int(rng.integers(8, 140)), int(rng.integers(1, 500))
    ev = np.zeros((rows, cols), np.float32)
    k = int(rng.integers(1, 4))
    for _ in range(k + int(rng.integers(0, 3))):
        line = np.clip(np.cumsum(rng.normal(0, 1.5, cols)) + rng.integers(0, rows), 0, rows - 1).astype(int)
        for d in (-1, 0, 1):
            r = np.clip(line + d, 0, rows - 1)
            ev[r, np.arange(cols)] = np.maximum(ev[r, np.arange(cols)], rng.random(cols))
    ev *= rng.random(ev.shape) > 0.1
    classes = [int(c) for c in rng.choice([1, 2, 3], k)]
    damping = None
    if seed % 2:
        damping = np.ones((rows, cols), np.float32)
        damping[rng.random(rows) < 0.15] = 0.15
    return ev, classes, damping


def test_the_compiled_group_tracer_is_the_numpy_one():
    for seed in range(16):  # one to three curves, same-style pairs, damped maps and not
        ev, classes, damping = _strokes(seed)
        expected = reference.trace_group(ev, classes, GroupParams(), damping)
        got = trace_group(ev, classes, GroupParams(), damping)
        for a, b in zip(expected, got):
            assert np.array_equal(a, b, equal_nan=True), (seed, classes, ev.shape)


def test_a_group_with_a_narrow_beam_and_many_states_is_the_numpy_one():
    """Four curves of one style: 6⁴ joint states a column, of which the beam keeps 32 (ties kept in table order)."""
    ev, _, damping = _strokes(7)
    for params in (GroupParams(), GroupParams(beam=5, max_gap_px=3)):
        expected = reference.trace_group(ev, [2, 2, 2, 2], params, damping)
        got = trace_group(ev, [2, 2, 2, 2], params, damping)
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(expected, got))


def test_the_runs_of_a_column_are_the_numpy_ones():
    """Runs found compiled, summed by NumPy: the same runs, centres and strengths, runs longer than NumPy's
    pairwise blocks (8 and 128 rows) included, on maps damped in float64 and in float32."""
    from core.digitize.trace.group import column_runs

    rng = np.random.default_rng(9)
    for seed in range(6):
        ev, _, damping = _strokes(seed)
        ev[:, : ev.shape[1] // 3] = np.where(rng.random((ev.shape[0], 1)) < 0.9, 0.8, 0.1)  # long runs down columns
        for damp in (damping, None if damping is None else damping.astype(np.float64)):
            for threshold in (0.3, 0.12):
                expected = reference.column_runs(ev, threshold, 4, damp)
                got = column_runs(ev, threshold, 4, damp)
                assert len(got) == len(expected) == ev.shape[1]
                for a, b in zip(expected, got):
                    for f in ("lo", "hi", "centre", "peak", "strength"):
                        assert np.array_equal(getattr(a, f), getattr(b, f)), (seed, f)
