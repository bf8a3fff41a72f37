"""The budget planner's own process: predictions that never hold the desktop's GIL.

Predicting the budget traces the network on small probe inputs: seconds of
Python-heavy PyTorch work the first time for a preset. Run in a thread of the
desktop process it takes the interpreter lock in turns with the UI thread, and
while a training run is also starting (a user who clicks Train as soon as the
dock opens) the event loop was measured stalling 117-127 ms on a 2-core CPU.
So the prediction runs in one long-lived spawned process at a lower priority;
the dock's worker thread only waits for its answer (waiting releases the lock).
The process keeps its probe cache warm, so a re-plan while the ceiling is
dragged costs tens of milliseconds.

Kept free of Qt: the spawned process imports this module and the engine only.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from core.common.errors import InputError

from .training_child import CHILD_NICENESS

_pool: ProcessPoolExecutor | None = None
_lock = threading.Lock()


def _start_planner() -> None:
    """Initialiser of the planner process: below the desktop's priority, one compute thread."""
    import torch

    if hasattr(os, "nice"):
        try:
            os.nice(CHILD_NICENESS)
        except OSError:
            pass
    torch.set_num_threads(1)


def predict_modes(preset_name: str, classes: int, width: int, height: int, batch: int, ceiling: int) -> dict:
    """Predicted terms of one step per precision mode, and the plan (in the planner process)."""
    from core.engine.budget import Levers, plan, predict
    from core.model.network import preset
    from core.model.precision import RESOLVED

    cfg = preset(preset_name, classes)
    out = {"terms": {m: predict(cfg, width, height, Levers(m), batch).as_dict() for m in RESOLVED}}
    out["plan"] = plan(cfg, width, height, ceiling, precision="bf16", batch=batch).as_dict()
    return out


def in_planner(fn, *args):
    """Run ``fn(*args)`` in the planner process and wait for its result (call from a worker thread).

    The process starts with the first call. If it dies (killed, out of memory)
    the call fails with a clear error and the next call starts a fresh one.
    """
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_start_planner)
        pool = _pool
    try:
        return pool.submit(fn, *args).result()
    except BrokenProcessPool as exc:
        with _lock:
            if _pool is pool:
                _pool = None
        raise InputError(None, "the budget planner process ended unexpectedly; the next change re-plans") from exc


def predict_in_planner(preset_name: str, classes: int, width: int, height: int, batch: int, ceiling: int) -> dict:
    """:func:`predict_modes` in the planner process (a :class:`app.workers.Task` function)."""
    return in_planner(predict_modes, preset_name, classes, width, height, batch, ceiling)


def stop_planner() -> None:
    """End the planner process (closing the app); a prediction under way is abandoned."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
