"""One worker of a batch, wherever it runs (a process of this machine: ``local_workers.py``; a Dask worker:
``dask_cluster.py``): what the batch's jobs share (:class:`RunOptions`), the threads each worker may take, the
device it reads on, the model loaded once per worker, and one job run with its reading apart from its tracing.

Devices. ``RunOptions.device`` "auto" reads on a CUDA GPU where there is one: this machine's workers take its GPUs
in turn (worker i the GPU i modulo their count), a Dask worker the GPU it sees (start one worker a GPU, each seeing
its own: ``CUDA_VISIBLE_DEVICES=i dask worker … --nthreads 2``, or dask-cuda's cluster).

Threads. The network's convolutions and OpenCV spread over threads; N workers each running every core's worth
of threads would fight over the cores. So a thread budget (default: the machine's cores) is split among the
workers: 2 workers on 4 cores run 2 threads each (:func:`thread_split`). A Dask worker's tasks take the threads
that worker was started with (``dask_cluster.py: task_threads``).

The model is read once per worker, not once per scan (:func:`load_once`): a worker process of this machine loads
it from its path when it starts, a Dask worker from the bytes sent to it once.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass

from core.digitize.job.scan_job import ReadOptions, ScanJob, ScanOutcome, digitize_file


@dataclass(frozen=True)
class RunOptions:
    """What every job of a batch shares: the model file (None: the classical tracer), precision, memory."""

    model: str | None = None
    precision: str = "model"
    threads: int = 0  # per worker; 0: a Dask worker's own (``dask_cluster.py: task_threads``), else each library's
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


def load_once(options: RunOptions, model_path: str | None, index: int = 0) -> tuple:
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


def read_options(options: RunOptions, model_name: str | None, loaded: tuple) -> ReadOptions:
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
        read = read_options(options, model_name, load_once(options, model_path or options.model))
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
