"""The WellTrace main window: project panel, scan view, labelling, calibration, digitise, export.

A view and controller over ``core``: it loads, edits and saves through core's
APIs, runs long work in :class:`app.workers.Task` threads, and computes
nothing core can.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from core.calibration import Calibration
from core.frame import to_canonical
from core.errors import InputError
from core.mask_edit import MaskEditor
from core.project import Project, digitized_path_for, open_project
from core.scan import calib_path_for, is_scan_file, load_scan, mask_path_for, read_info, save_gray_png

from .calibration_panel import CalibrationPanel
from .curve_plots import CurvePlots, curve_colour
from .heap import freeze_long_lived
from .planner_process import stop_planner
from .next_step import ScanSteps, StepsBar
from .overview_strip import OverviewStrip
from .scan_loader import ScanBundle, read_scan_bundle
from .scan_view import ScanView
from .workers import Task

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
BUNDLED_MODEL = RESOURCES / "models" / "demo.safetensors"
DEMO_PROJECT = RESOURCES / "demo_project"


class _StillStyle(QtWidgets.QProxyStyle):
    """The platform style with widget animations off (see MainWindow.__init__ for why)."""

    def styleHint(self, hint, option=None, widget=None, returnData=None):  # noqa: N802 - Qt's name
        if hint == QtWidgets.QStyle.StyleHint.SH_Widget_Animation_Duration:
            return 0
        return super().styleHint(hint, option, widget, returnData)


def install_still_style() -> None:
    app = QtWidgets.QApplication.instance()
    if app is not None and not isinstance(app.style(), _StillStyle):
        app.setStyle(_StillStyle(app.style().name()))


def settings() -> QtCore.QSettings:
    return QtCore.QSettings(os.environ.get("WELLTRACE_SETTINGS_ORG", "WellTrace"), "WellTrace")


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
    from core.model_io import load_model

    return load_model(path)


def _run_digitize(image, calib, model, mask=None, rgb=None, progress=None):
    from core.digitize import digitize

    return digitize(image, calib, model, progress=progress, mask=mask, rgb=rgb)


def _digitise_all(scans, model, model_name, progress=None):
    """Digitise every given scan with its calibration and write its digitised LAS; returns the paths written
    and the scans skipped with why (a bad file is skipped, never the end of the batch)."""
    from core.digitize import digitize, write_result

    written, skipped = [], []
    for i, scan in enumerate(scans):
        try:
            calib = Calibration.load(calib_path_for(scan))
            loaded = load_scan(scan)
            res = digitize(loaded.image, calib, model, source=str(scan), rgb=loaded.rgb)
            write_result(digitized_path_for(scan), res, calib, scan.name, model_name)
            written.append(digitized_path_for(scan))
        except (InputError, OSError) as exc:
            skipped.append((scan.name, str(exc)))
        if progress:
            progress(i + 1, len(scans))
    return written, skipped


def _propose(image, axis, progress=None):
    from core.calibration_proposal import propose

    return propose(image, axis)


def _prefill_mask(image, axis, model, progress=None):
    from core.prefill import prefill_mask

    return prefill_mask(image, axis, model, progress)


def _grid_segments(image, calib, axis, progress=None):
    """The grid detected in the scan as line segments in its own pixel frame (for the overlay)."""
    from core.grid import detect_grid, track_bands

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


class MainWindow(QtWidgets.QMainWindow):
    scan_opened = QtCore.Signal(str)  # the path of the scan now shown

    def __init__(self):
        super().__init__()
        self.setWindowTitle("WellTrace")
        self.setAcceptDrops(True)
        # no animated docking. Qt's dock animator makes a QPropertyAnimation for every dock geometry change while the
        # style has an animation duration (a 0-ms one when animation is off), parented to the dock; a window deleted
        # with one pending crashed in QWidget::ensurePolished (native backtrace: ~QPropertyAnimation -> destroyed()
        # -> setVisible -> ensurePolished), e.g. after a digitise had raised the curves dock. A style with no widget
        # animation makes no such objects.
        self.setAnimated(False)
        install_still_style()
        self.project: Project | None = None
        self.scan_path: Path | None = None
        self.image: np.ndarray | None = None
        self.rgb: np.ndarray | None = None
        self.editor: MaskEditor | None = None
        self.calib: Calibration | None = None
        self.result = None
        self.model = None
        self.model_name: str | None = None
        self.model_path: Path | None = None
        self.task: Task | None = None
        self.model_task: Task | None = None  # loads a finished training run's model
        self._opening: Path | None = None  # the scan being read, if any
        self.closing = False  # set in closeEvent: results that arrive later are dropped, no new work starts
        self._open_tasks: list[Task] = []
        self.last_error: str | None = None
        self.class_value = 1
        self.brush_radius = 3.0
        self._last_dab = None
        self.ask_depth = self._ask_depth_dialog  # replaceable (tests answer without a dialog)

        self.view = ScanView()
        self.overview = OverviewStrip()
        self.steps = StepsBar()
        central = QtWidgets.QWidget()
        outer = QtWidgets.QVBoxLayout(central)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.steps)
        row = QtWidgets.QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addWidget(self.overview)
        row.addWidget(self.view, 1)
        outer.addLayout(row, 1)
        self.setCentralWidget(central)
        self.exported = False  # the current result was exported this session
        self._build_docks()
        self._build_actions()
        self.cursor_label = QtWidgets.QLabel("")
        self.statusBar().addPermanentWidget(self.cursor_label)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)
        from .memory_gauge import MemoryGauge

        self.memory_gauge = MemoryGauge(self)
        self.statusBar().addPermanentWidget(self.memory_gauge)
        self.autosave_timer = QtCore.QTimer(self)
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(400)
        self.autosave_timer.timeout.connect(self.autosave_mask)
        # the PNG encode of an 8-megapixel mask takes ~60 ms: autosave encodes a snapshot off the UI thread,
        # one save at a time and in order
        from concurrent.futures import ThreadPoolExecutor

        self._saver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="welltrace-autosave")
        self._pending_save = None
        # brush dabs mark a dirty rectangle; the overlay re-renders at most every 16 ms
        self._dirty_rect = None
        self.repaint_timer = QtCore.QTimer(self)
        self.repaint_timer.setSingleShot(True)
        self.repaint_timer.setInterval(16)
        self.repaint_timer.timeout.connect(self._repaint_dirty)

        self.view.stroke_started.connect(self._stroke_start)
        self.view.stroke_moved.connect(self._stroke_move)
        self.view.stroke_finished.connect(self._stroke_end)
        self.view.clicked.connect(self._clicked)
        self.view.cursor_moved.connect(self._cursor)
        self.view.pick_moved.connect(self._pick_dragged)
        self.view.track_moved.connect(self._track_dragged)
        self.calib_panel.changed.connect(self._calibration_changed)
        self.calib_panel.add_pick_requested.connect(lambda: self.set_tool("pick"))
        self.calib_panel.propose_requested.connect(self.propose_calibration)
        self.calib_panel.ink_pick_requested.connect(self.pick_ink)
        self.view.vb.sigRangeChanged.connect(self._view_moved)
        self.overview.moved.connect(lambda f: self.view.centre_on(f, self._depth_axis()))
        self.steps.step_clicked.connect(self.do_step)
        self.confirm = self._confirm_dialog  # replaceable (tests answer without a dialog)
        st = settings()
        if st.value("geometry") is not None:
            self.restoreGeometry(st.value("geometry"))
            self.restoreState(st.value("state"))
        else:  # first start: most of the screen (a laptop's 1280 × 720 included), not Qt's small default
            screen = QtWidgets.QApplication.primaryScreen()
            avail = screen.availableGeometry() if screen is not None else QtCore.QRect(0, 0, 1400, 900)
            self.resize(max(1024, int(avail.width() * 0.92)), max(640, int(avail.height() * 0.92)))
        self._layout_checked = False
        freeze_long_lived()  # the libraries and the window live as long as the app

    def showEvent(self, ev):
        super().showEvent(ev)
        if not self._layout_checked:
            self._layout_checked = True
            QtCore.QTimer.singleShot(0, self.keep_scan_view_usable)  # once the restored layout is applied

    # the scan view's least share of the window before the docks are given their default sizes back
    MIN_VIEW_SHARE = 0.35

    def keep_scan_view_usable(self) -> None:
        """Give the docks their default sizes back when they leave the scan view a sliver.

        A layout saved on a wider screen, or saved while the training dock was pulled up, is restored
        as is by Qt, and the scan (the thing the user is here for) can open squeezed to a few pixels.
        """
        horizontal, vertical = QtCore.Qt.Orientation.Horizontal, QtCore.Qt.Orientation.Vertical
        areas = QtCore.Qt.DockWidgetArea
        docked = [d for d in self.findChildren(QtWidgets.QDockWidget) if d.isVisible() and not d.isFloating()]

        def first_in(area):
            return next((d for d in docked if self.dockWidgetArea(d) == area), None)

        if self.view.width() < self.MIN_VIEW_SHARE * self.width():
            pairs = [(first_in(areas.LeftDockWidgetArea), 0.18), (first_in(areas.RightDockWidgetArea), 0.27)]
            pairs = [(d, share) for d, share in pairs if d is not None]
            if pairs:
                self.resizeDocks([d for d, _ in pairs], [int(share * self.width()) for _, share in pairs], horizontal)
        bottom = first_in(areas.BottomDockWidgetArea)
        if bottom is not None and self.view.height() < self.MIN_VIEW_SHARE * self.height():
            # the height the central area (steps bar and scan) and the bottom dock share: 60 % to the scan's side
            shared = self.centralWidget().height() + bottom.height()
            self.resizeDocks([bottom], [int(0.4 * shared)], vertical)

    # -- construction ----------------------------------------------------------
    def _build_docks(self):
        self.project_list = QtWidgets.QTreeWidget()
        self.project_list.setHeaderLabels(["scan · state"])
        self.project_list.setUniformRowHeights(False)  # each scan: its name, its state on a second line
        self.project_list.setTextElideMode(QtCore.Qt.TextElideMode.ElideMiddle)
        fm = self.project_list.fontMetrics()  # the longest state in full: "labelled · calibrated · digitised"
        self.project_list.setMinimumWidth(fm.horizontalAdvance("    labelled · calibrated · digitised") + 36)
        self.project_list.itemActivated.connect(lambda it, _c: self.open_scan(Path(it.data(0, QtCore.Qt.ItemDataRole.UserRole))))
        self.project_list.itemClicked.connect(lambda it, _c: self.open_scan(Path(it.data(0, QtCore.Qt.ItemDataRole.UserRole))))
        dock = QtWidgets.QDockWidget("Project", self)
        dock.setObjectName("project_dock")
        dock.setWidget(self.project_list)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, dock)

        self.calib_panel = CalibrationPanel()
        cdock = QtWidgets.QDockWidget("Calibration", self)
        cdock.setObjectName("calibration_dock")
        scroll = QtWidgets.QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.calib_panel)
        cdock.setWidget(scroll)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, cdock)
        self.calib_dock = cdock

        self.curve_plots = CurvePlots()
        pdock = QtWidgets.QDockWidget("Digitised curves", self)
        pdock.setObjectName("curves_dock")
        pdock.setWidget(self.curve_plots)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, pdock)
        self.tabifyDockWidget(cdock, pdock)
        cdock.raise_()
        self.curves_dock = pdock

        from .training_dock import TrainingDock

        self.training = TrainingDock(self, self)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.BottomDockWidgetArea, self.training)
        self.training.hide()
        self.training.model_trained.connect(self._model_trained)

    def _action(self, text, slot, shortcut=None, checkable=False, tip=None):
        act = QtGui.QAction(text, self)
        if shortcut:
            act.setShortcut(QtGui.QKeySequence(shortcut))
        act.setCheckable(checkable)
        if slot is not None:
            act.triggered.connect(slot)
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(f"{text} ({shortcut})" if shortcut else text)
        return act

    def _build_actions(self):
        a = {}
        a["open_scan"] = self._action("Open scan…", self._open_scan_dialog, "Ctrl+O")
        a["open_project"] = self._action("Open project…", self._open_project_dialog, "Ctrl+Shift+O")
        a["add_scans"] = self._action("Add scans…", self._add_scans_dialog, "Ctrl+Shift+A")
        a["save"] = self._action("Save", self.save_all, "Ctrl+S")
        a["export"] = self._action("Export LAS…", self.export_dialog, "Ctrl+E", tip="write the digitised curves")
        a["quit"] = self._action("Quit", self.close, "Ctrl+Q")
        a["undo"] = self._action("Undo", self.undo, "Ctrl+Z")
        a["redo"] = self._action("Redo", self.redo, "Ctrl+Shift+Z")
        group = QtGui.QActionGroup(self)
        for name, label, key, tip in (
                ("pan", "Pan", "H", "pan and zoom"), ("brush", "Brush", "B", "paint the selected class"),
                ("ink_brush", "Ink brush", "I", "paint the selected class on the ink under the brush only: drag a "
                 "wide brush loosely along a curve"),
                ("eraser", "Eraser", "E", "erase to background"),
                ("line_eraser", "Line eraser", "X", "click a straight line of the mask (a grid line pre-filled as "
                 "curve): the whole line goes, the curves crossing it stay"),
                ("restyle", "Restyle", "C", "click a labelled stroke: the whole connected stroke takes the selected "
                 "class; drag: the labelled pixels under the brush do (curves of one class that touch)"),
                ("fill", "Fill", "F", "fill the ink stroke clicked"),
                ("polyline", "Polyline", "L", "click points of a thin curve; Enter closes it"),
                ("pick", "Pick", "P", "click a depth mark and type its depth")):
            act = self._action(label, lambda _=False, n=name: self.set_tool(n), key, True, tip)
            group.addAction(act)
            a[f"tool_{name}"] = act
        a["tool_pan"].setChecked(True)
        a["toggle_mask"] = self._action("Show mask", self.view.set_mask_visible, "M", True)
        a["toggle_mask"].setChecked(True)
        a["rotate"] = self._action("Rotate view", self.view.set_rotated, "R", True, "turn the log by 90°")
        a["show_grid"] = self._action("Show detected grid", self.show_grid, "G", True,
                                      "the printed grid the tracers damp their evidence on")
        a["from_mask"] = self._action("Digitise from the labelled mask", None, None, True,
                                      "trace the painted mask when the scan has one, else the model")
        a["from_mask"].setChecked(True)
        a["prefill"] = self._action("Pre-fill mask", self.prefill, "Ctrl+Shift+F",
                                    tip="fill the mask from the current model or the classical tracer")
        a["digitize"] = self._action("Digitise", self.digitize, "Ctrl+D", tip="trace the calibrated curves")
        a["cancel"] = self._action("Cancel", self.cancel_task, "Esc")
        a["swap"] = self._action("Swap curves over a range…", self.swap_dialog, None, False,
                                 "fix a crossing the tracer read wrong: two curves exchange values over a depth range")
        a["load_model"] = self._action("Load model…", self._load_model_dialog)
        a["train"] = self._action("Train…", self.show_training, "Ctrl+T", tip="train the network on this project")
        a["adapt"] = self._action("Adapt…", self.adapt_dialog, None, False,
                                  "adapt the current model to this project's labelled scans, time-boxed")
        self.actions_ = a
        self.polyline_points: list[tuple[float, float]] = []

        mb = self.menuBar()
        f = mb.addMenu("&File")
        for k in ("open_scan", "open_project", "add_scans", "save", "export", "load_model", "quit"):
            f.addAction(a[k])
        e = mb.addMenu("&Edit")
        for k in ("undo", "redo", "prefill"):
            e.addAction(a[k])
        t = mb.addMenu("&Tools")
        for k in ("tool_pan", "tool_brush", "tool_ink_brush", "tool_eraser", "tool_line_eraser", "tool_restyle",
                  "tool_fill", "tool_polyline", "tool_pick"):
            t.addAction(a[k])
        v = mb.addMenu("&View")
        for k in ("toggle_mask", "rotate", "show_grid"):
            v.addAction(a[k])
        r = mb.addMenu("&Run")
        r.addAction(a["adapt"])
        r.addAction(a["train"])
        r.addAction(a["digitize"])
        r.addAction(a["from_mask"])
        r.addAction(a["swap"])
        r.addAction(a["cancel"])

        # the workflow in order, on a toolbar of its own that never overflows at 1280 px:
        # open · calibrate (pick) · label (pre-fill) · digitise · train · export
        tb = self.addToolBar("Workflow")
        tb.setObjectName("main_toolbar")
        tb.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextOnly)
        for k in ("open_scan", "open_project"):
            tb.addAction(a[k])
        tb.addSeparator()
        for k in ("tool_pick", "prefill", "digitize", "adapt", "train", "export"):
            tb.addAction(a[k])
        self.addToolBarBreak()
        lb = self.addToolBar("Labelling")  # the secondary tools: a second row, free to fold
        lb.setObjectName("labelling_toolbar")
        for k in ("undo", "redo"):
            lb.addAction(a[k])
        lb.addSeparator()
        for k in ("tool_pan", "tool_brush", "tool_ink_brush", "tool_eraser", "tool_line_eraser", "tool_restyle",
                  "tool_fill", "tool_polyline"):
            lb.addAction(a[k])
        self.class_box = QtWidgets.QComboBox()
        self.class_box.addItems(["1 solid", "2 dashed", "3 dotted"])
        self.class_box.currentIndexChanged.connect(lambda i: setattr(self, "class_value", i + 1))
        lb.addWidget(QtWidgets.QLabel(" class "))
        lb.addWidget(self.class_box)
        self.size_box = QtWidgets.QSpinBox()
        self.size_box.setRange(1, 60)
        self.size_box.setValue(3)
        self.size_box.valueChanged.connect(lambda v: setattr(self, "brush_radius", float(v)))
        lb.addWidget(QtWidgets.QLabel(" size "))
        lb.addWidget(self.size_box)
        self.opacity_slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.opacity_slider.setRange(0, 100)
        self.opacity_slider.setValue(55)
        self.opacity_slider.setMaximumWidth(90)
        self.opacity_slider.valueChanged.connect(lambda v: self.view.set_opacity(v / 100.0))
        lb.addWidget(QtWidgets.QLabel(" opacity "))
        lb.addWidget(self.opacity_slider)
        lb.addAction(a["toggle_mask"])
        lb.addAction(a["show_grid"])

    # -- errors --------------------------------------------------------------------
    def show_error(self, message: str) -> None:
        """Name the file and the problem; never modal-blocking, never fatal."""
        self.last_error = message
        self.statusBar().showMessage(message, 10000)
        box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Warning, "WellTrace", message,
                                    QtWidgets.QMessageBox.StandardButton.Ok, self)
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    # -- opening -------------------------------------------------------------------
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

    def _depth_axis(self) -> str:
        return self.calib.depth_axis if self.calib is not None else self.calib_panel.axis.currentText()

    def fit_tracks(self) -> None:
        """Show the log's tracks across the view at a readable scale, from the top of the log."""
        if self.image is None:
            return
        axis = self._depth_axis()
        amp = self.image.shape[1] if axis == "y" else self.image.shape[0]
        spans = [s.track for s in self.calib.curves] if self.calib is not None and self.calib.curves else []
        spans = spans or self.calib_panel.proposed_tracks
        lo, hi = (min(min(t) for t in spans), max(max(t) for t in spans)) if spans else (0.0, float(amp))
        margin = 0.03 * (hi - lo)
        self.view.fit_across(max(0.0, lo - margin), min(float(amp), hi + margin), axis)
        self._view_moved()

    def _view_moved(self, *_args) -> None:
        if self.image is not None:
            self.overview.show_window(*self.view.depth_window(self._depth_axis()))

    # -- the next step ---------------------------------------------------------------
    def update_steps(self) -> None:
        if self.image is None:
            self.steps.set_state(None)
            return
        c = self.calib
        self.steps.set_state(ScanSteps(
            calibrated=c is not None and len(c.depth_picks) >= 2 and bool(c.curves),
            labelled=self.editor is not None and bool(self.editor.mask.any()),
            digitised=self.result is not None, exported=self.exported, has_model=self.model is not None))

    def do_step(self, step: str) -> None:
        """A click on a step of the bar: do it, or start it."""
        if step == "calibrate":
            self.calib_dock.show()
            self.calib_dock.raise_()
            if self.calib is None or len(self.calib.depth_picks) < 2:
                self.propose_calibration()
        elif step == "label":
            self.prefill()
        elif step == "digitise":
            self.digitize()
        elif step == "export":
            self.export_dialog()

    def _confirm_dialog(self, question: str) -> bool:
        ans = QtWidgets.QMessageBox.question(self, "WellTrace", question)
        return ans == QtWidgets.QMessageBox.StandardButton.Yes

    def propose_calibration(self) -> None:
        """Find the tracks and read the printed depths (off the UI thread); the user accepts or corrects."""
        if self.image is None or self.closing:
            return
        if getattr(self, "propose_task", None) is not None and self.propose_task.isRunning():
            return
        self.propose_task = Task(_propose, self.image, self._depth_axis(), parent=self)
        self.propose_task.succeeded.connect(self._proposed)
        self.propose_task.failed.connect(self._task_failed)
        self.progress.setRange(0, 0)
        self.progress.show()
        self.statusBar().showMessage("proposing a calibration: finding the tracks, reading the printed depths…")
        self.propose_task.start()

    def _proposed(self, prop) -> None:
        if self.closing:  # the window is closing: a late result touches nothing
            return
        self.last_proposal = prop
        self._task_done(" ".join(prop.messages))
        self.calib_panel.proposed_tracks = list(prop.tracks)
        self.view.set_proposed_tracks(prop.tracks, prop.depth_axis)
        have = self.calib.depth_picks if self.calib is not None else []
        if prop.picks:
            if len(have) < 2 or self.confirm(f"Replace the {len(have)} depth picks with the {len(prop.picks)} "
                                             "proposed from the printed depths?"):
                self.calib_panel.axis.setCurrentText(prop.depth_axis)
                self.calib_panel.set_picks(prop.picks)
        if self.calib is None or not self.calib.curves:
            self.statusBar().showMessage(" ".join(prop.messages) + " — now add a curve per track (Add curve "
                                         "takes the next proposed track) and set its name and scale.", 20000)
        self.calib_dock.raise_()
        self.update_steps()

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

    def show_training(self) -> None:
        self.training.show()
        self.training.raise_()
        self.training.refresh_budget()
        QtCore.QTimer.singleShot(0, self.keep_scan_view_usable)  # once the dock has taken its place

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
        from core.demo import BUNDLED_MODEL

        from .adapt_dialog import AdaptDialog

        self.flush()  # the labels on disk are the ones adapted on
        dlg = AdaptDialog(self.project.folder, self.model_path or BUNDLED_MODEL, self)
        dlg.adapted.connect(self._model_trained)
        dlg.digitise_btn.clicked.connect(self.digitise_all)
        self.adapt_dlg = dlg
        dlg.show()

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

    # -- labelling -------------------------------------------------------------------
    def set_tool(self, tool: str) -> None:
        self.view.set_tool(tool)
        act = self.actions_.get(f"tool_{tool}")
        if act and not act.isChecked():
            act.setChecked(True)
        if tool != "polyline":
            self.polyline_points = []
        if tool == "pick":
            self.calib_dock.raise_()

    def _stroke_start(self, row, col):
        if self.editor is None:
            return
        self.editor.begin_stroke()
        self._last_dab = None

    def _stroke_move(self, row, col):
        if self.editor is None:
            return
        if self.view.tool == "ink_brush":
            rect = self.editor.ink_dab(self.image, row, col, self.brush_radius, self.class_value, self._last_dab)
        elif self.view.tool == "restyle":
            rect = self.editor.restyle_dab(row, col, self.brush_radius, self.class_value, self._last_dab)
        else:
            value = 0 if self.view.tool == "eraser" else self.class_value
            rect = self.editor.dab(row, col, self.brush_radius, value, self._last_dab)
        self._last_dab = (row, col)
        if rect is None:
            return
        d = self._dirty_rect
        self._dirty_rect = rect if d is None else (min(d[0], rect[0]), max(d[1], rect[1]),
                                                   min(d[2], rect[2]), max(d[3], rect[3]))
        if not self.repaint_timer.isActive():
            self.repaint_timer.start()

    def _repaint_dirty(self):
        rect, self._dirty_rect = self._dirty_rect, None
        self.view.update_mask_region(rect)

    def _stroke_end(self):
        if self.editor is None:
            return
        self.editor.end_stroke()
        self._last_dab = None
        self.repaint_timer.stop()
        self._repaint_dirty()
        self.autosave_timer.start()

    def paint_stroke(self, points: list[tuple[float, float]], erase: bool = False, tool: str | None = None) -> None:
        """Programmatic stroke (row, col points) through the same path as the mouse; ``tool``: a dragging
        tool other than the brush or eraser (the ink brush)."""
        self.set_tool(tool or ("eraser" if erase else "brush"))
        self._stroke_start(*points[0])
        for p in points:
            self._stroke_move(*p)
        self._stroke_end()

    def _clicked(self, row, col):
        tool = self.view.tool
        if self.editor is None:
            return
        if tool in ("fill", "line_eraser", "restyle"):
            if tool == "fill":
                rect = self.editor.fill(int(row), int(col), self.class_value, source=self.image)
            elif tool == "line_eraser":
                rect = self.editor.erase_line(row, col)
            else:
                rect = self.editor.restyle(row, col, self.class_value)
            if rect is None:
                self.statusBar().showMessage({"fill": "no ink under the click",
                                              "line_eraser": "no straight labelled line under the click",
                                              "restyle": "no labelled stroke under the click"}[tool], 5000)
                return
            self.view.update_mask_region(rect)
            self.autosave_timer.start()
        elif tool == "polyline":
            self.polyline_points.append((row, col))
            if len(self.polyline_points) >= 2:
                a, b = self.polyline_points[-2], self.polyline_points[-1]
                rect = self.editor.polyline([a, b], max(1, int(self.brush_radius)), self.class_value)
                self.view.update_mask_region(rect)
                self.autosave_timer.start()
        elif tool == "ink":
            self._ink_picked(row, col)
        elif tool == "pick":
            axis = self.calib_panel.axis.currentText()
            pixel = row if axis == "y" else col
            depth = self.ask_depth(pixel)
            if depth is not None:
                self.calib_panel.add_pick_at(pixel, depth)

    def pick_ink(self) -> None:
        """The eyedropper: the next click on the scan sets the selected curve's ink colour."""
        if self.rgb is None:
            self.show_error("this scan is greyscale: there are no ink colours to pick; curves are told apart by "
                            "line style")
            return
        if self.calib_panel.selected_curve() is None:
            self.show_error("select a curve in the calibration first")
            return
        self.set_tool("ink")
        self.statusBar().showMessage(f"click the ink of {self.calib_panel.selected_curve()} on the scan", 10000)

    def _ink_picked(self, row: float, col: float) -> None:
        from core.colour import hex_colour, sample_ink

        ink = sample_ink(self.rgb, col, row) if self.rgb is not None else None
        self.set_tool("pan")
        if ink is None:
            self.show_error("no ink under the click: click on the curve's line itself")
            return
        self.calib_panel.set_curve_colour(hex_colour(ink))
        self.statusBar().showMessage(f"{self.calib_panel.selected_curve()}: ink {hex_colour(ink)}", 10000)

    def keyPressEvent(self, ev):
        if ev.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter):
            self.polyline_points = []
        super().keyPressEvent(ev)

    def _ask_depth_dialog(self, pixel: float) -> float | None:
        depth, ok = QtWidgets.QInputDialog.getDouble(self, "Depth pick", f"Depth at pixel {pixel:.1f}:",
                                                     0.0, -1e6, 1e6, 3)
        return depth if ok else None

    def undo(self):
        if self.editor is not None:
            self.view.update_mask_region(self.editor.undo())
            self.autosave_timer.start()

    def redo(self):
        if self.editor is not None:
            self.view.update_mask_region(self.editor.redo())
            self.autosave_timer.start()

    def prefill(self):
        """Fill the mask from the current model or the classical tracer, off the UI thread (one undo step)."""
        if self.image is None or self.closing or (self.task is not None and self.task.isRunning()):
            return
        axis = self.calib_panel.axis.currentText()
        scan = self.scan_path
        self._start_task(Task(_prefill_mask, self.image, axis, self.model, parent=self),
                         lambda mask: self._prefilled(mask, scan), "pre-filling the mask…", "pre-fill cancelled")

    def _start_task(self, task: Task, on_result, busy: str, cancelled: str) -> None:
        """Run the window's one long task (pre-fill, digitise) with the progress bar, Cancel and errors wired."""
        self.task = task
        task.progressed.connect(self._progress)
        task.succeeded.connect(on_result)
        task.failed.connect(self._task_failed)
        task.cancelled.connect(lambda: self._task_done(cancelled))
        self.progress.setRange(0, 0)
        self.progress.show()
        self.statusBar().showMessage(busy)
        task.start()

    def _prefilled(self, mask: np.ndarray, scan) -> None:
        self._task_done("mask pre-filled: correct it with the line eraser, restyle and ink brush")
        if self.closing or self.editor is None or scan != self.scan_path or mask.shape != self.editor.mask.shape:
            return  # another scan was opened meanwhile
        rect = self.editor.replace_all(mask)
        self.view.update_mask_region(rect)
        self.autosave_timer.start()

    # -- calibration -------------------------------------------------------------------
    def _calibration_changed(self, calib: Calibration):
        self.calib = calib
        if self.scan_path is not None:
            try:
                calib.save(calib_path_for(self.scan_path))
            except OSError as exc:
                self.show_error(f"{calib_path_for(self.scan_path)}: cannot save: {exc}")
        self._update_handles()
        self.refresh_project()

    def _update_handles(self):
        c = self.calib
        if c is None:
            self.view.set_calibration_handles(self.calib_panel.axis.currentText(), [], [])
            return
        tracks = [(s.track_lo, s.track_hi, curve_colour(s, i))
                  for i, s in enumerate(c.curves)]
        self.view.set_calibration_handles(c.depth_axis, c.depth_picks, tracks)

    def _pick_dragged(self, index, pixel):
        self.calib_panel.set_pick_pixel(index, pixel)

    def _track_dragged(self, index, a, b):
        self.calib_panel.set_track(index, a, b)

    def _cursor(self, row, col):
        text = f"row {row:.0f}  col {col:.0f}"
        c = self.calib
        if c is not None:
            along, across = (row, col) if c.depth_axis == "y" else (col, row)
            text += f"   depth {float(c.depth_at(along)):.2f} {c.depth_unit}"
            for s in c.curves:
                if s.track_lo <= across <= s.track_hi:
                    text += f"   {s.mnemonic} {float(s.value_at(across)):.4g} {s.unit}"
        self.cursor_label.setText(text)

    # -- digitise and export ---------------------------------------------------------------
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
        self._start_task(Task(_run_digitize, self.image, self.calib, self.model, mask, self.rgb, parent=self),
                         self._digitized, "digitising…", "digitising cancelled")

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

    def cancel_task(self):
        if self.task is not None and self.task.isRunning():
            self.task.cancel()

    def _progress(self, i, n):
        if self.closing:  # the window is closing: a late result touches nothing
            return
        self.progress.setRange(0, n)
        self.progress.setValue(i)

    def _task_done(self, message: str):
        if self.closing:  # the window is closing: a late result touches nothing
            return
        self.progress.hide()
        self.statusBar().showMessage(message, 8000)

    def _task_failed(self, message: str):
        if self.closing:  # the window is closing: a late result touches nothing
            return
        self._task_done("failed")
        self.show_error(message)

    def _digitized(self, result):
        if self.closing:  # the window is closing: a late result touches nothing
            return
        from core.digitize import write_result

        self.result, self.exported = result, False
        self._task_done(f"digitised {len(result.values)} curves ({result.method})")
        for w in result.warnings:
            self.statusBar().showMessage(w, 10000)
        self._show_traces()
        self._plot_curves()
        self.curves_dock.raise_()
        try:
            write_result(digitized_path_for(self.scan_path), result, self.calib, self.scan_path.name, self.model_name)
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
        from .swap_dialog import SwapDialog

        plots = [self.curve_plots.getItem(0, i) for i in range(len(self.calib.curves))]
        dlg = SwapDialog([c.mnemonic for c in self.calib.curves], self.result.depth, self.calib.depth_unit,
                         [p for p in plots if p is not None], self)
        self.swap_dlg = dlg
        self.curves_dock.raise_()
        dlg.accepted.connect(lambda: self.swap_curves(dlg.a.currentText(), dlg.b.currentText(), *dlg.range()))
        dlg.open()

    def swap_curves(self, a: str, b: str, top: float, bottom: float) -> bool:
        """Exchange two traced curves' values between two depths, replot and save the digitised LAS."""
        from core.crossings import swap_range
        from core.digitize import write_result

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
        from core.digitize import write_result

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

    # -- saving ---------------------------------------------------------------------------
    def autosave_mask(self) -> None:
        if self.editor is None or self.scan_path is None or not self.editor.dirty:
            return
        snapshot = self.editor.mask.copy()
        self.editor.dirty = False
        path = mask_path_for(self.scan_path)
        fresh = not path.exists()
        self._pending_save = self._saver.submit(save_gray_png, path, snapshot)
        self._pending_save.add_done_callback(lambda fut: self._autosaved(fut, fresh))

    def _autosaved(self, fut, fresh: bool) -> None:  # on the saver thread: hand back to the UI thread
        exc = fut.exception()
        if exc is not None:
            QtCore.QMetaObject.invokeMethod(self, "_autosave_failed", QtCore.Qt.ConnectionType.QueuedConnection,
                                            QtCore.Q_ARG(str, str(exc)))
        elif fresh:  # the scan just became "labelled"
            QtCore.QMetaObject.invokeMethod(self, "refresh_project", QtCore.Qt.ConnectionType.QueuedConnection)

    @QtCore.Slot(str)
    def _autosave_failed(self, message: str) -> None:
        if self.editor is not None:
            self.editor.dirty = True
        self.show_error(f"{mask_path_for(self.scan_path)}: autosave failed: {message}")

    def save_mask(self) -> None:
        """Save now, on this thread (closing, switching scans)."""
        if self._pending_save is not None:
            self._pending_save.result()
            self._pending_save = None
        if self.editor is not None and self.scan_path is not None and self.editor.dirty:
            save_gray_png(mask_path_for(self.scan_path), self.editor.mask)
            self.editor.dirty = False
            self.refresh_project()

    def flush(self) -> None:
        self.autosave_timer.stop()
        self.save_mask()

    def save_all(self) -> None:
        try:
            self.flush()
            if self.calib is not None and self.scan_path is not None:
                self.calib.save(calib_path_for(self.scan_path))
            if self.project is not None:
                self.project.save()
        except OSError as exc:
            self.show_error(f"cannot save: {exc}")

    def closeEvent(self, ev):
        self.closing = True
        try:
            self.flush()
        except OSError as exc:
            ans = QtWidgets.QMessageBox.question(self, "WellTrace", f"Your labels could not be saved ({exc}). "
                                                 "Close anyway and lose them?")
            if ans != QtWidgets.QMessageBox.StandardButton.Yes:
                self.closing = False
                ev.ignore()
                return
        from .workers import owned_tasks

        if self.task is not None and self.task.isRunning():
            self.task.cancel()
        for task in owned_tasks(self):  # finish what was started (a mask save, a model read) for a while ...
            task.wait(10000)
        for task in owned_tasks(self):  # ... then let the rest run out on their own, heard by no one
            task.abandon()
        if getattr(self, "adapt_dlg", None) is not None and self.adapt_dlg.running():
            self.adapt_dlg.stop()
        self.training.shutdown()
        st = settings()
        st.setValue("geometry", self.saveGeometry())
        st.setValue("state", self.saveState())
        super().closeEvent(ev)


def make_app() -> QtWidgets.QApplication:
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setApplicationName("WellTrace")
    icon = RESOURCES / "icons" / "welltrace.png"
    if icon.exists():
        app.setWindowIcon(QtGui.QIcon(str(icon)))
    pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)
    return app


def run(paths: list[str], screenshot: str | None = None) -> int:
    app = make_app()
    app.aboutToQuit.connect(stop_planner)  # the budget planner's process ends with the app
    win = MainWindow()
    if paths:
        win.open_paths(paths)
    else:
        win.open_demo()
    win.show()
    if screenshot:
        def shoot():
            if win.opening:  # the scan is still being read: shoot once it is shown
                QtCore.QTimer.singleShot(100, shoot)
                return
            app.processEvents()
            win.grab().save(screenshot)
            win.close()
            app.quit()
        QtCore.QTimer.singleShot(300, shoot)
    return app.exec()
