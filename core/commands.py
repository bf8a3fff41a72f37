"""Subcommands of the engine (train, digitize, eval).

Kept apart from ``cli.py`` so the parser module stays small; each handler
imports its engine module lazily so ``welltrace --help`` starts fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .errors import InputError


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} GiB"


def cmd_train(args) -> int:
    from .atomic import atomic_open
    from .cli import UsageError, progress_bar
    from .train import TrainConfig, Trainer

    if args.steps is not None and args.epochs is not None:
        raise UsageError("give --steps or --epochs, not both")
    out = Path(args.out)
    if out.suffix != ".safetensors":
        raise UsageError(f"--out {out}: model files end in .safetensors")
    cfg = TrainConfig(
        data=args.data if args.data != "synthetic" else None, synthetic=args.data == "synthetic" or args.synthetic,
        stage=args.stage, preset=args.preset, init_model=args.init, precision=args.precision, device=args.device,
        steps=args.steps if args.steps is not None else (None if args.epochs else 100), epochs=args.epochs,
        lr=args.lr, crop_along=args.crop or None, checkpointing=args.checkpointing, tile=args.tile,
        ceiling_gib=args.ceiling, out=str(out), resume=args.resume, seed=args.seed, eval_every=args.eval_every,
        fp32_modules=[m for m in (args.fp32_modules or "").split(",") if m],
    )
    trainer = Trainer(cfg)
    events_fh = atomic_open(args.events, "w") if args.events else None
    fh = events_fh.__enter__() if events_fh else None
    status = "finished"
    try:
        with progress_bar(trainer.total_steps, "train", unit="step") as bar:
            bar.update(trainer.step)
            for ev in trainer.run():
                if fh:
                    fh.write(ev.to_json() + "\n")
                if ev.type == "step":
                    scale = "none" if ev.loss_scale is None else f"{ev.loss_scale:g}"
                    bar.set_postfix_str(f"loss {ev.loss:.4f} scale {scale} act {_fmt_bytes(ev.memory['activations'])}")
                    bar.update(1)
                elif ev.type == "warning":
                    kind = "note" if ev.code == "no_scaler" else "warning"
                    print(f"{kind}: {ev.message}" + (f" ({ev.advice})" if ev.advice else ""), file=sys.stderr)
                elif ev.type == "epoch":
                    r = "-" if ev.curve_r is None else f"{ev.curve_r:.4f}"
                    print(f"step {ev.step}: val loss {ev.val_loss:.4f}  mask F1 {ev.mask_f1:.3f}  "
                          f"IoU {ev.mask_iou:.3f}  curve r {r}")
                elif ev.type == "error":
                    print(f"welltrace: {ev.message}", file=sys.stderr)
                elif ev.type == "done":
                    status = ev.status
                    print(f"{ev.status} after {ev.step} steps; model {ev.model_path or '-'}; "
                          f"checkpoint {ev.checkpoint_path or '-'}")
    finally:
        if events_fh:
            events_fh.__exit__(None, None, None)
    return 0 if status in ("finished", "stopped") else 1


def cmd_digitize(args) -> int:
    from .calibration import Calibration
    from .cli import progress_bar
    from .digitize import digitize, write_result
    from .scan import load_scan, save_gray_png

    if bool(args.model) == bool(args.classical):
        raise InputError(None, "give exactly one of --model MODEL or --classical")
    scan = load_scan(args.scan)
    calib = Calibration.load(args.calib)
    model = precision = None
    device = "cpu"
    if args.model:
        import torch

        from . import precision as prec
        from .model_io import load_model
        from .train import pick_device

        model, info = load_model(args.model)
        dev = pick_device(args.device)
        model.to(dev)
        device = dev
        precision = prec.resolve(args.precision if args.precision != "model" else
                                 (info["precision"] if info["precision"] != "fp16" or dev.type == "cuda" else "fp32"),
                                 dev)
        torch.set_grad_enabled(False)
    with progress_bar(1, "digitize", unit="strip") as bar:
        def prog(i, n):
            bar.total = n
            bar.n = i
            bar.refresh()
        tile = int(args.tile) if args.tile and args.tile.isdigit() else None
        res = digitize(scan.image, calib, model, precision, device, tile=tile, progress=prog, source=args.scan)
    for w in res.warnings:
        print(f"warning: {w}", file=sys.stderr)
    write_result(args.out, res, calib, str(Path(args.scan).name), Path(args.model).name if args.model else None,
                 well={"WELL": args.well} if args.well else None)
    if args.mask_out:
        save_gray_png(args.mask_out, res.mask)
    n = res.depth.size
    print(f"wrote {args.out}: {len(res.values)} curves × {n} samples "
          f"({res.depth[0]:g}–{res.depth[-1]:g} {calib.depth_unit}); evidence {res.timings['evidence_s']:.2f} s, "
          f"trace {res.timings['trace_s']:.2f} s")
    return 0


def cmd_eval(args) -> int:
    from .calibration import Calibration
    from .las_io import read_las
    from .metrics import compare_las, summarise

    pred, truth = read_las(args.pred), read_las(args.truth)
    ranges = None
    if args.calib:
        cal = Calibration.load(args.calib)
        ranges = {c.mnemonic.upper(): c.value_range for c in cal.curves}
    metrics = compare_las(pred, truth, ranges)
    if not metrics:
        raise InputError(args.pred, f"no curve in common with {args.truth}")
    if args.json:
        print(json.dumps({"curves": [m.as_dict() for m in metrics], "summary": summarise(metrics)},
                         indent=2, default=lambda v: None))
        return 0
    print(f"{'curve':<8}{'n':>7}{'r':>8}{'R²':>8}{'MAE':>10}{'RMSE':>10}{'RMSE%':>8}{'≤2%':>7}{'NULL':>7}{'offset':>8}")
    for m in metrics:
        print(f"{m.mnemonic:<8}{m.n:>7}{m.r:>8.4f}{m.r2:>8.3f}{m.mae:>10.4g}{m.rmse:>10.4g}{m.rmse_pct:>8.2f}"
              f"{m.within_2pct:>7.1%}{m.null_fraction:>7.1%}{m.best_offset:>+8d}")
    s = summarise(metrics)
    print(f"median r {s['median_r']:.4f}, median RMSE {s['median_rmse_pct']:.2f} % of range")
    return 0


def add_engine_commands(sub) -> None:
    """Register the engine's subcommands on the ``welltrace`` parser."""
    t = sub.add_parser("train", help="train the segmentation network (headless)")
    t.add_argument("data", help="a project or synthetic folder, or 'synthetic' for the on-the-fly stream")
    t.add_argument("--out", required=True, help="model file to write (.safetensors)")
    t.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16", "fp16"))
    t.add_argument("--stage", default="binary", choices=("binary", "multiclass"))
    t.add_argument("--preset", default="demo", choices=("tiny", "demo", "full"))
    t.add_argument("--init", metavar="MODEL", help="continue from this model file")
    t.add_argument("--steps", type=int)
    t.add_argument("--epochs", type=int)
    t.add_argument("--lr", type=float, default=2e-3)
    t.add_argument("--crop", type=int, default=1024, help="random crop along depth in px (0: whole logs)")
    t.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    t.add_argument("--checkpointing", default="off", choices=("auto", "on", "off"))
    t.add_argument("--tile", default="off", help="auto, off or a strip length in px")
    t.add_argument("--ceiling", type=float, metavar="GIB", help="memory ceiling for planning the levers")
    t.add_argument("--events", metavar="FILE", help="write the training events as JSON lines")
    t.add_argument("--resume", metavar="CKPT", help="continue a run from its checkpoint")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--eval-every", type=int, default=0, help="evaluate every N steps (0: at the end)")
    t.add_argument("--synthetic", action="store_true", help="mix the synthetic stream into a folder's data")
    t.add_argument("--fp32-modules", help="comma-separated module names kept in fp32")
    t.set_defaults(func=cmd_train)

    d = sub.add_parser("digitize", help="trace a scan's curves and write them as LAS")
    d.add_argument("scan")
    d.add_argument("--calib", required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--model")
    d.add_argument("--classical", action="store_true", help="the classical tracer (no model)")
    d.add_argument("--mask-out", metavar="PNG")
    d.add_argument("--precision", default="model", choices=("model", "auto", "fp32", "bf16", "fp16"))
    d.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    d.add_argument("--tile", help="strip length in px for tiled inference")
    d.add_argument("--well", help="well name for the LAS header")
    d.set_defaults(func=cmd_digitize)

    e = sub.add_parser("eval", help="compare a digitised LAS with a truth LAS")
    e.add_argument("pred")
    e.add_argument("truth")
    e.add_argument("--calib", help="calibration whose scale ranges define the % figures")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=cmd_eval)

