"""``welltrace eval-styles``: accuracy per print-style family, and leave-one-family-out.

Two uses:

- ``eval-styles --model M`` (or ``--classical``) scores one model on fresh
  logs of every family, each marked *held out* or *trained on* from the
  styles the model's metadata says it trained on;
- ``eval-styles --leave-one-out --steps N …`` trains one model per family on
  the stream of every other family (the same recipe each time, from
  ``--init`` when given) and reports each model on the family it never saw,
  beside its figure on the families it did.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..options import add_device, add_preset, describe_lazily, positive_number, size_wxh, whole_number

NAME = "eval-styles"


def register(sub) -> None:
    e = sub.add_parser(NAME, help="accuracy per print-style family; --leave-one-out trains without each in turn")
    describe_lazily(e, _families)
    src = e.add_mutually_exclusive_group()
    src.add_argument("--model", help="the model to score (default: the bundled model)")
    src.add_argument("--classical", action="store_true", help="score the classical tracer")
    e.add_argument("--families", help="comma-separated families (default: all)")
    e.add_argument("--count", type=int, default=8, help="logs per family (default 8)")
    e.add_argument("--width", type=int, default=1600, help="px along depth (default 1600)")
    e.add_argument("--height", type=int, default=480, help="px across the tracks (default 480)")
    e.add_argument("--seed", type=int, default=None, help="evaluation seed (default: the fixed held-out seed)")
    e.add_argument("--no-grid", action="store_true", help="trace without grid damping (to measure what it buys)")
    e.add_argument("--las-dir", help="draw the curve shapes from this folder's LAS files (wells the bundled shape "
                   "library never held) instead of the bundled shapes")
    e.add_argument("--leave-one-out", action="store_true", help="train one model per family left out, then score")
    e.add_argument("--out", default="eval-styles", help="--leave-one-out: folder for the models (default ./eval-styles)")
    e.add_argument("--steps", type=whole_number(1), default=600, help="--leave-one-out: training steps per model")
    add_preset(e)
    e.add_argument("--init-model", "--init", dest="init_model", metavar="MODEL",
                   help="--leave-one-out: fine-tune each model from this one")
    e.add_argument("--effective-batch", "--batch", dest="effective_batch", type=whole_number(1), default=2, metavar="N")
    e.add_argument("--crop-along", "--crop", dest="crop_along", type=whole_number(0), default=512, metavar="PX")
    e.add_argument("--lr", type=positive_number, default=1e-3)
    e.add_argument("--stream-size", type=size_wxh, default=(2400, 480), metavar="WxH")
    add_device(e)
    e.add_argument("--overlays", metavar="DIR", type=Path,
                   help="draw the logs of each family's worst curve, worst log-scale curve and worst dotted curve "
                   "(truth and trace over the print) as DIR/FAMILY_worst_*.png")
    e.add_argument("--foreign", metavar="DIR", nargs="+", type=Path,
                   help="score folders of cases drawn by another renderer instead of our families: NAME.png with "
                   "NAME.calib.json and NAME.truth.las (../shared/data/foreign/plain, hard, colour)")
    e.add_argument("--cache", metavar="DIR", type=Path,
                   help="keep the network's maps of every picture read in DIR and trace them again from there on the "
                   "next run (core/evaluation/evidence_cache.py): the passes and the confidence measured in seconds")
    e.add_argument("--without", metavar="PASS[,PASS]", default="",
                   help="switch these passes of the rules off (core/digitize/rules/passes.py), to measure what each "
                   "buys")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=run)


def _check(args) -> tuple[str, ...]:
    from core.common.errors import UsageError
    from core.synth.styles import parse_families

    try:
        families = parse_families(args.families or "all")
    except ValueError as exc:
        raise UsageError(f"--families: {exc}") from None
    if args.count < 1:
        raise UsageError("--count must be at least 1")
    if args.width < 64 or args.height < 96:
        raise UsageError(f"--width/--height: a log needs at least 64 × 96 px, got {args.width} × {args.height}")
    if args.without:
        from core.digitize.rules.passes import check_names

        try:
            check_names(n.strip() for n in args.without.split(",") if n.strip())
        except ValueError as exc:
            raise UsageError(f"--without: {exc}") from None
    if args.foreign and args.leave_one_out:
        raise UsageError("--foreign scores one model on folders of cases: run it without --leave-one-out")
    if args.leave_one_out:
        if len(families) < 2:
            raise UsageError("--leave-one-out needs at least two families (one to leave out, one to train on)")
        if args.model or args.classical:
            raise UsageError("--leave-one-out trains its own models: give --init to start from one, not --model")
        if args.overlays:
            raise UsageError("--overlays draws the logs of one model's worst curves: run it without --leave-one-out")
        if args.steps < 1:
            raise UsageError("--steps must be at least 1")
    return families


def _families() -> str:
    from core.synth.styles import FAMILIES

    return "Families: " + ", ".join(FAMILIES) + ". Logs are fresh draws from a seed no training stream uses."


def run(args) -> int:
    from core.evaluation.styles import EVAL_SEED, evaluate_family

    families = _check(args)
    seed = EVAL_SEED if args.seed is None else args.seed
    if args.leave_one_out:
        return _leave_one_out(args, families, seed)
    model, trained_on, label = _load(args)
    params, cache = _params_and_cache(args)
    if args.foreign:
        return _foreign(args, model, label, params, cache)
    rows, scores = [], []
    for fam in families:
        s = evaluate_family(model, fam, args.count, args.width, args.height, seed, grid=not args.no_grid,
                            las_dir=args.las_dir, overlays=args.overlays, params=params, cache=cache)
        scores.append(s)
        held = trained_on is None or fam not in trained_on
        rows.append({**s.as_dict(), "held_out": held if trained_on is not None else None})
        if not args.json:
            tag = "" if trained_on is None else ("held out" if held else "trained on")
            print(_line(fam, tag, s), flush=True)
    # resistivity curves on log-decade tracks are listed on their own: a family's median hides them
    logs = [s.subset(s.family, lambda c: c["log_scale"]) for s in scores]
    log_rows = [{**ls.as_dict(), "held_out": r["held_out"]} for ls, r in zip(logs, rows) if ls.curves]
    summary = _pooled(rows)
    if args.json:
        print(json.dumps({"method": label, "trained_on": list(trained_on) if trained_on else None,
                          "families": rows, "log_scale_curves": log_rows, **summary}, indent=2))
    else:
        if log_rows:
            print("\nlog-scale curves alone (figures in decades as printed):")
            for ls, r in zip(logs, rows):
                if ls.curves:
                    tag = "" if r["held_out"] is None else ("held out" if r["held_out"] else "trained on")
                    print(_line(ls.family, tag, ls), flush=True)
        print(f"\n{label}: " + "; ".join(f"{k.replace('_', ' ')} {v:.3f}" for k, v in summary.items()
                                          if isinstance(v, float)))
        if trained_on is None and model is not None:
            print("(the model's metadata does not name its training styles: no family can be called held out)")
    return 0


def _params_and_cache(args):
    """The tracer's parameters (``--without``) and the evidence cache (``--cache``) of a run."""
    from core.digitize.trace.params import TraceParams

    off = frozenset(n.strip() for n in args.without.split(",") if n.strip())
    params = TraceParams(passes_off=off) if off else None
    cache = None
    if args.cache and not args.classical:
        from core.evaluation.evidence_cache import EvidenceCache
        from core.model.bundled import BUNDLED_MODEL

        cache = EvidenceCache(args.cache, args.model or BUNDLED_MODEL)
    return params, cache


