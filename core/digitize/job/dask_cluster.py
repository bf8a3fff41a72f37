"""A batch's jobs on a Dask distributed cluster: one task a scan, each outcome as its task finishes. A Dask worker
with two threads or more runs one task's reading while another's traces, one reading at a time
(``worker.py: run_job``). Needs the ``cluster`` extra (``pip install welltrace[cluster]``).

The scans and calibrations are read by the workers from their own file system (a path the workers see: a shared
disk), while the model's bytes are sent once to every worker (``Client.scatter(broadcast=True)``) and each worker
keeps the loaded network for the tasks that follow (``worker.py: load_once``).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from core.digitize.job.scan_job import ScanJob, ScanOutcome
from core.digitize.job.worker import RunOptions, run_job

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


def _calibrator_on_worker(model_path: str, data: bytes | None) -> None:
    """The model's own calibrator (``confidence_model.sidecar_path``: the client's ``M.confidence.json``) beside the
    worker's copy of the model, where its reads find it (``calibrator_beside``: used while it names the model's
    digest), or none there where the client has none: a worker reads the model's confidence as the client's machine
    would. Written atomically each task (a refit between two runs of one model is the one read)."""
    from core.common.atomic import atomic_write_bytes
    from core.digitize.rules.confidence_model import sidecar_path

    side = sidecar_path(model_path)
    if data is None:
        side.unlink(missing_ok=True)
    else:
        atomic_write_bytes(side, data)


def task_threads(asked: int, worker_nthreads: int | None) -> int:
    """The threads a scan's task works with on a Dask worker (the network's, OpenCV's and the tracing's curves'):
    ``--threads`` where it was given (``asked``), else the threads the worker process was started with
    (``dask worker --nthreads N``: distributed's ``nthreads``), as a process of this machine takes its share
    (``worker.py: thread_split``); 0 (each library's own default) outside a Dask worker. Left to the defaults, a
    worker started with one thread on the 2-core EPYC ran OpenCV and the tracing's curves on 2 threads each, every
    core the process may run on (PyTorch on 1: the nanny's ``OMP_NUM_THREADS=1``); now on 1, and all three on 2
    with ``--threads 2``."""
    if asked:
        return asked
    return max(1, worker_nthreads) if worker_nthreads else 0


def _worker_nthreads() -> int | None:
    """The threads of the Dask worker running this task; None outside one (a task called in this process)."""
    try:
        from distributed import get_worker

        return get_worker().state.nthreads
    except (ImportError, ValueError):  # no distributed, or "No worker found"
        return None


def run_dask_job(job: ScanJob, options: RunOptions, model_name: str | None, model_data: bytes | None,
                 digest: str | None, calibrator: bytes | None = None) -> ScanOutcome:
    try:
        path = _model_on_worker(model_data, digest) if model_data is not None else None
        if path is not None:
            _calibrator_on_worker(path, calibrator)
    except (OSError, ValueError) as exc:  # no room for it, or damaged on the way: this scan fails, with why
        return ScanOutcome(job.scan.name, "failed", error=f"the model cannot be kept on the worker: {exc}")
    options = replace(options, threads=task_threads(options.threads, _worker_nthreads()))
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
        from distributed import as_completed as dask_completed
    except ImportError:
        raise RuntimeError("--scheduler needs Dask's distributed scheduler: pip install 'welltrace[cluster]'") from None
    from core.digitize.rules.confidence_model import sidecar_path

    name = Path(options.model).name if options.model else None
    worker_wait_s = WORKER_WAIT_S if worker_wait_s is None else worker_wait_s
    with _connected(scheduler) as client:  # closed, its IO loop's thread joined, however the run ends
        try:
            client.wait_for_workers(1, timeout=worker_wait_s)
        except TimeoutError:
            raise TimeoutError(f"no worker joined the scheduler within {worker_wait_s:g} s") from None
        data = Path(options.model).read_bytes() if options.model else None
        digest = hashlib.sha256(data).hexdigest() if data is not None else None
        # the model's own calibrator, beside it here: sent with each task (a small file), kept beside the worker's copy
        side = sidecar_path(options.model) if options.model else None
        calibrator = side.read_bytes() if side is not None and side.is_file() else None

        def scatter():
            if data is None:
                return None
            [ref] = client.scatter([data], broadcast=True, hash=False)  # once to every worker
            return ref

        # every scattered copy is held until the run ends: a released one cancels the tasks still waiting on it
        # ("cancelled for reason: already forgotten")
        refs = [scatter()]

        def submit(job: ScanJob):
            return client.submit(run_dask_job, job, options, name, refs[-1], digest, calibrator, pure=False,
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


def _connected(scheduler: str):
    """A client of the scheduler at ``scheduler``, whose IO loop's thread is stopped and joined however its
    connecting ends. distributed closes a client that cannot connect but leaves that thread running (2026.8: after
    ``Client("tcp://127.0.0.1:9")`` refused, its "IO loop" thread was still alive), and so does a Ctrl-C while
    it connects; a command that ends at once (``core/common/fast_exit.py``) then ended with it unjoined. A run
    connected closes its client as it leaves its ``with`` block, done, failed or interrupted. The client stays the
    process's default one (distributed's ``set_as_default``): a caller that leaves the run's outcomes unread (a
    Ctrl-C in its own loop) has it closed by distributed's exit handler, which the fast exit runs too (measured:
    only the main thread left at the end)."""
    from distributed import Client

    class JoinedClient(Client):
        def start(self, **kwargs):
            try:
                super().start(**kwargs)
            except BaseException:
                try:
                    self.close()  # interrupted while connecting: still open (refused, it closed itself)
                finally:
                    self._loop_runner.stop()  # what ``close`` does last, skipped for a client already closed
                raise

    return JoinedClient(scheduler, timeout=f"{CONNECT_S}s")


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
