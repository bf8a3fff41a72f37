"""Typed events emitted by long work in the engine (training, digitising, fitting a model's calibrator).

The GUI turns them into Qt signals; ``--events FILE`` writes them as JSON
lines, each with a ``"type"`` field naming its kind.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Event:
    type: str = field(init=False, default="event")

    def to_dict(self) -> dict[str, Any]:
        return _clean(asdict(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False)


def _clean(obj):
    """JSON has no NaN/Inf: write them as null (the field's meaning says 'unknown')."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


@dataclass
class GradHealth:
    global_norm: float
    zero_fraction: float  # share of gradient elements exactly zero
    nonfinite: int  # count of inf/nan gradient elements
    # log2 histogram of |g| over the non-zero finite elements: bin i covers [2^(lo+i), 2^(lo+i+1))
    hist_log2_lo: int = -40
    hist_counts: list[int] = field(default_factory=list)
    fp16_underflow_fraction: float = 0.0  # share of non-zero grads below fp16's smallest subnormal (2^-24)
    per_layer: dict[str, float] | None = None


@dataclass
class StepEvent(Event):
    step: int
    loss: float
    lr: float
    precision: str
    loss_scale: float | None  # None when no scaler runs (bf16, fp32)
    skipped: bool
    grad: GradHealth
    memory: dict[str, Any]  # measured bytes of the step (see core.engine.memory)
    wall_time: float  # seconds for this step
    epoch: int = 0
    data_wait_s: float = 0.0  # of wall_time, the seconds the step waited for its batches (core/engine/loader.py)
    type: str = field(init=False, default="step")


@dataclass
class MemoryEvent(Event):
    """The training process's memory now, sampled while it runs (during a step, during validation): what the
    app's gauge shows live between step events (``core.engine.memory.training_memory`` names the fields)."""

    memory: dict[str, Any]
    type: str = field(init=False, default="memory")


@dataclass
class EvalEvent(Event):
    step: int
    epoch: int
    val_loss: float
    mask_f1: float
    mask_iou: float
    curve_r: float | None = None  # median Pearson r of traced curves vs truth
    curve_rmse_pct: float | None = None  # median RMSE in % of scale range
    per_log: list[dict] = field(default_factory=list)
    type: str = field(init=False, default="epoch")


@dataclass
class BudgetEvent(Event):
    step: int
    plan: dict[str, Any]
    type: str = field(init=False, default="budget")


@dataclass
class WarningEvent(Event):
    step: int
    code: str  # scale_collapse, skipped_steps, grad_underflow, nonfinite, parity_drift, lever, slow_precision …
    message: str
    advice: str = ""
    type: str = field(init=False, default="warning")


@dataclass
class DoneEvent(Event):
    step: int
    status: str  # finished | stopped | nan
    model_path: str | None
    checkpoint_path: str | None
    summary: dict[str, Any] = field(default_factory=dict)
    type: str = field(init=False, default="done")


@dataclass
class ErrorEvent(Event):
    step: int
    message: str
    type: str = field(init=False, default="error")


@dataclass
class FitLogEvent(Event):
    """A log of a calibrator's fit read with the network (``core/evaluation/network_calibrator.py:
    fit_network_calibrator``): ``done`` of ``total``."""

    done: int
    total: int
    family: str
    log: str
    cached: bool  # its maps came from the maps cache (traced again, not read by the network)
    seconds: float  # this log's
    type: str = field(init=False, default="fit_log")
