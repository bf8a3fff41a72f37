"""A folder streamed: while one scan is traced, the network reads the next.

A scan's digitising is two halves (``pipeline.read_sections`` and ``pipeline.digitize_sections``): reading (the
file, the calibration and the outputs checked, the page's ink, grid and log body, the network's evidence) and
tracing (the paths, the rules, the values, the files written). On a GPU the network reads KGS in seconds while
the tracer works on the CPU; on a CPU the network's threads leave a core idle while the tracer's single thread
runs. So a worker reads the next scan in a thread of its own while it traces this one (:func:`streamed`), one
scan ahead at most: two scans' maps in memory, one traced and one read, never a folder's.

The same scans give the same LAS files as when read one after the other: the reading of a scan does not
depend on what else runs (the network's maps are thread-invariant, ``core/model/cpu_group_norm.py``).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Hashable, Iterable, Iterator

from core.common.sysmem import proc_status
from core.digitize.job.memory_gate import MemoryGate, ScanMemory, scan_memory
from core.digitize.job.scan_job import ReadOptions, ScanJob, ScanOutcome, _load, digitize_file

AHEAD = 1  # scans read ahead of the one traced: each holds its maps (7 bytes a pixel with a 4-class network)


@dataclass
class ReadAhead:
    """A scan read up to its tracing: what ``digitize_scan`` takes as ``ahead``."""

    scan: object  # ``core.io.scan.Scan``
    calib: object  # ``core.io.calibration.Calibration``
    mask: object  # the job's class mask to trace, or None
    pages: list  # ``pipeline.PageRead`` per part
    seconds: float  # what the reading took


def read_ahead(job: ScanJob, read: ReadOptions) -> ReadAhead:
    """The reading half of ``digitize_scan``: inputs checked and loaded, every part's page and evidence read."""
    import torch

    from core.digitize.job.pipeline import read_sections

    t0 = time.perf_counter()
    scan, calib, mask = _load(job, None)
    # the picture's decoding freed its transients (Pillow's blocks of a colour conversion: 320 MiB on the tallest
    # shared scan) into this thread's own heap, which glibc keeps resident: handed back before the page stage
    # plans nothing on top of them (``memory_gate.scan_memory`` counts the load's peak, not its leftovers)
    _hand_back_freed()
    with torch.no_grad():  # grad mode is a thread's own: the reader's thread sets it
        pages = read_sections(scan.image, calib, job.section, source=str(job.scan), mask=mask, model=read.model,
                              precision=read.precision, device=read.device, tile=read.tile,
                              whole_picture=read.whole_picture, memory_ceiling=read.memory_ceiling,
                              reference=read.reference, between=_hand_back_freed)
    # each part's network reading left its forwards' freed blocks in this thread's heap (kept resident by glibc:
    # 400 MiB before the second section of a 37-megapixel colour scan, 2026-11-28), under the next part's page
    # stage and the tracing beside the next reading: handed back after each part (``between``)
    return ReadAhead(scan, calib, mask, pages, time.perf_counter() - t0)


def streamed(jobs: Iterable[tuple[Hashable, ScanJob]], read: ReadOptions, ahead: int = AHEAD,
             gate: MemoryGate | None = None) -> Iterator[tuple[Hashable, ScanOutcome]]:
    """(key, outcome) of each (key, job), in order, each scan read in a thread of its own while the one before is
    traced: at most ``ahead`` scans read or being read beyond the one traced. ``jobs`` is drawn from lazily, one
    job as a slot frees (a worker takes from a shared queue no more than it can start). A scan that cannot be
    read is a failed outcome (``digitize_file``), as when read and traced in turn.

    A network's reading waits for memory (``memory_gate.py``): it starts when its prediction fits beside what the
    scans read and not yet traced hold, under ``read.memory_ceiling`` (default: 90 % of the memory available);
    ``gate``: the one to use (a test's)."""
    import queue

    if gate is None and read.model is not None:
        from core.digitize.evidence.memory_plan import default_ceiling

        def resident() -> int:
            return proc_status().get("VmRSS", 0)

        gate = MemoryGate(read.memory_ceiling or default_ceiling(), resident(), resident)
    handed: queue.Queue = queue.Queue()
    slots = threading.Semaphore(ahead + 1)  # the scan traced and those read ahead
    stop = threading.Event()

    def reader() -> None:
        try:
            for key, job in _lazily(jobs, slots, stop):
                reading: Future = Future()
                held = 0
                try:
                    if gate is not None and gate.resident is not None and not gate.held:
                        _hand_back_freed()  # nothing read and untraced: the resident size is the process's own
                        gate.rebase()
                    memory = _predicted(job, read, gate) if gate is not None else None
                    if memory is not None:
                        _refuse_beyond(job, memory, gate)  # what cannot be read and traced alone: before it is read
                        gate.admit(memory.starting, stop)
                        # the reading's own plan starts from the resident size: without this it would still
                        # hold what the scan traced before freed (a tall scan's tracing: 0.5 GiB and more),
                        # and a scan that fits alone is refused ("needs at least ... GiB")
                        _hand_back_freed()
                    reading.set_result(_read_ahead_or_alone(job, read, gate, stop))
                    if memory is not None:
                        held = memory.held
                        gate.hold(held)
                except BaseException as exc:  # noqa: BLE001 - the tracer's side turns it into the scan's outcome
                    reading.set_exception(exc)
                handed.put((key, job, reading, held))
        finally:
            handed.put(None)

    thread = threading.Thread(target=reader, name="welltrace-reader", daemon=True)
    thread.start()
    try:
        while (item := handed.get()) is not None:
            key, job, reading, held = item
            try:
                outcome = digitize_file(job, read, reading)
            finally:
                del reading, item  # its maps go with it, before the next scan's reading is let start
                if held:
                    gate.give(held)
                slots.release()
            yield key, outcome
    except BaseException:  # interrupted, or the caller stopped early: the reading under way is not waited for
        stop.set()
        slots.release()  # a reader waiting for a slot sees the stop; one reading ends with it (a daemon)
        raise
    stop.set()
    slots.release()
    thread.join()


