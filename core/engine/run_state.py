"""A training run's checkpoint: what it holds, and a run set back to it (``train --resume``).

``self`` is the :class:`core.engine.train.Trainer` whose state is written or restored.
"""

from __future__ import annotations

import torch

from core.common.errors import InputError
from core.model.model_io import load_checkpoint


def run_state(self) -> dict:
    """Everything a run needs to go on from this step: weights, optimizer, schedule, scaler, data order, RNG."""
    return {
        "format": "welltrace-checkpoint",
        "step": self.step,
        "model": self.model.state_dict(),
        "model_config": self.model.cfg.to_dict(),
        "optimizer": self.optimizer.state_dict(),
        "scheduler": self.scheduler.state_dict(),
        "scaler": self.scaler.state_dict() if self.scaler else None,
        "sampler": self.loader.state(),
        "torch_rng": torch.get_rng_state(),
        "precision": self.precision.mode,
        "levers": {"checkpointing": self.model.checkpointing, "crop": self.crop},
        "total_steps": self.total_steps,
        "world_size": self.world.size,
    }


def restore(self, path: str) -> None:
    """The run ``self`` set to where the checkpoint at ``path`` left it."""
    st = load_checkpoint(path)
    try:
        self.model.load_state_dict(st["model"])
        self.optimizer.load_state_dict(st["optimizer"])
        self.scheduler.load_state_dict(st["scheduler"])
        if self.scaler is not None and st.get("scaler"):
            self.scaler.load_state_dict(st["scaler"])
        self.loader.load_state(st["sampler"])
        torch.set_rng_state(st["torch_rng"])
    except (KeyError, RuntimeError, ValueError) as exc:
        raise InputError(path, f"checkpoint does not fit this run: {str(exc).splitlines()[0][:160]}") from None
    self.step = int(st["step"])
    self.resumed_from_world = int(st.get("world_size", 1))
    lev = st.get("levers", {})
    self.model.set_checkpointing(bool(lev.get("checkpointing", self.model.checkpointing)))
    self.crop = lev.get("crop", self.crop)
    self.last_good_ckpt = str(path)
