"""A folder's scans as jobs: which scans, which are up to date, the summary table."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from core.common.atomic import atomic_write_text
from core.common.errors import InputError
from core.digitize.job.scan_job import ScanJob, ScanOutcome
from core.io.file_names import calib_path_for, digitized_las_for, qc_path_for
from core.io.scan import is_scan_file

SUMMARY_NAME = "digitize-summary.csv"
SUMMARY_FIELDS = ("scan", "status", "curves", "null_share", "low_confidence_share", "warnings", "seconds", "las",
                  "error")


def scans_in(paths: list[str | Path]) -> list[Path]:
    """The scans named, a folder standing for every picture in it that has its calibration ``NAME.calib.json``
    beside it (never its masks, nor the QC pictures of an earlier run), in a stable order; a path that is
    neither is refused by name."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            pictures = sorted(q for q in p.iterdir() if q.is_file() and is_scan_file(q))
            found = [q for q in pictures if calib_path_for(q).is_file()]
            if not found:
                why = (f"none of its {len(pictures)} picture(s) has a calibration NAME.calib.json beside it"
                       if pictures else "the folder holds no scan (PNG, JPEG, BMP or TIFF)")
                raise InputError(str(p), why)
            out += found
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(str(p), "no such scan or folder")
    unique: dict[Path, Path] = {}  # a scan named twice (itself and its folder) is digitised once
    for p in out:
        unique.setdefault(p.resolve(), p)
    return list(unique.values())


