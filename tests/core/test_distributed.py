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


def test_cli_under_torchrun_and_resume_on_another_world_size(four_logs, tmp_path):
    model, events = tmp_path / "m.safetensors", tmp_path / "ev.jsonl"
    common = ["--preset", "tiny", "--crop", "256", "--precision", "fp32", "--seed", "2", "--device", "cpu"]
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
