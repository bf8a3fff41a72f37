"""The progress bar of long commands: on a terminal only, so logs and pipes stay clean."""

from __future__ import annotations

import sys


def progress_bar(total: int, desc: str, unit: str = "log", disable: bool = False):
    """A tqdm bar on a terminal, nothing otherwise (or when ``disable``: e.g. a torchrun rank other than 0)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=disable or not sys.stderr.isatty(), leave=False, unit=unit)
