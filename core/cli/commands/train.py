"""``welltrace train``: fit the segmentation network, headless (the app's Train button runs the same trainer).

A flag's destination is its :class:`~core.engine.config.TrainConfig` field's name (``--crop-along``, kept also
as ``--crop``), so :func:`train_config` builds the configuration from the parsed arguments in one place: the
``parity`` and ``eval-styles --leave-one-out`` commands build theirs with it too.
"""

from __future__ import annotations

import sys
from dataclasses import fields
from pathlib import Path

from core.common.errors import UsageError
from core.model.precision_modes import MODES

from ..options import (
    add_device,
    add_preset,
    name_list,
    positive_number,
    share,
    size_wxh,
    tile_choice,
    whole_number,
)
from ..tables import fmt_bytes
from .fit_confidence import add_fit_flag, fit_after_run, fit_planned

NAME = "train"


def register(sub) -> None:
    t = sub.add_parser(NAME, help="train the segmentation network (headless)")
    t.add_argument("data", help="a project or synthetic folder, or 'synthetic' for the on-the-fly stream")
    t.add_argument("--out", required=True, help="model file to write (.safetensors)")
    t.add_argument("--precision", default="auto", choices=MODES)
    t.add_argument("--stage", default="binary", choices=("binary", "multiclass"))
    add_preset(t)
    t.add_argument("--init-model", "--init", dest="init_model", metavar="MODEL", help="continue from this model file")
    t.add_argument("--steps", type=whole_number(1))
    t.add_argument("--epochs", type=whole_number(1))
    t.add_argument("--lr", type=positive_number, default=2e-3)
    t.add_argument("--stream-size", type=size_wxh, default=(1600, 384), metavar="WxH",
                   help="synthetic stream logs: WIDTHxHEIGHT (canonical frame)")
    t.add_argument("--effective-batch", "--batch", dest="effective_batch", type=whole_number(1), default=16,
                   metavar="N",
                   help="multiclass: logs per optimizer step (default 16)")
    t.add_argument("--crop-along", "--crop", dest="crop_along", type=whole_number(0), default=1024, metavar="PX",
                   help="random crop along depth in px (0: whole logs)")
    t.add_argument("--compile", action="store_true", help="torch.compile the network: the first step compiles "
                   "(about a minute on a CPU, cached for later runs), the steps after run fused kernels")
    t.add_argument("--workers", type=whole_number(0), default=2, metavar="N",
                   help="worker processes that make the batches "
                   "ahead of the steps (default 2; 0: in the training process); a step event's data_wait_s says how "
                   "long a step waited for them")
    add_device(t)
    t.add_argument("--checkpointing", default="off", choices=("auto", "on", "off"))
    t.add_argument("--tile", default="off", type=tile_choice, help="auto, off or a strip length in px")
    t.add_argument("--ceiling-gib", "--ceiling", dest="ceiling_gib", type=positive_number, metavar="GIB",
                   help="memory ceiling for planning the levers")
    t.add_argument("--events", metavar="FILE", help="write the training events as JSON lines")
    t.add_argument("--resume", metavar="CKPT", help="continue a run from its checkpoint")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--eval-every", type=whole_number(0), default=0, help="evaluate every N steps (0: at the end)")
    t.add_argument("--synthetic", action="store_true", help="mix the synthetic stream into a folder's data")
    t.add_argument("--styles", help="print-style families of the synthetic stream, comma-separated (a family named "
                   "twice is drawn twice as often; default: the grey families)")
    t.add_argument("--exclude-styles", help="families left out of the stream (leave-one-family-out training)")
    t.add_argument("--fp32-modules", type=name_list, default=[], help="comma-separated module names kept in fp32")
    t.add_argument("--freeze-encoder", type=share, default=0.0, metavar="SHARE",
                   help="train the decoder only for this share of the steps first (fine-tuning; default 0)")
    add_fit_flag(t)
    t.set_defaults(func=run)


def train_config(args, **fixed):
    """The :class:`TrainConfig` of parsed arguments: every argument named like a field fills it, then
    ``fixed`` (what a command sets itself); ``data`` 'synthetic' is the on-the-fly stream."""
    from core.engine.config import TrainConfig

    values = {f.name: getattr(args, f.name) for f in fields(TrainConfig) if hasattr(args, f.name)}
    if values.get("data") == "synthetic":
        values["data"], values["synthetic"] = None, True
    if "crop_along" in values:
        values["crop_along"] = values["crop_along"] or None  # 0: whole logs
    if "effective_batch" in values:
        values["micro_batch"] = min(4, values["effective_batch"])
    values.update(fixed)
    return TrainConfig(**values)


def stream_styles(styles: str | None, exclude: str | None) -> tuple[str, ...] | None:
    """The families ``--styles`` and ``--exclude-styles`` leave (None: the default, grey ones)."""
    from core.synth.styles import DEFAULT_FAMILIES, parse_families

    try:
        chosen = parse_families(styles)
        if exclude:
            dropped = parse_families(exclude)
            chosen = tuple(f for f in chosen if f not in dropped)
    except ValueError as exc:
        raise UsageError(f"--styles/--exclude-styles: {exc}") from None
    if not chosen:
        raise UsageError("--exclude-styles leaves no print-style family to train on")
    return None if sorted(chosen) == sorted(DEFAULT_FAMILIES) else chosen  # a family named twice is kept twice


