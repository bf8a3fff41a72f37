"""Model files (safetensors + string metadata) and resumable training checkpoints.

A model file is data, never code: weights plus metadata (format version,
model config, class names, precision trained in, training summary). Training
checkpoints (optimizer, scaler, schedule, step, RNG) use ``torch.save`` and
are loaded only with ``weights_only=True``, so a pickle that would run code
is refused.
"""

from __future__ import annotations

import hashlib
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


MAX_STAGES = 8  # encoder stages: 2^7 = a stride of 128 px, past any log's height across the tracks


def _positive_int(cfg: dict, key: str, low: int = 1) -> int:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{key} must be a whole number of at least {low}, got {value!r}")
    return value


def model_config(meta: dict, path: Path) -> NetConfig:
    """The network config a model file's metadata declares, every value checked (``channels: []`` raised an
    IndexError and ``attn_heads: 0`` a ZeroDivisionError while the network was built)."""
    try:
        raw = json.loads(meta["config"])
        if not isinstance(raw, dict):
            raise ValueError("config is no JSON object")
        channels = raw.get("channels")
        if not isinstance(channels, list) or not 2 <= len(channels) <= MAX_STAGES or any(
                isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in channels):
            raise ValueError(f"channels must be 2 to {MAX_STAGES} whole numbers of at least 1, got {channels!r}")
        for key, low in (("blocks", 1), ("attn_dim", 1), ("attn_heads", 1), ("attn_layers", 0)):
            _positive_int(raw, key, low)
        if raw["attn_dim"] % raw["attn_heads"]:
            raise ValueError(f"attn_dim {raw['attn_dim']} is not a multiple of attn_heads {raw['attn_heads']}")
        ratio = raw.get("mlp_ratio", 2.0)
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= 64:
            raise ValueError(f"mlp_ratio must be a number above 0, got {ratio!r}")
        if raw.get("classes") not in CLASS_NAMES:
            raise ValueError(f"classes must be one of {sorted(CLASS_NAMES)}, got {raw.get('classes')!r}")
        return NetConfig.from_dict(raw)
    except (KeyError, TypeError, ValueError, RecursionError) as exc:
        what = f"no {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0][:200]
        raise ModelFileError(path, f"its network config cannot be built: {what}") from None


def _shapes_match(cfg: NetConfig, path: Path) -> None:
    """Compare the weights the file holds (their names and shapes, read from its header) with those the config
    builds, before anything is built: a 1 KB file whose config declares ``channels [4096] * 4`` was built first
    (5 GB resident) and refused only when its weights did not fit. The network is built on PyTorch's meta
    device here, shapes without memory."""
    import torch
    from safetensors import safe_open

    with torch.device("meta"):
        expected = {k: tuple(v.shape) for k, v in build(cfg).state_dict().items()}
    with safe_open(str(path), framework="pt") as fh:
        found = {k: tuple(fh.get_slice(k).get_shape()) for k in fh.keys()}
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    wrong = sorted(k for k in set(expected) & set(found) if expected[k] != found[k])
    if missing or extra or wrong:
        said = (f"{len(missing)} weight(s) missing (e.g. {missing[0]})" if missing else
                f"{len(extra)} weight(s) it does not use (e.g. {extra[0]})" if extra else
                f"{wrong[0]} is {list(found[wrong[0]])}, its config needs {list(expected[wrong[0]])}")
        raise ModelFileError(path, f"model weights do not match its config: {said}")


def load_model(path: str | os.PathLike) -> tuple[VeerNet, dict]:
    """Rebuild the network from the file's config and load its weights: the config checked, and the weights'
    shapes in the file's header compared with the config's, before the network is built."""
    p = Path(path)
    meta = read_model_metadata(p)
    cfg = model_config(meta, p)
    try:
        _shapes_match(cfg, p)
        model = build(cfg)
        state = load_file(str(p))
        model.load_state_dict(state, strict=True)
    except (KeyError, TypeError, ValueError, RuntimeError, SafetensorError, json.JSONDecodeError) as exc:
        raise ModelFileError(p, f"model weights do not match its config: {str(exc).splitlines()[0]}") from None
    try:
        info = {
            "config": cfg.to_dict(),
            "class_names": json.loads(meta.get("class_names", "[]")),
            "precision": meta.get("precision", "fp32"),
            "summary": json.loads(meta.get("summary", "{}")),
        }
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ModelFileError(p, f"its metadata is not valid JSON: {str(exc).splitlines()[0][:160]}") from None
    model.trained_precision = info["precision"]
    model.file_digest = model_digest(p)  # which network this is: the calibrated confidence names the one it fits
    model.file_path = p  # ... and where: its own calibrator lies beside it (``confidence_model.calibrator_beside``)
    model.eval()
    return model, info


def model_digest(path: str | os.PathLike) -> str:
    """The first 16 hex digits of a model file's SHA-256: which network a file holds (the maps cache's folder, the
    calibrator's ``about.network_sha256_16``)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


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