def _line(name: str, tag: str, s) -> str:
    return (f"{name:<11} {tag:<11} median r {s.median_r:6.3f}  RMSE {s.median_rmse_pct:5.2f} % of range  "
            f"NULL {s.mean_null_pct:4.1f} %  wrong {s.wrong_pct:4.2f} % (low-confidence {s.low_pct:4.1f} %)  "
            f"yield {s.yield_pct:4.1f} %  calibration error {s.calibration_error:5.3f}  "
            f"excursions {s.excursions_per_1000:4.2f} per 1,000 samples  ({len(s.curves)} curves, {s.seconds:.0f} s)")


def _foreign(args, model, label: str, params=None, cache=None) -> int:
    """``--foreign DIR …``: each folder of cases scored as a family, with its log-scale and broken-line curves on
    their own lines (``core.evaluation.styles.evaluate_folder``)."""
    from core.evaluation.styles import evaluate_folder

    rows = []
    for folder in args.foreign:
        s = evaluate_folder(model, folder, grid=not args.no_grid, overlays=args.overlays, params=params, cache=cache)
        parts = [("", s), ("log-scale", s.subset("log", lambda c: c["log_scale"])),
                 ("broken", s.subset("broken", lambda c: c["style"] in (2, 3))),
                 ("dotted", s.subset("dotted", lambda c: c["style"] == 3))]
        row = {"folder": str(folder), **s.as_dict()}
        for what, sub in parts[1:]:
            if sub.curves:
                row[what] = sub.as_dict()
        rows.append(row)
        if not args.json:
            for what, sub in parts:
                if sub.curves:
                    print(_line(Path(folder).name if not what else f"  {what}", "", sub), flush=True)
    if args.json:
        print(json.dumps({"method": label, "foreign": rows}, indent=2))
    else:
        print(f"\n{label} (pictures drawn by another renderer: never trained on)")
    return 0


