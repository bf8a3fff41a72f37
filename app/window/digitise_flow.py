"""From a calibrated scan to LAS: digitise, the grid overlay, the traces and plots, swapping
curves, export, digitising a whole project, adapting and training.

A part of :class:`app.main_window.MainWindow` (mixed into it): it works on the window's state (scan,
calibration, mask editor, result, model) and widgets, which the window builds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtWidgets

from core.common.errors import InputError
from core.digitize.frame import to_canonical
from core.io.calibration import Calibration
from core.io.project import digitized_path_for
from core.io.scan import calib_path_for, load_scan, mask_path_for
from core.model.bundled import BUNDLED_MODEL

from ..curve_plots import curve_colour
from ..workers import Task


def _run_digitize(image, calib, model, mask=None, rgb=None, progress=None):
    """Every log section of the calibration traced (the whole picture when it names none): the main pass placed
    on the scan for viewing, with the other sections' results (LAS suffix, result) beside it."""
    from core.digitize.pipeline import digitize_sections, in_scan_frame

    parts = digitize_sections(image, calib, model=model, progress=progress, mask=mask, rgb=rgb)
    result = in_scan_frame(parts, calib, image.shape)
    result.others = [(suffix, res) for suffix, _, res in parts if suffix]
    return result


def _write_results(path: Path, result, calib, scan_name: str, model_name) -> None:
    """The main pass to ``path``, each other section beside it (``NAME.repeat.las``…)."""
    from core.digitize.pipeline import las_path_for, write_result

    write_result(path, result, calib, scan_name, model_name)
    for suffix, res in result.others:
        write_result(las_path_for(path, suffix), res, calib, scan_name, model_name)


def _digitise_all(scans, model, model_name, progress=None):
    """Digitise every given scan with its calibration and write its digitised LAS; returns the paths written
    and the scans skipped with why (a bad file is skipped, never the end of the batch)."""
    written, skipped = [], []
    for i, scan in enumerate(scans):
        try:
            calib = Calibration.load(calib_path_for(scan))
            loaded = load_scan(scan)
            res = _run_digitize(loaded.image, calib, model, rgb=loaded.rgb)
            _write_results(digitized_path_for(scan), res, calib, scan.name, model_name)
            written.append(digitized_path_for(scan))
        except (InputError, OSError) as exc:
            skipped.append((scan.name, str(exc)))
        if progress:
            progress(i + 1, len(scans))
    return written, skipped


def _grid_segments(image, calib, axis, progress=None):
    """The grid detected in the scan as line segments in its own pixel frame (for the overlay)."""
    from core.digitize.grid import detect_grid, track_bands

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


