"""The network's convolutions for bf16 inference on a CPU with their weights packed once, not at every forward.

PyTorch's ``conv2d`` under bf16 autocast casts each fp32 weight to bf16 and oneDNN then reorders it from
channels-last (``acdb``) into its blocked layout (``AcdB16a2b`` and the like), on every call. oneDNN's verbose log
of one KGS window (1,088 × 1,152, the bundled model, 2-core EPYC, load ~3) shows 33 such weight reorders taking
323 ms of the forward's 1,069 ms of convolutions: a few kilobytes each, but each a parallel region of its own,
and 8–15 ms apiece on a shared machine. Here the bf16 weight is laid out in oneDNN's blocked layout once per
input size and the convolution reads it as it is (``mkldnn._convolution_pointwise``, the operator PyTorch's own
compiler emits for a frozen convolution): the same primitive over the same bf16 values, so the same bits
(every one of the 33 convolutions compared, and KGS's LAS: ``tests/core/model/test_packed_conv.py``,
docs/benchmarks.md, issue #64's fifth round).

Only where it is that same arithmetic: inference (no grad), a CPU map in channels-last, bf16 autocast, and a
CPU oneDNN runs bf16 on. Anything else (training, the NCHW reference, fp32, a GPU) goes through the module's
own ``conv2d``.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

PACKED_SIZES = 4  # input sizes a convolution keeps a packed weight for (a scan's windows: one or two sizes)


def packing_applies(precision, device: torch.device | str, channels_last: bool) -> bool:
    """Whether a runner of this precision, device and layout reads through packed convolutions."""
    return (channels_last and torch.device(device).type == "cpu" and precision.mode == "bf16"
            and torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


class PackedConv2d(nn.Module):
    """A ``Conv2d`` whose bf16 weight is packed in oneDNN's layout for each input size it reads."""

    def __init__(self, conv: nn.Conv2d):
        super().__init__()
        if conv.padding_mode != "zeros" or isinstance(conv.padding, str):
            raise ValueError("only zero padding given as numbers is packed")
        self.conv = conv
        self._packed: dict[tuple[int, ...], torch.Tensor] = {}
        self._bias = None if conv.bias is None else conv.bias.detach().to(torch.bfloat16)

    @property
    def weight(self) -> torch.Tensor:  # the network reads its head's weight directly (``VeerNet.forward``)
        return self.conv.weight

    @property
    def bias(self) -> torch.Tensor | None:
        return self.conv.bias

    def _weight_for(self, shape: tuple[int, ...]) -> torch.Tensor:
        packed = self._packed.get(shape)
        if packed is None:
            c = self.conv
            w16 = c.weight.detach().to(torch.bfloat16).contiguous(memory_format=torch.channels_last)
            packed = torch._C._nn.mkldnn_reorder_conv2d_weight(w16.to_mkldnn(), list(c.padding), list(c.stride),
                                                               list(c.dilation), c.groups, list(shape))
            if len(self._packed) >= PACKED_SIZES:
                self._packed.pop(next(iter(self._packed)))
            self._packed[shape] = packed
        return packed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._reads(x):
            return self.conv(x)
        c = self.conv
        x = x.to(torch.bfloat16)  # what autocast does to a convolution's input
        return torch.ops.mkldnn._convolution_pointwise(x, self._weight_for(tuple(x.shape)), self._bias,
                                                       list(c.padding), list(c.stride), list(c.dilation), c.groups,
                                                       "none", [], "")

    @staticmethod
    def _reads(x: torch.Tensor) -> bool:
        return (not torch.is_grad_enabled() and x.device.type == "cpu" and x.dim() == 4
                and torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16
                and x.is_contiguous(memory_format=torch.channels_last))


def packed_for_inference(model: nn.Module) -> nn.Module:
    """A copy of ``model`` for inference whose 2-D convolutions are :class:`PackedConv2d`; ``model`` is left as it
    was (its weights are read now: a later change to them is not in the copy)."""
    twin = copy.deepcopy(model).eval()
    for name, module in list(twin.named_modules()):
        for child_name, child in list(module.named_children()):
            if type(child) is nn.Conv2d and child.padding_mode == "zeros" and not isinstance(child.padding, str):
                setattr(module, child_name, PackedConv2d(child))
    twin.to(memory_format=torch.channels_last)
    return twin
