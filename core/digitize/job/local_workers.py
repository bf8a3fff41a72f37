"""A batch's jobs over worker processes of this machine, each outcome as its scan finishes. Each worker reads a
scan while it traces the one before (``core/digitize/job/stream.py``): a reader thread beside its tracer, taking
scans from one queue the workers share. Each worker loads the model from its path once when it starts
(``worker.py: load_once``) and takes its share of the threads (``worker.py: thread_split``); it ends with the run
that started it, however that ends (:func:`die_with_parent`)."""

from __future__ import annotations

import os
import queue
import time
from pathlib import Path
from typing import Iterator

from core.digitize.job.scan_job import ScanJob, ScanOutcome
from core.digitize.job.worker import RunOptions, load_once, read_options

PARENT_POLL_S = 0.5  # how often a worker looks whether the run that started it is still there


def die_with_parent() -> None:
    """A worker's initializer: end this process when the run that started it ends, however it ends (kill -9
    included: the pool's own shutdown never runs then, and its workers finished the batch and lingered at
    0.5 GB each). A daemon thread watches the parent's pid; once this process is handed to another parent,
    it exits at once, its unfinished outputs never renamed into place (``outputs_together``)."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(3)

    threading.Thread(target=watch, name="welltrace-parent-watch", daemon=True).start()


WAIT_S = 0.5  # how often the run looks whether a worker died, while it waits for outcomes
STOP_WAIT_S = 5.0  # how long an interrupted run waits for its workers to clean up and exit before killing them


def run_local(jobs: list[ScanJob], options: RunOptions, workers: int) -> Iterator[ScanOutcome]:
    """The jobs over ``workers`` worker processes of this machine, each outcome as its scan finishes. Each worker
    takes scans from one queue as it can start them and reads the next while it traces one (``stream.py``).
    Workers are started fresh (``spawn``): a forked copy of a process whose math libraries already started
    threads can hang. Each ends with the run (``die_with_parent``). A worker that dies fails the scans it held
    (the one it traced, the one it read ahead) with the reason; the others go on with the rest. Interrupted
    (Ctrl-C) or stopped early, the workers are stopped (:func:`_stop_workers`): none takes another scan."""
    import multiprocessing

    name = Path(options.model).name if options.model else None
    ctx = multiprocessing.get_context("spawn")
    todo, done = ctx.Queue(), ctx.Queue()
    for i, job in enumerate(jobs):
        todo.put((i, job))
    for _ in range(workers):
        todo.put(None)  # one stop a worker
    procs = [ctx.Process(target=_stream_worker, args=(todo, done, options, name, w), name=f"welltrace-worker-{w}",
                         daemon=True) for w in range(workers)]
    for p in procs:
        p.start()
    held: dict[int, set[int]] = {w: set() for w in range(workers)}
    left = set(range(len(jobs)))
    try:
        while left:
            try:
                message = done.get(timeout=WAIT_S)
            except queue.Empty:
                yield from _the_dead(procs, held, left, jobs, done)
                continue
            outcome = _handle(message, held, left)
            if outcome is not None:
                yield outcome
    except BaseException:  # Ctrl-C, the caller stopped reading (GeneratorExit), or a fault of the run itself
        _stop_workers(procs)
        raise
    finally:
        todo.cancel_join_thread()  # scans left in it (every worker gone) must not hold this process at its exit
        for p in procs:
            p.join(timeout=5 if not left else 0)
            if p.is_alive():
                p.terminate()


def _stop_workers(procs: list) -> None:
    """Interrupt the workers' current scans (SIGINT: their temporaries removed as it unwinds, then the worker
    exits: :func:`_stream_worker`), wait up to :data:`STOP_WAIT_S` for them to exit, then kill what is left.
    SIGINT sent to the run alone (not the terminal's group) let all 9 queued scans be digitised."""
    import signal

    for proc in procs:
        if proc.is_alive():
            try:
                os.kill(proc.pid, signal.SIGINT)
            except (ProcessLookupError, TypeError):
                pass
    deadline = time.monotonic() + STOP_WAIT_S
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()  # a worker deep in native code: its hidden temporaries go with the next run
            proc.join(1.0)


def _handle(message: tuple, held: dict, left: set) -> ScanOutcome | None:
    """A worker's message: it took a scan (None), or a scan's outcome."""
    kind, worker, i, outcome = message
    if kind == "took":
        held[worker].add(i)
        return None
    held[worker].discard(i)
    left.discard(i)
    return outcome


def _the_dead(procs: list, held: dict, left: set, jobs: list[ScanJob], done) -> Iterator[ScanOutcome]:
    """The outcomes a dead worker still owes: what it said before it died first, then its scans failed; and,
    with every worker gone, the scans none took."""
    dead = [w for w, p in enumerate(procs) if not p.is_alive()]
    if not dead:
        return
    while True:  # what it (or another) said before it died
        try:
            outcome = _handle(done.get_nowait(), held, left)
        except queue.Empty:
            break
        if outcome is not None:
            yield outcome
    for w in dead:
        for i in sorted(held[w]):
            left.discard(i)
            yield ScanOutcome(jobs[i].scan.name, "failed",
                              error=f"its worker stopped (exit code {procs[w].exitcode})")
        held[w].clear()
    if len(dead) == len(procs):
        for i in sorted(left):
            yield ScanOutcome(jobs[i].scan.name, "failed", error="no worker was left to digitise it")
        left.clear()


def _stream_worker(todo, done, options: RunOptions, model_name: str | None, index: int) -> None:
    """A worker process: the model loaded once, then the scans the shared queue gives it, each read while the one
    before is traced (``stream.streamed``); what it takes and each outcome go back on ``done``. Interrupted, it
    exits (status 130) without taking another scan."""
    from core.digitize.job.stream import streamed

    die_with_parent()
    try:
        read = read_options(options, model_name, load_once(options, options.model, index))
    except Exception as exc:  # a model that cannot be read fails each job with the reason, not the worker
        read, reason = None, f"the model cannot be loaded: {exc}"

    def taken():
        while (item := todo.get()) is not None:
            done.put(("took", index, item[0], None))
            yield item

    try:
        if read is None:
            for i, job in taken():
                done.put(("done", index, i, ScanOutcome(job.scan.name, "failed", error=reason)))
            return
        for i, outcome in streamed(taken(), read):
            done.put(("done", index, i, outcome))
    except KeyboardInterrupt:
        # interrupted (the terminal's Ctrl-C reaches every process of the run; the run sends SIGINT itself when it
        # alone was): the scan's temporaries were removed as the interrupt unwound; the worker exits at once
        # instead of taking the next scan, its reader thread (a daemon) with it
        os._exit(130)
