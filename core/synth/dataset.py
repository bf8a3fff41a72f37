"""Writing synthetic logs to disk: one log's files, and a whole set with its manifest (a valid project)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import numpy as np

from core.common.atomic import atomic_path, atomic_write_text, json_text
from core.io.las_io import LasCurve, write_las
from core.io.scan import save_gray_png

from .log import SyntheticLog, generate_log
from .shapes import shape_library_name
from .styles import DEFAULT_FAMILIES

GENERATOR_VERSION = 3  # 2: print-style families (styles.py); 3: log-decade, dotted 1-bit, dense and random families


def parse_curve_range(text: str | int) -> tuple[int, int]:
    """``"2"`` or ``"1..3"`` -> (min, max) curves per track, within 1..3."""
    s = str(text).strip()
    if ".." in s:
        a, b = s.split("..", 1)
        lo, hi = int(a), int(b)
    else:
        lo = hi = int(s)
    if not (1 <= lo <= hi <= 3):
        raise ValueError(f"curves per track must lie in 1..3, got {text!r}")
    return lo, hi


def write_log(out: Path, log: SyntheticLog) -> dict:
    """Write one log as NAME.png, NAME.mask.png, NAME.calib.json, NAME.truth.las."""
    out.mkdir(parents=True, exist_ok=True)
    if log.rgb is not None:
        from PIL import Image

        with atomic_path(out / f"{log.name}.png") as tmp:
            Image.fromarray(log.rgb, "RGB").save(tmp, format="PNG")
    else:
        save_gray_png(out / f"{log.name}.png", log.image)
    save_gray_png(out / f"{log.name}.mask.png", log.mask)
    log.calibration.save(out / f"{log.name}.calib.json")
    curves = [
        LasCurve(s.mnemonic, s.unit, s.description, log.truth[s.mnemonic]) for s in log.calibration.curves
    ]
    write_las(
        out / f"{log.name}.truth.las", log.depth, curves,
        depth_unit=log.calibration.depth_unit, step=log.calibration.step,
        well={"WELL": f"SYNTHETIC {log.name}", "COMP": "WellTrace synthetic generator"},
        provenance={"source": f"welltrace synth, generator v{GENERATOR_VERSION}, seed {log.meta['seed']}",
                    "kind": "synthetic truth: the exact curves the image was drawn from"},
    )
    h, w = log.image.shape
    return {
        "name": log.name, "image": f"{log.name}.png", "mask": f"{log.name}.mask.png",
        "calibration": f"{log.name}.calib.json", "truth": f"{log.name}.truth.las",
        "width": w, "height": h, **log.meta,
    }


def write_set(
    out: str | Path,
    count: int,
    seed: int = 0,
    width: int = 3200,
    height: int = 480,
    depth_axis: str = "x",
    curves: tuple[int, int] = (1, 3),
    style: str = "mixed",
    prefix: str = "synth",
    progress: Callable[[int, int], None] | None = None,
    families: tuple[str, ...] | None = None,
) -> dict:
    """Write ``count`` logs and a manifest; a synthetic folder is a valid project."""
    if count < 1:
        raise ValueError("count must be at least 1")
    out = Path(out)
    digits = max(3, int(math.log10(count)) + 1)
    entries = []
    for i in range(count):
        # one independent stream per log, so log i is the same whatever the count
        log_seed = int(np.random.SeedSequence([seed, i]).generate_state(1)[0])
        log = generate_log(log_seed, width, height, depth_axis, curves, style, name=f"{prefix}_{i:0{digits}d}",
                           families=families)
        entries.append(write_log(out, log))
        if progress:
            progress(i + 1, count)
    manifest = {
        "generator": "welltrace synth",
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "count": count,
        "canonical_size": [width, height],
        "depth_axis": depth_axis,
        "curves_per_track": list(curves),
        "style": style,
        "families": list(families or DEFAULT_FAMILIES) if style == "mixed" else [style],
        "shape_library": shape_library_name(),
        "logs": entries,
    }
    atomic_write_text(out / "manifest.json", json_text(manifest))
    return manifest
