"""Digitising many scans: one scan as a self-contained job, the jobs of a folder, and their summary table.

A job is everything a worker needs to digitise one scan without asking anyone: the scan, its calibration, where
its LAS (and QC picture) go. :func:`digitize_file` runs one and always returns a :class:`ScanOutcome`: a scan
that cannot be read, a calibration that is wrong, even an internal failure is one outcome marked ``failed``
with the reason, never the end of a batch. The app's *Digitise all*, the command line's process pool and its
Dask cluster (``core/digitize/batch_run.py``) all run jobs through it, so every route writes the same files.
"""

from __future__ import annotations

import csv
import io
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.common.atomic import atomic_write_text, outputs_together
from core.common.errors import InputError
from core.io.project import digitized_path_for
from core.io.scan import calib_path_for, is_scan_file

SUMMARY_NAME = "digitize-summary.csv"
SUMMARY_FIELDS = ("scan", "status", "curves", "null_share", "low_confidence_share", "warnings", "seconds", "las",
                  "error")


def digitized_las_for(scan: Path, out_dir: Path | None = None) -> Path:
    """``NAME.digitized.las`` beside the scan (what the app writes and looks for), or in ``out_dir``."""
    las = digitized_path_for(scan)
    return out_dir / las.name if out_dir else las


def qc_path_for(las: Path) -> Path:
    """The QC picture beside a LAS file: ``NAME.digitized.qc.png`` for ``NAME.digitized.las``."""
    return las.with_name(f"{las.stem}.qc.png")


@dataclass(frozen=True)
class ScanJob:
    scan: Path
    calib: Path
    las: Path  # the main pass; other sections go beside it (``las_path_for``)
    qc: bool = True  # also write the QC picture beside the LAS


@dataclass
class ScanOutcome:
    scan: str
    status: str  # "written", "up to date" (skipped) or "failed"
    curves: list[str] = field(default_factory=list)
    null_share: dict[str, float] = field(default_factory=dict)  # per curve, over every section written
    low_confidence_share: dict[str, float] = field(default_factory=dict)  # per curve: written but flagged unsure
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    las: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def row(self) -> dict[str, str]:
        return {"scan": self.scan, "status": self.status, "curves": " ".join(self.curves),
                "null_share": " ".join(f"{k}={v:.4f}" for k, v in self.null_share.items()),
                "low_confidence_share": " ".join(f"{k}={v:.4f}" for k, v in self.low_confidence_share.items()),
                "warnings": " | ".join(self.warnings), "seconds": f"{self.seconds:.2f}",
                "las": " ".join(self.las), "error": self.error}


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


def jobs_for(scans: list[Path], out_dir: Path | None = None, qc: bool = True) -> list[ScanJob]:
    """One job per scan, its calibration ``NAME.calib.json`` beside it (a missing one fails that job only). Two
    scans whose outputs would be one file (``dup.png`` and ``dup.tif``, or one name in two folders with
    ``--out-dir``) are refused by name before any work: one result would silently replace the other."""
    jobs = [ScanJob(s, calib_path_for(s), digitized_las_for(s, out_dir), qc) for s in scans]
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
    from .pipeline import las_path_for
    from .qc_picture import qc_page_paths

    try:
        from core.io.calibration import Calibration

        suffixes = Calibration.load(job.calib).section_files() or [""]
    except (InputError, OSError):
        suffixes = [""]
    out = [las_path_for(job.las, s) for s in suffixes]
    if job.qc:
        qc = qc_path_for(job.las)
        out.append(qc if qc.exists() else qc_page_paths(qc, 2)[0])
    return out


def up_to_date(job: ScanJob, model: Path | None) -> bool:
    """Whether every output of the job (``outputs_of``: each section's LAS, the QC picture) is newer than its
    scan, its calibration and the model: digitising again would write the same files. A run killed after the
    LAS but before the QC picture is not up to date."""
    try:
        made = min(p.stat().st_mtime for p in outputs_of(job))
        inputs = [job.scan, job.calib] + ([model] if model else [])
        return all(p.stat().st_mtime < made for p in inputs)
    except OSError:
        return False


def digitize_file(job: ScanJob, model=None, model_name: str | None = None, accept_proposed: bool = False,
                  **kwargs) -> ScanOutcome:
    """Digitise one scan as its job says (``kwargs`` go to ``digitize_sections``: precision, device, memory
    ceiling…), write its LAS files and QC picture, and say how it went. Never raises for one bad scan."""
    from core.io.calibration import Calibration
    from core.io.scan import load_scan

    from .pipeline import digitize_sections, las_path_for, write_result

    t0 = time.perf_counter()
    name = job.scan.name
    try:
        calib = Calibration.load(job.calib)
        if not calib.curves:
            raise InputError(str(job.calib), "the calibration names no curve")
        calib.require_confirmed(str(job.calib), accept_proposed)
        scan = load_scan(job.scan)
        parts = digitize_sections(scan.image, calib, source=str(job.scan), rgb=scan.rgb, model=model, **kwargs)
        written = []
        with outputs_together():  # main, repeat and QC land together or not at all
            for suffix, _, res in parts:
                path = las_path_for(job.las, suffix)
                write_result(path, res, calib, name, model_name)
                written.append(str(path))
            if job.qc:
                from .qc_picture import write_qc

                write_qc(qc_path_for(job.las), scan.rgb if scan.rgb is not None else scan.image, calib, parts,
                         name, model_name or "")
    except (InputError, OSError) as exc:
        return ScanOutcome(name, "failed", seconds=time.perf_counter() - t0, error=str(exc))
    except Exception as exc:  # an internal failure on one scan: the batch goes on, the reason is kept
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return ScanOutcome(name, "failed", seconds=time.perf_counter() - t0,
                           error=f"internal error: {type(exc).__name__}: {exc} ({Path(where.filename).name}:"
                                 f"{where.lineno})")
    from .confidence import low_confidence_share

    values: dict[str, list[np.ndarray]] = {}
    confidence: dict[str, list[np.ndarray]] = {}
    warnings: list[str] = []
    for _, _, res in parts:
        for k, v in res.values.items():
            values.setdefault(k, []).append(v)
            confidence.setdefault(k, []).append(res.confidence.get(k, np.ones_like(v)))
        warnings += [w for w in res.warnings if w not in warnings]
    null = {k: float(np.mean(~np.isfinite(np.concatenate(v)))) for k, v in values.items()}
    low = {k: low_confidence_share(np.concatenate(v), np.concatenate(confidence[k])) for k, v in values.items()}
    return ScanOutcome(name, "written", list(values), null, low, warnings, time.perf_counter() - t0, written)


def summary_csv(outcomes: list[ScanOutcome]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, SUMMARY_FIELDS, lineterminator="\n")
    writer.writeheader()
    for o in outcomes:
        writer.writerow(o.row())
    return buf.getvalue()


def write_summary(path: Path, outcomes: list[ScanOutcome]) -> None:
    atomic_write_text(path, summary_csv(outcomes))
