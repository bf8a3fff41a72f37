"""The precision engine under CUDA's autocast rules, proven on the CPU (issue #33): the rules emulated, 16 bits at
every stage boundary, a batch-1 group norm by reductions that saves no more than it must."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from core.engine.budget import Levers, measure_forward, predict
from core.engine.memory import SavedTensorMeter
from core.model.autocast_rules import active_rules, autocast_rules
from core.model.network import build, preset
from core.model.norms import GroupNorm16, _GroupNormByReduction, group_norm_16bit


def test_cuda_rules_run_upsampling_and_norms_in_fp32_as_cuda_does():
    x = torch.randn(1, 4, 8, 8)
    conv = torch.nn.Conv2d(4, 4, 1)
    for rules, want in (("cpu", torch.bfloat16), ("cuda", torch.float32)):
        with autocast_rules(rules), torch.autocast("cpu", dtype=torch.bfloat16):
            c = conv(x)
            assert c.dtype == torch.bfloat16  # convolutions are 16-bit under both
            assert F.interpolate(c, scale_factor=2).dtype == want
            assert F.group_norm(c, 2).dtype == want
            assert F.layer_norm(c, (8,)).dtype == want
            assert active_rules() == rules
    with autocast_rules("cuda"):  # outside an autocast region nothing changes
        assert F.interpolate(x.bfloat16(), scale_factor=2).dtype == torch.bfloat16
    assert active_rules() == "cpu"
    with pytest.raises(ValueError, match="unknown autocast rules"):
        with autocast_rules("tpu"):
            pass


class _LeakyDecoderStep(torch.nn.Module):
    """An upsample, a cat with a skip, then a residual block's norm, without the cast back: what the network's
    decoder did before issue #33."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.norm = GroupNorm16(2, 16)
        self.out = torch.nn.Conv2d(16, 8, 3, padding=1)

    def forward(self, x, skip):
        up = F.interpolate(self.conv(x), size=skip.shape[-2:], mode="nearest")
        return self.out(F.silu(self.norm(torch.cat([up, self.conv(skip)], 1))))


def _network_fp32_share(model, x) -> tuple[int, float]:
    """Bytes the network saves for backward in bf16 and the fp32 share of them (the loss, fp32 by design, is
    not the network's)."""
    with SavedTensorMeter(model) as meter, torch.autocast("cpu", dtype=torch.bfloat16):
        model(*x)
    by = meter.count.by_dtype
    return meter.count.total, by.get("fp32", 0) / meter.count.total


def test_the_emulation_finds_an_fp32_leak_that_cpu_rules_hide():
    torch.manual_seed(0)
    step = _LeakyDecoderStep()
    x = (torch.randn(1, 8, 16, 32), torch.randn(1, 8, 32, 64))
    _, cpu_share = _network_fp32_share(step, x)
    with autocast_rules("cuda"):
        _, cuda_share = _network_fp32_share(step, x)
    assert cpu_share < 0.01 and cuda_share > 0.3  # the cat went fp32, and the norm after it saved fp32


@pytest.mark.parametrize("rules", ["cpu", "cuda"])
def test_the_network_saves_16_bits_at_every_stage_boundary_under_both_rule_sets(rules):
    """fp32 share of the saved bytes ≤ 2 % (norm statistics only), bf16 ÷ fp32 of a step's saved bytes (network
    and fp32 loss) ≤ 0.52. Before the cast back after upsampling, CUDA's rules gave 0.347 and 0.674."""
    torch.manual_seed(0)
    model = build(preset("demo", 4))
    x = torch.rand(1, 1, 256, 1024)
    with autocast_rules(rules):
        _, share = _network_fp32_share(model, (x,))
        fp32 = measure_forward(preset("demo", 4), 1024, 256, Levers("fp32"))["activations"]
        step = measure_forward(preset("demo", 4), 1024, 256, Levers("bf16"))
    bf16 = step["activations"]
    assert share <= 0.02, share
    # the whole step too: the fp32 loss recomputes its intermediates in the backward instead of saving them
    assert step["activations_by_dtype"].get("fp32", 0) <= 0.02 * bf16, step["activations_by_dtype"]
    assert bf16 / fp32 <= 0.52, bf16 / fp32


@pytest.mark.parametrize("rules", ["cpu", "cuda"])
def test_the_budget_is_traced_under_the_devices_rules(rules):
    """A prediction made for a device's rules matches a step measured under them within 5 %."""
    cfg = preset("tiny")
    lev = Levers("bf16")
    with autocast_rules(rules):
        pred = predict(cfg, 800, 160, lev).activations
        meas = measure_forward(cfg, 800, 160, lev)["activations"]
    assert abs(pred - meas) / meas < 0.05, (pred, meas)


