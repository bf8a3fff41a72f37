"""Refit the calibrated confidence shipped with the project (resources/models/confidence.json).

The maintainers' tool: a model trained or adapted by a user gets its own calibrator with
``welltrace fit-confidence --model M`` (the same logs and fit, core/evaluation/network_calibrator.py:
fit_network_calibrator; written beside the model, where its reads find it). This one writes the shipped file by
default and has the maintainers' extra modes: each family measured with a calibrator fitted on the others, the
decision caps alone, a weight's shift.

    python tools/fit_confidence.py [--model resources/models/demo.safetensors] [--cache DIR] [--out PATH] [--caps-only]
                                   [--shift FEATURE]

Digitises fresh logs of the synthetic families the bundled network never trained on (core/evaluation/confidence_fit.py:
FIT_FAMILIES, FIT_SEED, FIT_COUNT logs each), fits scikit-learn's logistic regression (additive: the slope through a spline basis,
confidence_fit.SPLINE_FEATURES) and isotonic map on every written sample's signals, prints how the fit carries to
each family when fitted on the others alone (confidently wrong, yield, expected calibration error), and writes the
JSON. --cache keeps the network's maps (core/evaluation/evidence_cache.py):
a second run re-traces them in seconds. --caps-only keeps the shipped regression and isotonic map and measures the
decision flags' caps alone (a decision flag added since the fit enters with no weight). --shift FEATURE keeps the
shipped weights but one 0/1 feature's, shifted by the logits that gain on every family (confidence_fit.shift_gains;
none where no shift does). Check the result on prints it
never saw:
    welltrace eval-styles --foreign ../shared/data/foreign/plain ../shared/data/foreign/hard ../shared/data/foreign/colour
and on the held-out families at the evaluation's seed (docs/accuracy.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from core.digitize.rules.confidence import LOW_CONFIDENCE
    from core.digitize.rules.confidence_model import BUNDLED_CONFIDENCE
    from core.model.bundled import BUNDLED_MODEL

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=str(BUNDLED_MODEL), help="the network whose maps it is fitted on")
    ap.add_argument("--cache", help="a folder to keep the network's maps in between runs")
    ap.add_argument("--out", default=str(BUNDLED_CONFIDENCE))
    ap.add_argument("--caps-only", action="store_true",
                    help="keep the shipped regression and isotonic map; measure the decision flags' caps alone")
    ap.add_argument("--shift", metavar="FEATURE",
                    help="keep the shipped weights; move this 0/1 feature's by the logits that gain on every family")
    args = ap.parse_args()

    import numpy as np

    from core.digitize.rules.confidence_model import ConfidenceModel
    from core.evaluation.confidence_fit import fit_for, leave_one_family_out, network_samples, with_caps
    from core.evaluation.styles import confidence_bins, expected_calibration_error

    samples = network_samples(args.model, args.cache, print)
    print(f"{samples.right.size} written samples, {100 * samples.right.mean():.1f} % right")
    if args.shift:
        return _shift(args, samples)
    if args.caps_only:
        if not BUNDLED_CONFIDENCE.is_file():
            print(f"fit_confidence: no shipped calibrator at {BUNDLED_CONFIDENCE} to keep: refit it whole",
                  file=sys.stderr)
            return 2
        try:
            m = with_caps(ConfidenceModel.load(BUNDLED_CONFIDENCE), samples)
        except ValueError as exc:
            print(f"fit_confidence: {BUNDLED_CONFIDENCE}: {exc}", file=sys.stderr)
            return 2
        m.save(args.out)
        print(f"wrote {args.out}: the shipped fit, decision caps " +
              ", ".join(f"{k} {v:.3f} ({m.about['decision_flagged'][k]} flagged)" for k, v in m.caps.items()))
        return 0
    print(f"each family with a calibrator fitted on the others (of its written samples; confident at {LOW_CONFIDENCE}): "
          "confidently wrong, confident and right, expected calibration error")
    for group, p in leave_one_family_out(samples).items():
        y = samples.right[samples.group == group]
        sure = p >= LOW_CONFIDENCE
        print(f"  {group:<12} {100 * np.mean(sure & ~y):5.2f} %  {100 * np.mean(sure & y):5.1f} %  "
              f"{expected_calibration_error(confidence_bins(p, y)):.3f}")
    m = fit_for(args.model, samples)
    m.save(args.out)
    print(f"wrote {args.out}: {len(m.features)} features, {m.iso_x.size} isotonic knots")
    return 0


def _shift(args, samples) -> int:
    """--shift: the Brier gain of each shift by family, and the shipped model with the chosen one written."""
    from core.digitize.rules.confidence_model import BUNDLED_CONFIDENCE, ConfidenceModel
    from core.evaluation.confidence_fit import chosen_shift, shift_gains, with_shift

    try:
        shipped = ConfidenceModel.load(BUNDLED_CONFIDENCE)
        if shipped.features != samples.features or args.shift not in shipped.features:
            raise ValueError(f"it reads {shipped.features}, the tracer gives {samples.features}; "
                             f"--shift names one of them: refit it whole")
    except (OSError, ValueError) as exc:
        print(f"fit_confidence: {BUNDLED_CONFIDENCE}: {exc}", file=sys.stderr)
        return 2
    gains = shift_gains(shipped, samples, args.shift)
    print(f"{args.shift}: the Brier score's gain by family (per million fit samples) for each shift of its weight")
    for shift, by in gains.items():
        print(f"  {shift:+5.2f}  " + "  ".join(f"{g} {v:+7.1f}" for g, v in by.items()) + f"  = {sum(by.values()):+7.1f}")
    best = chosen_shift(gains)
    if best is None:
        print(f"no shift of {args.shift} gains on every family: {args.out} not written")
        return 0
    with_shift(shipped, args.shift, best).save(args.out)
    print(f"wrote {args.out}: the shipped fit, {args.shift} shifted {best:+.2f} logits")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
