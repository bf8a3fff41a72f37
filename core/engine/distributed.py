"""Running one training job over several processes with torchrun.

``welltrace train`` reads the environment torchrun sets (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``/``MASTER_PORT``) and, when the
world has more than one process, joins a process group: NCCL where every rank
of a node has a GPU of its own, Gloo on the CPU otherwise (``--device auto``
with more ranks than GPUs falls back to the CPU and says so; ``--device cuda``
refuses in one line). The trainer then wraps its model in
``DistributedDataParallel`` and uses the helpers below to reduce metrics and
to let only rank 0 write files. A plain ``welltrace train`` is a world of one
and never touches ``torch.distributed``.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from core.common.errors import InputError


@dataclass(frozen=True)
class World:
    """Where this process stands in the job."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0
    backend: str | None = None  # None: a world of one, no process group
    note: str | None = None  # why the ranks train where they do, when it is not where they were asked to

    @property
    def is_main(self) -> bool:
        """Rank 0: the only rank that prints, writes checkpoints, models and event files."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.size > 1

    # -- collectives (no-ops in a world of one) ---------------------------------
    def mean(self, value: float, device: torch.device) -> float:
        """The mean of a scalar over all ranks (a NaN on any rank makes the mean NaN everywhere)."""
        if not self.distributed:
            return float(value)
        t = torch.tensor([float(value)], dtype=torch.float64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return float(t.item()) / self.size

    def flags(self, flag: bool, device: torch.device) -> tuple[bool, bool]:
        """(any rank, every rank) for a boolean."""
        if not self.distributed:
            return bool(flag), bool(flag)
        t = torch.tensor([1.0 if flag else 0.0, 0.0 if flag else 1.0], device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t[0] > 0), not bool(t[1] > 0)

    def gather(self, obj: Any) -> list[Any]:
        """Every rank's object, in rank order, on every rank."""
        if not self.distributed:
            return [obj]
        out: list[Any] = [None] * self.size
        dist.all_gather_object(out, obj)
        return out

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()

    def device(self) -> torch.device | None:
        """The device every rank trains on: its own GPU under NCCL, the CPU under Gloo; None in a world of one
        (the run's own ``--device`` decides)."""
        if not self.distributed:
            return None
        return torch.device("cuda", self.local_rank) if self.backend == "nccl" else torch.device("cpu")

    def close(self) -> None:
        if self.distributed and dist.is_initialized():
            dist.destroy_process_group()


SINGLE = World()


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise InputError(None, f"environment variable {name}={raw!r} is not an integer (set by torchrun)") from None


def choose_backend(device: str, local_ranks: int, gpus: int) -> tuple[str, str | None]:
    """The process group's backend for ``local_ranks`` ranks on a node with ``gpus`` GPUs, and a note when the
    ranks fall back to the CPU. Every rank decides alike (from the node's rank count, never from its own rank:
    rank 0 on NCCL and rank 1 on Gloo would wait for each other for ever). ``--device cuda`` with more ranks than
    GPUs is refused (InputError); ``auto`` trains every rank on the CPU with Gloo."""
    if device == "cpu":
        return "gloo", None
    if device not in ("auto", "cuda"):
        raise InputError(None, f"--device must be auto, cpu or cuda, not {device!r}")
    if gpus >= local_ranks:
        if gpus == 0:  # auto on a machine without a GPU
            return "gloo", None
        return "nccl", None
    if device == "cuda":
        raise InputError(None, f"--device cuda with {local_ranks} ranks on this node but {gpus} GPU(s): start "
                         f"torchrun with --nproc-per-node {gpus} or fewer, or use --device cpu"
                         if gpus else f"--device cuda with {local_ranks} ranks: no CUDA device is available "
                         "(PyTorch sees none); use --device cpu")
    if gpus == 0:
        return "gloo", None
    return "gloo", (f"{local_ranks} ranks on this node but {gpus} GPU(s): every rank trains on the CPU with Gloo "
                    f"(torchrun --nproc-per-node {gpus} puts one rank on each GPU)")


def join_from_env(device: str = "auto", timeout_s: float = 1800.0) -> World:
    """Join the process group torchrun describes, or return a world of one.

    The backend follows the device the ranks train on (``choose_backend``): NCCL where each rank of a node has a
    GPU of its own (the one its ``LOCAL_RANK`` names), Gloo on the CPU otherwise.
    """
    size = _env_int("WORLD_SIZE", 1)
    if size <= 1:
        return SINGLE
    local = _env_int("LOCAL_RANK", 0)  # the global rank comes from the process group itself
    local_ranks = _env_int("LOCAL_WORLD_SIZE", size)
    gpus = torch.cuda.device_count() if device != "cpu" and torch.cuda.is_available() else 0
    backend, note = choose_backend(device, local_ranks, gpus)
    if backend == "nccl":
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=timeout_s))
    return World(rank=dist.get_rank(), size=dist.get_world_size(), local_rank=local, backend=backend, note=note)
