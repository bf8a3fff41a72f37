"""This process's resident memory and the machine's memory, read from the operating system (Linux ``/proc``;
elsewhere what ``os.sysconf`` gives, zeros where nothing does)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import os
import threading


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
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


# glibc's mallopt parameters, and the thresholds its dynamic rule settles on for a process that frees large blocks
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_SETTLED_MMAP_THRESHOLD, _SETTLED_TRIM_THRESHOLD = 32 << 20, 64 << 20
_KEPT_LOCK = threading.Lock()
_kept_depth = 0


@functools.lru_cache(maxsize=1)
def _glibc():
    """The C library when it is glibc (``mallopt`` and ``malloc_trim`` exist), else None."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except (ValueError, OSError, AttributeError):
        return None


def _main_thread_glibc():
    """glibc, where this is the main thread: another thread's arena is made of 64 MiB heaps and maps a larger block
    whatever the threshold, so there a setting would gain nothing and only stop every thread's heap being trimmed
    (a streamed folder's tracer beside its reader, whose memory gate counts on the trim)."""
    return _glibc() if threading.current_thread() is threading.main_thread() else None


def forward_heap_kept() -> bool:
    """Whether a network's forwards read on this thread keep their heap between windows
    (:func:`freed_blocks_reused`): what a memory plan made here must count (``core/model/footprint.py:
    predict_forward_span``)."""
    return _main_thread_glibc() is not None


@contextlib.contextmanager
def freed_blocks_reused():
    """Inside it the C heap keeps what is freed (no trimming) and, within :func:`large_blocks_from_heap`, serves
    large blocks from the heap too; on leaving, the free pages go back to the system.

    glibc serves a block of 32 MiB or more (a network window's maps: up to ~100 MiB each) with its own ``mmap``
    and unmaps it when freed, so every window's forward faults its ~600 MiB of fresh pages in one 4 KiB page at a
    time: 150,000 page faults and 0.35-0.4 s of kernel time a window of KGS on the 2-core EPYC, 13 windows a scan
    (docs/benchmarks.md, issue #64). Served from the heap and kept there, the next window's forward reuses the
    same pages. Only the forwards take their large blocks from the heap: with the stitching's arrays between them
    there too, the heap fragmented and KGS peaked 0.2 GiB higher. The last of nested uses to leave restores glibc's
    settled threshold and trims the heap. Off the main thread (:func:`_main_thread_glibc`) and elsewhere than
    glibc it does nothing."""
    global _kept_depth
    libc = _main_thread_glibc()
    if libc is None:
        yield
        return
    with _KEPT_LOCK:
        _kept_depth += 1
        if _kept_depth == 1:
            libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)  # a C int: the most it takes
    try:
        yield
    finally:
        with _KEPT_LOCK:
            _kept_depth -= 1
            if _kept_depth == 0:
                libc.mallopt(_M_TRIM_THRESHOLD, _SETTLED_TRIM_THRESHOLD)
                libc.malloc_trim(0)


@contextlib.contextmanager
def large_blocks_from_heap():
    """Inside :func:`freed_blocks_reused`: blocks of any size from the heap (reusing what it keeps) until leaving,
    then glibc's settled threshold again (a block of 32 MiB or more mapped on its own)."""
    libc = _main_thread_glibc()
    if libc is None or not _kept_depth:
        yield
        return
    libc.mallopt(_M_MMAP_THRESHOLD, 1 << 30)
    try:
        yield
    finally:
        libc.mallopt(_M_MMAP_THRESHOLD, _SETTLED_MMAP_THRESHOLD)
