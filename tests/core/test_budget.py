import json

import pytest

from core.cli.main import main
from core.engine.budget import Levers, measure_activations, measure_step, plan, predict, spill_width
from core.engine.train import TrainConfig, Trainer
from core.model.network import preset
from core.synth import write_set

TINY = preset("tiny")


@pytest.mark.parametrize("levers", [Levers("fp32"), Levers("bf16"), Levers("fp32", True), Levers("bf16", True)])
@pytest.mark.parametrize("size", [(400, 96), (1000, 160)])
def test_prediction_matches_measurement(levers, size, rules):
    w, h = size
    pred = predict(TINY, w, h, levers)
    meas = measure_step(TINY, w, h, levers)
    assert abs(pred.activations - meas["terms"]["activations"]) / meas["terms"]["activations"] < 0.05
    for k in ("params", "grads", "optimizer"):
        assert pred.as_dict()[k] == meas["terms"][k]


def test_checkpointing_and_16bit_levers_cut_activations(rules):
    fp32 = measure_activations(TINY, 800, 128, Levers("fp32"))
    bf16 = measure_activations(TINY, 800, 128, Levers("bf16"))
    ck = measure_activations(TINY, 800, 128, Levers("bf16", True))
    assert bf16 / fp32 <= 0.55
    assert ck <= 0.5 * bf16


def test_tiling_makes_cost_independent_of_length():
    a = predict(TINY, 4000, 128, Levers("bf16", True, 512))
    b = predict(TINY, 25600, 128, Levers("bf16", True, 512))
    assert a.activations == b.activations
    assert measure_step(TINY, 4000, 128, Levers("fp32", False, 512))["input"][-1] == 512


def test_plan_takes_levers_in_order():
    w, h = 2000, 128
    sizes = {lev: predict(TINY, w, h, lev).total for lev in
             (Levers("fp32"), Levers("bf16"), Levers("bf16", True))}
    roomy = plan(TINY, w, h, sizes[Levers("fp32")] + 1, precision="bf16")
    assert roomy.levers == Levers("fp32")  # nothing needed
    p16 = plan(TINY, w, h, sizes[Levers("fp32")] - 1, precision="bf16")
    assert p16.levers.precision == "bf16" and not p16.levers.checkpointing and p16.levers.tile is None
    pck = plan(TINY, w, h, sizes[Levers("bf16")] - 1, precision="bf16")
    assert pck.levers.checkpointing and pck.levers.tile is None  # never tiling when the others suffice
    ptile = plan(TINY, w, h, sizes[Levers("bf16", True)] - 1, precision="bf16")
    assert ptile.levers.tile and ptile.levers.tile < w and ptile.fits
    assert ptile.predicted.total <= ptile.ceiling
    assert spill_width(TINY, h, Levers("bf16"), ptile.ceiling) < w
    none = plan(TINY, w, h, 1000, precision="bf16")
    assert not none.fits


def test_budget_cli_json(capsys):
    assert main(["budget", "--width", "12800", "--height", "640", "--precision", "bf16", "--ceiling", "8",
                 "--json", "--preset", "tiny"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["terms"]) >= {"params", "grads", "optimizer", "activations"}
    assert out["total"] == sum(out["terms"].values()) and out["ceiling"] == 8 * 1024**3
    assert out["fits"] is True and set(out["spill_width"]) == {"fp32", "bf16", "fp16"}
    assert "machine" in out and out["plan"]["summary"]


def test_budget_cli_measure(capsys):
    assert main(["budget", "--width", "800", "--height", "128", "--precision", "fp32", "--checkpointing", "off",
                 "--tile", "off", "--measure", "--json", "--preset", "tiny"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert abs(out["error"]["activations"]) < 0.05 and abs(out["error"]["total"]) < 0.10


def test_tiny_ceiling_plans_levers_and_training_still_finishes(tmp_path):
    data = tmp_path / "d"
    write_set(data, 3, seed=5, width=1024, height=128)
    plain = Levers("fp32")
    need = predict(TINY, 1024, 128, plain).total
    ck_need = predict(TINY, 1024, 128, Levers("fp32", True)).total
    runs = {}
    for name, ceiling in (("ckpt", (need - 1) / 1024**3), ("tile", (ck_need - 1) / 1024**3)):
        cfg = TrainConfig(data=str(data), preset="tiny", precision="fp32", steps=4, crop_along=None,
                          checkpointing="auto", tile="auto", ceiling_gib=ceiling, seed=2,
                          out=str(tmp_path / f"{name}.safetensors"))
        tr = Trainer(cfg)
        evs = list(tr.run())
        runs[name] = (tr, [e.loss for e in evs if e.type == "step"])
        assert evs[-1].status == "finished"
    assert runs["ckpt"][0].model.checkpointing and runs["ckpt"][0].plan.levers.tile is None
    assert runs["tile"][0].plan.levers.tile is not None and runs["tile"][0].crop < 1024
    for _, losses in runs.values():
        assert len(losses) == 4 and all(loss == loss for loss in losses)
