"""Two readings of one scan compared sample by sample (issue #60: the same LAS on the CPU and on CUDA).

    python tools/compare_las.py A.las B.las --calib SCAN.calib.json [--least 0.99] [--from 700 --to 1129]

For each calibrated curve: of the depth samples both readings write with confidence at or above the low-confidence
line (``NAME_CONF`` >= ``confidence.LOW_CONFIDENCE``), the share whose values agree within 1 % of the curve's printed
scale, and the two readings' correlation over --from/--to (a swap of two curves reads near 0 there). Exits 1 when a
curve with confident samples in both agrees on fewer than --least of them, 2 on a file it cannot read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="the first reading's LAS (e.g. the CPU's)")
    ap.add_argument("b", help="the second reading's LAS (e.g. CUDA's)")
    ap.add_argument("--calib", required=True, help="the calibration both were read with (the curves' scales)")
    ap.add_argument("--least", type=float, default=0.99, help="the share of confident samples that must agree")
    ap.add_argument("--from", dest="top", type=float, default=None, help="depth range for the correlation")
    ap.add_argument("--to", dest="bottom", type=float, default=None)
    args = ap.parse_args()

    import numpy as np

    from core.common.errors import InputError
    from core.evaluation.agreement import confident_agreement
    from core.io.calibration import Calibration
    from core.io.las_io import read_las

    try:
        calib = Calibration.load(args.calib)
        a, b = read_las(args.a), read_las(args.b)
    except (InputError, OSError, ValueError) as exc:
        print(f"compare_las: {exc}", file=sys.stderr)
        return 2
    failed = False
    for spec in calib.curves:
        n = spec.mnemonic
        try:
            va, ca = a.curve(n).values, a.curve(n + "_CONF").values
            vb_own, cb_own = b.curve(n).values, b.curve(n + "_CONF").values
        except KeyError as exc:
            print(f"{n}: not in both files ({exc})")
            failed = True
            continue
        count, share = confident_agreement(a.depth, va, ca, b.depth, vb_own, cb_own, spec.scale)
        vb = np.interp(a.depth, b.depth, vb_own, left=np.nan, right=np.nan)
        line = f"{n:<8} confident in both {count:6d}"
        if share is not None:
            line += f"  within 1 % of the scale {100 * share:6.2f} %"
            failed |= bool(share < args.least)
        if args.top is not None or args.bottom is not None:
            lo = -np.inf if args.top is None else args.top
            hi = np.inf if args.bottom is None else args.bottom
            s = (a.depth >= lo) & (a.depth <= hi) & np.isfinite(va) & np.isfinite(vb)
            r = np.corrcoef(va[s], vb[s])[0, 1] if s.sum() > 2 and np.ptp(va[s]) > 0 and np.ptp(vb[s]) > 0 else np.nan
            line += f"  r over {lo:g}-{hi:g}: {r:.4f} ({int(s.sum())} samples written in both)"
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
