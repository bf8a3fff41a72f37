"""A scan's evidence read one window at a time (every intra-op thread on it) and two windows at once (half the
threads each), alternating in one process: seconds, CPU, the reading's peak resident rise, and whether the maps
are the same bit for bit (issue #64, eighth round).

The scan is read as ``digitize`` reads it (``pipeline.read_page``: its band across, its log body, the model's own
precision), once first to warm the kernels and the plan's fit; then each round reads the evidence both ways
(``evidence/network.py: predict_windows`` with ``at_once`` 1 and 2) and compares every class's codes and the mask.

    python3 tools/windows_at_once.py $DATA/scans/kgs_273101_bhc_sonic.tif \\
        --calib tests/data/kgs_273101_bhc_sonic.calib.json --rounds 3

On a shared machine the seconds are the load's: compare the two ways only within one run.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "resources" / "models" / "demo.safetensors"


def _cpu() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scan")
    ap.add_argument("--calib", required=True)
    ap.add_argument("--model", default=str(DEFAULT_MODEL))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's intra-op threads (default 2)")
    args = ap.parse_args(argv)

    import torch

    from core.common.sysmem import proc_status
    from core.digitize.evidence.memory_plan import plan_memory
    from core.digitize.evidence.network import predict_windows
    from core.digitize.job.pipeline import read_page
    from core.digitize.page.frame import to_canonical
    from core.engine.memory import reset_peaks
    from core.io.calibration import Calibration
    from core.io.scan import load_scan
    from core.model import precision as prec
    from core.model.model_io import load_model
    from core.model.runtime import torch_runner

    torch.set_num_threads(args.threads)
    model, info = load_model(args.model)
    precision = prec.for_inference("model", info["precision"], "cpu")
    scan, calib = load_scan(args.scan), Calibration.load(args.calib)
    with torch.no_grad():
        page = read_page(scan.image, calib, model=model, precision=precision)  # warm: kernels, the plan's fit
    canon = to_canonical(scan.image, calib.depth_axis)
    rows, body = tuple(page.memory["rows"]), tuple(page.memory["columns"])  # what ``digitize`` read
    plan = plan_memory(model.cfg, canon.shape, precision.mode, "cpu", across=rows[1] - rows[0])
    print(f"{Path(args.scan).name}: band {rows}, body {body}, window {plan.window.length} px, plan at once "
          f"{plan.at_once}, predicted {plan.predicted_peak / 2**30:.2f} GiB (one window "
          f"{plan_memory(model.cfg, canon.shape, precision.mode, 'cpu', across=rows[1] - rows[0], at_once=1).predicted_peak / 2**30:.2f}); "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    runner = torch_runner(model, precision, "cpu")
    first = None
    for r in range(args.rounds):
        for at_once in (1, 2):
            reset_peaks(torch.device("cpu"), release_heap=True)
            base = proc_status().get("VmRSS", 0)
            u0, s0 = _cpu()
            t0 = time.perf_counter()
            with torch.no_grad():
                ev = predict_windows(model, canon, precision, "cpu", plan.window, None, runner, rows, body, at_once)
            wall = time.perf_counter() - t0
            u1, s1 = _cpu()
            rise = proc_status().get("VmHWM", 0) - base
            got = [ev.mask] + [ev.maps[k].codes for k in sorted(ev.maps)]
            if first is None:
                first = got
            same = all(np.array_equal(a, b) for a, b in zip(first, got))
            print(f"round {r + 1}  at once {at_once}: {wall:6.2f} s wall, {u1 - u0:6.2f} user, {s1 - s0:5.2f} sys, "
                  f"rise {rise / 2**20:6.0f} MiB, {ev.windows} windows, maps same as the first: {same}; "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
            del ev, got
    return 0


if __name__ == "__main__":
    sys.exit(main())
