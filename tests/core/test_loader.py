"""Training batches made in worker processes (core/engine/loader.py): the same batches whatever the workers, a
checkpoint that resumes where the steps were (not where the prefetching was), and the data wait reported."""

from __future__ import annotations

import torch

from core.engine.data import Augment, LogSampler, SyntheticStream
from core.engine.loader import BatchLoader
from core.engine.train import TrainConfig, Trainer


def _sampler(seed: int = 3) -> LogSampler:
    return LogSampler([], SyntheticStream(seed, 400, 128, depth_axis="mixed"), 1.0, seed)


def _take(loader: BatchLoader, steps: int, sizes=(2, 1)) -> list:
    return [loader.batches(list(sizes), Augment(crop_along=256)) for _ in range(steps)]


def _same(a: list, b: list) -> bool:
    return all(torch.equal(x, y) for sa, sb in zip(a, b) for ba, bb in zip(sa, sb) for x, y in zip(ba, bb))


def test_worker_processes_make_the_same_batches_as_the_training_process():
    inline = BatchLoader(_sampler(), workers=0)
    pooled = BatchLoader(_sampler(), workers=2, prefetch=2)
    try:
        a, b = _take(inline, 4), _take(pooled, 4)
    finally:
        pooled.close()
    assert len(a) == len(b) == 4 and _same(a, b)
    assert [t.shape[0] for t, _, _ in a[0]] == [2, 1]


def test_the_state_is_the_last_used_batch_not_the_prefetched_ones():
    pooled = BatchLoader(_sampler(), workers=2, prefetch=4)
    try:
        _take(pooled, 2)
        st = pooled.state()
        later = _take(pooled, 2)
    finally:
        pooled.close()
    assert st["draws"] == 6  # 2 steps of 3 logs, though 8 recipes per worker were drawn ahead
    resumed = BatchLoader(_sampler(), workers=0)
    resumed.load_state(st)
    assert _same(_take(resumed, 2), later)


def test_a_change_of_crop_restarts_from_the_last_used_batch():
    loader = BatchLoader(_sampler(), workers=2)
    try:
        _take(loader, 1)
        st = loader.state()
        wide = loader.batches([2, 1], Augment(crop_along=384))
    finally:
        loader.close()
    ref = BatchLoader(_sampler(), workers=0)
    ref.load_state(st)
    assert _same([ref.batches([2, 1], Augment(crop_along=384))], [wide])


def test_step_events_carry_the_data_wait(tmp_path):
    cfg = TrainConfig(synthetic=True, preset="tiny", steps=3, stream_size=(400, 128), crop_along=256, workers=2,
                      val_count=1, out=str(tmp_path / "m.safetensors"))
    steps = [e for e in Trainer(cfg).run() if e.type == "step"]
    assert len(steps) == 3
    assert all(0.0 <= e.data_wait_s <= e.wall_time for e in steps)
