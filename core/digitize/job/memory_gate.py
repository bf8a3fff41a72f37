"""A streamed folder's reader waits for memory: the next scan is read only when it fits beside what the scans
already read hold, and a scan that cannot be read and traced under the ceiling even alone is refused before it is
read.

A worker of a streamed folder (``stream.py``) reads the next scan while it traces one. Read at once, the two
add up: on the shared scans the folder peaked at 2.64 GiB while its tallest scan alone is traced in 1.85 GiB (a
reader holding the next scan's page and maps beside it), over the 2 GiB a worker is planned to. Before it reads
a scan the reader asks for the scan's memory from its read to its LAS (:func:`scan_memory`: its load, page stage,
reading, maps kept and tracing, predicted from its header and its calibration, the reading by the network's memory
plan, ``core/digitize/evidence/memory_plan.py: plan_memory``). Where the process's own plus the largest of those
passes the ceiling, the scan is refused there, the figure named (``stream._refuse_beyond``). Otherwise the gate
(:class:`MemoryGate`) lets its reading start when the larger of its page stage and its reading, on top of what the
scans read and not yet traced hold (their pictures, pages and maps, and the tracing each still has ahead of it),
fits under the ceiling, or when nothing is held; the reader waits for the tracer to finish a scan meanwhile, and
the worker reads and traces in turn until the memory allows again.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

# What a scan holds from its read to its LAS, stage by stage, over the process's own (its libraries, its model),
# predicted from its header and calibration (``scan_memory``):
#
# - the picture's load (``core/io/scan.py: load_scan``): Pillow's image, a colour scan's RGB conversion and copies;
# - the page stage (``pipeline._ink_grid_body``): the picture, the parts read before, the part's canonical copy,
#   and the ink's float maps (the darkness, the paper tone and its dilation, the grid's profiles) over it;
# - the reading: the picture, the parts before, the canonical copy and the ink, then the network's plan
#   (``memory_plan.plan_memory``: maps, the windows' forwards, the stitching, the runtime's buffers);
# - the tracing, to the files written: the picture and every part's pages (maps and ink), then the trace stage
#   (the largest track's band decoded and damped, the Viterbi's back-pointers: ``rules/curve.py``), each ink-coloured
#   curve's own evidence (``evidence/colour.py``: a float32 band a curve, held to the trace's signals, and its two
#   inks' bands where its backup scale has an ink of its own; scored a few rows at a time), the results and QC pages.
#
# The figures per pixel are the largest measured over the shared scans and three archive scans of other sizes and
# kinds (``tools/scan_memory_check.py``: each scan in a fresh worker-like process warmed by a first scan, its
# resident peak per stage over the process's own; 2-core EPYC, 2026-11-28; docs/benchmarks.md, issue #64's ninth
# round), rounded up: the gate must not predict under a stage's peak (a ceiling passed), and over it only waits.
#
# the picture's decoding at its peak, per pixel of the scan: 11.8 B/px (palette, the tallest shared scan), 5.6 (KGS's
# 1 bit)
LOAD_COLOUR_BYTES_PER_PX = 12
LOAD_GREY_BYTES_PER_PX = 6
COLOUR_BYTES_PER_PX = 3  # a colour scan keeps its RGB pixels beside the grey (``core/io/scan.py``)
# what the load leaves resident beyond the picture's arrays once its freed heap is handed back, per pixel of the
# scan, as the page stage and the reading start: 1.3-2.2 B/px (grey, palette), 2.2-4.7 (RGB); once the scan is read
# (the reader's heap handed back), 0.4-0.8 (grey, palette) and up to 2.5 (RGB)
RESIDUE_GREY_BYTES_PER_PX = 2.5
RESIDUE_RGB_BYTES_PER_PX = 5
RESIDUE_KEPT_GREY_BYTES_PER_PX = 1.5  # 1.14 on KGS in the ninth round, part two (287 MiB kept; main alike)
RESIDUE_KEPT_RGB_BYTES_PER_PX = 3
# the page stage's floats over its canonical copy, per canonical pixel of the part: 7.1-12.3 B/px measured
PAGE_BYTES_PER_PX = 13
INK_BYTES_PER_PX = 1  # the page's darkness, kept for the pens' patterns (``pipeline.PageRead.ink``)
# the tracing's rise over what the scan keeps read, to its files written: a fixed part (the confidence model, the LAS
# and QC writers' buffers: 71 MiB on the smallest shared scan), per pixel of each band traced at once (its float32
# band, the float64 damping it is multiplied into, the int32 back-pointers: 16.7-21.7 B/px on KGS and the tallest
# all told; 34 B/px was reserved before the ninth round, the band then copied three times at once; the largest bands,
# as many as the process has work threads, since the curves' pieces are traced over them), per canonical pixel
# of every part (each result's class mask in the scan's frame, the QC pages drawn), and per pixel of every
# ink-coloured curve's track band: its float32 evidence held (and its two inks' where it has two), with what making
# one band takes beside them (the page's style map decoded over it and the weighing: ``colour.combine``). Before
# the bands were scored a few rows at a time, one band's scoring held ~80 B/px of temporaries (724 MiB on the
# archive mud log's 147 x 63,800 band) and this figure was 15 B/px; see docs/benchmarks.md, #64's ninth round, part
# two, for the measured rise per megapixel of coloured bands
TRACE_FIXED_BYTES = 100 * 1024**2
TRACE_BYTES_PER_BAND_PX = 13
RESULT_BYTES_PER_PX = 3
INK_MAP_BYTES_PER_PX = 5  # per pixel of each ink map held over a coloured curve's band (4: its float32)
INK_MAKING_BYTES_PER_PX = 8  # per pixel of the largest coloured band, while its evidence is made
PALETTE_MODES = ("P", "PA")  # colour modes (``core/io/scan.py: COLOUR_MODES``) not converted to RGB arrays on load

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
    from core.common.threads import work_threads
    from core.digitize.evidence.memory_plan import plan_memory
    from core.digitize.evidence.network import evidence_band
    from core.io.calibration import Calibration
    from core.io.scan import COLOUR_MODES, read_info
    from core.model import precision as prec

    info = read_info(job.scan)
    calib = Calibration.load(job.calib)
    shape = (info.height, info.width)
    colour = info.mode in COLOUR_MODES
    px = info.width * info.height
    load = px * (LOAD_COLOUR_BYTES_PER_PX if colour else LOAD_GREY_BYTES_PER_PX)
    rgb = colour and info.mode not in PALETTE_MODES
    kept = int(px * (1 + (COLOUR_BYTES_PER_PX if colour else 0)
                     + (RESIDUE_KEPT_RGB_BYTES_PER_PX if rgb else RESIDUE_KEPT_GREY_BYTES_PER_PX)))
    picture = int(px * (1 + (COLOUR_BYTES_PER_PX if colour else 0)  # as the page stage and the reading start
                        + (RESIDUE_RGB_BYTES_PER_PX if rgb else RESIDUE_GREY_BYTES_PER_PX)))
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
    pages = reading = tracing = canon_px = ink_maps_px = inked_band = 0
    page = load
    for part, cols in parts:
        cols = max(cols, 1)
        px = across * cols
        canon_px += px
        page = max(page, picture + pages + px + PAGE_BYTES_PER_PX * px)
        lo, hi = evidence_band([c.track for c in part.curves], across, cfg)
        # read on the worker's reader thread (``stream.py``), one window at a time (``memory_plan.windows_at_once``),
        # whatever thread asks; its forwards counted as the span of a kept heap: glibc keeps the freed blocks in the
        # reader thread's own arena between windows as on the main thread (KGS's reading measured 948 MiB over the
        # process, 789 predicted from the live tensors alone, 1,132 from the kept span). Its resident: the
        # process's, the picture, the parts read before, this part's canonical copy and ink
        before = picture + pages + px + INK_BYTES_PER_PX * px
        plan = plan_memory(cfg, (across, cols), mode, device, ceiling=ceiling, length=read.tile,
                           resident=base + before, across=hi - lo, heap_kept=True, at_once=1)
        reading = max(reading, plan.predicted_peak - base)
        pages += plan.maps + INK_BYTES_PER_PX * px
        rows = [(c, min(hi_, across - 1) - max(lo_, 0) + 1) for c in part.curves for lo_, hi_ in [c.track_rows()]]
        # the curves' pieces are traced over the process's threads (``rules/all_curves.trace_all``): as many bands
        # at once as it has threads, the largest ones at worst
        at_once = sorted((n for _, n in rows), reverse=True)[: work_threads()]
        tracing = max(tracing, TRACE_BYTES_PER_BAND_PX * sum(at_once) * cols)
        if colour:  # a curve with a backup ink holds its two inks' maps beside its own
            ink_maps_px += sum(n * (3 if c.backup_colour else 1) for c, n in rows if c.colour) * cols
            inked_band = max([inked_band] + [n * cols for c, n in rows if c.colour])
    tracing += (TRACE_FIXED_BYTES + RESULT_BYTES_PER_PX * canon_px + INK_MAP_BYTES_PER_PX * ink_maps_px
                + INK_MAKING_BYTES_PER_PX * inked_band)
    return ScanMemory(reading, kept + pages, tracing, page)


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
