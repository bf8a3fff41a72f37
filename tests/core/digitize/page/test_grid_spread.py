"""The grid's damping and map, spread over the columns in one compiled pass (core/digitize/page/grid.py:
_spread_lines), are the NumPy of before bit for bit: random grids with bands that overlap, miss or clip the rows
asked for, whole bands and chosen columns, float32 and float64 lines."""

import numpy as np

from core.digitize.page.grid import Grid


def _combined_numpy(g: Grid, along: np.ndarray, r0: int, r1: int, cols=None) -> np.ndarray:
    if cols is None:
        out = np.repeat(along, np.diff(g.windows).astype(np.int64), axis=1)
    else:
        out = along[:, np.searchsorted(g.windows, cols, side="right") - 1]
    for (lo, hi), prof in zip(g.bands, g.across):
        a, b = max(lo, r0), min(hi, r1)
        if a < b:
            across = prof[None, :] if cols is None else prof[None, cols]
            np.maximum(out[a - r0 : b - r0], across, out=out[a - r0 : b - r0])
    return out


def test_the_compiled_spread_is_the_numpy_one():
    rng = np.random.default_rng(0)
    for _ in range(60):
        rows, cols = int(rng.integers(5, 60)), int(rng.integers(10, 300))
        n = int(rng.integers(1, 6))
        edges = np.linspace(0, cols, n + 1).round().astype(np.int64)
        along = (rng.random((rows, n)) * (rng.random((rows, n)) < 0.5)).astype(np.float32)
        bands = [(int(rng.integers(0, rows)), int(rng.integers(0, rows + 1))) for _ in range(rng.integers(0, 3))]
        across = (rng.random((len(bands), cols)) * (rng.random((len(bands), cols)) < 0.3)).astype(np.float32)
        g = Grid(along, edges, across, bands)
        r0 = int(rng.integers(0, rows))
        r1 = int(rng.integers(r0, rows + 1))
        pick = None if rng.random() < 0.5 else rng.integers(0, cols, int(rng.integers(1, 50)))
        floor = float(rng.random())
        want = 1.0 - (1.0 - floor) * _combined_numpy(g, g.ruled(slice(r0, r1)), r0, r1, pick)
        got = g.damping(slice(r0, r1), floor, pick)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        want = _combined_numpy(g, g.along[r0:r1], r0, r1, pick)
        got = g.map(slice(r0, r1), pick)
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_a_bands_damping_is_made_once_and_is_the_one_made_afresh():
    """``Grid.band_damping`` keeps a band's damping per rows and floor: asked again (from several threads at once
    too) it is the one kept, and spread it is what a fresh grid's damping and the NumPy of before give; another
    band or floor is another; let go of, none is held."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(1)
    rows, cols = 80, 900
    edges = np.linspace(0, cols, 4).round().astype(np.int64)
    along = (rng.random((rows, 3)) * (rng.random((rows, 3)) < 0.4)).astype(np.float32)
    bands = [(0, 40), (35, 80)]
    across = (rng.random((2, cols)) * (rng.random((2, cols)) < 0.2)).astype(np.float32)
    g = Grid(along, edges, across, bands)
    with ThreadPoolExecutor(4) as pool:
        kept = list(pool.map(lambda _: g.band_damping(slice(10, 60), 0.15), range(16)))
    assert all(k is kept[0] for k in kept) and g.band_damping(slice(10, 60), 0.15) is kept[0]
    fresh = Grid(along.copy(), edges.copy(), across.copy(), list(bands))
    want = 1.0 - (1.0 - 0.15) * _combined_numpy(fresh, fresh.ruled(slice(10, 60)), 10, 60)
    for got in (kept[0].at(), g.damping(slice(10, 60), 0.15), fresh.damping(slice(10, 60), 0.15)):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    pick = rng.integers(0, cols, 50)
    assert np.array_equal(kept[0].at(pick), fresh.damping(slice(10, 60), 0.15, pick))
    assert g.band_damping(slice(10, 61), 0.15) is not kept[0] and g.band_damping(slice(10, 60), 0.3) is not kept[0]
    assert 0 < g.kept_damping_bytes() < 3 * 50 * 3 * 8 + cols * 8 + 1024  # the lines and windows, not the spread
    g.let_go_of_dampings()
    assert g.kept_damping_bytes() == 0 and g.band_damping(slice(10, 60), 0.15) is not kept[0]


def test_the_grid_is_the_same_at_one_and_two_threads():
    """detect_grid spreads its windows' and bands' profiles and its still curves' windows over the page's threads:
    a page with a ruled grid, a still curve and a wandering one gives the same grid, bit for bit, either way."""
    from core.common.threads import set_work_threads
    from core.digitize.page.grid import detect_grid
    from core.digitize.page.ink import ink_map

    rng = np.random.default_rng(5)
    rows, cols = 260, 9000
    img = np.clip(235 + rng.normal(0, 4, (rows, cols)), 0, 255).astype(np.uint8)
    img[20:22] = img[238:240] = 30  # the track's borders
    img[60::30] = 70  # a ruled grid along depth
    img[20:240, ::250] = 80  # depth lines
    still = (150 + 2.5 * np.sin(np.arange(cols) / 40.0)).astype(int)  # a curve lying nearly still
    wander = (110 + 80 * np.sin(np.arange(cols) / 300.0)).astype(int)
    for r in (still, wander):
        img[r, np.arange(cols)] = img[r + 1, np.arange(cols)] = 20
    bands = [(18, 243), (100, 200)]
    grids = []
    try:
        for n in (1, 2):
            set_work_threads(n)
            g = detect_grid(img, bands, dark=ink_map(img))
            grids.append((g.along.tobytes(), g.across.tobytes(), g.windows.tobytes(), g.bands, g.damping().tobytes()))
            # the still curve's rows were found as a line, then released
            assert set(range(147, 154)) <= set(detect_grid(img, bands, still_curves=False).line_rows().tolist())
            assert not set(range(147, 154)) & set(g.line_rows().tolist())
    finally:
        set_work_threads(None)
    assert grids[0] == grids[1]
