"""Click-to-train: the training dock, a view over the run its controller owns, and the live instruments.

The run (settings → config, the child process, what its events say) is ``app/window/training.py``'s
:class:`TrainingController`; the engine's generator runs in a child process at a lower priority
(``app/trainer_process.py``, ``app/training_child.py``). The dock takes the run's events on a timer and redraws
one instrument per tick, so the UI never lags the run. A crash or out-of-memory in training becomes an error in
the panel, never a dead app.
"""

from __future__ import annotations

import time

from PySide6 import QtCore, QtWidgets

from core.common.errors import InputError
from core.common.vocabulary import GIB

from .instruments import BudgetBar, CurvesVsTruth, GradHistogram, LossPlot, ScaleTrace
from .planner_process import predict_in_planner
from .window.training import TrainingContext, TrainingController, TrainingForm

REFRESH_MS = 50  # the timer ticks every 50 ms and redraws one instrument a tick, round robin:
# each instrument at most four times a second, and one tick never paints all of them at once
# (offscreen, one pyqtgraph plot costs ~30 ms to paint on a slow CPU)


ROW_MIN_PX = 170  # a row of instruments: below this their titles and axes are clipped
QUIT_GRACE_S = 10.0  # closing the app: how long a run is given to stop after its step before its process is ended


