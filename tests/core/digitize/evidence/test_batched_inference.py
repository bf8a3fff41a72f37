"""``core/digitize/evidence/network.py: predict_windows_batched``, the GPU's reading (windows batched, stitched and coded
on the device, one wait at the end), run on the CPU against the window-by-window reading it must equal."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.digitize.evidence.network import (
    Windowing,
    _same_length_runs,
    predict_windows,
    predict_windows_batched,
    strips,
)
from core.model.network import NetConfig, VeerNet
from core.model.precision import Precision


def _picture(rows: int = 96, cols: int = 800) -> np.ndarray:
    rng = np.random.default_rng(2)
    img = np.full((rows, cols), 255, np.uint8)
    x = np.arange(cols)
    for k in range(3):
        y = np.clip(rows / 2 + 30 * np.sin(x / (40 + 15 * k) + k), 0, rows - 1).astype(int)
        img[y, x] = 0
    return np.where(rng.random(img.shape) < 0.01, 0, img).astype(np.uint8)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return VeerNet(NetConfig(channels=(8, 16, 32), attn_dim=32, attn_heads=2, classes=4)).eval()


def test_one_window_at_a_time_it_writes_the_maps_window_by_window_reading_writes(model):
    img = _picture()
    win = Windowing.for_model(model.cfg, 256)
    fp32 = Precision.pinned("fp32", "cpu", "test")
    expected = predict_windows(model, img, fp32, window=win, rows=(8, 88), cols=(40, 760))
    got = predict_windows_batched(model, img, fp32, "cpu", window=win, rows=(8, 88), cols=(40, 760), batch=1)
    assert got.windows == expected.windows > 3
    for k in expected.maps:
        assert np.array_equal(got.maps[k].codes, expected.maps[k].codes), k
    assert np.array_equal(got.mask, expected.mask)


@pytest.mark.parametrize("mode", ["fp32", "bf16"])
def test_batched_it_writes_the_same_maps_within_a_code(model, mode):
    """A batch of windows is one forward: the convolutions may sum in another order than window by window."""
    img = _picture()
    win = Windowing.for_model(model.cfg, 256)
    prec = Precision.pinned(mode, "cpu", "test")
    expected = predict_windows(model, img, prec, window=win)
    done = []
    got = predict_windows_batched(model, img, prec, "cpu", window=win, batch=3, progress=lambda i, n: done.append(i))
    assert done[-1] == got.windows and len(done) < got.windows  # three windows a step
    for k in expected.maps:
        diff = np.abs(got.maps[k].codes.astype(np.int64) - expected.maps[k].codes.astype(np.int64))
        assert diff.max() <= 1 and (diff > 0).mean() < 1e-3, (k, diff.max())
    assert (got.mask != expected.mask).mean() < 1e-3


def test_windows_are_batched_in_runs_of_one_length():
    parts = strips(5003, 1024, 352, 8)
    runs = _same_length_runs(parts, 3)
    assert [w for run in runs for w in run] == parts
    assert all(len({b - a for a, b in run}) == 1 and len(run) <= 3 for run in runs)
    assert parts[-1][1] - parts[-1][0] != 1024 and runs[-1] == [parts[-1]]  # the last, longer, alone