def run(args) -> int:
    from core.engine.train import Trainer

    if args.steps is not None and args.epochs is not None:
        raise UsageError("give --steps or --epochs, not both")
    out = Path(args.out)
    if out.suffix != ".safetensors":
        raise UsageError(f"--out {out}: model files end in .safetensors")
    data = None if args.data == "synthetic" else Path(args.data)
    check_training_outputs(out, args.events, [("the training data", data), ("--init-model", args.init_model),
                                              ("--resume", args.resume)], checkpoint=out.with_suffix(".ckpt"))
    cfg = train_config(args, styles=stream_styles(args.styles, args.exclude_styles), out=str(out),
                       synthetic=args.data == "synthetic" or args.synthetic,
                       steps=args.steps if args.steps is not None else (None if args.epochs else 100))
    from core.engine.distributed import join_from_env

    world = join_from_env(args.device)  # a world of one unless torchrun started this process
    # the model's calibrated confidence is fitted after a finished run, by the rank that wrote the model
    fit = world.is_main and fit_planned(args.fit_confidence, out)
    try:
        status = drive_training(Trainer(cfg, world=world), args.events if world.is_main else None,
                                quiet=not world.is_main, append=bool(args.resume))
    finally:
        world.close()
    if status == "finished" and fit and out.is_file():
        return fit_after_run(out, device=args.device)[0]
    if status == "stopped" and fit and out.is_file():
        print(f"note: the run was stopped, so its model's confidence was not fitted: welltrace fit-confidence "
              f"--model {out}", file=sys.stderr)
    return 0 if status in ("finished", "stopped") else 1


def check_training_outputs(out: Path, events: str | None, inputs: list, checkpoint: Path | None = None) -> None:
    """Refuse, before any training, the files a run could not write or must not: the model, its checkpoint and
    the events log each writable (``--out DIR.safetensors`` was refused after the training), none of them an
    input (the data, the model it starts from, the checkpoint it resumes), and an existing ``--events`` file
    that is no events log (``--events EXISTING`` truncated whatever was there)."""
    from core.common.atomic import require_writable
    from core.common.errors import InputError
    from core.common.output_paths import refuse_clobbering

    inputs = [(what, None if p is None else Path(p)) for what, p in inputs]
    refuse_clobbering([("--out", out), ("--events", events)], inputs)
    if checkpoint is not None:  # written beside the model; resuming from it is the point of it
        refuse_clobbering([("the checkpoint", checkpoint)], [i for i in inputs if i[0] != "--resume"])
    if events and Path(events).exists() and not is_event_log(Path(events)):
        raise InputError(events, "--events: the file exists and is no training events log (JSON lines with a "
                         "\"type\"): give a new name, or remove it")
    require_writable([out, events, checkpoint])


def is_event_log(path: Path) -> bool:
    """Whether ``path`` is an events log of an earlier run (empty, or JSON lines each an object with a "type"),
    which a new run may replace (or ``--resume`` continue)."""
    import json

    try:
        with open(path, "rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    lines = [line for line in head.splitlines() if line.strip()]
    complete = lines[:-1] if len(head) == 65536 else lines  # the last line may be cut by the read
    try:
        return all(isinstance(rec := json.loads(line), dict) and "type" in rec for line in complete[:50])
    except (ValueError, RecursionError):
        return False


def run_training(trainer, events_path: str | None, quiet: bool, append: bool = False) -> int:
    """:func:`drive_training`'s exit status: 0 for a finished or stopped run, 1 otherwise."""
    return 0 if drive_training(trainer, events_path, quiet, append) in ("finished", "stopped") else 1


def drive_training(trainer, events_path: str | None, quiet: bool, append: bool = False) -> str:
    """Drive the trainer's events to the terminal and the events file (``append``: after an earlier run's, as
    a resumed run does); the run's status. Under torchrun only rank 0 prints and writes; the other ranks are quiet
    but for errors."""
    from core.common.progress import progress_bar

    # events are a live log (line-buffered, readable while the run goes on), not an atomic document
    fh = open(events_path, "a" if append else "w", encoding="utf-8", buffering=1) if events_path else None
    status = "finished"
    try:
        with progress_bar(trainer.total_steps, "train", unit="step", disable=quiet) as bar:
            bar.update(trainer.step)
            for ev in trainer.run():
                if fh:
                    fh.write(ev.to_json() + "\n")
                if ev.type == "error":
                    print(f"welltrace: rank {trainer.world.rank}: {ev.message}" if trainer.world.distributed
                          else f"welltrace: {ev.message}", file=sys.stderr)
                elif ev.type == "done":
                    status = ev.status
                if quiet:
                    continue
                if ev.type == "step":
                    scale = "none" if ev.loss_scale is None else f"{ev.loss_scale:g}"
                    bar.set_postfix_str(f"loss {ev.loss:.4f} scale {scale} act {fmt_bytes(ev.memory['activations'])}")
                    bar.update(1)
                elif ev.type == "warning":
                    kind = "note" if ev.code == "no_scaler" else "warning"
                    print(f"{kind}: {ev.message}" + (f" ({ev.advice})" if ev.advice else ""), file=sys.stderr)
                elif ev.type == "epoch":
                    r = "-" if ev.curve_r is None else f"{ev.curve_r:.4f}"
                    print(f"step {ev.step}: val loss {ev.val_loss:.4f}  mask F1 {ev.mask_f1:.3f}  "
                          f"IoU {ev.mask_iou:.3f}  curve r {r}")
                elif ev.type == "done":
                    ranks = f" on {trainer.world.size} ranks" if trainer.world.distributed else ""
                    print(f"{ev.status} after {ev.step} steps{ranks}; model {ev.model_path or '-'}; "
                          f"checkpoint {ev.checkpoint_path or '-'}")
    finally:
        if fh:
            fh.close()
    return status
