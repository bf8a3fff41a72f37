"""Inference over whole logs of any length, tiled along depth when asked or needed.

Strips overlap and are stitched with a linear blend (weights fall to zero at
each strip's cut edge), so seams leave no artefact in the probabilities.
Input and output are in the canonical wide frame; :func:`predict_scan`
rotates at the boundary and returns maps in the scan's own pixel frame.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from core.model.network import image_to_input
from core.model.precision import Precision
from .frame import from_canonical, to_canonical


def _forward(model, x: torch.Tensor, precision: Precision) -> torch.Tensor:
    with torch.inference_mode(), precision.autocast():
        logits = model(x)
    logits = logits.float()
    if logits.shape[1] == 1:
        return torch.sigmoid(logits)
    return torch.softmax(logits, 1)


def strips(length: int, tile: int, overlap: int) -> list[tuple[int, int]]:
    """Start/stop of overlapping strips that cover ``length``."""
    if tile >= length:
        return [(0, length)]
    overlap = min(overlap, tile // 2)
    step = tile - overlap
    starts = list(range(0, length - tile, step)) + [length - tile]
    return [(s, s + tile) for s in sorted(set(starts))]


def predict_canonical(
    model,
    img: np.ndarray,
    precision: Precision,
    device: torch.device | str = "cpu",
    tile: int | None = None,
    overlap: int = 128,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Class probabilities (C, H, W) float32 for a canonical uint8 image (H across, W along depth)."""
    model.eval()
    dev = torch.device(device)
    x_full = torch.from_numpy(image_to_input(img))[None, None]
    h, w = img.shape
    classes = model.cfg.classes
    if tile is None or tile >= w:
        out = _forward(model, x_full.to(dev), precision)[0].cpu().numpy()
        if progress:
            progress(1, 1)
        return out
    acc = np.zeros((classes, h, w), np.float32)
    wsum = np.zeros(w, np.float32)
    parts = strips(w, tile, overlap)
    for i, (a, b) in enumerate(parts):
        p = _forward(model, x_full[..., a:b].to(dev), precision)[0].cpu().numpy()
        ramp = np.ones(b - a, np.float32)
        ov = min(overlap, (b - a) // 2)
        if ov > 0:
            edge = (np.arange(ov, dtype=np.float32) + 0.5) / ov
            if a > 0:
                ramp[:ov] = edge
            if b < w:
                ramp[-ov:] = edge[::-1]
        acc[..., a:b] += p * ramp
        wsum[a:b] += ramp
        if progress:
            progress(i + 1, len(parts))
    return acc / np.maximum(wsum, 1e-6)


def predict_scan(model, image: np.ndarray, depth_axis: str, precision: Precision, device="cpu",
                 tile: int | None = None, progress=None) -> np.ndarray:
    """Probabilities (C, rows, cols) in the scan's own pixel frame."""
    probs = predict_canonical(model, to_canonical(image, depth_axis), precision, device, tile, progress=progress)
    return np.stack([from_canonical(p, depth_axis) for p in probs])


def evidence_by_class(probs: np.ndarray) -> dict[int, np.ndarray]:
    """Tracing evidence from class probabilities: a binary model's curve map serves every class
    (key 0); a multiclass model gives one map per curve class."""
    if probs.shape[0] == 1:
        return {0: probs[0]}
    return {k: probs[k] for k in (1, 2, 3)}


def probs_to_mask(probs: np.ndarray, threshold: float = 0.5) -> np.ndarray:
    """Binary: 1 where p > threshold; multiclass: the argmax class."""
    if probs.shape[0] == 1:
        return (probs[0] > threshold).astype(np.uint8)
    return probs.argmax(0).astype(np.uint8)
