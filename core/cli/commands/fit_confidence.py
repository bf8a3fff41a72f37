"""``welltrace fit-confidence``: fit the calibrated confidence for a model trained or adapted here, kept beside it;
and the same fit at the end of ``welltrace train`` and ``adapt`` (:func:`fit_after_run`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..options import add_device, whole_number

NAME = "fit-confidence"


def register(sub) -> None:
    f = sub.add_parser(NAME, help="fit the calibrated confidence (CONF) for a model, kept beside its file",
                       description="CONF is a measured probability only for the network its calibrator was fitted "
                       "on: the bundled one ships with its own. This reads the fit's synthetic logs (5 families, "
                       "seed 515151) with MODEL, fits the calibrator on what it wrote and keeps it beside the model "
                       "file (stage.safetensors -> stage.confidence.json), where every read by that model finds it "
                       "while the model file is unchanged. Needs scikit-learn (the 'fit' extra).")
    f.add_argument("--model", required=True, help="the model file (.safetensors; never written)")
    f.add_argument("--cache", metavar="DIR", help="keep the network's maps of the fit's logs here (and leave them), "
                   "re-tracing those already kept: a second fit of the same model takes about a minute, not ~5. "
                   "Without it they are kept in the user's cache folder until the fit completes, so a fit cut "
                   "short resumes where it stopped")
    f.add_argument("--count", type=whole_number(1), default=None,
                   help="logs of each family (default 20: the shipped calibrator's; fewer fit a rougher one)")
    f.add_argument("--out", help="write the calibrator here instead of beside the model (reads do not find it there)")
    f.add_argument("--json", action="store_true", help="print the result as JSON")
    add_device(f, help="where the network reads the fit's logs (auto: a CUDA GPU when there is one)")
    f.set_defaults(func=run)


def run(args) -> int:
    from core.evaluation.confidence_fit import FIT_COUNT
    from core.evaluation.network_calibrator import CalibratorFit, fit_network_calibrator

    count = FIT_COUNT if args.count is None else args.count
    done = None
    for ev in fit_network_calibrator(args.model, args.out, args.cache, count, device=args.device):
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


# --- the fit at the end of ``welltrace train`` and ``welltrace adapt`` ----------------------------------------------

FIT_FLAG_HELP = ("do not fit the new model's calibrated confidence (CONF) after the run (by default it is fitted, "
                 "where scikit-learn is installed: a few minutes; welltrace fit-confidence --model OUT does it later)")


def add_fit_flag(parser) -> None:
    parser.add_argument("--no-fit-confidence", dest="fit_confidence", action="store_false", help=FIT_FLAG_HELP)


def fit_planned(wanted: bool, out: str | Path) -> bool:
    """At a run's start: whether the model it writes gets its calibrator after it. Where scikit-learn is missing it
    says so once, now, with what to install (not an error: the model is written either way)."""
    from core.evaluation.network_calibrator import FIT_EXTRA, scikit_learn_missing

    if not wanted:
        return False
    if scikit_learn_missing():
        print(f"note: scikit-learn is not installed, so the confidence (CONF) of the model this run writes will not "
              f"be fitted after it: {FIT_EXTRA}, then welltrace fit-confidence --model {out}", file=sys.stderr)
        return False
    return True


def fit_after_run(model: str | Path, out=None, device: str = "cpu") -> tuple[int, object | None]:
    """Fit the calibrator of the model a run just wrote, beside it (the default of ``train`` and ``adapt``): a line to
    say what it does and how long it takes, a progress bar on a terminal and a line per family, then what it wrote.
    Ctrl-C keeps the model and writes no calibrator (the maps read so far stay in the user's cache: a later
    ``welltrace fit-confidence --model M`` resumes). Returns the exit status (130 after Ctrl-C; a fit that fails is a
    warning: the run's model stands) and the :class:`~core.evaluation.network_calibrator.CalibratorFit`. ``device``:
    the run's (``--device``), where the network reads the fit's logs."""
    from core.common.errors import InputError
    from core.common.progress import progress_bar
    from core.engine.config import pick_device
    from core.evaluation import network_calibrator as nc

    model, out = Path(model), out or sys.stdout
    seconds, kept = nc.fit_estimate_s(model)
    resumed = f"; {kept} logs read by an earlier fit, cut short: it resumes there" if kept else ""
    try:
        on_gpu = pick_device(device).type == "cuda"
    except InputError:
        on_gpu = False  # the run's own device check named it already; the fit then refuses with it below
    took = nc.fit_time_words(seconds, on_gpu)
    print(f"fitting the confidence (CONF) for {model.name}: the fit's synthetic logs read with it, "
          f"{took}{resumed} (Ctrl-C stops it and keeps the model; --no-fit-confidence: no fit "
          "after a run)", file=out, flush=True)
    done, family, family_s, read = None, None, 0.0, 0
    try:
        with progress_bar(0, "confidence", unit="log") as bar:
            for ev in nc.fit_network_calibrator(model, device=device):
                if isinstance(ev, nc.CalibratorFit):
                    done = ev
                    continue
                read = ev.done
                if bar.total != ev.total:
                    bar.total = ev.total
                bar.update(1)
                if family not in (None, ev.family):  # above the bar, where a terminal shows one
                    bar.write(f"confidence: {family} read ({family_s:.0f} s), {ev.done - 1}/{ev.total} logs", file=out)
                    family_s = 0.0
                family, family_s = ev.family, family_s + ev.seconds
    except KeyboardInterrupt:
        print(f"welltrace: interrupted while fitting the confidence: the model {model} is kept, no calibrator was "
              f"written; welltrace fit-confidence --model {model} fits it"
              + (f" (the {read} logs read are kept: it resumes there)" if read else ""), file=sys.stderr)
        return 130, None
    except InputError as exc:
        print(f"warning: the confidence of {model.name} was not fitted: {exc.one_line()}", file=sys.stderr)
        return 0, None
    print(f"confidence: {family} read ({family_s:.0f} s), {done.logs}/{done.logs} logs; fitted on {done.samples} "
          f"samples ({100 * done.right:.1f} % right) in {done.fit_s:.0f} s", file=out)
    print(f"wrote {done.out}: reads by {done.network} write CONF calibrated on it (while the model file is unchanged)",
          file=out, flush=True)
    return 0, done
