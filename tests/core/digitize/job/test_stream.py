"""``core/digitize/job/stream.py``: a folder streamed, the next scan read while one is traced, one ahead at most, the
same files as one after the other; and the bookkeeping that fails a dead worker's scans (``local_workers.py``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import lasio
import numpy as np

from core.cli.main import main
from core.common import sysmem
from core.digitize.job import scan_job, stream
from core.digitize.job.local_workers import _the_dead
from core.digitize.job.scan_job import ReadOptions, ScanJob, ScanOutcome, digitize_file


def _jobs(tmp_path: Path, count: int, out: str) -> list[tuple[int, ScanJob]]:
    folder = tmp_path / "scans"
    if not folder.exists():
        assert main(["synth", str(folder), "--count", str(count), "--seed", "11", "--width", "900",
                     "--height", "256"]) == 0
    (tmp_path / out).mkdir()
    return [(i, ScanJob(folder / f"synth_{i:03d}.png", folder / f"synth_{i:03d}.calib.json",
                        tmp_path / out / f"synth_{i:03d}.las")) for i in range(count)]


def test_streamed_scans_are_written_as_one_after_the_other(tmp_path):
    jobs = _jobs(tmp_path, 3, "streamed")
    got = dict(stream.streamed(jobs, ReadOptions()))
    alone = {i: digitize_file(ScanJob(j.scan, j.calib, tmp_path / f"alone_{i}.las"), ReadOptions()) for i, j in jobs}
    for i, job in jobs:
        assert got[i].status == "written", got[i].error
        assert got[i].null_share == alone[i].null_share and got[i].warnings == alone[i].warnings
        a, b = lasio.read(job.las), lasio.read(tmp_path / f"alone_{i}.las")
        for name in a.keys():
            assert np.array_equal(a[name], b[name], equal_nan=True), name


def test_the_next_scan_is_read_while_one_is_traced_and_never_two_ahead(tmp_path, monkeypatch):
    """The reading of scan 2 starts before the tracing of scan 1 ends; at most two scans are held at once (the one
    traced and the one read ahead)."""
    jobs = _jobs(tmp_path, 4, "out")
    lock = threading.Lock()
    held, most, log = [0], [0], []
    read, trace = stream.read_ahead, scan_job.digitize_scan

    def reading(job, options):
        with lock:
            held[0] += 1
            most[0] = max(most[0], held[0])
            log.append(("read", job.scan.name, time.perf_counter()))
        return read(job, options)

    def tracing(job, options, sink=None, loaded=None, ahead=None):
        try:
            time.sleep(0.3)  # a tracer slower than the reading: the reader must wait for a slot, not run ahead
            return trace(job, options, sink, loaded, ahead)
        finally:
            with lock:
                held[0] -= 1
                log.append(("traced", job.scan.name, time.perf_counter()))

    monkeypatch.setattr(stream, "read_ahead", reading)
    monkeypatch.setattr(scan_job, "digitize_scan", tracing)
    outcomes = [o for _, o in stream.streamed(jobs, ReadOptions())]
    assert [o.status for o in outcomes] == ["written"] * 4
    when = {(kind, name): t for kind, name, t in log}
    assert when["read", "synth_001.png"] < when["traced", "synth_000.png"]
    assert most[0] == 2


def test_a_scan_that_cannot_be_read_fails_alone(tmp_path):
    jobs = _jobs(tmp_path, 2, "out")
    broken = tmp_path / "scans" / "synth_000.png"
    broken.write_bytes(b"no picture")
    outcomes = dict(stream.streamed(jobs, ReadOptions()))
    assert outcomes[0].failed and ("not an image" in outcomes[0].error.lower() or "identify" in outcomes[0].error)
    assert outcomes[1].status == "written"


class _Process:
    def __init__(self, alive: bool, exitcode: int | None = None):
        self._alive, self.exitcode = alive, exitcode

    def is_alive(self) -> bool:
        return self._alive


class _Queue:
    def __init__(self, messages):
        self.messages = list(messages)

    def get_nowait(self):
        import queue

        if not self.messages:
            raise queue.Empty
        return self.messages.pop(0)


def test_a_dead_worker_s_scans_fail_after_what_it_said_and_the_rest_go_on():
    jobs = [ScanJob(Path(f"s{i}.png"), Path(f"s{i}.calib.json"), Path(f"s{i}.las")) for i in range(4)]
    written = ScanOutcome("s0.png", "written")
    held = {0: {0, 1}, 1: {2}}
    left = {0, 1, 2, 3}
    said = _Queue([("done", 0, 0, written)])  # worker 0 finished s0, then died holding s1
    out = list(_the_dead([_Process(False, -9), _Process(True)], held, left, jobs, said))
    assert [(o.scan, o.status) for o in out] == [("s0.png", "written"), ("s1.png", "failed")]
    assert "exit code -9" in out[1].error and left == {2, 3} and held == {0: set(), 1: {2}}
    out = list(_the_dead([_Process(False, -9), _Process(False, 1)], held, left, jobs, _Queue([])))
    assert [(o.scan, o.status) for o in out] == [("s2.png", "failed"), ("s3.png", "failed")]
    assert "no worker was left" in out[1].error and not left


def _log_reading_and_tracing(monkeypatch) -> list:
    """The stream's reading and tracing of each scan logged as ("read" / "traced", scan name, time), the tracer made
    slower than the reading (0.2 s a scan)."""
    log = []
    read, trace = stream.read_ahead, scan_job.digitize_scan

    def reading(job, options):
        log.append(("read", job.scan.name, time.perf_counter()))
        return read(job, options)

    def tracing(job, options, sink=None, loaded=None, ahead=None):
        try:
            time.sleep(0.2)  # a tracer slower than the reading
            return trace(job, options, sink, loaded, ahead)
        finally:
            log.append(("traced", job.scan.name, time.perf_counter()))

    monkeypatch.setattr(stream, "read_ahead", reading)
    monkeypatch.setattr(scan_job, "digitize_scan", tracing)
    return log


def _gated_log(tmp_path, monkeypatch, ceiling: int):
    """Two small scans streamed through a gate under ``ceiling`` bytes, each predicted to need 60 to read and to
    hold 50 until traced (30 kept, 20 to trace): the times each reading started and each tracing ended."""
    from core.digitize.job.memory_gate import MemoryGate, ScanMemory

    jobs = _jobs(tmp_path, 2, f"gated_{ceiling}")
    log = _log_reading_and_tracing(monkeypatch)
    monkeypatch.setattr(stream, "_predicted", lambda job, options, gate: ScanMemory(reading=60, kept=30, tracing=20))
    real_release = sysmem.release_free_heap

    def release():  # the freed heap handed back before each gated reading, after the scan before was traced
        log.append(("released", f"before {len(log)}", time.perf_counter()))
        real_release()

    monkeypatch.setattr(sysmem, "release_free_heap", release)
    gate = MemoryGate(ceiling, base=0)
    outcomes = [o for _, o in stream.streamed(jobs, ReadOptions(), gate=gate)]
    assert [o.status for o in outcomes] == ["written"] * 2
    assert gate.held == 0  # every scan's memory given back once traced
    return {(kind, name): t for kind, name, t in log}, gate


def test_the_reader_waits_for_the_tracer_when_the_memory_plan_says_the_next_reading_does_not_fit(tmp_path,
                                                                                             monkeypatch):
    when, gate = _gated_log(tmp_path, monkeypatch, ceiling=100)  # 50 held + 60 to read > 100: one at a time
    assert when["read", "synth_001.png"] > when["traced", "synth_000.png"]
    released = sorted(t for (kind, _), t in when.items() if kind == "released")
    # a reading's plan starts from a resident size that holds no freed pages: handed back once the scan before is
    # traced, before the reading starts (and in the reader's thread after each picture is loaded and each part
    # read: ``read_ahead``)
    assert len(released) == 6
    assert any(when["traced", "synth_000.png"] < t < when["read", "synth_001.png"] for t in released)
    assert gate.waited[0] < 0.05 and gate.waited[1] > 0.1  # the first scan read at once: nothing was held
    when, gate = _gated_log(tmp_path, monkeypatch, ceiling=110)  # 50 + 60 fits: read while the other is traced
    assert when["read", "synth_001.png"] < when["traced", "synth_000.png"]
    assert max(gate.waited) < 0.05


def test_a_reading_refused_beside_a_tracing_is_read_again_alone(tmp_path, monkeypatch):
    """The gate let the second scan's reading start beside the first's tracing, and its own plan, counting the
    tracing's resident memory, refused it; once the first is traced it is read alone and written. A scan refused
    with nothing else held fails as it did."""
    from core.common.errors import MemoryCeilingRefusal
    from core.digitize.job.memory_gate import MemoryGate, ScanMemory

    jobs = _jobs(tmp_path, 2, "refused")
    read, trace = stream.read_ahead, scan_job.digitize_scan
    gate = MemoryGate(1000, base=0)
    log = []

    def reading(job, options):
        log.append(("read", job.scan.name, gate.held))
        if job.scan.name == "synth_001.png" and gate.held:
            raise MemoryCeilingRefusal(job.scan, "reading this scan needs at least 2.12 GiB; the ceiling is 2.00 GiB")
        return read(job, options)

    def tracing(job, options, sink=None, loaded=None, ahead=None):
        time.sleep(0.2)  # the second scan's reading starts while this one is traced
        return trace(job, options, sink, loaded, ahead)

    monkeypatch.setattr(stream, "read_ahead", reading)
    monkeypatch.setattr(scan_job, "digitize_scan", tracing)
    monkeypatch.setattr(stream, "_predicted", lambda job, options, gate: ScanMemory(reading=60, kept=30, tracing=20))
    outcomes = [o for _, o in stream.streamed(jobs, ReadOptions(), gate=gate)]
    assert [o.status for o in outcomes] == ["written"] * 2
    assert log == [("read", "synth_000.png", 0), ("read", "synth_001.png", 50), ("read", "synth_001.png", 0)]

    def refused_alone(job, options):
        raise MemoryCeilingRefusal(job.scan, "reading this scan needs at least 9 GiB; the ceiling is 2.00 GiB")

    monkeypatch.setattr(stream, "read_ahead", refused_alone)
    outcomes = [o for _, o in stream.streamed(_jobs(tmp_path, 1, "alone"), ReadOptions(), gate=MemoryGate(1000, 0))]
    assert outcomes[0].failed and "needs at least 9 GiB" in outcomes[0].error


def test_a_scan_that_cannot_be_read_and_traced_under_the_ceiling_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """The gate counts a scan from its read to its LAS: its page stage and its reading to start it (beside the scans
    held), its maps kept and its tracing (alone). A scan whose tracing alone passes the ceiling is refused before any
    of it is read, the line naming the figure it needs; the others are read and written, and one admitted is never
    refused after."""
    from core.common.vocabulary import GIB
    from core.digitize.job.memory_gate import MemoryGate, ScanMemory

    jobs = _jobs(tmp_path, 3, "beyond")
    read = stream.read_ahead
    started = []

    def reading(job, options):
        started.append(job.scan.name)
        return read(job, options)

    def predicted(job, options, gate):  # the second scan's tracing alone needs 0.9 GiB over a 0.2 GiB process
        if job.scan.name == "synth_001.png":
            return ScanMemory(reading=GIB // 4, kept=GIB // 8, tracing=GIB * 9 // 10 - GIB // 8, page=GIB // 2)
        return ScanMemory(reading=GIB // 4, kept=GIB // 8, tracing=GIB // 8, page=GIB // 8)

    monkeypatch.setattr(stream, "read_ahead", reading)
    monkeypatch.setattr(stream, "_predicted", predicted)
    gate = MemoryGate(GIB, base=GIB // 5)
    outcomes = dict(stream.streamed(jobs, ReadOptions(), gate=gate))
    assert [outcomes[i].status for i in range(3)] == ["written", "failed", "written"]
    assert started == ["synth_000.png", "synth_002.png"]  # refused before it was read
    assert outcomes[1].error.startswith(str(jobs[1][1].scan))
    assert "reading and tracing this scan needs 1.10 GiB" in outcomes[1].error
    assert "the ceiling is 1.00 GiB" in outcomes[1].error and gate.held == 0


def test_a_reading_starts_when_its_page_stage_and_reading_fit_beside_what_is_held(tmp_path, monkeypatch):
    """What a scan needs to start is the larger of its page stage and its reading (``ScanMemory.starting``): a page
    stage over the room left waits for the tracer, as a reading does."""
    from core.digitize.job.memory_gate import MemoryGate, ScanMemory

    memory = ScanMemory(reading=40, kept=30, tracing=20, page=70)
    assert (memory.starting, memory.held, memory.peak) == (70, 50, 70)
    assert memory.as_dict() == {"page": 70, "reading": 40, "kept": 30, "tracing": 20, "held": 50, "peak": 70}
    gate = MemoryGate(110, base=0, resident=lambda: 7)
    gate.hold(50)
    gate.rebase()
    assert gate.base == 0  # something held: the resident size is not the process's own
    gate.give(50)
    gate.rebase()
    assert gate.base == 7
    jobs = _jobs(tmp_path, 2, "page_stage")
    log = _log_reading_and_tracing(monkeypatch)
    monkeypatch.setattr(stream, "_predicted", lambda job, options, gate: memory)
    outcomes = [o for _, o in stream.streamed(jobs, ReadOptions(), gate=MemoryGate(110, base=0))]
    assert [o.status for o in outcomes] == ["written"] * 2
    when = {(kind, name): t for kind, name, t in log}
    assert when["read", "synth_001.png"] > when["traced", "synth_000.png"]  # 50 held + 70 to start > 110
