"""Nothing destroyed (issue 63, items 1-6): no output may be an input or another output of the same run, refused
before anything is written; a run killed while its outputs land leaves one run's outputs once the next run (or
``finish_outputs``) completes it, and no temporaries; a scan digitised again keeps no QC page of the earlier run."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cli.main import main
from core.common.atomic import (
    atomic_write_text,
    finish_outputs,
    journal_path_for,
    outputs_together,
    pending_outputs,
    stage_removal,
)
from core.common.errors import InputError
from core.common.output_paths import refuse_clobbering, same_file
from core.digitize.job.folder import jobs_for, scans_in, up_to_date

ROOT = Path(__file__).resolve().parents[2]


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("welltrace: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def synth_scan(tmp_path_factory) -> Path:
    """One synthetic scan (900 × 256 px) with its calibration and its mask."""
    folder = tmp_path_factory.mktemp("scan")
    assert main(["synth", str(folder), "--count", "1", "--seed", "5", "--width", "900", "--height", "256"]) == 0
    return folder / "synth_000.png"


def _copy_scan(synth_scan: Path, dest: Path) -> tuple[Path, Path, Path]:
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for name in ("synth_000.png", "synth_000.calib.json", "synth_000.mask.png"):
        (dest / name).write_bytes((synth_scan.parent / name).read_bytes())
        out.append(dest / name)
    return tuple(out)


# -- a family of spellings of one file: the check must see through each ---------------------------------------

SPELLINGS = ("as is", "relative", "dot", "dotdot", "symlink", "hardlink", "symlinked folder")


def _spell(path: Path, how: str, work: Path) -> Path:
    if how == "as is":
        return path
    if how == "relative":
        return Path(os.path.relpath(path, Path.cwd()))
    if how == "dot":
        return path.parent / "." / path.name
    if how == "dotdot":
        return path.parent / "sub" / ".." / path.name
    if how == "symlink":
        link = work / f"link-{path.name}"
        if not link.exists():
            link.symlink_to(path)
        return link
    if how == "hardlink":
        link = work / f"hard-{path.name}"
        if not link.exists():
            os.link(path, link)
        return link
    link = work / "folder-link"
    if not link.exists():
        link.symlink_to(path.parent, target_is_directory=True)
    return link / path.name


@settings(max_examples=60)
@given(which=st.sampled_from(["the scan", "its calibration", "the model"]), how=st.sampled_from(SPELLINGS),
       flag=st.sampled_from(["--out", "--qc", "--mask-out"]))
def test_an_output_spelled_any_way_as_an_input_is_refused(tmp_path_factory, which, how, flag):
    work = tmp_path_factory.mktemp("spell")
    (work / "sub").mkdir()
    files = {name: work / f"{name.replace(' ', '_')}.bin" for name in ("the scan", "its calibration", "the model")}
    for path in files.values():
        path.write_bytes(b"input")
    inputs = list(files.items())
    with pytest.raises(InputError) as ei:
        refuse_clobbering([(flag, _spell(files[which], how, work))], inputs)
    assert f"{flag} is {which}: writing it would destroy {which}" in ei.value.one_line()
    refuse_clobbering([(flag, work / "elsewhere.las")], inputs)  # another name is fine
    assert same_file(_spell(files[which], how, work), files[which])


def test_two_outputs_of_one_run_may_not_be_one_file(tmp_path):
    with pytest.raises(InputError, match="--qc is also --out: one output would replace the other"):
        refuse_clobbering([("--out", tmp_path / "x.png"), ("--qc", tmp_path / "." / "x.png")], [])


@pytest.mark.parametrize("flags,destroyed", [
    (["--out", "{scan}"], "scan"),
    (["--out", "{calib}"], "calib"),
    (["--qc", "{scan}"], "scan"),
    (["--mask-out", "{calib}"], "calib"),
    (["--mask-out", "{scan}"], "scan"),
    (["--from-mask", "{mask}", "--mask-out", "{mask}"], "mask"),
    (["--out", "{dir}/x.png", "--qc", "{dir}/x.png"], None),
])
def test_digitize_refuses_an_output_that_is_an_input_before_writing(synth_scan, tmp_path, capsys, flags, destroyed):
    """Item 1 (``--out S`` replaced the scan, exit 0) and item 2 (``--out X.png --qc X.png`` lost the LAS)."""
    scan, calib, mask = _copy_scan(synth_scan, tmp_path / "in")
    names = {"scan": scan, "calib": calib, "mask": mask, "dir": tmp_path}
    before = {p: _md5(p) for p in (scan, calib, mask)}
    argv = ["digitize", str(scan), "--calib", str(calib)] + [f.format(**names) for f in flags]
    if "--from-mask" not in flags:
        argv.append("--classical")
    if "--out" not in flags:
        argv += ["--out", str(tmp_path / "o.las")]
    assert main(argv) == 2
    line = _one_line(capsys.readouterr().err)
    assert ("would destroy" in line) if destroyed else ("one output would replace the other" in line)
    assert {p: _md5(p) for p in (scan, calib, mask)} == before
    assert not (tmp_path / "o.las").exists() and not (tmp_path / "x.png").exists()
    assert not [p for p in (tmp_path / "in").iterdir() if p.name.startswith(".")]


def test_a_folder_runs_summary_may_not_be_a_scan_or_calibration(synth_scan, tmp_path, capsys):
    scan, calib, _ = _copy_scan(synth_scan, tmp_path / "f")
    before = (_md5(scan), _md5(calib))
    for target in (scan, calib):
        assert main(["digitize", str(tmp_path / "f"), "--classical", "--summary", str(target)]) == 2
        assert "--summary is the" in _one_line(capsys.readouterr().err)
    assert (_md5(scan), _md5(calib)) == before and not (tmp_path / "f" / "synth_000.digitized.las").exists()


def test_calibrate_never_writes_its_draft_over_the_scan(synth_scan, tmp_path, capsys):
    """Item 3: ``calibrate S --propose --force --out S`` exited 2 and wrote its draft over the scan."""
    scan, _, _ = _copy_scan(synth_scan, tmp_path / "c")
    before = _md5(scan)
    assert main(["calibrate", str(scan), "--propose", "--force", "--out", str(scan)]) == 2
    assert "--out is the scan" in _one_line(capsys.readouterr().err)
    assert _md5(scan) == before


def test_inside_a_run_an_output_that_is_a_protected_input_is_refused(tmp_path):
    """The job's own check (every route: the command line, folder workers, Dask, the app): a file written inside
    ``outputs_together`` whose target is an input is refused before any output lands."""
    scan = tmp_path / "s.png"
    scan.write_bytes(b"scan")
    out = tmp_path / "o.las"
    with pytest.raises(InputError, match="is the scan"):
        with outputs_together(inputs=[("the scan", scan)]):
            atomic_write_text(out, "las")
            atomic_write_text(tmp_path / "." / "s.png", "a QC page")
    assert scan.read_bytes() == b"scan" and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.png"]


# -- a run killed while its outputs land ------------------------------------------------------------------------

_KILLED_RUN = r"""
import os, signal, sys
from pathlib import Path
import core.common.atomic as atomic
from core.digitize.job.scan_job import ReadOptions, ScanJob, digitize_scan

