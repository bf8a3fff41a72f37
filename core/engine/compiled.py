"""``torch.compile`` for training, as an option (``train --compile``, the training dock's *Compile* box).

Compiling fuses the network's elementwise work (norms, SiLU, adds, casts) into a few kernels: on an H100 a
compiled bf16 step of the ``demo`` network at 12,800 × 640 took 76 ms and 7.1 GiB against 194 ms and 13.2 GiB
compiled in fp32 (issue #33); on an H200, 89.7 ms and 7.22 GiB against 210 ms and 13.24 GiB. It costs time
once: the first step compiles (about a minute for the ``tiny``
network on a 2-core CPU, where Inductor builds C++ with the machine's compiler). The compiled kernels are cached
in the user's cache folder, so the next run with the same shapes starts in seconds.

Where compiling cannot work (no C++ compiler for Inductor's CPU kernels) or gives wrong gradients (16-bit
autocast on a CPU, below) the run says why and trains eagerly; where it fails on the first step (a backend
error), the trainer falls back to the eager network and goes on.

16-bit on a CPU: Inductor's CPU lowering of the nearest upsampling's backward in bf16 (torch 2.13.0+cpu) gives
zero gradients: compiled, 52 of the ``tiny`` network's 76 parameters (everything before the last decoder's
upsampling) got all-zero gradients in one bf16 step where eager got none, and a compiled bf16 training run
showed 98 % zero gradient elements; the ``aot_eager`` backend and the same network with the upsampling written
as a repeat were right, and so was CUDA (H200, torch 2.11.0+cu130: 0 of 76, gradients within 3e-3 of eager's,
``docs/benchmarks.md``). A compiled CPU step gained nothing measurable anyway (0.085 s eager and compiled).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import torch


def cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(os.environ.get("WELLTRACE_CACHE") or user_cache_dir("welltrace")) / "inductor"


def unsupported(device: torch.device, precision: str = "fp32") -> str | None:
    """Why ``torch.compile`` cannot train in ``precision`` on ``device`` here, or None."""
    if not hasattr(torch, "compile"):
        return f"this PyTorch ({torch.__version__}) has no torch.compile"
    if device.type == "cpu" and precision in ("bf16", "fp16"):
        return (f"Inductor's CPU kernels give wrong {precision} gradients for this network (most of them zero, "
                f"PyTorch {torch.__version__}); on a CPU compiling gains nothing measurable")
    if device.type == "cpu" and not any(shutil.which(c) for c in ("g++", "c++", "clang++", "cl")):
        return "Inductor's CPU kernels need a C++ compiler and none is on PATH (install g++ or clang)"
    return None


def compile_network(net: torch.nn.Module) -> torch.nn.Module:
    """``net`` compiled by Inductor, its kernels cached across runs (module docstring)."""
    use_cache_dir()
    return torch.compile(net)


def use_cache_dir() -> str:
    """Inductor's cache: the folder the user named in ``TORCHINDUCTOR_CACHE_DIR``, else the user's cache folder
    (:func:`cache_dir`), which outlives a reboot. PyTorch writes its own default (under the temporary folder) into
    that variable the first time anything asks for its cache (``torch._dynamo``'s import does: an inference's
    memory plan imports it before a training run compiles), so a value equal to that default is PyTorch's, not the
    user's, and is replaced: setting the variable only where unset left the compiled kernels in
    ``/tmp/torchinductor_<user>``."""
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    named = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if named is None or os.path.abspath(named) == os.path.abspath(default_cache_dir()):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = named = str(cache_dir())
    return named


def is_compile_failure(exc: BaseException) -> bool:
    """Whether ``exc`` came from compiling (Dynamo or a backend), not from the step's own numbers or memory."""
    try:
        from torch._dynamo.exc import BackendCompilerFailed, TorchDynamoException
    except ImportError:  # pragma: no cover - a PyTorch without Dynamo
        return False
    return isinstance(exc, (BackendCompilerFailed, TorchDynamoException))
