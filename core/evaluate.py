"""Validation during training: loss, mask F1/IoU, and curve metrics from tracing the predicted masks."""

from __future__ import annotations

import numpy as np
import torch

from .data import LabelledLog, collate, image_to_input
from .infer import evidence_by_class, predict_canonical
from .metrics import compare_curve
from .trace import trace_all, trace_to_values


def mask_scores(pred: np.ndarray, truth: np.ndarray) -> tuple[int, int, int]:
    """(tp, fp, fn) of curve pixels (any class > 0)."""
    p, t = pred > 0, truth > 0
    return int((p & t).sum()), int((p & ~t).sum()), int((~p & t).sum())


def evaluate_logs(model, logs: list[LabelledLog], precision, device, loss_fn) -> dict:
    if not logs:
        nan = float("nan")
        return {"val_loss": nan, "mask_f1": nan, "mask_iou": nan}
    tp = fp = fn = 0
    losses, rs, rmses, per_log = [], [], [], []
    for lg in logs:
        probs = predict_canonical(model, lg.image, precision, device)
        pred = (probs[0] > 0.5).astype(np.uint8) if probs.shape[0] == 1 else probs.argmax(0)
        a, b, c = mask_scores(pred, lg.mask)
        tp, fp, fn = tp + a, fp + b, fn + c
        with torch.inference_mode():
            x, y, valid = collate([(image_to_input(lg.image), lg.mask)])
            p = torch.from_numpy(probs)[None].clamp(1e-6, 1 - 1e-6)
            logits = torch.log(p / (1 - p)) if probs.shape[0] == 1 else torch.log(p)
            losses.append(float(loss_fn(logits, y, valid)))
        entry = {"name": lg.name, "f1": 2 * a / max(1, 2 * a + b + c)}
        truth = lg.truth_curves() if lg.calibration is not None else None
        if truth is not None:
            t_depth, t_curves = truth
            traces = trace_all(evidence_by_class(probs), lg.calibration)
            curves = []
            for tr, spec in zip(traces, lg.calibration.curves):
                t_vals = t_curves[spec.mnemonic.upper()]
                vals = trace_to_values(tr, spec, lg.calibration, t_depth)
                m = compare_curve(spec.mnemonic, t_depth, vals, t_vals, spec.value_range)
                curves.append({"mnemonic": spec.mnemonic, "r": m.r, "rmse_pct": m.rmse_pct,
                               "null": m.null_fraction, "depth": t_depth.tolist(),
                               "pred": [None if not np.isfinite(v) else float(v) for v in vals],
                               "truth": [None if not np.isfinite(v) else float(v) for v in t_vals]})
                if np.isfinite(m.r):
                    rs.append(m.r)
                    rmses.append(m.rmse_pct)
            entry["curves"] = curves
        per_log.append(entry)
    f1 = 2 * tp / max(1, 2 * tp + fp + fn)
    iou = tp / max(1, tp + fp + fn)
    return {"val_loss": float(np.mean(losses)), "mask_f1": f1, "mask_iou": iou,
            "curve_r": float(np.median(rs)) if rs else None,
            "curve_rmse_pct": float(np.median(rmses)) if rmses else None, "per_log": per_log}
