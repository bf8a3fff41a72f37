"""Measuring the memory of one training step.

Activations are the bytes saved for backward, counted once per storage with
``torch.autograd.graph.saved_tensors_hooks`` (parameters saved by their ops
are not activations and are excluded), broken down by dtype and by network
stage. Under gradient checkpointing the tensors a checkpointed stage keeps
(its input) are counted at the stage boundary. On CUDA the allocator's peak
and reserved bytes are added; on CPU the process's peak resident memory. The
training process's memory as a whole (itself and the workers it started) is
what the app's live gauge shows (``training_memory``).
"""

from __future__ import annotations

import contextlib
import os
from collections import defaultdict
from dataclasses import dataclass, field

import torch
from torch import nn

from core.common.sysmem import proc_status, release_free_heap, total_memory

DTYPE_NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16", torch.float64: "fp64"}


def _storage_key(t: torch.Tensor):
    try:
        st = t.untyped_storage()
        return (t.device.type, st.data_ptr()), st.nbytes()
    except (RuntimeError, NotImplementedError):  # tensors without storage (e.g. some subclasses)
        return (t.device.type, id(t)), t.numel() * t.element_size()


@dataclass
class SavedTensorCount:
    total: int = 0
    by_dtype: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    by_stage: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def as_dict(self) -> dict:
        return {"total": self.total, "by_dtype": dict(self.by_dtype), "by_stage": dict(self.by_stage)}


class SavedTensorMeter:
    """Context manager that counts the bytes autograd saves for backward."""

    def __init__(self, model: nn.Module | None = None, stages: list[str] | None = None):
        self.count = SavedTensorCount()
        self._seen: set = set()
        self._param_keys = set()
        self._stage = ["other"]
        self._handles = []
        self._model = model
        if model is not None:
            self._param_keys = {_storage_key(p)[0] for p in model.parameters()}
            modules = dict(model.named_modules())
            for name in stages or []:
                m = modules.get(name)
                if m is None:
                    continue
                self._handles.append(m.register_forward_pre_hook(self._enter(name)))
                self._handles.append(m.register_forward_hook(self._leave))

    def _enter(self, name):
        def hook(module, args):
            self._stage.append(name)
            if getattr(self._model, "checkpointing", False) and torch.is_grad_enabled():
                # a checkpointed stage keeps its input alive until backward
                for a in args:
                    if isinstance(a, torch.Tensor) and a.requires_grad:
                        self._add(a)
        return hook

    def _leave(self, module, args, out):
        if len(self._stage) > 1:
            self._stage.pop()

    def _add(self, t: torch.Tensor) -> None:
        key, nbytes = _storage_key(t)
        if key in self._param_keys or key in self._seen:
            return
        self._seen.add(key)
        self.count.total += nbytes
        self.count.by_dtype[DTYPE_NAMES.get(t.dtype, str(t.dtype).replace("torch.", ""))] += nbytes
        self.count.by_stage[self._stage[-1]] += nbytes

    def _pack(self, t: torch.Tensor):
        self._add(t)
        return t

    def __enter__(self):
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)
        for h in self._handles:
            h.remove()
        self._handles = []
        return False


def state_bytes(model: nn.Module, optimizer: torch.optim.Optimizer | None) -> dict[str, int]:
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    grads = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    opt = 0
    if optimizer is not None:
        for st in optimizer.state.values():
            for v in st.values():
                if isinstance(v, torch.Tensor):
                    opt += v.numel() * v.element_size()
        if opt == 0:  # before the first step: AdamW keeps two fp32 moments per parameter
            opt = 2 * sum(p.numel() * 4 for p in model.parameters() if p.requires_grad)
    return {"params": params, "grads": grads, "optimizer": opt}


# -- process / device peaks ------------------------------------------------------


def reset_peaks(device: torch.device, release_heap: bool = False) -> None:
    """Start a new peak window. ``release_heap`` (CPU) trims the C heap first so that a measured step's rise
    over the resident size is the whole step; training leaves it off (the step would fault its pages in again)."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    else:
        if release_heap:
            release_free_heap()  # the step's rise is over a resident size that holds no freed pages
        with contextlib.suppress(OSError):  # Linux: resets VmHWM to the current RSS
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")


def read_peaks(device: torch.device) -> dict[str, int]:
    if device.type == "cuda":
        return {
            "cuda_peak": int(torch.cuda.max_memory_allocated(device)),
            "cuda_reserved": int(torch.cuda.memory_reserved(device)),
            "cuda_allocated": int(torch.cuda.memory_allocated(device)),
        }
    out = {}
    status = proc_status()
    if "VmHWM" in status:
        out["rss_peak"] = status["VmHWM"]
    if "VmRSS" in status:
        out["rss"] = status["VmRSS"]
    return out


def process_memory() -> dict[str, int]:
    """Resident memory of this process and the machine's total (for the GUI's gauge)."""
    st = proc_status()
    return {"rss": st.get("VmRSS", 0), "rss_peak": st.get("VmHWM", 0), "total": total_memory()}


# -- the training process as the app's gauge sees it -------------------------------


def _child_pids(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux ``/proc``; none elsewhere)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                out += [int(p) for p in fh.read().split()]
    return out


def descendant_pids(pid: int | None = None) -> list[int]:
    """Every process below ``pid`` (this process by default): a run's data workers, a compiler's pool."""
    todo, seen = _child_pids(pid or os.getpid()), []
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.append(p)
            todo += _child_pids(p)
    return seen


def resident_bytes(pid: int) -> int:
    """``VmRSS`` of a process in bytes; 0 once it is gone (or where ``/proc`` is not)."""
    with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def workers_resident() -> dict[str, int]:
    """The resident bytes of the processes this one started (a run's data workers), and how many there are:
    the training's memory is the process and its workers together (a 1.13 GiB child had a 0.44 GiB worker)."""
    pids = descendant_pids()
    return {"workers_rss": sum(resident_bytes(p) for p in pids), "workers": len(pids)}


def training_memory(device: torch.device | str) -> dict:
    """The training process's memory now, for the app's live gauge: its process id, resident size and peak (``rss``,
    ``rss_peak``) and its workers' (``workers_rss``), with the machine's memory (``total``); on CUDA also the
    allocator's ``cuda_allocated``, ``cuda_reserved`` and ``cuda_peak`` (the peak since the step began) and the
    card's memory (``cuda_total``). ``device`` says which the run trains on."""
    dev = torch.device(device)
    status = proc_status()
    out = {"device": dev.type, "pid": os.getpid(), "rss": status.get("VmRSS", 0), "rss_peak": status.get("VmHWM", 0),
           "total": total_memory(), **workers_resident()}
    if dev.type == "cuda" and torch.cuda.is_initialized():
        index = dev.index if dev.index is not None else torch.cuda.current_device()
        out.update(read_peaks(torch.device("cuda", index)))
        out["cuda_total"] = int(torch.cuda.get_device_properties(index).total_memory)
    return out
