import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.common import threads
from core.common.threads import in_order, set_work_threads, work_threads


@pytest.fixture(autouse=True)
def _default_budget():
    set_work_threads(None)
    yield
    set_work_threads(None)


def test_work_is_spread_over_the_threads_and_comes_back_in_the_items_order():
    set_work_threads(2)
    names = set()
    barrier = threading.Barrier(2, timeout=10)

    def work(x):
        if x < 2:  # the first two meet: they ran at the same time, on two threads
            barrier.wait()
        names.add(threading.current_thread().name)
        return x * x

    assert in_order(work, range(7)) == [x * x for x in range(7)]
    assert len(names) == 2 and all(n.startswith("welltrace-work") for n in names)


def test_one_thread_runs_the_work_here_in_order():
    set_work_threads(1)
    seen = []
    assert in_order(lambda x: seen.append((x, threading.current_thread().name)) or x, "abc") == list("abc")
    assert seen == [(c, threading.current_thread().name) for c in "abc"]


def test_work_that_spreads_work_of_its_own_runs_that_inline_and_does_not_wait_on_its_pool():
    set_work_threads(2)
    assert in_order(lambda x: sum(in_order(lambda y: x * y, range(4))), range(5)) == [6 * x for x in range(5)]


def test_a_failure_in_one_item_is_raised_to_the_caller():
    set_work_threads(2)

    def work(x):
        if x == 3:
            raise ValueError("three")
        return x

    with pytest.raises(ValueError, match="three"):
        in_order(work, range(6))


def test_the_budget_is_what_was_set_else_the_environment_else_the_cores(monkeypatch):
    monkeypatch.setenv(threads.ENV, "3")
    assert work_threads() == 3
    set_work_threads(1)
    assert work_threads() == 1
    set_work_threads(None)
    monkeypatch.setenv(threads.ENV, "none")
    assert work_threads() >= 1


def test_openmp_threads_sleep_when_idle_unless_the_user_said_otherwise(monkeypatch):
    monkeypatch.delenv(threads.OPENMP_WAIT, raising=False)
    threads.openmp_threads_sleep_when_idle()
    assert os.environ[threads.OPENMP_WAIT] == "PASSIVE"
    monkeypatch.setenv(threads.OPENMP_WAIT, "ACTIVE")
    threads.openmp_threads_sleep_when_idle()
    assert os.environ[threads.OPENMP_WAIT] == "ACTIVE"


def test_a_digitise_command_s_process_says_it_before_pytorch_loads_its_openmp_runtime():
    """OpenMP reads its wait policy once, when PyTorch loads it: the command's entry sets it before anything imports
    PyTorch."""
    probe = ("import os, sys\nimport app.launch as launch\n"
             "launch.main = lambda argv: print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules) or 0\n"
             "sys.argv = ['welltrace', 'digitize', 'scan.tif']\nlaunch.console()\n")
    env = {k: v for k, v in os.environ.items() if k != threads.OPENMP_WAIT}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120,
                         cwd=Path(__file__).resolve().parents[3])
    assert out.stdout.split() == ["PASSIVE", "False"], out.stderr


def test_work_once_per_key_is_shared_by_the_indices_that_hold_the_key():
    from core.common.threads import once_per_key

    made = []

    def work(i):
        made.append(i)
        return f"made at {i}"

    set_work_threads(2)
    got = once_per_key(work, [("a",), None, ("b",), ("a",), None, ("b",), ("c",)])
    assert got == ["made at 0", None, "made at 2", "made at 0", None, "made at 2", "made at 6"]
    assert sorted(made) == [0, 2, 6]  # each key made once, at its first index; a None key not at all
    assert once_per_key(work, []) == []



@pytest.mark.parametrize("count, at_most, runs", [(10, 3, [(0, 3), (3, 7), (7, 10)]), (2, 5, [(0, 1), (1, 2)]),
                                                  (7, 1, [(0, 7)]), (0, 2, [(0, 0)])])
def test_work_in_runs_covers_the_range_in_one_contiguous_run_a_thread(count, at_most, runs):
    """``in_runs``: [0, count) cut into at most ``at_most`` contiguous runs covering each index once (never more runs
    than indices; one empty run for an empty range), each run one call of the work."""
    got = []
    lock = threading.Lock()

    def work(lo, hi):
        with lock:
            got.append((lo, hi))

    threads.in_runs(work, count, threads=at_most, pool="runs-test")
    assert sorted(got) == runs
