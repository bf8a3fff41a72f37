"""Normalisation layers with fp32 statistics whose output stays in the compute dtype.

Under CUDA autocast ``group_norm`` and ``layer_norm`` run in fp32 and return fp32, which silently doubles a
large share of the activation memory of a 16-bit step; these layers compute their statistics in fp32 and hand
back (and save) the 16-bit dtype. In inference they take the reduction path, whose sums do not depend on the
thread count (``GroupNorm16.forward``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def groups_for(channels: int) -> int:
    """16 channels per group; a layer with fewer than 32 channels uses groups of half its channels."""
    return channels // 16 if channels >= 32 else 2


# -- norms with fp32 statistics and 16-bit outputs -------------------------------


class _GroupNorm16(torch.autograd.Function):
    """GroupNorm computed in fp32 that saves its input in the input's dtype.

    Under CUDA autocast ``group_norm`` runs in fp32 and returns fp32, which
    silently doubles a large share of activation memory; calling it on
    ``x.float()`` would save an fp32 copy for backward. Here only the 16-bit
    input and the per-group mean/rstd are saved; fp32 copies are transient.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, groups: int, eps: float):
        n, c = x.shape[:2]
        hxw = x.numel() // (n * c)
        out, mean, rstd = torch.ops.aten.native_group_norm(x.float(), weight, bias, n, c, hxw, groups, eps)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.groups = groups
        return out.to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, rstd = ctx.saved_tensors
        n, c = x.shape[:2]
        hxw = x.numel() // (n * c)
        gx, gw, gb = torch.ops.aten.native_group_norm_backward(
            grad.float().contiguous(), x.float().contiguous(), mean, rstd, weight, n, c, hxw, ctx.groups,
            [ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2]],
        )
        return (gx.to(x.dtype) if gx is not None else None), gw, gb, None, None


