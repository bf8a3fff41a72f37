"""The compiled track scans (core/digitize/rules/track_scans.py) give the NumPy of before bit for bit: the rival
strength of the signals and the unclaimed-stroke flags, on random bands with curves that cross, leave the track, go
NULL and sit exactly on a claim's or a cover's edge, damped by a float64 grid factor, a float32 factor or none."""

import numpy as np
import pytest

from core.digitize.evidence.coded_map import CodedMap, compiled_reading, encode
from core.digitize.page.grid import BandDamping, Grid
from core.digitize.rules import signals, track_scans, unclaimed
from core.digitize.rules.signals import rival_strength
from core.digitize.rules.track_scans import damping_arguments
from core.digitize.rules.unclaimed import beside_an_unclaimed_stroke


def _rival_numpy(evidence, lo, hi, positions, keep_px, damping=None, row_offset=0):
    """signals.rival_strength as it was in NumPy (d36c861 to this change)."""
    cols = positions[0].size if positions else evidence.shape[1]
    out = np.zeros(cols, np.float32)
    height = hi - lo + 1
    for c0 in range(0, cols, signals.CHUNK):
        c1 = min(cols, c0 + signals.CHUNK)
        band = np.array(evidence[lo - row_offset : hi + 1 - row_offset, c0:c1], np.float32)
        if damping is not None:
            band *= damping(np.arange(c0, c1))
        kept = np.zeros((c1 - c0, height + 1), np.int8)
        for p in positions:
            q = np.asarray(p[c0:c1], np.float64)
            at = np.flatnonzero(np.isfinite(q))
            first = np.clip(np.ceil(q[at] - keep_px) - lo, 0, height).astype(np.int64)
            past = np.clip(np.floor(q[at] + keep_px) - lo + 1, 0, height).astype(np.int64)
            some = first < past
            kept[at[some], first[some]] += 1
            kept[at[some], past[some]] -= 1
        np.putmask(band, np.cumsum(kept[:, :-1], axis=1, dtype=np.int8).T > 0, 0.0)
        out[c0:c1] = band.max(axis=0)
    return out


def _unclaimed_numpy(i, positions, shares_track, evidence, lo, hi, threshold, damping=None):
    """unclaimed.beside_an_unclaimed_stroke as it was in NumPy (before this change)."""
    from core.common.runs import distance_to_true

    pos = positions[i]
    cols = pos.size
    others = [p for j, p in enumerate(positions) if j != i and shares_track[j]]
    if not others:
        return np.zeros(cols, bool)
    with np.errstate(invalid="ignore"):
        beside = np.zeros(cols, bool)
        for p in others:
            beside |= np.abs(pos - p) <= unclaimed.BESIDE_SHARE_OF_TRACK * (hi - lo)
    traced = [pos] + others
    found = np.zeros(cols, bool)
    idx = np.arange(lo, hi + 1, dtype=np.float32)[:, None]
    for c0 in range(0, cols, unclaimed.CHUNK):
        c1 = min(cols, c0 + unclaimed.CHUNK)
        band = np.asarray(evidence[lo : hi + 1, c0:c1], np.float32)
        if damping is not None:
            band = band * damping(np.arange(c0, c1))
        ink = band >= threshold
        for p in traced:
            ink &= ~(np.abs(idx - p[None, c0:c1]) <= unclaimed.CLAIM_PX)
        found[c0:c1] = ink.sum(axis=0) >= unclaimed.MIN_INK_ROWS
    k = np.ones(unclaimed.WINDOW_COLS) / unclaimed.WINDOW_COLS
    share_beside = np.convolve(beside.astype(float), k, mode="same")
    share_unclaimed = np.convolve(found.astype(float), k, mode="same")
    flag = (share_beside >= unclaimed.BESIDE_SHARE) & (share_unclaimed >= unclaimed.UNCLAIMED_SHARE) & beside
    return distance_to_true(flag) <= unclaimed.WINDOW_COLS // 4


def _case(seed: int, rows: int = 90, cols: int = 700):
    rng = np.random.default_rng(seed)
    ev = rng.random((rows, cols)).astype(np.float32) ** 3
    ev[rng.random((rows, cols)) < 0.3] = 0.0
    ev[:, rng.integers(0, cols, 20)] = np.float32(0.3)  # values on the threshold itself
    positions = []
    for _ in range(rng.integers(1, 5)):
        p = np.cumsum(rng.normal(0, 2, cols)) + rng.uniform(-10, rows + 10)
        p[rng.random(cols) < 0.2] = np.nan
        p[rng.random(cols) < 0.1] = 40.5  # exactly between two rows
        positions.append(p)
    d64 = 1.0 - 0.85 * (rng.random((rows, cols)) < 0.2) * rng.random((rows, cols))
    return rng, ev, positions, d64


