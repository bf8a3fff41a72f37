"""How a run's gradients are doing, and the failure modes docs/design.md names, watched step by step.

:func:`grad_health` summarises one step's gradients (global norm, share of exact zeros, non-finite
elements, a log2 magnitude histogram and the share below fp16's subnormal floor): the GUI's gradient
health view and the failure watch read it. :class:`FailureWatch` turns a run of steps into warnings
(the loss scale collapsing, steps skipped on overflow, gradients underflowing), each with advice.
"""

from __future__ import annotations

import collections

import torch

from core.common.events import GradHealth, StepEvent, WarningEvent

FP16_MIN_SUBNORMAL_LOG2 = -24
HIST_LO, HIST_HI = -40, 8  # log2 range of the gradient-magnitude histogram


def grad_health(model: torch.nn.Module, per_layer: bool) -> GradHealth:
    grads = [p.grad.detach().reshape(-1) for p in model.parameters() if p.grad is not None]
    if not grads:
        return GradHealth(0.0, 0.0, 0, HIST_LO, [0] * (HIST_HI - HIST_LO))
    g = torch.cat(grads).float()
    finite = torch.isfinite(g)
    nonfinite = int((~finite).sum())
    gf = g[finite]
    zero = float((gf == 0).sum()) / max(1, g.numel())
    nz = gf[gf != 0].abs()
    norm = float(torch.linalg.vector_norm(gf)) if gf.numel() else 0.0
    if nz.numel():
        e = torch.floor(torch.log2(nz)).clamp(HIST_LO, HIST_HI - 1)
        counts = torch.bincount((e - HIST_LO).long(), minlength=HIST_HI - HIST_LO).tolist()
        under = float((nz < 2.0**FP16_MIN_SUBNORMAL_LOG2).sum()) / nz.numel()
    else:
        counts, under = [0] * (HIST_HI - HIST_LO), 0.0
    layers = None
    if per_layer:
        layers = {n: float(p.grad.detach().float().norm()) for n, p in model.named_parameters() if p.grad is not None}
    return GradHealth(norm, zero, nonfinite, HIST_LO, counts, under, layers)


class FailureWatch:
    """The failure-mode detectors of docs/design.md (The engine), each debounced to one warning per 50 steps."""

    def __init__(self):
        self.halvings = collections.deque(maxlen=20)
        self.skipped_run = 0
        self.last: dict[str, int] = {}

    def _emit(self, step: int, code: str, message: str, advice: str) -> WarningEvent | None:
        if step - self.last.get(code, -10**9) < 50:
            return None
        self.last[code] = step
        return WarningEvent(step, code, message, advice)

    def observe(self, ev: StepEvent, scale_before: float | None) -> list[WarningEvent]:
        out = []
        halved = ev.loss_scale is not None and scale_before is not None and ev.loss_scale < scale_before
        self.halvings.append(bool(halved))
        self.skipped_run = self.skipped_run + 1 if ev.skipped else 0
        n_half = sum(self.halvings)
        if n_half >= 8:
            out.append(self._emit(ev.step, "scale_collapse",
                                  f"loss scale halved {n_half} times in {len(self.halvings)} steps",
                                  "learning rate too high or a layer overflows in fp16; lower the learning rate, "
                                  "keep that layer in fp32, or try bf16"))
        if self.skipped_run >= 3:
            out.append(self._emit(ev.step, "skipped_steps", f"{self.skipped_run} steps in a row skipped on overflow",
                                  "gradients overflow fp16 even at a small scale; try bf16 or a lower learning rate"))
        if ev.grad.zero_fraction > 0.5 and not ev.skipped:
            out.append(self._emit(ev.step, "grad_underflow",
                                  f"{ev.grad.zero_fraction:.0%} of gradient elements are exactly zero",
                                  "gradients underflow: in fp16 raise the initial loss scale, or use bf16 "
                                  "(fp32's exponent range)"))
        if ev.grad.fp16_underflow_fraction > 0.05 and ev.precision == "fp16" and ev.loss_scale is None:
            out.append(self._emit(ev.step, "fp16_underflow",
                                  f"{ev.grad.fp16_underflow_fraction:.0%} of gradients lie below fp16's subnormal floor",
                                  "run fp16 with the loss scaler, or bf16"))
        if ev.grad.nonfinite and ev.loss_scale is None:
            out.append(self._emit(ev.step, "nonfinite", f"{ev.grad.nonfinite} gradient elements are Inf/NaN",
                                  "lower the learning rate or keep the overflowing layer in fp32"))
        return [w for w in out if w is not None]
