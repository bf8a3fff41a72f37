"""A training run's checkpoint: what it holds, and a run set back to it (``train --resume``).

``trainer`` is the :class:`core.engine.train.Trainer` whose state is written or restored.
"""

from __future__ import annotations

import torch

from core.common.errors import InputError
from core.model.model_io import load_checkpoint


def run_state(trainer) -> dict:
    """Everything a run needs to go on from this step: weights, optimizer, schedule, scaler, data order, RNG."""
    return {
        "format": "welltrace-checkpoint",
        "step": trainer.step,
        "model": trainer.model.state_dict(),
        "model_config": trainer.model.cfg.to_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "scheduler": trainer.scheduler.state_dict(),
        "scaler": trainer.scaler.state_dict() if trainer.scaler else None,
        "sampler": trainer.loader.state(),
        "torch_rng": torch.get_rng_state(),
        "precision": trainer.precision.mode,
        "levers": {"checkpointing": trainer.model.checkpointing, "crop": trainer.crop},
        "total_steps": trainer.total_steps,
        "world_size": trainer.world.size,
    }


def restore(trainer, path: str) -> None:
    """The run ``trainer`` set to where the checkpoint at ``path`` left it."""
    st = load_checkpoint(path)
    try:
        trainer.model.load_state_dict(st["model"])
        trainer.optimizer.load_state_dict(st["optimizer"])
        trainer.scheduler.load_state_dict(st["scheduler"])
        if trainer.scaler is not None and st.get("scaler"):
            trainer.scaler.load_state_dict(st["scaler"])
        trainer.loader.load_state(st["sampler"])
        torch.set_rng_state(st["torch_rng"])
    except (KeyError, RuntimeError, ValueError) as exc:
        raise InputError(path, f"checkpoint does not fit this run: {str(exc).splitlines()[0][:160]}") from None
    trainer.step = int(st["step"])
    trainer.resumed_from_world = int(st.get("world_size", 1))
    lev = st.get("levers", {})
    trainer.model.set_checkpointing(bool(lev.get("checkpointing", trainer.model.checkpointing)))
    trainer.crop = lev.get("crop", trainer.crop)
    trainer.last_good_ckpt = str(path)
