"""Model files (safetensors + string metadata) and resumable training checkpoints.

A model file is data, never code: weights plus metadata (format version,
model config, class names, precision trained in, training summary). Training
checkpoints (optimizer, scaler, schedule, step, RNG) use ``torch.save`` and
are loaded only with ``weights_only=True``, so a pickle that would run code
is refused.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from core.common.atomic import atomic_path
from core.common.errors import ModelFileError, require_file
from core.common.vocabulary import CLASS_NAMES as LINE_STYLE_CLASSES

from .network import NetConfig, VeerNet, build

MODEL_FORMAT = "welltrace-model"
MODEL_FORMAT_VERSION = "1"
CLASS_NAMES = {1: ["curve"], 4: list(LINE_STYLE_CLASSES)}  # by the number of classes a network has


def save_model(path: str | os.PathLike, model: VeerNet, precision: str, summary: dict | None = None) -> None:
    tensors = {k: v.detach().float().contiguous().cpu() for k, v in model.state_dict().items()}
    meta = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "config": json.dumps(model.cfg.to_dict()),
        "class_names": json.dumps(CLASS_NAMES.get(model.cfg.classes, [str(i) for i in range(model.cfg.classes)])),
        "precision": precision,
        "summary": json.dumps(summary or {}),
    }
    with atomic_path(path) as tmp:
        save_file(tensors, str(tmp), metadata=meta)
    model.trained_precision = precision


def read_model_metadata(path: str | os.PathLike) -> dict:
    p = _check(path)
    try:
        from safetensors import safe_open

        with safe_open(str(p), framework="pt") as fh:
            meta = fh.metadata() or {}
    except (SafetensorError, OSError, ValueError) as exc:
        raise ModelFileError(p, f"not a safetensors model file ({exc})") from None
    if meta.get("format") != MODEL_FORMAT:
        raise ModelFileError(p, "a safetensors file, but not a WellTrace model (no 'format' metadata)")
    if meta.get("format_version") != MODEL_FORMAT_VERSION:
        raise ModelFileError(p, f"model format version {meta.get('format_version')!r} is not supported")
    return meta


def load_model(path: str | os.PathLike) -> tuple[VeerNet, dict]:
    """Rebuild the network from the file's config and load its weights."""
    p = Path(path)
    meta = read_model_metadata(p)
    try:
        cfg = NetConfig.from_dict(json.loads(meta["config"]))
        model = build(cfg)
        state = load_file(str(p))
        model.load_state_dict(state, strict=True)
    except (KeyError, TypeError, ValueError, RuntimeError, json.JSONDecodeError) as exc:
        raise ModelFileError(p, f"model weights do not match its config: {str(exc).splitlines()[0]}") from None
    info = {
        "config": cfg.to_dict(),
        "class_names": json.loads(meta.get("class_names", "[]")),
        "precision": meta.get("precision", "fp32"),
        "summary": json.loads(meta.get("summary", "{}")),
    }
    model.trained_precision = info["precision"]
    model.eval()
    return model, info


def _check(path) -> Path:
    return require_file(path, ModelFileError, "a model file")


def save_checkpoint(path: str | os.PathLike, state: dict) -> None:
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: str | os.PathLike) -> dict:
    p = _check(path)
    try:
        state = torch.load(p, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise ModelFileError(p, f"refused: the checkpoint holds objects beyond plain tensors and numbers "
                             f"({str(exc).splitlines()[0][:120]})") from None
    except (RuntimeError, EOFError, OSError, ValueError, SafetensorError) as exc:
        # torch.load reads a file named *.safetensors with safetensors (a pickle so named: "header too large")
        raise ModelFileError(p, f"not a training checkpoint ({str(exc).splitlines()[0][:160]})") from None
    if not isinstance(state, dict) or state.get("format") != "welltrace-checkpoint":
        raise ModelFileError(p, "not a WellTrace training checkpoint")
    return state
