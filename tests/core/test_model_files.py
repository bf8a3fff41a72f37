"""Model files as data that is checked before it is used (issue 63, items 11-12 and the list after them): a config
that cannot be built is one line naming the file; the weights' shapes in the file's header are compared with the
config's before anything is built; a Dask worker keeps the model's bytes in a file of its own and uses it only
while it still hashes to the model's digest."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from core.cli.main import main
from core.common.errors import ModelFileError
from core.digitize.job import dask_cluster
from core.digitize.job.worker import RunOptions
from core.model.bundled import BUNDLED_MODEL
from core.model.model_io import load_model, read_model_metadata
from core.model.network import build, preset


def _model_file(path: Path, config: dict, tensors: dict | None = None) -> Path:
    meta = read_model_metadata(BUNDLED_MODEL)
    meta = {**meta, "config": json.dumps(config)}
    save_file(tensors if tensors is not None else {"stem.weight": torch.zeros(1)}, str(path), metadata=meta)
    return path


def _bundled_config() -> dict:
    return json.loads(read_model_metadata(BUNDLED_MODEL)["config"])


@pytest.mark.parametrize("change,words", [
    ({"channels": []}, "channels must be 2 to 8 whole numbers"),
    ({"channels": [16, 0, 32]}, "channels must be 2 to 8 whole numbers"),
    ({"attn_heads": 0}, "attn_heads must be a whole number of at least 1, got 0"),
    ({"attn_heads": 3}, "attn_dim 128 is not a multiple of attn_heads 3"),
    ({"blocks": True}, "blocks must be a whole number"),
    ({"classes": 7}, "classes must be one of [1, 4], got 7"),
    ({"mlp_ratio": "2"}, "mlp_ratio must be a number above 0"),
])
def test_a_config_that_cannot_be_built_is_one_line_naming_the_file(tmp_path, change, words):
    """``channels: []`` was an IndexError and ``attn_heads: 0`` a ZeroDivisionError: exit 1 with a crash log."""
    path = _model_file(tmp_path / "m.safetensors", {**_bundled_config(), **change})
    with pytest.raises(ModelFileError) as ei:
        load_model(path)
    line = ei.value.one_line()
    assert line.startswith(f"{path}: its network config cannot be built: ") and words in line


def test_a_config_that_cannot_be_built_exits_2_from_the_command_line(tmp_path, capsys):
    folder = tmp_path / "f"
    assert main(["synth", str(folder), "--count", "1", "--seed", "5", "--width", "900", "--height", "256"]) == 0
    for change in ({"channels": []}, {"attn_heads": 0}):
        path = _model_file(tmp_path / "m.safetensors", {**_bundled_config(), **change})
        assert main(["digitize", str(folder / "synth_000.png"), "--model", str(path), "--out",
                     str(tmp_path / "o.las")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"welltrace: {path}: its network config cannot be built") and "Traceback" not in err


def test_huge_declared_shapes_are_refused_from_the_header_before_building(tmp_path):
    """Item 12: a 1 KB file whose config declares ``channels [4096] * 4`` was built (5 GB resident) before its
    weights were looked at. The header is read first: refused with this process's memory barely moved."""
    from core.common.sysmem import proc_status

    path = _model_file(tmp_path / "big.safetensors", {**_bundled_config(), "channels": [4096] * 4})
    assert path.stat().st_size < 2048
    before = proc_status().get("VmRSS", 0)
    with pytest.raises(ModelFileError, match="model weights do not match its config"):
        load_model(path)
    assert proc_status().get("VmRSS", 0) - before < 200 * 1024**2


