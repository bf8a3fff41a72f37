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

    def swap(self, a: str, b: str, top: float, bottom: float, column_depth: np.ndarray | None = None) -> int:
        """Exchange curves ``a`` and ``b`` between two depths (inclusive), in place: the user's fix for two curves
        that read each other's lines at a crossing. Their values, their confidences and flags (a curve's CONF tells
        how sure the reading of the line it now holds is, and is NULL exactly where it is) and, given the depth of
        each trace column, their traces (what the scan shows is what the LAS holds). Returns the samples swapped;
        raises ValueError for an unknown curve or a range outside the log, changing nothing."""
        from core.digitize.trace.crossings import swap_range

        n = swap_range(self.values, a, b, self.depth, top, bottom)
        lo, hi = sorted((float(top), float(bottom)))
        for per_sample in (self.confidence, self.flags):
            if a in per_sample and b in per_sample:
                swap_range(per_sample, a, b, self.depth, lo, hi)
        ta = next((t for t in self.traces if t.mnemonic == a), None)
        tb = next((t for t in self.traces if t.mnemonic == b), None)
        if column_depth is not None and ta is not None and tb is not None:
            cols = np.flatnonzero((column_depth >= lo) & (column_depth <= hi))
            for name in ("position", "wraps", "confidence", "observed", "level_unsure", "flags"):
                x, y = getattr(ta, name), getattr(tb, name)
                if x is not None and y is not None and x.shape == y.shape == column_depth.shape:
                    x[cols], y[cols] = y[cols].copy(), x[cols].copy()
        return n