def _read_ahead_or_alone(job: ScanJob, read: ReadOptions, gate: MemoryGate | None,
                         stop: threading.Event) -> ReadAhead:
    """:func:`read_ahead`; a reading its own memory plan refused while other scans were held (the one being traced:
    its tracing is resident beside the plan) is read again once nothing is held, the freed heap handed back. A scan
    that fits alone is so never refused for the company it met: the gated folder of the shared scans refused its
    tallest (2.12 GiB needed under 2.00; alone it plans 1.66) once a faster reader reached it while the scan before it
    was still traced (2026-11-28). One that does not fit alone is refused as before."""
    from core.common.errors import MemoryCeilingRefusal

    try:
        return read_ahead(job, read)
    except MemoryCeilingRefusal:
        if gate is None or not gate.held:
            raise
        gate.idle(stop)
        if stop.is_set():
            raise
    _hand_back_freed()
    return read_ahead(job, read)


def _hand_back_freed() -> None:
    """Before a gated reading plans from the resident size: what the scans traced left in reference cycles (their
    results' arrays) collected, then the freed heap handed back to the system (it keeps what a cycle still holds)."""
    import gc

    from core.common.sysmem import release_free_heap

    gc.collect()
    release_free_heap()


def _predicted(job: ScanJob, read: ReadOptions, gate: MemoryGate) -> ScanMemory | None:
    """The job's memory (``memory_gate.scan_memory``) under the gate's ceiling, or None where it cannot be told
    from its files (the reading then fails with the reason, or reads a scan the header did not describe) or nothing
    is predicted (a mask or the classical ink, read in a fraction of a network's memory). Raises
    ``MemoryCeilingRefusal`` where not even the shortest window's reading fits under the ceiling."""
    from core.common.errors import MemoryCeilingRefusal
    from core.digitize.evidence.memory_plan import MemoryCeilingError

    if read.model is None or job.from_mask is not None:
        return None
    try:
        return scan_memory(job, read, gate.ceiling, gate.base)
    except MemoryCeilingError as exc:
        raise MemoryCeilingRefusal(str(job.scan), f"{exc}: raise --max-memory or free memory") from None
    except Exception:  # noqa: BLE001 - the reading itself says what is wrong with the job
        return None


def _refuse_beyond(job: ScanJob, memory: ScanMemory, gate: MemoryGate) -> None:
    """Raise ``MemoryCeilingRefusal`` where the scan alone, from its read to its LAS, does not fit under the gate's
    ceiling beside the process's own: said before any of it is read, with what each stage needs. One that fits is
    let in when the scans held leave it room (``MemoryGate.admit``), and then never refused for the company it met."""
    from core.common.errors import MemoryCeilingRefusal
    from core.common.vocabulary import GIB

    if gate.base + memory.peak <= gate.ceiling:
        return
    raise MemoryCeilingRefusal(str(job.scan), f"reading and tracing this scan needs "
                               f"{(gate.base + memory.peak) / GIB:.2f} GiB (the process {gate.base / GIB:.2f}, "
                               f"then at most {memory.starting / GIB:.2f} "
                               f"to read it and {memory.held / GIB:.2f} to trace it); the ceiling is "
                               f"{gate.ceiling / GIB:.2f} GiB: raise --max-memory or free memory")


def _lazily(jobs: Iterable, slots: threading.Semaphore, stop: threading.Event) -> Iterator:
    """``jobs``, each drawn once a slot is free, until ``stop``."""
    it = iter(jobs)
    while True:
        slots.acquire()
        if stop.is_set():
            return
        try:
            item = next(it)
        except StopIteration:
            return
        yield item
