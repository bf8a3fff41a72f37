"""``welltrace adapt``: fine-tune a model on a folder's labelled scans within a time budget."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..options import add_device, positive_number, share, whole_number
from .fit_confidence import add_fit_flag, fit_after_run, fit_planned

NAME = "adapt"


def register(sub) -> None:
    a = sub.add_parser(NAME, help="fine-tune a model on a few labelled scans of one print style, time-boxed",
                       description="Holds out a third of the labelled scans (at least one), reports curve r and "
                       "RMSE on them before and after, and writes the best model so far. Needs at least 2 "
                       "labelled scans; 5 or more recommended.")
    a.add_argument("folder", help="a project or folder of scans with their masks (and calibrations)")
    a.add_argument("--model", required=True, help="the base model (never overwritten)")
    a.add_argument("--out", required=True, help="the adapted model file (.safetensors)")
    a.add_argument("--minutes", type=positive_number, default=10.0, help="wall-clock budget (default 10)")
    add_device(a)
    a.add_argument("--events", metavar="FILE", help="write the events as JSON lines")
    a.add_argument("--holdout", type=whole_number(1),
                   help="scans held out to measure on (default: a third, at least one)")
    a.add_argument("--freeze-encoder", type=share, default=0.5, metavar="SHARE",
                   help="share of the steps that train the decoder only, the encoder frozen (default 0.5; 0: none)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--json", action="store_true", help="print the before/after report as JSON")
    add_fit_flag(a)
    a.set_defaults(func=run)


def _fmt(v) -> str:
    return "—" if v is None else f"{v:.3f}"


def run(args) -> int:
    from core.engine.adapt import AdaptConfig, AdaptReport, adapt

    from .train import check_training_outputs

    # the base model is never overwritten, nor the folder's scans, and an existing events file must be one
    check_training_outputs(Path(args.out), args.events, [("the base model (--model)", args.model),
                                                         ("the folder", args.folder)])
    cfg = AdaptConfig(args.folder, args.model, args.out, minutes=args.minutes, device=args.device, seed=args.seed,
                      holdout=args.holdout, freeze_encoder=args.freeze_encoder)
    fit = fit_planned(args.fit_confidence, args.out)  # said now, where scikit-learn is missing, not at the end
    fh = open(args.events, "w", encoding="utf-8") if args.events else None
    report = None
    try:
        for ev in adapt(cfg):
            if isinstance(ev, AdaptReport):
                report = ev
                continue
            if fh:
                fh.write(ev.to_json() + "\n")
            if ev.type == "warning":
                print(f"warning: {ev.message}", file=sys.stderr)
            elif ev.type == "epoch" and not args.json:
                print(f"step {ev.step}: held-out mask F1 {ev.mask_f1:.3f}  curve r {_fmt(ev.curve_r)}", flush=True)
    except KeyboardInterrupt:
        out = Path(args.out)
        print(f"welltrace: interrupted; the best model so far is {out if out.exists() else 'not written yet'}",
              file=sys.stderr)
        return 130
    finally:
        if fh:
            fh.close()
    b, a = report.before, report.after or {}
    if args.json:
        rc, fitted = fit_after_run(report.out, out=sys.stderr, device=args.device) if fit else (0, None)  # stdout holds the JSON alone
        print(json.dumps({"before": b, "after": report.after, "adapted_on": report.train_names,
                          "held_out": report.held_out_names, "steps": report.steps, "best_step": report.best_step,
                          "seconds": round(report.seconds, 1), "model": report.out,
                          "confidence": fitted.out if fitted else None}, indent=2))
        return rc
    print(f"\nadapted on {len(report.train_names)} scan(s), measured on {len(report.held_out_names)} held out "
          f"({', '.join(report.held_out_names)}); {report.steps} steps in {report.seconds:.0f} s")
    print(f"{'':<10}{'mask F1':>9}{'curve r':>9}{'RMSE %':>9}")
    for name, m in (("before", b), ("after", a)):
        print(f"{name:<10}{_fmt(m.get('mask_f1')):>9}{_fmt(m.get('curve_r')):>9}{_fmt(m.get('curve_rmse_pct')):>9}")
    print(f"model {report.out} (the best on the held-out scans: step {report.best_step})" if report.best_step else
          f"model {report.out}: no adapted step beat the base model on the held-out scans; its weights were kept")
    return fit_after_run(report.out, device=args.device)[0] if fit else 0
