"""What digitising a picture gives: values on the depth grid, the traces, their confidences, the class mask, warnings."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.digitize.trace.params import Trace


@dataclass
class DigitizeResult:
    depth: np.ndarray
    values: dict[str, np.ndarray]
    traces: list[Trace]
    mask: np.ndarray  # scan frame: class per pixel (binary model / classical: 0/1)
    method: str
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    memory: dict = field(default_factory=dict)  # the network's memory plan (``core/digitize/evidence/memory_plan.py: MemoryPlan``)
    # per curve and depth sample: how far its value can be trusted, in [0, 1], NaN where it is NULL
    # (``core/digitize/rules/confidence.py``); empty for a result read back from a LAS without it
    confidence: dict[str, np.ndarray] = field(default_factory=dict)
    # per curve and depth sample: a bit for each pass that took its value away, doubted or filled it
    # (``core/digitize/rules/passes.py``); empty for a result read back from a LAS
    flags: dict[str, np.ndarray] = field(default_factory=dict)
    others: list = field(default_factory=list)  # (LAS suffix, result) of the scan's other sections, if any
    # what the confidence is (``core/digitize/rules/confidence_model.py: confidence_basis``), named in the LAS header
    confidence_basis: str = ""

