"""The live memory gauge in the status bar: CUDA allocated / reserved / peak against the card,
or this process's resident memory against the machine's; a click opens its history."""

from __future__ import annotations

import collections
import time

import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from core.common.vocabulary import GIB
from core.engine.memory import process_memory

from .plot_axes import plain_axes


def read_memory() -> dict:
    import torch

    if torch.cuda.is_available():
        total = torch.cuda.get_device_properties(0).total_memory
        return {"kind": "cuda", "used": torch.cuda.memory_allocated(0), "reserved": torch.cuda.memory_reserved(0),
                "peak": torch.cuda.max_memory_allocated(0), "total": total}
    m = process_memory()
    return {"kind": "cpu", "used": m["rss"], "peak": m["rss_peak"], "total": m["total"]}


class MemoryGauge(QtWidgets.QPushButton):
    def __init__(self, parent=None, interval_ms: int = 1000):
        super().__init__(parent)
        self.setFlat(True)
        self.setToolTip("memory in use; click for its history")
        self.history = collections.deque(maxlen=600)
        self.t0 = time.monotonic()
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.sample)
        self.timer.start()
        self.clicked.connect(self.show_history)
        self.dialog = None
        self.sample()

    def sample(self) -> None:
        m = read_memory()
        self.history.append((time.monotonic() - self.t0, m["used"] / GIB))
        if m["kind"] == "cuda":
            text = (f"GPU {m['used'] / GIB:.2f} / reserved {m['reserved'] / GIB:.2f} / peak {m['peak'] / GIB:.2f}"
                    f" of {m['total'] / GIB:.0f} GiB")
        else:
            text = f"RAM {m['used'] / GIB:.2f} GiB (peak {m['peak'] / GIB:.2f}) of {m['total'] / GIB:.0f} GiB"
        self.setText(text)
        if self.dialog is not None and self.dialog.isVisible():
            self._curve.setData(*zip(*self.history))

    def show_history(self) -> None:
        if self.dialog is None:
            self.dialog = QtWidgets.QDialog(self.window())
            self.dialog.setWindowTitle("Memory history")
            lay = QtWidgets.QVBoxLayout(self.dialog)
            plot = pg.PlotWidget(background="w")
            plain_axes(plot)
            plot.setLabel("left", "in use", units="GiB")
            plot.setLabel("bottom", "time", units="s")
            self._curve = plot.plot([], [], pen=pg.mkPen("#4c72b0", width=2))
            lay.addWidget(plot)
            self.dialog.resize(520, 300)
        self._curve.setData(*zip(*self.history))
        self.dialog.show()
