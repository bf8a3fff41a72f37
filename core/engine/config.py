"""A training run's configuration, and the device and seeds it runs with (what ``train``, the dock, adapt and
torchrun fill in; ``core/engine/train.py`` runs it)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import torch

from core.common.errors import InputError


@dataclass
class TrainConfig:
    data: str | None = None  # a project or synthetic folder
    synthetic: bool = False  # draw from the on-the-fly synthetic stream
    mix: float = 0.5  # share of stream logs when both a folder and the stream are used
    stage: str = "binary"  # binary | multiclass
    preset: str = "tiny"
    init_model: str | None = None  # continue from this model file
    # the model this run's may replace (the app's current one): scored on the same held-out logs at the end
    compare_model: str | None = None
    precision: str = "auto"
    device: str = "auto"
    steps: int | None = None
    epochs: int | None = None
    lr: float = 2e-3
    weight_decay: float = 1e-4
    clip: float = 1.0
    crop_along: int | None = 1024  # random crop length along depth; None trains on whole logs
    effective_batch: int = 16  # multiclass: logs per optimizer step (gradient accumulation)
    micro_batch: int = 4  # multiclass: logs per forward pass
    checkpointing: str = "off"  # auto | on | off
    tile: str = "off"  # auto | off | PX
    ceiling_gib: float | None = None
    out: str | None = None  # model file written at the end
    checkpoint: str | None = None  # training checkpoint (default: OUT.ckpt)
    resume: str | None = None
    seed: int = 0
    eval_every: int = 0  # steps between evaluations (0: at the end only)
    checkpoint_every: int = 50
    fp32_modules: list[str] = field(default_factory=list)
    stream_size: tuple[int, int] = (1600, 384)
    styles: tuple[str, ...] | None = None  # print-style families of the synthetic stream (None: all)
    train_val: tuple | None = None  # in-process callers (adapt): (train logs, validation logs), already split
    val_count: int = 4  # held-out stream logs when there is no folder to validate on
    per_layer_norms: bool = False
    scaler_growth_interval: int = 200  # fp16: clean steps before the scale doubles
    # share of the steps that train the decoder only, first (the encoder's weights frozen): the backward pass stops
    # at the decoder, so a CPU runs about a third more steps in a budget; the way to fine-tune on new prints
    freeze_encoder: float = 0.0
    # worker processes that make the training batches ahead of the steps (core/engine/loader.py); 0: in the
    # training process. The command line's default is 2: a GPU step is faster than rendering a synthetic log
    workers: int = 0
    compile: bool = False  # torch.compile the network (core/engine/compiled.py): the first step compiles
    fault: dict = field(default_factory=dict)  # test hooks: {"overflow_steps": [..], "oom_steps": [..], "nan_step": n}


def pick_device(requested: str) -> torch.device:
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        raise InputError(None, "--device cuda: no CUDA device is available (PyTorch sees none)")
    if requested not in ("cpu", "cuda"):
        raise InputError(None, f"--device must be auto, cpu or cuda, not {requested!r}")
    return torch.device(requested)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
