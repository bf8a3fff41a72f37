"""Digitising one scan: a scan, its calibration and the reading options in; its LAS files, QC pages, class mask and
summary out, as events.

:func:`digitize_scan` is the one place this is written. The command line's one-scan run, a folder's worker
processes and its Dask workers (``core/digitize/job/local_workers.py``, ``dask_cluster.py``, through
:func:`digitize_file`) and the app's *Digitise* and *Digitise all* all go through it, so every route checks, reads
and writes the same way and writes the same files. A job is everything a worker needs without asking anyone: where
the scan and its calibration are, where its outputs go. :func:`digitize_file` runs one and always returns a
:class:`ScanOutcome`: a scan that cannot be read, a calibration that is wrong, even an internal failure is one
outcome marked ``failed`` with the reason, never the end of a batch.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from core.common.atomic import journal_path_for, outputs_together, require_writable, stage_removal
from core.common.errors import InputError
from core.common.events import Event
from core.common.output_paths import refuse_clobbering
from core.io.file_names import las_path_for, stale_qc_pages, stale_section_las


@dataclass(frozen=True)
class ScanJob:
    scan: Path
    calib: Path
    las: Path  # the main pass; other sections go beside it (``las_path_for``), or ``section`` alone here
    qc: Path | None = None  # the QC picture (its pages beside it for a long log); None: none
    mask_out: Path | None = None  # the class mask the curves were traced from, in the scan's frame; None: none
    from_mask: Path | None = None  # trace this class mask (a hand-corrected label) instead of reading the scan
    section: int | None = None  # trace only this section (0-based) into ``las``; None: every section
    well: str | None = None  # the well name for the LAS header
    accept_proposed: bool = False  # digitise curves a proposal read from the scale box, unconfirmed
    model: Path | None = None  # the model file read, if any: an input no output may replace

    def inputs(self) -> list[tuple[str, Path | None]]:
        """What the job reads, named as a refusal names it: no output may be one of them."""
        return [("the scan", self.scan), ("its calibration", self.calib), ("the mask it traces (--from-mask)",
                                                                           self.from_mask), ("the model", self.model)]


@dataclass
class ReadOptions:
    """How a job's scans are read: the network (None: the classical tracer, or the job's mask) and its settings."""

    model: object | None = None  # a loaded network
    model_name: str | None = None  # what the LAS provenance names as the reader (the model file's name)
    precision: object | None = None  # ``core.model.precision.Precision``; None: the one the model was trained in
    device: str = "cpu"
    tile: int | None = None  # window length along depth (``core/digitize/evidence/network.py``)
    memory_ceiling: int | None = None  # bytes; None: 90 % of the memory available
    whole_picture: bool = False
    reference: bool = False


@dataclass
class Loaded:
    """Inputs a caller already holds (the app's open scan, its calibration, the mask being labelled): used
    instead of reading the job's files again. ``mask`` None traces the scan (or the job's ``from_mask``)."""

    scan: object  # ``core.io.scan.Scan``
    calib: object  # ``core.io.calibration.Calibration``
    mask: np.ndarray | None = None


@dataclass
class JobProgress(Event):
    """How far the network's reading of the scan is: ``done`` windows of ``total``."""

    done: int
    total: int
    type: str = field(init=False, default="progress")


@dataclass
class JobWarning(Event):
    text: str
    type: str = field(init=False, default="warning")


@dataclass
class JobWritten(Event):
    """The job's outputs landed, together: every LAS, the class mask and the QC pages."""

    paths: list[str]
    type: str = field(init=False, default="written")


