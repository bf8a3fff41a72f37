"""Running digitising jobs (``core/digitize/job/scan_job.py``) in parallel: worker processes on this machine, or the
workers of a Dask distributed cluster. Both yield each :class:`ScanOutcome` as its scan finishes, and both read a
scan while they trace the one before (``core/digitize/job/stream.py``): a worker process of this machine runs a
reader thread beside its tracer, taking scans from one queue the workers share; a Dask worker with two threads or
more runs one task's reading while another's traces, one reading at a time (:data:`_READING`).

Devices. ``RunOptions.device`` "auto" reads on a CUDA GPU where there is one: this machine's workers take its GPUs
in turn (worker i the GPU i modulo their count), a Dask worker the GPU it sees (start one worker a GPU, each seeing
its own: ``CUDA_VISIBLE_DEVICES=i dask worker … --nthreads 2``, or dask-cuda's cluster).

Threads. The network's convolutions and OpenCV spread over threads; N workers each running every core's worth
of threads would fight over the cores. So a thread budget (default: the machine's cores) is split among the
workers: 2 workers on 4 cores run 2 threads each.

The model is read once per worker, not once per scan. On this machine each worker process loads it from its
path when it starts. On a cluster the scans and calibrations are read by the workers from their own file system
(a path the workers see: a shared disk), while the model's bytes are sent once to every worker
(``Client.scatter(broadcast=True)``) and each worker keeps the loaded network for the tasks that follow.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import queue
import shutil
import tempfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from core.digitize.job.scan_job import ReadOptions, ScanJob, ScanOutcome, digitize_file


@dataclass(frozen=True)
class RunOptions:
    """What every job of a batch shares: the model file (None: the classical tracer), precision, memory."""

    model: str | None = None
    precision: str = "model"
    threads: int = 0  # per worker; 0: leave the worker's own default (a cluster worker knows its machine)
    memory_ceiling: int | None = None  # bytes per worker; None: 90 % of what is available, split among workers
    device: str = "cpu"  # "cpu", "cuda" or "auto" (a GPU where there is one)


def thread_split(jobs: int, threads: int | None = None) -> tuple[int, int]:
    """(workers, threads per worker) for ``jobs`` workers within ``threads`` threads (default: every core)."""
    total = max(1, threads or os.cpu_count() or 1)
    workers = max(1, min(jobs, total))
    return workers, max(1, total // workers)


# -- one worker's state: the model loaded once, the threads set once ------------------------------------------

_STATE: dict = {}  # key, model, precision, device, loads (how many times this process loaded a model)


def loads_here() -> int:
    """How many times this worker process has loaded a model (once, for a batch with one model)."""
    return _STATE.get("loads", 0)


def _set_threads(threads: int) -> None:
    import cv2
    import torch

    from core.common.threads import set_work_threads

    torch.set_num_threads(threads)
    cv2.setNumThreads(threads)
    set_work_threads(threads)  # the tracing's curves too (``core/common/threads.py``)


def worker_device(device: str, index: int = 0) -> str:
    """The device a worker reads on: ``device`` as asked, "auto" a CUDA GPU where there is one, and a worker of
    this machine (``index``) the GPU its turn gives it."""
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and torch.cuda.device_count() > 1:
        device = f"cuda:{index % torch.cuda.device_count()}"
    return device


def _load(options: RunOptions, model_path: str | None, index: int = 0) -> tuple:
    """(model, precision, device) for ``model_path``, loaded on the first job of this process only."""
    key = (model_path, options.precision, options.threads, options.device, index)
    if _STATE.get("key") != key:
        if options.threads:
            _set_threads(options.threads)
        model = precision = None
        device = worker_device(options.device, index)
        if model_path:
            from core.model import precision as prec
            from core.model.model_io import load_model

            model, info = load_model(model_path)
            model.to(device)
            precision = prec.for_inference(options.precision, info["precision"], device)
        _STATE.update(key=key, model=model, precision=precision, device=device, loads=_STATE.get("loads", 0) + 1)
    return _STATE["model"], _STATE["precision"], _STATE["device"]


def _read_options(options: RunOptions, model_name: str | None, loaded: tuple) -> ReadOptions:
    model, precision, device = loaded
    return ReadOptions(model=model, model_name=model_name, precision=precision, device=device,
                       memory_ceiling=options.memory_ceiling)


_READING = threading.Lock()  # one scan read at a time in a process: its other threads trace


def run_job(job: ScanJob, options: RunOptions, model_name: str | None, model_path: str | None = None) -> ScanOutcome:
    """One job in a worker (a module-level function: Dask pickles it by name). Its reading waits for any other
    task of this worker to finish reading (:data:`_READING`), so that a worker with two threads reads one scan
    while it traces another, never two at once."""
    from core.digitize.job.stream import read_ahead

    try:
        read = _read_options(options, model_name, _load(options, model_path or options.model))
    except Exception as exc:  # a model that cannot be read fails each job with the reason, not the worker
        return ScanOutcome(job.scan.name, "failed", error=f"the model cannot be loaded: {exc}")
    reading: Future = Future()
    with _READING:
        try:
            reading.set_result(read_ahead(job, read))
        except Exception as exc:  # noqa: BLE001 - the scan's failed outcome, as digitize_file words it
            reading.set_exception(exc)
    import torch

    with torch.no_grad():
        return digitize_file(job, read, reading)


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
        read = _read_options(options, model_name, _load(options, options.model, index))
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


# -- a Dask distributed cluster -------------------------------------------------------------------------------


_MODEL_FILES: dict[str, Path] = {}  # this worker's model files, by the SHA-256 of their bytes


def _sha256_of(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


def _model_on_worker(data: bytes, digest: str) -> str:
    """The model's bytes as a file on the worker (once per worker and model): ``load_model`` reads files.

    The file is this process's own: in a folder only its user can enter (``mkdtemp``, mode 0700), written
    atomically, and used again only while its bytes still hash to ``digest``. A shared name in the temporary
    folder, reused when its size was right, let another user plant a zeroed model of that size: it was read
    (exit 0, three curves all NULL) with the provenance still naming the bundled model. Bytes that do not hash
    to the digest the client sent are refused."""
    if hashlib.sha256(data).hexdigest() != digest:
        raise ValueError("the model's bytes arrived damaged: their SHA-256 is not the one the client sent")
    path = _MODEL_FILES.get(digest)
    if path is not None and _sha256_of(path) == digest:
        return str(path)
    folder = Path(tempfile.mkdtemp(prefix="welltrace-models-"))  # 0700: nobody else may write in it
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / f"{digest[:16]}.safetensors"
    tmp = folder / f".{digest[:16]}.part"
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
    _MODEL_FILES[digest] = path
    return str(path)


def run_dask_job(job: ScanJob, options: RunOptions, model_name: str | None, model_data: bytes | None,
                 digest: str | None) -> ScanOutcome:
    try:
        path = _model_on_worker(model_data, digest) if model_data is not None else None
    except (OSError, ValueError) as exc:  # no room for it, or damaged on the way: this scan fails, with why
        return ScanOutcome(job.scan.name, "failed", error=f"the model cannot be kept on the worker: {exc}")
    return run_job(job, options, model_name, path)


WORKER_WAIT_S = 60  # how long a run waits for the cluster's first worker before it says there is none
CONNECT_S = 30  # how long a run tries to reach the scheduler (Dask retries a refused connection until then)
TASK_RETRIES = 2  # a scan's task run again this often when its worker dies under it (``Client.submit(retries=)``)
RESUBMIT_PAUSE_S = 1.0  # the pause before a resubmission, times its number
RESUBMITS = 4  # ... and resubmitted this often more when its inputs were lost with the workers (the model): on a
# 2-core machine busy with other work a killed worker's replacement was lost once more before it took the task


def run_cluster(jobs: list[ScanJob], options: RunOptions, scheduler: str,
                worker_wait_s: float | None = None) -> Iterator[ScanOutcome]:
    """The jobs as one task a scan on the Dask cluster at ``scheduler`` (``tcp://HOST:8786``), each outcome as
    its task finishes. Needs the ``cluster`` extra (``pip install welltrace[cluster]``).

    Faults: no worker within ``worker_wait_s`` (default ``WORKER_WAIT_S``) is a ``TimeoutError`` (the caller says so in one line). A task
    whose worker dies is run again on another (``TASK_RETRIES``); when the model's scattered bytes were lost
    with the workers that held them (a cluster of one worker, restarted by its nanny), they are scattered
    again and the scan resubmitted, so one lost worker costs its scan's time, never the batch. Paths must be
    ones the workers see (the caller makes them absolute)."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise RuntimeError("--scheduler needs Dask's distributed scheduler: pip install 'welltrace[cluster]'") from None
    name = Path(options.model).name if options.model else None
    worker_wait_s = WORKER_WAIT_S if worker_wait_s is None else worker_wait_s
    with Client(scheduler, timeout=f"{CONNECT_S}s") as client:
        try:
            client.wait_for_workers(1, timeout=worker_wait_s)
        except TimeoutError:
            raise TimeoutError(f"no worker joined the scheduler within {worker_wait_s:g} s") from None
        data = Path(options.model).read_bytes() if options.model else None
        digest = hashlib.sha256(data).hexdigest() if data is not None else None

        def scatter():
            if data is None:
                return None
            [ref] = client.scatter([data], broadcast=True, hash=False)  # once to every worker
            return ref

        # every scattered copy is held until the run ends: a released one cancels the tasks still waiting on it
        # ("cancelled for reason: already forgotten")
        refs = [scatter()]

        def submit(job: ScanJob):
            return client.submit(run_dask_job, job, options, name, refs[-1], digest, pure=False,
                                 retries=TASK_RETRIES)

        pending = {submit(job): (job, 0) for job in jobs}
        stream = dask_completed(list(pending))
        watch = _Watch(client, worker_wait_s)
        for fut in watch.completed(stream):
            job, tries = pending.pop(fut)
            try:
                outcome = watch.result(fut)
            except ClusterLost:
                raise
            except Exception as exc:  # noqa: BLE001 - a scan's own failure is an outcome (``digitize_file`` never
                # raises), so anything raised here is the cluster's: the worker died, or its inputs went with one
                if tries >= RESUBMITS:
                    yield ScanOutcome(job.scan.name, "failed", error=f"its worker stopped: {type(exc).__name__}: {exc}")
                    continue
                # the task lost its inputs with a worker ("lose scattered data, which can't be recovered"): scatter
                # the model's bytes again after a pause that grows with each try (scattered at once they went to
                # the dead worker still on the scheduler's books and were lost again with it), then resubmit.
                # Decided by the result, not ``fut.status``, which can still read pending when the result raises
                time.sleep(RESUBMIT_PAUSE_S * (tries + 1))
                if data is not None and (fut.status == "cancelled" or not _held(client, refs[-1])):
                    refs.append(scatter())
                again = submit(job)
                pending[again] = (job, tries + 1)
                stream.add(again)
                continue
            yield outcome


WATCH_POLL_S = 0.25  # how often a cluster run looks whether a task finished, and whether a worker is left


class ClusterLost(TimeoutError):
    """The cluster has had no worker for longer than a run waits: its tasks would wait forever."""


class _Watch:
    """Waiting on a cluster's tasks while it can still run them: once no worker is left (the last one died or was
    retired) and none joins within ``worker_wait_s``, :class:`ClusterLost`; a scheduler gone raises what asking it
    raises (``OSError``). Without it a run whose last worker left waited forever."""

    def __init__(self, client, worker_wait_s: float):
        self.client, self.wait_s, self.alone_since = client, worker_wait_s, None

    def check(self) -> None:
        if self.client.nthreads():  # a call to the scheduler
            self.alone_since = None
            return
        self.alone_since = self.alone_since or time.monotonic()
        if time.monotonic() - self.alone_since > self.wait_s:
            raise ClusterLost(f"the cluster has had no worker for {self.wait_s:g} s (the last one stopped)")

    def completed(self, stream):
        """The futures of ``stream`` (``distributed.as_completed``) as they finish."""
        while not stream.is_empty():
            if stream.has_ready():
                yield from stream.next_batch(block=False)
                continue
            self.check()
            time.sleep(WATCH_POLL_S)

    def result(self, fut):
        """A finished future's result. It may be lost again before it is read (its worker left with the result
        it held): then it waits for a worker to compute it again, as long as one may come."""
        while True:
            try:
                return fut.result(timeout=4 * WATCH_POLL_S)
            except TimeoutError:
                self.check()


def _held(client, ref) -> bool:
    """Whether a worker of the cluster still holds a scattered future's data (a future the scheduler has
    forgotten with its worker raises when asked)."""
    try:
        return bool(client.who_has(ref).get(ref.key))
    except Exception:  # noqa: BLE001 - distributed's CancelledError and the like: not held
        return False
