"""*Adapt model to this project*: the label → adapt → digitise loop as one dialog.

Runs ``core.engine.adapt`` in a child process (as training does: the desktop never shares a GIL or a crash
with the engine), shows the time left against the budget, the held-out scores before and after, and
offers the next step: digitise every calibrated scan that has no labels with the adapted model.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6 import QtCore, QtWidgets

from .trainer_process import TrainerProcess
from .training_child import adapt_in_child


class AdaptDialog(QtWidgets.QDialog):
    adapted = QtCore.Signal(object)  # the AdaptReport of a run that wrote a model (its ``out``)
    failed = QtCore.Signal(str)

    def __init__(self, project: Path, base_model: Path, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Adapt model to this project")
        self.setModal(False)
        self.project, self.base_model = Path(project), Path(base_model)
        self.proc: TrainerProcess | None = None
        self.report = None
        self.out: Path | None = None
        form = QtWidgets.QFormLayout(self)
        form.addRow("base model", QtWidgets.QLabel(self.base_model.name))
        self.minutes = QtWidgets.QDoubleSpinBox()
        self.minutes.setRange(0.1, 240.0)
        self.minutes.setDecimals(1)
        self.minutes.setValue(10.0)
        self.minutes.setSuffix(" min")
        form.addRow("time budget", self.minutes)
        note = QtWidgets.QLabel("a third of the labelled scans (at least one) is held out to measure on; "
                                "the best model so far is kept")
        note.setWordWrap(True)
        form.addRow(note)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("ready")
        form.addRow(self.progress)
        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        form.addRow(self.status)
        self.table = QtWidgets.QTableWidget(2, 3)
        self.table.setHorizontalHeaderLabels(["mask F1", "curve r", "RMSE % of range"])
        self.table.setVerticalHeaderLabels(["before", "after"])
        self.table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Stretch)
        self.table.setMinimumHeight(90)
        form.addRow(self.table)
        buttons = QtWidgets.QHBoxLayout()
        self.start_btn = QtWidgets.QPushButton("Adapt")
        self.stop_btn = QtWidgets.QPushButton("Stop")
        self.stop_btn.setEnabled(False)
        self.digitize_btn = QtWidgets.QPushButton("Digitise all unlabelled scans")
        self.digitize_btn.setEnabled(False)
        for b in (self.start_btn, self.stop_btn, self.digitize_btn):
            buttons.addWidget(b)
        form.addRow(buttons)
        self.start_btn.clicked.connect(self.start)
        self.stop_btn.clicked.connect(self.stop)
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(250)
        self.timer.timeout.connect(self._poll)
        self.t0 = 0.0
        self.setMinimumWidth(520)

    def running(self) -> bool:
        return self.proc is not None and not self.proc.isFinished()

    def start(self) -> None:
        from core.engine.adapt import AdaptConfig

        models = self.project / "models"
        models.mkdir(exist_ok=True)
        self.out = models / f"adapted-{time.strftime('%Y%m%d-%H%M%S')}.safetensors"
        cfg = AdaptConfig(str(self.project), str(self.base_model), str(self.out), minutes=self.minutes.value())
        self.report = None
        self.proc = TrainerProcess(cfg, self, target=adapt_in_child)
        self.proc.crashed.connect(self._failed)
        self.proc.start()
        self.t0 = time.monotonic()
        self.start_btn.setEnabled(False)
        self.stop_btn.setEnabled(True)
        self.digitize_btn.setEnabled(False)
        self.status.setText("starting (loading the engine, scoring the base model on the held-out scans)…")
        self.timer.start()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop_flag.set()
            self.status.setText("stopping: the best model so far is kept…")

    def _failed(self, message: str) -> None:
        self.status.setText(message)
        self.failed.emit(message)

    def _poll(self) -> None:
        from core.engine.adapt import AdaptReport

        budget = 60.0 * self.minutes.value()
        elapsed = time.monotonic() - self.t0
        self.progress.setValue(int(1000 * min(1.0, elapsed / budget)))
        self.progress.setFormat(f"{max(0.0, budget - elapsed) / 60:.1f} min left")
        for ev in self.proc.poll():
            if isinstance(ev, AdaptReport):
                self._show_report(ev)
            elif getattr(ev, "type", "") == "epoch":
                r = "—" if ev.curve_r is None else f"{ev.curve_r:.3f}"
                self.status.setText(f"step {ev.step}: held-out mask F1 {ev.mask_f1:.3f}, curve r {r}")
        if self.proc.isFinished():
            self.timer.stop()
            self.start_btn.setEnabled(True)
            self.stop_btn.setEnabled(False)
            self.progress.setValue(1000)
            self.progress.setFormat("done" if self.report is not None else "ended")

    def _show_report(self, rep) -> None:
        self.report = rep
        for row, scores in enumerate((rep.before, rep.after or {})):
            for col, key in enumerate(("mask_f1", "curve_r", "curve_rmse_pct")):
                v = scores.get(key)
                self.table.setItem(row, col, QtWidgets.QTableWidgetItem("—" if v is None else f"{v:.3f}"))
        held = ", ".join(rep.held_out_names)
        if rep.out:
            best = (f"best at step {rep.best_step}" if rep.best_step else
                    "no step beat the base model on the held-out scans: its weights were kept")
            self.status.setText(f"adapted on {len(rep.train_names)} scan(s), measured on {held}; "
                                f"{rep.steps} steps in {rep.seconds:.0f} s; model {Path(rep.out).name} "
                                f"({best}) is offered to you beside the current model")
            self.digitize_btn.setEnabled(True)
            self.adapted.emit(rep)
        else:
            self.status.setText("no evaluation finished within the budget: no model written; give it more time")
