"""Click-to-train: the training dock and the live instruments.

The engine's training generator runs in a child process at a lower priority
(``app/trainer_process.py``, ``app/training_child.py``); a reader thread moves its
events into an inbox, the dock drains the inbox on a timer and redraws one instrument per tick, so
the UI never lags the run. A crash or out-of-memory in training becomes an
error in the panel, never a dead app.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PySide6 import QtCore, QtWidgets

from core.common.errors import InputError
from core.common.vocabulary import GIB

from .heap import freeze_long_lived
from .instruments import BudgetBar, CurvesVsTruth, GradHistogram, LossPlot, ScaleTrace
from .planner_process import predict_in_planner
from .trainer_process import TrainerProcess

REFRESH_MS = 50  # the timer ticks every 50 ms and redraws one instrument a tick, round robin:
# each instrument at most four times a second, and one tick never paints all of them at once
# (offscreen, one pyqtgraph plot costs ~30 ms to paint on a slow CPU)


ROW_MIN_PX = 170  # a row of instruments: below this their titles and axes are clipped


@dataclass
class TrainingContext:
    """What the dock needs from the rest of the app, asked when it needs it (the dock never reaches into the
    window): the open project's folder, the model the app reads with (a run continues from it and is compared
    with it), and the size of one training step at the scan on show."""

    project_folder: Callable[[], Path | None]
    model_path: Callable[[], Path | None]
    step_size: Callable[[], tuple[int, int] | None]  # (along depth, across) of the scan on show, None: none


class TrainingDock(QtWidgets.QDockWidget):
    model_trained = QtCore.Signal(str)  # path of the new model

    def __init__(self, context: TrainingContext, parent=None):
        super().__init__("Training", parent)
        self.setObjectName("training_dock")
        self.context = context
        self.run_out: str | None = None  # the model file of the run (a resumed run writes the same one)
        self._replan = False  # a budget re-plan asked for while one runs: done when it finishes
        self.thread: TrainerProcess | None = None
        self.buffer: list = []
        self.steps_seen = 0
        self.last_checkpoint: str | None = None
        self.current_mode: str | None = None
        self.warnings_seen: list = []
        self.done_event = None
        self.plan_task = None
        self.pending: dict = {}  # instrument -> a redraw waiting for its turn
        self._turn = 0
        self.fault: dict = {}  # engine fault injection, for tests and demonstrations
        self.scaler_growth_interval = 200
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
        for label, widget in (("data", self.source), ("synthetic share", self.mix), ("stage", self.stage),
                              ("model", self.preset), ("precision", self.precision), ("", self.precision_why),
                              ("checkpointing", self.checkpointing), ("tiling", self.tile), ("device", self.device),
                              ("memory ceiling", self.ceiling), ("steps", self.steps), ("crop along depth", self.crop),
                              ("compile", self.compile)):
            f.addRow(label, widget)
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
        self.plan_label.setFixedHeight(self.plan_label.fontMetrics().lineSpacing() * 6 + 4)
        self.plan_label.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
        f.addRow(self.plan_label)
        settings = QtWidgets.QScrollArea()
        settings.setWidget(w)
        settings.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        settings.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        column = QtWidgets.QWidget()
        column.setFixedWidth(w.width() + settings.verticalScrollBar().sizeHint().width())
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
                              parent=self)
        self.plan_task.succeeded.connect(self._show_prediction)
        self.plan_task.failed.connect(self.plan_label.setText)
        self.plan_task.finished.connect(self._plan_finished)
        self.plan_task.start()

    def _plan_finished(self) -> None:
        if self._replan:
            self.refresh_budget()

    def shutdown(self) -> None:
        """Stop the run and wait for every worker (closing the window)."""
        if self.thread is not None and self.thread.isRunning():
            self.stop()
            self.thread.wait(60000)
            self._drain()
            self.flush_instruments()
        if self.plan_task is not None and self.plan_task.isRunning():
            self.plan_task.wait(60000)

    def _show_prediction(self, res: dict) -> None:
        self.budget.set_modes({m: t for m, t in res["terms"].items() if m not in self.budget.measured}, measured=False)
        p = res["plan"]
        spill = ", ".join(f"{m} {d['plain']:,} px ({d['checkpointing']:,} with checkpointing)"
                          for m, d in p["spill_width"].items())
        self.plan_label.setText(f"plan at {p['width']} × {p['height']} under {p['ceiling'] / GIB:.2f} GiB: "
                                f"{p['summary']}.\nWidest log that fits: {spill}")

    def _ceiling_dragged(self, gib: float) -> None:
        self.ceiling.setValue(max(0.01, gib))
        self.refresh_budget()

    # -- running ---------------------------------------------------------------------
    def _config(self, resume: bool):
        from core.engine.train import TrainConfig

        src = self.source.currentIndex()
        folder = self.context.project_folder()
        project = str(folder) if (folder is not None and src in (0, 2)) else None
        if src in (0, 2) and project is None:
            raise InputError(None, "no project is open: open a project folder or train on the synthetic stream")
        out_dir = Path(project) / "models" if project else _user_models_dir()
        out_dir.mkdir(parents=True, exist_ok=True)
        out = self.run_out if resume else None
        if out is None:
            out = str(out_dir / f"model-{time.strftime('%Y%m%d-%H%M%S')}.safetensors")
        self.run_out = out
        preset = self.preset.currentText()
        init = None
        current = self.context.model_path()
        if preset == "continue from current model":
            if not current:
                raise InputError(None, "no current model to continue from")
            init, preset = str(current), "demo"
        tile = self.tile.currentText().strip()
        return TrainConfig(
            data=project, synthetic=src in (1, 2), mix=self.mix.value(), stage=self.stage.currentText(),
            preset=preset, init_model=init, precision=self.precision.currentText(), device=self.device.currentText(),
            steps=self.steps.value(), crop_along=self.crop.value() or None, checkpointing=self.checkpointing.currentText(),
            tile=tile, ceiling_gib=self.ceiling.value(), out=out,
            resume=self.last_checkpoint if resume else None, eval_every=max(1, self.steps.value() // 4),
            checkpoint_every=max(1, min(50, self.steps.value() // 4)), fault=dict(self.fault),
            scaler_growth_interval=self.scaler_growth_interval,
            compare_model=str(current) if current else None,
            # the training child is a daemonic process (it dies with the app), and such a process cannot start
            # DataLoader workers: its batches are made in it, and the step's data wait shows in the status line
            workers=0,
            compile=self.compile.isChecked(),
        )

    def start(self, resume: bool = False) -> bool:
        if self.thread is not None and self.thread.isRunning():
            return False
        try:
            cfg = self._config(resume)
        except InputError as exc:
            self.status.setText(exc.one_line())
            return False
        if not resume:
            self.steps_seen = 0
            self.scale.steps, self.scale.log2, self.scale.skipped = [], [], []
            self.loss.data = {k: ([], []) for k in self.loss.data}
            self.pending["scale"] = self.scale.refresh  # cleared plots redraw in their turn
            self.pending["loss"] = self.loss.refresh
            self.warn_list.clear()
            self.budget.measured.clear()
        self.done_event = None
        freeze_long_lived()  # whatever the budget prediction loaded (PyTorch) lives as long as the app
        self.thread = TrainerProcess(cfg, self)
        self.thread.crashed.connect(self._crashed)
        self._finish_handled = False
        self.train_btn.setEnabled(False)
        self.resume_btn.setEnabled(False)
        self.stop_btn.setEnabled(True)
        self.status.setText("resuming…" if resume else "starting…")
        try:
            self.thread.start()
        except (OSError, RuntimeError) as exc:
            self.status.setText(f"error: cannot start the training process: {exc}")
            self.thread = None
            self.train_btn.setEnabled(True)
            self.stop_btn.setEnabled(False)
            return False
        self.timer.start()
        self.refresh_budget()
        return True

    def stop(self) -> None:
        if self.thread is not None:
            self.thread.stop_flag.set()
            self.status.setText("stopping after this step…")

    def _crashed(self, message: str) -> None:
        self.status.setText(f"error: {message}")
        self.warn_list.insertItem(0, f"error: {message}")

    def _finished(self) -> None:
        self._finish_handled = True
        self.timer.stop()
        self.train_btn.setEnabled(True)
        self.stop_btn.setEnabled(False)
        self.resume_btn.setEnabled(self.last_checkpoint is not None and
                                   (self.done_event is None or self.done_event.status != "finished"))

    # -- events → instruments (throttled) ------------------------------------------------
    def _drain(self) -> None:
        if self.thread is not None:
            self.buffer.extend(self.thread.poll())
        events, self.buffer = self.buffer, []
        last_step = None
        for ev in events:
            kind = ev.type
            if kind == "step":
                self.steps_seen += 1
                last_step = ev
                self.current_mode = ev.precision
                self.scale.add(ev.step, ev.loss_scale, ev.skipped)
                if not ev.skipped:  # a skipped step's loss overflowed; the scale trace marks it
                    self.loss.add("train", ev.step, ev.loss)
            elif kind == "budget":
                mode = ev.plan.get("precision")
                self.current_mode = mode
                if mode != "fp16":
                    self.scale.steps, self.scale.log2, self.scale.skipped = [], [], []
                    self.scale.note.setText(f"no loss scaler runs in {mode}: " + (
                        "bf16 keeps fp32's exponent range" if mode == "bf16" else "fp32 needs none"))
                else:
                    self.scale.note.setText("")
                self.status.setText(f"{ev.plan.get('precision')} on {ev.plan.get('device')}: {ev.plan.get('reason')}")
            elif kind == "epoch":
                self.loss.add("val", ev.step, ev.val_loss)
                self.loss.add("f1", ev.step, ev.mask_f1)
                self.loss.add("r", ev.step, ev.curve_r)
                self.pending["truth"] = lambda ev=ev: self._show_truth(ev)
            elif kind == "warning":
                self.warnings_seen.append(ev)
                text = ev.message + (f" — {ev.advice}" if ev.advice else "")
                self.warn_list.insertItem(0, f"step {ev.step}: {text}")
            elif kind == "error":
                self._crashed(ev.message)
            elif kind == "done":
                self.done_event = ev
                self.last_checkpoint = ev.checkpoint_path or self.last_checkpoint
                self.status.setText(f"{ev.status} after {ev.step} steps")
                if ev.model_path and ev.status in ("finished", "stopped"):
                    self.model_trained.emit(ev.model_path)
        if last_step is not None:
            m, g = last_step.memory, last_step.grad
            self.pending["budget"] = lambda s=last_step: self.budget.set_terms(s.precision, s.memory, measured=True)
            self.pending["hist"] = lambda g=g: self.hist.set_hist(g.hist_log2_lo, g.hist_counts,
                                                                  g.fp16_underflow_fraction)
            self.pending["scale"] = self.scale.refresh
            self.pending["loss"] = self.loss.refresh
            scale = "none" if last_step.loss_scale is None else f"{last_step.loss_scale:g}"
            self.status.setText(f"step {last_step.step}: loss {last_step.loss:.4f}, scale {scale}, "
                                f"activations {m['activations'] / 2**20:.1f} MiB, {last_step.wall_time:.2f} s/step "
                                f"(waiting for data {last_step.data_wait_s:.2f} s)")
        elif events:
            self.pending["scale"] = self.scale.refresh
            self.pending["loss"] = self.loss.refresh
        self._redraw_one()
        if self.thread is not None and self.thread.isFinished() and not self._finish_handled and not self.pending:
            self._finished()  # after the last redraws, one per tick like the rest of the run

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

    def _show_truth(self, ev) -> None:
        for entry in ev.per_log:
            for c in entry.get("curves", []):
                self.curves.show_curve(f"{entry['name']} {c['mnemonic']}", c["depth"], c["pred"], c["truth"], c["r"])
                return


def _user_models_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("welltrace")) / "models"
