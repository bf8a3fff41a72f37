"""``core/model/cpu_group_norm.py``: the compiled group norm of a CPU's channels-last inference gives the numbers of
the reductions it replaced, bit for bit on these maps, at any thread count, a group whose mean is exactly a float32
midpoint included (how one window of a shared scan differed: docs/benchmarks.md); the SiLU fused into it is
PyTorch's on every bf16 value; and so the network's maps."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.model import cpu_group_norm
from core.model.norms import GroupNorm16, _GroupNormByReduction
from core.model.precision import Precision


def _map(c: int, dtype, shape=(1, 2), mean: float = 0.3, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    h, w = 97 * shape[0], 331 * shape[1]  # pixels no multiple of a chunk or a block
    x = torch.randn(2, c, h, w, generator=g) * 0.7 + mean
    return x.to(dtype).contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("c, mean", [(16, 0.3), (32, 3.0), (96, -1.0)])
def test_the_compiled_norm_is_the_reductions_bit_for_bit(dtype, c, mean):
    torch.manual_seed(c)
    norm = GroupNorm16(c // 16 if c >= 32 else 2, c)
    torch.nn.init.normal_(norm.weight)
    torch.nn.init.normal_(norm.bias)
    x = _map(c, dtype, mean=mean)
    with torch.inference_mode():
        assert cpu_group_norm.applies(x)
        expected = _GroupNormByReduction.apply(x, norm.weight, norm.bias, norm.num_groups, norm.eps)
        got = cpu_group_norm.group_norm(x, norm.num_groups, norm.weight, norm.bias, norm.eps)
    assert got.dtype == dtype and got.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(got, expected)


def test_the_fused_silu_is_pytorch_s_on_every_bf16_value():
    """Every finite bf16 value (65,280 of the 65,536 patterns; a norm gives no NaN or infinity) through the fused
    pass, scale 1 and shift 0, against PyTorch's ``F.silu`` of the same pass's norm output: the table's lookup by
    the rounded output's bits, bit for bit."""
    patterns = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
    values = patterns[torch.isfinite(patterns)].view(-1, 16)  # 4,080 pixels of 16 channels
    src = values.view(torch.int16).numpy()
    ones, zeros = np.ones(16, np.float32), np.zeros(16, np.float32)
    norm_out, fused = np.empty_like(src), np.empty_like(src)
    table = cpu_group_norm.silu_table()
    cpu_group_norm._affine(src, True, False, 0, src.shape[0], ones, zeros, norm_out, table)
    cpu_group_norm._affine(src, True, True, 0, src.shape[0], ones, zeros, fused, table)
    expected = F.silu(torch.from_numpy(norm_out).view(torch.bfloat16))
    assert torch.equal(torch.from_numpy(fused).view(torch.bfloat16).view(torch.int16), expected.view(torch.int16))


