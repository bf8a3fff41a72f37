"""``welltrace bench-digitize SCAN --calib C``: the time of each stage of digitising one scan, on this machine, and
the scans an hour they imply.

Stages: read (the scan file), evidence (the network's maps, or the classical ink map), grid (finding the printed
grid), trace (the Viterbi paths and the values on the depth grid), write (the LAS files). ``--compare`` runs the
reference path too (``digitize --reference``: every row, PyTorch's default layout) in the same process and
prints both, with the LAS values of the two compared per curve: the before/after table of one run.

Scans an hour: one after the other, 3,600 s over the total; streamed (``digitize FOLDER``: a worker reads the
next scan while it traces this one, ``core/digitize/job/stream.py``), 3,600 s over the longer of the two halves,
reading (read, grid, evidence) and tracing (trace, write). The streamed figure is the bound the overlap allows:
on a CPU the two halves share its cores, on a GPU the network's half runs on the device.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from core.cli.options import add_device
from core.common.errors import InputError

NAME = "bench-digitize"

STAGES = ("read", "evidence", "grid", "trace", "write")
READING = ("read", "grid", "evidence")  # a streamed worker's reader thread (``stream.read_ahead``) ...
TRACING = ("trace", "write")  # ... and its tracer


def scans_per_hour(stages: dict[str, float]) -> dict[str, float]:
    """Scans an hour at these stage times: one after the other, and streamed (the longer half bounds it)."""
    reading = sum(stages[k] for k in READING)
    tracing = sum(stages[k] for k in TRACING)
    return {"sequential": 3600.0 / max(stages["total"], 1e-9), "streamed": 3600.0 / max(reading, tracing, 1e-9)}


def _run(args, model, precision, device, reference: bool, out_dir: Path) -> tuple[dict, list]:
    from core.digitize.job.pipeline import digitize_sections
    from core.digitize.output.las import write_result
    from core.io.calibration import Calibration
    from core.io.file_names import las_path_for
    from core.io.scan import load_scan

    t0 = time.perf_counter()
    scan = load_scan(args.scan)
    calib = Calibration.load(args.calib)
    t_read = time.perf_counter() - t0
    parts = digitize_sections(scan.image, calib, source=args.scan, rgb=scan.rgb, model=model, precision=precision,
                              device=device, reference=reference)
    t0 = time.perf_counter()
    for suffix, _, res in parts:
        write_result(las_path_for(out_dir / "bench.las", suffix), res, calib, Path(args.scan).name, None)
    t_write = time.perf_counter() - t0
    stages = {"read": t_read, "write": t_write}
    for key in ("evidence", "grid", "trace"):
        stages[key] = sum(res.timings.get(f"{key}_s", 0.0) for _, _, res in parts)
    stages["total"] = sum(stages[k] for k in STAGES)
    return stages, parts


def _agreement(fast: list, ref: list) -> dict[str, float]:
    """Pearson r per curve between the two paths' values where both wrote one (every section together)."""
    out = {}
    for (_, _, a), (_, _, b) in zip(fast, ref):
        for name, v in a.values.items():
            w = b.values[name]
            both = np.isfinite(v) & np.isfinite(w)
            r = float(np.corrcoef(v[both], w[both])[0, 1]) if both.sum() > 2 and np.std(w[both]) > 0 else float("nan")
            out[name] = min(out.get(name, 1.0), r)
    return out


def run(args) -> int:
    import torch

    from core.common.sysmem import proc_status
    from core.engine.budget import machine_description
    from core.engine.config import pick_device

    if bool(args.model) == bool(args.classical):
        raise InputError(None, "give exactly one of --model MODEL or --classical")
    if args.threads:
        from core.common.threads import set_work_threads

        torch.set_num_threads(args.threads)
        set_work_threads(args.threads)  # the tracing's curves as many
    model = precision = None
    device = pick_device(args.device) if args.model else torch.device("cpu")
    if args.model:
        from core.model import precision as prec
        from core.model.model_io import load_model

        model, info = load_model(args.model)
        model.to(device)
        precision = prec.for_inference("model", info["precision"], device)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="welltrace-bench-") as tmp:
        paths = [("fast", False)] + ([("reference", True)] if args.compare and model is not None else [])
        parts = {}
        for label, reference in paths:
            with torch.no_grad():  # a context, not the global switch: the command runs inside tests too
                rows[label], parts[label] = _run(args, model, precision, str(device), reference, Path(tmp))
    out = {"machine": machine_description(device), "scan": Path(args.scan).name,
           "model": Path(args.model).name if args.model else "classical",
           "precision": precision.mode if precision is not None else None, "seconds": rows,
           "scans_per_hour": {label: scans_per_hour(r) for label, r in rows.items()},
           "peak_resident_gib": proc_status().get("VmHWM", 0) / 1024**3}
    if "reference" in parts:
        out["las_r_fast_vs_reference"] = _agreement(parts["fast"], parts["reference"])
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"machine  {out['machine']}")
    print(f"scan     {out['scan']}, model {out['model']}" + (f" ({out['precision']})" if out["precision"] else ""))
    print("stage      " + "  ".join(f"{label:>10s}" for label in rows))
    for stage in (*STAGES, "total"):
        print(f"{stage:9s}  " + "  ".join(f"{rows[label][stage]:9.2f}s" for label in rows))
    for how in ("sequential", "streamed"):
        print(f"{'scans/h':9s}  " + "  ".join(f"{out['scans_per_hour'][label][how]:10.0f}" for label in rows)
              + f"  {how}" + (" (reading and tracing overlapped: the longer half bounds it)" if how == "streamed"
                              else " (one scan after the other)"))
    if "reference" in rows:
        print(f"speed-up  {rows['reference']['total'] / rows['fast']['total']:.2f}× end to end, "
              f"{rows['reference']['evidence'] / max(rows['fast']['evidence'], 1e-9):.2f}× evidence")
        print("LAS r, fast vs reference: " + ", ".join(f"{k} {v:.4f}" for k, v in out["las_r_fast_vs_reference"].items()))
    print(f"peak resident {out['peak_resident_gib']:.2f} GiB", file=sys.stderr)
    return 0


def register(sub) -> None:
    b = sub.add_parser(NAME, help="time each stage of digitising one scan (read, evidence, grid, trace, "
                       "write) on this machine")
    b.add_argument("scan")
    b.add_argument("--calib", required=True, help="the scan's calibration")
    b.add_argument("--model", help="a trained model (.safetensors)")
    b.add_argument("--classical", action="store_true", help="the classical tracer (no model)")
    b.add_argument("--compare", action="store_true", help="also run the reference path (digitize --reference) and "
                   "compare times and LAS values")
    b.add_argument("--threads", type=int, metavar="N", help="threads for the network and the tracing (default: "
                   "PyTorch's, and every core for the tracing)")
    add_device(b)
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=run)
