"""``welltrace budget``: the memory of one training step, predicted term by term (and ``--measure``d), and the
levers planned against the device's ceiling."""

from __future__ import annotations

import json

from core.model.precision_modes import MODES

from ..options import add_device, add_preset, positive_number, tile_choice, whole_number
from ..tables import fmt_bytes

NAME = "budget"


def register(sub) -> None:
    b = sub.add_parser(NAME, help="predict (and --measure) the memory of one training step and plan the levers")
    b.add_argument("--width", type=whole_number(16), required=True, help="px along depth")
    b.add_argument("--height", type=whole_number(16), required=True, help="px across the tracks")
    b.add_argument("--precision", default="auto", choices=MODES)
    b.add_argument("--checkpointing", default="auto", choices=("auto", "on", "off"))
    b.add_argument("--tile", default="auto", type=tile_choice, help="auto, off or a strip length in px")
    b.add_argument("--ceiling", type=positive_number, metavar="GIB",
                   help="memory ceiling (default: the device's memory)")
    b.add_argument("--batch", type=whole_number(1), default=1)
    add_preset(b)
    add_device(b)
    b.add_argument("--measure", action="store_true", help="also run one real step and show the errors")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=run)


def _budget_levers(args, cfg, device, ceiling):
    from core.engine.budget import Levers, default_16bit, plan

    mode = default_16bit(device) if args.precision == "auto" else args.precision
    pl = plan(cfg, args.width, args.height, ceiling, precision=mode, checkpointing=args.checkpointing,
              tile=args.tile, batch=args.batch, precision_fixed=args.precision != "auto")
    if args.checkpointing == "auto" or args.tile == "auto":
        lev = pl.levers or Levers(mode, args.checkpointing != "off", None)
    else:
        lev = Levers(mode, args.checkpointing == "on", int(args.tile) if args.tile.isdigit() else None)
    return pl, lev


def run(args) -> int:
    from core.common.vocabulary import GIB
    from core.engine.budget import device_ceiling, device_rules, machine_description, measure_step, predict
    from core.engine.train import pick_device
    from core.model.network import preset

    device = pick_device(args.device)
    cfg = preset(args.preset)
    ceiling = int(args.ceiling * GIB) if args.ceiling else device_ceiling(device)
    with device_rules(device):  # traced under the device's autocast rules (CUDA's cast other ops than the CPU's)
        pl, lev = _budget_levers(args, cfg, device, ceiling)
        terms = predict(cfg, args.width, args.height, lev, args.batch)
    out = {
        "machine": machine_description(device), "preset": cfg.preset, "width": args.width, "height": args.height,
        "batch": args.batch, "levers": {"precision": lev.precision, "checkpointing": lev.checkpointing,
                                        "tile": lev.tile},
        "terms": terms.as_dict(), "total": terms.total, "ceiling": ceiling, "fits": terms.total <= ceiling,
        "plan": pl.as_dict(), "spill_width": pl.spill,
    }
    if args.measure:
        m = measure_step(cfg, args.width, args.height, lev, args.batch, device)
        out["measured"] = m["terms"]
        out["measured_peak"] = m.get("peak") or m.get("rss_peak_delta")
        pred = terms.as_dict()
        out["error"] = {k: (pred[k] - v) / v for k, v in m["terms"].items() if k in pred and v}
        # like with like: the terms the prediction has, the workspace among them (predicted from transient.py's
        # calibration for the device; measured as the peak, or the resident size's rise, less the other terms)
        total_m = sum(v for k, v in m["terms"].items() if k in pred)
        out["error"]["total"] = (terms.total - total_m) / total_m
        if out["measured_peak"]:
            out["error"]["peak"] = (terms.total - out["measured_peak"]) / out["measured_peak"]
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"machine  {out['machine']}")
    print(f"step     {args.width} × {args.height}, batch {args.batch}, preset {cfg.preset}: {lev.describe()}")
    print(f"{'term':<13}{'predicted':>14}" + (f"{'measured':>14}{'error':>9}" if args.measure else ""))
    for k, v in terms.as_dict().items():
        line = f"{k:<13}{fmt_bytes(v):>14}"
        if args.measure and k in out["measured"]:
            line += f"{fmt_bytes(out['measured'][k]):>14}{out['error'].get(k, 0):>+9.1%}"
        print(line)
    line = f"{'total':<13}{fmt_bytes(terms.total):>14}"
    if args.measure:
        line += f"{fmt_bytes(sum(out['measured'].values())):>14}{out['error']['total']:>+9.1%}"
    print(line)
    if args.measure and out.get("measured_peak"):
        kind = "CUDA peak" if device.type == "cuda" else "RSS peak rise"
        print(f"{kind:<13}{'':>14}{fmt_bytes(out['measured_peak']):>14}{out['error']['peak']:>+9.1%}")
    print(f"ceiling  {fmt_bytes(ceiling)}: {'fits' if out['fits'] else 'does NOT fit'}"
          f" (headroom {fmt_bytes(ceiling - terms.total)})")
    print(f"plan     {pl.as_dict()['summary']}")
    for st in pl.steps:
        print(f"         - {st['levers']}: {fmt_bytes(st['predicted_total'])} {'fits' if st['fits'] else 'too big'}")
    print("spill    widest log that fits (px along depth):")
    for mode, d in pl.spill.items():
        print(f"         {mode:<5} plain {d['plain']:>9,}   with checkpointing {d['checkpointing']:>9,}")
    return 0
