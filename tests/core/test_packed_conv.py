"""``core/model/packed_conv.py``: a bf16 CPU runner whose convolutions read weights packed once writes the maps of
autocast's per-call weight casts and reorders bit for bit, at any thread count and window size, and leaves the
network it copied as it was; outside bf16 channels-last inference the packed module is the plain convolution."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import core.model.runtime as runtime
from core.model.network import VeerNet, preset
from core.model.packed_conv import PackedConv2d, packed_for_inference, packing_applies
from core.model.precision import Precision

BF16 = Precision.pinned("bf16", "cpu", "test")

pytestmark = pytest.mark.skipif(not packing_applies(BF16, "cpu", True),
                                reason="this CPU has no oneDNN bf16: nothing is packed")


def _network(classes: int = 4) -> VeerNet:
    torch.manual_seed(3)
    model = VeerNet(preset("demo", classes)).eval()
    with torch.no_grad():
        for p in model.parameters():  # weights a trained network's size, not the init's: every bf16 bit matters
            p.add_(torch.randn_like(p) * 0.05)
    return model


def _plain_runner(model, monkeypatch):
    monkeypatch.setattr(runtime, "packing_applies", lambda *a: False)
    run = runtime.torch_runner(model, BF16)
    monkeypatch.undo()
    return run


def test_packed_maps_are_the_autocast_maps_bit_for_bit(monkeypatch):
    model = _network()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    twin = packed_for_inference(model)
    plain = _plain_runner(model, monkeypatch)
    spy = []
    monkeypatch.setattr(runtime, "packed_for_inference", lambda m: spy.append(twin) or twin)
    packed = runtime.torch_runner(model, BF16)
    rng = np.random.default_rng(0)
    threads = torch.get_num_threads()
    try:
        for shape, n in (((32, 64), 1), ((16, 32), 2), ((32, 64), 2)):  # a second size, a size met again
            torch.set_num_threads(n)
            x = (rng.random((1, 1, *shape)) < 0.1).astype(np.float32)  # sparse ink, as a scan's
            assert np.array_equal(packed(x), plain(x))
    finally:
        torch.set_num_threads(threads)
    read = [m for m in twin.modules() if isinstance(m, PackedConv2d) and m._packed]
    assert spy and len(read) == 33 and all(len(c._packed) == 2 for c in read)  # every 2-D convolution but the head
    # (a product over the channels in inference: ``VeerNet.forward``), packed for the two sizes
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())  # the copy was packed, not it
    assert not any(isinstance(m, PackedConv2d) for m in model.modules())


def test_the_packed_module_is_the_plain_convolution_outside_bf16_inference():
    conv = packed_for_inference(_network(classes=1)).encoders[0].blocks[0].conv1
    assert isinstance(conv, PackedConv2d)
    x = torch.randn(1, 16, 24, 40).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        assert torch.equal(conv(x), conv.conv(x))  # fp32: no autocast, nothing packed
    assert not conv._packed
    assert conv(x).requires_grad  # training reads the fp32 weights with their gradients
    assert not packing_applies(Precision.pinned("fp32", "cpu", "test"), "cpu", True)
    assert not packing_applies(BF16, "cpu", False)  # the NCHW reference path
