"""From a calibrated scan to LAS: digitise, the grid overlay, the traces and plots, swapping curves, export
(LAS and the QC picture), digitising a whole project.

The controller owns the digitised result of the scan shown and the curve plots; it reads the scan, the
calibration, the labelled mask and the current model from their controllers. Every digitise writes the scan's
``NAME.digitized.las`` (and its other sections beside it) and the QC picture ``NAME.digitized.qc.png``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtWidgets

from core.common.errors import InputError
from core.digitize.page.frame import to_canonical
from core.io.file_names import calib_path_for, digitized_path_for, mask_path_for, qc_path_for

from ..curve_plots import CurvePlots, curve_colours
from ..scan_loader import ScanBundle
from ..workers import Task
from .calibrating import CalibrationController
from .labelling import LabellingController
from .models import ModelController, reading_device, with_the_fix
from .scans import ScanController
from .shell import Shell


def _run_digitize(job, read, loaded, progress=None):
    """The scan's job (``core/digitize/job/scan_job.py: digitize_scan``, as ``welltrace digitize`` runs it): every
    log section traced (the whole picture when the calibration names none), its LAS files and QC pages written
    together. Returns the main pass placed on the scan for viewing, the other sections' results (LAS suffix,
    result) beside it, and the job's outcome."""
    from core.digitize.job.pipeline import in_scan_frame
    from core.digitize.job.scan_job import JobProgress, digitize_scan

    def sink(event) -> None:
        if progress is not None and isinstance(event, JobProgress):
            progress(event.done, event.total)

    outcome = digitize_scan(job, read, sink, loaded)
    result = in_scan_frame(outcome.parts, loaded.calib, loaded.scan.image.shape)
    result.others = [(suffix, res) for suffix, _, res in outcome.parts if suffix]
    return result, outcome


def _parts_of(result, calib):
    """A shown result back as ``digitize_sections``' parts (suffix, section, result), for the QC picture."""
    if not calib.sections:
        return [("", None, result)]
    names = calib.section_files()
    by_suffix = {"": result, **dict(result.others)}
    return [(names[i], sec, by_suffix[names[i]]) for i, sec in enumerate(calib.sections) if names[i] in by_suffix]


def write_qc_picture(path: Path, pixels, result, calib, scan_name: str, model_name) -> list[Path]:
    from core.digitize.output.qc_picture import write_qc

    return write_qc(path, pixels, calib, _parts_of(result, calib), scan_name, model_name or "")


def _digitize_all(scans, model, model_name, progress=None):
    """Digitise every given scan with its calibration, writing its digitised LAS and QC picture
    (``core/digitize/job/scan_job.py``, as ``welltrace digitize FOLDER`` does); returns the LAS paths written and the
    scans skipped with why (a bad file is skipped, never the end of the batch)."""
    from core.digitize.job.folder import jobs_for
    from core.digitize.job.scan_job import ReadOptions, digitize_file

    written, skipped = [], []
    jobs = jobs_for(list(scans))
    read = ReadOptions(model=model, model_name=model_name, device=reading_device(model))
    for i, job in enumerate(jobs):
        outcome = digitize_file(job, read)
        if outcome.failed:
            skipped.append((outcome.scan, outcome.error))
        else:
            written.append(job.las)
        if progress:
            progress(i + 1, len(jobs))
    return written, skipped


def _grid_segments(image, calib, axis):
    """The grid detected in the scan as line segments in its own pixel frame (for the overlay)."""
    from core.digitize.page.grid import detect_grid, track_bands

    canon = to_canonical(image, axis)
    bands = track_bands(calib, canon.shape[0]) if calib is not None and calib.curves else None
    grid = detect_grid(canon, bands)
    rows, length = canon.shape
    segs = [((0.0, float(r)), (float(length - 1), float(r))) for r in grid.line_rows()]
    for (lo, hi), prof in zip(grid.bands, grid.across):
        segs += [((float(c), float(lo)), (float(c), float(hi - 1))) for c in np.flatnonzero(prof >= 0.5)]
    seg = np.asarray(segs, np.float64).reshape(-1, 2, 2)
    # canonical (along, across) -> scan (x, y): a tall scan has depth down the rows
    return seg[..., ::-1] if axis == "y" else seg


class ExportDialog(QtWidgets.QDialog):
    def __init__(self, default_path: Path, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Export LAS")
        self.setMinimumWidth(520)
        form = QtWidgets.QFormLayout(self)
        self.well = QtWidgets.QLineEdit()
        self.company = QtWidgets.QLineEdit()
        self.path = QtWidgets.QLineEdit(str(default_path))
        browse = QtWidgets.QPushButton("Browse…")
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.path)
        row.addWidget(browse)
        form.addRow("Well name", self.well)
        form.addRow("Company", self.company)
        form.addRow("File", row)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Save
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        form.addRow(buttons)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        browse.clicked.connect(self._browse)

    def _browse(self):
        p, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export LAS", self.path.text(), "LAS files (*.las)")
        if p:
            self.path.setText(p)


