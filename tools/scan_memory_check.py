"""What a streamed folder's gate predicts a scan holds, stage by stage, against the resident peaks measured in a
fresh process (``core/digitize/job/memory_gate.py: scan_memory``).

    python3 tools/scan_memory_check.py SCAN CALIB [SCAN CALIB ...] [--json OUT] [--out DIR]

Each scan in a process of its own, as a folder's worker reads it: the bundled model loaded (the process's own,
``base``: its resident size then, the freed heap handed back), the scan read on a reader thread (its page stage,
then the network's reading), then traced and written on the main thread (LAS and QC page into a temporary
folder), the freed heap handed back between the two as the worker does. The peak resident size (VmHWM, reset at
each stage's start) over ``base`` is printed beside the prediction: page, reading, held (kept + tracing to the
files written), and the seconds the tracing and writing took. A prediction under the measured peak is what the gate
must never make (a ceiling passed). ``--out``: the LAS files and QC pages kept there (to compare two trees' output).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MIB = 2**20


def measure(scan: Path, calib: Path, warm: tuple[Path, Path] | None = None, keep: Path | None = None) -> dict:
    """One scan's predicted and measured stage peaks over the process's own, in bytes (this process). ``warm``: a
    scan digitised first, as a worker's scans after its first find the process (the tracer's compiled kernels
    loaded, the network's runtime buffers made); its own peak over the cold process is ``first``."""
    import torch

    from core.common.sysmem import proc_status, release_free_heap
    from core.digitize.job import pipeline, stream
    from core.digitize.job.memory_gate import scan_memory
    from core.digitize.job.scan_job import ReadOptions, ScanJob, digitize_file
    from core.engine.memory import reset_peaks
    from core.io.file_names import qc_path_for
    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import load_model

    cpu = torch.device("cpu")
    model, _ = load_model(BUNDLED_MODEL)
    read = ReadOptions(model=model, model_name=BUNDLED_MODEL.name)
    release_free_heap()
    base = proc_status()["VmRSS"]
    tmp = Path(tempfile.mkdtemp(prefix="scan_memory_"))
    keep = tmp if keep is None else keep
    keep.mkdir(parents=True, exist_ok=True)
    first = None
    if warm is not None:
        reset_peaks(cpu)
        done = digitize_file(ScanJob(warm[0], warm[1], tmp / "warm.las", accept_proposed=True), read)
        first = {"scan": warm[0].name, "status": done.status, "peak": proc_status()["VmHWM"] - base,
                 "cold_base": base}
        release_free_heap()
        base = proc_status()["VmRSS"]
    out = keep / f"{scan.stem}.las"
    job = ScanJob(scan, calib, out, qc_path_for(out), accept_proposed=True)
    predicted = scan_memory(job, read, base=base)
    peaks = {"page": 0, "reading": 0}
    starts = {"page": 0, "reading": 0}  # the resident size as each stage starts: what the stages before left

    def stage(name, fn):
        def wrapped(*a, **k):
            starts[name] = max(starts[name], proc_status()["VmRSS"] - base)
            reset_peaks(cpu)
            try:
                return fn(*a, **k)
            finally:
                peaks[name] = max(peaks[name], proc_status()["VmHWM"] - base)
        return wrapped

    pipeline._ink_grid_body = stage("page", pipeline._ink_grid_body)
    pipeline.model_evidence = stage("reading", pipeline.model_evidence)
    from concurrent.futures import Future

    reading: Future = Future()

    def reader() -> None:
        try:
            reading.set_result(stream.read_ahead(job, read))
        except BaseException as exc:  # noqa: BLE001 - said by the tracing below
            reading.set_exception(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    thread.join()
    release_free_heap()
    kept = proc_status()["VmRSS"] - base
    reset_peaks(cpu)
    t0 = time.perf_counter()
    outcome = digitize_file(job, read, reading)
    traced_s = time.perf_counter() - t0
    held = proc_status()["VmHWM"] - base
    return {"scan": scan.name, "status": outcome.status, "error": outcome.error, "base": base,
            "predicted": predicted.as_dict(), "measured": {**peaks, "kept": kept, "held": held}, "starts": starts,
            "first": first, "traced_s": traced_s}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pairs", nargs="*", help="SCAN CALIB pairs")
    ap.add_argument("--json", help="write every scan's figures here")
    ap.add_argument("--warm", nargs=2, metavar=("SCAN", "CALIB"),
                    help="digitise this scan first in each process (a worker's later scans); none: each scan cold")
    ap.add_argument("--out", help="keep each scan's LAS and QC pages in this folder (default: a temporary one)")
    ap.add_argument("--one", nargs=2, metavar=("SCAN", "CALIB"), help=argparse.SUPPRESS)  # the child's own run
    args = ap.parse_args(argv)
    if args.one:
        warm = (Path(args.warm[0]), Path(args.warm[1])) if args.warm else None
        keep = Path(args.out) if args.out else None
        print(json.dumps(measure(Path(args.one[0]), Path(args.one[1]), warm, keep)))
        return 0
    if not args.pairs or len(args.pairs) % 2:
        ap.error("give SCAN CALIB pairs")
    rows = []
    print(f"{'scan':34} {'stage':8} {'predicted':>10} {'measured':>10} {'ratio':>6}   (MiB over the process's own)")
    for scan, calib in zip(args.pairs[::2], args.pairs[1::2]):
        done = subprocess.run([sys.executable, __file__, "--one", scan, calib] + (["--warm", *args.warm] if args.warm
                                                                                  else [])
                              + (["--out", args.out] if args.out else []),
                              capture_output=True, text=True)
        if done.returncode:
            print(f"{Path(scan).name}: failed: {done.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        p, m = row["predicted"], row["measured"]
        for name in ("page", "reading", "kept", "held"):
            print(f"{row['scan']:34} {name:8} {p[name] / MIB:10.0f} {m[name] / MIB:10.0f} "
                  f"{p[name] / max(m[name], 1):6.2f}", flush=True)
        print(f"{row['scan']:34} resident as the page stage starts {row['starts']['page'] / MIB:.0f} MiB, as the "
              f"reading starts {row['starts']['reading'] / MIB:.0f}", flush=True)
        first = row["first"]
        warmed = (f" (warmed by {first['scan']}: its peak {first['peak'] / MIB:.0f} MiB over the cold process's "
                  f"{first['cold_base'] / MIB:.0f})" if first else " (cold)")
        print(f"{row['scan']:34} base {row['base'] / MIB:.0f} MiB{warmed}, traced and written in "
              f"{row['traced_s']:.1f} s, {row['status']} {row['error']}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
