"""The WellTrace main window: the shell that builds the docks, actions, menus and toolbars.

A view and controller over ``core``: it loads, edits and saves through core's
APIs, runs long work in :class:`app.workers.Task` threads, and computes
nothing core can. What the window does is in its controllers, one concern
each (``app/window``): opening projects and scans, calibrating, labelling, and
the digitise-to-LAS flow; the shell keeps what they share (the status bar's
progress and errors, the next-step bar, saving and closing).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from core.io.calibration import Calibration
from core.io.project import Project
from core.io.scan import calib_path_for
from core.labelling.mask_edit import MaskEditor

from .calibration_panel import CalibrationPanel
from .curve_plots import CurvePlots
from .heap import freeze_long_lived
from .next_step import ScanSteps, StepsBar
from .overview_strip import OverviewStrip
from .planner_process import stop_planner
from .scan_view import ScanView
from .window.actions import ActionsAndMenus
from .window.calibrating import Calibrating
from .window.digitise_flow import DigitiseFlow
from .window.labelling import Labelling
from .window.project_flow import ProjectFlow
from .workers import Task

RESOURCES = Path(__file__).resolve().parents[1] / "resources"


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


class MainWindow(ActionsAndMenus, ProjectFlow, Calibrating, Labelling, DigitiseFlow, QtWidgets.QMainWindow):
    """The window: its controllers (mixed in) share its state and widgets, built here."""

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
        self.scan_dpi: tuple[float, float] | None = None  # the scan's resolution, when its file names one
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
        self.view.section_moved.connect(self._section_dragged)
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

    # -- errors --------------------------------------------------------------------
    def show_error(self, message: str) -> None:
        """Name the file and the problem; never modal-blocking, never fatal."""
        self.last_error = message
        self.statusBar().showMessage(message, 10000)
        box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Warning, "WellTrace", message,
                                    QtWidgets.QMessageBox.StandardButton.Ok, self)
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    # -- the view -------------------------------------------------------------------
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

    # -- the window's long task (pre-fill, digitise): progress, Cancel, errors -----------
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

    # -- saving and closing ---------------------------------------------------------------
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
