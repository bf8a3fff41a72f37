"""``welltrace adapt``: the few-shot loop's engine step. A short budget checks the protocol (held-out
scans, before/after, best model kept, metadata, the base never overwritten), not the accuracy."""

import json
import shutil

import pytest

from core.cli.main import main
from core.model.bundled import BUNDLED_MODEL
from core.model.model_io import read_model_metadata
from core.synth import write_set


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("style")
    write_set(d, 4, seed=3, width=640, height=192, style="uniform")
    for p in d.glob("*.truth.las"):
        p.unlink()  # a user's project: no truth LAS, the labelled masks are the truth
    return d


def test_adapt_reports_before_and_after_and_keeps_the_best_model(folder, tmp_path, capsys):
    out = tmp_path / "adapted.safetensors"
    events = tmp_path / "events.jsonl"
    base_before = BUNDLED_MODEL.read_bytes()
    assert main(["adapt", str(folder), "--model", str(BUNDLED_MODEL), "--out", str(out), "--minutes", "0.3",
                 "--events", str(events), "--json", "--no-fit-confidence"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert len(rep["held_out"]) == 1 and len(rep["adapted_on"]) == 3
    assert not set(rep["held_out"]) & set(rep["adapted_on"])
    for k in ("before", "after"):
        assert 0.0 <= rep[k]["mask_f1"] <= 1.0 and -1.0 <= rep[k]["curve_r"] <= 1.0
    assert rep["steps"] >= 1 and rep["seconds"] < 60
    meta = json.loads(read_model_metadata(out)["summary"])
    assert meta["adapted_from"] == BUNDLED_MODEL.name and meta["held_out"] == rep["held_out"]
    assert meta["adapted_on"] == rep["adapted_on"] and meta["after"] == rep["after"]
    types = {json.loads(line)["type"] for line in events.read_text().splitlines()}
    assert {"step", "epoch"} <= types
    assert BUNDLED_MODEL.read_bytes() == base_before  # the base model is never touched


def test_adapt_bad_input_exits_2_and_writes_nothing(folder, tmp_path, capsys):
    out = tmp_path / "a.safetensors"
    one = tmp_path / "one"
    one.mkdir()
    for suffix in (".png", ".mask.png", ".calib.json"):
        shutil.copy(folder / f"synth_000{suffix}", one / f"synth_000{suffix}")
    cases = [
        (["adapt", str(one), "--model", str(BUNDLED_MODEL), "--out", str(out)], "1 labelled scan(s); adapting needs at least 2"),
        (["adapt", str(folder), "--model", str(BUNDLED_MODEL), "--out", str(out), "--minutes", "0"], "argument --minutes: expected a finite number above zero"),
        (["adapt", str(folder), "--model", str(BUNDLED_MODEL), "--out", str(BUNDLED_MODEL)], "--out is the base model (--model)"),
        (["adapt", str(folder), "--model", str(folder / "synth_000.png"), "--out", str(out)], "synth_000.png"),
        (["adapt", str(folder), "--model", str(BUNDLED_MODEL), "--out", str(out), "--holdout", "4"], "--holdout 4"),
        (["adapt", str(folder), "--model", str(BUNDLED_MODEL), "--out", str(out), "--freeze-encoder", "1.5"],
         "argument --freeze-encoder: expected a number from 0 to 1, got '1.5'"),
    ]
    for argv, why in cases:
        assert main(argv) == 2, argv
        assert why in capsys.readouterr().err, why
    assert not out.exists()
    bad = tmp_path / "bad"
    shutil.copytree(folder, bad)
    from PIL import Image

    Image.new("L", (10, 10)).save(bad / "synth_001.mask.png")  # a mask of another size than its scan
    assert main(["adapt", str(bad), "--model", str(BUNDLED_MODEL), "--out", str(out)]) == 2
    assert "synth_001.mask.png" in capsys.readouterr().err and not out.exists()


def test_decoder_only_steps_leave_the_encoder_as_it_was(folder):
    """The first share of an adaptation trains the decoder only: the encoder's weights get no gradient, so
    AdamW (weight decay included) leaves them exactly as they were, while the decoder's move."""
    import torch

    from core.engine.data import labelled_scan_paths, load_labelled
    from core.engine.train import TrainConfig, Trainer
    from core.model.network import encoder_parameters

    logs = [load_labelled(p) for p in labelled_scan_paths(folder)]
    tc = TrainConfig(synthetic=False, stage="multiclass", preset="demo", init_model=str(BUNDLED_MODEL), device="cpu",
                     precision="fp32", steps=2, lr=5e-4, effective_batch=1, micro_batch=1, crop_along=128,
                     checkpoint_every=0, train_val=(logs[:3], logs[3:]))
    trainer = Trainer(tc)
    frozen = encoder_parameters(trainer.model)
    names = {n for n, p in trainer.model.named_parameters() if any(p is q for q in frozen)}
    assert names and all(n.split(".")[0] in ("stem", "encoders", "downs") for n in names)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    for p in frozen:
        p.requires_grad_(False)
    for _ in trainer.run():
        pass
    assert trainer.step == 2
    after = dict(trainer.model.named_parameters())
    assert all(torch.equal(before[n], after[n]) for n in names)
    assert any(not torch.equal(before[n], after[n]) for n in after if n not in names)