class _GroupNormByReduction(torch.autograd.Function):
    """GroupNorm whose statistics and gradients are plain reductions, for a batch of one on a GPU.

    The native kernel spreads its statistics over batch × groups rows: 2–6 at batch 1, so on an H100 it was
    76 % of a 12,800 × 640 step. Here the statistics are one ``var_mean`` in fp32 over each flattened group (a
    reduction the device spreads over all its cores) and the output is one fused multiply-add with per-channel
    scale and shift; the backward needs two per-channel sums (of gy and of gy · x) and one more multiply-add,
    ``gx = A·gy + B·x + C`` with A, B, C per (sample, channel). Saved: the 16-bit input and the per-group mean and
    rstd, nothing more (a naive fp32 ``var_mean`` norm let autograd keep fp32 intermediates: 21.1 GiB saved
    instead of 9.1 on the H100). Every operation is elementwise or a reduction over named dims, so a
    channels-last input works as it is and the output keeps its layout.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, groups: int, eps: float):
        n, c = x.shape[:2]
        xf = x.float()  # transient: not saved
        var, mean = torch.var_mean(xf.unflatten(1, (groups, c // groups)), dim=tuple(range(2, x.dim() + 1)),
                                   correction=0)
        rstd = torch.rsqrt(var + eps)  # (n, groups)
        scale = rstd.repeat_interleave(c // groups, 1) * weight  # (n, c)
        shift = bias - mean.repeat_interleave(c // groups, 1) * scale
        per_channel = (n, c) + (1,) * (x.dim() - 2)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.groups = groups
        return torch.addcmul(shift.view(per_channel), xf, scale.view(per_channel)).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, rstd = ctx.saved_tensors
        g = ctx.groups
        n, c = x.shape[:2]
        cg = c // g
        dims = tuple(range(2, x.dim()))
        count = cg * x[0, 0].numel()  # elements in a group
        xf, gf = x.float(), grad.float()
        s1 = gf.sum(dims)  # (n, c): Σ gy
        s2 = (gf * xf).sum(dims)  # (n, c): Σ gy·x
        mean_c, rstd_c = mean.repeat_interleave(cg, 1), rstd.repeat_interleave(cg, 1)
        s_xhat = rstd_c * (s2 - mean_c * s1)  # Σ gy·x̂ per (n, c)
        gw = s_xhat.sum(0) if ctx.needs_input_grad[1] else None
        gb = s1.sum(0) if ctx.needs_input_grad[2] else None
        gx = None
        if ctx.needs_input_grad[0]:
            m1 = (weight * s1).view(n, g, cg).sum(2) / count  # group mean of gy·w
            m2 = (weight * s_xhat).view(n, g, cg).sum(2) / count  # group mean of gy·w·x̂
            a = rstd_c * weight
            b = -(rstd * rstd * m2).repeat_interleave(cg, 1)
            c0 = (rstd * (rstd * m2 * mean - m1)).repeat_interleave(cg, 1)
            per_channel = (n, c) + (1,) * (x.dim() - 2)
            gx = torch.addcmul(torch.addcmul(c0.view(per_channel), xf, b.view(per_channel)), gf,
                               a.view(per_channel)).to(x.dtype)
        return gx, gw, gb, None, None


def group_norm_16bit(x: torch.Tensor, groups: int, weight: torch.Tensor, bias: torch.Tensor, eps: float,
                     by_reduction: bool | None = None) -> torch.Tensor:
    """A 16-bit input's group norm, fp32 statistics, 16-bit output. ``by_reduction`` (default: on a GPU, or for a
    channels-last input) takes :class:`_GroupNormByReduction`; else the native kernels, which measured 1.4–1.9×
    faster on the CPU (bf16 forward and backward, 16 × 640 × 1,024 and 64 × 160 × 256, 2-core EPYC)."""
    if by_reduction is None:
        by_reduction = x.is_cuda or not x.is_contiguous()
    fn = _GroupNormByReduction if by_reduction else _GroupNorm16
    return fn.apply(x, weight, bias, groups, eps)


class GroupNorm16(nn.GroupNorm):
    """``nn.GroupNorm`` with fp32 statistics, fp32 affine parameters and a 16-bit output."""

    def forward(self, x: torch.Tensor, silu: bool = False) -> torch.Tensor:
        """The norm of ``x``; with ``silu``, ``F.silu`` of it (in place in inference, where nothing is kept for
        backward). A bf16 channels-last map in a CPU's inference takes both in one compiled pass
        (``cpu_group_norm``: bit for bit PyTorch's SiLU); elsewhere the SiLU is PyTorch's, after the norm."""
        if silu and not torch.is_grad_enabled() and x.dtype == torch.bfloat16:
            from . import cpu_group_norm

            if cpu_group_norm.applies(x):
                return cpu_group_norm.group_norm(x, self.num_groups, self.weight, self.bias, self.eps, silu=True)
        out = self._norm(x)
        return F.silu(out, inplace=not torch.is_grad_enabled()) if silu else out

    def _norm(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.is_grad_enabled():
            # inference in any precision: statistics by plain reductions. PyTorch's fp32 CPU kernel on
            # channels-last input splits its sums by thread, so a scan read with 1 thread (a folder run's worker)
            # and with 2 (one scan alone) gave maps up to 0.03 apart on KGS, enough to move a wrap and write a GR
            # a whole scale off; the reductions give the same maps at 1 and 2 threads
            # (tests/core/digitize/rules/test_trust.py). That kernel also takes E[x²] − E[x]² in fp32: on inputs of mean 3 and
            # spread 0.05 its output was 1.6 off a float64 reference, the reductions' 1e-5. They cost time: 120
            # against 42 ms a 16 × 1,664 × 1,024 map (2-core EPYC), KGS evidence 55 → 78 s (docs/benchmarks.md).
            # A channels-last map on a CPU takes the same numbers from two compiled passes, 3-5× faster
            # (core/model/cpu_group_norm.py)
            from . import cpu_group_norm

            if cpu_group_norm.applies(x):
                return cpu_group_norm.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)
            return _GroupNormByReduction.apply(x, self.weight, self.bias, self.num_groups, self.eps)
        if x.dtype == torch.float32:
            return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)
        return group_norm_16bit(x, self.num_groups, self.weight, self.bias, self.eps)


class _LayerNorm16(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps: float):
        shape = (x.shape[-1],)
        out, mean, rstd = torch.ops.aten.native_layer_norm(x.float(), shape, weight, bias, eps)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        return out.to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias, mean, rstd = ctx.saved_tensors
        gx, gw, gb = torch.ops.aten.native_layer_norm_backward(
            grad.float().contiguous(), x.float().contiguous(), (x.shape[-1],), mean, rstd, weight, bias,
            [ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2]],
        )
        return (gx.to(x.dtype) if gx is not None else None), gw, gb, None


class LayerNorm16(nn.LayerNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.float32:
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return _LayerNorm16.apply(x, self.weight, self.bias, self.eps)