@dataclass
class ScanOutcome:
    scan: str
    # "written", "up to date" (skipped), "failed", "skipped" (a picture with no calibration) or "not run" (the run
    # stopped before it: interrupted, or its cluster lost)
    status: str
    curves: list[str] = field(default_factory=list)
    null_share: dict[str, float] = field(default_factory=dict)  # per curve, over every section written
    low_confidence_share: dict[str, float] = field(default_factory=dict)  # per curve: written but flagged unsure
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    las: list[str] = field(default_factory=list)
    error: str = ""
    # (LAS suffix, section, result) per section read: for a caller that shows or reports them; never sent back
    # from a worker (``digitize_file`` drops them: the class masks are the scan's size)
    parts: list = field(default_factory=list, repr=False, compare=False)
    qc_pages: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def row(self) -> dict[str, str]:
        return {"scan": self.scan, "status": self.status, "curves": " ".join(self.curves),
                "null_share": " ".join(f"{k}={v:.4f}" for k, v in self.null_share.items()),
                "low_confidence_share": " ".join(f"{k}={v:.4f}" for k, v in self.low_confidence_share.items()),
                "warnings": " | ".join(self.warnings), "seconds": f"{self.seconds:.2f}",
                "las": " ".join(self.las), "error": self.error}

    def take_row(self, row: dict[str, str]) -> None:
        """What a summary row (:meth:`row`, read back) says of the scan's curves: their names, NULL and
        low-confidence shares and the warnings, into this outcome (a skipped scan's row said again)."""
        self.curves = row["curves"].split()
        for name, shares in (("null_share", self.null_share), ("low_confidence_share", self.low_confidence_share)):
            for kv in row[name].split():
                k, _, v = kv.partition("=")
                shares[k] = float(v)
        self.warnings = [w for w in row["warnings"].split(" | ") if w]


EventSink = Callable[[Event], None]


def _load(job: ScanJob, loaded: Loaded | None):
    """(scan, calibration, mask) of the job: the caller's when it holds them, else read and checked from files."""
    from core.io.calibration import Calibration
    from core.io.scan import load_mask, load_scan

    if loaded is not None:
        scan, calib, mask = loaded.scan, loaded.calib, loaded.mask
    else:
        scan, calib, mask = None, Calibration.load(job.calib), None
    if not calib.curves:
        raise InputError(str(job.calib), "add at least one curve: the calibration names none (a proposal holds the "
                         "curves its scale box prints, if any could be read; see docs/file-formats.md)")
    calib.require_confirmed(str(job.calib), job.accept_proposed)
    outputs = [("the LAS (--out)", job.las), ("the class mask (--mask-out)", job.mask_out),
               ("the QC picture (--qc)", job.qc)]
    if job.section is None:  # each section's LAS beside the main one (OUT.repeat.las …)
        outputs += [(f"the {s} LAS", las_path_for(job.las, s)) for s in calib.section_files() if s]
    refuse_clobbering(outputs, job.inputs())  # an output that is an input would destroy it: refused first
    require_writable([p for _, p in outputs])  # before the long work, not after it
    if scan is None:
        scan = load_scan(job.scan)
    if mask is None and job.from_mask is not None:
        mask = load_mask(job.from_mask, scan.image.shape)
    return scan, calib, mask


