"""The app reads where ``welltrace digitize`` does by default: on a CUDA GPU when PyTorch sees one, else the CPU.

No GPU in the suite: the device the app picks is replaced by PyTorch's ``meta`` device (weights without storage), and
the tests check that every read the app starts names the device the model is on, not a hard-coded CPU."""

import shutil

import numpy as np
import pytest
import torch

import core.engine.config as config
from app.window import digitizing, labelling
from app.window.model_offer import ModelOffer
from app.window.models import load_for_reading, reading_device
from core.model.bundled import BUNDLED_MODEL


def test_a_model_is_read_onto_the_device_auto_picks(monkeypatch):
    model, _ = load_for_reading(BUNDLED_MODEL)
    assert reading_device(model) == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setattr(config, "pick_device", lambda requested: torch.device("meta"))
    moved, _ = load_for_reading(BUNDLED_MODEL)
    assert reading_device(moved) == "meta"
    assert reading_device(None) == "cpu"  # the classical tracer


def test_the_batch_and_the_prefill_read_on_the_models_device(monkeypatch, tmp_path):
    monkeypatch.setattr(config, "pick_device", lambda requested: torch.device("meta"))
    model, _ = load_for_reading(BUNDLED_MODEL)
    seen = {}

    def fake_file(job, read):
        seen["batch"] = read.device
        return type("Outcome", (), {"failed": False})()

    monkeypatch.setattr("core.digitize.job.scan_job.digitize_file", fake_file)
    monkeypatch.setattr("core.digitize.job.folder.jobs_for", lambda scans: [type("Job", (), {"las": tmp_path})()])
    digitizing._digitize_all([tmp_path / "a.png"], model, "m")
    assert seen["batch"] == "meta"

    def fake_prefill(image, axis, model, progress, device):
        seen["prefill"] = device
        return np.zeros(image.shape, np.uint8)

    monkeypatch.setattr("core.labelling.prefill.prefill_mask", fake_prefill)
    labelling._prefill_mask(np.zeros((8, 8), np.uint8), "y", model)
    assert seen["prefill"] == "meta"


def test_the_offer_names_no_cpu_minutes_for_a_fit_on_the_gpu(monkeypatch, tmp_path):
    """The fit's estimate is the CPU's, measured; a GPU's never was: the offer's tick box says where, not how long
    (as ``welltrace train`` says), and the CPU's minutes where the fit reads on the CPU."""
    pytest.importorskip("sklearn")

    mine = tmp_path / "mine.safetensors"
    shutil.copy(BUNDLED_MODEL, mine)  # no calibrator beside it: the fit is offered
    on_cpu = ModelOffer(mine, "training run (3 steps)")
    on_cpu.plan_fit()
    assert "minute" in on_cpu.fit_text() and "GPU" not in on_cpu.fit_text()
    monkeypatch.setattr(config, "pick_device", lambda requested: torch.device("cuda"))
    on_gpu = ModelOffer(mine, "training run (3 steps)")
    on_gpu.plan_fit()
    assert on_gpu.fit_wanted and on_gpu.fit_text().endswith("on the GPU")
