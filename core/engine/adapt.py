"""Few-shot adaptation: fine-tune a model on a handful of labelled scans of one print style, time-boxed.

Every company's logs have their own print style and no generator covers
them all, so the product's loop is: pre-fill, correct a few masks, adapt,
digitise the rest. ``adapt`` is the middle step with defaults chosen for few
logs rather than training from scratch:

- a held-out share of the labelled scans (a third, at least one) never
  trains; the model is scored on it before and after (curve r and RMSE where
  the scans are calibrated: against their truth LAS, or else against the
  trace of their own labelled mask, which is the truth the user has);
- a lower learning rate than from scratch, crops along depth placed at random
  (the masks' ink decides the loss), a quarter of the batches from the
  synthetic stream of every style family so other prints are not forgotten;
- the first half of the steps train the decoder only (the encoder's weights
  frozen): the backward pass stops at the decoder, so a CPU runs about a
  third more steps in the budget (7.9 -> 6.0 s a step of 4 crops on a 2-core
  EPYC), and the few scans first reshape what the network makes of features
  it already has (measured on a style the base never saw, README);
- a wall-clock budget: the step count is set from a timed pilot step, a
  deadline stops the run whatever the estimate said, and the best model so
  far (by held-out curve r, else mask F1) is what is written.

The result is an ordinary model file whose metadata names the base model and
the scans it was adapted on. The base model is never overwritten.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from core.common.errors import DataError, InputError
from core.common.events import EvalEvent, Event, WarningEvent

from .data import LabelledLog, labelled_scan_paths, load_labelled

MIN_LABELLED = 2  # one to learn from, one to measure on
RECOMMENDED = 5


@dataclass
class AdaptConfig:
    folder: str
    model: str
    out: str
    minutes: float = 10.0
    device: str = "auto"
    seed: int = 0
    lr: float = 5e-4
    crop: int = 512
    batch: int = 4
    synthetic_share: float = 0.25
    holdout: int | None = None  # held-out scans (default: a third, at least one)
    freeze_encoder: float = 0.5  # share of the steps that train the decoder only (the encoder's weights frozen)


@dataclass
class AdaptReport:
    before: dict
    after: dict | None
    train_names: list[str]
    held_out_names: list[str]
    steps: int
    seconds: float
    out: str | None
    best_step: int = 0


def _with_mask_truth(lg: LabelledLog) -> LabelledLog:
    """A calibrated scan with no truth LAS is measured against the trace of its own labelled mask."""
    if lg.calibration is None or lg.truth_path is not None or lg.truth is not None:
        return lg
    from core.digitize.job.pipeline import digitize
    from core.digitize.page.frame import from_canonical

    axis = lg.calibration.depth_axis
    res = digitize(from_canonical(lg.image, axis), lg.calibration, mask=from_canonical(lg.mask, axis),
                   source=str(lg.source))
    lg.truth = (res.depth, {k.upper(): v for k, v in res.values.items()})
    return lg


def check(cfg: AdaptConfig) -> tuple[list[LabelledLog], list[LabelledLog]]:
    """Validate the request and split the labelled scans (train, held out); raises InputError/DataError."""
    if not cfg.minutes or cfg.minutes <= 0:
        raise InputError(None, f"--minutes must be more than 0 (got {cfg.minutes:g}): adaptation needs time to run")
    if not 0.0 <= cfg.freeze_encoder <= 1.0:
        raise InputError(None, f"--freeze-encoder {cfg.freeze_encoder:g}: a share of the steps, from 0 to 1")
    folder, base, out = Path(cfg.folder), Path(cfg.model), Path(cfg.out)
    if out.suffix != ".safetensors":
        raise InputError(out, "model files end in .safetensors")
    if base.exists() and out.exists() and out.resolve() == base.resolve():
        raise InputError(out, "is the base model: adapting never overwrites it; choose another --out")
    scans = labelled_scan_paths(folder)
    if len(scans) < MIN_LABELLED:
        raise DataError(folder, f"{len(scans)} labelled scan(s); adapting needs at least {MIN_LABELLED} (one to learn "
                        f"from, one held out to measure on), {RECOMMENDED} or more recommended. A scan NAME.png "
                        "is labelled when NAME.mask.png lies beside it")
    logs = [load_labelled(p) for p in scans]
    n_out = cfg.holdout if cfg.holdout is not None else max(1, len(logs) // 3)
    if not 1 <= n_out < len(logs):
        raise InputError(None, f"--holdout {n_out}: keep at least one of the {len(logs)} labelled scans out and one in")
    rng = np.random.default_rng(cfg.seed)
    order = rng.permutation(len(logs))
    held = [_with_mask_truth(logs[i]) for i in sorted(order[:n_out])]
    train = [logs[i] for i in sorted(order[n_out:])]
    return train, held


def _score(model, logs, precision, device, loss_fn) -> dict:
    from .evaluate import evaluate_logs

    res = evaluate_logs(model, logs, precision, device, loss_fn)
    return {k: res.get(k) for k in ("mask_f1", "curve_r", "curve_rmse_pct", "val_loss")}


def _better(a: dict, b: dict | None) -> bool:
    if b is None:
        return True
    if a.get("curve_r") is not None and b.get("curve_r") is not None:
        return a["curve_r"] > b["curve_r"]
    return a["mask_f1"] > b["mask_f1"]


def adapt(cfg: AdaptConfig, stop: threading.Event | None = None) -> Iterator[Event | AdaptReport]:
    """Run one adaptation; yields the trainer's events, then an :class:`AdaptReport` last."""
    import torch

    from core.model.model_io import load_model, read_model_metadata

    from .losses import loss_for
    from .train import Trainer

    t0 = time.perf_counter()
    deadline = t0 + 60.0 * cfg.minutes
    train_logs, held = check(cfg)
    base_model, info = load_model(cfg.model)
    classes = base_model.cfg.classes
    stage = "binary" if classes == 1 else "multiclass"
    if classes == 1 and any(int(lg.mask.max()) > 1 for lg in train_logs + held):
        yield WarningEvent(0, "binary_model", "the base model is binary: the masks' line styles (classes 2, 3) are "
                           "learnt as plain curve", "adapt a multiclass model to keep curves of one track apart")
    stop = stop or threading.Event()
    trainer = Trainer(_train_config(cfg, stage, base_model.cfg.preset, train_logs, held), stop)
    loss_fn = loss_for(classes)
    with torch.no_grad():
        before = _score(trainer.model, held, trainer.precision, trainer.device, loss_fn)
    events = trainer.run()
    yield from _fit_to_deadline(trainer, events, t0, deadline)
    # the base model is the first candidate: an adapted model is written only if it beats it on the held-out
    # scans, else the base weights are written back (the run then says it found no improvement)
    best, best_step, last_eval, saved = before, 0, 0, False
    out = Path(cfg.out)
    meta_base = json.loads(read_model_metadata(cfg.model).get("summary", "{}") or "{}")

    def consider(ev: EvalEvent) -> None:
        """Keep the model when it scores best on the held-out scans so far (written atomically)."""
        nonlocal best, best_step, last_eval, saved
        last_eval = ev.step
        score = {"mask_f1": ev.mask_f1, "curve_r": ev.curve_r, "curve_rmse_pct": ev.curve_rmse_pct,
                 "val_loss": ev.val_loss}
        if not _better(score, best):
            return
        best, best_step, saved = score, ev.step, True
        _write(out, trainer.model, info["precision"], cfg, meta_base, train_logs, held, ev.step, before, score)

    timer = threading.Timer(max(0.0, deadline - time.perf_counter()), stop.set)
    timer.daemon = True
    timer.start()
    try:
        for ev in events:  # the trainer trains the decoder only for the first ``freeze_encoder`` share of the steps
            if isinstance(ev, EvalEvent):
                consider(ev)
            if getattr(ev, "type", "") == "done":
                continue  # adapt writes its own model file; the trainer writes none (no --out)
            yield ev
    finally:
        timer.cancel()
    if trainer.step > last_eval:  # stopped between evaluations (deadline, Stop): score the last steps too
        ev = trainer.evaluate()
        consider(ev)
        yield ev
    if not saved:
        yield WarningEvent(trainer.step, "no_improvement", "no adapted step scored better than the base model on the "
                           "held-out scans: the base weights are written", "label more scans, or give it more time")
        base_again, _ = load_model(cfg.model)
        _write(out, base_again, info["precision"], cfg, meta_base, train_logs, held, 0, before, before)
    yield AdaptReport(before, best, [lg.name for lg in train_logs], [lg.name for lg in held], trainer.step,
                      time.perf_counter() - t0, str(out), best_step)


