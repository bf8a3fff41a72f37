"""The training dock's child process: runs the engine and sends its events back.

Kept free of Qt so the spawned child starts by importing the engine only (a
spawned child imports the module of its target; the dock's module would drag
PySide6 and pyqtgraph into a process that never shows a window).
"""

from __future__ import annotations

import os
import threading
import traceback

from core.common.errors import InputError

# How much lower than the desktop the training child runs (POSIX nice levels). On a machine with
# few cores the child's start (importing torch) and its steps compete with the UI thread for CPU;
# a lower priority makes the kernel hand the desktop its slice first, and costs training nothing
# when the desktop is idle.
CHILD_NICENESS = 10


def lower_priority(pid: int) -> None:
    """Lower a child's scheduling priority right after it starts (no-op where unsupported)."""
    if not hasattr(os, "setpriority"):
        return
    try:
        own = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, pid, min(19, own + CHILD_NICENESS))
    except OSError:
        pass  # not permitted or already gone: the run goes on at normal priority


MEMORY_REPORT_S = 1.0  # how often the child reports its memory to the app's gauge, between and during steps


def report_memory(events, stop: threading.Event, every_s: float = MEMORY_REPORT_S) -> None:
    """Put the process's memory (``core.engine.memory.training_memory``) on ``events`` every ``every_s`` seconds
    until ``stop``: the app's gauge follows the training live, through a step of a minute and through validation,
    where step events alone would leave it still. On CUDA once the run has started it (the first step's
    allocations), on the CPU before."""
    import torch

    from core.common.events import MemoryEvent
    from core.engine.memory import training_memory

    while not stop.wait(every_s):
        try:
            events.put(MemoryEvent(training_memory("cuda" if torch.cuda.is_initialized() else "cpu")))
        except (OSError, ValueError, RuntimeError):
            return  # the queue is closed (the run is over) or the device is gone: nothing more to report


def _run_in_child(events, what: str, run) -> None:
    """Send every event ``run()`` yields back to the parent, and the process's memory every second beside them;
    a failure becomes one line for the panel."""
    import torch

    # leave a core to the desktop: torch's intra-op workers would otherwise take every core
    torch.set_num_threads(max(1, (os.cpu_count() or 2) - 1))
    done = threading.Event()
    reporter = threading.Thread(target=report_memory, args=(events, done), name="welltrace-memory", daemon=True)
    reporter.start()
    try:
        for ev in run():
            events.put(ev)
    except InputError as exc:
        events.put(("crashed", exc.one_line()))
    except BaseException as exc:  # noqa: BLE001 - reported in the panel, never a dead app
        traceback.print_exc()
        events.put(("crashed", f"{what} failed: {type(exc).__name__}: {exc}"))
    finally:
        done.set()
        reporter.join(5.0)  # its last report before the end: "exit" is the last item on the queue
        events.put(("exit", None))


def train_in_child(cfg, events, stop) -> None:
    """Child-process entry: run the engine's training generator, send every event back."""
    from core.engine.train import Trainer

    _run_in_child(events, "training", lambda: Trainer(cfg, StopFlag(stop)).run())


def adapt_in_child(cfg, events, stop) -> None:
    """Child-process entry for *Adapt model to this project*: run ``core.engine.adapt`` and send every event back
    (its before/after report last)."""
    from core.engine.adapt import adapt

    _run_in_child(events, "adapting", lambda: adapt(cfg, StopFlag(stop)))


class StopFlag:
    """The engine's ``stop`` interface (``is_set``) over a multiprocessing event."""

    def __init__(self, ev):
        self.ev = ev

    def is_set(self) -> bool:
        return self.ev.is_set()

    def set(self) -> None:
        self.ev.set()
