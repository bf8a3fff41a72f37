"""Measure a CUDA training step's transient (peak less parameters, gradients, optimiser state and saved
activations) over presets, precisions, levers and log lengths, and print the lines core/engine/transient.py holds.

usage: python3 tools/workspace_probe.py OUT.jsonl            measure on the GPU (appends one JSON line per step)
       python3 tools/workspace_probe.py --fit OUT.jsonl      print the fitted table from measured lines

Each measurement is one batch-1 step of `budget.measure_step` (two repeats, the second's peak), with
cudnn.benchmark off as in training; the lines are written as they are made, so a run cut short keeps its rows.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict

PRESETS, PRECISIONS, LEVERS, HEIGHT = ("demo", "full"), ("bf16", "fp32"), (False, True), 640
WIDTHS = (1600, 3200, 6400, 12800)


def measure(path: str) -> None:
    import torch

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
                               "torch": torch.__version__}
                        t0 = time.time()
                        try:
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
            groups[(row["preset"], row["precision"], row["ckpt"])].append(row)
    for key, rows in sorted(groups.items()):
        stride = preset(key[0]).stride
        px = np.array([padded(r["H"], stride) * padded(r["W"], stride) * r["batch"] for r in rows], float)
        slope, const = np.polyfit(px, [r["terms"]["workspace"] for r in rows], 1)
        act = np.polyfit(px, [r["terms"]["activations"] for r in rows], 1)[0]
        print(f'    ("{key[0]}", "{key[1]}", {key[2]}): ({const / 2**20:.0f} * MIB, {slope:.0f}),'
              f"  # {len(rows)} lengths; {slope / act:.3f} of the activations' slope")


if __name__ == "__main__":
    if sys.argv[1] == "--fit":
        fit(sys.argv[2])
    else:
        measure(sys.argv[1])
