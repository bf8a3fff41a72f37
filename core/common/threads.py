"""The threads a process's own work may spread over, and work spread over them in a fixed order.

The network's reading takes PyTorch's intra-op threads; the tracing after it ran on one core while the other
waited (KGS on the 2-core EPYC: 3 s of its 22-s ``digitize`` with one core idle; docs/benchmarks.md, issue #64,
ninth round). Each curve's reading of its signals, and the checks run on each curve once every curve is placed,
read the traces and the maps and write only that curve's own: spread over the threads, the results are the same
whichever thread takes which curve, and the interpreter's lock is given up in the compiled kernels and NumPy's
loops that do most of the work.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

ENV = "WELLTRACE_WORK_THREADS"
_BUDGET: list[int | None] = [None]
_POOLS: dict[tuple[str, int], ThreadPoolExecutor] = {}
_LOCK = threading.Lock()


OPENMP_WAIT = "OMP_WAIT_POLICY"


def openmp_threads_sleep_when_idle() -> None:
    """OpenMP's threads (PyTorch's intra-op pool) sleep as soon as a parallel region ends, unless the user said
    otherwise in ``OMP_WAIT_POLICY``. Read once, when PyTorch loads its OpenMP runtime: call it before ``import
    torch`` (a command's own process, ``app/launch.py``).

    Why: the network's reading alternates OpenMP's operators with the compiled group norm's own pool
    (``core/model/cpu_group_norm.py``) and the tracing after it spreads its curves over this module's pool; by
    default an OpenMP thread spins after its region, on a core those threads then wait for. KGS's ``digitize`` on
    the quiet 2-core EPYC: 17.88 and 18.30 s by default, 16.87 and 16.78 s sleeping (user CPU 27.6-28.2 against
    25.3-26.0 s), the same LAS (docs/benchmarks.md, issue #64, ninth round)."""
    os.environ.setdefault(OPENMP_WAIT, "PASSIVE")


def set_work_threads(n: int | None) -> None:
    """The threads this process's work may take from now on (a batch worker's share of the machine's cores);
    None: the default again (:func:`work_threads`)."""
    _BUDGET[0] = None if n is None else max(1, int(n))


def work_threads() -> int:
    """The threads this process's work may take: what :func:`set_work_threads` said, else ``WELLTRACE_WORK_THREADS``
    in the environment, else the cores this process may run on."""
    if _BUDGET[0] is not None:
        return _BUDGET[0]
    asked = os.environ.get(ENV, "").strip()
    if asked.isdigit() and int(asked) > 0:
        return int(asked)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def in_order(work: Callable[[T], R], items: Iterable[T], threads: int | None = None, pool: str = "work") -> list[R]:
    """``[work(x) for x in items]``, spread over ``threads`` threads (default :func:`work_threads`) of the pool named
    ``pool`` (kept for the process, one per name and count: the network's norms have theirs, so a reading beside a
    tracing never waits behind the tracing's curves); the results in the items' order. Each ``work(x)`` must read
    what it shares with the others and write only its own: then which thread ran it changes nothing. One thread,
    or one item: in this thread, in order."""
    items = list(items)
    threads = min(work_threads() if threads is None else max(1, threads), len(items))
    prefix = f"welltrace-{pool}"
    if threads <= 1 or threading.current_thread().name.startswith(prefix):
        return [work(x) for x in items]  # a pool's own thread does not wait on the pool
    with _LOCK:
        executor = _POOLS.get((pool, threads))
        if executor is None:
            executor = _POOLS[pool, threads] = ThreadPoolExecutor(threads, thread_name_prefix=prefix)
    return list(executor.map(work, items))


def once_per_key(work: Callable[[int], R], keys: list) -> list[R | None]:
    """``work(i)`` for each index of ``keys``, made once per distinct key (at the first index holding it, the keys
    spread over the threads by :func:`in_order`) and shared by every index with that key; None where the key is
    None. For readings that depend only on what the key names (the curves of one style in one track read the same
    strokes: ``rules/signals.py``, ``rules/all_curves.py``)."""
    first = {k: keys.index(k) for k in dict.fromkeys(keys) if k is not None}
    made = dict(zip(first, in_order(work, first.values())))
    return [None if k is None else made[k] for k in keys]


def in_runs(work: Callable[[int, int], object], count: int, threads: int | None = None, pool: str = "work") -> None:
    """``work(start, stop)`` over [0, ``count``) cut into one contiguous run a thread (at most ``threads``, default
    :func:`work_threads`; at least one run, empty when ``count`` is 0), the runs spread by :func:`in_order`. For work
    of many small equal pieces whose results do not depend on who takes them (the group norm's chunks, the
    stitching's rows): one task a thread, not one a piece, each task a future, a wake-up and turns of the
    interpreter's lock."""
    n = max(1, min(work_threads() if threads is None else max(1, threads), count))
    cuts = [round(i * count / n) for i in range(n + 1)]
    in_order(lambda run: work(*run), list(zip(cuts[:-1], cuts[1:])), threads=n, pool=pool)