scan, calib, out, after = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
real, count = os.replace, [0]

def replace(src, dst):  # SIGKILL after `after` renames: the moment a power cut or the OOM killer may choose
    if count[0] == after:
        os.kill(os.getpid(), signal.SIGKILL)
    count[0] += 1
    real(src, dst)

atomic.os.replace = replace
digitize_scan(ScanJob(scan, calib, out, qc=out.with_name("log.qc.png"), mask_out=out.with_name("log.mask.png")),
              ReadOptions())
"""


def _long_scan(tmp_path: Path) -> tuple[Path, Path]:
    """A 4,000 px log: three QC pages, a LAS, a class mask (five outputs)."""
    folder = tmp_path / "long"
    assert main(["synth", str(folder), "--count", "1", "--seed", "8", "--width", "4000", "--height", "256"]) == 0
    return folder / "synth_000.png", folder / "synth_000.calib.json"


def _outputs(folder: Path) -> dict[str, str]:
    return {p.name: _md5(p) for p in sorted(folder.iterdir()) if p.name.startswith("log")}


def test_a_run_killed_while_its_outputs_land_is_completed_by_the_next(tmp_path):
    """Item 5: SIGKILL while a scan's outputs were renamed into place left the new LAS beside the old QC pages
    and the temporaries. Now the renames are recorded (a journal, on disk) before the first: the state the kill
    leaves is marked pending (not up to date), and finishing it gives exactly the outputs of the killed run."""
    scan, calib = _long_scan(tmp_path)
    cal = json.loads(calib.read_text())
    other = tmp_path / "other.calib.json"
    other.write_text(json.dumps({**cal, "step": cal["step"] * 2}))  # a second run that writes other files
    ref_a, ref_b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    for folder, c in ((ref_a, calib), (ref_b, other), (out, calib)):
        folder.mkdir()
        assert main(["digitize", str(scan), "--calib", str(c), "--classical", "--out", str(folder / "log.las"),
                     "--qc", str(folder / "log.qc.png"), "--mask-out", str(folder / "log.mask.png")]) == 0
    a, b = _outputs(ref_a), _outputs(ref_b)
    assert len(a) == 5 and a.keys() == b.keys() and a != b
    # killed after the journal (one rename) and two outputs: the new LAS beside the old pages, as the issue saw
    run = subprocess.run([sys.executable, "-c", _KILLED_RUN, str(scan), str(other), str(out / "log.las"), "3"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == -9, run.stderr
    journal = journal_path_for(out / "log.las")
    assert pending_outputs(journal)
    mixed = _outputs(out)
    assert mixed != a and mixed != b  # what the kill left, until completed
    finished = finish_outputs(journal)
    assert len(finished) == 3 and _outputs(out) == b and not pending_outputs(journal)
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


def test_the_next_run_completes_a_killed_runs_outputs_and_clears_its_temporaries(tmp_path):
    scan, calib = _long_scan(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    # killed at the first rename (that of the journal itself): no journal, every temporary left behind
    run = subprocess.run([sys.executable, "-c", _KILLED_RUN, str(scan), str(calib), str(out / "log.las"), "0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == -9, run.stderr
    assert len([p for p in out.iterdir() if p.name.startswith(".")]) == 6  # five outputs and the journal
    assert not _outputs(out)
    # killed half way on a second try: a journal this time
    run = subprocess.run([sys.executable, "-c", _KILLED_RUN, str(scan), str(calib), str(out / "log.las"), "3"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == -9 and pending_outputs(journal_path_for(out / "log.las"))
    assert main(["digitize", str(scan), "--calib", str(calib), "--classical", "--out", str(out / "log.las"),
                 "--qc", str(out / "log.qc.png"), "--mask-out", str(out / "log.mask.png")]) == 0
    assert len(_outputs(out)) == 5
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # the first try's temporaries too


def test_a_folder_run_is_not_up_to_date_while_a_killed_runs_outputs_are_pending(synth_scan, tmp_path):
    _copy_scan(synth_scan, tmp_path / "f")
    assert main(["digitize", str(tmp_path / "f"), "--classical"]) == 0
    [job] = jobs_for(scans_in([tmp_path / "f"]))
    assert up_to_date(job, None)
    journal_path_for(job.las).write_text(json.dumps({"renames": [], "removals": []}))
    assert not up_to_date(job, None)


def test_a_shorter_run_leaves_no_qc_page_of_the_earlier_one(tmp_path):
    """Item 6: digitised again with a shorter section, a scan kept the earlier run's pages past the new last."""
    scan, calib = _long_scan(tmp_path)
    out = tmp_path / "out"
    qc = out / "log.qc.png"
    argv = ["digitize", str(scan), "--calib", str(calib), "--classical", "--out", str(out / "log.las"), "--qc",
            str(qc)]
    assert main(argv) == 0
    assert sorted(p.name for p in out.glob("log.qc*")) == ["log.qc-p01.png", "log.qc-p02.png", "log.qc-p03.png"]
    cal = json.loads(calib.read_text())
    short = tmp_path / "short.calib.json"
    short.write_text(json.dumps({**cal, "sections": [{"span": [0, 1500]}]}))
    argv[3] = str(short)
    assert main(argv) == 0
    assert sorted(p.name for p in out.glob("log.qc*")) == ["log.qc.png"]  # one page: the three pages gone
    argv[3] = str(calib)
    assert main(argv) == 0
    assert sorted(p.name for p in out.glob("log.qc*")) == ["log.qc-p01.png", "log.qc-p02.png", "log.qc-p03.png"]


