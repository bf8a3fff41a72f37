"""Data-parallel training: two Gloo ranks on the CPU, started by torchrun as a user would."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from core.model.model_io import load_checkpoint, load_model
from core.synth import write_set

ROOT = Path(__file__).resolve().parents[2]


def _torchrun(args: list[str], cwd: Path, nproc: int = 2, timeout: int = 300) -> subprocess.CompletedProcess:
    # the repository ahead of whatever path the caller set (where lasio may come from: the GPU machine's carried wheels)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": path}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}", *args]
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res


@pytest.fixture(scope="module")
def four_logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("four_logs")
    write_set(d, 5, seed=9, width=512, height=128)  # the folder loader holds one out for validation: 4 to train
    return d


@pytest.mark.slow
def test_two_gloo_ranks_shard_sync_and_skip_together(four_logs, tmp_path):
    out, reports = tmp_path / "out", tmp_path / "reports"
    out.mkdir()
    reports.mkdir()
    _torchrun([str(ROOT / "tests" / "core" / "dist_worker.py"), str(four_logs), str(out), str(reports)], tmp_path)
    r0, r1 = (json.loads((reports / f"rank{i}.json").read_text()) for i in (0, 1))
    assert (r0["size"], r0["backend"], r1["rank"]) == (2, "gloo", 1)

    # disjoint shards: 4 steps × 2 ranks = two epochs of the 4 training logs; within each epoch the ranks
    # drew different logs and together saw every one
    for epoch in (slice(0, 2), slice(2, 4)):
        a, b = set(r0["drawn"][epoch]), set(r1["drawn"][epoch])
        assert not a & b and len(a | b) == 4

    # an fp16 overflow injected on rank 1 at step 2 made both ranks skip it and halve the scale together
    for r in (r0, r1):
        assert [s["skipped"] for s in r["steps"]] == [False, True, False, False]
        assert r["steps"][1]["scale"] == r["steps"][0]["scale"] / 2
    assert [s["scale"] for s in r0["steps"]] == [s["scale"] for s in r1["steps"]]
    assert [s["loss"] for s in r0["steps"][2:]] == [s["loss"] for s in r1["steps"][2:]]  # reduced, so equal

    # the replicas stayed identical
    p0, p1 = torch.load(reports / "params0.pt"), torch.load(reports / "params1.pt")
    assert torch.equal(p0, p1)

    # only rank 0 wrote: the checkpoints and the model
    assert r1["writes"] == []
    assert r0["writes"].count("save_model:m.safetensors") == 1
    assert r0["writes"].count("save_checkpoint:m.ckpt") == 2  # at steps 2 and 4 (the end save is the step-4 one)
    assert sorted(p.name for p in out.iterdir()) == ["m.ckpt", "m.safetensors"]
    model, _ = load_model(out / "m.safetensors")
    assert torch.equal(torch.cat([p.detach().reshape(-1) for p in model.parameters()]), p0)


@pytest.mark.slow
def test_cli_under_torchrun_and_resume_on_another_world_size(four_logs, tmp_path):
    model, events = tmp_path / "m.safetensors", tmp_path / "ev.jsonl"
    common = ["--preset", "tiny", "--crop", "256", "--precision", "fp32", "--seed", "2", "--device", "cpu",
              "--no-fit-confidence"]
    res = _torchrun(["-m", "app.launch", "train", str(four_logs), "--out", str(model), "--steps", "2",
                     "--events", str(events), *common], tmp_path)
    assert "on 2 ranks" in res.stdout and res.stdout.count("finished after") == 1  # rank 0 alone reports
    evs = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["step"] for e in evs if e["type"] == "step"] == [1, 2]
    budget = next(e for e in evs if e["type"] == "budget")
    assert budget["plan"]["ranks"] == 2
    ckpt = load_checkpoint(tmp_path / "m.ckpt")
    assert ckpt["world_size"] == 2 and ckpt["step"] == 2

    # the 2-rank checkpoint resumes in a single process (N ranks → M ranks)
    events2 = tmp_path / "ev2.jsonl"
    res = subprocess.run([sys.executable, "-m", "app.launch", "train", str(four_logs), "--out", str(model),
                          "--steps", "3", "--resume", str(tmp_path / "m.ckpt"), "--events", str(events2), *common],
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    evs2 = [json.loads(line) for line in events2.read_text().splitlines()]
    assert [e["step"] for e in evs2 if e["type"] == "step"] == [3]
    assert any(e["type"] == "warning" and e["code"] == "world_size" for e in evs2)
    assert load_checkpoint(tmp_path / "m.ckpt")["world_size"] == 1


# -- more ranks than GPUs (issue 62: on a one-GPU machine rank 1 asked for cuda:1) --------------------------------
# These run without a GPU: the device count is mocked. On a CUDA machine the two torchrun tests above are the check.

@pytest.mark.parametrize("device, ranks, gpus, backend, note", [
    ("auto", 2, 2, "nccl", False), ("auto", 2, 4, "nccl", False), ("auto", 2, 0, "gloo", False),
    ("auto", 2, 1, "gloo", True), ("cpu", 2, 8, "gloo", False), ("cuda", 2, 2, "nccl", False)])
def test_the_backend_follows_the_gpus_each_rank_can_have(device, ranks, gpus, backend, note):
    from core.engine.distributed import choose_backend

    got, why = choose_backend(device, ranks, gpus)
    assert got == backend and bool(why) == note
    if note:
        assert why == f"{ranks} ranks on this node but {gpus} GPU(s): every rank trains on the CPU with Gloo " \
                      f"(torchrun --nproc-per-node {gpus} puts one rank on each GPU)"


@pytest.mark.parametrize("gpus", [0, 1])
def test_cuda_asked_for_with_more_ranks_than_gpus_is_one_clear_line(gpus):
    from core.common.errors import InputError
    from core.engine.distributed import choose_backend

    with pytest.raises(InputError) as err:
        choose_backend("cuda", 2, gpus)
    line = err.value.one_line()
    assert "\n" not in line and "--device cpu" in line
    assert (f"--nproc-per-node {gpus} or fewer" in line) if gpus else ("no CUDA device" in line)


def _fake_group(monkeypatch, gpus: int, rank: int, size: int = 2):
    import torch.distributed as dist

    joined = {}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpus > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    monkeypatch.setattr(torch.cuda, "set_device", lambda i: joined.setdefault("cuda", i))
    monkeypatch.setattr(dist, "is_initialized", lambda: False)
    monkeypatch.setattr(dist, "init_process_group", lambda backend, timeout: joined.setdefault("backend", backend))
    monkeypatch.setattr(dist, "get_rank", lambda: rank)
    monkeypatch.setattr(dist, "get_world_size", lambda: size)
    for k, v in (("WORLD_SIZE", size), ("LOCAL_RANK", rank), ("LOCAL_WORLD_SIZE", size)):
        monkeypatch.setenv(k, str(v))
    return joined


def test_two_ranks_on_one_gpu_train_on_the_cpu_with_gloo(monkeypatch):
    """torchrun --nproc-per-node 2 on a one-GPU machine: both ranks join Gloo and train on the CPU; neither asks
    for a GPU, and the run says why (a warning before its first step)."""
    from core.engine.distributed import join_from_env

    for rank in (0, 1):
        joined = _fake_group(monkeypatch, gpus=1, rank=rank)
        world = join_from_env("auto")
        assert joined == {"backend": "gloo"}  # no set_device: rank 1 never asks for cuda:1
        assert world.backend == "gloo" and world.device() == torch.device("cpu")
        assert "2 ranks on this node but 1 GPU(s)" in world.note


def test_two_ranks_on_two_gpus_take_one_each(monkeypatch):
    from core.engine.distributed import join_from_env

    joined = _fake_group(monkeypatch, gpus=2, rank=1)
    world = join_from_env("auto")
    assert joined == {"backend": "nccl", "cuda": 1}
    assert world.device() == torch.device("cuda", 1) and world.note is None


def test_a_gpu_the_machine_lacks_is_refused_by_name(monkeypatch):
    """precision.resolve on cuda:1 of a one-GPU machine: a ValueError naming the device, not torch's
    AssertionError ("Invalid device id")."""
    from core.model.precision import resolve

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ValueError, match=r"cuda:1: this machine has 1 GPU\(s\) PyTorch can use \(cuda:0 to cuda:0\)"):
        resolve("auto", "cuda:1")


def test_the_trainer_of_a_gloo_rank_trains_on_the_cpu(monkeypatch, four_logs, tmp_path):
    """A Gloo world's rank builds its trainer on the CPU even where PyTorch sees a GPU (``--device auto``)."""
    from core.engine.distributed import World
    from core.engine.train import TrainConfig, Trainer

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # pick_device("auto") would say cuda
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(Trainer, "_wrap", lambda self, model: model)  # no process group in this test
    world = World(rank=1, size=2, local_rank=1, backend="gloo", note="2 ranks on this node but 1 GPU(s): …")
    cfg = TrainConfig(data=str(four_logs), preset="tiny", steps=1, crop_along=256, out=str(tmp_path / "m.safetensors"))
    trainer = Trainer(cfg, world=world)
    assert trainer.device == torch.device("cpu") and trainer.precision.device_type == "cpu"
    from core.engine.run_notes import opening_events

    said = [e for e in opening_events(trainer) if e.type == "warning" and e.code == "ranks_on_cpu"]
    assert [e.message for e in said] == [world.note]
