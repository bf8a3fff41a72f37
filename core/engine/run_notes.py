"""What a training run says before its first step, for the CLI's log and the training dock's notes."""

from __future__ import annotations

from typing import Iterator

from core.common.events import BudgetEvent, Event, WarningEvent
from core.model import precision as prec


def opening_events(trainer) -> Iterator[Event]:
    """What the run ``trainer`` (a :class:`core.engine.train.Trainer`) says before its first step: its precision,
    device, compiling, scaler, world and levers."""
    cfg = trainer.cfg
    for w in ([trainer.precision.warning] if trainer.precision.warning else []):
        yield WarningEvent(trainer.step, "slow_precision", w, "use auto to pick the fastest safe mode")
    hint = prec.cuda_install_hint() if trainer.device.type == "cpu" else None
    if hint:
        yield WarningEvent(trainer.step, "cpu_build", hint, "")
    if cfg.compile:
        note = trainer.compile_note
        yield (WarningEvent(trainer.step, "compile_off", f"not compiled: {note}", "") if note
               else WarningEvent(trainer.step, "compiling", "compiling kernels: the first step takes longer (about "
                                 "a minute on a CPU); later runs of the same shapes reuse the cache", ""))
    if trainer.scaler is None:
        why = "bf16 keeps fp32's exponent range" if trainer.precision.mode == "bf16" else "fp32 needs none"
        yield WarningEvent(trainer.step, "no_scaler", f"no loss scaler runs in {trainer.precision.mode} ({why})", "")
    if trainer.world.note:
        yield WarningEvent(trainer.step, "ranks_on_cpu", trainer.world.note, "")
    if trainer.resumed_from_world != trainer.world.size:
        yield WarningEvent(trainer.step, "world_size", f"resumed a checkpoint written by {trainer.resumed_from_world} "
                           f"rank(s) on {trainer.world.size}", "the global batch and the data order carry on; "
                           "per-rank crops and flips are reseeded")
    yield BudgetEvent(trainer.step, {"precision": trainer.precision.mode, "reason": trainer.precision.reason,
                                     "device": str(trainer.device), "ranks": trainer.world.size,
                                     "checkpointing": trainer.model.checkpointing, "tile": trainer.crop,
                                     "total_steps": trainer.total_steps,
                                     "plan": trainer.plan.as_dict() if trainer.plan else None})