def pictures_skipped(paths: list[str | Path]) -> list[Path]:
    """The pictures of the folders among ``paths`` that a folder run leaves out: those without a calibration
    ``NAME.calib.json`` beside them (masks and QC pictures are no scans and not counted). Said, by name: a run
    that skipped them in silence looked like one that digitised the whole folder."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(q for q in p.iterdir() if q.is_file() and is_scan_file(q) and not calib_path_for(q).is_file())
    return out


def jobs_for(scans: list[Path], out_dir: Path | None = None, qc: bool = True,
             accept_proposed: bool = False, model: Path | None = None) -> list[ScanJob]:
    """One job per scan, its calibration ``NAME.calib.json`` beside it (a missing one fails that job only). Two
    scans whose outputs would be one file (``dup.png`` and ``dup.tif``, or one name in two folders with
    ``--out-dir``) are refused by name before any work: one result would silently replace the other."""
    las = [digitized_las_for(s, out_dir) for s in scans]
    jobs = [ScanJob(s, calib_path_for(s), out, qc_path_for(out) if qc else None, accept_proposed=accept_proposed,
                    model=model)
            for s, out in zip(scans, las)]
    by_output: dict[Path, Path] = {}
    for job in jobs:
        other = by_output.setdefault(job.las.resolve(), job.scan)
        if other != job.scan:
            raise InputError(str(job.scan), f"writes {job.las.name}, as {other} does: rename one of the two scans "
                             "(or digitise them apart)")
    return jobs


def outputs_of(job: ScanJob) -> list[Path]:
    """The files a job writes, as far as they can be known before it runs: its LAS of each section the
    calibration names, and its QC picture (one page or its first page)."""
    from core.io.file_names import las_path_for, qc_page_paths

    try:
        from core.io.calibration import Calibration

        suffixes = Calibration.load(job.calib).section_files() or [""]
    except (InputError, OSError):
        suffixes = [""]
    out = [las_path_for(job.las, s) for s in suffixes]
    if job.qc is not None:
        out.append(job.qc if job.qc.exists() else qc_page_paths(job.qc, 2)[0])
    return out


def up_to_date(job: ScanJob, model: Path | None) -> bool:
    """Whether every output of the job (``outputs_of``: each section's LAS, the QC picture) is newer than its
    scan, its calibration and the model: digitising again would write the same files. A run killed after the
    LAS but before the QC picture is not up to date."""
    from core.common.atomic import journal_path_for, pending_outputs

    if pending_outputs(journal_path_for(job.las)):  # killed while its outputs landed: a mix until run again
        return False
    try:
        made = min(p.stat().st_mtime for p in outputs_of(job))
        inputs = [job.scan, job.calib] + ([model] if model else [])
        return all(p.stat().st_mtime < made for p in inputs)
    except OSError:
        return False


def written_since(job: ScanJob, since: float) -> bool:
    """Whether every output of the job was written at or after ``since`` (a time.time()) and none is pending: a
    scan whose result was lost with its worker (the cluster stopped) but whose files landed."""
    from core.common.atomic import journal_path_for, pending_outputs

    if pending_outputs(journal_path_for(job.las)):
        return False
    try:
        return min(p.stat().st_mtime for p in outputs_of(job)) >= since
    except OSError:
        return False


def earlier_summary(path: Path) -> tuple[dict[str, dict[str, str]], float | None]:
    """The rows of the summary a run before this one wrote at ``path``, by scan, and when it was written; none
    when there is none or it cannot be read as one (a summary is a report: an unreadable one is written over)."""
    try:
        text, when = path.read_text(encoding="utf-8"), path.stat().st_mtime
        rows = list(csv.DictReader(io.StringIO(text)))
    except (OSError, UnicodeDecodeError, csv.Error):
        return {}, None
    if not rows or set(SUMMARY_FIELDS) - set(rows[0]):
        return {}, None
    return {row["scan"]: row for row in rows}, when


def skipped_outcome(job: ScanJob, earlier: dict[str, dict[str, str]], earlier_time: float | None) -> ScanOutcome:
    """The summary row of a scan that is up to date: what it holds said again, not left empty (a folder run again
    for one new scan wrote every other row blank). What the earlier summary said of it when that summary was
    written with or after the outputs it describes (its warnings included), else what its LAS files hold: the
    curves and their NULL and low-confidence shares."""
    import numpy as np

    from core.digitize.output.las import CONFIDENCE_SUFFIX
    from core.digitize.rules.confidence import low_confidence_share
    from core.io.las_io import read_las

    las = [p for p in outputs_of(job) if p.suffix.lower() == ".las"]
    outcome = ScanOutcome(job.scan.name, "up to date", las=[str(p) for p in las])
    row = earlier.get(job.scan.name)
    try:
        made = max(p.stat().st_mtime for p in outputs_of(job))
        # that row, of these very files, and saying something (a summary of releases before this one left it blank)
        if row is not None and row["status"] in ("written", "up to date") and row["las"] == " ".join(outcome.las) \
                and row["curves"] and earlier_time is not None and earlier_time >= made:
            outcome.take_row(row)
            return outcome
        read = [read_las(p) for p in las]
    except (OSError, ValueError, InputError):  # an output gone or unreadable: the row says only that it is up to date
        return outcome
    names = [c.mnemonic for c in read[0].curves if not c.mnemonic.endswith(CONFIDENCE_SUFFIX)]
    for name in names:
        values = np.concatenate([d.curve(name).values for d in read if name in d.mnemonics])
        conf = [d.curve(name + CONFIDENCE_SUFFIX).values for d in read if name + CONFIDENCE_SUFFIX in d.mnemonics]
        outcome.null_share[name] = float(np.mean(~np.isfinite(values))) if values.size else 0.0
        outcome.low_confidence_share[name] = low_confidence_share(values, np.concatenate(conf)) \
            if len(conf) == len(read) else 0.0
    outcome.curves = names
    return outcome


def summary_csv(outcomes: list[ScanOutcome]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, SUMMARY_FIELDS, lineterminator="\n")
    writer.writeheader()
    for o in outcomes:
        writer.writerow(o.row())
    return buf.getvalue()


def write_summary(path: Path, outcomes: list[ScanOutcome]) -> None:
    atomic_write_text(path, summary_csv(outcomes))

