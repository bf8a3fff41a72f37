"""Fixtures of the engine's tests."""

from __future__ import annotations

import pytest
import torch

from core.model.network import NetConfig, VeerNet


@pytest.fixture
def small_cpu_network() -> tuple[VeerNet, torch.Tensor]:
    """A small four-class network laid out channels-last for a CPU's inference, and an input for it: what the CPU's
    compiled passes (``core/model/cpu_group_norm.py``, ``cpu_join.py``) are checked through."""
    torch.manual_seed(0)
    model = VeerNet(NetConfig(channels=(16, 32, 48), attn_dim=32, attn_heads=2, classes=4)).eval()
    model.to(memory_format=torch.channels_last)
    return model, torch.rand(1, 1, 160, 352).contiguous(memory_format=torch.channels_last)
