import dataclasses
import json

import pytest

from core.cli.main import main
from core.common.vocabulary import GIB
from core.engine.budget import Levers, device_rules, measure_activations, measure_step, plan, predict, spill_width
from core.engine.train import TrainConfig, Trainer, pick_device
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


# CUDA peaks of one batch-1 step at 12,800 x 640 measured on an NVIDIA H100 80GB HBM3 (torch 2.11.0+cu130,
# 2026-11-26, tools/workspace_probe.py): parameters, gradients, optimiser state, saved activations and the transient
H100_PEAKS = {("demo", "bf16", False): 11324293632, ("demo", "bf16", True): 7511089152,
              ("demo", "fp32", False): 18781609984, ("demo", "fp32", True): 11146566656,
              ("full", "bf16", False): 34229645824, ("full", "bf16", True): 15922322432,
              ("full", "fp32", False): 61391485440}


@pytest.mark.parametrize("row", sorted(H100_PEAKS))
def test_a_cuda_prediction_holds_the_transient_the_h100_measured(row):
    name, precision, checkpointing = row
    with device_rules("cuda"):
        terms = predict(preset(name), 12800, 640, Levers(precision, checkpointing))
    assert terms.workspace and abs(terms.total - H100_PEAKS[row]) / H100_PEAKS[row] < 0.05
    cpu = predict(preset(name), 12800, 640, Levers(precision, checkpointing))  # the CPU's own calibration
    assert cpu.workspace and cpu.workspace != terms.workspace


def test_a_cuda_plan_does_not_promise_checkpointing_a_fit_its_recomputation_breaks():
    """On the H100 a checkpointed bf16 `full` step of 12,800 x 640 peaked at 14.8 GiB while it saves 5.7: under a
    12 GiB ceiling the plan must tile, and the strip it picks must fit with its own transient."""
    with device_rules("cuda"):
        p = plan(preset("full"), 12800, 640, 12 * GIB, precision="bf16")
    assert p.fits and p.levers.checkpointing and p.levers.tile and p.levers.tile < 12800
    assert p.predicted.workspace and p.predicted.total <= 12 * GIB
    assert p.steps[-2]["levers"].endswith("gradient checkpointing") and not p.steps[-2]["fits"]
    assert p.steps[-2]["predicted_total"] > 0.9 * H100_PEAKS[("full", "bf16", True)]


@pytest.mark.parametrize("rules", ["cpu", "cuda"])
def test_fp16_saves_what_bf16_saves_so_its_prediction_reads_bf16s_probes(rules):
    """Autocast casts the same operators to either 16-bit dtype: a forward saves the same bytes in fp16 as in bf16
    (the budget probes fp16 as bf16, whose forwards a CPU runs 10-50 times faster)."""
    cfg = preset("tiny")
    s = cfg.stride
    with device_rules(rules):
        for checkpointing in (False, True):
            saved = {p: measure_activations(cfg, 16 * s, 4 * s, Levers(p, checkpointing)) for p in ("bf16", "fp16")}
            assert saved["fp16"] == saved["bf16"] > 0
            predicted = {p: predict(cfg, 12800, 640, Levers(p, checkpointing)) for p in ("bf16", "fp16")}
            assert predicted["fp16"].activations == predicted["bf16"].activations


def test_an_unmeasured_network_gets_the_largest_transient_share_measured():
    narrower = dataclasses.replace(TINY, channels=(8, 16, 24))  # no measured row has this shape
    with device_rules("cuda"):
        other = predict(narrower, 12800, 640, Levers("bf16"))
    assert other.workspace >= 0.3 * other.activations


