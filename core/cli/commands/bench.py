"""``welltrace bench``: one training step per precision, measured: activations by dtype, peak memory, time
(or ``--forward-only``: the activations of one forward beside their prediction)."""

from __future__ import annotations

import json
import sys

from core.common.errors import InputError

from ..options import add_device, add_preset
from ..tables import fmt_bytes

NAME = "bench"


def register(sub) -> None:
    k = sub.add_parser(NAME, help="measure one training step per precision: activations, peak, time")
    k.add_argument("--width", type=int, default=12800)
    k.add_argument("--height", type=int, default=640)
    k.add_argument("--precisions", default="fp32,bf16,fp16")
    add_preset(k)
    add_device(k)
    k.add_argument("--steps", type=int, default=3, help="timed steps (median reported)")
    k.add_argument("--warmup", type=int, default=1)
    k.add_argument("--checkpointing", action="store_true")
    k.add_argument("--forward-only", action="store_true",
                   help="count the activations of one forward per mode beside the prediction (no step, no timing)")
    k.add_argument("--no-cudnn-benchmark", dest="cudnn_benchmark", action="store_false")
    k.add_argument("--rules", choices=("cpu", "cuda"), help="autocast rules (default: the device's); cuda on the CPU "
                   "emulates CUDA's (upsampling and norms in fp32): what a GPU step saves, measured without a GPU")
    k.add_argument("--json", action="store_true")
    k.set_defaults(func=run)


def run(args) -> int:
    from core.engine.train import pick_device
    from core.model.network import preset
    from core.model.precision import RESOLVED

    device = pick_device(args.device)
    cfg = preset(args.preset)
    modes = [m.strip() for m in args.precisions.split(",") if m.strip()]
    bad = [m for m in modes if m not in RESOLVED]
    if bad:
        raise InputError(None, f"--precisions: unknown mode {', '.join(bad)} ({', '.join(RESOLVED)})")
    if device.type == "cuda":
        import torch

        torch.backends.cudnn.benchmark = args.cudnn_benchmark
    from core.model.autocast_rules import autocast_rules

    if args.rules == "cuda" and device.type != "cpu":
        raise InputError(None, "--rules cuda emulates CUDA's autocast rules on the CPU: use it with --device cpu")
    with autocast_rules(args.rules or ("cuda" if device.type == "cuda" else "cpu")):
        if args.forward_only:
            return _bench_forward_only(args, cfg, device, modes)
        return _bench_steps(args, cfg, device, modes)


def _fp32_share(by_dtype: dict) -> float:
    total = sum(by_dtype.values())
    return by_dtype.get("fp32", 0) / total if total else float("nan")


def _bench_steps(args, cfg, device, modes) -> int:
    import statistics

    from core.engine.budget import Levers, machine_description, measure_step
    from core.model.autocast_rules import active_rules

    rows = {}
    for mode in modes:
        m = measure_step(cfg, args.width, args.height, Levers(mode, args.checkpointing), 1, device,
                         repeats=args.warmup + args.steps)
        times = m["step_times"][args.warmup:]
        rows[mode] = {"activations": m["terms"]["activations"], "activations_by_dtype": m["activations_by_dtype"],
                      "peak": m.get("peak") or m.get("rss_peak_delta"), "step_time_median": statistics.median(times),
                      "step_times": times}
    base = rows.get("fp32")
    for r in rows.values():
        if base:
            r["activation_ratio"] = r["activations"] / base["activations"]
            r["time_ratio"] = r["step_time_median"] / base["step_time_median"]
            if r["peak"] and base["peak"]:
                r["peak_ratio"] = r["peak"] / base["peak"]
        r["fp32_share"] = _fp32_share(r["activations_by_dtype"])
    out = {"machine": machine_description(device), "preset": cfg.preset, "width": args.width,
           "height": args.height, "checkpointing": args.checkpointing, "autocast_rules": active_rules(),
           "results": rows}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"machine  {out['machine']}")
    print(f"step     {args.width} × {args.height}, batch 1, preset {cfg.preset}, median of {args.steps} after "
          f"{args.warmup} warm-up, {out['autocast_rules']} autocast rules")
    peak_name = "CUDA peak" if device.type == "cuda" else "RSS rise"  # CPU: peak resident size over the step's start
    print(f"{'mode':<6}{'activations':>14}{'ratio':>8}{'fp32 share':>12}{peak_name:>14}{'step s':>10}{'ratio':>8}")
    for mode, r in rows.items():
        print(f"{mode:<6}{fmt_bytes(r['activations']):>14}{r.get('activation_ratio', float('nan')):>8.3f}"
              f"{r['fp32_share']:>12.3f}{fmt_bytes(r['peak']):>14}{r['step_time_median']:>10.3f}"
              f"{r.get('time_ratio', float('nan')):>8.2f}")
    return 0


def _bench_forward_only(args, cfg, device, modes) -> int:
    """Activations saved by one forward per mode, beside the prediction (no backward, no timing of a step)."""
    from core.engine.budget import Levers, machine_description, measure_forward, predict
    from core.model.autocast_rules import active_rules

    rows = {}
    for mode in modes:
        lev = Levers(mode, args.checkpointing)
        m = measure_forward(cfg, args.width, args.height, lev, 1, device)
        m["predicted"] = predict(cfg, args.width, args.height, lev).activations
        m["prediction_error"] = (m["predicted"] - m["activations"]) / m["activations"]
        m["fp32_share"] = _fp32_share(m["activations_by_dtype"])
        rows[mode] = m
        if not args.json:
            print(f"  {mode}: {fmt_bytes(m['activations'])} in {m['forward_time']:.0f} s", file=sys.stderr)
    if "fp32" in rows:
        for r in rows.values():
            r["activation_ratio"] = r["activations"] / rows["fp32"]["activations"]
    out = {"machine": machine_description(device), "preset": cfg.preset, "width": args.width,
           "height": args.height, "checkpointing": args.checkpointing, "forward_only": True,
           "autocast_rules": active_rules(), "results": rows}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"machine  {out['machine']}")
    print(f"forward  {args.width} × {args.height}, batch 1, preset {cfg.preset}"
          f"{', gradient checkpointing' if args.checkpointing else ''}, {out['autocast_rules']} autocast rules: "
          "bytes saved for backward")
    print(f"{'mode':<6}{'measured':>14}{'ratio':>8}{'fp32 share':>12}{'predicted':>14}{'error':>9}{'forward s':>11}")
    for mode, r in rows.items():
        print(f"{mode:<6}{fmt_bytes(r['activations']):>14}{r.get('activation_ratio', float('nan')):>8.3f}"
              f"{r['fp32_share']:>12.3f}{fmt_bytes(r['predicted']):>14}{r['prediction_error']:>9.2%}"
              f"{r['forward_time']:>11.1f}")
    return 0
