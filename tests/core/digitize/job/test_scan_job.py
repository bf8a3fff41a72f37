"""``core/digitize/job/scan_job.py``: the one job function, called as every route calls it, with a stub sink."""

import lasio
import pytest

from core.cli.main import main
from core.common.errors import InputError
from core.digitize.job.scan_job import (
    JobProgress,
    JobWarning,
    JobWritten,
    ReadOptions,
    ScanJob,
    digitize_file,
    digitize_scan,
)
from core.io.file_names import qc_page_paths


def _scan(tmp_path):
    main(["synth", str(tmp_path), "--count", "1", "--seed", "3", "--width", "1200", "--height", "256"])
    return tmp_path / "synth_000.png", tmp_path / "synth_000.calib.json"


def test_one_scan_in_its_outputs_and_events_out(tmp_path):
    scan, calib = _scan(tmp_path)
    job = ScanJob(scan, calib, tmp_path / "out" / "a.las", qc=tmp_path / "out" / "a.qc.png",
                  mask_out=tmp_path / "out" / "a.mask.png", well="W-7")
    (tmp_path / "out").mkdir()
    events = []
    outcome = digitize_scan(job, ReadOptions(), events.append)
    kinds = [type(e) for e in events]
    assert JobProgress in kinds and kinds[-1] is JobWritten and set(kinds) <= {JobProgress, JobWarning, JobWritten}
    written = events[-1].paths
    assert str(job.las) in written and str(job.mask_out) in written
    assert all(p.exists() for p in qc_page_paths(job.qc, len(outcome.qc_pages)))
    assert outcome.status == "written" and outcome.las == [str(job.las)] and outcome.parts
    las = lasio.read(str(job.las))
    assert las.well["WELL"].value == "W-7" and set(outcome.curves) <= {c.mnemonic for c in las.curves}
    # a batch's wrapper returns the same summary without the parts (a worker sends it back)
    again = digitize_file(ScanJob(scan, calib, tmp_path / "b.las"), ReadOptions())
    assert again.status == "written" and again.parts == [] and again.null_share == outcome.null_share


def test_bad_inputs_are_refused_before_the_reader_is_loaded(tmp_path):
    scan, calib = _scan(tmp_path)
    loaded = []

    def reader() -> ReadOptions:
        loaded.append(1)
        return ReadOptions()

    (tmp_path / "a-file").write_text("")
    with pytest.raises(InputError, match="cannot be written"):  # its folder would have to be a file
        digitize_scan(ScanJob(scan, calib, tmp_path / "a-file" / "x.las"), reader)
    assert not loaded
    outcome = digitize_file(ScanJob(tmp_path / "missing.png", calib, tmp_path / "x.las"), ReadOptions())
    assert outcome.failed and "missing.png" in outcome.error
