"""This process's resident memory and the machine's memory, read from the operating system (Linux ``/proc``;
elsewhere what ``os.sysconf`` gives, zeros where nothing does)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import os


def proc_status() -> dict[str, int]:
    """``VmHWM`` (peak resident) and ``VmRSS`` (resident) of this process in bytes; empty where unknown."""
    vals = {}
    try:
        with open(f"/proc/{os.getpid()}/status", encoding="ascii") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    vals[key] = int(rest.split()[0]) * 1024
    except OSError:
        pass
    return vals


def total_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def available_memory() -> int:
    """Memory the machine can give without swapping (``MemAvailable``); half the total where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return total_memory() // 2


def release_free_heap() -> None:
    """Collect Python's garbage and hand the C heap's free pages back to the system (glibc ``malloc_trim``).
    Without it the resident size still holds what was freed: a memory plan that starts from it (a training step's
    rise, a streamed folder's next reading after a tall scan was traced) would count that memory twice."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
