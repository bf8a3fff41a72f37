"""Opening projects and scans, the project panel, and which model is current.

A part of :class:`app.main_window.MainWindow` (mixed into it): it works on the window's state (scan,
calibration, mask editor, result, model) and widgets, which the window builds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from core.common.errors import InputError
from core.io.project import open_project
from core.io.scan import is_scan_file, read_info
from core.labelling.mask_edit import MaskEditor
from core.model.bundled import BUNDLED_MODEL

from ..heap import freeze_long_lived
from ..scan_loader import ScanBundle, read_scan_bundle
from ..workers import Task


DEMO_PROJECT = Path(__file__).resolve().parents[2] / "resources" / "demo_project"


def user_demo_project() -> Path | None:
    """A writable copy of the bundled demo project (autosave must never write into the install)."""
    if not DEMO_PROJECT.is_dir():
        return None
    import platformdirs

    dest = Path(platformdirs.user_data_dir("welltrace")) / "demo_project"
    if not dest.exists():
        shutil.copytree(DEMO_PROJECT, dest)
    return dest


def _read_model(path, progress=None):
    from core.model.model_io import load_model

    return load_model(path)


class ProjectFlow:
    """The window's projects, scans and current model (a mixin)."""

    def open_paths(self, paths: list[str | Path]) -> None:
        for p in map(Path, paths):
            if p.is_dir():
                self.open_project(p)
            elif self.project is not None and is_scan_file(p):
                self.add_scan(p)
            else:
                self.open_scan(p)

    def open_project(self, folder: Path) -> bool:
        try:
            proj = open_project(folder)
        except InputError as exc:
            self.show_error(exc.one_line())
            return False
        self.project = proj
        self.setWindowTitle(f"WellTrace — {folder.name}")
        self.refresh_project()
        if proj.scans:
            self.open_scan(proj.scan_paths()[0])
        return True

    @QtCore.Slot()
    def refresh_project(self) -> None:
        self.update_steps()  # a scan's state changed: calibrated, labelled, digitised
        self.project_list.clear()
        if self.project is None:
            return
        for p in self.project.scan_paths():
            state = self.project.state(p)
            item = QtWidgets.QTreeWidgetItem([f"{p.name}\n    {' · '.join(state)}"])
            item.setToolTip(0, f"{p.name}: {', '.join(state)}")
            item.setData(0, QtCore.Qt.ItemDataRole.UserRole, str(p))
            self.project_list.addTopLevelItem(item)
            if self.scan_path is not None and p.resolve() == self.scan_path.resolve():
                self.project_list.setCurrentItem(item)
        self.project_list.resizeColumnToContents(0)

    def add_scan(self, path: Path) -> bool:
        """Copy a scan into the project and open it; the file is read (off the UI thread) before it is copied,
        so a damaged scan is refused with nothing added."""
        return self.open_scan(path, add_to_project=True)

    @property
    def opening(self) -> bool:
        """A scan is being read; ``scan_opened`` is emitted when it is shown (or an error when it cannot be)."""
        return self._opening is not None

    def open_scan(self, path: Path, add_to_project: bool = False) -> bool:
        """Start opening a scan: its header is checked at once (a file that is no image is refused here, with
        False), its pixels, mask and calibration are read off the UI thread, and the window switches to it when
        they arrive (``scan_opened``). Opening another scan meanwhile supersedes this one."""
        path = Path(path)
        current = self.scan_path is not None and path.resolve() == self.scan_path.resolve()
        if not add_to_project and ((current and self._opening is None)
                                   or (self._opening is not None and path.resolve() == self._opening.resolve())):
            return True
        try:
            read_info(path)  # header only: milliseconds
        except InputError as exc:
            self.show_error(exc.one_line())
            return False
        self._opening = path
        task = Task(read_scan_bundle, path, parent=self)
        task.succeeded.connect(lambda bundle, add=add_to_project: self._scan_read(bundle, add))
        task.failed.connect(lambda message, p=path: self._scan_unreadable(p, message))
        task.finished.connect(lambda t=task: self._open_tasks.remove(t) if t in self._open_tasks else None)
        self._open_tasks.append(task)
        self.statusBar().showMessage(f"opening {path.name}…")
        task.start()
        return True

    def _scan_unreadable(self, path: Path, message: str) -> None:
        if self._opening == path:
            self._opening = None
        self.show_error(message)

    def _scan_read(self, bundle: ScanBundle, add_to_project: bool) -> None:
        if self.closing or self._opening != bundle.path:
            return  # superseded by a later open
        self._opening = None
        path = bundle.path
        if add_to_project:
            try:
                path = self.project.add_scan(path)
            except InputError as exc:
                self.show_error(exc.one_line())
                return
        scan = bundle.scan
        self.flush()
        self.scan_path, self.image, self.calib = Path(path), scan.image, bundle.calib
        self.rgb = scan.rgb  # colour pixels (None for a grey scan): shown, and evidence of ink colours
        self.scan_dpi = scan.info.dpi  # the scan's resolution (x, y), when its file names one: checks a depth scale
        self.result, self.exported = bundle.digitised, False
        self.editor = MaskEditor(bundle.mask)
        self.view.set_scan(scan.display, bundle.pyramid)
        self.view.set_mask(bundle.mask)
        self.show_grid(self.actions_["show_grid"].isChecked())
        axis = bundle.calib.depth_axis if bundle.calib else scan.info.depth_axis
        amp = scan.image.shape[1] if axis == "y" else scan.image.shape[0]
        self.calib_panel.load(bundle.calib, scan.info.depth_axis, float(amp), bundle.proposed_tracks)
        self._update_handles()
        self._show_traces()
        self._plot_curves()
        self.overview.set_log(bundle.pyramid[-1], axis)
        self.fit_tracks()
        self.statusBar().showMessage(
            f"{path.name}: {scan.info.width} × {scan.info.height} px, {scan.info.mode}"
            + (f", {' '.join(scan.info.notes)}" if scan.info.notes else "")
            + (f"; {' '.join(bundle.notes)}" if bundle.notes else ""), 8000)
        self.refresh_project()
        self.update_steps()
        self.scan_opened.emit(str(path))

    def _open_scan_dialog(self):
        p, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open scan", "", "Scans (*.png *.jpg *.jpeg *.bmp *.tif *.tiff)")
        if p:
            self.open_paths([p])

    def _open_project_dialog(self):
        d = QtWidgets.QFileDialog.getExistingDirectory(self, "Open project folder")
        if d:
            self.open_project(Path(d))

    def _add_scans_dialog(self):
        if self.project is None:
            self.show_error("open a project folder first (File › Open project)")
            return
        ps, _ = QtWidgets.QFileDialog.getOpenFileNames(self, "Add scans", "", "Scans (*.png *.jpg *.jpeg *.bmp *.tif *.tiff)")
        for p in ps:
            self.add_scan(Path(p))

    def _load_model_dialog(self):
        p, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Load model", "", "Models (*.safetensors)")
        if p:
            self.load_model(Path(p))

    def open_demo(self) -> bool:
        """First start: a writable copy of the bundled demo project, with the bundled demo model as the current
        model so that Digitise and Pre-fill work out of the box (File → Load model… replaces it)."""
        demo = user_demo_project()
        if demo is None or not self.open_project(demo):
            return False
        if self.model is None and BUNDLED_MODEL.exists():
            self.load_model(BUNDLED_MODEL)
        self.scan_opened.connect(self._digitise_demo_scan)
        return True

    def _digitise_demo_scan(self, _path: str) -> None:
        """The demo's first scan opens digitised: a new user sees the product's result before anything else
        (traced by the bundled model, not from the demo's labels, to show what the model reads)."""
        self.scan_opened.disconnect(self._digitise_demo_scan)
        if self.result is None and self.model is not None and self.calib is not None and self.calib.curves:
            self.digitize(from_mask=False)

    def _model_trained(self, path: str) -> None:
        """A finished run's model becomes the current model for pre-fill and digitise.

        It is read and built off the UI thread: that takes 15–45 ms on two cores and arrives just as
        the run's last events are being drawn, while the training process is still writing and exiting.
        """
        if self.model_task is not None and self.model_task.isRunning():
            self.model_task.wait()  # an earlier run's model; the newer one is loaded after it
        self.model_task = Task(_read_model, Path(path), parent=self)
        self.model_task.succeeded.connect(lambda loaded, p=Path(path): self._use_model(loaded[0], p))
        self.model_task.failed.connect(self.show_error)
        self.model_task.start()

    def load_model(self, path: Path) -> bool:
        try:
            model, _info = _read_model(path)
        except InputError as exc:
            self.show_error(exc.one_line())
            return False
        self._use_model(model, path)
        return True

    def _use_model(self, model, path: Path) -> None:
        if self.closing:  # the window is closing: a late result touches nothing
            return
        self.model = model
        self.model_name = path.name
        self.model_path = path
        freeze_long_lived()  # PyTorch's modules, loaded with the first model
        self.statusBar().showMessage(f"model {path.name} loaded", 5000)
        self.update_steps()

    def dragEnterEvent(self, ev):
        if ev.mimeData().hasUrls():
            ev.acceptProposedAction()

    def dropEvent(self, ev):
        self.open_paths([u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()])
