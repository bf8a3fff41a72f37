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
