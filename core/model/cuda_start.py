"""CUDA's start begun on a background thread, so that it overlaps the command's own start.

A process's first CUDA call creates the device's context and loads the runtime's libraries (cuDNN with its first
convolution): on an H200 this was part of the ~6 s that `welltrace digitize` spent outside its stages while the
network's whole reading of KGS took 0.8 s (docs/benchmarks.md, "On a GPU"). None of it depends on the scan, so it is
begun as soon as the command knows it will read on a CUDA device, while the main thread imports the pipeline,
reads the scan and checks the calibration and the outputs. PyTorch's lazy CUDA start takes a lock, so the main
thread's first CUDA call waits for whatever is left of it rather than starting it twice.
"""

from __future__ import annotations

import threading

import torch


def start_in_background(requested: str) -> threading.Thread | None:
    """Begin CUDA's start on a daemon thread when ``requested`` (``--device``: ``"cuda"``, or ``"auto"`` on a machine
    with a CUDA device) will read on a GPU; None, and nothing begun, otherwise. Whatever goes wrong on the thread is
    left for the main thread's own first CUDA call to meet and report (``core/engine/config.py: pick_device``)."""
    if requested not in ("cuda", "auto") or not torch.cuda.is_available():
        return None
    thread = threading.Thread(target=_start, name="cuda-start", daemon=True)
    thread.start()
    return thread


def _start() -> None:
    try:
        x = torch.zeros((1, 1, 8, 8), device="cuda")  # the context, the caching allocator
        torch.nn.functional.conv2d(x, torch.zeros((1, 1, 3, 3), device="cuda"))  # cuDNN's library and handle
        torch.cuda.synchronize()
    except Exception:  # noqa: BLE001 - an optimisation only: the main thread's CUDA call reports the fault
        pass
