"""Refit the calibrated confidence shipped with the project (resources/models/confidence.json).

    python tools/fit_confidence.py [--model resources/models/demo.safetensors] [--cache DIR] [--out PATH] [--caps-only]

Digitises fresh logs of the synthetic families the bundled network never trained on (core/evaluation/confidence_fit.py:
FIT_FAMILIES, FIT_SEED, FIT_COUNT logs each), fits scikit-learn's logistic regression and isotonic map on every written
sample's signals, prints how the fit carries to each family when fitted on the others alone (confidently wrong, yield,
expected calibration error), and writes the JSON. --cache keeps the network's maps (core/evaluation/evidence_cache.py):
a second run re-traces them in seconds. --caps-only keeps the shipped regression and isotonic map and measures the
decision flags' caps alone (a decision flag added since the fit enters with no weight). Check the result on prints it
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
    args = ap.parse_args()

    import numpy as np

    from core.digitize.rules.confidence_model import ConfidenceModel
    from core.evaluation.confidence_fit import fit_for, leave_one_family_out, network_samples, with_caps
    from core.evaluation.styles import confidence_bins, expected_calibration_error

    samples = network_samples(args.model, args.cache, print)
    print(f"{samples.right.size} written samples, {100 * samples.right.mean():.1f} % right")
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


if __name__ == "__main__":
    raise SystemExit(main())
