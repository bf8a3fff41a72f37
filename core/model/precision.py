"""The precision posture: which compute dtype, whether a loss scaler runs, and why.

``auto`` picks bf16 where the device runs it natively (CUDA compute capability
>= 8.0; a CPU with AVX512-BF16 or AMX), else fp16 with a scaler on CUDA, else
fp32. Parameters and optimizer state always stay fp32 (the master copy); only
the forward pass runs under one ``torch.autocast`` region.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass

import torch

from .precision_modes import MODES

RESOLVED = tuple(m for m in MODES if m != "auto")  # what a request resolves to on a device
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass(frozen=True)
class Precision:
    mode: str  # fp32 | bf16 | fp16 (resolved)
    device_type: str  # cpu | cuda
    reason: str
    warning: str | None = None

    @classmethod
    def pinned(cls, mode: str, device_type: str, reason: str) -> "Precision":
        """Exactly ``mode`` on ``device_type``, as a benchmark or a probe measures it (no device's rule applied,
        no warning); raises ValueError for a mode that is not a resolved one."""
        if mode not in RESOLVED:
            raise ValueError(f"unknown precision {mode!r}; choose one of {', '.join(RESOLVED)}")
        return cls(mode, device_type, reason)

    @property
    def dtype(self) -> torch.dtype:
        return DTYPES[self.mode]

    @property
    def uses_scaler(self) -> bool:
        return self.mode == "fp16"

    @property
    def autocast_enabled(self) -> bool:
        return self.mode != "fp32"

    def autocast(self):
        """The one autocast region around the forward pass."""
        if not self.autocast_enabled:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device_type, dtype=self.dtype)

    def make_scaler(self, growth_interval: int = 200) -> torch.amp.GradScaler | None:
        """fp16 only: a dynamic loss scaler. bf16 and fp32 run none."""
        if not self.uses_scaler:
            return None
        return torch.amp.GradScaler(self.device_type, init_scale=2.0**16, growth_interval=growth_interval)


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_has_native_bf16() -> bool:
    flags = cpu_flags()
    return bool({"avx512_bf16", "amx_bf16"} & flags)


def cpu_has_native_fp16() -> bool:
    flags = cpu_flags()
    return bool({"avx512_fp16", "amx_fp16"} & flags)


@functools.lru_cache(maxsize=1)
def nvidia_gpu_name() -> str | None:
    """The NVIDIA GPU this machine has, as its driver names it, whatever PyTorch build is installed (None: none
    found). Read from the Linux driver's files, else from ``nvidia-smi -L`` (Windows, or a driver without them)."""
    import glob
    import shutil
    import subprocess

    for info in sorted(glob.glob("/proc/driver/nvidia/gpus/*/information")):
        try:
            with open(info, encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("Model:"):
                        return line.split(":", 1)[1].strip()
        except OSError:
            pass
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=5).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        for line in out.splitlines():  # "GPU 0: NVIDIA RTX A4000 (UUID: GPU-…)"
            if line.startswith("GPU"):
                return line.split(":", 1)[1].split("(UUID")[0].strip()
    return None


def cuda_install_hint() -> str | None:
    """What to do when this machine has an NVIDIA GPU that PyTorch cannot use because it is the CPU build; None
    when PyTorch sees a GPU, or when there is none to see."""
    if torch.cuda.is_available() or torch.version.cuda is not None:
        return None
    name = nvidia_gpu_name()
    if not name:
        return None
    version = torch.__version__.split("+")[0]
    return (f"this machine has an NVIDIA GPU ({name}) but PyTorch {torch.__version__} is the CPU build, so training "
            f"runs on the CPU. To train on the GPU, install PyTorch's CUDA build and restart WellTrace: pip install "
            f"--force-reinstall torch=={version} --index-url https://download.pytorch.org/whl/cu128 (cu128 needs an "
            "NVIDIA driver of release 570 or newer; pytorch.org's install selector gives the line for an older one)")


def for_inference(requested: str, trained: str, device: torch.device | str) -> Precision:
    """The precision a model runs inference in: ``requested``, where ``model`` means the one it was trained in,
    except fp16 on a CPU (no native support there: fp32)."""
    if requested == "model":
        requested = "fp32" if trained == "fp16" and torch.device(device).type != "cuda" else trained
    return resolve(requested, device)


def resolve(requested: str, device: torch.device | str) -> Precision:
    """Resolve a requested mode on a device; raises ValueError for an unknown mode."""
    if requested not in MODES:
        raise ValueError(f"unknown precision {requested!r}; choose one of {', '.join(MODES)}")
    dev = torch.device(device)
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (dev.index or 0) >= count:  # torch's own answer is an AssertionError, "Invalid device id"
            raise ValueError(f"{dev}: this machine has {count} GPU(s) PyTorch can use" +
                             (f" (cuda:0 to cuda:{count - 1})" if count else ""))
        major, minor = torch.cuda.get_device_capability(dev)
        native_bf16 = major >= 8
        name = torch.cuda.get_device_name(dev)
        if requested == "auto":
            if native_bf16:
                return Precision("bf16", "cuda", f"{name} (compute capability {major}.{minor}) runs bf16 natively")
            return Precision("fp16", "cuda", f"{name} (compute capability {major}.{minor}) has no native bf16: "
                             "fp16 with a dynamic loss scaler")
        warn = None
        if requested == "bf16" and not native_bf16:
            warn = f"{name} has no native bf16 (compute capability {major}.{minor} < 8.0): expect it to be slow"
        return Precision(requested, "cuda", "requested", warn)
    if dev.type != "cpu":
        raise ValueError(f"unsupported device {dev}")
    if requested == "auto":
        if cpu_has_native_bf16():
            return Precision("bf16", "cpu", "this CPU has AVX512-BF16/AMX: bf16 runs natively")
        return Precision("fp32", "cpu", "this CPU has no native bf16 (no AVX512-BF16 or AMX): emulated bf16 is "
                         "several times slower than fp32, so auto keeps fp32")
    warn = None
    if requested == "fp16" and not cpu_has_native_fp16():
        warn = ("this CPU has no native fp16: a step runs tens of times slower than fp32 (×40 measured on a "
                "2-core EPYC); use it for small checks, or train on a GPU")
    elif requested == "bf16" and not cpu_has_native_bf16():
        warn = "this CPU has no native bf16 (no AVX512-BF16 or AMX): bf16 is emulated and several times slower than fp32"
    return Precision(requested, "cpu", "requested", warn)


def keep_fp32(model: torch.nn.Module, names: list[str] | tuple[str, ...]) -> list[str]:
    """Run the named modules in fp32 inside the autocast region (the whitepaper's remedy
    for a layer that overflows or loses precision in 16 bits). Returns the names applied."""
    modules = dict(model.named_modules())
    missing = [n for n in names if n not in modules]
    if missing:
        raise ValueError(f"no module named {', '.join(missing)}")
    for n in names:
        m = modules[n]
        if getattr(m, "_welltrace_fp32", False):
            continue
        inner = m.forward

        def fp32_forward(*args, _inner=inner, **kwargs):
            dev = next((a.device.type for a in args if isinstance(a, torch.Tensor)), "cpu")
            args = tuple(a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)
            with torch.autocast(device_type=dev, enabled=False):
                return _inner(*args, **kwargs)

        m.forward = fp32_forward
        m._welltrace_fp32 = True
    return list(names)
