"""``welltrace eval-crossings``: the crossing test set (``core/evaluation/crossings.py``) scored per pairing of
line styles, from the true masks, a model's evidence or the classical tracer's."""

from __future__ import annotations

import json
import time

import numpy as np

from ..options import describe_lazily

NAME = "eval-crossings"


def register(sub) -> None:
    e = sub.add_parser(NAME, help="tracks of 2–3 crossing curves, every pairing of line styles, scored")
    describe_lazily(e, _pairings)
    src = e.add_mutually_exclusive_group()
    src.add_argument("--model", help="trace the model's evidence (default: the bundled model)")
    src.add_argument("--from-mask", action="store_true", help="trace the true masks (the tracer's ceiling)")
    src.add_argument("--classical", action="store_true", help="trace the classical tracer's ink evidence")
    e.add_argument("--style", default="uniform", help="print-style family of the logs (default uniform; colour: "
                   "curves told apart by their inks, scored with their colour and as grey scans)")
    e.add_argument("--count", type=int, default=6, help="logs per pairing (default 6)")
    e.add_argument("--width", type=int, default=1600)
    e.add_argument("--height", type=int, default=384)
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=run)


def _pairings() -> str:
    from core.evaluation.crossings import PAIRINGS

    return "Pairings: " + ", ".join("+".join(map(str, p)) for p in PAIRINGS) + " (1 solid, 2 dashed, 3 dotted)."


def run(args) -> int:
    from core.common.errors import UsageError
    from core.evaluation.crossings import COLOUR_PAIRINGS, PAIRINGS, evaluate_pairing
    from core.synth.styles import FAMILIES

    if args.style not in FAMILIES:
        raise UsageError(f"--style must be one of {', '.join(FAMILIES)}, not {args.style!r}")
    if args.count < 1:
        raise UsageError("--count must be at least 1")
    if args.width < 64 or args.height < 96:
        raise UsageError(f"--width/--height: a log needs at least 64 × 96 px, got {args.width} × {args.height}")
    model, label = None, "true masks"
    if not args.from_mask and not args.classical:
        from core.model.bundled import BUNDLED_MODEL
        from core.model.model_io import load_model

        path = args.model or BUNDLED_MODEL
        model, _ = load_model(path)
        label = f"model {getattr(path, 'name', path)}"
    if args.classical:
        model, label = None, "classical tracer"
    coloured = args.style == "colour"
    runs = (True, False) if coloured else (True,)  # a colour log is scored with its colour and as a grey scan
    rows, every = [], {run: [] for run in runs}
    for pairing in COLOUR_PAIRINGS if coloured else PAIRINGS:
        for use_colour in runs:
            t0 = time.perf_counter()
            s = evaluate_pairing(pairing, model, args.count, args.style, args.width, args.height,
                                 from_mask=args.from_mask, colour=use_colour)
            rows.append({**s.as_dict(), **({"colour": use_colour} if coloured else {})})
            every[use_colour] += [c["r"] for c in s.curves if np.isfinite(c["r"])]
            if not args.json:
                w = s.worst()
                sep = f"  separation {s.separation:.3f}" if s.separation is not None else ""
                how = ("  colour" if use_colour else "  grey  ") if coloured else ""
                print(f"{'+'.join(map(str, pairing)):<6}{how} median r {s.median_r:6.3f}  RMSE {s.median_rmse_pct:5.2f} %"
                      f"{sep}  worst {w['mnemonic']} on {w['log']} r {w['r']:.2f}  ({time.perf_counter() - t0:.0f} s)"
                      if w else f"{pairing}: no curve scored", flush=True)
    overall = {run: float(np.median(v)) if v else float("nan") for run, v in every.items()}
    if args.json:
        out = {"method": label, "style": args.style, "pairings": rows, "median_r": overall[True]}
        if coloured:
            out["median_r_grey"] = overall[False]
        print(json.dumps(out, indent=2))
    else:
        print(f"\n{label}, {args.style}: median r over all {len(every[True])} curves {overall[True]:.3f}"
              + (f" with colour, {overall[False]:.3f} as grey scans" if coloured else ""))
    return 0
