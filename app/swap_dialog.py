"""Swap two traced curves over a depth range: the user's fix for a crossing the tracer read wrong.

The range is picked by dragging a band on the *Digitised curves* plots (or typed); the swap itself
is ``core.digitize.trace.crossings.swap_range`` on the result's values.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets


class SwapDialog(QtWidgets.QDialog):
    """Two curve pickers and a depth range, kept in step with a draggable band on the curve plots."""

    def __init__(self, names: list[str], depth: np.ndarray, unit: str, plots: list, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Swap two curves over a depth range")
        self.setModal(False)
        form = QtWidgets.QFormLayout(self)
        self.a, self.b = QtWidgets.QComboBox(), QtWidgets.QComboBox()
        self.a.addItems(names)
        self.b.addItems(names)
        if len(names) > 1:
            self.b.setCurrentIndex(1)
        d0, d1 = float(np.nanmin(depth)), float(np.nanmax(depth))
        self.top, self.bottom = QtWidgets.QDoubleSpinBox(), QtWidgets.QDoubleSpinBox()
        for box, v in ((self.top, d0 + 0.4 * (d1 - d0)), (self.bottom, d0 + 0.6 * (d1 - d0))):
            box.setDecimals(2)
            box.setRange(-1e6, 1e6)  # a range outside the log is refused with its reason, not clamped
            box.setSuffix(f" {unit}")
            box.setValue(v)
        form.addRow("curve", self.a)
        form.addRow("with", self.b)
        form.addRow("from depth", self.top)
        form.addRow("to depth", self.bottom)
        form.addRow(QtWidgets.QLabel("drag the shaded band on the curve plots to pick the range"))
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).setText("Swap")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        # one band per plot (depth runs down the plots' y axes), all moving together
        brush = QtGui.QColor(255, 140, 0, 50)
        self.bands = []
        for p in plots:
            band = pg.LinearRegionItem(values=(self.top.value(), self.bottom.value()), orientation="horizontal",
                                       brush=brush, movable=True)
            band.sigRegionChanged.connect(self._band_moved)
            p.addItem(band)
            self.bands.append((p, band))
        self.top.valueChanged.connect(self._fields_changed)
        self.bottom.valueChanged.connect(self._fields_changed)
        self.finished.connect(self._remove_bands)

    def range(self) -> tuple[float, float]:
        return self.top.value(), self.bottom.value()

    def set_range(self, top: float, bottom: float) -> None:
        self.top.setValue(top)
        self.bottom.setValue(bottom)

    def _band_moved(self, band) -> None:
        lo, hi = band.getRegion()
        for box, v in ((self.top, lo), (self.bottom, hi)):
            box.blockSignals(True)
            box.setValue(float(v))
            box.blockSignals(False)
        self._sync(except_band=band)

    def _fields_changed(self, _v=None) -> None:
        self._sync()

    def _sync(self, except_band=None) -> None:
        lo, hi = sorted(self.range())
        for _p, band in self.bands:
            if band is not except_band:
                band.blockSignals(True)
                band.setRegion((lo, hi))
                band.blockSignals(False)

    @QtCore.Slot()
    def _remove_bands(self) -> None:
        for p, band in self.bands:
            p.removeItem(band)
        self.bands = []
