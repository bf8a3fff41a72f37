"""Validation during training: loss, mask F1/IoU, and curve metrics from tracing the predicted masks."""

from __future__ import annotations

import numpy as np
import torch

from core.digitize.evidence.network import evidence_by_class, predict_canonical
from core.digitize.output.metrics import compare_curve
from core.digitize.output.values import trace_to_values
from core.digitize.page.grid import detect_grid, track_bands
from core.digitize.rules.all_curves import trace_all
from core.digitize.trace.params import model_params
from core.model.network import image_to_input

from .data import LabelledLog, collate


def mask_scores(pred: np.ndarray, truth: np.ndarray) -> tuple[int, int, int]:
    """(tp, fp, fn) of curve pixels (any class > 0)."""
    p, t = pred > 0, truth > 0
    return int((p & t).sum()), int((p & ~t).sum()), int((~p & t).sum())


def score_log(model, lg: LabelledLog, precision, device, loss_fn) -> dict:
    """One validation log's raw scores: pixel counts, loss and traced-curve metrics (summable across ranks)."""
    probs = predict_canonical(model, lg.image, precision, device)
    pred = (probs[0] > 0.5).astype(np.uint8) if probs.shape[0] == 1 else probs.argmax(0)
    a, b, c = mask_scores(pred, lg.mask)
    with torch.inference_mode():
        x, y, valid = collate([(image_to_input(lg.image), lg.mask)])
        p = torch.from_numpy(probs)[None].clamp(1e-6, 1 - 1e-6)
        logits = torch.log(p / (1 - p)) if probs.shape[0] == 1 else torch.log(p)
        loss = float(loss_fn(logits, y, valid))
    entry = {"name": lg.name, "f1": 2 * a / max(1, 2 * a + b + c), "tp": a, "fp": b, "fn": c, "loss": loss}
    truth = lg.truth_curves() if lg.calibration is not None else None
    if truth is not None:
        t_depth, t_curves = truth
        grid = detect_grid(lg.image, track_bands(lg.calibration, lg.image.shape[0]))
        traces = trace_all(evidence_by_class(probs), lg.calibration, model_params(), grid)
        curves = []
        for tr, spec in zip(traces, lg.calibration.curves):
            t_vals = t_curves[spec.mnemonic.upper()]
            vals = trace_to_values(tr, spec, lg.calibration, t_depth)
            m = compare_curve(spec.mnemonic, t_depth, vals, t_vals, spec.value_range)
            curves.append({"mnemonic": spec.mnemonic, "r": m.r, "rmse_pct": m.rmse_pct,
                           "null": m.null_fraction, "depth": t_depth.tolist(),
                           "pred": [None if not np.isfinite(v) else float(v) for v in vals],
                           "truth": [None if not np.isfinite(v) else float(v) for v in t_vals]})
        entry["curves"] = curves
    return entry


def combine_scores(per_log: list[dict]) -> dict:
    """The validation metrics over any set of per-log scores (one rank's, or every rank's gathered)."""
    if not per_log:
        nan = float("nan")
        return {"val_loss": nan, "mask_f1": nan, "mask_iou": nan}
    tp = sum(e["tp"] for e in per_log)
    fp = sum(e["fp"] for e in per_log)
    fn = sum(e["fn"] for e in per_log)
    rs, rmses = [], []
    for e in per_log:
        for c in e.get("curves", []):
            if c["r"] is not None and np.isfinite(c["r"]):
                rs.append(c["r"])
                rmses.append(c["rmse_pct"])
    return {"val_loss": float(np.mean([e["loss"] for e in per_log])), "mask_f1": 2 * tp / max(1, 2 * tp + fp + fn),
            "mask_iou": tp / max(1, tp + fp + fn),
            "curve_r": float(np.median(rs)) if rs else None,
            "curve_rmse_pct": float(np.median(rmses)) if rmses else None, "per_log": per_log}


def evaluate_logs(model, logs: list[LabelledLog], precision, device, loss_fn) -> dict:
    return combine_scores([score_log(model, lg, precision, device, loss_fn) for lg in logs])
