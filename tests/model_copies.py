"""Model files the tests make from the bundled one."""

from __future__ import annotations

from pathlib import Path


def nudged_bundled_model(path: Path) -> Path:
    """The bundled model with its first weight scaled by 1.001 (a fine-tune's worth of change), saved to ``path``: the
    same network in another file, so another digest (its own calibrator, none shipped for it)."""
    import torch

    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import load_model, save_model

    net, info = load_model(BUNDLED_MODEL)
    with torch.no_grad():
        next(net.parameters()).mul_(1.001)
    save_model(path, net, info["precision"])
    return path
