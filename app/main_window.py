"""The WellTrace main window: it composes the controllers and lays out their widgets.

A view over ``core``: what the window does is in its controllers (``app/window``), one concern each, each
owning its state: the project and scan shown (:class:`ScanController`), the calibration
(:class:`CalibrationController`), the labels (:class:`LabellingController`), the current model and the offers of
new ones (:class:`ModelController`), the digitised result with its LAS and QC picture
(:class:`DigitizingController`), adapting the model to the project (:class:`AdaptController`) and the
training run (``app/window/training.py``, under the training dock). They meet through signals and the window's
small shell interface (``app/window/shell.py``: status line, errors, the one long task, a question); the window
keeps only that, the next-step bar, the docks, and saving and closing.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from core.model.bundled import BUNDLED_MODEL

from .heap import freeze_long_lived
from .next_step import ScanSteps, StepsBar, is_placeholder_curve
from .overview_strip import OverviewStrip
from .scan_view import ScanView
from .window.actions import build_actions
from .window.adapting import AdaptController
from .window.calibrating import CalibrationController
from .window.digitizing import DigitizingController
from .window.docks import build_docks, give_training_room, keep_scan_view_usable
from .window.labelling import LabellingController
from .window.models import ModelController
from .window.scans import ScanController, user_demo_project
from .window.settings import install_still_style, settings
from .workers import Task

RESOURCES = Path(__file__).resolve().parents[1] / "resources"


class MainWindow(QtWidgets.QMainWindow):
    """The window: the controllers, their widgets in docks, the shell they share."""

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
        self.closing = False  # set in closeEvent: results that arrive later are dropped, no new work starts
        # whether closing saves the window's geometry for the next start (not for a --screenshot run: an offscreen
        # one saved 985 × 480, and the next real start opened at that size)
        self.remember_geometry = True
        self.task: Task | None = None  # the one long task (pre-fill, digitise, proposal, a batch)
        self._cancelled_message = "cancelled"
        self.last_error: str | None = None
        self.confirm = self._confirm_dialog  # replaceable (tests answer without a dialog)

        self.view, self.overview, self.steps = ScanView(), OverviewStrip(), StepsBar()
        self.cursor_label = self.steps.readout  # the readout under the cursor, beside the next step's hint
        self.setCentralWidget(self._central())

        # the controllers, each over the ones it reads
        self.models = ModelController(self, self)
        self.scans = ScanController(self, self)
        self.calibration = CalibrationController(self, self.scans, self.view, self)
        self.labelling = LabellingController(self, self.scans, self.calibration, self.models, self.view, self)
        self.digitizing = DigitizingController(self, self.scans, self.calibration, self.labelling, self.models,
                                               self.view, self)
        self.adapting = AdaptController(self, self.scans, self.labelling, self.models, self._training_running, self,
                                        self)
        self.calib_dock, self.curves_dock, self.training = build_docks(self)
        self.actions_, controls = build_actions(self)
        self.class_box, self.size_box, self.opacity_slider = (controls.class_box, controls.size_box,
                                                             controls.opacity_slider)

        self._status_widgets()

        # what the controllers tell each other and the window
        self.scans.opened.connect(self._scan_shown)
        self.scans.project_changed.connect(self.update_steps)
        self.calibration.changed.connect(self.scans.refresh_project)
        self.calibration.proposed.connect(self.calib_dock.raise_)
        self.calibration.proposed.connect(self.fit_tracks)  # to the proposed tracks, at the first section
        self.calibration.wants_tool.connect(self.set_tool)
        self.labelling.labels_saved.connect(self.scans.refresh_project)
        self.digitizing.digitized.connect(self.curves_dock.raise_)
        self.digitizing.digitized.connect(self.scans.refresh_project)
        self.adapting.digitize_rest.connect(self.digitizing.digitize_all)
        self.digitizing.exported_changed.connect(self.update_steps)
        self.models.changed.connect(self.update_steps)
        self.view.clicked.connect(self._clicked)
        self.view.cursor_moved.connect(lambda r, c: self.cursor_label.setText(self.calibration.cursor_text(r, c)))
        self.view.vb.sigRangeChanged.connect(self._view_moved)
        self.overview.moved.connect(lambda f: self.view.centre_on(f, self.calibration.depth_axis()))
        self.steps.step_clicked.connect(self.do_step)
        self.training.run.model_trained.connect(self.models.run_finished)

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

    # -- the shell the controllers meet through (app/window/shell.py) ----------------------------------
    def show_error(self, message: str) -> None:
        """Name the file and the problem; never modal-blocking, never fatal."""
        self.last_error = message
        self.statusBar().showMessage(message, 10000)
        box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Warning, "WellTrace", message,
                                    QtWidgets.QMessageBox.StandardButton.Ok, self)
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def show_status(self, message: str, ms: int = 8000) -> None:
        if not self.closing:
            self.statusBar().showMessage(message, ms)

    def _confirm_dialog(self, question: str) -> bool:
        ans = QtWidgets.QMessageBox.question(self, "WellTrace", question)
        return ans == QtWidgets.QMessageBox.StandardButton.Yes

    def start_task(self, task: Task, on_result, busy: str, cancelled: str) -> None:
        """Run the window's one long task with the progress bar, Cancel and errors wired."""
        self.task = task
        self._cancelled_message = cancelled
        task.progressed.connect(self._progress)
        task.succeeded.connect(on_result)
        task.failed.connect(self._task_failed)
        task.cancelled.connect(lambda: self.task_done(cancelled))
        self.progress.setRange(0, 0)
        self.progress.show()
        self.statusBar().showMessage(busy)
        task.start()

    def task_running(self) -> bool:
        return self.task is not None and self.task.isRunning()

    # how long Cancel waits for the task to stop at its next progress report before the window lets go of it
    CANCEL_GRACE_MS = 1000

    def cancel_task(self):
        """Cancel (Esc): the task stops at its next progress report; one that has not stopped within a second is
        let go of (abandoned: its result is dropped, it ends on its own) and the window is free again."""
        if not self.task_running():
            return
        task = self.task
        task.cancel()
        self.statusBar().showMessage("cancelling…")
        QtCore.QTimer.singleShot(self.CANCEL_GRACE_MS, lambda: self._let_go(task))

    def _let_go(self, task: Task) -> None:
        if self.closing or self.task is not task or not task.isRunning():
            return  # it stopped (its cancelled signal said so), or another task is the window's now
        task.abandon()
        self.task = None
        self.task_done(f"{self._cancelled_message} (the step under way ends in the background; its result is "
                       "dropped)")

    def _progress(self, i, n):
        if self.closing:  # the window is closing: a late result touches nothing
            return
        self.progress.setRange(0, n)
        self.progress.setValue(i)

    def task_done(self, message: str):
        if self.closing:  # the window is closing: a late result touches nothing
            return
        self.progress.hide()
        self.statusBar().showMessage(message, 8000)

    def _task_failed(self, message: str):
        if self.closing:
            return
        self.task_done("failed")
        self.show_error(message)

    # -- opening --------------------------------------------------------------------------------
    def open_paths(self, paths) -> None:
        self.scans.open_paths(paths)

    def open_project(self, folder: Path) -> bool:
        if not self.scans.open_project(Path(folder)):
            return False
        self.setWindowTitle(f"WellTrace — {Path(folder).name}")
        return True

    def open_scan(self, path: Path) -> bool:
        return self.scans.open_scan(Path(path))

    def open_demo(self) -> bool:
        """First start: a writable copy of the bundled demo project, with the bundled demo model as the current
        model so that Digitise and Pre-fill work out of the box (File → Load model… replaces it)."""
        demo = user_demo_project()
        if demo is None or not self.open_project(demo):
            return False
        if self.models.model is None and BUNDLED_MODEL.exists():
            self.models.load(BUNDLED_MODEL)
        self.scan_opened.connect(self._digitize_demo_scan)
        return True

    def _digitize_demo_scan(self, _path: str) -> None:
        """The demo's first scan opens digitised: a new user sees the product's result before anything else
        (traced by the bundled model, not from the demo's labels, to show what the model reads)."""
        self.scan_opened.disconnect(self._digitize_demo_scan)
        calib = self.calibration.calib
        if self.digitizing.result is None and self.models.model is not None and calib is not None and calib.curves:
            self.digitizing.digitize(from_mask=False)

    def _scan_shown(self, bundle) -> None:
        self.cursor_label.setText("")  # the last scan's depth and values are not this one's
        if self.scans.project is None:
            self.setWindowTitle(f"WellTrace — {bundle.path.name}")
        self.view.set_scan(bundle.scan.display, bundle.pyramid)
        self.overview.set_log(bundle.pyramid[-1], self.calibration.depth_axis())
        self.fit_tracks()
        self.update_steps()
        self.scan_opened.emit(str(bundle.path))

    def dragEnterEvent(self, ev):
        if ev.mimeData().hasUrls():
            ev.acceptProposedAction()

    def dropEvent(self, ev):
        self.open_paths([u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()])

    # -- tools and clicks on the scan ------------------------------------------------------------------
    def set_tool(self, tool: str) -> None:
        self.view.set_tool(tool)
        act = self.actions_.get(f"tool_{tool}")
        if act and not act.isChecked():
            act.setChecked(True)
        self.labelling.tool_changed(tool)
        if tool == "pick":
            self.calib_dock.raise_()

    def _clicked(self, row, col):
        tool = self.view.tool
        if tool == "pick":
            self.calibration.pick_at(row, col)
        elif tool == "ink":
            self.calibration.ink_at(row, col)
        else:
            self.labelling.click(tool, row, col)

    def paint_stroke(self, points: list[tuple[float, float]], erase: bool = False, tool: str | None = None) -> None:
        """A stroke of (row, col) points through the same path as the mouse's (automation, tests); ``tool``: a
        dragging tool other than the brush or eraser (the ink brush, restyle)."""
        self.set_tool(tool or ("eraser" if erase else "brush"))
        self.labelling.stroke_start(*points[0])
        for p in points:
            self.labelling.stroke_move(*p)
        self.labelling.stroke_end()

    def keyPressEvent(self, ev):
        if ev.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter):
            self.labelling.end_polyline()
        super().keyPressEvent(ev)

    # below this height the training dock shows its instruments as two tabs of one row
    COMPACT_HEIGHT_PX = 1000

    def resizeEvent(self, ev):  # noqa: N802 - Qt's name
        super().resizeEvent(ev)
        self.training.set_compact(self.height() < self.COMPACT_HEIGHT_PX)

    def showEvent(self, ev):
        super().showEvent(ev)
        if not self._layout_checked:
            self._layout_checked = True
            QtCore.QTimer.singleShot(0, self.keep_scan_view_usable)  # once the restored layout is applied

    def keep_scan_view_usable(self) -> None:
        keep_scan_view_usable(self)

    def _central(self) -> QtWidgets.QWidget:
        """The steps bar above the overview strip and the scan."""
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
        return central

    def _status_widgets(self) -> None:
        """The status bar's cursor position, task progress and memory gauge."""
        from .memory_gauge import MemoryGauge

        self.progress = QtWidgets.QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.hide()
        self.memory_gauge = MemoryGauge(self)
        for w in (self.progress, self.memory_gauge):
            self.statusBar().addPermanentWidget(w)
        # while a run goes on, the gauge shows the training process's memory as the child reports it
        self.training.memory_reported.connect(self.memory_gauge.training_report)
        self.training.run_started.connect(self.memory_gauge.training_started)
        self.training.run_ended.connect(self.memory_gauge.training_ended)

    def _step_size(self) -> tuple[int, int] | None:
        """(along depth, across) of the scan on show in the network's frame: what one training step reads."""
        if self.scans.image is None:
            return None
        rows, cols = self.scans.image.shape[:2]
        calib = self.calibration.calib
        axis = calib.depth_axis if calib else ("y" if rows >= cols else "x")
        return (rows, cols) if axis == "y" else (cols, rows)

    def _training_running(self) -> bool:
        return self.training.run.running

    def show_training(self) -> None:
        opening = not self.training.isVisible()
        self.training.show()
        self.training.raise_()
        self.training.refresh_budget()
        # once the dock has taken its place: half the height on opening, else the scan kept usable
        QtCore.QTimer.singleShot(0, (lambda: give_training_room(self)) if opening else self.keep_scan_view_usable)

    # -- the view -------------------------------------------------------------------
    def fit_tracks(self) -> None:
        """Show the log's tracks across the view at a readable scale, from the top of the log."""
        if self.scans.image is None:
            return
        axis = self.calibration.depth_axis()
        amp = self.scans.image.shape[1] if axis == "y" else self.scans.image.shape[0]
        calib = self.calibration.calib
        spans = [s.track for s in calib.curves] if calib is not None and calib.curves else []
        spans = spans or self.calibration.panel.proposed_tracks
        lo, hi = (min(min(t) for t in spans), max(max(t) for t in spans)) if spans else (0.0, float(amp))
        margin = 0.03 * (hi - lo)
        # a scan with log sections opens at the first one: its header is not what the user is here for
        start = float(calib.sections[0].start) if calib is not None and calib.sections else 0.0
        self.view.fit_across(max(0.0, lo - margin), min(float(amp), hi + margin), axis, start)
        self._view_moved()

    def _view_moved(self, *_args) -> None:
        if self.scans.image is not None:
            self.overview.show_window(*self.view.depth_window(self.calibration.depth_axis()))

    # -- the next step ---------------------------------------------------------------
    def update_steps(self) -> None:
        if self.scans.image is None:
            self.steps.set_state(None)
            return
        c = self.calibration.calib
        picked = c is not None and len(c.depth_picks) >= 2
        self.steps.set_state(ScanSteps(
            calibrated=picked and any(not is_placeholder_curve(s) for s in c.curves), picked=picked,
            labelled=self.labelling.editor is not None and bool(self.labelling.editor.mask.any()),
            digitized=self.digitizing.result is not None, exported=self.digitizing.exported,
            # Digitise reads with the bundled model when none is loaded (issue #43): labelling is optional then too
            has_model=self.models.model is not None or BUNDLED_MODEL.exists()))

    def do_step(self, step: str) -> None:
        """A click on a step of the bar: do it, or start it."""
        if step == "calibrate":
            self.calib_dock.show()
            self.calib_dock.raise_()
            if self.calibration.calib is None or len(self.calibration.calib.depth_picks) < 2:
                self.calibration.propose()
        elif step == "label":
            self.labelling.prefill()
        elif step == "digitise":
            self.digitizing.digitize()
        elif step == "export":
            self.digitizing.export_dialog()

    # -- saving and closing ---------------------------------------------------------------
    def flush(self) -> None:
        """Save the labels now (raises OSError)."""
        self.labelling.flush()

    def save_all(self) -> None:
        self.calibration.commit_edits()
        try:
            self.flush()
            self.calibration.save()
            if self.scans.project is not None:
                self.scans.project.save()
        except OSError as exc:
            self.show_error(f"cannot save: {exc}")

    def closeEvent(self, ev):
        self.calibration.commit_edits()  # a field still being typed in is saved with the rest
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

        if self.task_running():
            self.task.abandon()  # the long task (a proposal, a digitise) is given a second, no more
        if self.training.plan_task is not None:
            self.training.plan_task.abandon()  # a budget prediction: nobody will read it
        for task in owned_tasks(self):  # finish what was started (a mask save, a model read) for a while ...
            task.wait(1000 if task.cancel_requested else 10000)
        for task in owned_tasks(self):  # ... then let the rest run out on their own, heard by no one: their
            task.abandon()  # threads end with the process, never holding it open
        self.adapting.stop()
        self.training.shutdown()
        if self.remember_geometry:
            st = settings()
            st.setValue("geometry", self.saveGeometry())
            st.setValue("state", self.saveState())
        super().closeEvent(ev)
