"""``welltrace demo``: the headless end-to-end job on bundled defaults.

Synthesises fresh logs, writes their LAS files and prints what was made.
Later stages (digitising with the bundled model and the classical tracer,
and the evaluation table) hang off the same function.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .las_io import read_las
from .synth import write_set

DEMO_SEED = 20261122


def run_demo(out: Path | None, quick: bool = False) -> int:
    out = Path(out) if out else Path(tempfile.mkdtemp(prefix="welltrace-demo-"))
    count, width, height = (2, 1600, 384) if quick else (4, 3200, 480)
    t0 = time.perf_counter()
    manifest = write_set(out / "synthetic", count, seed=DEMO_SEED, width=width, height=height)
    print(f"synthesised {count} logs ({width} × {height}) in {time.perf_counter() - t0:.1f} s -> {out / 'synthetic'}")
    print(f"{'log':<12} {'curves':<28} {'depth range':<24} samples")
    for entry in manifest["logs"]:
        las = read_las(out / "synthetic" / entry["truth"])
        rng = f"{las.depth[0]:g}–{las.depth[-1]:g} {las.depth_unit}"
        print(f"{entry['name']:<12} {' '.join(las.mnemonics):<28} {rng:<24} {las.depth.size}")
    return 0
