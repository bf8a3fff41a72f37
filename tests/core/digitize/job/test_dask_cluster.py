"""A Dask run's own threads: a worker's tasks take the threads the worker was started with, and the command's
client leaves no thread behind however the run ends (the command then ends its process at once:
``core/common/fast_exit.py``)."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from core.cli.main import main
from core.digitize.job import dask_cluster
from core.digitize.job.dask_cluster import ClusterLost, task_threads
from tests.core.sigint_state import sigint_deliverable, sigint_state


def test_a_task_takes_its_workers_threads_unless_threads_says_otherwise():
    assert task_threads(0, 4) == 4  # `dask worker --nthreads 4`: the worker's share of its machine
    assert task_threads(0, 1) == 1
    assert task_threads(3, 4) == 3  # --threads 3 wins
    assert task_threads(3, None) == 3
    assert task_threads(0, None) == 0  # outside a Dask worker: each library's own default
    assert task_threads(0, 0) == 0


def test_outside_a_dask_worker_there_are_no_worker_threads_to_take():
    assert dask_cluster._worker_nthreads() is None


def _folder(tmp_path: Path, count: int = 2) -> Path:
    folder = tmp_path / "scans"
    assert main(["synth", str(folder), "--count", str(count), "--seed", "5", "--width", "900", "--height", "256"]) == 0
    return folder


PROCESS_WIDE = ("tqdm_monitor", "Dask-Offload")  # the progress bar's monitor; distributed's one serialising thread
# for the process (``distributed.utils._offload_executor``), started here by the cluster's scheduler in this process


def _new_threads(before: set[int]) -> list[str]:
    """Threads started since ``before`` and still alive, but the process-wide ones no run owns."""
    return sorted(t.name for t in threading.enumerate() if t.ident not in before and not t.name.startswith(PROCESS_WIDE))


def test_an_unreachable_scheduler_leaves_no_client_thread(tmp_path, capsys, monkeypatch):
    """distributed closed the client that could not connect but left its IO loop's thread running."""
    pytest.importorskip("distributed")
    monkeypatch.setattr(dask_cluster, "CONNECT_S", 3)
    folder = _folder(tmp_path, 1)
    before = {t.ident for t in threading.enumerate()}
    assert main(["digitize", str(folder), "--classical", "--scheduler", "tcp://127.0.0.1:9", "--no-qc"]) == 2
    assert "the Dask scheduler cannot be used" in capsys.readouterr().err
    assert _new_threads(before) == []


# with the long tests for now: in three of five full default runs of 2026-11-28 this test and the folder run's Ctrl-C
# tests (tests/core/test_refused_before_running.py) failed together as if the SIGINT came late, though they pass
# whenever their files run alone; not yet found: every run since has passed (four full runs in the thirteenth round,
# the files alone in the fourteenth), and a failure now names SIGINT's state (docs/benchmarks.md, issue #64, the
# twelfth and thirteenth rounds)
@pytest.mark.slow
def test_a_ctrl_c_while_connecting_leaves_no_client_thread(monkeypatch):
    """Interrupted while it connected, the client was left half open: its IO loop's thread ran on."""
    pytest.importorskip("distributed")
    monkeypatch.setattr(dask_cluster, "CONNECT_S", 10)  # a refused port is retried until then: Ctrl-C comes first
    before = {t.ident for t in threading.enumerate()}
    assert sigint_deliverable(), f"this process cannot take a Ctrl-C before the test sends one: {sigint_state()}"
    sent = []

    def ctrl_c_now():
        sent.append((time.monotonic() - t0, sigint_state()))
        os.kill(os.getpid(), signal.SIGINT)

    t0 = time.monotonic()
    ctrl_c = threading.Timer(1.0, ctrl_c_now)
    ctrl_c.start()
    try:
        dask_cluster._connected("tcp://127.0.0.1:9")
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # the Ctrl-C did not stop it: say when it was sent and what SIGINT did here then
        pytest.fail(f"{type(exc).__name__}: {exc} after {time.monotonic() - t0:.1f} s; the Ctrl-C (s after the start, "
                    f"SIGINT here then): {sent}")
    else:
        pytest.fail(f"connected to a refused port: {sent}")
    ctrl_c.join()
    assert _new_threads(before) == []


@pytest.mark.slow
def test_a_cluster_run_leaves_no_client_thread_however_it_ends(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")
    folder = _folder(tmp_path)
    (folder / "broken.png").write_bytes(b"not a png at all")  # a scan that fails alone
    (folder / "broken.calib.json").write_text((folder / "synth_000.calib.json").read_text())
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        argv = ["digitize", str(folder), "--classical", "--no-qc", "--force", "--scheduler", cluster.scheduler_address]
        before = {t.ident for t in threading.enumerate()}
        assert main(argv) == 2  # done, one scan failed
        assert "broken.png: failed" in capsys.readouterr().err
        assert _new_threads(before) == []

        def interrupted(self, fut):
            raise KeyboardInterrupt

        def lost(self, fut):
            raise ClusterLost("the cluster has had no worker for 3 s (the last one stopped)")

        for stop, code, said in ((interrupted, 130, "interrupted"), (lost, 2, "the cluster has had no worker")):
            with monkeypatch.context() as m:
                m.setattr(dask_cluster._Watch, "result", stop)
                before = {t.ident for t in threading.enumerate()}
                assert main(argv) == code
                assert said in capsys.readouterr().err
                assert _new_threads(before) == []
        with distributed.Client(cluster) as client:  # its tasks worked on the worker's one thread, not every core
            [threads] = client.run(_threads_here).values()
    assert threads == {"torch": 1, "opencv": 1, "curves": 1}


def _threads_here() -> dict:
    import cv2
    import torch

    from core.common.threads import work_threads

    return {"torch": torch.get_num_threads(), "opencv": cv2.getNumThreads(), "curves": work_threads()}
