"""One window of a scan read by the network as ``digitize`` reads it, profiled (issue #64's fifth round).

The window is a stretch of the scan's canonical picture (depth along the width) of ``--rows`` × ``--length``
pixels, read by ``core.model.runtime.torch_runner`` with the model's own precision (bf16 autocast for the bundled
model on a CPU with AVX512-BF16), channels-last and the compiled group norm. Printed:

* ``--threads N,M,...``: rounds interleaved, each thread count's forward seconds, wall and CPU (user + system:
  the system part is mostly page faults, docs/benchmarks.md), and whether every count wrote the same maps;
* ``--silu-ab``: rounds interleaved, the forward with the SiLU fused into the compiled group norm (as it runs)
  and with the norm and PyTorch's SiLU apart (as it ran before, sixth round), and whether both wrote the same maps;
* ``--profile``: ``torch.profiler``'s table per operator and per operator and input shape (the compiled group
  norm is no PyTorch operator: it is the forward's time the table does not show), and oneDNN's own log of the
  forward summed by primitive (convolutions, weight ``reorder``s, matmuls).

    python3 tools/profile_window.py ../shared/data/scans/kgs_273101_bhc_sonic.tif --threads 2,1 --rounds 5
    python3 tools/profile_window.py ../shared/data/scans/kgs_273101_bhc_sonic.tif --profile
    python3 tools/profile_window.py ../shared/data/scans/kgs_273101_bhc_sonic.tif --silu-ab --rounds 5

On a shared machine the seconds are the load's: compare thread counts only within one run.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _window(scan: str, rows: int, length: int, start: int) -> np.ndarray:
    from core.digitize.page.frame import to_canonical
    from core.io.scan import load_scan
    from core.model.network import image_to_input

    loaded = load_scan(scan)
    canon = to_canonical(loaded.image, loaded.info.depth_axis)
    if canon.shape[0] < rows or canon.shape[1] < start + length:
        raise SystemExit(f"{scan}: its canonical picture is {canon.shape[0]} × {canon.shape[1]}, "
                         f"no {rows} × {length} window from column {start}")
    return image_to_input(np.ascontiguousarray(canon[:rows, start:start + length]))[None, None]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _threads(run, x: np.ndarray, counts: list[int], rounds: int) -> None:
    import torch

    maps = {}
    for n in counts:
        torch.set_num_threads(n)
        maps[n] = run(x)  # each count's first forward: oneDNN's primitives for it
    first = maps[counts[0]]
    print("the same maps at every thread count:", all(np.array_equal(first, m) for m in maps.values()))
    seconds = collections.defaultdict(list)
    for r in range(rounds):
        for n in counts:
            torch.set_num_threads(n)
            c0, t0 = _cpu(), time.perf_counter()
            run(x)
            wall, cpu = time.perf_counter() - t0, _cpu() - c0
            seconds[n].append((wall, cpu))
            print(f"round {r} threads {n}: wall {wall:.2f} s, CPU {cpu:.2f} s, load {os.getloadavg()[0]:.2f}",
                  flush=True)
    for n, rows in seconds.items():
        walls, cpus = sorted(w for w, _ in rows), sorted(c for _, c in rows)
        print(f"threads {n}: wall median {walls[len(walls) // 2]:.2f} s (min {walls[0]:.2f}), "
              f"CPU median {cpus[len(cpus) // 2]:.2f} s")


def _silu_ab(run, x: np.ndarray, rounds: int) -> None:
    import torch
    import torch.nn.functional as F

    from core.model import cpu_group_norm

    fused = cpu_group_norm.group_norm

    def apart(x, groups, weight, bias, eps, silu=False):  # the norm's pass, then PyTorch's SiLU in place
        out = fused(x, groups, weight, bias, eps)
        return F.silu(out, inplace=True) if silu else out

    ways = {"fused": fused, "apart": apart}
    maps, seconds = {}, collections.defaultdict(list)
    try:
        for r in range(rounds + 1):  # round 0 unmeasured: each way's first forward
            for name, fn in ways.items():
                cpu_group_norm.group_norm = fn
                c0, t0 = _cpu(), time.perf_counter()
                maps[name] = run(x)
                wall, cpu = time.perf_counter() - t0, _cpu() - c0
                if r:
                    seconds[name].append((wall, cpu))
                    print(f"round {r} {name}: wall {wall:.2f} s, CPU {cpu:.2f} s, load {os.getloadavg()[0]:.2f}",
                          flush=True)
    finally:
        cpu_group_norm.group_norm = fused
    print("the same maps fused and apart:", np.array_equal(maps["fused"], maps["apart"]))
    for name, rows in seconds.items():
        walls, cpus = sorted(w for w, _ in rows), sorted(c for _, c in rows)
        print(f"{name}: wall median {walls[len(walls) // 2]:.2f} s (min {walls[0]:.2f}), "
              f"CPU median {cpus[len(cpus) // 2]:.2f} s, {torch.get_num_threads()} threads")


def _profile(run, x: np.ndarray) -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        run(x)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20))
    print(prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=30,
                                                             max_name_column_width=36, max_shapes_column_width=80))
    # oneDNN writes its log to the process's stdout (file descriptor 1): caught there, summed by primitive
    log = _fd1_of(lambda: _verbose(run, x, torch))
    by_kind = collections.defaultdict(lambda: [0, 0.0])
    for line in log.splitlines():
        parts = line.split(",")
        if line.startswith("onednn_verbose") and len(parts) > 5 and parts[3] == "exec":
            by_kind[parts[5]][0] += 1
            by_kind[parts[5]][1] += float(parts[-1])
    for kind, (n, ms) in sorted(by_kind.items(), key=lambda kv: -kv[1][1]):
        print(f"oneDNN {kind:12s} {n:4d} calls {ms:9.1f} ms")


def _verbose(run, x, torch) -> None:
    with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
        run(x)


def _fd1_of(work) -> str:
    import tempfile

    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                work()
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode(errors="replace")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scan")
    ap.add_argument("--model", default="resources/models/demo.safetensors")
    ap.add_argument("--rows", type=int, default=1088, help="the band across (KGS's: 1,088)")
    ap.add_argument("--length", type=int, default=1152, help="the window along depth (KGS's: 1,152)")
    ap.add_argument("--start", type=int, default=4000, help="the window's first column along depth")
    ap.add_argument("--threads", default="", help="thread counts to compare, e.g. 2,1")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--silu-ab", action="store_true", help="the SiLU fused into the norm and apart, interleaved")
    args = ap.parse_args()

    import torch

    from core.model import precision as prec
    from core.model.model_io import load_model
    from core.model.runtime import torch_runner

    model, info = load_model(args.model)
    precision = prec.for_inference("model", info["precision"], "cpu")
    run = torch_runner(model, precision)
    x = _window(args.scan, args.rows, args.length, args.start)
    print(f"{Path(args.scan).name}: a {args.rows} × {args.length} window, {precision.mode}, "
          f"{torch.get_num_threads()} threads")
    run(x)  # the first forward: oneDNN's code, the compiled norm
    if args.threads:
        _threads(run, x, [int(n) for n in args.threads.split(",")], args.rounds)
    if args.silu_ab:
        _silu_ab(run, x, args.rounds)
    if args.profile:
        with torch.no_grad():
            _profile(run, x)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
