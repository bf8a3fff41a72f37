import json
import os
import pickle
import threading

import numpy as np
import pytest
import torch

from core.cli.main import main
from core.common.errors import InputError, ModelFileError
from core.engine.data import load_folder
from core.engine.memory import SavedTensorMeter
from core.engine.train import TrainConfig, Trainer
from core.model.model_io import load_checkpoint, load_model
from core.model.network import build, preset
from core.model.norms import GroupNorm16
from core.model.precision import resolve
from core.synth import write_set


@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_set")
    write_set(d, 3, seed=3, width=512, height=128)
    return d


def _run(cfg, stop=None):
    return list(Trainer(cfg, stop).run())


def _cfg(data, tmp_path, **kw):
    base = dict(data=str(data), preset="tiny", steps=3, crop_along=256, out=str(tmp_path / "m.safetensors"), seed=1)
    base.update(kw)
    return TrainConfig(**base)


@pytest.mark.parametrize("mode", ["bf16", "fp32"])
def test_cli_train_writes_events_and_a_model_that_reloads(tiny_set, tmp_path, mode):
    out, events = tmp_path / "m.safetensors", tmp_path / "ev.jsonl"
    rc = main(["train", str(tiny_set), "--out", str(out), "--preset", "tiny", "--steps", "3", "--precision", mode,
               "--crop", "256", "--events", str(events), "--seed", "4", "--no-fit-confidence"])
    assert rc == 0
    evs = [json.loads(line) for line in events.read_text().splitlines()]
    steps = [e for e in evs if e["type"] == "step"]
    assert [e["step"] for e in steps] == [1, 2, 3]
    for e in steps:
        assert e["precision"] == mode and e["loss_scale"] is None and e["skipped"] is False
        assert {"global_norm", "zero_fraction", "nonfinite", "hist_counts"} <= set(e["grad"])
        assert e["memory"]["activations"] > 0 and e["wall_time"] > 0 and e["lr"] > 0
        assert np.isfinite(e["loss"])
    assert any(e["type"] == "warning" and e["code"] == "no_scaler" for e in evs)  # says no scaler runs
    assert evs[-1]["type"] == "done" and evs[-1]["status"] == "finished"
    model, info = load_model(out)
    assert info["precision"] == mode and info["config"]["preset"] == "tiny"
    x = torch.rand(1, 1, 64, 200)
    with torch.no_grad():
        a, b = model(x), load_model(out)[0](x)
    assert torch.equal(a, b)


def test_fp16_scaler_skips_on_overflow_and_grows_back(tiny_set, tmp_path):
    # five steps: the scale doubles after steps 1-2, halves at the step-3 skip and doubles again after 4-5 (a CPU
    # without fp16 arithmetic runs an fp16 step about 10x slower than bf16's: 1.3-2 s on the 2-core EPYC)
    cfg = _cfg(tiny_set, tmp_path, precision="fp16", steps=5, scaler_growth_interval=2,
               fault={"overflow_steps": [2]})
    evs = _run(cfg)
    steps = [e for e in evs if e.type == "step"]
    scales = [e.loss_scale for e in steps]
    assert all(s is not None for s in scales) and len(scales) == 5
    skipped = [e.step for e in steps if e.skipped]
    assert skipped[0] == 3  # the step with the injected huge loss (0-based step 2)
    assert scales[2] == scales[1] / 2  # halved at that step
    assert max(scales[3:]) > scales[2]  # grows back after clean steps
    # any later skip is the scaler probing upward and overflowing naturally, at a higher scale
    assert all(scales[s - 2] > scales[2] for s in skipped[1:])


def test_bf16_keeps_fp32_master_weights_and_16bit_activations(tiny_set, tmp_path, rules):
    trainer = Trainer(_cfg(tiny_set, tmp_path, precision="bf16", steps=2))
    evs = list(trainer.run())
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters())
    for st in trainer.optimizer.state.values():
        assert st["exp_avg"].dtype == torch.float32 and st["exp_avg_sq"].dtype == torch.float32
    mem = [e for e in evs if e.type == "step"][-1].memory
    by = mem["activations_by_dtype"]
    assert by["bf16"] > 0.85 * mem["activations"], by  # the bulk of saved activations is 16-bit


def test_groupnorm_output_stays_16bit_under_autocast(rules):
    gn = GroupNorm16(2, 8)
    x = torch.randn(1, 8, 6, 6)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = gn(x.bfloat16())
    assert y.dtype == torch.bfloat16
    ref = torch.nn.functional.group_norm(x.bfloat16().float(), 2, gn.weight, gn.bias)
    assert torch.allclose(y.float(), ref, atol=2e-2)


