"""The page's percentiles (core/digitize/page/percentiles.py) are np.percentile's bit for bit: the same dtype, shape
and bits for every lane of random maps (mostly zeros as a darkness map is, or none; values under zero; ties; NaN and
-0.0, which go to NumPy), one-element lanes, views that are not contiguous, every q from 0 to 100 as an int or a
float, both axes and 1-D; bytes (NumPy's own)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.digitize.page.percentiles import _select, percentile

DTYPES = (np.float32, np.float64, np.uint8)


def _same(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


@st.composite
def maps(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rows, cols = draw(st.integers(1, 24)), draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if dtype is np.uint8:
        x = rng.integers(0, draw(st.integers(1, 256)), (rows, cols)).astype(np.uint8)
        x[rng.random((rows, cols)) < draw(st.floats(0, 1))] = 0
        return x
    paper = draw(st.floats(0, 1))  # the share of exact zeros
    x = rng.random((rows, cols)) * (rng.random((rows, cols)) >= paper)
    if draw(st.booleans()):
        x = np.round(x * draw(st.integers(1, 8))) / 4  # ties
    if draw(st.booleans()):
        x -= draw(st.floats(0, 1))  # values under zero beside the zeros
    x = x.astype(dtype)
    for odd in (np.nan, -0.0, np.inf, -np.inf):
        if draw(st.integers(0, 9)) == 0:
            x[rng.integers(0, rows), rng.integers(0, cols)] = odd
    return x


quantiles = st.one_of(st.sampled_from([0, 100, 0.0, 100.0, 50, 65.0, 40.0, 99.7]), st.floats(0, 100),
                      st.integers(0, 100))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf − inf between two ranks, as in NumPy's own
@settings(max_examples=150, deadline=None)  # 150 derandomised draws and the pinned examples: 16 s -> ~6 s
@given(maps(), quantiles, st.sampled_from([0, 1, -1, -2]), st.sampled_from(["c", "f", "view"]))
@example(np.zeros((1, 1), np.float32), 65.0, 1, "c")
@example(np.array([[0.0, 0.0, 1.0, 0.5]], np.float32), 65.0, 1, "c")
@example(np.array([[-0.0, 0.0, 0.0]], np.float32), 50.0, 1, "c")
def test_the_percentile_of_every_lane_is_numpys(x, q, axis, layout):
    if layout == "f":
        x = np.asfortranarray(x)
    elif layout == "view":
        x = np.pad(x, ((1, 1), (2, 2)))[1:-1, 2:-2]
    assert _same(percentile(x, q, axis), np.percentile(x, q, axis=axis))
    lane = x[0]
    assert _same(percentile(lane, q, 0), np.percentile(lane, q, axis=0))


def test_other_inputs_are_numpys_own():
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    assert _same(percentile(x, 40.0, 0), np.percentile(x, 40.0, axis=0))  # another dtype
    y = np.random.default_rng(0).random((5, 7)).astype(np.float32)
    assert _same(percentile(y, [10, 90], 1), np.percentile(y, [10, 90], axis=1))  # a sequence of q
    assert _same(percentile(y, np.float64(30.0), 1), np.percentile(y, np.float64(30.0), axis=1))  # a NumPy q
    with pytest.raises(ValueError):
        percentile(y, 101.0, 1)


def test_a_darkness_maps_lanes_of_paper_are_zero_without_a_selection():
    x = np.zeros((3, 2048), np.float32)
    x[:, :600] = np.linspace(0.1, 1.0, 600, dtype=np.float32)  # 29 % ink: the 65th percentile is paper
    x[2, :900] = np.linspace(0.1, 1.0, 900, dtype=np.float32)  # 44 %: it is ink
    got = percentile(x, 65.0, 1)
    assert _same(got, np.percentile(x, 65.0, axis=1)) and got[0] == 0.0 and got[2] > 0.0


def test_the_selection_survives_lanes_that_defeat_its_pivots():
    rng = np.random.default_rng(3)
    for values in (np.arange(5000.0), np.arange(5000.0)[::-1], np.tile([1.0, 2.0], 2500),
                   np.concatenate([np.arange(2500.0), np.arange(2500.0)]), rng.random(5000)):
        for r in (0, 1, 2499, 2500, 4999):
            a = values.copy()
            got = _select(a, a.size, r)
            assert got == np.sort(values)[r] and np.all(a[:r] <= got) and np.all(a[r + 1 :] >= got)