class DigitizingController(QtCore.QObject):
    """The digitised result of the scan shown, and everything that writes or changes it."""

    digitized = QtCore.Signal()  # a new result is shown (and saved)
    exported_changed = QtCore.Signal()  # the result was exported, or a new one is not yet

    def __init__(self, shell: Shell, scans: ScanController, calibration: CalibrationController,
                 labelling: LabellingController, models: ModelController, view,
                 parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.shell, self.scans, self.calibration = shell, scans, calibration
        self.labelling, self.models, self.view = labelling, models, view
        self.result = None
        self.exported = False
        # Run › Digitise from the labelled mask: trace the painted mask when there is one. Off by default: Digitise
        # reads the scan with the model (the demo's labelled second scan was traced from its labels, which showed
        # nothing of what the model reads)
        self.trace_labels = False
        self.read_with: str | None = None  # the model file the result was read with (None: classical or a mask)
        self.show_grid_lines = False
        self.plots = CurvePlots()
        # the last digitise's warnings, every one (the status bar kept only the last of them, ten seconds): shown
        # over the curves until the next result; a few lines, scrolling, so the plots keep the dock
        self.warnings = QtWidgets.QPlainTextEdit()
        self.warnings.setReadOnly(True)
        self.warnings.setObjectName("digitise_warnings")
        self.warnings.setStyleSheet("color: #8a5a00")
        self.warnings.setMaximumHeight(5 * self.warnings.fontMetrics().lineSpacing())
        self.warnings.hide()
        self.grid_task: Task | None = None
        self.batch_task: Task | None = None
        self.qc_task: Task | None = None
        self.last_batch = None
        self.swap_dlg = self.export_dlg = None
        scans.opened.connect(self._scan_opened)

    @property
    def calib(self):
        return self.calibration.calib

    def _scan_opened(self, bundle: ScanBundle) -> None:
        self.result, self.exported = bundle.digitized, False
        self.show_warnings([])
        self.read_with = self.models.name
        self.show_grid(self.show_grid_lines)
        self.show_traces()
        self.plots.show_result(self.result, self.calib)

    def digitize(self, from_mask: bool | None = None) -> None:
        """Trace the calibrated curves off the UI thread; ``from_mask`` overrides the Run-menu choice of tracing
        the painted mask (when the scan has one) rather than the model."""
        scan = self.scans.current
        if scan is None or self.shell.closing:
            return
        self.calibration.commit_edits()  # a field still being typed in is part of the calibration digitised
        if self.calib is None or not self.calib.curves:
            self.shell.show_error("calibrate first: two depth picks and at least one curve")
            return
        if self.shell.task_running():
            return
        pending = self.calib.unconfirmed()
        if pending:  # curves read from the scale box: a misread scale is a whole curve wrong, so the user says so
            if not self.shell.confirm(f"{len(pending)} curve(s) were read from the scale box and not yet checked "
                                      f"({', '.join(pending)}). Digitise with them as read?"):
                self.shell.show_status("check the curves read from the scale box in the calibration dock", 10000)
                return
            self.calibration.panel.confirm_proposed()
        use_mask = self.trace_labels if from_mask is None else from_mask
        mask = self.labelling.labelled_mask() if use_mask else None  # the user's labels are the truth they have
        model, self.read_with = self.models.reader() if mask is None else (None, None)
        reader = ("your labelled mask" if mask is not None else self.read_with or "the classical tracer")
        busy = f"digitising with {reader}…"
        if mask is None and model is not None:
            from core.digitize.evidence.memory_plan import default_ceiling
            from core.digitize.evidence.network import WINDOW_PX

            # the memory it may use, said before it starts: a real scan read whole needed 16 GiB
            busy += (f" ({WINDOW_PX}-px windows along depth, at most "
                     f"{default_ceiling() / 1024**3:.1f} GiB: 90 % of the memory available now)")
        if self.calib.sections:
            busy += f"; {len(self.calib.sections)} log section(s), the rest of the scan is not read"
        from core.digitize.job.scan_job import Loaded, ReadOptions, ScanJob

        las = digitized_path_for(self.scans.path)
        job = ScanJob(self.scans.path, calib_path_for(self.scans.path), las, qc=qc_path_for(las))
        task = Task(_run_digitize, job, ReadOptions(model=model, model_name=self.read_with, device=reading_device(model)),
                    Loaded(scan, self.calib, mask), owner=self)
        self.shell.start_task(task, self._digitized, busy, "digitising cancelled")

    def show_grid(self, on: bool) -> None:
        """Overlay the grid the tracers detect (computed off the UI thread)."""
        self.show_grid_lines = on
        self.view.set_grid_lines(None)
        if not on or self.scans.image is None:
            return
        self.grid_task = Task(_grid_segments, self.scans.image, self.calib, self.calibration.depth_axis(),
                              owner=self, progress=False)
        self.grid_task.succeeded.connect(
            lambda segs: self.view.set_grid_lines(segs) if self.show_grid_lines and not self.shell.closing else None)
        self.grid_task.failed.connect(self.shell.show_error)
        self.grid_task.start()

    def _digitized(self, done):
        if self.shell.closing:  # the window is closing: a late result touches nothing
            return
        result, outcome = done
        self.result, self.exported = result, False
        done = f"digitised {len(result.values)} curves ({result.method})"
        if result.memory:
            done += (f"; {result.memory['windows']} window(s), predicted peak "
                     f"{result.memory['predicted_peak'] / 1024**3:.2f} GiB")
        if result.others:
            done += "; also " + ", ".join(f"the {suffix} section" for suffix, _ in result.others)
        # every section's warnings, the repeat pass's named (the result shown is the main pass's)
        warnings = [with_the_fix(w) for w in (outcome.warnings if outcome is not None else result.warnings)]
        if warnings:
            done += f"; {len(warnings)} warning(s), listed over the digitised curves"
        self.shell.task_done(done)
        self.show_warnings(warnings)
        self.show_traces()
        self.plots.show_result(self.result, self.calib)
        self.digitized.emit()

    def show_warnings(self, warnings: list[str]) -> None:
        self.warnings.setPlainText("\n".join(f"! {w}" for w in warnings))
        self.warnings.setVisible(bool(warnings))

    def show_traces(self):
        items = []
        if self.result is not None and self.calib is not None:
            colours = curve_colours(self.calib.curves)
            for i, (tr, spec) in enumerate(zip(self.result.traces, self.calib.curves)):
                along = np.arange(tr.position.size, dtype=float)
                across = tr.position
                x, y = (across, along) if self.calib.depth_axis == "y" else (along, across)
                items.append((x, y, colours[i]))
        self.view.set_traces(items)

    def _destroys_an_input(self, what: str, path: Path, also: list[tuple[str, Path]] = ()) -> bool:
        """Whether writing ``path`` would replace the scan, its calibration, its labels (or ``also``): said, as
        ``digitize --out SCAN`` says it (a slip in a dialog's file field wrote a LAS over the scan)."""
        from core.common.output_paths import refuse_clobbering

        scan = self.scans.path
        try:
            refuse_clobbering([(what, path)], [("the scan", scan), ("its calibration", calib_path_for(scan)),
                                               ("its labels", mask_path_for(scan)), *also])
        except InputError as exc:
            self.shell.show_error(exc.one_line())
            return True
        return False

    # -- the QC picture -------------------------------------------------------------------------
    def write_qc(self, path: Path, announce: bool = True) -> bool:
        """Draw the digitised values back over the scan (off the UI thread) into ``path`` (pages beside it when
        the log is longer than a page)."""
        scan = self.scans.current
        if self.result is None or scan is None:
            self.shell.show_error("digitise the scan first (Run › Digitise)")
            return False
        if self._destroys_an_input("the QC picture", path, [("its digitised LAS", digitized_path_for(scan.path))]):
            return False
        from core.common.atomic import check_writable

        try:
            check_writable(path)
        except OSError as exc:
            self.shell.show_error(f"{path}: cannot be written: {exc.strerror or exc}")
            return False
        pixels = scan.rgb if scan.rgb is not None else scan.image
        self.qc_task = Task(write_qc_picture, path, pixels, self.result, self.calib, scan.path.name,
                            self.models.name, owner=self, progress=False)
        if announce:
            self.qc_task.succeeded.connect(lambda paths: self.shell.show_status(
                f"QC picture: {paths[0]}" + (f" … {paths[-1].name} ({len(paths)} pages)" if len(paths) > 1 else ""),
                10000))
        self.qc_task.failed.connect(self.shell.show_error)
        self.qc_task.start()
        return True

    def export_qc_dialog(self) -> None:
        if self.result is None:
            self.shell.show_error("digitise the scan first (Run › Digitise)")
            return
        default = qc_path_for(self.scans.path.with_suffix(".las"))
        p, _ = QtWidgets.QFileDialog.getSaveFileName(self.plots.window(), "Export QC picture", str(default),
                                                     "PNG pictures (*.png)")
        if p:
            self.write_qc(Path(p))

    # -- swapping, export ------------------------------------------------------------------------
    def swap_dialog(self) -> None:
        if self.result is None or self.calib is None or len(self.calib.curves) < 2:
            self.shell.show_error("digitise a scan with at least two curves first (Run › Digitise)")
            return
        from ..swap_dialog import SwapDialog

        plots = [self.plots.getItem(0, i) for i in range(len(self.calib.curves))]
        dlg = SwapDialog([c.mnemonic for c in self.calib.curves], self.result.depth, self.calib.depth_unit,
                         [p for p in plots if p is not None], self.plots.window())
        self.swap_dlg = dlg
        dlg.accepted.connect(lambda: self.swap_curves(dlg.a.currentText(), dlg.b.currentText(), *dlg.range()))
        dlg.open()

    def swap_curves(self, a: str, b: str, top: float, bottom: float) -> bool:
        """Exchange two traced curves' values between two depths, replot and save the digitised LAS."""
        from core.digitize.job.pipeline import scan_column_depth
        from core.digitize.output.las import write_result

        try:  # values, confidences and the traces on the scan: the LAS, its CONF curves and the picture agree
            n = self.result.swap(a, b, top, bottom, scan_column_depth(self.calib, self.scans.image.shape))
        except ValueError as exc:
            self.shell.show_error(f"swap: {exc}")
            return False
        self.plots.show_result(self.result, self.calib)
        self.show_traces()
        las = digitized_path_for(self.scans.path)
        try:
            write_result(las, self.result, self.calib, self.scans.path.name, self.read_with)
        except (OSError, InputError) as exc:
            self.shell.show_error(f"{las}: cannot save: {exc}")
        else:  # the QC picture beside the LAS is drawn again from it, not left showing the curves unswapped
            self.write_qc(qc_path_for(las), announce=False)
        self.shell.show_status(f"swapped {a} and {b} over {n} samples", 8000)
        return True

    def export_dialog(self) -> None:
        self.calibration.commit_edits()  # a curve's name or unit still being typed in goes into the LAS
        if self.result is None:
            self.shell.show_error("digitise the scan first (Run › Digitise)")
            return
        dlg = ExportDialog(self.scans.path.with_suffix(".las"), self.plots.window())
        self.export_dlg = dlg
        dlg.accepted.connect(lambda: self.export_las(Path(dlg.path.text()), dlg.well.text(), dlg.company.text()))
        dlg.open()

    def export_las(self, path: Path, well: str = "", company: str = "") -> bool:
        from core.digitize.output.las import write_result
        from core.io.file_names import las_path_for

        # every pass: the repeat pass beside the main as `digitize --out` names it (the main pass went alone)
        parts = [(path, self.result)] + [(las_path_for(path, suffix), res) for suffix, res in self.result.others]
        if any(self._destroys_an_input("the LAS", p) for p, _ in parts):
            return False
        header = {k: v for k, v in (("WELL", well), ("COMP", company)) if v}
        try:
            for p, res in parts:
                write_result(p, res, self.calib, self.scans.path.name, self.read_with, well=header)
        except (OSError, InputError) as exc:
            self.shell.show_error(f"{p}: cannot write LAS: {exc}")
            return False
        self.shell.show_status(f"exported {path}" + (f" and {', '.join(p.name for p, _ in parts[1:])}"
                                                     if len(parts) > 1 else ""), 8000)
        self.exported = True
        self.exported_changed.emit()
        return True

    # -- the whole project -------------------------------------------------------------------------
    def digitize_all(self) -> None:
        """Digitise every calibrated scan of the project that has no labels, with the current model."""
        project = self.scans.project
        if project is None or self.models.model is None:
            self.shell.show_error("open a project and load a model first")
            return
        self.models.wait()  # the accepted model is still being read: use it, not the one before
        scans = [p for p in project.scan_paths() if not mask_path_for(p).exists() and calib_path_for(p).exists()]
        if not scans:
            self.shell.show_error("no calibrated scan without labels to digitise in this project")
            return
        self.batch_task = Task(_digitize_all, scans, self.models.model, self.models.name, owner=self)
        self.shell.start_task(self.batch_task, self._digitized_all, f"digitising {len(scans)} scans…",
                              "digitising cancelled")

    def _digitized_all(self, outcome) -> None:
        if self.shell.closing:  # the window is closing: a late result touches nothing
            return
        written, skipped = outcome
        self.last_batch = outcome
        self.shell.task_done(f"digitised {len(written)} scan(s) with {self.models.name}, each with its QC picture"
                             + (f"; skipped {len(skipped)}" if skipped else ""))
        for name, why in skipped:
            self.shell.show_error(f"{name}: skipped: {why}")
        self.scans.refresh_project()