@pytest.mark.parametrize("seed", range(6))
def test_compiled_rival_strength_is_the_numpy_one(seed, monkeypatch):
    monkeypatch.setattr(signals, "CHUNK", 256)  # chunk edges inside the case
    rng, ev, positions, d64 = _case(seed)
    lo, hi = int(rng.integers(0, 20)), int(rng.integers(60, 90))
    keep = float(rng.choice([2.0, 4.5, 3.7]))
    for damping in (None, lambda c: d64[lo : hi + 1, c], lambda c: d64[lo : hi + 1, c].astype(np.float32)):
        got = rival_strength(ev, lo, hi, positions, keep, damping)
        assert np.array_equal(got, _rival_numpy(ev, lo, hi, positions, keep, damping))
    band = ev[lo : hi + 1]  # a map of the track's band alone
    assert np.array_equal(rival_strength(band, lo, hi, positions, keep, None, row_offset=lo),
                          _rival_numpy(band, lo, hi, positions, keep, None, row_offset=lo))


@pytest.mark.parametrize("seed", range(6))
def test_compiled_unclaimed_stroke_is_the_numpy_one(seed, monkeypatch):
    monkeypatch.setattr(unclaimed, "CHUNK", 256)
    rng, ev, positions, d64 = _case(seed)
    positions = positions + [positions[0] + 3.0]  # a neighbour beside the first curve: some columns flag
    lo, hi = int(rng.integers(0, 20)), int(rng.integers(60, 90))
    shares = [True] * len(positions)
    for threshold in (0.3, float(np.float32(0.3)) + 1e-9):
        for damping in (None, lambda c: d64[lo : hi + 1, c], lambda c: d64[lo : hi + 1, c].astype(np.float32)):
            for i in range(len(positions)):
                got = beside_an_unclaimed_stroke(i, positions, shares, ev, lo, hi, threshold, damping)
                assert np.array_equal(got, _unclaimed_numpy(i, positions, shares, ev, lo, hi, threshold, damping))


def test_the_kernels_on_a_band_worked_by_hand():
    """Three columns of five rows from row 10: a curve at row 12 covers rows 11-13 (keep 1 px), so the strongest
    uncovered value is the largest outside them; NaN covers nothing; damping halves every value first. The inked
    rows (>= 0.5) farther than 1 px from the curve are counted into what ``out`` held."""
    band = np.array([[0.9, 0.2, 0.6], [0.1, 0.8, 0.7], [0.7, 0.3, 0.9], [0.2, 0.9, 0.1], [0.4, 0.1, 0.5]],
                    np.float32)
    positions = np.array([[12.0, 12.0, np.nan]])
    half = BandDamping(10, 15, np.ones((5, 1)), np.zeros(3, np.int64), np.zeros((0, 3), np.float32),
                       np.zeros(0, np.int64), np.zeros(0, np.int64), np.array([0.5]))  # 1 − 0.5 · 1 everywhere
    assert np.array_equal(half.at(), np.full(band.shape, 0.5))
    table = np.zeros(1, np.float32)
    out = np.zeros(3, np.float32)
    track_scans.strongest_uncovered(band, table, *damping_arguments(None), 0, positions, 10, 1.0, out)
    assert out.tolist() == pytest.approx([0.9, 0.2, 0.9])
    track_scans.strongest_uncovered(band, table, *damping_arguments(half), 0, positions, 10, 1.0, out)
    assert out.tolist() == pytest.approx([0.45, 0.1, 0.45])
    rows = np.array([1, 1, 1], np.int64)
    track_scans.uncovered_ink_rows(band, table, *damping_arguments(None), 0, 0.5, positions, 10, 1.0, rows)
    assert rows.tolist() == [1 + 1, 1 + 0, 1 + 4]  # column 0: row 10 (0.9); column 1: none; column 2: all but 0.1


