"""A streamed folder's reader waits for memory: the next scan is read only when its reading fits beside what the
scans already read hold.

A worker of a streamed folder (``stream.py``) reads the next scan while it traces one. Read at once, the two
add up: on the shared scans the folder peaked at 2.64 GiB while its tallest scan alone is traced in 1.85 GiB (a
reader holding the next scan's page and maps beside it), over the 2 GiB a worker is planned to. Before it reads
a scan the reader asks :class:`MemoryGate` for the scan's reading (:func:`scan_memory`: predicted from the scan's
header and its calibration, by the network's memory plan, ``core/digitize/evidence/memory_plan.py: plan_memory``); the
gate lets it start when that, on top of what the scans read and not yet traced hold (their pictures, pages and
maps, and the tracing each still has ahead of it), fits under the ceiling, or when nothing is held (a scan alone
is always read: its own plan refuses it if it cannot be). Otherwise the reader waits for the tracer to finish a
scan, and the worker reads and traces in turn until the memory allows again.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

# the trace stage's rise over the pages it traces, per pixel of the largest track's band (rows × columns of one
# part): its float32 band, the grid's float64 damping and the damped band, the Viterbi's column-major copy, the
# stroke runs of a steep stroke (issue #60). Measured (VmHWM over the stage from the freed heap, the maps read
# before; 2-core EPYC, ``tools/trace_memory_rise.py``, two runs, 2026-11-28): KGS whole 458-518 MiB for its
# 999 × 17,864 band (26.9-30.4 B/px; 32.4 at 281e3b2), iqa_33-025-02289-0001's section 560-667 MiB for
# 501 × 52,313 (22.4-26.7 B/px; 23.2 before the steep strokes). It was 20 (17.4 and 16.8 measured in the fourth
# round), and the gated folder of the shared scans then peaked at 2.05 GiB under its 2 GiB. The largest, with a
# margin: a reserve under the rise lets the reader start too soon
TRACE_BYTES_PER_BAND_PX = 34
COLOUR_BYTES_PER_PX = 3  # a colour scan keeps its RGB pixels beside the grey (``core/io/scan.py``)
INK_BYTES_PER_PX = 1  # the page's darkness, kept for the pens' patterns (``pipeline.PageRead.ink``)


@dataclass(frozen=True)
class ScanMemory:
    """Bytes a scan takes in a streamed worker, over the process's own (libraries, model)."""

    reading: int  # while it is read: its picture, its pages' maps and ink, one window's forward and the stitching
    kept: int  # once read, until traced: its picture, its pages' maps and ink
    tracing: int  # what tracing it adds to ``kept``

    @property
    def held(self) -> int:
        """What a scan read holds until its tracing ends, reserved as it is read: its tracing starts later, but
        before the next scan's reading could see it."""
        return self.kept + self.tracing


def scan_memory(job, read) -> ScanMemory:
    """:class:`ScanMemory` of a job read with ``read`` (``scan_job.ReadOptions``; a network's), from its scan's
    header and its calibration: no pixel decoded. Raises what reading the job would (a missing file, a bad
    calibration): the caller lets the reading say it."""
    from core.digitize.evidence.memory_plan import RUNTIME_OVERHEAD, plan_memory
    from core.digitize.evidence.network import evidence_band
    from core.io.calibration import Calibration
    from core.io.scan import COLOUR_MODES, read_info
    from core.model import precision as prec

    info = read_info(job.scan)
    calib = Calibration.load(job.calib)
    shape = (info.height, info.width)
    picture = info.width * info.height * (1 + (COLOUR_BYTES_PER_PX if info.mode in COLOUR_MODES else 0))
    length, across = calib.depth_length(shape), calib.amplitude_length(shape)
    if calib.sections:
        chosen = [job.section] if job.section is not None else range(len(calib.sections))
        parts = [(calib.section_calibration(i), min(calib.sections[i].stop, length) - calib.sections[i].start)
                 for i in chosen]
    else:
        parts = [(calib, length)]
    device = "cuda" if str(read.device).startswith("cuda") else "cpu"
    cfg = read.model.cfg
    mode = (read.precision or prec.for_inference("model", read.model.trained_precision, device)).mode
    pages = transient = tracing = 0
    for part, cols in parts:
        cols = max(cols, 1)
        lo, hi = evidence_band([c.track for c in part.curves], across, cfg)
        # read on the worker's reader thread (``stream.py``), where the forwards' heap is not kept between windows
        # (``core/common/sysmem.py: freed_blocks_reused``): the reading holds their live tensors, not a kept span;
        # and one window at a time (``memory_plan.windows_at_once``), whatever thread asks
        plan = plan_memory(cfg, (across, cols), mode, device, ceiling=1 << 62, length=read.tile, resident=0,
                           across=hi - lo, heap_kept=False, at_once=1)
        pages += plan.maps + INK_BYTES_PER_PX * across * cols
        transient = max(transient, plan.forward + plan.stitching)
        band = max((min(hi_, across - 1) - max(lo_, 0) + 1 for lo_, hi_ in (c.track_rows() for c in part.curves)),
                   default=0)
        tracing = max(tracing, TRACE_BYTES_PER_BAND_PX * band * cols)
    return ScanMemory(picture + pages + transient + RUNTIME_OVERHEAD, picture + pages, tracing)


class MemoryGate:
    """What the scans read and not yet traced hold (:meth:`hold`, :meth:`give`), and the reader's wait for room
    (:meth:`admit`) under ``ceiling`` bytes, ``base`` of them the process's own."""

    def __init__(self, ceiling: int, base: int):
        self.ceiling, self.base = int(ceiling), int(base)
        self.held = 0
        self.waited: list[float] = []  # seconds each admission waited (0.0: at once)
        self._changed = threading.Condition()

    def admit(self, need: int, stop: threading.Event | None = None) -> None:
        """Return once ``need`` more bytes fit beside what is held, or nothing is held, or ``stop`` is set."""
        t0 = time.perf_counter()
        with self._changed:
            while (self.held and self.base + self.held + need > self.ceiling
                   and not (stop is not None and stop.is_set())):
                self._changed.wait(0.5)  # woken by ``give``; the timeout looks at ``stop``
        self.waited.append(time.perf_counter() - t0)

    def idle(self, stop: threading.Event | None = None) -> None:
        """Return once nothing is held (every scan read has been traced), or ``stop`` is set."""
        with self._changed:
            while self.held and not (stop is not None and stop.is_set()):
                self._changed.wait(0.5)

    def hold(self, n: int) -> None:
        with self._changed:
            self.held += n

    def give(self, n: int) -> None:
        with self._changed:
            self.held -= n
            self._changed.notify_all()