def _train_config(cfg: AdaptConfig, stage: str, preset: str, train_logs, held):
    """The trainer's config for an adaptation: the base model continued on the project's scans (and the share of
    synthetic logs asked for), its held-out scans as validation, a step count fixed later by the deadline."""
    from .train import TrainConfig

    return TrainConfig(synthetic=cfg.synthetic_share > 0, mix=cfg.synthetic_share, stage=stage, preset=preset,
                       init_model=cfg.model, device=cfg.device, precision="auto", steps=1_000_000, lr=cfg.lr,
                       effective_batch=cfg.batch, micro_batch=min(2, cfg.batch), crop_along=cfg.crop,
                       seed=cfg.seed, stream_size=(1600, 384), checkpoint_every=0, train_val=(train_logs, held),
                       freeze_encoder=cfg.freeze_encoder)


def _fit_to_deadline(trainer, events, t0: float, deadline: float) -> Iterator[Event]:
    """The run's events up to its first step, then the step count sized from that timed pilot, so the schedule
    (warm-up, cosine) fits the time left; yields the first step last."""
    pilot = time.perf_counter()
    first = next(events)
    while getattr(first, "type", "") != "step":
        yield first
        first = next(events)
    per_step = time.perf_counter() - pilot
    eval_cost = max(1.0, (time.perf_counter() - t0 - per_step) * 0.5)  # the "before" scoring, a fair guess
    budget = deadline - time.perf_counter()
    n_evals = 4
    steps = int(max(2, (budget - n_evals * eval_cost) / max(per_step, 1e-3)))
    trainer.retarget(steps, steps // n_evals)
    yield first


def _write(out: Path, model, precision: str, cfg: AdaptConfig, meta_base: dict, train_logs, held, step: int,
           before: dict, after: dict) -> None:
    from core.model.model_io import save_model

    save_model(out, model, precision, {
        "adapted_from": Path(cfg.model).name, "base_summary": meta_base, "adapted_on": [lg.name for lg in train_logs],
        "held_out": [lg.name for lg in held], "freeze_encoder": cfg.freeze_encoder, "step": step, "before": before,
        "after": after, "preset": model.cfg.preset, "styles": meta_base.get("styles")})
