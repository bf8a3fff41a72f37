"""Faults a test injects into a training run (``TrainConfig.fault``): an out-of-memory step, a loss that
overflows fp16 once scaled, a NaN loss, on one rank or all. Kept out of the step itself: the trainer asks
this object, which holds its own state (an injected OOM fires once), and never changes the run's config."""

from __future__ import annotations

import torch


class Faults:
    """``{"oom_steps": [..], "overflow_steps": [..], "nan_step": n, "rank": r}``; falsy when there are none."""

    def __init__(self, spec: dict | None, rank: int = 0):
        spec = spec or {}
        here = spec.get("rank", rank) == rank
        self._oom = set(spec.get("oom_steps", []))
        self._overflow = set(spec.get("overflow_steps", [])) if here else set()
        self._nan = spec.get("nan_step") if here else None

    def __bool__(self) -> bool:
        return bool(self._oom or self._overflow or self._nan is not None)

    def before_step(self, step: int) -> None:
        """An injected out-of-memory, once: the retried step (with the next lever) runs."""
        if step in self._oom:
            self._oom.discard(step)
            raise torch.OutOfMemoryError("simulated out of memory (test fault injection)")

    def loss(self, loss: torch.Tensor, step: int) -> torch.Tensor:
        if step in self._overflow:
            loss = loss * 1e38  # a huge loss: overflows once scaled
        if step == self._nan:
            loss = loss * float("nan")
        return loss