def _grid(rng, rows: int, cols: int) -> Grid:
    """A random grid: along lines in a few windows, across lines in bands that overlap, clip or miss a track."""
    n = int(rng.integers(1, 6))
    edges = np.linspace(0, cols, n + 1).round().astype(np.int64)
    along = (rng.random((rows, n)) * (rng.random((rows, n)) < 0.4)).astype(np.float32)
    bands = [(int(rng.integers(0, rows)), int(rng.integers(0, rows + 1))) for _ in range(rng.integers(0, 4))]
    across = (rng.random((len(bands), cols)) * (rng.random((len(bands), cols)) < 0.3)).astype(np.float32)
    return Grid(along, edges, across, bands)


def test_the_damping_computed_a_row_at_a_time_is_the_spread_one():
    """``track_scans.damping_row`` from the band's form (``Grid.band_damping``) gives every row of
    ``Grid.damping``, bit for bit, from any first column."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        rows, cols = int(rng.integers(5, 60)), int(rng.integers(10, 300))
        g = _grid(rng, rows, cols)
        r0 = int(rng.integers(0, rows - 1))
        r1 = int(rng.integers(r0 + 1, rows + 1))
        floor = float(rng.random())
        want = g.damping(slice(r0, r1), floor)
        damped, *args = damping_arguments(g.band_damping(slice(r0, r1), floor))
        c0 = int(rng.integers(0, cols))
        n = cols - c0
        for r in range(r1 - r0):
            out = np.empty(n)
            track_scans.damping_row(*args[:-1], args[-1], r, c0, np.empty(n), out)
            assert damped and want.dtype == out.dtype and np.array_equal(out, want[r, c0:])


@pytest.mark.parametrize("seed", range(4))
def test_the_scans_read_coded_maps_and_the_band_damping_as_the_numpy_of_before(seed, monkeypatch):
    """The signals' rival and the unclaimed strokes over a coded map, damped by the grid's band damping read where
    it is spread: the NumPy of before over the decoded map and the spread damping, bit for bit."""
    monkeypatch.setattr(signals, "CHUNK", 256)
    monkeypatch.setattr(unclaimed, "CHUNK", 256)
    rng, ev, positions, _ = _case(seed)
    coded = CodedMap(encode(ev))
    decoded = np.asarray(coded, np.float32)
    g = _grid(rng, *ev.shape)
    lo, hi = int(rng.integers(0, 20)), int(rng.integers(60, 90))
    floor = float(rng.choice([0.15, 0.4]))
    band = g.band_damping(slice(lo, hi + 1), floor)
    spread = lambda c: g.damping(slice(lo, hi + 1), floor, c)  # noqa: E731
    for evidence in (coded, decoded):
        for damping, want_damping in ((band, spread), (None, None)):
            got = rival_strength(evidence, lo, hi, positions, 3.7, damping)
            assert np.array_equal(got, _rival_numpy(decoded, lo, hi, positions, 3.7, want_damping))
    positions = positions + [positions[0] + 3.0]
    shares = [True] * len(positions)
    for evidence in (coded, decoded):
        for damping, want_damping in ((band, spread), (None, None)):
            for i in range(len(positions)):
                got = beside_an_unclaimed_stroke(i, positions, shares, evidence, lo, hi, 0.3, damping)
                assert np.array_equal(got, _unclaimed_numpy(i, positions, shares, decoded, lo, hi, 0.3, want_damping))
    with pytest.raises(ValueError, match="damping of rows"):  # another band's damping is no damping of this one
        rival_strength(coded, lo + 1, hi, positions, 3.7, band)


def test_the_damped_product_is_numpys():
    """``track_scans.damped_product``: a band (codes or float32) times the band's damping, as NumPy multiplies the
    decoded float32 band by the spread float64 damping."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        g = _grid(rng, 70, 500)
        rows = slice(int(rng.integers(0, 30)), int(rng.integers(31, 70)))
        codes = encode(rng.random((70, 500), np.float32) ** 2)[rows]
        want = np.asarray(CodedMap(codes), np.float32) * g.damping(rows, 0.15)
        for band, table in ((codes, compiled_reading(CodedMap(codes), slice(None))[1]),
                            (np.asarray(CodedMap(codes), np.float32), np.zeros(1, np.float32))):
            out = np.empty(want.shape)
            track_scans.damped_product(band, table, *damping_arguments(g.band_damping(rows, 0.15))[1:], out)
            assert np.array_equal(out, want)