def test_saved_activation_ratio_bf16_over_fp32(rules):
    """Saved-for-backward bytes of one step, bf16 ÷ fp32 (default preset; 3200 × 480 in the benchmark)."""
    torch.manual_seed(0)
    model = build(preset("demo"))
    x = torch.rand(1, 1, 192, 800)
    totals = {}
    for mode in ("fp32", "bf16"):
        p = resolve(mode, "cpu")
        with SavedTensorMeter(model) as meter:
            with p.autocast():
                out = model(x)
            out.float().mean()
        totals[mode] = meter.count.total
    ratio = totals["bf16"] / totals["fp32"]
    assert ratio <= 0.55, ratio


def test_nan_stops_and_keeps_the_last_good_checkpoint(tiny_set, tmp_path):
    cfg = _cfg(tiny_set, tmp_path, precision="fp32", steps=6, checkpoint_every=2, fault={"nan_step": 3})
    evs = _run(cfg)
    assert evs[-1].type == "done" and evs[-1].status == "nan"
    assert any(e.type == "error" and "nan" in e.message.lower() for e in evs)
    assert not (tmp_path / "m.safetensors").exists()  # no model from a broken run
    ck = load_checkpoint(evs[-1].checkpoint_path)
    assert ck["step"] == 2


def test_out_of_memory_takes_the_next_lever(tiny_set, tmp_path):
    cfg = _cfg(tiny_set, tmp_path, precision="fp32", steps=4, fault={"oom_steps": [1]})
    trainer = Trainer(cfg)
    evs = list(trainer.run())
    lever = [e for e in evs if e.type == "warning" and e.code == "lever"]
    assert lever and "checkpointing" in lever[0].message
    assert trainer.model.checkpointing is True
    assert [e.step for e in evs if e.type == "step"] == [1, 2, 3, 4]
    assert evs[-1].status == "finished"


@pytest.fixture
def deterministic():
    """Bit-exact comparisons need deterministic kernels: the CPU's are; on CUDA some are not unless asked (cuBLAS
    needs its workspace fixed), and the few with no deterministic version (an upsample's backward) warn and
    leave a difference at float rounding, hence the tolerance the test takes on CUDA."""
    if not torch.cuda.is_available():
        yield 1e-6
        return
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield 1e-4
    finally:
        torch.use_deterministic_algorithms(before)


def test_stop_then_resume_continues_the_same_run(tiny_set, tmp_path, deterministic):
    stop = threading.Event()
    cfg = _cfg(tiny_set, tmp_path, precision="fp32", steps=6)
    trainer = Trainer(cfg, stop)
    seen = []
    for ev in trainer.run():
        if ev.type == "step":
            seen.append(ev.step)
            if ev.step == 3:
                stop.set()
    assert seen == [1, 2, 3]
    ckpt = tmp_path / "m.ckpt"
    assert ckpt.exists()
    resumed = Trainer(_cfg(tiny_set, tmp_path, precision="fp32", steps=6, resume=str(ckpt)))
    steps = [e.step for e in resumed.run() if e.type == "step"]
    assert steps == [4, 5, 6]
    # the same run, uninterrupted, ends with the same weights
    straight = Trainer(_cfg(tiny_set, tmp_path / "s", precision="fp32", steps=6))
    list(straight.run())
    for a, b in zip(resumed.model.parameters(), straight.model.parameters()):
        assert torch.allclose(a, b, atol=deterministic)


def test_bad_inputs_are_clear(tmp_path, tiny_set, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["train", str(empty), "--out", str(tmp_path / "m.safetensors"), "--preset", "tiny"]) == 2
    assert "no labelled images" in capsys.readouterr().err
    with pytest.raises(InputError, match="unknown precision"):
        Trainer(_cfg(tiny_set, tmp_path, precision="fp8"))
    evil = tmp_path / "evil.ckpt"
    with open(evil, "wb") as fh:
        pickle.dump({"format": "welltrace-checkpoint", "x": pickle.loads}, fh)
    with pytest.raises(ModelFileError, match="refused|not a training checkpoint"):
        load_checkpoint(evil)
    fake = tmp_path / "fake.safetensors"
    fake.write_bytes(b"\x00" * 64)
    with pytest.raises(ModelFileError, match="not a safetensors"):
        load_model(fake)
    assert main(["digitize", str(tiny_set / "synth_000.png"), "--calib", str(tiny_set / "synth_000.calib.json"),
                 "--out", str(tmp_path / "o.las"), "--model", str(fake)]) == 2
    assert not (tmp_path / "o.las").exists()


