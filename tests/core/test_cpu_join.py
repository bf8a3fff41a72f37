"""``core/model/cpu_join.py``: the decoder's join of a CPU's channels-last inference (the lower map brought up 2× by
nearest neighbour, beside the skip, in one pass) is PyTorch's ``interpolate`` then ``cat``, bit for bit, at any
thread count; what it does not take goes to PyTorch; and the network's maps are the same with it."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from core.model import cpu_join
from core.model.precision import Precision


def _maps(dtype, c_low: int = 16, c_skip: int = 16, n: int = 2, h: int = 37, w: int = 53):
    g = torch.Generator().manual_seed(c_low + c_skip)
    low = torch.randn(n, c_low, h, w, generator=g).to(dtype).contiguous(memory_format=torch.channels_last)
    skip = torch.randn(n, c_skip, 2 * h, 2 * w, generator=g).to(dtype).contiguous(memory_format=torch.channels_last)
    return low, skip


def _pytorch_s(low: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
    return torch.cat([F.interpolate(low, size=skip.shape[-2:], mode="nearest"), skip], 1)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("c_low, c_skip", [(16, 16), (32, 48), (3, 5)])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_join_is_pytorch_s_bit_for_bit(dtype, c_low, c_skip, threads):
    low, skip = _maps(dtype, c_low, c_skip)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with torch.inference_mode():
            assert cpu_join.applies(low, skip)
            got = cpu_join.upsample_join(low, skip)
            expected = _pytorch_s(low, skip)
    finally:
        torch.set_num_threads(before)
    assert got.dtype == dtype and got.shape == expected.shape
    assert got.is_contiguous(memory_format=torch.channels_last)
    bits = torch.int16 if dtype != torch.float32 else torch.int32
    assert torch.equal(got.view(bits), expected.contiguous(memory_format=torch.channels_last).view(bits))


def test_what_the_join_does_not_take_goes_to_pytorch():
    low, skip = _maps(torch.bfloat16)
    with torch.inference_mode():
        assert not cpu_join.applies(low.contiguous(), skip)  # the reference path's layout
        assert not cpu_join.applies(low, skip.float())  # dtypes apart: PyTorch's cat promotes
        assert not cpu_join.applies(low, skip[:, :, :-1])  # not exactly twice the size
        assert cpu_join.applies(low.half(), skip.half())  # fp16 too: its bits are copied
    assert not cpu_join.applies(low, skip)  # a pass that keeps a graph: autograd's operators


@pytest.mark.parametrize("mode", ["fp32", "bf16"])
def test_the_network_s_maps_are_unchanged(mode, monkeypatch, small_cpu_network):
    model, x = small_cpu_network
    calls = []
    join = cpu_join.upsample_join
    monkeypatch.setattr(cpu_join, "upsample_join", lambda low, skip: calls.append(1) or join(low, skip))
    with torch.inference_mode(), Precision.pinned(mode, "cpu", "test").autocast():
        fast = model(x)
        assert len(calls) == 2  # both decoder joins
        monkeypatch.setattr(cpu_join, "applies", lambda low, skip: False)  # PyTorch's interpolate, then cat
        before = model(x)
    assert torch.equal(fast, before)
