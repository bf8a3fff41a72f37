"""Running the network for inference: the PyTorch layout that turns a window of the scan into probabilities fastest.

Measured on the 2-core AMD EPYC (docs/benchmarks.md, "Digitising faster on a CPU"), the demo network on one
1,664 × 1,024 window, fp32, 2 threads:

| runtime | seconds | max abs. logit change vs eager NCHW |
|---|---|---|
| PyTorch eager, default (NCHW) layout | 2.71 | — |
| PyTorch eager, channels-last | 1.73 | 6e-4 |
| PyTorch, TorchScript frozen + optimize_for_inference | 3.22 | 3e-6 |
| PyTorch eager, bf16 autocast (AVX512-BF16 CPU) | 2.30 | 0.13 |
| OpenVINO 2026.4 (f32) | 1.59 | 3e-3 |
| ONNX Runtime 1.32 (CPU provider, all graph optimisations) | 1.35 | 8e-3 |

On the whole KGS scan ONNX Runtime's evidence took 43 s against channels-last's 50 s, but its memory arena held
5.2 GiB at the peak (1.9 GiB with PyTorch); with the arena off it took 122 s. 14 % was no reason for a 78 MB
dependency, so the runtime is PyTorch, channels-last on the CPU: oneDNN's convolutions read NHWC without the
blocked-layout copy of every input. Over KGS's log body (250–1050 ft) its LAS values equal the NCHW path's at
r ≥ 0.9999 per curve. The table is of an fp32 model; a model runs in the precision it was trained in (the
bundled one in bf16 autocast, where oneDNN's bf16 convolutions and the compiled group norm,
``cpu_group_norm.py``, made it the faster: docs/benchmarks.md, issue #64).
``reference`` keeps the eager NCHW path of earlier releases, to compare against.
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np
import torch

from .network import VeerNet
from .precision import Precision

_LAYOUT_LOCK = threading.Lock()

Runner = Callable[[np.ndarray], np.ndarray]  # (1, 1, H, W) float32 input → (classes, H, W) float32 probabilities


def probabilities(logits: torch.Tensor) -> torch.Tensor:
    """Class probabilities (fp32) from a network's logits: a sigmoid for one class, else a softmax over classes."""
    logits = logits.float()
    return torch.sigmoid(logits) if logits.shape[1] == 1 else torch.softmax(logits, 1)


def torch_runner(model: VeerNet, precision: Precision, device: torch.device | str = "cpu",
                 channels_last: bool = True) -> Runner:
    """Eager PyTorch; channels-last on the CPU unless told otherwise (the reference path is NCHW)."""
    dev = torch.device(device)
    model.eval()
    fmt = torch.channels_last if channels_last and dev.type == "cpu" else torch.contiguous_format
    # a weight whose layout tells (one input channel or a 1 × 1 kernel is contiguous in both): laid out with the rest
    probe = next((p for p in model.parameters() if p.dim() == 4 and p.shape[1] > 1 and p.shape[2] * p.shape[3] > 1),
                 None)

    def run(x: np.ndarray) -> np.ndarray:
        # each call: another runner may have laid the same weights out otherwise. Only when they are not in this
        # layout: ``Module.to`` reassigns every parameter's data, which a window read on another thread at the
        # same time (``evidence/network.py: predict_windows``) must not meet
        def laid_out() -> bool:
            return probe is not None and probe.is_contiguous(memory_format=fmt)

        if not laid_out():
            with _LAYOUT_LOCK:
                # asked again under the lock: two windows' first calls (``_two_at_once`` submits the second before
                # the first runs) both find the weights unlaid, and the second must not lay them out again while
                # the first's forward reads them
                if not laid_out():
                    model.to(memory_format=fmt)
        t = torch.from_numpy(x).to(dev).contiguous(memory_format=fmt)
        with torch.inference_mode(), precision.autocast():
            p = probabilities(model(t))
        return p[0].cpu().numpy()

    return run
