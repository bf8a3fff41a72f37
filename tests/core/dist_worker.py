"""One rank of the 2-rank Gloo test (started by torchrun from test_distributed.py; not a test module itself).

It runs the real Trainer inside the process group torchrun describes and
reports, for the test to check: the logs this rank drew, each step's scale and
skip flag, its final parameters, and which file-writing functions it called.
The reports go to REPORT_DIR, apart from the run's own output folder.
"""

import json
import sys
from pathlib import Path

import torch

import core.engine.train as train_mod
from core.engine.distributed import join_from_env
from core.engine.train import TrainConfig, Trainer


def main(data: str, out_dir: str, report_dir: str) -> None:
    world = join_from_env("cpu")
    writes: list[str] = []
    for name in ("save_model", "save_checkpoint"):  # spy on the trainer's two writers
        real = getattr(train_mod, name)

        def spy(path, *a, _real=real, _name=name, **kw):
            writes.append(f"{_name}:{Path(path).name}")
            return _real(path, *a, **kw)

        setattr(train_mod, name, spy)
    # crops of 128 px: an fp16 step on a CPU without fp16 arithmetic costs about 10x a bf16 one, and what is checked
    # (shards, the skip taken together, equal replicas, who writes) does not depend on the crop
    cfg = TrainConfig(data=data, preset="tiny", steps=4, crop_along=128, precision="fp16", seed=5,
                      out=str(Path(out_dir) / "m.safetensors"), checkpoint_every=2, scaler_growth_interval=1000,
                      fault={"overflow_steps": [1], "rank": 1})  # a huge loss on rank 1 only, at step 2
    trainer = Trainer(cfg, world=world)
    drawn: list[str] = []
    real_log_of = trainer.sampler.log_of  # every training log a batch is made of passes here (workers=0)

    def log_of(draw):
        lg = real_log_of(draw)
        drawn.append(lg.name)
        return lg

    trainer.sampler.log_of = log_of
    steps = [{"step": e.step, "skipped": e.skipped, "scale": e.loss_scale, "loss": e.loss}
             for e in trainer.run() if e.type == "step"]
    flat = torch.cat([p.detach().reshape(-1) for p in trainer.model.parameters()])
    torch.save(flat, Path(report_dir) / f"params{world.rank}.pt")
    report = {"rank": world.rank, "size": world.size, "backend": world.backend, "drawn": drawn, "steps": steps,
              "writes": writes}
    (Path(report_dir) / f"rank{world.rank}.json").write_text(json.dumps(report))
    world.close()


if __name__ == "__main__":
    main(*sys.argv[1:4])
