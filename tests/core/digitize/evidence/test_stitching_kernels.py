"""The windows' stitching, compiled (``stitching.add_weighted``, ``stitching.settle_columns``): the codes and the class
mask NumPy's arithmetic gave, bit for bit, at any number of threads (the rows cut into one run a thread)."""

import numpy as np
import pytest

from core.common import threads
from core.digitize.evidence import network, stitching


@pytest.fixture(params=[1, 2, 5])
def work_threads(request):
    """The rows spread over 1, 2 or 5 threads (5: runs of 7-8 of 37 rows, a run shorter than the others)."""
    threads.set_work_threads(request.param)
    yield request.param
    threads.set_work_threads(None)
from core.digitize.evidence.coded_map import encode


def _numpy_settle(acc, wsum, n, classes, keys):
    probs = acc[..., :n] / np.maximum(wsum[:n], 1e-12)
    codes = [encode(probs[0 if classes == 1 else k]) for k in keys]
    mask = (probs[0] > 0.5) if classes == 1 else probs.argmax(0)
    return codes, mask.astype(np.uint8)


def _sums(rng, classes, rows, cols):
    """Stitched sums as the windows leave them: softmax-like probabilities weighted by 0-2 windows' ramps, with
    ties between classes, columns no window reached (weight 0) and values a hair outside [0, 1]."""
    p = rng.random((classes, rows, cols), dtype=np.float32)
    p /= p.sum(0) if classes > 1 else 1
    p[:, ::7] = p[:, ::7].round(1)  # ties
    w = rng.choice(np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.0], np.float32), cols)
    acc = p * w
    acc[0, 3, 5] = 1.0000001 * w[5]
    acc[-1, 4, 6] = -1e-9
    return acc.astype(np.float32), w


@pytest.mark.parametrize("classes", [1, 4])
def test_settled_codes_and_mask_are_numpy_s(classes, work_threads):
    rng = np.random.default_rng(classes)
    keys = network.kept_classes(classes)
    acc, wsum = _sums(rng, classes, 37, 300)
    n = 211  # a settled stretch shorter than the buffer, as between windows
    want_codes, want_mask = _numpy_settle(acc, wsum, n, classes, keys)
    codes = [np.zeros((37, n), np.uint16) for _ in keys]
    mask = np.zeros((40, 400), np.uint8)  # written through a view, as into the page's mask
    stitching.settle_columns(acc, wsum, n, np.array([0 if classes == 1 else k for k in keys], np.int64),
                            tuple(codes), mask[2:39, 50 : 50 + n], classes == 1)
    for got, want in zip(codes, want_codes):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(mask[2:39, 50 : 50 + n], want_mask)
    assert not mask[:2].any() and not mask[:, : 50].any()


def test_weighted_window_adds_as_numpy_does(work_threads):
    rng = np.random.default_rng(7)
    acc = rng.random((4, 33, 500), dtype=np.float32)
    p = rng.random((4, 33, 320), dtype=np.float32)
    wt = network.Windowing.for_model(network.NetConfig(), 320).weights(64, 384, 1000)
    want = acc.copy()
    want[..., 90:410] += p * wt
    stitching.add_weighted(acc, p, wt, 90)
    np.testing.assert_array_equal(acc, want)
