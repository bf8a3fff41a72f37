"""``welltrace fit-confidence``: fit the calibrated confidence for a model trained or adapted here, kept beside it."""

from __future__ import annotations

import json
import sys

from ..options import whole_number

NAME = "fit-confidence"


def register(sub) -> None:
    f = sub.add_parser(NAME, help="fit the calibrated confidence (CONF) for a model, kept beside its file",
                       description="CONF is a measured probability only for the network its calibrator was fitted "
                       "on: the bundled one ships with its own. This reads the fit's synthetic logs (4 families, "
                       "seed 515151) with MODEL, fits the calibrator on what it wrote and keeps it beside the model "
                       "file (stage.safetensors -> stage.confidence.json), where every read by that model finds it "
                       "while the model file is unchanged. Needs scikit-learn (the 'fit' extra).")
    f.add_argument("--model", required=True, help="the model file (.safetensors; never written)")
    f.add_argument("--cache", metavar="DIR", help="keep the network's maps of the fit's logs here, and re-trace "
                   "those already kept (a second fit of the same model takes about a minute, not ~10)")
    f.add_argument("--count", type=whole_number(1), default=None,
                   help="logs of each family (default 20: the shipped calibrator's; fewer fit a rougher one)")
    f.add_argument("--out", help="write the calibrator here instead of beside the model (reads do not find it there)")
    f.add_argument("--json", action="store_true", help="print the result as JSON")
    f.set_defaults(func=run)


def run(args) -> int:
    from core.evaluation.confidence_fit import FIT_COUNT
    from core.evaluation.network_calibrator import CalibratorFit, fit_network_calibrator

    count = FIT_COUNT if args.count is None else args.count
    done = None
    for ev in fit_network_calibrator(args.model, args.out, args.cache, count):
        if isinstance(ev, CalibratorFit):
            done = ev
        elif not args.json:
            print(f"{ev.done:>3}/{ev.total} {ev.log:<16} {ev.seconds:5.1f} s" + ("  (maps cached)" if ev.cached else ""),
                  flush=True)
    if args.json:
        print(json.dumps(vars(done), indent=2))
        return 0
    print(f"fitted on {done.samples} written samples of {done.logs} logs ({100 * done.right:.1f} % right; "
          f"{done.cached_logs} from cached maps): read {done.read_s:.0f} s, fit {done.fit_s:.0f} s")
    print(f"wrote {done.out}: the calibrator of {done.network} ({done.digest})")
    if done.beside:
        print("reads by this model now write CONF calibrated on it (while the model file is unchanged)")
    else:
        print("not beside the model: reads by it do not use it (copy it beside the model as "
              f"{done.network.rsplit('.', 1)[0]}.confidence.json to use it)", file=sys.stderr)
    return 0