class DigitiseFlow:
    """The digitise-to-LAS flow of the window (a mixin)."""

    def digitize(self, from_mask: bool | None = None) -> None:
        """Trace the calibrated curves off the UI thread; ``from_mask`` overrides the Run-menu choice of tracing
        the painted mask (when the scan has one) rather than the model."""
        if self.image is None or self.closing:
            return
        if self.calib is None or not self.calib.curves:
            self.show_error("calibrate first: two depth picks and at least one curve")
            return
        if self.task is not None and self.task.isRunning():
            return
        mask = None
        use_mask = self.actions_["from_mask"].isChecked() if from_mask is None else from_mask
        if use_mask and self.editor is not None and self.editor.mask.any():
            mask = self.editor.mask.copy()  # the user's labels are the truth they have: follow them
        busy = "digitising…"
        if mask is None and self.model is not None:
            from core.digitize.infer import WINDOW_PX, default_ceiling

            # the memory it may use, said before it starts: a real scan read whole needed 16 GiB
            busy += (f" ({WINDOW_PX}-px windows along depth, at most "
                     f"{default_ceiling() / 1024**3:.1f} GiB: 90 % of the memory available now)")
        if self.calib.sections:
            busy += f"; {len(self.calib.sections)} log section(s), the rest of the scan is not read"
        self._start_task(Task(_run_digitize, self.image, self.calib, self.model, mask, self.rgb, parent=self),
                         self._digitized, busy, "digitising cancelled")

    def show_grid(self, on: bool) -> None:
        """Overlay the grid the tracers detect (computed off the UI thread)."""
        self.view.set_grid_lines(None)
        if not on or self.image is None:
            return
        axis = self.calib.depth_axis if self.calib is not None else self.calib_panel.axis.currentText()
        self.grid_task = Task(_grid_segments, self.image, self.calib, axis, parent=self)
        self.grid_task.succeeded.connect(
            lambda segs: self.view.set_grid_lines(segs)
            if self.actions_["show_grid"].isChecked() and not self.closing else None)
        self.grid_task.failed.connect(self.show_error)
        self.grid_task.start()

    def _digitized(self, result):
        if self.closing:  # the window is closing: a late result touches nothing
            return
        self.result, self.exported = result, False
        done = f"digitised {len(result.values)} curves ({result.method})"
        if result.memory:
            done += (f"; {result.memory['windows']} window(s), predicted peak "
                     f"{result.memory['predicted_peak'] / 1024**3:.2f} GiB")
        if result.others:
            done += "; also " + ", ".join(f"the {suffix} section" for suffix, _ in result.others)
        self._task_done(done)
        for w in result.warnings:
            self.statusBar().showMessage(w, 10000)
        self._show_traces()
        self._plot_curves()
        self.curves_dock.raise_()
        try:
            _write_results(digitized_path_for(self.scan_path), result, self.calib, self.scan_path.name,
                           self.model_name)
        except (OSError, InputError) as exc:
            self.show_error(f"{digitized_path_for(self.scan_path)}: cannot save: {exc}")
        self.refresh_project()

    def _show_traces(self):
        items = []
        if self.result is not None and self.calib is not None:
            for i, (tr, spec) in enumerate(zip(self.result.traces, self.calib.curves)):
                along = np.arange(tr.position.size, dtype=float)
                across = tr.position
                x, y = (across, along) if self.calib.depth_axis == "y" else (along, across)
                items.append((x, y, curve_colour(spec, i)))
        self.view.set_traces(items)

    def _plot_curves(self):
        self.curve_plots.show_result(self.result, self.calib)

    def swap_dialog(self) -> None:
        if self.result is None or self.calib is None or len(self.calib.curves) < 2:
            self.show_error("digitise a scan with at least two curves first (Run › Digitise)")
            return
        from ..swap_dialog import SwapDialog

        plots = [self.curve_plots.getItem(0, i) for i in range(len(self.calib.curves))]
        dlg = SwapDialog([c.mnemonic for c in self.calib.curves], self.result.depth, self.calib.depth_unit,
                         [p for p in plots if p is not None], self)
        self.swap_dlg = dlg
        self.curves_dock.raise_()
        dlg.accepted.connect(lambda: self.swap_curves(dlg.a.currentText(), dlg.b.currentText(), *dlg.range()))
        dlg.open()

    def swap_curves(self, a: str, b: str, top: float, bottom: float) -> bool:
        """Exchange two traced curves' values between two depths, replot and save the digitised LAS."""
        from core.digitize.crossings import swap_range
        from core.digitize.pipeline import write_result

        try:
            n = swap_range(self.result.values, a, b, self.result.depth, top, bottom)
        except ValueError as exc:
            self.show_error(f"swap: {exc}")
            return False
        self._plot_curves()
        try:
            write_result(digitized_path_for(self.scan_path), self.result, self.calib, self.scan_path.name,
                         self.model_name)
        except (OSError, InputError) as exc:
            self.show_error(f"{digitized_path_for(self.scan_path)}: cannot save: {exc}")
        self.statusBar().showMessage(f"swapped {a} and {b} over {n} samples", 8000)
        return True

    def export_dialog(self) -> None:
        if self.result is None:
            self.show_error("digitise the scan first (Run › Digitise)")
            return
        dlg = ExportDialog(self.scan_path.with_suffix(".las"), self)
        self.export_dlg = dlg
        dlg.accepted.connect(lambda: self.export_las(Path(dlg.path.text()), dlg.well.text(), dlg.company.text()))
        dlg.open()

    def export_las(self, path: Path, well: str = "", company: str = "") -> bool:
        from core.digitize.pipeline import write_result

        try:
            write_result(path, self.result, self.calib, self.scan_path.name, self.model_name,
                         well={k: v for k, v in (("WELL", well), ("COMP", company)) if v})
        except (OSError, InputError) as exc:
            self.show_error(f"{path}: cannot write LAS: {exc}")
            return False
        self.statusBar().showMessage(f"exported {path}", 8000)
        self.exported = True
        self.update_steps()
        return True

    def digitise_all(self) -> None:
        """Digitise every calibrated scan of the project that has no labels, with the current model."""
        if self.project is None or self.model is None:
            self.show_error("open a project and load a model first")
            return
        if self.model_task is not None and self.model_task.isRunning():
            self.model_task.wait()  # the adapted model is still being read: use it, not the one before
        scans = [p for p in self.project.scan_paths() if not mask_path_for(p).exists() and calib_path_for(p).exists()]
        if not scans:
            self.show_error("no calibrated scan without labels to digitise in this project")
            return
        self.batch_task = Task(_digitise_all, scans, self.model, self.model_name, parent=self)
        self.batch_task.progressed.connect(self._progress)
        self.batch_task.succeeded.connect(self._digitised_all)
        self.batch_task.failed.connect(self._task_failed)
        self.progress.setRange(0, len(scans))
        self.progress.show()
        self.statusBar().showMessage(f"digitising {len(scans)} scans…")
        self.batch_task.start()

    def _digitised_all(self, outcome) -> None:
        if self.closing:  # the window is closing: a late result touches nothing
            return
        written, skipped = outcome
        self.last_batch = outcome
        self._task_done(f"digitised {len(written)} scan(s) with {self.model_name}"
                        + (f"; skipped {len(skipped)}" if skipped else ""))
        for name, why in skipped:
            self.show_error(f"{name}: skipped: {why}")
        self.refresh_project()

    def adapt_dialog(self) -> None:
        """*Adapt model to this project*: the current model (else the bundled one) fine-tuned on the labelled
        scans within a time budget; the result becomes the current model, the base is never overwritten."""
        if self.project is None:
            self.show_error("open a project folder with a few labelled scans first (File › Open project)")
            return
        if self.training.thread is not None and self.training.thread.isRunning():
            self.show_error("a training run is going: stop it or let it finish before adapting")
            return
        if getattr(self, "adapt_dlg", None) is not None and self.adapt_dlg.running():
            self.adapt_dlg.show()
            self.adapt_dlg.raise_()
            return
        from ..adapt_dialog import AdaptDialog

        self.flush()  # the labels on disk are the ones adapted on
        dlg = AdaptDialog(self.project.folder, self.model_path or BUNDLED_MODEL, self)
        dlg.adapted.connect(self._model_trained)
        dlg.digitise_btn.clicked.connect(self.digitise_all)
        self.adapt_dlg = dlg
        dlg.show()

    def show_training(self) -> None:
        self.training.show()
        self.training.raise_()
        self.training.refresh_budget()
        QtCore.QTimer.singleShot(0, self.keep_scan_view_usable)  # once the dock has taken its place
