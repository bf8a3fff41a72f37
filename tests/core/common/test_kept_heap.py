"""The windows' forwards in the pages the window before freed (``core/common/sysmem.py: freed_blocks_reused``):
kept while a scan is read on the main thread, handed back after, and left alone elsewhere."""

import resource
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from core.common import sysmem

glibc_only = pytest.mark.skipif(sysmem._glibc() is None, reason="glibc's heap only")
PAGES = (48 << 20) // 4096
ROOT = Path(__file__).resolve().parents[3]


def _small_pages() -> None:
    """NumPy asks for transparent huge pages for its large arrays (one fault a 2 MiB page); a network's tensors
    fault one 4 KiB page at a time, and the counts below are of those."""
    np._core.multiarray._set_madvise_hugepage(False)


def _in_a_fresh_process(check: str) -> None:
    """Run ``check`` (a function of this module) in a new interpreter: what the allocator does with a block depends
    on the process's history (a heap that already holds a free block that size serves it with no fault, and the
    suite's earlier tests leave such blocks), so each count starts from a process that has freed nothing large."""
    out = subprocess.run([sys.executable, "-c", f"from tests.core.common import test_kept_heap as t; t.{check}()"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]


def _faults(work) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    work()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def _windows(n: int = 3, mib: int = 48) -> None:
    """A window's forward, as the allocator sees it: a block larger than glibc's mmap threshold, written, freed."""
    for _ in range(n):
        block = np.empty(mib << 20, np.uint8)
        block[::4096] = 1  # one write a page
        del block


def _check_freed_blocks_are_reused_not_faulted_again_and_handed_back_after() -> None:
    _small_pages()
    assert sysmem.forward_heap_kept()
    assert _faults(_windows) >= 3 * PAGES * 0.9  # mapped afresh and unmapped each time: every page faults
    before = sysmem.proc_status()["VmRSS"]
    with sysmem.freed_blocks_reused(), sysmem.large_blocks_from_heap():
        first = _faults(lambda: _windows(1))
        again = _faults(_windows)
        held = sysmem.proc_status()["VmRSS"]
    assert first >= PAGES * 0.9 and again < PAGES * 0.05  # the same pages, written again
    assert held - before >= (40 << 20)  # kept while inside
    assert sysmem.proc_status()["VmRSS"] - before < (16 << 20)  # handed back on leaving
    assert _faults(_windows) >= 3 * PAGES * 0.9  # glibc's own thresholds again


@glibc_only
def test_freed_blocks_are_reused_not_faulted_again_and_handed_back_after():
    _in_a_fresh_process("_check_freed_blocks_are_reused_not_faulted_again_and_handed_back_after")


def _check_off_the_main_thread_the_heap_is_left_as_it_is() -> None:
    _small_pages()
    counted, kept = [], []

    def reader():
        kept.append(sysmem.forward_heap_kept())
        with sysmem.freed_blocks_reused(), sysmem.large_blocks_from_heap():
            counted.append(_faults(_windows))

    t = threading.Thread(target=reader)
    t.start()
    t.join()
    assert kept == [False]
    assert counted[0] >= 3 * PAGES * 0.9
    assert sysmem._kept_depth == 0


@glibc_only
def test_off_the_main_thread_the_heap_is_left_as_it_is():
    """A folder's reader thread: its arena maps large blocks whatever the threshold, and the tracer's heap beside
    it must stay trimmed, so the setting is not made there, and a plan made there counts no kept heap."""
    _in_a_fresh_process("_check_off_the_main_thread_the_heap_is_left_as_it_is")


def _check_only_the_forwards_grow_the_heap() -> None:
    _small_pages()
    with sysmem.freed_blocks_reused():
        with sysmem.large_blocks_from_heap():
            _windows(1)
        assert _faults(lambda: _windows(3, mib=96)) >= 3 * 2 * PAGES * 0.9


@glibc_only
def test_only_the_forwards_grow_the_heap():
    """Between the forwards (the stitching's arrays) a large block the kept heap has no free room for is mapped on
    its own, as glibc does: the heap grows to what the forwards took, no further."""
    _in_a_fresh_process("_check_only_the_forwards_grow_the_heap")


def test_without_glibc_nothing_is_set_and_nothing_fails(monkeypatch):
    monkeypatch.setattr(sysmem, "_glibc", lambda: None)
    assert not sysmem.forward_heap_kept()
    with sysmem.freed_blocks_reused(), sysmem.large_blocks_from_heap():
        _windows(1, mib=1)
    assert sysmem._kept_depth == 0
