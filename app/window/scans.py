"""Opening projects and scans: the project panel, the scan being read, the scan shown.

The controller owns the project and the open scan (its path, pixels, colour and resolution). A scan is read off
the UI thread; when it arrives, ``switching`` lets the others let go of the last scan (the labels are saved) and
``opened`` hands them the new one's bundle (mask, calibration, digitised LAS) to take their part of.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtWidgets

from core.common.errors import InputError
from core.io.project import Project, open_project
from core.io.scan import read_info

from ..scan_loader import ScanBundle, read_scan_bundle
from ..workers import Task
from .shell import Shell

DEMO_PROJECT = Path(__file__).resolve().parents[2] / "resources" / "demo_project"
SCAN_FILES = "Scans (*.png *.jpg *.jpeg *.bmp *.tif *.tiff)"


def user_demo_project() -> Path | None:
    """A writable copy of the bundled demo project (autosave must never write into the install)."""
    if not DEMO_PROJECT.is_dir():
        return None
    import platformdirs

    dest = Path(platformdirs.user_data_dir("welltrace")) / "demo_project"
    if not dest.exists():
        shutil.copytree(DEMO_PROJECT, dest)
    return dest


LONGEST_STATE = ("unlabelled", "calibrated", "digitised")  # the widest state a scan's second line shows


def scan_state(scan: Path) -> list[str]:
    """What exists beside a scan (unlabelled / labelled, calibrated, digitised), in or out of a project."""
    return Project(Path(scan).parent).state(Path(scan))


def _inside(path: Path, folder: Path) -> bool:
    try:
        Path(path).resolve().relative_to(Path(folder).resolve())
        return True
    except ValueError:
        return False


@dataclass
class OpenScan:
    """The scan shown: where it is and its pixels."""

    path: Path
    image: np.ndarray  # grey, the scan's own layout
    rgb: np.ndarray | None  # colour pixels (None for a grey scan): shown, and evidence of ink colours
    dpi: tuple[float, float] | None  # the resolution (x, y) its file names, if any: checks a depth scale


class ScanController(QtCore.QObject):
    """The project and the scan shown."""

    switching = QtCore.Signal()  # another scan is about to be shown: let go of this one (save its labels)
    opened = QtCore.Signal(object)  # the ScanBundle of the scan now shown (after ``current`` is set)
    project_changed = QtCore.Signal()  # a project was opened, or a scan's state changed
    left_project = QtCore.Signal()  # a scan from outside the project was opened: no project is open now

    def __init__(self, shell: Shell, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.shell = shell
        self.project: Project | None = None
        self.current: OpenScan | None = None
        self.loose: list[Path] = []  # scans opened on their own (no project open), listed in the panel
        self._opening: Path | None = None  # the scan being read, if any
        self.project_list = QtWidgets.QTreeWidget()
        self.project_list.setHeaderLabels(["scan · state"])
        self.project_list.setUniformRowHeights(False)  # each scan: its name, its state on a second line
        self.project_list.setTextElideMode(QtCore.Qt.TextElideMode.ElideMiddle)
        fm = self.project_list.fontMetrics()  # the longest state in full: "unlabelled · calibrated · digitised"
        self.project_list.setMinimumWidth(fm.horizontalAdvance("    " + " · ".join(LONGEST_STATE)) + 36)
        role = QtCore.Qt.ItemDataRole.UserRole
        self.project_list.itemActivated.connect(lambda it, _c: self.open_scan(Path(it.data(0, role))))
        self.project_list.itemClicked.connect(lambda it, _c: self.open_scan(Path(it.data(0, role))))

    # the scan shown, for readers that need one field
    @property
    def path(self) -> Path | None:
        return self.current.path if self.current else None

    @property
    def image(self) -> np.ndarray | None:
        return self.current.image if self.current else None

    @property
    def opening(self) -> bool:
        """A scan is being read; ``opened`` is emitted when it is shown (or an error shown when it cannot be)."""
        return self._opening is not None

    def open_paths(self, paths: list[str | Path]) -> None:
        """Open folders as projects and files as scans, where they lie: a scan opened (File › Open scan, a drop,
        the command line) is read and written beside itself, never copied into the open project (the demo
        project gathered the user's scans and their LAS files); *Add scans…* is what copies into a project."""
        for p in map(Path, paths):
            if p.is_dir():
                self.open_project(p)
            else:
                self.open_scan(p)

    def open_project(self, folder: Path) -> bool:
        try:
            proj = open_project(folder)
        except InputError as exc:
            self.shell.show_error(exc.one_line())
            return False
        self.project = proj
        self.loose = []
        self.refresh_project()
        if proj.scans:
            self.open_scan(proj.scan_paths()[0])
        return True

    def listed(self) -> list[Path]:
        """The scans the panel lists: the project's, or the scans opened on their own."""
        return self.project.scan_paths() if self.project is not None else list(self.loose)

    @QtCore.Slot()
    def refresh_project(self) -> None:
        self.project_list.clear()
        self.project_list.setHeaderLabels(["scan · state" if self.project is not None else "scans opened · state"])
        shown = self.path.resolve() if self.path is not None else None
        for p in self.listed():
            state = scan_state(p)
            where = "" if self.project is not None else f"\n{p.parent}"
            item = QtWidgets.QTreeWidgetItem([f"{p.name}\n    {' · '.join(state)}"])
            item.setToolTip(0, f"{p.name}: {', '.join(state)}{where}")
            item.setData(0, QtCore.Qt.ItemDataRole.UserRole, str(p))
            self.project_list.addTopLevelItem(item)
            if shown is not None and p.resolve() == shown:
                self.project_list.setCurrentItem(item)
        self.project_list.resizeColumnToContents(0)
        self.project_changed.emit()

    def add_scan(self, path: Path) -> bool:
        """Copy a scan into the project and open it; the file is read (off the UI thread) before it is copied,
        so a damaged scan is refused with nothing added."""
        return self.open_scan(path, add_to_project=True)

    def open_scan(self, path: Path, add_to_project: bool = False) -> bool:
        """Start opening a scan: its header is checked at once (a file that is no image is refused here, with
        False), its pixels, mask and calibration are read off the UI thread, and ``opened`` is emitted when they
        arrive. Opening another scan meanwhile supersedes this one."""
        path = Path(path)
        current = self.path is not None and path.resolve() == self.path.resolve()
        if not add_to_project and ((current and self._opening is None)
                                   or (self._opening is not None and path.resolve() == self._opening.resolve())):
            return True
        try:
            read_info(path)  # header only: milliseconds
        except InputError as exc:
            self.shell.show_error(exc.one_line())
            return False
        self._opening = path
        task = Task(read_scan_bundle, path, owner=self)
        task.succeeded.connect(lambda bundle, add=add_to_project: self._scan_read(bundle, add))
        task.failed.connect(lambda message, p=path: self._scan_unreadable(p, message))
        self.shell.show_status(f"opening {path.name}…", 0)
        task.start()
        return True

    def _scan_unreadable(self, path: Path, message: str) -> None:
        if self._opening == path:
            self._opening = None
        self.shell.show_error(message)

    def _scan_read(self, bundle: ScanBundle, add_to_project: bool) -> None:
        if self.shell.closing or self._opening != bundle.path:
            return  # superseded by a later open
        self._opening = None
        path = bundle.path
        if add_to_project:
            try:
                path = self.project.add_scan(path)
            except InputError as exc:
                self.shell.show_error(exc.one_line())
                return
        elif self.project is not None and not _inside(path, self.project.folder):
            # a scan from elsewhere: the project is set aside (nothing of this scan is written into it)
            self.project = None
            self.left_project.emit()
        if self.project is None and all(p.resolve() != Path(path).resolve() for p in self.loose):
            self.loose.append(Path(path))
        self.switching.emit()
        scan = bundle.scan
        bundle.path = Path(path)
        self.current = OpenScan(Path(path), scan.image, scan.rgb, scan.info.dpi)
        self.opened.emit(bundle)
        self.shell.show_status(
            f"{path.name}: {scan.info.width} × {scan.info.height} px, {scan.info.mode}"
            + (f", {'; '.join(scan.info.notes)}" if scan.info.notes else "")
            + (f"; {' '.join(bundle.notes)}" if bundle.notes else ""), 8000)
        self.refresh_project()

    # -- dialogs ---------------------------------------------------------------------
    def open_scan_dialog(self) -> None:
        p, _ = QtWidgets.QFileDialog.getOpenFileName(self.project_list.window(), "Open scan", "", SCAN_FILES)
        if p:
            self.open_paths([p])

    def open_project_dialog(self) -> None:
        d = QtWidgets.QFileDialog.getExistingDirectory(self.project_list.window(), "Open project folder")
        if d:
            self.open_project(Path(d))

    def add_scans_dialog(self) -> None:
        if self.project is None:
            self.shell.show_error("open a project folder first (File › Open project)")
            return
        ps, _ = QtWidgets.QFileDialog.getOpenFileNames(self.project_list.window(), "Add scans", "", SCAN_FILES)
        for p in ps:
            self.add_scan(Path(p))