def _load(args):
    if args.classical:
        return None, None, "classical tracer"
    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import load_model, read_model_metadata

    path = Path(args.model) if args.model else BUNDLED_MODEL
    model, _ = load_model(path)
    summary = json.loads(read_model_metadata(path).get("summary", "{}") or "{}")
    styles = summary.get("styles")
    if summary.get("adapted_on"):  # adapted on a folder's scans: which families it has seen is unknown
        return model, None, f"model {path.name} (adapted from {summary.get('adapted_from')})"
    return model, (tuple(styles) if styles else None), f"model {path.name}"


def _pooled(rows: list[dict]) -> dict:
    """The worst family's figures, held-out and trained-on apart (a bar holds on every family, not on average)."""
    out = {"worst_family_median_r": float(min(r["median_r"] for r in rows)),
           "worst_family_median_rmse_pct": float(max(r["median_rmse_pct"] for r in rows))}
    for key, pick in (("held_out", True), ("trained_on", False)):
        sel = [r for r in rows if r.get("held_out") is pick]
        if sel:
            out[f"{key}_median_r_min"] = float(min(r["median_r"] for r in sel))
            out[f"{key}_median_rmse_pct_max"] = float(max(r["median_rmse_pct"] for r in sel))
    return out


def _leave_one_out(args, families: tuple[str, ...], seed: int) -> int:
    from core.engine.train import Trainer
    from core.evaluation.styles import leave_one_out

    from .train import run_training, train_config

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def train_fn(rest: tuple[str, ...], path: Path) -> Path:
        if not args.json:
            print(f"training without {', '.join(f for f in families if f not in rest)} "
                  f"({args.steps} steps on {', '.join(rest)}) -> {path}", flush=True)
        cfg = train_config(args, data=None, synthetic=True, styles=rest, stage="multiclass", precision="auto",
                           out=str(path), seed=seed % 100_000, val_count=2)
        code = run_training(Trainer(cfg), None, quiet=True)
        if code != 0 or not path.exists():
            raise RuntimeError(f"training without {families} failed (exit {code})")
        return path

    rows = []
    for row in leave_one_out(train_fn, families, out, args.count, args.width, args.height, seed):
        h, i = row.held_out, row.in_distribution
        rows.append({"left_out": row.family, "model": row.model_path,
                     "held_out": {"median_r": h.median_r, "median_rmse_pct": h.median_rmse_pct,
                                  "mean_null_pct": h.mean_null_pct, "curves": len(h.curves), "worst": h.worst()},
                     "in_distribution": {"median_r": i.median_r, "median_rmse_pct": i.median_rmse_pct,
                                         "mean_null_pct": i.mean_null_pct, "curves": len(i.curves)}})
        if not args.json:
            print(f"  left out {row.family:<11} held out: r {h.median_r:.3f}, RMSE {h.median_rmse_pct:.2f} %, "
                  f"NULL {h.mean_null_pct:.1f} %   trained on: r {i.median_r:.3f}, RMSE {i.median_rmse_pct:.2f} %, "
                  f"NULL {i.mean_null_pct:.1f} %", flush=True)
    if args.json:
        print(json.dumps({"leave_one_out": rows}, indent=2))
    return 0
