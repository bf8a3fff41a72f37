"""CUDA's autocast rules, applied on the CPU: so what a GPU run saves for backward can be reproduced and tested here.

Autocast casts each operator by a per-backend list. The CPU's and CUDA's lists differ where it matters for this
network: under CPU autocast ``upsample_*``, ``group_norm`` and ``layer_norm`` take and return the 16-bit dtype,
while CUDA autocast runs them in fp32 and returns fp32 (its "autocast to float32" list, PyTorch's AMP docs and
``aten/src/ATen/autocast_mode.cpp``). An fp32 tensor that leaves such an operator travels on: ``torch.cat`` of
it with a 16-bit skip promotes to fp32, and every tensor saved after it is twice as large. That is how an H100
run saved 0.667 of fp32's bytes where the CPU said 0.50 (issue #33).

:func:`cuda_autocast_rules` is a ``TorchFunctionMode`` that, while a CPU autocast region is enabled, runs the
operators of :data:`CUDA_FP32_OPS` as CUDA would: inputs cast to fp32, autocast off inside, an fp32 result. The
operators CUDA runs in 16 bits (convolutions, matmuls, linear layers, attention) CPU autocast already runs in 16
bits. Outside an autocast region, or in fp32, it changes nothing.
"""

from __future__ import annotations

import contextlib
import contextvars

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

# the operators of CUDA's "autocast to float32" list that the functional API reaches and this project's code
# calls (upsampling through F.interpolate; the norms; the reductions and losses a training step may use)
CUDA_FP32_OPS = frozenset({
    F.interpolate, F.upsample, F.upsample_nearest, F.upsample_bilinear,
    F.group_norm, F.layer_norm, F.normalize,
    F.softplus, F.log_softmax, F.softmin, F.binary_cross_entropy_with_logits, F.cross_entropy, F.nll_loss,
    F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.kl_div,
    torch.exp, torch.log, torch.log1p, torch.pow, torch.rsqrt, torch.reciprocal, torch.cumsum, torch.cumprod,
    torch.prod, torch.norm, torch.logsumexp,
})


def _to_fp32(a):
    if isinstance(a, torch.Tensor) and a.is_floating_point() and a.dtype != torch.float32:
        return a.float()
    if isinstance(a, (list, tuple)):
        return type(a)(_to_fp32(v) for v in a)
    return a


class _CudaRules(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in CUDA_FP32_OPS and torch.is_autocast_enabled("cpu"):
            with torch.autocast("cpu", enabled=False):
                return func(*_to_fp32(args), **{k: _to_fp32(v) for k, v in kwargs.items()})
        return func(*args, **kwargs)


RULES = ("cpu", "cuda")
_ACTIVE = contextvars.ContextVar("welltrace_autocast_rules", default="cpu")


def active_rules() -> str:
    """The rule set CPU autocast follows here now: ``cuda`` inside :func:`autocast_rules` ("cuda"), else ``cpu``
    (what a measurement taken now stands for: the budget keys its probes by it)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def autocast_rules(rules: str):
    """Within: CPU autocast follows ``rules``: ``cpu`` (the backend's own, nothing changes) or ``cuda`` (the
    operators of :data:`CUDA_FP32_OPS` cast to fp32 as CUDA autocast does; module docstring)."""
    if rules not in RULES:
        raise ValueError(f"unknown autocast rules {rules!r}; choose one of {', '.join(RULES)}")
    token = _ACTIVE.set(rules)
    try:
        if rules == "cuda":
            with _CudaRules():
                yield
        else:
            yield
    finally:
        _ACTIVE.reset(token)


def rules_for(device: torch.device | str) -> str:
    """The rule set a step on ``device`` runs under (what the budget predicts it with)."""
    return "cuda" if torch.device(device).type == "cuda" else "cpu"
