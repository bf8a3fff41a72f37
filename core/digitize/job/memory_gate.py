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
from typing import Callable

# What a scan holds from its read to its LAS, stage by stage, over the process's own (its libraries, its model),
# predicted from its header and calibration (``scan_memory``) and checked against the resident peaks measured
# stage by stage (``tools/scan_memory_check.py``: the shared scans and archive scans of other sizes):
#
# - the page stage (``pipeline._ink_grid_body``): the picture, the parts read before, the part's canonical copy,
#   and the ink's float maps (the darkness, the paper tone and its dilation, the grid's profiles) over it;
# - the reading: the picture, the parts before, the canonical copy and the ink, then the network's plan
#   (``memory_plan.plan_memory``: maps, one window's forward, the stitching, the runtime's buffers);
# - the tracing, to the files written: the picture and every part's pages (maps and ink), the trace stage's rise
#   over them (the track's band decoded and damped, the Viterbi's back-pointers), and the results' class masks.
#
# Bytes per canonical pixel of a part, the page stage's floats beyond its canonical copy (ink.ink_map: the float32
# darkness and the paper tone's full-size dilation beside it; grid.detect_grid's profiles): measured below
PAGE_BYTES_PER_PX = 12
# the trace stage's rise over the pages it traces, per pixel of the largest track's band (rows × columns of one
# part): the band decoded (float32), the damping it is multiplied into (float64, ``rules/curve.py: _damped_band``),
# the Viterbi's int32 back-pointers; it was 34 with the band copied three times at once (ninth round): measured below
TRACE_BYTES_PER_BAND_PX = 34
# the results' rise per canonical pixel of every part, once traced and until written: each part's class mask turned
# back to the scan's frame (``pipeline.digitize``: ``from_canonical``), the QC pages drawn
RESULT_BYTES_PER_PX = 2
COLOUR_BYTES_PER_PX = 3  # a colour scan keeps its RGB pixels beside the grey (``core/io/scan.py``)
# the picture's decoding, per pixel of the scan, at its peak (``core/io/scan.py: load_scan``): a colour or palette
# scan's Pillow image, its RGB conversion, the NumPy copy and the grey beside it; a grey one's image and copy.
# Measured (VmHWM over the load, main thread and reader thread alike, 2-core EPYC): the tallest shared scan
# (palette, 864 × 86,743) 878 MiB, 11.8 B/px; KGS (1-bit, 1,664 × 17,864) 160 MiB, 5.6 B/px
LOAD_COLOUR_BYTES_PER_PX = 12
LOAD_GREY_BYTES_PER_PX = 6
INK_BYTES_PER_PX = 1  # the page's darkness, kept for the pens' patterns (``pipeline.PageRead.ink``)


@dataclass(frozen=True)
class ScanMemory:
    """Bytes a scan takes in a streamed worker, over the process's own (libraries, model), stage by stage."""

    reading: int  # while it is read: its picture, its pages' maps and ink, one window's forward and the stitching
    kept: int  # once read, until traced: its picture, its pages' maps and ink
    tracing: int  # what tracing and writing add to ``kept``
    page: int = 0  # its page stage: the picture, the canonical copy and the ink's float maps

    @property
    def held(self) -> int:
        """What a scan read holds until its tracing ends, reserved as it is read: its tracing starts later, but
        before the next scan's reading could see it."""
        return self.kept + self.tracing

    @property
    def starting(self) -> int:
        """What its reading needs beside the scans already held: its page stage, then the network's reading."""
        return max(self.page, self.reading)

    @property
    def peak(self) -> int:
        """What the scan needs alone, from its read to its LAS: a ceiling under the process's own plus this refuses
        it before it is read."""
        return max(self.starting, self.held)

    def as_dict(self) -> dict:
        return {"page": self.page, "reading": self.reading, "kept": self.kept, "tracing": self.tracing,
                "held": self.held, "peak": self.peak}


def scan_memory(job, read, ceiling: int | None = None, base: int = 0) -> ScanMemory:
    """:class:`ScanMemory` of a job read with ``read`` (``scan_job.ReadOptions``; a network's), from its scan's
    header and its calibration: no pixel decoded. The reading is planned as the scan alone would be, under
    ``ceiling`` bytes (None: no ceiling) in a process of ``base`` resident bytes: the window it would read, so a
    gate that lets it in beside other scans only when that fits leaves its reading the window (and the maps) it has
    alone. Raises ``memory_plan.MemoryCeilingError`` where not even the shortest window's reading fits, and what
    reading the job would (a missing file, a bad calibration): the caller lets the reading say it."""
    from core.digitize.evidence.memory_plan import plan_memory
    from core.digitize.evidence.network import evidence_band
    from core.io.calibration import Calibration
    from core.io.scan import COLOUR_MODES, read_info
    from core.model import precision as prec

    info = read_info(job.scan)
    calib = Calibration.load(job.calib)
    shape = (info.height, info.width)
    colour = info.mode in COLOUR_MODES
    picture = info.width * info.height * (1 + (COLOUR_BYTES_PER_PX if colour else 0))
    load = info.width * info.height * (LOAD_COLOUR_BYTES_PER_PX if colour else LOAD_GREY_BYTES_PER_PX)
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
    ceiling = 1 << 62 if ceiling is None else int(ceiling)
    pages = reading = tracing = canon_px = 0
    page = load
    for part, cols in parts:
        cols = max(cols, 1)
        px = across * cols
        canon_px += px
        page = max(page, picture + pages + px + PAGE_BYTES_PER_PX * px)
        lo, hi = evidence_band([c.track for c in part.curves], across, cfg)
        # read on the worker's reader thread (``stream.py``), where the forwards' heap is not kept between windows
        # (``core/common/sysmem.py: freed_blocks_reused``): the reading holds their live tensors, not a kept span;
        # and one window at a time (``memory_plan.windows_at_once``), whatever thread asks. Its resident: the
        # process's, the picture, the parts read before, this part's canonical copy and ink
        before = picture + pages + px + INK_BYTES_PER_PX * px
        plan = plan_memory(cfg, (across, cols), mode, device, ceiling=ceiling, length=read.tile,
                           resident=base + before, across=hi - lo, heap_kept=False, at_once=1)
        reading = max(reading, plan.predicted_peak - base)
        pages += plan.maps + INK_BYTES_PER_PX * px
        band = max((min(hi_, across - 1) - max(lo_, 0) + 1 for lo_, hi_ in (c.track_rows() for c in part.curves)),
                   default=0)
        tracing = max(tracing, TRACE_BYTES_PER_BAND_PX * band * cols)
    return ScanMemory(reading, picture + pages, tracing + RESULT_BYTES_PER_PX * canon_px, page)


class MemoryGate:
    """What the scans read and not yet traced hold (:meth:`hold`, :meth:`give`), and the reader's wait for room
    (:meth:`admit`) under ``ceiling`` bytes, ``base`` of them the process's own: measured again by ``resident``
    (the process's resident bytes) whenever nothing is held (:meth:`rebase`), as its scans leave it larger than it
    started (the tracer's compiled kernels loaded, the network's runtime buffers: 0.1 GiB after the first scan)."""

    def __init__(self, ceiling: int, base: int, resident: Callable[[], int] | None = None):
        self.ceiling, self.base = int(ceiling), int(base)
        self.resident = resident
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

    def rebase(self) -> None:
        """With nothing held, the process's own measured again (a gate without ``resident`` keeps its ``base``)."""
        with self._changed:
            if self.resident is not None and not self.held:
                self.base = int(self.resident())

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
