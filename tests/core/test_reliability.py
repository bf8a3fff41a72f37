"""Nothing lost, nothing hangs: outputs land together or not at all, folder runs re-run cleanly, bad values and
options are refused in one line, workers die with their run, a cluster survives a lost worker (issue 46)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import lasio
import numpy as np
import pytest

from core.cli.main import main
from core.common.atomic import atomic_write_text, outputs_together
from core.common.errors import CalibrationError
from core.digitize.job.folder import jobs_for, scans_in, up_to_date
from core.io.calibration import Calibration
from core.model.bundled import BUNDLED_MODEL

ROOT = Path(__file__).resolve().parents[2]


def _folder(tmp_path: Path, count: int = 2, name: str = "scans") -> Path:
    folder = tmp_path / name
    assert main(["synth", str(folder), "--count", str(count), "--seed", "5", "--width", "900", "--height", "256"]) == 0
    return folder


def _one_line(err: str) -> str:
    """The one error line of a refused run (a folder run's progress lines may come before it)."""
    lines = [line for line in err.splitlines() if line.startswith("welltrace: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- outputs: one rule for every file written ------------------------------------------------------------


def test_outputs_written_together_land_together_or_not_at_all(tmp_path):
    a, b = tmp_path / "a.las", tmp_path / "b.las"
    a.write_text("old a")
    with pytest.raises(RuntimeError):
        with outputs_together():
            atomic_write_text(a, "new a")
            assert a.read_text() == "old a"  # nothing lands before the block ends
            raise RuntimeError("the repeat pass failed")
    assert a.read_text() == "old a" and not b.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.las"]  # no temporary left behind
    with outputs_together():
        atomic_write_text(a, "new a")
        atomic_write_text(b, "new b")
    assert (a.read_text(), b.read_text()) == ("new a", "new b")


def test_a_target_that_is_no_regular_file_is_refused_and_left_as_it_was(tmp_path, capsys):
    folder = _folder(tmp_path, 1)
    scan, calib = folder / "synth_000.png", folder / "synth_000.calib.json"
    fifo = tmp_path / "pipe.las"
    os.mkfifo(fifo)
    assert main(["digitize", str(scan), "--calib", str(calib), "--classical", "--out", str(fifo)]) == 2
    assert "not a regular file" in _one_line(capsys.readouterr().err)
    assert fifo.is_fifo()
    with pytest.raises(OSError, match="not a regular file"):
        atomic_write_text(fifo, "x")
    assert fifo.is_fifo()


def test_a_sectioned_run_that_fails_on_the_repeat_pass_keeps_the_old_main_las(tmp_path, capsys):
    """OUT.repeat.las is a folder: the run is refused, and a main LAS of an earlier run is not replaced by one
    that has no repeat pass beside it."""
    folder = _folder(tmp_path, 1)
    cal = json.loads((folder / "synth_000.calib.json").read_text())
    length = 900
    cal["sections"] = [{"span": [0, length // 2]}, {"span": [length // 2, length], "kind": "repeat"}]
    (folder / "synth_000.calib.json").write_text(json.dumps(cal))
    out = tmp_path / "log.las"
    out.write_text("an earlier run's main pass")
    (tmp_path / "log.repeat.las").mkdir()
    code = main(["digitize", str(folder / "synth_000.png"), "--calib", str(folder / "synth_000.calib.json"),
                 "--classical", "--out", str(out)])
    assert code == 2 and "log.repeat.las" in _one_line(capsys.readouterr().err)
    assert out.read_text() == "an earlier run's main pass"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_disk_that_fills_while_writing_keeps_the_old_las_and_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    """ENOSPC at the moment the LAS goes to disk (its fsync): exit 2, one line naming the cause, the LAS of an
    earlier run in place, no temporary file left beside it."""
    import errno

    import core.common.atomic as atomic

    folder = _folder(tmp_path, 1)
    out = tmp_path / "log.las"
    out.write_text("an earlier run's LAS")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", full)
    code = main(["digitize", str(folder / "synth_000.png"), "--calib", str(folder / "synth_000.calib.json"),
                 "--classical", "--out", str(out), "--qc", str(tmp_path / "log.qc.png")])
    assert code == 2 and os.strerror(errno.ENOSPC) in _one_line(capsys.readouterr().err)
    assert out.read_text() == "an earlier run's LAS"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert not list(tmp_path.glob("log.qc*.png"))  # the QC picture lands with its LAS or not at all


# -- folder runs -------------------------------------------------------------------------------------------


def test_a_folder_run_twice_exits_0_and_never_takes_its_own_qc_picture_for_a_scan(tmp_path, capsys):
    folder = _folder(tmp_path, 2)
    (folder / "notes.png").write_bytes((folder / "synth_000.png").read_bytes())  # a picture without calibration
    assert main(["digitize", str(folder), "--classical"]) == 0
    assert (folder / "synth_000.digitized.qc.png").is_file()
    assert [p.name for p in scans_in([folder])] == ["synth_000.png", "synth_001.png"]
    assert main(["digitize", str(folder), "--classical"]) == 0
    assert "0 to digitise" in capsys.readouterr().err
    assert main(["digitize", str(folder), "--classical", "--force"]) == 0


def test_two_scans_of_one_stem_are_refused_by_name_before_any_work(tmp_path, capsys):
    folder = _folder(tmp_path, 1)
    from PIL import Image

    Image.open(folder / "synth_000.png").save(folder / "synth_000.tif")
    assert main(["digitize", str(folder), "--classical"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "synth_000.digitized.las" in line and "synth_000.png" in line and "synth_000.tif" in line
    assert not (folder / "synth_000.digitized.las").exists()


def test_a_scan_whose_qc_picture_is_missing_is_not_up_to_date(tmp_path):
    folder = _folder(tmp_path, 1)
    assert main(["digitize", str(folder), "--classical"]) == 0
    [job] = jobs_for(scans_in([folder]))
    assert up_to_date(job, None)
    (folder / "synth_000.digitized.qc.png").unlink()  # a run killed between the LAS and its QC picture
    assert not up_to_date(job, None)


def test_a_summary_that_is_a_folder_is_refused_before_the_work(tmp_path, capsys):
    folder = _folder(tmp_path, 1)
    (tmp_path / "summary").mkdir()
    assert main(["digitize", str(folder), "--classical", "--summary", str(tmp_path / "summary")]) == 2
    assert "is a folder" in _one_line(capsys.readouterr().err)
    assert not (folder / "synth_000.digitized.las").exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: it only waits for its (gone) parent's wait()
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


@pytest.mark.slow
def test_a_folder_run_killed_with_sigkill_leaves_no_worker_running(tmp_path):
    folder = _folder(tmp_path, 4)
    run = subprocess.Popen([sys.executable, "-m", "app.launch", "digitize", str(folder), "--model",
                            str(BUNDLED_MODEL), "--jobs", "2", "--threads", "2", "--no-qc"], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        workers: list[int] = []
        deadline = time.time() + 120
        while time.time() < deadline and len(workers) < 2:  # the two workers (and the pool's helper)
            workers = [p for p in _children(run.pid) if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]
            time.sleep(0.2)
        assert len(workers) >= 2, "the workers never started"
        time.sleep(1.0)  # into the work
        run.send_signal(signal.SIGKILL)
        run.wait(10)
        # every worker gone within 10 s of the kill (each looks for its parent every PARENT_POLL_S): looked at
        # until they are, not slept through whole (a dead process stays dead)
        deadline = time.time() + 10
        while time.time() < deadline and [p for p in workers if _alive(p)]:
            time.sleep(0.2)
        assert not [p for p in workers if _alive(p)]
    finally:
        run.kill()


# -- values and options ------------------------------------------------------------------------------------


def _calib(**changes) -> dict:
    d = {"version": 1, "depth_axis": "x", "depth_unit": "M", "depth_picks": [[0, 1780.0], [899, 1849.0]],
         "step": 0.5, "curves": [{"mnemonic": "GR", "class": 1, "track": [10, 200], "scale": [0, 150]}]}
    d.update(changes)
    return d


@pytest.mark.parametrize("changes, words", [
    ({"step": 1e300}, "fewer than three samples"),
    ({"step": 1e-300}, "finer than any log can be read at"),
    ({"step": 2.5e-7}, "finer than any log can be read at"),
    ({"step": 1e-4, "depth_picks": [[0, 0.0], [899, 99000.0]]}, "samples over the picked depths"),
    ({"step": 10 ** 400}, "expected a finite number"),
    ({"depth_picks": [[0, 1780.0], [1e308, 1849.0]]}, "outside any scan"),
    ({"depth_picks": [[0, 1e6], [899, 1849.0]]}, "deeper than any well"),
    ({"sections": [{"span": [0.2, 0.4]}]}, "covers no stretch"),
])
def test_a_calibration_value_outside_its_physical_range_is_refused_by_name(changes, words):
    with pytest.raises(CalibrationError, match=words):
        Calibration.from_dict(_calib(**changes), "x.calib.json")
    assert Calibration.from_dict(_calib())  # the untouched one is fine


def test_options_outside_their_range_are_one_line(tmp_path, capsys):
    folder = _folder(tmp_path, 1)
    scan, calib = str(folder / "synth_000.png"), str(folder / "synth_000.calib.json")
    one = ["digitize", scan, "--calib", calib, "--classical", "--out", str(tmp_path / "o.las")]
    for extra, words in ((["--max-memory", "nan"], "--max-memory"), (["--max-memory", "inf"], "--max-memory"),
                         (["--max-memory", "-1"], "--max-memory"), (["--tile", "0"], "--tile")):
        assert main([*one, *extra]) == 2
        assert words in _one_line(capsys.readouterr().err)
    assert main(["digitize", str(folder), "--classical", "--scheduler", "notanaddress"]) == 2
    assert "no scheduler address" in _one_line(capsys.readouterr().err)
    assert main(["calibrate", scan, "--propose", "--step", "nan", "--out", str(tmp_path / "c.json")]) == 2
    assert "--step" in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "o.las").exists()


def test_a_scan_named_first_opens_the_app_as_the_readme_says(tmp_path, capsys):
    seen = []
    assert main(["some_scan.tif"], gui=lambda args: seen.append(args.paths)) == 0
    assert main([str(tmp_path)], gui=lambda args: seen.append(args.paths)) == 0  # a project folder
    assert seen == [["some_scan.tif"], [str(tmp_path)]]
    assert main(["digitse", "x"], gui=lambda args: seen.append(args.paths)) == 2  # a mistyped command stays one
    line = _one_line(capsys.readouterr().err)
    assert "invalid choice: 'digitse'" in line and not line.startswith("welltrace: welltrace")


# -- a Dask cluster ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_cluster_that_loses_its_worker_mid_run_still_writes_every_scan(tmp_path, capsys, monkeypatch):
    """One worker, killed while it digitises: its nanny starts another, the model's bytes (lost with the
    worker) are scattered again, every scan is written, exit 0. The folder is given relative to here."""
    distributed = pytest.importorskip("distributed")
    import threading

    folder = _folder(tmp_path, 3)
    monkeypatch.chdir(tmp_path)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        with distributed.Client(cluster) as client:
            [pid] = client.run(os.getpid).values()

        def kill_when_busy():
            deadline = time.time() + 120
            while time.time() < deadline and not list(folder.glob("*.digitized.las")):
                time.sleep(0.05)
            os.kill(pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_when_busy, daemon=True)
        killer.start()
        code = main(["digitize", "scans", "--model", str(BUNDLED_MODEL), "--scheduler", cluster.scheduler_address,
                     "--no-qc"])
        killer.join(5)
    err = capsys.readouterr().err
    assert code == 0, err
    assert not _alive(pid)  # the worker was killed mid-run
    for name in ("synth_000", "synth_001", "synth_002"):
        las = lasio.read(folder / f"{name}.digitized.las")
        assert "demo.safetensors" in las.other and np.isfinite(las.curves[1].data).any()


def test_a_scheduler_without_workers_is_refused_after_its_wait(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")
    import core.digitize.job.dask_cluster as batch_run

    monkeypatch.setattr(batch_run, "WORKER_WAIT_S", 2.0)
    folder = _folder(tmp_path, 1)
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None, silence_logs=50) as cluster:
        t0 = time.time()
        assert main(["digitize", str(folder), "--classical", "--scheduler", cluster.scheduler_address]) == 2
    assert time.time() - t0 < 30
    assert "no worker joined" in _one_line(capsys.readouterr().err)


def test_a_calibration_proposal_refused_is_one_line_on_stderr_naming_the_scan(tmp_path, capsys):
    import cv2

    for name, img in (("blank", np.full((800, 300), 255, np.uint8)), ("dot", np.zeros((1, 1), np.uint8))):
        cv2.imwrite(str(tmp_path / f"{name}.png"), img)
        assert main(["calibrate", str(tmp_path / f"{name}.png"), "--propose"]) == 2
        line = _one_line(capsys.readouterr().err)
        assert f"{name}.png" in line and "no calibration written" in line and "by hand" in line
        assert not (tmp_path / f"{name}.calib.json").exists()


def test_a_pickle_named_safetensors_given_to_resume_is_one_line(tmp_path):
    import pickle

    from core.common.errors import ModelFileError
    from core.model.model_io import load_checkpoint

    evil = tmp_path / "evil.safetensors"
    evil.write_bytes(pickle.dumps({"format": "welltrace-checkpoint"}))
    # torch 2.13 reads a file so named with safetensors ("not a training checkpoint"); torch 2.11 (the H100's)
    # unpickles it under weights_only and refuses the protocol ("refused"): one line either way
    with pytest.raises(ModelFileError, match="not a training checkpoint|refused: the checkpoint holds objects"):
        load_checkpoint(evil)


def test_calibrate_with_a_folder_as_out_is_one_line(tmp_path, capsys):
    folder = _folder(tmp_path, 1)
    target = tmp_path / "adir"
    target.mkdir()
    assert main(["calibrate", str(folder / "synth_000.png"), "--propose", "--out", str(target), "--force"]) == 2
    assert "adir" in _one_line(capsys.readouterr().err) and target.is_dir()


def test_a_section_running_past_the_scan_is_read_to_its_end_and_said(tmp_path, capsys):
    folder = _folder(tmp_path, 1)
    cal = json.loads((folder / "synth_000.calib.json").read_text())
    cal["sections"] = [{"span": [0, 2000]}]  # the scan is 900 px along depth
    (folder / "synth_000.calib.json").write_text(json.dumps(cal))
    out = tmp_path / "log.las"
    assert main(["digitize", str(folder / "synth_000.png"), "--calib", str(folder / "synth_000.calib.json"),
                 "--classical", "--out", str(out)]) == 0
    assert "sections[0].span ends at 2000 px, past the scan's 900 px" in capsys.readouterr().err
    assert lasio.read(out).index.size > 10


def test_curves_read_from_the_scale_box_are_digitised_only_once_confirmed_or_accepted(tmp_path, capsys):
    """`calibrate --propose` marks the curves it read "proposed": digitize refuses them in one line naming them,
    a scan of a folder run fails alone for it, and --accept-proposed reads them as read."""
    folder = _folder(tmp_path, 2)
    path = folder / "synth_000.calib.json"
    cal = json.loads(path.read_text())
    cal["curves"][0]["proposed"] = True
    path.write_text(json.dumps(cal))
    out = tmp_path / "one.las"
    argv = ["digitize", str(folder / "synth_000.png"), "--calib", str(path), "--classical", "--out", str(out)]
    assert main(argv) == 2
    line = _one_line(capsys.readouterr().err)
    assert "not yet confirmed" in line and cal["curves"][0]["mnemonic"] in line and "--accept-proposed" in line
    assert not out.exists()
    assert main(argv + ["--accept-proposed"]) == 0 and out.exists()
    assert main(["digitize", str(folder), "--classical", "--out", str(tmp_path / "many"), "--no-qc"]) == 2
    assert "synth_000.png: failed" in capsys.readouterr().err
    assert main(["digitize", str(folder), "--classical", "--out", str(tmp_path / "many"), "--no-qc",
                 "--accept-proposed", "--force"]) == 0


# -- a calibration misread (issue 63, items 7-9, 13-14): refused from the command line naming the calibration --


@pytest.mark.parametrize("edit, words", [
    (lambda c: c["curves"][0].update(log="false"), "curves[0].log: must be true or false, got 'false'"),
    (lambda c: c["curves"][0].update(wrap="no"), "curves[0].wrap: must be true or false, got 'no'"),
    (lambda c: c.update(depth_picks=[[0, 0.0], [1, 99000.0]], step=100.0),
     "depth_picks: extrapolated over the scan synth_000.png's 900 px along depth they reach 0 to 8.9001e+07"),
    (lambda c: c.update(step=2.5e-7), "step: 2.5e-07 is finer than any log can be read at"),
    (lambda c: c["curves"].append(dict(c["curves"][0], mnemonic=c["curves"][0]["mnemonic"] + "_CONF")),
     "_CONF is the name of"),
    (lambda c: c["curves"][0].update(mnemonic="S.P:X", unit="M V"), "curves[0].mnemonic: 'S.P:X' must be letters"),
    (lambda c: c.update(curves=[dict(c["curves"][0], mnemonic=f"C{i}") for i in range(10_000)]),
     "curves: 10,000 curves: at most 100"),
])
def test_a_calibration_a_las_cannot_carry_is_refused_naming_it_before_the_work(tmp_path, capsys, edit, words):
    folder = _folder(tmp_path, 1)
    calib = folder / "synth_000.calib.json"
    data = json.loads(calib.read_text())
    edit(data)
    calib.write_text(json.dumps(data))
    t0 = time.perf_counter()
    code = main(["digitize", str(folder / "synth_000.png"), "--classical", "--out", str(tmp_path / "o.las")])
    line = _one_line(capsys.readouterr().err)
    assert code == 2 and line.startswith(f"welltrace: {calib}: ") and words in line, line
    assert time.perf_counter() - t0 < 10 and not (tmp_path / "o.las").exists()