def _reference(x16, w, b, gy16, groups):
    """fp64 group norm and its gradients from the same (16-bit rounded) inputs."""
    x = x16.double().requires_grad_()
    wd, bd = w.double().requires_grad_(), b.double().requires_grad_()
    y = F.group_norm(x, groups, wd, bd, 1e-5)
    y.backward(gy16.double())
    return y, x.grad, wd.grad, bd.grad


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.bfloat16, 3e-2)])
@pytest.mark.parametrize("channels_last", [False, True])
def test_the_reduction_group_norm_equals_the_fp64_reference(dtype, tol, channels_last):
    torch.manual_seed(1)
    groups = 2
    x = torch.randn(1, 32, 24, 40).to(dtype)
    gy = torch.randn(1, 32, 24, 40).to(dtype)
    if channels_last:
        x, gy = x.contiguous(memory_format=torch.channels_last), gy.contiguous(memory_format=torch.channels_last)
    w, b = torch.randn(32), torch.randn(32)
    ref_y, ref_gx, ref_gw, ref_gb = _reference(x, w, b, gy, groups)
    xr, wr, br = x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_()
    y = _GroupNormByReduction.apply(xr, wr, br, groups, 1e-5)
    y.backward(gy)
    assert y.dtype == dtype and xr.grad.dtype == dtype and wr.grad.dtype == torch.float32
    assert y.is_contiguous(memory_format=torch.channels_last) == channels_last
    scale = ref_y.abs().max().item()
    assert (y.double() - ref_y).abs().max() <= tol * scale
    assert (xr.grad.double() - ref_gx).abs().max() <= tol * ref_gx.abs().max()
    # the affine gradients are fp32 sums: fp32 accuracy even for 16-bit inputs
    assert torch.allclose(wr.grad.double(), ref_gw, rtol=1e-4, atol=1e-3)
    assert torch.allclose(br.grad.double(), ref_gb, rtol=1e-4, atol=1e-3)


def test_the_reduction_group_norm_saves_the_16bit_input_and_per_group_statistics_only():
    x = torch.randn(1, 64, 96, 128).bfloat16().requires_grad_()
    w, b = torch.ones(64, requires_grad=True), torch.zeros(64, requires_grad=True)
    with SavedTensorMeter() as meter:
        group_norm_16bit(x, 4, w, b, 1e-5, by_reduction=True)
    params = w.untyped_storage().nbytes()  # the weight is saved as it is (a parameter, not an activation)
    assert meter.count.total - params <= x.numel() * 2 + 2 * 4 * 4  # bf16 input + mean and rstd of 4 groups
    assert meter.count.by_dtype["bf16"] == x.numel() * 2


def test_group_norm16_takes_channels_last_16bit_input():
    gn = GroupNorm16(2, 16)
    x = torch.randn(1, 16, 12, 20).bfloat16().contiguous(memory_format=torch.channels_last).requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = gn(x)
    y.float().sum().backward()
    assert y.dtype == torch.bfloat16 and x.grad is not None and torch.isfinite(x.grad.float()).all()


@pytest.mark.gpu
def test_on_a_cuda_device_a_bf16_step_saves_half_of_fp32_and_no_fp32_activations():
    """What the emulation stands for, on the real thing: CUDA's autocast, the reduction group norm."""
    cfg = preset("demo", 4)
    fp32 = measure_forward(cfg, 1024, 256, Levers("fp32"), device="cuda")
    bf16 = measure_forward(cfg, 1024, 256, Levers("bf16"), device="cuda")
    assert bf16["activations"] / fp32["activations"] <= 0.52
    assert bf16["activations_by_dtype"].get("fp32", 0) <= 0.02 * bf16["activations"]


def test_a_gpu_behind_a_cpu_build_of_pytorch_is_named_with_the_fix(monkeypatch, tmp_path):
    import core.model.precision as prec
    from core.engine.train import TrainConfig, Trainer

    monkeypatch.setattr(prec, "nvidia_gpu_name", lambda: "NVIDIA RTX A4000")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.version, "cuda", None)
    hint = prec.cuda_install_hint()
    assert "NVIDIA RTX A4000" in hint and "CPU build" in hint
    assert f"pip install --force-reinstall torch=={torch.__version__.split('+')[0]} --index-url" in hint
    cfg = TrainConfig(synthetic=True, preset="tiny", steps=1, stream_size=(400, 128), crop_along=256, val_count=1,
                      device="cpu")
    warnings = [e for e in Trainer(cfg).run() if e.type == "warning"]
    assert any(w.code == "cpu_build" and "NVIDIA RTX A4000" in w.message for w in warnings)
    monkeypatch.setattr(prec, "nvidia_gpu_name", lambda: None)
    assert prec.cuda_install_hint() is None  # no GPU, nothing to say