def _stroke_width_by_column(ev, position, observed, lo, hi, offset):
    """signals.stroke_width as it was, one column a read."""
    widths = []
    for c in np.flatnonzero(observed & np.isfinite(position))[::4]:
        col = np.asarray(ev[lo - offset : hi + 1 - offset, c], np.float32) >= signals.STROKE_EVIDENCE
        r = int(round(float(position[c]))) - lo
        if not 0 <= r < col.size or not col[r]:
            continue
        off = np.flatnonzero(~col)
        above, below = off[off < r], off[off > r]
        widths.append((below[0] if below.size else col.size) - (above[-1] + 1 if above.size else 0))
    return float(np.median(widths)) if widths else 0.0


def _strength_along_band(evidence, position, row_offset=0):
    """riding.strength_along as it was: the band of rows the trace spans read whole, then the trace's pixels."""
    ok = np.isfinite(position)
    out = np.zeros(position.size, np.float32)
    if not ok.any():
        return out
    rows = np.rint(position[ok]).astype(np.int64) - row_offset
    lo, hi = int(max(0, rows.min())), int(min(evidence.shape[0] - 1, rows.max()))
    if hi < lo:
        return out
    band = np.asarray(evidence[lo : hi + 1], np.float32)
    cols = np.flatnonzero(ok)
    out[cols] = band[np.clip(rows, lo, hi) - lo, cols]
    return out


@pytest.mark.parametrize("seed", range(4))
def test_the_stroke_width_and_the_strength_along_read_in_one_go_are_those_read_column_by_column(seed, monkeypatch):
    """``signals.stroke_width`` reads its columns in chunks, ``riding.strength_along`` only the trace's pixels: the
    same widths and strengths as one column a read, and the band read whole, on coded, merged and float maps, paths
    leaving the band, half rows and NULLs."""
    from core.digitize.evidence.style import MergedEvidence
    from core.digitize.rules.riding import strength_along

    monkeypatch.setattr(signals, "CHUNK", 64)
    rng, ev, positions, _ = _case(seed)
    ev = np.where(rng.random(ev.shape) < 0.5, np.maximum(ev, 0.6), ev).astype(np.float32)  # strokes a few rows wide
    maps = {k: CodedMap(encode(np.roll(ev, 7 * k, axis=0))) for k in (1, 2, 3)}
    for evidence in (maps[1], MergedEvidence(maps, 2, [(3, 0.5)]), ev, ev.astype(np.float64)):
        for p in positions:
            observed = rng.random(p.size) < 0.8
            for lo, hi, offset in ((0, ev.shape[0] - 1, 0), (10, 70, 0), (25, 60, 5)):
                m = evidence if offset == 0 else (evidence[offset:] if isinstance(evidence, np.ndarray)
                                                  else evidence.band(slice(offset, None)))
                assert signals.stroke_width(m, p, observed, lo, hi, offset) == \
                    _stroke_width_by_column(m, p, observed, lo, hi, offset)
            for offset in (0, 5):
                m = evidence if offset == 0 else (evidence[offset:] if isinstance(evidence, np.ndarray)
                                                  else evidence.band(slice(offset, None)))
                got = strength_along(m, p, offset)
                assert got.dtype == np.float32 and np.array_equal(got, _strength_along_band(m, p, offset))


@pytest.mark.parametrize("seed", range(3))
def test_the_curves_of_a_track_read_one_rival_and_one_set_of_unclaimed_strokes(seed):
    """The rival and the unclaimed strokes of a track depend on its traced curves as a set (a row is covered by any of
    them), so the curves of one style in one track share one read (``signals.scan_signals``,
    ``all_curves.trace_all``): read in any order the same, and the flags from the shared read are each curve's own."""
    rng, ev, positions, _ = _case(seed)
    positions = positions + [positions[0] + 3.0]
    g = _grid(rng, *ev.shape)
    lo, hi = 12, 77
    band = g.band_damping(slice(lo, hi + 1), 0.15)
    order = rng.permutation(len(positions))
    shuffled = [positions[k] for k in order]
    assert np.array_equal(rival_strength(ev, lo, hi, positions, 3.7, band),
                          rival_strength(ev, lo, hi, shuffled, 3.7, band))
    shared = unclaimed.unclaimed_columns(shuffled, ev, lo, hi, 0.3, band)
    assert np.array_equal(shared, unclaimed.unclaimed_columns(positions, ev, lo, hi, 0.3, band))
    shares = [True] * len(positions)
    for i in range(len(positions)):
        own = [j != i for j in range(len(positions))]
        assert np.array_equal(beside_an_unclaimed_stroke(i, positions, own, ev, lo, hi, 0.3, band, unclaimed=shared),
                              beside_an_unclaimed_stroke(i, positions, shares, ev, lo, hi, 0.3, band))
