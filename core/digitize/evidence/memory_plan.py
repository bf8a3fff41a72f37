"""The memory a network's reading of a scan takes on a CPU, planned before it starts: the longest window along depth
under a ceiling, and whether two windows may be read at once (``evidence/network.py: predict_windows``).

Predicted peak = the process before the reading (its resident size) + the coded maps and class mask kept for the
whole scan + the windows' forwards (``core/model/footprint.py``: their live tensors, or the span of the heap kept
between windows) + the stitching's float buffers + the first forward's runtime buffers. A streamed folder's gate
(``core/digitize/job/memory_gate.py``) plans each reading with the same function.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import torch

from core.common.sysmem import available_memory, forward_heap_kept, proc_status
from core.common.vocabulary import GIB
from core.digitize.evidence.network import WINDOW_PX, Windowing, kept_classes
from core.model.footprint import load_forward, predict_forward_span, window_for
from core.model.network import NetConfig

# a first forward's resident rise beyond the tensors it holds (oneDNN's primitive cache and reordered weights,
# the threads' buffers): 112-114 MiB at 640 and 1,664 px across in the NCHW layout; in channels-last it varies
# from run to run, 66-171 MiB over four fresh runs at 640 px across (VmHWM, 2-core EPYC): the plan takes the most
RUNTIME_OVERHEAD = 176 * 1024**2


@dataclass
class MemoryPlan:
    """The window a memory ceiling allows, how many windows are read at once, and the peak resident memory predicted
    for reading the scan."""

    window: Windowing
    ceiling: int
    resident: int  # the process before the network reads the scan (image, model, libraries)
    maps: int  # the coded maps and the class mask kept for the whole scan
    forward: int  # the windows' forwards at their peak, or the heap their windows keep (``footprint.predict_forward_span``)
    stitching: int  # the float buffers of the windows not yet settled
    heap_kept: bool = False  # whether ``forward`` is the kept heap's span (``sysmem.freed_blocks_reused``)
    at_once: int = 1  # windows read at the same time (``predict_windows``): ``forward`` and ``stitching`` count each

    @property
    def predicted_peak(self) -> int:
        return self.resident + self.maps + self.forward + self.stitching + RUNTIME_OVERHEAD

    def as_dict(self) -> dict:
        return {"window_px": self.window.length, "overlap_px": self.window.overlap, "ceiling": self.ceiling,
                "resident": self.resident, "maps": self.maps, "forward": self.forward, "stitching": self.stitching,
                "heap_kept": self.heap_kept, "at_once": self.at_once, "runtime": RUNTIME_OVERHEAD,
                "predicted_peak": self.predicted_peak}


class MemoryCeilingError(ValueError):
    """Not even the shortest window fits under the ceiling."""


def default_ceiling() -> int:
    """What digitising may use unless told: the memory the machine has available now, less a tenth for the
    rest of the system."""
    return int(0.9 * available_memory())


# Windows read at once where two may be (below), unless ``WELLTRACE_WINDOWS_AT_ONCE`` says 1 or 2. One: two at once
# took a third less CPU on KGS under load, but on the quiet 2-core EPYC it saved only 1-2 s of KGS's 22-23 s while
# its peak rose to 1.82-1.89 GiB against 1.28-1.36 one at a time and d36c861's 1.78-1.81 (docs/benchmarks.md,
# issue #64, "On the quiet machine after the eighth round's merges"); with every thread's blocks in one heap
# 1.69-2.14 GiB for 0.2-0.6 s (ninth round)
DEFAULT_AT_ONCE = 1
AT_ONCE_ENV = "WELLTRACE_WINDOWS_AT_ONCE"


def windows_at_once(device_type: str = "cpu") -> int:
    """Windows a reading on this thread would read at once, memory allowing: up to two (:data:`DEFAULT_AT_ONCE`, or
    ``WELLTRACE_WINDOWS_AT_ONCE`` in the environment) on a CPU where PyTorch has two intra-op threads or more (each
    window then takes half of them: ``network._two_at_once``) and the reading is the process's main thread's
    (``digitize SCAN``, ``bench-digitize``), else one. A streamed folder's reader thread reads one at a time: the
    tracer beside it has the other core, and two windows' forwards would only make the gate wait longer for memory
    (the gated folder of the shared scans, eighth round: the same wall, twice the kernel time)."""
    asked = os.environ.get(AT_ONCE_ENV, "").strip()
    want = int(asked) if asked in ("1", "2") else DEFAULT_AT_ONCE
    main = threading.current_thread() is threading.main_thread()
    return want if device_type == "cpu" and main and torch.get_num_threads() >= 2 else 1


def plan_memory(cfg: NetConfig, shape: tuple[int, int], precision_mode: str, device_type: str = "cpu",
                ceiling: int | None = None, length: int | None = None, resident: int | None = None,
                across: int | None = None, heap_kept: bool | None = None, at_once: int | None = None) -> MemoryPlan:
    """The longest window up to ``length`` (default the training crop) whose reading of a canonical image of
    ``shape`` fits under ``ceiling`` (default :func:`default_ceiling`), predicted by the same probe-and-scale
    method as the training budget. On CUDA the forward runs in device memory: the window is planned against
    the host's ceiling for the maps only. ``heap_kept``: whether the windows' forwards keep their heap between
    windows (:func:`predict_windows` on glibc's main thread: ``sysmem.forward_heap_kept``, the default, for a
    reading on this thread); their forward then counts the heap's span, not only its live tensors.

    ``at_once`` (default :func:`windows_at_once`): the windows to read at the same time (one or two) where the
    ceiling allows them at the longest window; else one at a time (the window's length decides the maps, their
    number at once only the speed). Each window's forward and stitching are counted.
    Raises :class:`MemoryCeilingError` when no window fits."""
    h, w = shape
    kept = device_type != "cuda" and (forward_heap_kept() if heap_kept is None else heap_kept)
    band = across or h  # the rows the network reads (``evidence_band``); the maps cover every row
    ceiling = default_ceiling() if ceiling is None else int(ceiling)
    if device_type != "cuda":
        load_forward(cfg, precision_mode)  # the fit, and what a first forward loads, before the resident size
    resident = proc_status().get("VmRSS", 0) if resident is None else int(resident)
    maps = (2 * len(kept_classes(cfg.classes)) + 1) * h * w
    shortest = Windowing.for_model(cfg, 0)
    want = Windowing.for_model(cfg, length or WINDOW_PX)

    def stitching(win: Windowing, n: int = 1) -> int:  # the settling buffer and the windows' probabilities
        return 2 * n * cfg.classes * band * (win.length + win.overlap) * 4

    def forward(win: Windowing, n: int = 1) -> int:
        if device_type == "cuda":
            return 0
        # the second window's forward runs on a helper thread under the same heap settings: its arena kept 1.0-1.45
        # × its live tensors over KGS's 13 windows (two runs, eighth round), within the first's span ratio
        return n * predict_forward_span(cfg, band, min(w, win.length), precision_mode, heap_kept=kept)

    def plan(win: Windowing, n: int = 1) -> MemoryPlan:
        return MemoryPlan(win, ceiling, resident, maps, forward(win, n), stitching(win, n), kept, n)

    n = windows_at_once(device_type) if at_once is None else max(1, int(at_once))
    if n > 1 and device_type != "cuda" and w > want.length and plan(want, n).predicted_peak <= ceiling:
        return plan(want, n)
    if device_type == "cuda" or plan(want).predicted_peak <= ceiling:
        return plan(want)
    # the longest window that fits: each length's own stitching subtracted (the search's room counted the wanted
    # window's stitching, and refused at the margin windows whose own prediction fits)
    fixed = ceiling - resident - maps - RUNTIME_OVERHEAD
    fits = window_for(cfg, band, fixed - stitching(want), precision_mode, heap_kept=kept)
    while True:
        longer = Windowing.for_model(cfg, fits + cfg.stride)
        if longer.length >= want.length or plan(longer).predicted_peak > ceiling:
            break
        fits = longer.length
    if fits >= shortest.length and plan(Windowing.for_model(cfg, fits)).predicted_peak <= ceiling:
        return plan(Windowing.for_model(cfg, fits))
    raise MemoryCeilingError(f"reading this scan needs at least {plan(shortest).predicted_peak / GIB:.2f} GiB "
                             f"(windows of {shortest.length} px along depth over {band} px across); the ceiling is "
                             f"{ceiling / GIB:.2f} GiB")
