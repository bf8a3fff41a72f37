"""The tracer alone, before and after issue #64: d36c861's NumPy tracers against the compiled ones, on one scan.

The scan is read once (its pages and the network's maps: ``pipeline.read_sections``); then, rounds interleaved,
every curve is traced from those maps with the NumPy path search and group tracer of d36c861
(``tests/core/digitize/trace/reference_tracer.py``) and with the compiled ones (``core/digitize/trace/path_kernels.py``,
``group_kernels.py``).
Printed: the seconds (wall and CPU) in the path search and the group tracer, their set-up included, the seconds of
the whole trace stage (the rules around them too), and whether every LAS value came out the same.

    python3 tools/tracer_ab.py ../shared/data/scans/kgs_273101_bhc_sonic.tif \\
        --calib tests/data/kgs_273101_bhc_sonic.calib.json --rounds 3

Run it on a quiet machine, one thread (``OMP_NUM_THREADS=1``): the tracer is single-threaded.
"""

from __future__ import annotations

import argparse
import collections
import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    import torch

    from core.digitize.job import pipeline
    from core.digitize.rules import curve
    from core.digitize.trace import group
    from core.io.calibration import Calibration
    from core.io.scan import load_scan
    from core.model import precision as prec
    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import load_model
    from tests.core.digitize.trace import reference_tracer as reference

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scan")
    ap.add_argument("--calib", required=True)
    ap.add_argument("--model", default=str(BUNDLED_MODEL))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    scan, calib = load_scan(args.scan), Calibration.load(args.calib)
    model, info = load_model(args.model)
    precision = prec.for_inference("model", info["precision"], "cpu")
    with torch.no_grad():
        pages = pipeline.read_sections(scan.image, calib, source=args.scan, model=model, precision=precision)
    compiled = (curve.viterbi_path, group.trace_group)
    spent: dict = collections.defaultdict(float)

    def timed(f):
        @functools.wraps(f)
        def run(*a, **k):
            t, c = time.perf_counter(), time.process_time()
            try:
                return f(*a, **k)
            finally:
                spent["wall"] += time.perf_counter() - t
                spent["cpu"] += time.process_time() - c
        return run

    rows: dict = collections.defaultdict(list)
    values: dict = {}
    for _ in range(args.rounds):
        for who, (path, joint) in (("d36c861", (reference.viterbi_path, reference.trace_group)), ("compiled", compiled)):
            curve.viterbi_path, group.trace_group = timed(path), timed(joint)
            spent.clear()
            t, c = time.perf_counter(), time.process_time()
            parts = pipeline.digitize_sections(scan.image, calib, source=args.scan, rgb=scan.rgb, model=model,
                                               precision=precision, pages=pages)
            rows[who].append((spent["wall"], spent["cpu"], time.perf_counter() - t, time.process_time() - c))
            values[who] = [res.values for _, _, res in parts]
    curve.viterbi_path, group.trace_group = compiled
    same = all(np.array_equal(a[k], b[k], equal_nan=True)
               for a, b in zip(values["d36c861"], values["compiled"]) for k in a)
    print(f"scan {Path(args.scan).name}: LAS values {'the same' if same else 'DIFFERENT'} with either tracer")
    for who, r in rows.items():
        print(f"{who:9s} tracer wall {min(x[0] for x in r):6.2f} s cpu {min(x[1] for x in r):6.2f} s | "
              f"trace stage wall {min(x[2] for x in r):6.2f} s cpu {min(x[3] for x in r):6.2f} s (best of {len(r)})")
    best = {who: [min(x[i] for x in r) for i in range(4)] for who, r in rows.items()}
    ratio = [best["d36c861"][i] / max(best["compiled"][i], 1e-9) for i in range(4)]
    print("ratio: tracer {:.1f}x wall, {:.1f}x cpu; trace stage {:.1f}x wall, {:.1f}x cpu".format(*ratio))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
