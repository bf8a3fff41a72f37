"""``core/digitize/rules/curve.py: _damped_band``: a track's band read without a third band-sized array, the same
numbers as the band copied and multiplied by the damping, for every kind of map the tracer reads (a coded map, coded
maps merged with an unclaimed style's, a plain float map)."""

from __future__ import annotations

import numpy as np

from core.digitize.evidence.coded_map import CodedMap, encode
from core.digitize.evidence.style import MergedEvidence
from core.digitize.page.grid import Grid
from core.digitize.rules.curve import _damped_band


def _maps(rng):
    return {k: CodedMap(encode(rng.random((60, 500), np.float32) ** 3)) for k in (1, 2, 3)}


def test_the_damped_band_is_the_band_times_the_damping_and_raw_reads_the_same_pixels():
    rng = np.random.default_rng(5)
    maps = _maps(rng)
    rows = slice(12, 47)
    path, cols = rng.integers(0, 35, 500), np.arange(500)
    for evidence in (maps[2], MergedEvidence(maps, 2, [(3, 0.5)]), np.asarray(maps[1], np.float32)):
        damping = np.clip(rng.random((35, 500)), 0.2, 1.0)  # float64, as the grid gives it
        want_raw = evidence[rows].astype(np.float32)
        want_ev = want_raw * damping
        raw, ev = _damped_band(evidence, rows, lambda d=damping: d.copy())
        assert ev.dtype == want_ev.dtype and np.array_equal(ev, want_ev)
        assert raw.shape == want_raw.shape
        assert np.array_equal(raw[path, cols], want_raw[path, cols])
        assert raw[path, cols].dtype == np.float32
    # a coded map's band stays coded: a view of its codes, nothing decoded until read
    raw, _ = _damped_band(maps[2], rows, lambda: np.ones((35, 500)))
    assert isinstance(raw, CodedMap) and np.shares_memory(raw.codes, maps[2].codes)
    merged = MergedEvidence(maps, 2, [(3, 0.5)]).band(rows)
    assert set(merged.maps) == {2, 3} and all(np.shares_memory(m.codes, maps[k].codes) for k, m in merged.maps.items())


def test_a_float32_damping_is_multiplied_in_its_own_buffer():
    rng = np.random.default_rng(6)
    maps = _maps(rng)
    damping = np.clip(rng.random((35, 500)), 0.2, 1.0).astype(np.float32)
    want = maps[1][0:35] * damping
    raw, ev = _damped_band(maps[1], slice(0, 35), lambda: damping)
    assert ev is damping and np.array_equal(ev, want)


def test_the_band_damped_in_one_compiled_pass_is_the_band_times_the_spread_damping():
    """With the grid's band damping (``Grid.band_damping``) the product is written in one compiled pass from the codes
    (or the merged or plain floats): the same numbers as the decoded band times the spread damping."""
    rng = np.random.default_rng(7)
    maps = _maps(rng)
    edges = np.array([0, 200, 500])
    along = (rng.random((60, 2)) * (rng.random((60, 2)) < 0.3)).astype(np.float32)
    across = (rng.random((2, 500)) * (rng.random((2, 500)) < 0.2)).astype(np.float32)
    grid = Grid(along, edges, across, [(5, 40), (30, 60)])
    rows = slice(12, 47)
    path, cols = rng.integers(0, 35, 500), np.arange(500)
    merged = [MergedEvidence(maps, 2, [(3, 0.5)]), MergedEvidence(maps, 1, [(2, 1.0 / 3.0), (3, 2.0 / 3.0)])]
    assert (merged[1][:, :] == 1.0).any()  # sums over 1, taken at 1
    for evidence in [maps[2], *merged, np.asarray(maps[1], np.float32)]:
        want_raw, want_ev = _damped_band(evidence, rows, lambda: grid.damping(rows, 0.15))
        raw, ev = _damped_band(evidence, rows, grid.band_damping(rows, 0.15))
        assert ev.dtype == want_ev.dtype == np.float64 and np.array_equal(ev, want_ev)
        assert type(raw) is type(want_raw) and np.array_equal(raw[path, cols], want_raw[path, cols])
