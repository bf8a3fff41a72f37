"""A folder of scans in one command: worker processes or a Dask cluster, skipping what is up to date, a bad scan
reported and the rest digitised, and a summary table."""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

import lasio
import numpy as np
import pytest

from core.cli.main import main
from core.common.errors import InputError
from core.digitize.job.folder import jobs_for, scans_in, up_to_date
from core.digitize.job.scan_job import ReadOptions, digitize_file
from core.digitize.job.worker import loads_here
from core.model.bundled import BUNDLED_MODEL


def _folder(tmp_path: Path, count: int = 3) -> Path:
    folder = tmp_path / "scans"
    assert main(["synth", str(folder), "--count", str(count), "--seed", "5", "--width", "900", "--height", "256"]) == 0
    return folder


def _break_one(folder: Path) -> Path:
    """A scan file that is no image, with a calibration beside it: it must fail alone."""
    bad = folder / "broken.png"
    bad.write_bytes(b"not a png at all")
    (folder / "broken.calib.json").write_text((folder / "synth_000.calib.json").read_text())
    return bad


def _summary(path: Path) -> dict[str, dict]:
    with open(path, newline="") as fh:
        return {row["scan"]: row for row in csv.DictReader(fh)}


def test_a_folder_is_digitised_with_a_bad_scan_reported_and_a_summary(tmp_path, capsys):
    folder = _folder(tmp_path)
    _break_one(folder)
    out = tmp_path / "las"
    code = main(["digitize", str(folder), "--classical", "--out", str(out), "--jobs", "2", "--threads", "2"])
    assert code == 2  # the broken scan is named at the end; the others are written
    err = capsys.readouterr().err
    assert "broken.png: failed:" in err and "failed: broken.png" in err
    rows = _summary(out / "digitize-summary.csv")
    assert set(rows) == {"broken.png", "synth_000.png", "synth_001.png", "synth_002.png"}
    assert rows["broken.png"]["status"] == "failed" and rows["broken.png"]["error"]
    for name in ("synth_000", "synth_001", "synth_002"):
        row = rows[f"{name}.png"]
        assert row["status"] == "written", row
        las = lasio.read(out / f"{name}.digitized.las")
        truth = lasio.read(folder / f"{name}.truth.las")
        assert row["curves"].split() == [c.mnemonic for c in truth.curves[1:]]
        shares = dict(kv.split("=") for kv in row["null_share"].split())
        for c in truth.curves[1:]:
            assert float(shares[c.mnemonic]) == pytest.approx(float(np.isnan(las[c.mnemonic]).mean()), abs=1e-3)
        assert float(row["seconds"]) > 0
        assert (out / f"{name}.digitized.qc.png").is_file()


def test_up_to_date_scans_are_skipped_and_a_changed_calibration_is_redone(tmp_path, capsys):
    folder = _folder(tmp_path, 2)
    assert main(["digitize", str(folder), "--classical", "--no-qc"]) == 0
    las = folder / "synth_000.digitized.las"
    first = las.stat().st_mtime_ns
    assert not (folder / "synth_000.digitized.qc.png").exists()
    capsys.readouterr()
    assert main(["digitize", str(folder), "--classical", "--no-qc"]) == 0
    assert "0 to digitise" in capsys.readouterr().err and las.stat().st_mtime_ns == first
    rows = _summary(folder / "digitize-summary.csv")
    assert {r["status"] for r in rows.values()} == {"up to date"}
    later = time.time() + 5
    os.utime(folder / "synth_001.calib.json", (later, later))
    assert main(["digitize", str(folder), "--classical", "--no-qc"]) == 0
    rows = _summary(folder / "digitize-summary.csv")
    assert rows["synth_000.png"]["status"] == "up to date" and rows["synth_001.png"]["status"] == "written"


def test_a_second_run_s_summary_keeps_what_the_first_said_of_the_scans_it_skips(tmp_path, capsys):
    """A folder run again (a scan added, one calibration changed) rewrote digitize-summary.csv with the skipped
    scans' rows empty: their curves, NULL and low-confidence shares and warnings, read the hour before, were gone.
    A skipped scan's row says them again: from the summary that was written with its outputs, else read off its
    LAS files."""
    folder = _folder(tmp_path, 2)
    assert main(["digitize", str(folder), "--classical", "--no-qc"]) == 0
    first = _summary(folder / "digitize-summary.csv")
    assert main(["digitize", str(folder), "--classical", "--no-qc"]) == 0
    second = _summary(folder / "digitize-summary.csv")
    for name, row in second.items():
        assert row["status"] == "up to date"
        for key in ("curves", "null_share", "low_confidence_share", "warnings", "las"):
            assert row[key] == first[name][key], (name, key)
    with open(folder / "digitize-summary.csv", "w", newline="") as fh:  # blank rows, as releases before wrote them:
        writer = csv.DictWriter(fh, list(first["synth_000.png"]))  # they say nothing, the LAS files do
        writer.writeheader()
        for name, row in second.items():
            writer.writerow({**{k: "" for k in row}, "scan": name, "status": "up to date", "las": row["las"]})
    assert main(["digitize", str(folder), "--classical", "--no-qc"]) == 0
    third = _summary(folder / "digitize-summary.csv")
    for name, row in third.items():
        assert row["status"] == "up to date" and row["curves"] == first[name]["curves"]
        for key in ("null_share", "low_confidence_share"):
            got = dict(kv.split("=") for kv in row[key].split())
            want = dict(kv.split("=") for kv in first[name][key].split())
            assert got.keys() == want.keys()
            assert all(float(got[k]) == pytest.approx(float(want[k]), abs=1e-4) for k in want), (name, key)