def test_a_cpu_prediction_carries_the_transient_a_checkpointed_step_rises_by():
    """On the CPU a checkpointed step's resident size rose 2 to 4 times what the budget predicted without a
    transient (the segment recomputed in the backward and its gradients are no saved activations): the CPU's
    measured transient (core/engine/transient.py, a share of the saved activations) is in the prediction.

    How near the rise it comes is a measurement, not a test: `welltrace budget --width 1600 --height 640 --precision
    fp32 --checkpointing on --tile off --measure --preset tiny` gave +3 % of the rise in a fresh process
    (2026-11-27, 2-core EPYC); the same step started from inside the suite's process tree rose 722 MB, not 1.18 GB,
    twice to the byte (CI and here), and a bound that holds both would hold nothing."""
    from core.engine.transient import step_transient

    lev = Levers("fp32", True)
    with device_rules("cpu"):
        p = predict(TINY, 1600, 640, lev)
    assert p.workspace > 2 * p.activations  # the recomputed segment: more than what is saved (share 2.5)
    plain = predict(TINY, 1600, 640, Levers("fp32", False))
    assert plain.workspace < plain.activations  # without checkpointing the transient is a fraction of it
    a, b = step_transient("cpu", TINY, "fp32", True, (0.0, 1.0))
    assert a == 0 and b > 2  # a line through the origin: no constant worth the name on the CPU


def test_budget_cli_json(capsys):
    assert main(["budget", "--width", "12800", "--height", "640", "--precision", "bf16", "--ceiling", "8",
                 "--json", "--preset", "tiny"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["terms"]) >= {"params", "grads", "optimizer", "activations"}
    assert out["total"] == sum(out["terms"].values()) and out["ceiling"] == 8 * 1024**3
    assert out["fits"] is True and set(out["spill_width"]) == {"fp32", "bf16", "fp16"}
    assert "machine" in out and out["plan"]["summary"]


def test_budget_cli_measure():
    # a size inside the device's calibration (core/engine/transient.py): the CPU's shares hold from a 128-px step,
    # CUDA's lines from 800 x 640 (under it they overstate: a tiny 800 x 128 step's total by 27 %). Measured in a
    # fresh process, as the shares were (inside the suite's process, 4.8 GB resident by then, the allocator's reuse
    # moves the measured rise). Measured: +3 % on the total
    import subprocess
    import sys

    w, h = (1600, 640) if pick_device("auto").type == "cuda" else (800, 128)
    cmd = [sys.executable, "-m", "app.launch", "budget", "--width", str(w), "--height", str(h), "--precision", "fp32",
           "--checkpointing", "off", "--tile", "off", "--measure", "--json", "--preset", "tiny"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True)
    out = json.loads(done.stdout)
    # the saved bytes are counted exactly; the total's error is the transient's, a measurement of the machine: +3 %
    # in a fresh process, +15 % started from inside the suite (2026-11-27), so the bound says the transient is there
    assert abs(out["error"]["activations"]) < 0.05 and abs(out["error"]["total"]) < 0.25


def test_tiny_ceiling_plans_levers_and_training_still_finishes(tmp_path):
    data = tmp_path / "d"
    write_set(data, 3, seed=5, width=1024, height=128)
    plain = Levers("fp32")
    with device_rules(pick_device("auto")):  # the device the run will take: CUDA's transient is not the CPU's
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


def test_bench_measures_a_step_per_mode_and_names_the_machine(capsys):
    """``welltrace bench`` on the tiny network: one timed step in fp32 and bf16, activations measured per mode."""
    import json

    from core.cli.main import main

    assert main(["bench", "--preset", "tiny", "--width", "256", "--height", "64", "--precisions", "fp32,bf16",
                 "--steps", "1", "--warmup", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["machine"] and set(out["results"]) == {"fp32", "bf16"}
    fp32, bf16 = out["results"]["fp32"], out["results"]["bf16"]
    assert fp32["activations"] > 0 and fp32["step_time_median"] > 0
    assert bf16["activation_ratio"] <= 0.52, bf16  # the whitepaper's bar: 16-bit halves the saved bytes
    assert main(["bench", "--precisions", "fp8"]) == 2
    assert "unknown mode fp8 (fp32, bf16, fp16)" in capsys.readouterr().err
