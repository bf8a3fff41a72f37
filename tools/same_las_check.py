"""The same LAS under an imperceptible change (issue #60): KGS read three ways, each against the bf16 reading.

    python tools/same_las_check.py [--scan ../shared/data/scans/kgs_273101_bhc_sonic.tif] [--whole] [--device cpu]

Reads the scan (default: its 650-1,170 ft, rows 6,500-11,800; --whole: all of it) with tests/data's calibration with
the network's evidence in bf16, in fp32, in bf16 with the scan shifted one pixel down and right (a white row on
top and a white column on the left, the picks and the tracks shifted with it), and in bf16 with the scan shifted
half a pixel down and right (resampled, linear interpolation, white beyond the page; the picks and the tracks
shifted by 0.5): a rescan moves the page by a fraction of a pixel, and the network reads a log a whole pixel lower
in the same windows (``evidence_band``), so the half pixel is the sensitivity left. For each curve, of the samples both
readings write at or above the low-confidence line, the share within 1 % of the scale; and over 700-1,129 ft, where
d36c861 swapped the sonic and the tension, DT's swing (P10-P90) and the spread of LTEN's confident samples
(docs/accuracy.md; ``tests/core/digitize/rules/test_same_las.py`` holds a small print to the same in the suite). On
CUDA (``--device cuda``) the GPU's arithmetic against itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KGS_WINDOW = (6500, 11800)  # rows of the KGS scan: 650-1,170 ft
CALIB = ROOT / "tests" / "data" / "kgs_273101_bhc_sonic.calib.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scan", default=str(ROOT.parent / "shared" / "data" / "scans" / "kgs_273101_bhc_sonic.tif"))
    ap.add_argument("--whole", action="store_true", help="the whole scan, not its 650-1,170 ft")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    args = ap.parse_args()

    import numpy as np
    import torch

    from core.common.errors import InputError
    from core.digitize.job.pipeline import digitize
    from core.digitize.rules.confidence import LOW_CONFIDENCE
    from core.evaluation.agreement import confident_agreement
    from core.io.calibration import Calibration
    from core.io.scan import load_scan
    from core.model import precision as prec
    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import load_model

    try:
        image = load_scan(args.scan).image
    except InputError as exc:
        print(f"same_las_check: {exc}", file=sys.stderr)
        return 2
    model, _ = load_model(BUNDLED_MODEL)
    model = model.to(args.device)

    def shifted(shift: float) -> np.ndarray:
        """The scan moved ``shift`` pixels down and right, white where the page was not."""
        if shift == int(shift):
            pad = ((int(shift), 0), (int(shift), 0)) + ((0, 0),) * (image.ndim - 2)
            return np.pad(image, pad, constant_values=255) if shift else image
        import cv2

        h, w = image.shape[:2]
        grow = int(np.ceil(shift))
        move = np.float32([[1, 0, shift], [0, 1, shift]])
        return cv2.warpAffine(image, move, (w + grow, h + grow), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=(255,) * 4)

    def window(shift: float):
        data = json.loads(CALIB.read_text())
        img = shifted(shift)
        for c in data["curves"]:
            c["track"] = [t + shift for t in c["track"]]
        whole = int(shift)  # the window's rows move by the whole pixels; the fraction stays in the picture
        a, b = (0, img.shape[0]) if args.whole else (KGS_WINDOW[0] + whole, KGS_WINDOW[1] + whole)
        data["depth_picks"] = [[px + shift - a, d] for px, d in data["depth_picks"]]
        return img[a:b], Calibration.from_dict(data)

    reads = {}
    for label, shift, mode in (("bf16", 0, "bf16"), ("fp32", 0, "fp32"), ("shifted", 1, "bf16"),
                               ("half", 0.5, "bf16")):
        img, calib = window(shift)
        t = time.perf_counter()
        with torch.no_grad():
            reads[label] = digitize(img, calib, model=model, precision=prec.resolve(mode, args.device),
                                    device=args.device)
        print(f"{label}: read in {time.perf_counter() - t:.1f} s", flush=True)
    base = reads["bf16"]
    names = [c.mnemonic for c in calib.curves]
    print("against the bf16 reading: share of the samples both call confident within 1 % of the scale (samples)")
    print("reading  " + "  ".join(f"{n:>16}" for n in names))
    for other in ("fp32", "shifted", "half"):
        res, cells = reads[other], []
        for spec in calib.curves:
            n = spec.mnemonic
            count, share = confident_agreement(base.depth, base.values[n], base.confidence[n], res.depth,
                                               res.values[n], res.confidence[n], spec.scale)
            cells.append(f"{100 * share:6.2f} % ({count:5d})" if share is not None else "none confident")
        print(f"{other:<8} " + "  ".join(f"{c:>16}" for c in cells))
    for label, res in reads.items():
        s = (res.depth >= 700) & (res.depth <= 1129)
        dt, lten, sure = res.values["DT"][s], res.values["LTEN"][s], res.confidence["LTEN"][s] >= LOW_CONFIDENCE
        sure &= np.isfinite(lten)
        spread = np.ptp(np.percentile(lten[sure], [10, 90])) if sure.any() else float("nan")
        print(f"{label}: 700-1,129 ft: DT P10-P90 {np.nanpercentile(dt, 10):.1f}-{np.nanpercentile(dt, 90):.1f} "
              f"us/ft; LTEN confident on {100 * sure.mean():.0f} % of the samples, P10-P90 spread {spread:.0f} lb")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
