"""What a training run says before its first step, for the CLI's log and the training dock's notes."""

from __future__ import annotations

from typing import Iterator

from core.common.events import BudgetEvent, Event, WarningEvent
from core.model import precision as prec


def opening_events(self) -> Iterator[Event]:
    """What the run ``self`` (a :class:`core.engine.train.Trainer`) says before its first step: its precision,
    device, compiling, scaler, world and levers."""
    cfg = self.cfg
    for w in ([self.precision.warning] if self.precision.warning else []):
        yield WarningEvent(self.step, "slow_precision", w, "use auto to pick the fastest safe mode")
    hint = prec.cuda_install_hint() if self.device.type == "cpu" else None
    if hint:
        yield WarningEvent(self.step, "cpu_build", hint, "")
    if cfg.compile:
        yield (WarningEvent(self.step, "compile_off", f"not compiled: {self.compile_note}", "") if self.compile_note
               else WarningEvent(self.step, "compiling", "compiling kernels: the first step takes longer (about "
                                 "a minute on a CPU); later runs of the same shapes reuse the cache", ""))
    if self.scaler is None:
        why = "bf16 keeps fp32's exponent range" if self.precision.mode == "bf16" else "fp32 needs none"
        yield WarningEvent(self.step, "no_scaler", f"no loss scaler runs in {self.precision.mode} ({why})", "")
    if self.resumed_from_world != self.world.size:
        yield WarningEvent(self.step, "world_size", f"resumed a checkpoint written by {self.resumed_from_world} "
                           f"rank(s) on {self.world.size}", "the global batch and the data order carry on; "
                           "per-rank crops and flips are reseeded")
    yield BudgetEvent(self.step, {"precision": self.precision.mode, "reason": self.precision.reason,
                                  "device": str(self.device), "ranks": self.world.size, "checkpointing": self.model.checkpointing,
                                  "tile": self.crop, "total_steps": self.total_steps,
                                  "plan": self.plan.as_dict() if self.plan else None})
