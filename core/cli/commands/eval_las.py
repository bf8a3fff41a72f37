"""``welltrace eval``: a digitised LAS against a truth LAS, curve by curve."""

from __future__ import annotations

import json

from core.common.errors import InputError

NAME = "eval"


def register(sub) -> None:
    e = sub.add_parser(NAME, help="compare a digitised LAS with a truth LAS")
    e.add_argument("pred")
    e.add_argument("truth")
    e.add_argument("--calib", help="calibration whose scale ranges define the %% figures")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=run)


def run(args) -> int:
    from core.digitize.output.metrics import compare_las, summarise
    from core.io.calibration import Calibration
    from core.io.las_io import read_las

    pred, truth = read_las(args.pred), read_las(args.truth)
    ranges = None
    if args.calib:
        cal = Calibration.load(args.calib)
        ranges = {c.mnemonic.upper(): c.value_range for c in cal.curves}
    from core.digitize.output.las import CONFIDENCE_SUFFIX

    metrics = compare_las(pred, truth, ranges)
    # a curve's confidence beside it (two digitised LAS compared: a repeat pass, another model) is no curve of
    # the log: scored, it was counted in the medians
    logged = {m.mnemonic.upper() for m in metrics}
    confidences = [m for m in metrics if m.mnemonic.upper().endswith(CONFIDENCE_SUFFIX)
                   and m.mnemonic.upper()[: -len(CONFIDENCE_SUFFIX)] in logged]
    metrics = [m for m in metrics if m not in confidences]
    if not metrics:
        raise InputError(args.pred, f"no curve in common with {args.truth}")
    if args.json:
        print(json.dumps({"curves": [m.as_dict() for m in metrics], "summary": summarise(metrics)},
                         indent=2, default=lambda v: None))
        return 0
    rows = [[m.mnemonic, f"{m.n}", f"{m.r:.4f}", f"{m.r2:.3f}", f"{m.mae:.4g}", f"{m.rmse:.4g}", f"{m.rmse_pct:.2f}",
             f"{m.within_2pct:.1%}", f"{m.null_fraction:.1%}", f"{m.best_offset:+d}"] for m in metrics]
    head = ["curve", "n", "r", "R²", "MAE", "RMSE", "RMSE%", "≤2%", "NULL", "offset"]
    # each column as wide as its widest entry, one space apart at least: a long name or a wide figure ran into
    # the next column ("MINID_CONF    534 -0.0122-153.928")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print(" ".join(f"{v:<{w}}" if i == 0 else f"{v:>{w}}" for i, (v, w) in enumerate(zip(r, widths))).rstrip())
    s = summarise(metrics)
    print(f"median r {s['median_r']:.4f}, median RMSE {s['median_rmse_pct']:.2f} % of range")
    if confidences:
        print(f"not scored: {' '.join(m.mnemonic for m in confidences)} (each curve's confidence, no curve of the "
              "log)")
    return 0
