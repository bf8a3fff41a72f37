"""The live memory gauge in the status bar: the training process's memory while a run goes on, from the child's
own reports (resident on a CPU, with its data workers'; CUDA allocated / reserved / peak on a GPU), against the
run's memory ceiling and the budget's prediction; the app's own resident memory otherwise. A click opens its
history.

The app never trains in its own process (``app/trainer_process.py``): a gauge that read the app's process sat at
0.80 GiB for 23 minutes while the training child used 1.13 GiB and its data worker 0.44 GiB, and on a GPU it
would have read the app's CUDA memory, zero while the child trains. So the training's figures come from the
child (``core.engine.memory.training_memory``, sent as memory events and with every step), through the dock.
"""

from __future__ import annotations

import collections
import time

import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from core.common.vocabulary import GIB
from core.engine.memory import process_memory

from .plot_axes import plain_axes

STALE_S = 10.0  # a training report older than this (the run ended, the child died) no longer stands for it
NEAR_CEILING = 0.9  # the gauge turns red at this share of the ceiling


def app_memory() -> dict:
    """This process's resident memory and the machine's (the app's own, when nothing trains)."""
    m = process_memory()
    return {"used": m["rss"], "peak": m["rss_peak"], "total": m["total"]}


class TrainingMemory:
    """What the training process last reported, and its peaks over the run."""

    def __init__(self):
        self.sample: dict = {}
        self.peak = 0  # the run's peak: resident (with workers) on a CPU, CUDA allocated on a GPU
        self.predicted: int | None = None  # the budget's prediction of one step of the run's precision
        self.ceiling: int | None = None  # the run's memory ceiling
        self.at = 0.0  # time.monotonic() of the last report

    @property
    def on_gpu(self) -> bool:
        return self.sample.get("device") == "cuda" or "cuda_allocated" in self.sample

    def update(self, sample: dict, predicted: int | None, ceiling: int | None) -> None:
        self.sample = {**self.sample, **sample}
        self.predicted, self.ceiling = predicted, ceiling
        if self.on_gpu:
            self.peak = max(self.peak, int(sample.get("cuda_peak", 0)))
        else:
            # the resident peak is the step's (the engine resets it per step), the workers' their size now
            self.peak = max(self.peak, int(sample.get("rss_peak", sample.get("rss", 0)))
                            + int(self.sample.get("workers_rss", 0)))
        self.at = time.monotonic()

    @property
    def used(self) -> int:
        """The training's memory now: CUDA allocated on a GPU, the process and its workers resident on a CPU."""
        s = self.sample
        if self.on_gpu:
            return int(s.get("cuda_allocated", 0))
        return int(s.get("rss", 0)) + int(s.get("workers_rss", 0))

    @property
    def limit(self) -> int:
        """The ceiling the run plans under, or the device's memory where none was given."""
        return int(self.ceiling or self.sample.get("cuda_total" if self.on_gpu else "total", 0))

    def text(self) -> str:
        s = self.sample
        pred = f" · predicted {self.predicted / GIB:.2f}" if self.predicted else ""
        if self.on_gpu:
            return (f"training GPU {s.get('cuda_allocated', 0) / GIB:.2f} / reserved "
                    f"{s.get('cuda_reserved', 0) / GIB:.2f} / peak {self.peak / GIB:.2f}{pred} of "
                    f"{self.limit / GIB:.1f} GiB")
        return f"training RAM {self.used / GIB:.2f} GiB (peak {self.peak / GIB:.2f}){pred} of {self.limit / GIB:.1f} GiB"

    def tooltip(self) -> str:
        s = self.sample
        lines = ["The training process's memory, as it reports it (click for its history):"]
        if self.on_gpu:
            lines += [f"  CUDA allocated {s.get('cuda_allocated', 0) / GIB:.2f} GiB, reserved by the allocator "
                      f"{s.get('cuda_reserved', 0) / GIB:.2f} GiB, peak of the run {self.peak / GIB:.2f} GiB",
                      f"  of the card's {s.get('cuda_total', 0) / GIB:.1f} GiB",
                      f"  host side: the training process (pid {s.get('pid', '?')}) resident {s.get('rss', 0) / GIB:.2f} GiB"]
        else:
            lines += [f"  the training process (pid {s.get('pid', '?')}) resident {s.get('rss', 0) / GIB:.2f} GiB",
                      f"  its data workers ({s.get('workers', 0)}) {s.get('workers_rss', 0) / GIB:.2f} GiB",
                      f"  peak of the run {self.peak / GIB:.2f} GiB, of the machine's {s.get('total', 0) / GIB:.1f} GiB"]
        if self.ceiling:
            lines.append(f"  the run's memory ceiling {self.ceiling / GIB:.2f} GiB")
        if self.predicted:
            lines.append(f"  the budget's prediction of one step {self.predicted / GIB:.2f} GiB (parameters, "
                         "gradients, optimizer, activations: the interpreter and libraries come on top on a CPU)")
        return "\n".join(lines)