@pytest.mark.parametrize("c, mean", [(16, 0.3), (96, -1.0)])
def test_the_norm_with_its_silu_is_the_norm_then_pytorch_s_silu(c, mean):
    torch.manual_seed(c)
    weight, bias = torch.randn(c) * 2, torch.randn(c) * 3
    x = _map(c, torch.bfloat16, mean=mean)
    with torch.inference_mode():
        expected = F.silu(cpu_group_norm.group_norm(x, c // 16, weight, bias, 1e-5))
        got = cpu_group_norm.group_norm(x, c // 16, weight, bias, 1e-5, silu=True)
        assert got.is_contiguous(memory_format=torch.channels_last)
        assert torch.equal(got.view(torch.int16), expected.view(torch.int16))
        with pytest.raises(ValueError, match="bf16"):  # fp32's exp is not checked value by value
            cpu_group_norm.group_norm(x.float(), c // 16, weight, bias, 1e-5, silu=True)


def test_the_same_numbers_at_one_and_two_threads():
    norm = GroupNorm16(2, 32)
    x = _map(32, torch.bfloat16, shape=(4, 4))
    before = torch.get_num_threads()
    out = []
    try:
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            with torch.inference_mode():
                out.append(cpu_group_norm.group_norm(x, 2, norm.weight, norm.bias, norm.eps))
    finally:
        torch.set_num_threads(before)
    assert torch.equal(out[0], out[1]) and torch.equal(out[0], out[2])


def test_it_takes_only_a_cpu_s_channels_last_inference_map():
    x = _map(16, torch.float32)
    assert not cpu_group_norm.applies(x.contiguous())  # the reference path's layout: PyTorch's own
    with torch.enable_grad():
        assert not cpu_group_norm.applies(x)  # training: autograd's norms
    with torch.inference_mode():
        assert not cpu_group_norm.applies(x.half())


@pytest.mark.parametrize("mode", ["fp32", "bf16"])
def test_the_network_s_maps_are_unchanged(mode, monkeypatch, small_cpu_network):
    model, x = small_cpu_network
    with torch.inference_mode(), Precision.pinned(mode, "cpu", "test").autocast():
        fast = model(x)  # bf16: every norm and its SiLU in one compiled pass
        monkeypatch.setattr(cpu_group_norm, "applies", lambda t: False)  # reductions, then PyTorch's SiLU
        before = model(x)
    assert torch.equal(fast, before)


def _mean_on_a_midpoint(seed: int) -> torch.Tensor:
    """A (1, 16, 32, 32) bf16 channels-last map whose mean is exactly halfway between two float32 values (as a
    group of iqa_33-025-02289-0001's section's was): random values, a few of them set to the bf16 pieces that
    bring the exact sum there."""
    g = torch.Generator().manual_seed(seed)
    v = (torch.randn(1, 16, 32, 32, generator=g) * 2 - 3.9).to(torch.bfloat16).double().flatten()
    v[:64] = 0.0  # room for the pieces
    n, total = v.numel(), Fraction(float(v.sum()))  # exact: bf16 values summed in float64
    f = np.float32(float(total / n))
    midpoint = (Fraction(float(f)) + Fraction(float(np.nextafter(f, np.float32(np.inf))))) / 2
    short, k = midpoint * n - total, 0
    while short:
        piece = Fraction(float(torch.tensor(float(short), dtype=torch.float64).to(torch.bfloat16)))
        v[k], short, k = float(piece), short - piece, k + 1
    x = v.to(torch.bfloat16)
    assert torch.equal(x.double(), v) and Fraction(float(v.sum())) / n == midpoint
    return x.view(1, 16, 32, 32).contiguous(memory_format=torch.channels_last)


def test_a_mean_exactly_between_two_float32_values_rounds_as_the_reductions_round(monkeypatch):
    """Rounded to even here, the exact mean went one float32 step from PyTorch's Welford mean, and with it some
    outputs: on such an edge the kernel takes the reductions' statistics."""
    x = _mean_on_a_midpoint(0)
    weight, bias = torch.ones(16), torch.zeros(16)
    with torch.inference_mode():
        expected = _GroupNormByReduction.apply(x, weight, bias, 1, 1e-5)
        assert torch.equal(cpu_group_norm.group_norm(x, 1, weight, bias, 1e-5), expected)
        monkeypatch.setattr(cpu_group_norm, "_on_a_rounding_edge", lambda *args: False)  # the kernel of before
        assert not torch.equal(cpu_group_norm.group_norm(x, 1, weight, bias, 1e-5), expected)


def test_a_flat_group_is_no_edge():
    """A constant map's variance is 0 in one computation and a rounding away in the other: lost in var + eps, so
    the kernel keeps its own statistics, and the same numbers."""
    x = torch.full((1, 32, 40, 50), 0.25).to(torch.bfloat16).contiguous(memory_format=torch.channels_last)
    weight, bias = torch.randn(32, generator=torch.Generator().manual_seed(1)), torch.zeros(32)
    before = cpu_group_norm.EDGES[0]
    with torch.inference_mode():
        got = cpu_group_norm.group_norm(x, 2, weight, bias, 1e-5)
        assert torch.equal(got, _GroupNormByReduction.apply(x, weight, bias, 2, 1e-5))
    assert cpu_group_norm.EDGES[0] == before