def digitize_scan(job: ScanJob, read: ReadOptions | Callable[[], ReadOptions], sink: EventSink | None = None,
                  loaded: Loaded | None = None, ahead=None) -> ScanOutcome:
    """Digitise the job's scan and write its outputs, together or not at all (``outputs_together``): each
    section's LAS, the class mask and the QC pages. Events go to ``sink`` as they happen (progress of the
    network's reading, the warnings, the files written). Raises ``InputError`` for a scan, calibration or output
    that cannot be used, before the long work where it can be known then. ``read`` may be a function that loads
    the reader: it is called once the inputs are known good (a model takes seconds to load). ``ahead``: the scan
    already read, up to its tracing (``core/digitize/job/stream.py: read_ahead``, with these options)."""
    from core.digitize.job.pipeline import digitize_sections, in_scan_frame
    from core.digitize.output.las import write_result
    from core.digitize.rules.confidence import low_confidence_share

    emit = sink or (lambda event: None)
    t0 = time.perf_counter() - (ahead.seconds if ahead is not None else 0.0)
    scan, calib, mask = (ahead.scan, ahead.calib, ahead.mask) if ahead is not None else _load(job, loaded)
    if not isinstance(read, ReadOptions):
        read = read()
    source = f"mask {job.from_mask.name}" if job.from_mask is not None else read.model_name
    parts = digitize_sections(scan.image, calib, job.section, source=str(job.scan), mask=mask, rgb=scan.rgb,
                              model=read.model, precision=read.precision, device=read.device, tile=read.tile,
                              progress=lambda i, n: emit(JobProgress(i, n)), whole_picture=read.whole_picture,
                              memory_ceiling=read.memory_ceiling, reference=read.reference,
                              pages=ahead.pages if ahead is not None else None)
    warnings: list[str] = []
    for _, _, res in parts:
        for w in res.warnings:
            emit(JobWarning(w))
            if w not in warnings:
                warnings.append(w)
    written: list[str] = []
    pages: list[Path] = []
    # every LAS, the mask and the QC pages of this run land together or not at all; a run killed while they were
    # renamed into place is completed by the next (its journal beside the LAS)
    with outputs_together(journal_path_for(job.las), job.inputs()):
        for suffix, _, res in parts:
            path = job.las if job.section is not None else las_path_for(job.las, suffix)
            write_result(path, res, calib, job.scan.name, source, well={"WELL": job.well} if job.well else None)
            written.append(str(path))
        if job.section is None:  # every section written: an earlier run's LAS of a section no longer there goes
            for stale in stale_section_las(job.las, written):
                stage_removal(stale)
        if job.mask_out is not None:
            from core.io.scan import save_gray_png

            save_gray_png(job.mask_out, in_scan_frame(parts, calib, scan.image.shape).mask)
        if job.qc is not None:
            from core.digitize.output.qc_picture import write_qc

            pages = write_qc(job.qc, scan.rgb if scan.rgb is not None else scan.image, calib, parts,
                             job.scan.name, source or "")
            for stale in stale_qc_pages(job.qc, pages):  # an earlier, longer run's pages past this run's last
                stage_removal(stale)
    emit(JobWritten(written + ([str(job.mask_out)] if job.mask_out is not None else []) + [str(p) for p in pages]))
    values: dict[str, list[np.ndarray]] = {}
    confidence: dict[str, list[np.ndarray]] = {}
    for _, _, res in parts:
        for k, v in res.values.items():
            values.setdefault(k, []).append(v)
            confidence.setdefault(k, []).append(res.confidence.get(k, np.ones_like(v)))
    null = {k: float(np.mean(~np.isfinite(np.concatenate(v)))) for k, v in values.items()}
    low = {k: low_confidence_share(np.concatenate(v), np.concatenate(confidence[k])) for k, v in values.items()}
    return ScanOutcome(job.scan.name, "written", list(values), null, low, warnings, time.perf_counter() - t0,
                       written, parts=parts, qc_pages=[str(p) for p in pages])


def digitize_file(job: ScanJob, read: ReadOptions, reading=None) -> ScanOutcome:
    """:func:`digitize_scan` for a batch: never raises for one bad scan (its outcome is ``failed`` with the
    reason), and keeps no parts (a worker sends the outcome back). ``reading``: a future of the scan read ahead
    (``core/digitize/job/stream.py``); a reading that failed fails here, as if this call had read."""
    t0 = time.perf_counter()
    name = job.scan.name
    try:
        outcome = digitize_scan(job, read, ahead=reading.result() if reading is not None else None)
    except (InputError, OSError) as exc:
        return ScanOutcome(name, "failed", seconds=time.perf_counter() - t0, error=str(exc))
    except Exception as exc:  # an internal failure on one scan: the batch goes on, the reason is kept
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return ScanOutcome(name, "failed", seconds=time.perf_counter() - t0,
                           error=f"internal error: {type(exc).__name__}: {exc} ({Path(where.filename).name}:"
                                 f"{where.lineno})")
    outcome.parts = []
    return outcome