class MemoryGauge(QtWidgets.QPushButton):
    def __init__(self, parent=None, interval_ms: int = 1000):
        super().__init__(parent)
        self.setFlat(True)
        self.training = TrainingMemory()
        self.training_live = False  # a run is going on: its reports are what the gauge shows
        self.history = collections.deque(maxlen=1800)  # (seconds, app GiB, training GiB or None)
        self.t0 = time.monotonic()
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.sample)
        self.timer.start()
        self.clicked.connect(self.show_history)
        self.dialog = None
        self.sample()

    # -- what the training child reports (through the training dock) -------------------------------------------
    def training_started(self) -> None:
        self.training = TrainingMemory()
        self.training_live = True

    def training_report(self, sample: dict, predicted: int | None = None, ceiling: int | None = None) -> None:
        """A report of the training process's memory (a memory event's, or a step's measured memory)."""
        self.training_live = True
        self.training.update(sample, predicted, ceiling)
        self._show()

    def training_ended(self) -> None:
        self.training_live = False
        self._show()

    @property
    def showing_training(self) -> bool:
        return self.training_live and time.monotonic() - self.training.at < STALE_S and bool(self.training.sample)

    # -- the gauge -----------------------------------------------------------------------------------------------
    def sample(self) -> None:
        own = app_memory()
        self.own = own
        training = self.training.used / GIB if self.showing_training else None
        self.history.append((time.monotonic() - self.t0, own["used"] / GIB, training))
        self._show()

    def _show(self) -> None:
        if self.showing_training:
            t = self.training
            self.setText(t.text())
            self.setToolTip(t.tooltip())
            near = t.limit and max(t.used, t.peak) >= NEAR_CEILING * t.limit
            self.setStyleSheet("color: #b00020" if near else "")
        else:
            own = self.own
            self.setText(f"RAM {own['used'] / GIB:.2f} GiB (peak {own['peak'] / GIB:.2f}) of {own['total'] / GIB:.0f} GiB")
            self.setToolTip("the app's own memory (a training run shows its own here while it runs); click for its "
                            "history")
            self.setStyleSheet("")
        if self.dialog is not None and self.dialog.isVisible():
            self._plot()

    def show_history(self) -> None:
        if self.dialog is None:
            self.dialog = QtWidgets.QDialog(self.window())
            self.dialog.setWindowTitle("Memory history")
            lay = QtWidgets.QVBoxLayout(self.dialog)
            plot = pg.PlotWidget(background="w")
            plain_axes(plot)
            plot.setLabel("left", "in use", units="GiB")
            plot.setLabel("bottom", "time", units="s")
            plot.addLegend(offset=(10, 10))
            self._app_curve = plot.plot([], [], pen=pg.mkPen("#4c72b0", width=2), name="the app")
            self._train_curve = plot.plot([], [], pen=pg.mkPen("#dd8452", width=2), name="training",
                                          connect="finite")
            self._ceiling = pg.InfiniteLine(angle=0, pen=pg.mkPen("#b00020", width=1.5), label="ceiling",
                                            labelOpts={"position": 0.05, "color": "#b00020"})
            self._predicted = pg.InfiniteLine(angle=0, pen=pg.mkPen("#777777", style=QtCore.Qt.PenStyle.DashLine),
                                              label="predicted step", labelOpts={"position": 0.3, "color": "#555555"})
            for line in (self._ceiling, self._predicted):
                line.setVisible(False)
                plot.addItem(line, ignoreBounds=True)
            lay.addWidget(plot)
            self.dialog.resize(560, 320)
        self._plot()
        self.dialog.show()

    def _plot(self) -> None:
        if not self.history:
            return
        t, own, training = zip(*self.history)
        self._app_curve.setData(t, own)
        self._train_curve.setData(t, [float("nan") if v is None else v for v in training])
        for line, value in ((self._ceiling, self.training.limit), (self._predicted, self.training.predicted)):
            line.setVisible(bool(value) and self.training.sample != {})
            if value:
                line.setValue(value / GIB)
