"""Measure a CUDA training step's transient (peak less parameters, gradients, optimiser state and saved
activations) over presets, precisions, levers and log lengths, and print the lines core/engine/transient.py holds.

usage: python3 tools/workspace_probe.py OUT.jsonl            measure on the GPU (appends one JSON line per step;
                                                              PRESETS= and WIDTHS= name other rows)
       python3 tools/workspace_probe.py --fit OUT.jsonl      print the fitted table from measured lines

Each measurement is one batch-1 step of `budget.measure_step` (two repeats, the second's peak), with
cudnn.benchmark off as in training; the lines are written as they are made, so a run cut short keeps its rows.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict

# PRESETS=tiny WIDTHS=800,1600 for other rows (the tests' own network: its constant is not demo's)
PRESETS = tuple(os.environ.get("PRESETS", "demo,full").split(","))
WIDTHS = tuple(int(w) for w in os.environ.get("WIDTHS", "1600,3200,6400,12800").split(","))
PRECISIONS, LEVERS, HEIGHT = ("bf16", "fp32"), (False, True), 640
# SDPA=flash_attention|efficient_attention|cudnn_attention|math pins the attention kernel (a row of its own): the
# tiny network's bf16 transient on the H100 was 16 times its fp32 one, ~3.4 KB a pixel, linear in its tokens
SDPA = os.environ.get("SDPA")


def measure(path: str) -> None:
    import contextlib

    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from core.engine.budget import Levers, measure_step
    from core.model.network import preset

    torch.backends.cudnn.benchmark = False
    with open(path, "a") as out:
        for name in PRESETS:
            for precision in PRECISIONS:
                for checkpointing in LEVERS:
                    for width in WIDTHS:
                        row = {"preset": name, "precision": precision, "ckpt": checkpointing, "W": width,
                               "H": HEIGHT, "batch": 1, "device": torch.cuda.get_device_name(0),
                               "torch": torch.__version__, **({"sdpa": SDPA} if SDPA else {})}
                        t0 = time.time()
                        pin = sdpa_kernel(getattr(SDPBackend, SDPA.upper())) if SDPA else contextlib.nullcontext()
                        try:
                            with pin:
                                m = measure_step(preset(name), width, HEIGHT, Levers(precision, checkpointing),
                                                 device="cuda", repeats=2)
                            row.update(terms=m["terms"], peak=m["peak"], reserved=m["reserved"])
                        except torch.OutOfMemoryError as exc:  # a size past the card is a row too
                            row["error"] = str(exc)[:200]
                        row["wall"] = time.time() - t0
                        out.write(json.dumps(row) + "\n")
                        out.flush()
                        print(name, precision, checkpointing, width, row.get("terms", {}).get("workspace"),
                              flush=True)
                        torch.cuda.empty_cache()


def fit(path: str) -> None:
    import numpy as np

    from core.model.footprint import padded
    from core.model.network import preset

    groups = defaultdict(list)
    for line in open(path):
        row = json.loads(line)
        if "terms" in row and not row.get("cudnn_benchmark"):
            groups[(row["preset"], row["precision"], row["ckpt"], row.get("sdpa", ""))].append(row)
    for key, rows in sorted(groups.items()):
        stride = preset(key[0]).stride
        px = np.array([padded(r["H"], stride) * padded(r["W"], stride) * r["batch"] for r in rows], float)
        slope, const = np.polyfit(px, [r["terms"]["workspace"] for r in rows], 1)
        act = np.polyfit(px, [r["terms"]["activations"] for r in rows], 1)[0]
        pinned = f"; SDPA {key[3]}" if key[3] else ""
        print(f'    ("{key[0]}", "{key[1]}", {key[2]}): ({const / 2**20:.0f} * MIB, {slope:.0f}),'
              f"  # {len(rows)} lengths; {slope / act:.3f} of the activations' slope{pinned}")


if __name__ == "__main__":
    if sys.argv[1] == "--fit":
        fit(sys.argv[2])
    else:
        measure(sys.argv[1])
