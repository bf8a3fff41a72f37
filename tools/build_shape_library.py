"""Build resources/shapes/curve_shapes.npz: the real curve shapes the synthetic generator draws from.

The library ships with the project so that a plain clone draws the same logs
as any other (the README's figures reproduce without ../shared). Its source is
two real logs from lasio's source distribution (MIT licence, see
resources/shapes/README.md):

    pip download lasio==0.31 --no-binary :all: --no-deps -d /tmp/lasio-sdist
    tar xzf /tmp/lasio-sdist/lasio-0.31.tar.gz -C /tmp/lasio-sdist
    python tools/build_shape_library.py /tmp/lasio-sdist/lasio-0.31/tests/examples

Each usable curve is parsed by the generator's own rules (``core.synth.shapes``:
longest valid run, log10 for resistivities, 1st–99th percentile normalisation,
flags and drifts dropped) and stored as float16 in [0, 1].
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

FILES = ("6038187_v1.2.las", "logging_levels.las")
# logging_levels.las is a cement-bond log: its many waveform-attenuation channels (ATC1..6) repeat one shape;
# keep one of them beside the curves a paper log draws
KEEP = {"logging_levels.las": ("GR", "AMAV", "ATAV", "DTMX", "TEN")}


def main(examples: str) -> int:
    from core.synth.shapes import _parse_library

    src = Path(examples)
    with tempfile.TemporaryDirectory() as tmp:
        for name in FILES:
            (Path(tmp) / name).write_bytes((src / name).read_bytes())
        sources = _parse_library(Path(tmp))
    kept = [s for s in sources
            if s.name.split(":")[0] not in KEEP or s.name.split(":")[1] in KEEP[s.name.split(":")[0]]]
    out = Path(__file__).resolve().parents[1] / "resources" / "shapes" / "curve_shapes.npz"
    out.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"v{i}": s.values.astype(np.float16) for i, s in enumerate(kept)}
    np.savez_compressed(out, names=np.array([s.name for s in kept]), logs=np.array([s.log for s in kept]), **arrays)
    print(f"{out}: {len(kept)} curves, {sum(s.values.size for s in kept)} samples, {out.stat().st_size // 1024} KiB")
    for s in kept:
        print(f"  {s.name} ({s.values.size} samples{', log' if s.log else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
