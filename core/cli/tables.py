"""How the commands print figures in their tables: one formatting of bytes for every command."""

from __future__ import annotations


def fmt_bytes(n: float | None) -> str:
    """``1536`` → ``1.5 KiB``; ``None`` → ``-`` (a figure the run did not measure)."""
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} GiB"
