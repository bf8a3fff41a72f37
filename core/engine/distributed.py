"""Running one training job over several processes with torchrun.

``welltrace train`` reads the environment torchrun sets (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``/``MASTER_PORT``) and, when the
world has more than one process, joins a process group: NCCL where the ranks
run on CUDA, Gloo on CPU. The trainer then wraps its model in
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


def join_from_env(device: str = "auto", timeout_s: float = 1800.0) -> World:
    """Join the process group torchrun describes, or return a world of one.

    The backend follows the device the ranks train on: NCCL for CUDA, Gloo for
    CPU. On CUDA each rank takes the GPU its ``LOCAL_RANK`` names, so
    ``--nproc-per-node`` should not exceed the GPUs per node.
    """
    size = _env_int("WORLD_SIZE", 1)
    if size <= 1:
        return SINGLE
    local = _env_int("LOCAL_RANK", 0)  # the global rank comes from the process group itself
    use_cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    if use_cuda:
        if local >= torch.cuda.device_count():
            raise InputError(None, f"LOCAL_RANK {local} but this node has {torch.cuda.device_count()} GPU(s): "
                             "use --nproc-per-node no larger than the GPU count, or --device cpu")
        torch.cuda.set_device(local)
    backend = "nccl" if use_cuda else "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=timeout_s))
    return World(rank=dist.get_rank(), size=dist.get_world_size(), local_rank=local, backend=backend)