def test_removals_land_with_the_outputs_or_not_at_all(tmp_path):
    old = tmp_path / "old-p09.png"
    old.write_text("an earlier page")
    with pytest.raises(RuntimeError):
        with outputs_together(journal_path_for(tmp_path / "x.las")):
            atomic_write_text(tmp_path / "x.las", "new")
            stage_removal(old)
            raise RuntimeError("the QC picture failed")
    assert old.exists() and not (tmp_path / "x.las").exists()
    with outputs_together(journal_path_for(tmp_path / "x.las")):
        atomic_write_text(tmp_path / "x.las", "new")
        stage_removal(old)
    assert not old.exists() and (tmp_path / "x.las").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.las"]


# -- names the file system can take, faults that name their file -------------------------------------------------


def test_a_long_output_name_gets_a_temporary_the_file_system_can_hold(tmp_path):
    """A 250-character ``--out`` was refused: its temporary's name (``.NAME.xxxxxxxx.tmp``) was over 255."""
    target = tmp_path / ("x" * 246 + ".las")
    assert len(target.name) == 250
    with outputs_together(journal_path_for(target)):
        atomic_write_text(target, "las")
    assert target.read_text() == "las"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_a_full_disk_names_the_file_it_could_not_write(tmp_path, capsys):
    """``RLIMIT_FSIZE`` makes the LAS's write fail with EFBIG as a full disk fails with ENOSPC: an ``OSError``
    that names no file. The one line names the LAS; the earlier one stays."""
    folder = tmp_path / "f"
    assert main(["synth", str(folder), "--count", "1", "--seed", "5", "--width", "900", "--height", "256"]) == 0
    out = tmp_path / "log.las"
    out.write_text("an earlier run's LAS")
    code = (
        "import resource, signal, sys\n"
        "from core.cli.main import main\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        f"sys.exit(main(['digitize', {str(folder / 'synth_000.png')!r}, '--classical', '--out', {str(out)!r}]))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stderr
    assert _one_line(run.stderr).startswith(f"welltrace: {out}: File too large")
    assert out.read_text() == "an earlier run's LAS"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_scan_named_like_a_qc_page_is_never_removed_as_a_stale_page(synth_scan, tmp_path):
    """``--qc log.png`` writes ``log-p01.png``… for a long log; a one-page run removes an earlier run's pages, but
    never the run's own scan that happens to bear such a name."""
    scan, calib, _ = _copy_scan(synth_scan, tmp_path)
    page_named = tmp_path / "log-p01.png"
    scan.rename(page_named)
    before = _md5(page_named)
    assert main(["digitize", str(page_named), "--calib", str(calib), "--classical", "--out", str(tmp_path / "o.las"),
                 "--qc", str(tmp_path / "log.png")]) == 0
    assert _md5(page_named) == before and (tmp_path / "log.png").exists()


def test_a_journal_names_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    journal = journal_path_for(Path("x.las"))
    with outputs_together(journal):
        atomic_write_text("x.las", "las")
        # the record as it stood before the renames: written, then removed after the last
        assert not journal.exists()
    assert Path("x.las").read_text() == "las" and not journal.exists()
    record = {"renames": [[str(tmp_path / ".x.las.abcdefgh.tmp"), str(tmp_path / "x.las")]], "removals": []}
    (tmp_path / ".x.las.abcdefgh.tmp").write_text("new")
    journal.write_text(json.dumps(record))
    monkeypatch.chdir("/")
    assert finish_outputs(tmp_path / journal.name) == [tmp_path / "x.las"]
    assert (tmp_path / "x.las").read_text() == "new"