class WheelNeedsFocus(QtCore.QObject):
    """Wheel events go to a settings field only once it has focus (a click or Tab): scrolling the settings with the
    wheel passed over the stage box and silently changed the run's stage. Unfocused, the wheel scrolls the form."""

    def eventFilter(self, obj, ev):  # noqa: N802 - Qt's name
        if ev.type() != QtCore.QEvent.Type.Wheel or obj.hasFocus():
            return False
        area = obj.parentWidget()
        while area is not None and not isinstance(area, QtWidgets.QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            QtWidgets.QApplication.sendEvent(area.viewport(), ev)  # the form scrolls under the wheel
        ev.accept()
        return True


class TrainingDock(QtWidgets.QDockWidget):
    """The view of a training run: its settings form, buttons, status and instruments; the run itself is
    ``self.run``'s (:class:`TrainingController`)."""

    # the training process's memory as it reports it (a sample dict), with the budget's prediction of one step of
    # the run's precision and the run's ceiling (bytes, None where unknown): the status bar's gauge shows them
    memory_reported = QtCore.Signal(object, object, object)
    run_started = QtCore.Signal()
    run_ended = QtCore.Signal()

    def __init__(self, context: TrainingContext, parent=None):
        super().__init__("Training", parent)
        self.setObjectName("training_dock")
        self.context = context
        self.run = TrainingController(context, self)
        self.run.crashed.connect(self._crashed)
        self._replan = False  # a budget re-plan asked for while one runs: done when it finishes
        self.plan_task = None
        self.pending: dict = {}  # instrument -> a redraw waiting for its turn
        self._turn = 0
        self.predicted: dict[str, int] = {}  # precision mode -> the budget's predicted bytes of one step
        self.run_mode: str | None = None  # the precision the run resolved to (its budget event)
        self.timing = StepTiming()
        self.last_step = None  # the run's last step event (its status line)
        body = QtWidgets.QWidget()
        outer = QtWidgets.QHBoxLayout(body)
        outer.addWidget(self._controls(), 0)
        self.budget = BudgetBar()
        self.scale = ScaleTrace()
        self.hist = GradHistogram()
        self.loss = LossPlot()
        self.curves = CurvesVsTruth()
        self.warn_list = QtWidgets.QListWidget()
        self.warn_list.setWordWrap(True)
        wbox = QtWidgets.QGroupBox("Warnings and advice")
        QtWidgets.QVBoxLayout(wbox).addWidget(self.warn_list)
        # two rows of three instruments: both in sight on a tall window, one tab each on a short one (a laptop's
        # 720 px left the scan a 270-px strip and clipped the charts' titles)
        self.rows = []
        for name, widgets in (("Memory and numerics", (self.budget, self.scale, self.hist)),
                              ("Progress", (self.loss, self.curves, wbox))):
            row = QtWidgets.QWidget()
            lay = QtWidgets.QHBoxLayout(row)
            lay.setContentsMargins(0, 0, 0, 0)
            for w in widgets:
                # equal shares, fixed by stretch rather than by content: a status text or a new warning that
                # changes a size hint must not shift the plots by a pixel (that repaints all six at once)
                lay.addWidget(w, 1)
            row.setObjectName(name)
            row.setMinimumHeight(ROW_MIN_PX)
            self.rows.append(row)
        self.stacked = QtWidgets.QWidget()
        QtWidgets.QVBoxLayout(self.stacked).setContentsMargins(0, 0, 0, 0)
        self.tabs = QtWidgets.QTabWidget()
        self.instruments = QtWidgets.QStackedWidget()
        self.instruments.addWidget(self.stacked)
        self.instruments.addWidget(self.tabs)
        self.compact = None
        self.set_compact(False)
        outer.addWidget(self.instruments, 1)
        self.setWidget(body)
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self._drain)
        self.budget.ceiling_dragged.connect(self._ceiling_dragged)

    def set_compact(self, compact: bool) -> None:
        """The instruments as two rows (False) or as two tabs of one row (True: a short window)."""
        if compact == self.compact:
            return
        self.compact = compact
        for row in self.rows:
            if compact:
                self.tabs.addTab(row, row.objectName())
            else:
                self.stacked.layout().addWidget(row, 1)
                row.setVisible(True)  # a tab page not shown was hidden by the tab widget
        if not compact:
            self.tabs.clear()
        self.instruments.setCurrentWidget(self.tabs if compact else self.stacked)

    # -- controls ------------------------------------------------------------------
    def _controls(self) -> QtWidgets.QWidget:
        """The settings scroll, the buttons and the status stay in sight below them.

        Scrolling settings keep the dock's least height small: on a laptop screen the dock and the
        scan view share the height, and the user decides the split. The column's width is fixed, so
        text that changes never re-lays out the plots.
        """
        w = self._settings_form()
        f = w.layout()
        row = QtWidgets.QHBoxLayout()
        self.train_btn = QtWidgets.QPushButton("Train")
        self.stop_btn = QtWidgets.QPushButton("Stop")
        self.resume_btn = QtWidgets.QPushButton("Resume")
        self.stop_btn.setEnabled(False)
        self.resume_btn.setEnabled(False)
        for b in (self.train_btn, self.stop_btn, self.resume_btn):
            row.addWidget(b)
        self.status = QtWidgets.QLabel("idle")
        self.status.setWordWrap(True)
        # fixed heights: a label that grows a line would re-lay out (and repaint) every plot
        self.status.setFixedHeight(self.status.fontMetrics().lineSpacing() * 3 + 4)
        self.plan_label = QtWidgets.QLabel("")
        self.plan_label.setWordWrap(True)
        self.plan_label.setStyleSheet("color: #333333")
        self.plan_label.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
        f.addRow(self.plan_label)
        settings = QtWidgets.QScrollArea()
        # the form takes the height its text needs (a plan of eight lines was cut at six); it scrolls, and a change
        # inside it never re-lays out the plots beside it
        settings.setWidgetResizable(True)
        settings.setWidget(w)
        settings.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        settings.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        column = QtWidgets.QWidget()
        column.setFixedWidth(w.width() + settings.verticalScrollBar().sizeHint().width())
        self.settings_scroll = settings
        lay = QtWidgets.QVBoxLayout(column)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(settings, 1)
        lay.addLayout(row)
        lay.addWidget(self.status)
        self.train_btn.clicked.connect(lambda: self.start())
        self.stop_btn.clicked.connect(self.stop)
        self.resume_btn.clicked.connect(lambda: self.start(resume=True))
        self.precision.currentTextChanged.connect(self._explain_precision)
        self.device.currentTextChanged.connect(self._explain_precision)
        self._explain_precision()
        return column

    def _settings_form(self) -> QtWidgets.QWidget:
        """The run's settings, one row each, at a fixed width."""
        w = QtWidgets.QWidget()
        w.setFixedWidth(330)
        f = QtWidgets.QFormLayout(w)
        self.source = QtWidgets.QComboBox()
        self.source.addItems(["project scans", "synthetic stream", "both mixed"])
        self.mix = QtWidgets.QDoubleSpinBox()
        self.mix.setRange(0.0, 1.0)
        self.mix.setSingleStep(0.1)
        self.mix.setValue(0.5)
        self.mix.setToolTip("share of synthetic logs when both are mixed")
        self.stage = QtWidgets.QComboBox()
        self.stage.addItems(["binary", "multiclass"])
        # the bundled model's stage: a run is then compared with it (a binary model is not comparable with the
        # four-class one, and the offer could not say whether the new model reads better)
        self.stage.setCurrentText("multiclass")
        self.stage.setToolTip("multiclass: the line styles apart (solid, dashed, dotted), as the bundled model reads "
                              "them; binary: curve or not")
        self.preset = QtWidgets.QComboBox()
        self.preset.addItems(["tiny", "demo", "full", "continue from current model"])
        self.preset.setCurrentText("demo")
        self.precision = QtWidgets.QComboBox()
        self.precision.addItems(["auto", "bf16", "fp16", "fp32"])
        self.precision_why = QtWidgets.QLabel("")
        self.precision_why.setWordWrap(True)
        self.precision_why.setStyleSheet("color: #555555")
        self.precision_why.setFixedHeight(self.precision_why.fontMetrics().lineSpacing() * 6 + 4)  # the longest note
        self.precision_why.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
        self.checkpointing = QtWidgets.QComboBox()
        self.checkpointing.addItems(["auto", "on", "off"])
        self.checkpointing.setCurrentText("off")
        self.tile = QtWidgets.QComboBox()
        self.tile.addItems(["off", "auto", "512", "1024", "2048"])
        self.tile.setEditable(True)
        self.device = QtWidgets.QComboBox()
        self.device.addItems(["auto", "cpu", "cuda"])
        self.ceiling = QtWidgets.QDoubleSpinBox()
        self.ceiling.setRange(0.01, 4096)
        self.ceiling.setDecimals(2)
        self.ceiling.setSuffix(" GiB")
        self.ceiling.setValue(self._device_ceiling_gib())
        self.steps = QtWidgets.QSpinBox()
        self.steps.setRange(1, 1_000_000)
        self.steps.setValue(200)
        self.crop = QtWidgets.QSpinBox()
        self.crop.setRange(0, 100_000)
        self.crop.setValue(1024)
        self.crop.setToolTip("random crop along depth (0: whole logs)")
        self.compile = QtWidgets.QCheckBox("torch.compile")
        self.compile.setToolTip("compile the network: the first step takes longer (about a minute on a CPU, cached "
                                "for later runs); the steps after it run fused kernels")
        self._wheel_guard = WheelNeedsFocus(w)
        for label, widget in (("data", self.source), ("synthetic share", self.mix), ("stage", self.stage),
                              ("model", self.preset), ("precision", self.precision), ("", self.precision_why),
                              ("checkpointing", self.checkpointing), ("tiling", self.tile), ("device", self.device),
                              ("memory ceiling", self.ceiling), ("steps", self.steps), ("crop along depth", self.crop),
                              ("compile", self.compile)):
            f.addRow(label, widget)
            if isinstance(widget, (QtWidgets.QComboBox, QtWidgets.QAbstractSpinBox)):
                widget.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)  # no focus from the wheel alone
                widget.installEventFilter(self._wheel_guard)
        return w

    def _device_ceiling_gib(self) -> float:
        import torch

        from core.engine.budget import device_ceiling

        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return round(device_ceiling(dev) / GIB, 2)

    def _explain_precision(self, *_):
        from core.engine.train import pick_device
        from core.model.precision import cuda_install_hint, resolve

        try:
            p = resolve(self.precision.currentText(), pick_device(self.device.currentText()))
        except (InputError, ValueError) as exc:
            self.precision_why.setText(str(exc))
            return
        text = f"→ {p.mode}: {p.reason}"
        if p.warning:
            text += f"\n⚠ {p.warning}"
        hint = cuda_install_hint() if p.device_type == "cpu" else None
        shown = text + ("\n⚠ an NVIDIA GPU is here, but PyTorch is the CPU build: training runs on the CPU "
                        "(the fix: hover)" if hint else "")
        self.precision_why.setText(shown)
        self.precision_why.setToolTip(text + (f"\n\n{hint}" if hint else ""))  # whole: a label of six lines cuts

    # -- the budget before the run ------------------------------------------------------
    def log_size(self) -> tuple[int, int]:
        """(width along depth, height across) of one training step at the current log."""
        wd, h = self.context.step_size() or (3200, 480)
        crop = self.crop.value()
        return (min(wd, crop) if crop else wd), h

    def refresh_budget(self) -> None:
        from .workers import Task

        if self.preset.currentText() not in ("tiny", "demo", "full"):
            return
        if self.plan_task is not None and self.plan_task.isRunning():
            self._replan = True  # one re-plan when the running one finishes; never drop a live thread
            return
        self._replan = False
        width, height = self.log_size()
        classes = 1 if self.stage.currentText() == "binary" else 4
        ceiling = int(self.ceiling.value() * GIB)
        self.budget.set_ceiling(self.ceiling.value())
        self.plan_task = Task(predict_in_planner, self.preset.currentText(), classes, width, height, 1, ceiling,
                              owner=self, progress=False)
        self.plan_task.succeeded.connect(self._show_prediction)
        self.plan_task.failed.connect(self.plan_label.setText)
        self.plan_task.finished.connect(self._plan_finished)
        self.plan_task.start()

    def _plan_finished(self) -> None:
        if self._replan:
            self.refresh_budget()

    def shutdown(self) -> None:
        """End the run and wait for every worker (closing the window): the run is asked to stop after its step and
        given QUIT_GRACE_S seconds, then its process is ended (its last checkpoint stays)."""
        if self.run.running:
            self.status.setText("stopping after this step…")
            self.run.end(QUIT_GRACE_S)
            self._drain()
            self.flush_instruments()
        if self.plan_task is not None and self.plan_task.isRunning():
            self.plan_task.abandon()  # a prediction nobody will read: its thread ends with the process
            self.plan_task.wait(1000)

    def _show_prediction(self, res: dict) -> None:
        self.predicted = {m: int(sum(t.values())) for m, t in res["terms"].items()}
        self.budget.set_modes({m: t for m, t in res["terms"].items() if m not in self.budget.measured}, measured=False)
        p = res["plan"]
        spill = "\n".join(f"  {m}: {d['plain']:,} px, {d['checkpointing']:,} checkpointed"
                          for m, d in p["spill_width"].items())
        self.plan_label.setText(f"plan at {p['width']} × {p['height']} under {p['ceiling'] / GIB:.2f} GiB: "
                                f"{p['summary']}.\nWidest log that fits:\n{spill}")

    def _ceiling_dragged(self, gib: float) -> None:
        self.ceiling.setValue(max(0.01, gib))
        self.refresh_budget()

    # -- running ---------------------------------------------------------------------
    def form(self) -> TrainingForm:
        """The run's settings as the form shows them."""
        return TrainingForm(
            source=self.source.currentIndex(), mix=self.mix.value(), stage=self.stage.currentText(),
            preset=self.preset.currentText(), precision=self.precision.currentText(),
            device=self.device.currentText(), steps=self.steps.value(), crop=self.crop.value(),
            checkpointing=self.checkpointing.currentText(), tile=self.tile.currentText(),
            ceiling_gib=self.ceiling.value(), compile=self.compile.isChecked())

    def start(self, resume: bool = False) -> bool:
        if self.run.running:
            return False
        try:
            cfg = self.run.config(self.form(), resume)
        except InputError as exc:
            self.status.setText(exc.one_line())
            return False
        if not resume:
            self.scale.steps, self.scale.log2, self.scale.skipped = [], [], []
            self.loss.data = {k: ([], []) for k in self.loss.data}
            self.pending["scale"] = self.scale.refresh  # cleared plots redraw in their turn
            self.pending["loss"] = self.loss.refresh
            self.warn_list.clear()
            self.budget.measured.clear()
        why_not = self.run.start(cfg, resume)
        if why_not:
            self.status.setText(f"error: {why_not}")
            return False
        self.train_btn.setEnabled(False)
        self.resume_btn.setEnabled(False)
        self.stop_btn.setEnabled(True)
        self.status.setText("resuming…" if resume else "starting…")
        self.timing = StepTiming(cfg.eval_every)
        self.last_step = None
        self.run_mode = None
        self.run_started.emit()
        self.timer.start()
        self.refresh_budget()
        return True

    def stop(self) -> None:
        if self.run.stop():
            self.status.setText("stopping after this step…")

    def _crashed(self, message: str) -> None:
        self.status.setText(f"error: {message}")
        self.warn_list.insertItem(0, f"error: {message}")

    def _finished(self) -> None:
        self.run.finish_handled = True
        self.timer.stop()
        self.run_ended.emit()
        self.train_btn.setEnabled(True)
        self.stop_btn.setEnabled(False)
        self.resume_btn.setEnabled(self.run.can_resume)

    # -- events → instruments (throttled) ------------------------------------------------
    def _drain(self) -> None:
        events = self.run.take_events()
        last_step = None
        for ev in events:
            kind = ev.type
            if kind == "memory":
                self._report_memory(ev.memory)
            elif kind == "step":
                last_step = ev
                self.timing.step(ev)
                self.scale.add(ev.step, ev.loss_scale, ev.skipped)
                if not ev.skipped:  # a skipped step's loss overflowed; the scale trace marks it
                    self.loss.add("train", ev.step, ev.loss)
                device = "cuda" if "cuda_peak" in ev.memory else "cpu"
                self._report_memory({"device": device, **{k: v for k, v in ev.memory.items()
                                                          if isinstance(v, (int, float)) and not isinstance(v, bool)}})
            elif kind == "budget":
                mode = ev.plan.get("precision")
                self.run_mode = mode
                self.scale.set_note("" if mode == "fp16" else f"no loss scaler runs in {mode}: " + (
                    "bf16 keeps fp32's exponent range" if mode == "bf16" else "fp32 needs none"))
                self.status.setText(f"{ev.plan.get('precision')} on {ev.plan.get('device')}: {ev.plan.get('reason')}")
            elif kind == "epoch":
                self.timing.validated(ev)
                self.loss.add("val", ev.step, ev.val_loss)
                self.loss.add("f1", ev.step, ev.mask_f1)
                self.loss.add("r", ev.step, ev.curve_r)
                self.pending["truth"] = lambda ev=ev: self.curves.show_evaluation(ev)
            elif kind == "warning":
                text = ev.message + (f" — {ev.advice}" if ev.advice else "")
                self.warn_list.insertItem(0, f"step {ev.step}: {text}")
            elif kind == "done":
                self.status.setText(f"{ev.status} after {ev.step} steps")
        if last_step is not None:
            g = last_step.grad
            self.pending["budget"] = lambda s=last_step: self.budget.set_terms(s.precision, s.memory, measured=True)
            self.pending["hist"] = lambda g=g: self.hist.set_hist(g.hist_log2_lo, g.hist_counts,
                                                                  g.fp16_underflow_fraction)
            self.pending["scale"] = self.scale.refresh
            self.pending["loss"] = self.loss.refresh
            self.last_step = last_step
            self._step_status()
        elif events:
            kinds = {ev.type for ev in events}
            if "epoch" in kinds and "done" not in kinds and self.last_step is not None:
                self._step_status()  # validation is over: say how long it took
            self.pending["scale"] = self.scale.refresh
            self.pending["loss"] = self.loss.refresh
        self._redraw_one()
        if self.run.ended_unhandled and not self.pending:
            self._finished()  # after the last redraws, one per tick like the rest of the run

    def _step_status(self) -> None:
        ev = self.last_step
        scale = "none" if ev.loss_scale is None else f"{ev.loss_scale:g}"
        self.status.setText(f"step {ev.step}: loss {ev.loss:.4f}, scale {scale}, activations "
                            f"{ev.memory['activations'] / 2**20:.1f} MiB; {self.timing.describe(ev)}")

    def _report_memory(self, sample: dict) -> None:
        predicted = self.predicted.get(self.run_mode) if self.run_mode else None
        self.memory_reported.emit(sample, predicted, int(self.ceiling.value() * GIB))

    ORDER = ("budget", "scale", "hist", "loss", "truth")

    def _redraw_one(self) -> None:
        """Apply the next waiting redraw in round-robin order."""
        for i in range(len(self.ORDER)):
            name = self.ORDER[(self._turn + i) % len(self.ORDER)]
            if name in self.pending:
                self.pending.pop(name)()
                self._turn = (self._turn + i + 1) % len(self.ORDER)
                return

    def flush_instruments(self) -> None:
        """Apply every waiting redraw now (the end of a run)."""
        while self.pending:
            self._redraw_one()


class StepTiming:
    """A step's own time and validation's, told apart: "53 s/step" once counted what the run spent validating.

    A step event's ``wall_time`` is its step alone; validation runs after every ``eval_every``-th step and is timed
    here, from that step's event to its evaluation's (both drained within a 50-ms tick)."""

    def __init__(self, eval_every: int | None = None):
        self.eval_every = eval_every
        self.waiting_since: float | None = None  # a step after which validation runs has arrived, its result not
        self.validation_s: float | None = None  # the last validation's seconds

    def step(self, ev) -> None:
        if self.eval_every and ev.step % self.eval_every == 0:
            self.waiting_since = time.monotonic()

    def validated(self, ev) -> None:
        if self.waiting_since is not None:
            self.validation_s = time.monotonic() - self.waiting_since
        self.waiting_since = None

    def describe(self, ev) -> str:
        text = f"{ev.wall_time:.2f} s a step ({ev.data_wait_s:.2f} s of it waiting for data)"
        if self.waiting_since is not None:
            return text + "; validating on the held-out logs…"
        if self.validation_s is not None:
            text += f"; validation {self.validation_s:.1f} s every {self.eval_every} steps"
        return text
