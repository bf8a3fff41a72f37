"""Numerical parity of a 16-bit run against fp32.

``run_parity`` trains the same network from one seed in fp32 and in a 16-bit
mode for the same steps and compares the validation curve metrics.
``layer_profile`` runs one sample through the network in fp32 and in the
16-bit mode and reports, per module, the relative error of its output and
the share of its parameters' gradient elements that underflow that format;
modules can be forced to fp32 (the whitepaper's remedy) to show before/after.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import numpy as np
import torch

from core.model import precision as prec

from .data import Augment, collate, make_sample
from .losses import loss_for
from .train import TrainConfig, Trainer

FORMAT_TINY = {"fp16": 2.0**-24, "bf16": 2.0**-133, "fp32": 2.0**-149}  # smallest subnormals


def run_parity(cfg: TrainConfig, mode16: str) -> dict:
    """Train fp32 and ``mode16`` from the same seed; compare the final validation metrics."""
    results = {}
    for mode in ("fp32", mode16):
        run_cfg = replace(cfg, precision=mode, out=None, checkpoint=None, eval_every=0)
        final = None
        for ev in Trainer(run_cfg).run():
            if ev.type == "epoch":
                final = ev
        results[mode] = {"mask_f1": final.mask_f1, "curve_r": final.curve_r,
                         "curve_rmse_pct": final.curve_rmse_pct, "val_loss": final.val_loss}
    rel = {}
    for k in ("mask_f1", "curve_r", "curve_rmse_pct", "val_loss"):
        a, b = results["fp32"][k], results[mode16][k]
        rel[k] = None if a is None or b is None or a == 0 else abs(b - a) / abs(a)
    drift = [k for k in ("curve_r", "mask_f1") if rel[k] is not None and rel[k] > 0.01]
    return {"fp32": results["fp32"], mode16: results[mode16], "relative_difference": rel, "mode16": mode16,
            "within_1pct": not drift, "drifted": drift}


def _one_sample(trainer: Trainer):
    log = (trainer.val_logs or trainer.train_logs or [trainer.sampler.next()])[0]
    rng = np.random.default_rng(0)
    x, y, valid = collate([make_sample(log, rng, Augment(crop_along=trainer.crop, flips=False, photometric=False))])
    return x, y, valid


def _capture(model, x, y, valid, precision: prec.Precision, loss_fn):
    outs, handles = {}, []
    for name, m in model.named_modules():
        if name and not list(m.children()):  # leaf modules
            def hook(mod, args, out, _name=name):
                if isinstance(out, torch.Tensor):
                    outs[_name] = out.detach().float()
            handles.append(m.register_forward_hook(hook))
    model.zero_grad(set_to_none=True)
    with precision.autocast():
        logits = model(x)
    loss = loss_fn(logits, y, valid)
    loss.backward()
    for h in handles:
        h.remove()
    grads = {n: p.grad.detach().float().clone() for n, p in model.named_parameters() if p.grad is not None}
    return outs, grads


def layer_profile(cfg: TrainConfig, mode16: str, fp32_modules: list[str] | None = None,
                  threshold: float = 0.05) -> dict:
    """Per-module output error and gradient underflow of ``mode16`` against fp32 on one sample."""
    trainer = Trainer(replace(cfg, precision="fp32", out=None, checkpoint=None))
    model = trainer.model
    # the sample where the trainer put the network (a CUDA GPU when there is one), autocast for that device
    x, y, valid = (t.to(trainer.device) for t in _one_sample(trainer))
    where = trainer.device.type
    loss_fn = loss_for(model.cfg.classes)
    ref_out, ref_grad = _capture(model, x, y, valid, prec.Precision("fp32", where, "reference"), loss_fn)
    reports = {}
    variants = [("as is", [])] + ([("fp32 kept", fp32_modules)] if fp32_modules else [])
    for label, keep in variants:
        m16 = copy.deepcopy(model)
        if keep:
            prec.keep_fp32(m16, keep)
        out16, grad16 = _capture(m16, x, y, valid, prec.Precision(mode16, where, "profile"), loss_fn)
        tiny = FORMAT_TINY[mode16]
        rows = []
        for name, ref in ref_out.items():
            if name not in out16:
                continue
            err = float((out16[name] - ref).norm() / max(float(ref.norm()), 1e-12))
            params = [p for p in ref_grad if p.startswith(name + ".")]
            g = torch.cat([ref_grad[p].reshape(-1) for p in params]) if params else torch.zeros(0)
            nz = g[g != 0].abs()
            # share of the fp32 gradient that this format cannot represent (flushes to zero unscaled)
            under = float((nz < tiny).float().mean()) if nz.numel() else 0.0
            rows.append({"module": name, "rel_error": err, "grad_underflow": under,
                         "flagged": err > threshold or under > 0.01})
        reports[label] = rows
    return {"mode16": mode16, "threshold": threshold, "reports": reports,
            "flagged": [r["module"] for r in reports["as is"] if r["flagged"]]}


def worst(rows: list[dict], n: int = 12) -> list[dict]:
    """Flagged modules first, then by output error."""
    return sorted(rows, key=lambda r: (not r["flagged"], -(r["rel_error"] if math.isfinite(r["rel_error"]) else 1e9)))[:n]
