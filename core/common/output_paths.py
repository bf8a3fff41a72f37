"""Outputs that would destroy inputs: a run refuses, before it writes anything, an output path that is one of
its inputs (the scan, its calibration, a mask, a model, the training data) or another of its outputs.

``digitize S --out S`` replaced the scan with a LAS and exited 0; ``--out X.png --qc X.png`` reported both written
and kept the PNG; ``calibrate S --propose --force --out S`` wrote its draft over the scan. A path is the same file
as another when both resolve to one path (a symbolic link, ``./``, ``..``) or, where both exist, when they are one
file on disk (a hard link, a case-insensitive file system)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InputError


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether paths ``a`` and ``b`` name one file (one need not exist yet)."""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def refuse_clobbering(outputs, inputs) -> None:
    """Refuse (``InputError`` naming the output) an output that is an input, or that is an earlier output of
    the same run. ``outputs`` and ``inputs`` are (what, path) pairs, e.g. ``("--out", Path("log.las"))`` and
    ``("the scan", scan)``; ``None`` paths are skipped."""
    seen: list[tuple[str, Path]] = []
    for what, raw in outputs:
        if raw is None:
            continue
        out = Path(raw)
        for source, path in inputs:
            if path is not None and same_file(out, path):
                raise InputError(str(out), f"{what} is {source}: writing it would destroy {source}; give another "
                                 "path")
        for earlier_what, earlier in seen:
            if same_file(out, earlier):
                raise InputError(str(out), f"{what} is also {earlier_what}: one output would replace the other; "
                                 "give two paths")
        seen.append((what, out))