def test_weights_of_the_wrong_shape_are_named(tmp_path):
    cfg = preset("tiny", classes=4)
    state = {k: v.detach().clone() for k, v in build(cfg).state_dict().items()}
    state["stem.weight"] = torch.zeros(3, 1, 3, 3)
    path = _model_file(tmp_path / "w.safetensors", cfg.to_dict(), state)
    with pytest.raises(ModelFileError, match=r"stem.weight is \[3, 1, 3, 3\], its config needs \[8, 1, 3, 3\]"):
        load_model(path)
    del state["stem.weight"]
    path = _model_file(tmp_path / "w.safetensors", cfg.to_dict(), state)
    with pytest.raises(ModelFileError, match=r"1 weight\(s\) missing \(e.g. stem.weight\)"):
        load_model(path)


def test_the_bundled_model_still_loads():
    model, info = load_model(BUNDLED_MODEL)
    assert info["config"]["classes"] == 4 and sum(p.numel() for p in model.parameters()) > 100_000


# -- a Dask worker's copy of the model ------------------------------------------------------------------------


def test_a_workers_model_file_is_its_own_and_checked_by_its_digest(tmp_path, monkeypatch):
    """Item 11: a worker used ``/tmp/welltrace-model-<sha16>.safetensors`` whenever its size was right: a zeroed
    file of that size planted there was read as the model (SP off by up to 111, three curves all NULL)."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(dask_cluster, "_MODEL_FILES", {})
    data = BUNDLED_MODEL.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    planted = tmp_path / f"welltrace-model-{digest[:16]}.safetensors"
    planted.write_bytes(bytes(len(data)))  # what the old worker would have taken for the model
    path = Path(dask_cluster._model_on_worker(data, digest))
    assert path != planted and hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700  # nobody else may write in its folder
    assert dask_cluster._model_on_worker(data, digest) == str(path)  # kept for the next task
    path.write_bytes(bytes(len(data)))  # changed under the worker all the same: not used again
    again = Path(dask_cluster._model_on_worker(data, digest))
    assert hashlib.sha256(again.read_bytes()).hexdigest() == digest
    with pytest.raises(ValueError, match="arrived damaged"):
        dask_cluster._model_on_worker(data[:-1] + b"\0", digest)


def test_a_dask_task_whose_model_bytes_are_damaged_fails_that_scan_with_the_reason(tmp_path, monkeypatch):
    from core.digitize.job.scan_job import ScanJob

    monkeypatch.setattr(dask_cluster, "_MODEL_FILES", {})
    data = BUNDLED_MODEL.read_bytes()
    job = ScanJob(tmp_path / "s.png", tmp_path / "s.calib.json", tmp_path / "s.las")
    outcome = dask_cluster.run_dask_job(job, RunOptions(), "demo.safetensors", data[:100],
                                        hashlib.sha256(data).hexdigest())
    assert outcome.failed and "arrived damaged" in outcome.error
    assert np.isfinite(outcome.seconds)


def test_a_workers_copy_of_the_model_reads_with_the_calibrator_kept_beside_the_client_s(tmp_path, monkeypatch):
    """A model's own calibrator (``welltrace fit-confidence``: ``M.confidence.json`` beside it) goes with the model's
    bytes to a Dask worker and lies beside the worker's copy, so a cluster's read is calibrated as a local one;
    where the client has none, the worker has none either (not a former run's)."""
    import tempfile

    from core.digitize.rules.confidence_model import BUNDLED_CONFIDENCE, calibrator_beside, sidecar_path

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(dask_cluster, "_MODEL_FILES", {})
    data = BUNDLED_MODEL.read_bytes()
    path = dask_cluster._model_on_worker(data, hashlib.sha256(data).hexdigest())
    own = json.loads(BUNDLED_CONFIDENCE.read_text())
    own["about"]["network"] = "mine.safetensors"
    dask_cluster._calibrator_on_worker(path, json.dumps(own).encode())
    net, _ = load_model(path)
    found, warning = calibrator_beside(net)
    assert warning is None and found.about["network"] == "mine.safetensors"
    dask_cluster._calibrator_on_worker(path, None)
    assert not sidecar_path(path).exists() and calibrator_beside(net) == (None, None)