def test_mismatched_mask_names_the_file(tmp_path):
    write_set(tmp_path, 1, seed=1, width=256, height=128)
    from PIL import Image

    Image.fromarray(np.zeros((10, 10), np.uint8)).save(tmp_path / "synth_000.mask.png")
    with pytest.raises(InputError, match="synth_000.mask.png"):
        load_folder(tmp_path)


def test_parity_reports_both_runs(tiny_set, capsys):
    assert main(["parity", str(tiny_set), "--steps", "2", "--mode", "bf16", "--crop", "256", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res) >= {"fp32", "bf16", "relative_difference", "within_1pct"}
    for mode in ("fp32", "bf16"):
        assert 0.0 <= res[mode]["mask_f1"] <= 1.0 and res[mode]["val_loss"] > 0
    assert res["relative_difference"]["val_loss"] is not None


def test_layer_profile_flags_and_keeps_layers_in_fp32(tiny_set, rules):
    from core.engine.parity import layer_profile

    cfg = TrainConfig(data=str(tiny_set), preset="tiny", steps=1, crop_along=256)
    res = layer_profile(cfg, "fp16", ["head"], threshold=1e-9)  # a threshold every module exceeds
    before = {r["module"]: r for r in res["reports"]["as is"]}
    after = {r["module"]: r for r in res["reports"]["fp32 kept"]}
    assert "head" in before and "head" in after and before["head"]["flagged"]
    assert all(0 <= r["grad_underflow"] <= 1 and r["rel_error"] >= 0 for r in before.values())
    assert set(res["flagged"]) == set(before)


def test_a_run_measures_the_model_it_may_replace_on_its_own_held_out_logs(tiny_set, tmp_path):
    """The app offers a trained model beside the current one: both scored on the run's held-out logs, also when
    the run was stopped early (a stopped trial run once replaced the bundled model unseen)."""
    from core.engine.evaluate import evaluate_logs
    from core.model.model_io import read_model_metadata

    first = _cfg(tiny_set, tmp_path / "a", precision="fp32", steps=2)
    _run(first)
    stop = threading.Event()
    trainer = Trainer(_cfg(tiny_set, tmp_path / "b", precision="fp32", steps=8, compare_model=first.out), stop)
    for ev in trainer.run():
        if ev.type == "step" and ev.step == 2:
            stop.set()
    done = ev
    assert done.type == "done" and done.status == "stopped" and done.model_path
    summary = json.loads(read_model_metadata(done.model_path)["summary"])
    assert summary["val_logs"] == len(trainer.val_logs) > 0 and summary["val_mask_f1"] is not None
    compared = summary["compared"]
    assert compared["model"] == "m.safetensors"
    # the compared figures are the first model's own on the same logs
    other = load_model(first.out)[0].to(trainer.device)  # on a CUDA machine the run's logs are scored there
    direct = evaluate_logs(other, trainer.val_logs, trainer.precision, trainer.device, trainer.loss_fn)
    assert compared["val_mask_f1"] == pytest.approx(direct["mask_f1"])
    # a model of another class count is named as not comparable, not scored wrongly
    four = build(preset("tiny", 4))
    from core.model.model_io import save_model

    save_model(tmp_path / "four.safetensors", four, "fp32")
    assert "not comparable" in trainer.score_other(str(tmp_path / "four.safetensors"))["error"]


def test_freeze_encoder_trains_the_decoder_first_then_everything(tiny_set, tmp_path):
    """``--freeze-encoder 0.5`` of 4 steps: the encoder's weights do not move in steps 1-2 (no gradient, so AdamW
    leaves them), the decoder's do; from step 3 both move."""
    from core.model.network import encoder_parameters

    trainer = Trainer(_cfg(tiny_set, tmp_path, precision="fp32", steps=4, freeze_encoder=0.5))
    enc = {id(p) for p in encoder_parameters(trainer.model)}
    snap = lambda: [(id(p) in enc, p.detach().clone()) for p in trainer.model.parameters()]  # noqa: E731
    history = [snap()]
    for ev in trainer.run():
        if ev.type == "step":
            history.append(snap())

    def moved(a, b, encoder):
        return any(not torch.equal(x, y) for (e, x), (_, y) in zip(a, b) if e == encoder)

    assert len(history) == 5
    for k in (1, 2):
        assert not moved(history[k - 1], history[k], True) and moved(history[k - 1], history[k], False)
    assert moved(history[2], history[4], True)
    assert all(p.requires_grad for p in trainer.model.parameters())
    with pytest.raises(InputError):
        Trainer(_cfg(tiny_set, tmp_path, freeze_encoder=1.5))


@pytest.mark.slow
def test_compile_trains_the_same_run_and_says_it_compiles(tiny_set, tmp_path):
    """torch.compile on the CPU (Inductor builds C++ with the machine's compiler): the first step compiles, the run
    says so, and its weights follow the eager run's from the same seed."""
    eager = Trainer(_cfg(tiny_set, tmp_path / "e", precision="fp32", steps=2))
    eager_losses = [e.loss for e in eager.run() if e.type == "step"]
    compiled = Trainer(_cfg(tiny_set, tmp_path / "c", precision="fp32", steps=2, compile=True))
    events = list(compiled.run())
    codes = [e.code for e in events if e.type == "warning"]
    assert "compiling" in codes and "compile_fallback" not in codes
    losses = [e.loss for e in events if e.type == "step"]
    assert len(losses) == 2 and [e for e in events if e.type == "done"][0].summary["compiled"] is True
    assert losses == pytest.approx(eager_losses, rel=1e-4)  # fused kernels: float summation order only
    # AdamW's steps are ~lr (2e-3) whatever the gradient's size, so a rounding-level gradient difference can move
    # a weight by a share of one step: within half a step of the eager run's
    for a, b in zip(eager.model.parameters(), compiled.model.parameters()):
        assert torch.allclose(a, b, atol=1e-3), (a - b).abs().max()


def test_compile_is_refused_for_16_bit_on_a_cpu_and_the_run_trains_eagerly(tiny_set, tmp_path):
    """Inductor's CPU kernels gave all-zero gradients to 52 of the tiny network's 76 parameters in one compiled bf16
    step (core/engine/compiled.py): a bf16 run asked to compile on a CPU says why it does not and trains eagerly,
    every parameter getting a gradient."""
    trainer = Trainer(_cfg(tiny_set, tmp_path, precision="bf16", steps=1, compile=True, device="cpu"))
    events = list(trainer.run())
    off = [e for e in events if e.type == "warning" and e.code == "compile_off"]
    assert off and "wrong bf16 gradients" in off[0].message
    assert trainer.net is trainer.eager_net
    assert [e for e in events if e.type == "done"][0].summary["compiled"] is False
    step = [e for e in events if e.type == "step"][0]
    assert step.grad.zero_fraction < 0.5


def test_a_compile_that_fails_falls_back_to_the_eager_network(tiny_set, tmp_path, monkeypatch):
    from torch._dynamo.exc import BackendCompilerFailed

    import core.engine.compiled as compiled_mod

    def broken(net):
        def run(*args, **kwargs):
            raise BackendCompilerFailed(lambda *a: None, RuntimeError("no backend here"), None)
        return run

    monkeypatch.setattr(compiled_mod, "compile_network", broken)
    trainer = Trainer(_cfg(tiny_set, tmp_path, precision="fp32", steps=2, compile=True))
    events = list(trainer.run())
    fallback = [e for e in events if e.type == "warning" and e.code == "compile_fallback"]
    assert fallback and "no backend here" in fallback[0].message
    assert [e.step for e in events if e.type == "step"] == [1, 2]
    assert [e for e in events if e.type == "done"][0].summary["compiled"] is False


def test_inductor_keeps_its_kernels_in_the_user_cache_even_after_pytorch_named_its_own(tmp_path, monkeypatch):
    """PyTorch writes its default cache folder (under /tmp) into TORCHINDUCTOR_CACHE_DIR the first time anything
    asks for it; compiling then still caches in WellTrace's user cache folder, and a folder the user named stays."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir as inductor_cache_dir
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    from core.engine.compiled import compile_network

    monkeypatch.setenv("WELLTRACE_CACHE", str(tmp_path / "wt"))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    assert inductor_cache_dir() == os.path.abspath(default_cache_dir())  # PyTorch's own, now in the environment
    compile_network(torch.nn.Linear(2, 2))  # compiling itself waits for the first call
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "wt" / "inductor")
    assert inductor_cache_dir() == str(tmp_path / "wt" / "inductor")

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "mine"))
    compile_network(torch.nn.Linear(2, 2))
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "mine")
