"""The demo job (``welltrace demo``): the headless end-to-end run on bundled defaults.

Synthesises fresh logs, digitises each with the bundled model when one is
shipped in ``resources/`` and with the classical tracer, writes the LAS
files, evaluates them against the truth and prints the comparison table.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from core.digitize.job.pipeline import digitize
from core.digitize.output.las import write_result
from core.digitize.output.metrics import compare_las, summarise
from core.io.calibration import Calibration
from core.io.las_io import read_las
from core.io.scan import load_scan
from core.model.bundled import BUNDLED_MODEL
from core.synth import write_set

DEMO_SEED = 20261122


def _methods():
    methods = []
    if BUNDLED_MODEL.exists():
        from core.model.model_io import load_model

        model, _ = load_model(BUNDLED_MODEL)
        methods.append(("model", model))
    methods.append(("classical", None))
    return methods


def run_demo(out: Path | None, quick: bool = False) -> int:
    out = Path(out) if out else Path(tempfile.mkdtemp(prefix="welltrace-demo-"))
    count, width, height = (2, 1600, 384) if quick else (4, 3200, 480)
    t0 = time.perf_counter()
    data = out / "synthetic"
    manifest = write_set(data, count, seed=DEMO_SEED, width=width, height=height)
    print(f"synthesised {count} logs ({width} × {height}) in {time.perf_counter() - t0:.1f} s -> {data}")
    methods = _methods()
    if len(methods) == 1:
        print("no bundled model in resources/models: digitising with the classical tracer only")
    rows = []
    for entry in manifest["logs"]:
        scan = load_scan(data / entry["image"])
        calib = Calibration.load(data / entry["calibration"])
        truth = read_las(data / entry["truth"])
        ranges = {c.mnemonic.upper(): c.value_range for c in calib.curves}
        for name, model in methods:
            t = time.perf_counter()
            res = digitize(scan.image, calib, model=model, source=str(data / entry["image"]))
            las_path = out / f"{entry['name']}.{name}.las"
            write_result(las_path, res, calib, entry["image"], BUNDLED_MODEL.name if model else None)
            for m in compare_las(read_las(las_path), truth, ranges):
                rows.append((entry["name"], name, m, time.perf_counter() - t))
    print(f"\n{'log':<11}{'method':<11}{'curve':<7}{'r':>8}{'RMSE %':>8}{'NULL':>7}")
    for log, method, m, _ in rows:
        print(f"{log:<11}{method:<11}{m.mnemonic:<7}{m.r:>8.3f}{m.rmse_pct:>8.2f}{m.null_fraction:>7.1%}")
    print()
    for name, _ in methods:
        s = summarise([m for _, meth, m, _ in rows if meth == name])
        print(f"{name:<10} median r {s['median_r']:.3f}  median RMSE {s['median_rmse_pct']:.2f} % of range  "
              f"NULL {100 * s['mean_null']:.1f} % of depths  ({s['curves']} curves)")
    _print_budget(methods)
    print(f"LAS files in {out}; total {time.perf_counter() - t0:.1f} s")
    return 0


def _print_budget(methods) -> None:
    """The activation budget of one batch-1 training step of the bundled model at 12,800 × 640."""
    from core.engine.budget import Levers, predict
    from core.model.network import preset

    cfg = next((m.cfg for name, m in methods if name == "model"), None) or preset("demo")
    print(f"\nactivation budget of one training step at 12,800 × 640, batch 1 ({cfg.preset} network, predicted):")
    base = None
    for lev in (Levers("fp32"), Levers("bf16"), Levers("bf16", True)):
        t = predict(cfg, 12800, 640, lev)
        base = base or t.activations
        print(f"  {lev.describe():<42} activations {t.activations / 2**30:6.2f} GiB "
              f"({t.activations / base:.3f} of fp32), total {t.total / 2**30:6.2f} GiB")
