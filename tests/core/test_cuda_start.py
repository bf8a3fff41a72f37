"""CUDA's start begun in the background (core/model/cuda_start.py): begun only for a GPU reading, never an error."""

import pytest
import torch

from core.model import cuda_start


def test_nothing_is_begun_for_a_cpu_reading(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert cuda_start.start_in_background("cpu") is None


def test_nothing_is_begun_without_a_cuda_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cuda_start.start_in_background("auto") is None
    assert cuda_start.start_in_background("cuda") is None


def test_a_failing_start_is_left_for_the_main_thread(monkeypatch):
    """On a machine that claims a GPU it cannot start (here: PyTorch's CPU build told there is one), the thread ends
    quietly: the main thread's own first CUDA call is the one that reports."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    calls = []

    def failing_zeros(*args, **kwargs):
        calls.append(kwargs.get("device"))
        raise RuntimeError("no CUDA driver")

    monkeypatch.setattr(torch, "zeros", failing_zeros)
    thread = cuda_start.start_in_background("auto")
    assert thread is not None and thread.daemon
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert calls == ["cuda"]


@pytest.mark.gpu
def test_a_gpu_is_started_in_the_background():
    thread = cuda_start.start_in_background("cuda")
    assert thread is not None
    thread.join(timeout=120)
    assert torch.cuda.is_initialized()
    assert torch.backends.cudnn.is_available()
