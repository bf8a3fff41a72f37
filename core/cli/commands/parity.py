"""``welltrace parity``: fp32 and a 16-bit mode trained from one seed and compared (or ``--layers``: which
modules drift and whose gradients underflow)."""

from __future__ import annotations

import json
import sys

from ..options import add_device, add_preset, name_list, whole_number
from .train import train_config

NAME = "parity"


def register(sub) -> None:
    q = sub.add_parser(NAME, help="train fp32 and a 16-bit mode from one seed and compare (or --layers)")
    q.add_argument("data", help="a project or synthetic folder, or 'synthetic'")
    q.add_argument("--steps", type=whole_number(1), default=30)
    q.add_argument("--mode", default="auto", choices=("auto", "bf16", "fp16"))
    add_preset(q, "tiny")
    q.add_argument("--stage", default="binary", choices=("binary", "multiclass"))
    q.add_argument("--crop-along", "--crop", dest="crop_along", type=whole_number(0), default=512, metavar="PX")
    q.add_argument("--seed", type=int, default=0)
    add_device(q)
    q.add_argument("--layers", action="store_true", help="per-module output error and gradient underflow")
    q.add_argument("--fp32-modules", type=name_list, default=[], help="with --layers: keep these modules in fp32 and show before/after")
    q.add_argument("--threshold", type=float, default=0.05)
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=run)


def run(args) -> int:
    from core.engine.budget import default_16bit
    from core.engine.config import pick_device
    from core.engine.parity import layer_profile, run_parity, worst

    device = pick_device(args.device)
    mode16 = args.mode if args.mode != "auto" else default_16bit(device)
    cfg = train_config(args, device=str(device), fp32_modules=[])
    if args.layers:
        res = layer_profile(cfg, mode16, args.fp32_modules, args.threshold)
        if args.json:
            print(json.dumps(res, indent=2))
            return 0
        for label, rows in res["reports"].items():
            print(f"{mode16} vs fp32, {label}: worst modules by output error (threshold {args.threshold:g})")
            print(f"  {'module':<34}{'rel. error':>12}{'grad underflow':>16}")
            for r in worst(rows):
                flag = "  <- flagged" if r["flagged"] else ""
                print(f"  {r['module']:<34}{r['rel_error']:>12.2e}{r['grad_underflow']:>16.2%}{flag}")
        print(f"flagged: {', '.join(res['flagged']) or 'none'}")
        return 0
    res = run_parity(cfg, mode16)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"{'metric':<16}{'fp32':>10}{mode16:>10}{'rel. diff':>11}")
    for k in ("mask_f1", "curve_r", "curve_rmse_pct", "val_loss"):
        a, b, d = res["fp32"][k], res[mode16][k], res["relative_difference"][k]
        fa = "-" if a is None else f"{a:.4f}"
        fb = "-" if b is None else f"{b:.4f}"
        fd = "-" if d is None else f"{d:.2%}"
        print(f"{k:<16}{fa:>10}{fb:>10}{fd:>11}")
    if res["drifted"]:
        print(f"warning: {mode16} drifts from fp32 by more than 1 % in {', '.join(res['drifted'])}", file=sys.stderr)
    return 0
