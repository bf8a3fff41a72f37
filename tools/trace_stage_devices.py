"""Where a CUDA reading's wall goes beyond the network (issue #64, docs/benchmarks.md "On a GPU"), in one process:

1. `import torch`, and CUDA's start on a thread beside the pipeline's imports, the scan's and the model's load;
2. the trace stage traced again from the maps each device read (`digitize(..., evidence=...)`), twice each, by
   default and with one BLAS/OpenMP thread and with one PyTorch thread: whether the stage depends on whose maps it
   traces or on the threads beside it, apart from its first run in a process (numba's start, its cached kernels).

(threadpoolctl, which scikit-learn brings, limits the BLAS threads.)

    python3 tools/trace_stage_devices.py [--scan ../shared/data/scans/kgs_273101_bhc_sonic.tif] [--devices cuda,cpu]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scan", default=str(ROOT.parent / "shared" / "data" / "scans" / "kgs_273101_bhc_sonic.tif"))
    ap.add_argument("--calib", default=str(ROOT / "tests" / "data" / "kgs_273101_bhc_sonic.calib.json"))
    ap.add_argument("--devices", default="cuda,cpu")
    args = ap.parse_args()

    t0 = time.perf_counter()
    import torch

    print(f"import torch {time.perf_counter() - t0:.2f} s", flush=True)
    sys.path.insert(0, str(ROOT))
    devices = args.devices.split(",")
    started: dict[str, float] = {}

    def start_cuda() -> None:
        a = time.perf_counter()
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        started["cuda"] = time.perf_counter() - a

    thread = threading.Thread(target=start_cuda) if "cuda" in devices else None
    if thread:
        thread.start()
    a = time.perf_counter()
    from threadpoolctl import threadpool_limits

    from core.digitize.job import pipeline
    from core.io.calibration import Calibration
    from core.io.scan import load_scan
    from core.model import precision as prec
    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import load_model

    img = load_scan(args.scan).image
    calib = Calibration.load(args.calib)
    model, info = load_model(BUNDLED_MODEL)
    b = time.perf_counter()
    if thread:
        thread.join()
        print(f"CUDA's start on a thread: {started['cuda']:.2f} s; beside it the imports, scan and model "
              f"{b - a:.2f} s; both done {time.perf_counter() - a:.2f} s", flush=True)
    threads = torch.get_num_threads()
    for dev in devices:
        kept: list = []
        with torch.no_grad():
            r = pipeline.digitize(img, calib, model=model.to(dev), device=dev, keep_evidence=kept,
                                  precision=prec.for_inference("model", info["precision"], dev))
        print(f"{dev}: first read: " + ", ".join(f"{k} {v:.2f} s" for k, v in r.timings.items()), flush=True)

        def traced(label: str) -> None:
            t = pipeline.digitize(img, calib, evidence=kept[0]).timings  # noqa: B023 - called in this loop only
            print(f"{dev} maps, {label}: trace {t['trace_s']:.2f} s (grid {t['grid_s']:.2f} s)", flush=True)

        for _ in range(2):
            traced("default")
            with threadpool_limits(1):
                traced("one BLAS/OpenMP thread")
            torch.set_num_threads(1)
            traced("one PyTorch thread")
            torch.set_num_threads(threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
