"""Training batches made in worker processes, ahead of the step that needs them.

Making a batch is the slow part of the data path: a synthetic log is drawn and rendered (~0.1 s for 1,600 × 384
on one CPU core), a folder log cropped, flipped and noised. On an H100 a compiled step takes 76 ms, so a
training process that made its own batches waited for them most of the time (1.3–1.9 s a step on the synthetic
stream against 0.29 s from a folder, issue #33). Here ``torch.utils.data.DataLoader`` worker processes make
them, ``prefetch`` batches per worker ahead, into pinned memory on CUDA (the step then copies them without
blocking).

Determinism and resuming. What a batch holds is decided in the training process, in order, by the sampler
(``LogSampler.draw``: which log, which augmentation seed); the workers only turn those recipes into pixels, and
a recipe's pixels are a function of the recipe alone. So a seeded run is the same with 0, 1 or 8 workers.
Recipes are drawn ahead of the steps, so the sampler's state runs ahead too: each recipe carries the state
after it, and a checkpoint saves the state after the last batch a step used (:meth:`BatchLoader.state`); a
resumed run draws on from there.
"""

from __future__ import annotations

import itertools
import time
from typing import Iterator

import torch
from torch.utils.data import DataLoader, Dataset

from .data import Augment, LogSampler

Batch = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


class _Recipes(Dataset):
    """A "dataset" whose items are the recipes themselves: a worker gets (sequence number, draws, augment) and
    returns the batch. It holds the sampler (its folder logs and the stream's seed) for the workers."""

    def __init__(self, sampler: LogSampler):
        self.sampler = sampler

    def __getitem__(self, key) -> tuple[int, Batch]:
        seq, draws, aug = key
        return seq, self.sampler.make_batch(list(draws), aug)

    def __len__(self) -> int:  # unused: the keys come from the recipe stream, which is endless
        return 0


class BatchLoader:
    """Batches for training steps, made by ``workers`` processes (0: in the training process, as before)."""

    def __init__(self, sampler: LogSampler, workers: int = 0, prefetch: int = 2, pin_memory: bool = False):
        self.sampler, self.workers, self.prefetch, self.pin_memory = sampler, max(0, int(workers)), prefetch, pin_memory
        self._after: dict[int, dict] = {}  # sampler state after each recipe drawn and not yet used
        self._state = sampler.state()  # after the last batch used
        self._plan: list[int] = []
        self._aug: Augment | None = None
        self._it: Iterator | None = None
        self._loader: DataLoader | None = None
        self._seq = itertools.count()
        self.wait_s = 0.0  # seconds the last :meth:`batches` call waited for its batches

    def _recipes(self, sizes: list[int], aug: Augment) -> Iterator[tuple]:
        while True:
            for n in sizes:
                draws = tuple(self.sampler.draw() for _ in range(n))
                seq = next(self._seq)
                self._after[seq] = self.sampler.state()
                yield seq, draws, aug

    def _start(self, sizes: list[int], aug: Augment) -> None:
        self.close()
        self.sampler.load_state(self._state)  # recipes drawn ahead by a stopped loader are drawn again
        self._after.clear()
        self._plan, self._aug = list(sizes), aug
        kwargs = {"persistent_workers": True, "prefetch_factor": self.prefetch} if self.workers else {}
        self._loader = DataLoader(_Recipes(self.sampler), batch_size=None, sampler=self._recipes(sizes, aug),
                                  num_workers=self.workers, pin_memory=self.pin_memory, **kwargs)
        self._it = iter(self._loader)

    def batches(self, sizes: list[int], aug: Augment) -> list[Batch]:
        """One step's micro-batches of ``sizes`` logs each. A change of sizes or augmentation (a tiling lever
        taken mid-run) restarts the workers from the state after the last batch used."""
        if self._it is None or sizes != self._plan or aug != self._aug:
            self._start(sizes, aug)
        t0 = time.perf_counter()
        out = []
        for _ in sizes:
            seq, batch = next(self._it)
            self._state = self._after.pop(seq)
            out.append(batch)
        self.wait_s = time.perf_counter() - t0
        return out

    def state(self) -> dict:
        """The sampler's state after the last batch a step used: what a checkpoint keeps."""
        return self._state

    def load_state(self, st: dict) -> None:
        self.close()
        self.sampler.load_state(st)
        self._state = self.sampler.state()

    def close(self) -> None:
        """Stop the workers (a run that ends, or a restart)."""
        it, self._it, self._loader = self._it, None, None
        if it is not None and hasattr(it, "_shutdown_workers"):
            it._shutdown_workers()