def test_one_job_writes_what_the_single_scan_command_writes(tmp_path):
    folder = _folder(tmp_path, 1)
    single = tmp_path / "single.las"
    assert main(["digitize", str(folder / "synth_000.png"), "--calib", str(folder / "synth_000.calib.json"),
                 "--classical", "--out", str(single)]) == 0
    [job] = jobs_for(scans_in([folder]), tmp_path / "batch", qc=False)
    (tmp_path / "batch").mkdir()
    outcome = digitize_file(job, ReadOptions())
    assert outcome.status == "written" and not outcome.error
    a, b = lasio.read(single), lasio.read(job.las)
    for c in a.curves[1:]:
        np.testing.assert_array_equal(a[c.mnemonic], b[c.mnemonic])
    assert up_to_date(job, None)


def test_bad_batch_usage_is_one_line(tmp_path, capsys):
    folder = _folder(tmp_path, 1)
    for argv, words in ((["--classical", "--calib", "x.json"], "--calib: for one scan"),
                        (["--classical", "--reference", "--well", "W"], "--well, --reference: for one scan"),
                        (["--classical", "--jobs", "0"], "argument --jobs: expected a whole number of at least 1"),
                        (["--model", "a.safetensors", "--classical"], "exactly one of --model"),
                        (["--model", str(tmp_path / "none.safetensors")], "no such model file")):
        assert main(["digitize", str(folder), *argv]) == 2
        assert words in capsys.readouterr().err
    assert main(["digitize", str(tmp_path / "nowhere")]) == 2
    assert "no such scan or folder" in capsys.readouterr().err
    assert main(["digitize", str(folder / "synth_000.png"), "--classical", "--jobs", "2", "--calib",
                 str(folder / "synth_000.calib.json"), "--out", str(tmp_path / "o.las")]) == 2
    assert "--jobs is for a folder" in capsys.readouterr().err


def test_a_missing_calibration_fails_that_scan_only_and_a_scan_named_twice_is_one_job(tmp_path):
    folder = _folder(tmp_path, 1)
    assert len(scans_in([folder, folder / "synth_000.png"])) == 1
    (folder / "synth_000.calib.json").unlink()
    assert not [p for p in folder.iterdir() if p.name.endswith(".calib.json")]
    with pytest.raises(InputError, match="has a calibration"):  # a folder's scans are its calibrated pictures
        scans_in([folder])
    [job] = jobs_for(scans_in([folder / "synth_000.png"]))  # a scan named alone is tried, and fails alone
    outcome = digitize_file(job, ReadOptions())
    assert outcome.failed and "calib" in outcome.error and not outcome.las


@pytest.mark.slow
def test_a_local_dask_cluster_digitises_the_folder_with_the_model_sent_once(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    folder = _folder(tmp_path, 3)
    _break_one(folder)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        code = main(["digitize", str(folder), "--model", str(BUNDLED_MODEL), "--scheduler", cluster.scheduler_address,
                     "--no-qc"])
        with distributed.Client(cluster) as client:
            # each worker built the network once for its tasks, from the bytes scattered to it once
            loads = client.run(loads_here)
    assert code == 2 and "broken.png" in capsys.readouterr().err
    # no worker built it twice (a worker its nanny restarted under a busy machine starts again from none)
    assert loads and max(loads.values()) <= 1, loads
    rows = _summary(folder / "digitize-summary.csv")
    assert rows["broken.png"]["status"] == "failed"
    for name in ("synth_000", "synth_001", "synth_002"):
        assert rows[f"{name}.png"]["status"] == "written"
        las = lasio.read(folder / f"{name}.digitized.las")
        assert "demo.safetensors" in las.other
        assert np.isfinite(las.curves[1].data).mean() > 0.5


def test_an_unreachable_scheduler_is_one_line(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    from core.digitize.job import dask_cluster

    monkeypatch.setattr(dask_cluster, "CONNECT_S", 3)  # a refused port is retried until then: the same line, sooner
    folder = _folder(tmp_path, 1)
    assert main(["digitize", str(folder), "--classical", "--scheduler", "tcp://127.0.0.1:9", "--no-qc"]) == 2
    assert "the Dask scheduler cannot be used" in capsys.readouterr().err
