"""The overview strip: the whole log along depth beside the scan view, the part on screen framed.

A 17,864-row log fitted to its tracks shows a few hundred feet at a time;
the strip shows all of it (the coarsest display level, depth running down)
with the window the scan view shows, and a click or drag moves the view there.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets


class OverviewStrip(pg.GraphicsLayoutWidget):
    moved = QtCore.Signal(float)  # the fraction along depth the view should centre on

    WIDTH = 56

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackground("w")
        self.setFixedWidth(self.WIDTH)
        self.setToolTip("the whole log: click or drag to move the scan view along depth")
        self.ci.layout.setContentsMargins(0, 0, 0, 0)
        self.vb = self.addViewBox(invertY=True, enableMouse=False)
        self.vb.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.vb.addItem(self.image)
        self.frame = QtWidgets.QGraphicsRectItem()
        self.frame.setPen(pg.mkPen("#ff8c00", width=2, cosmetic=True))
        self.frame.setBrush(QtGui.QBrush(QtGui.QColor(255, 140, 0, 40)))
        self.frame.setZValue(10)
        self.vb.addItem(self.frame)
        self.length = 0  # rows of the strip's image (depth runs down them)

    def set_log(self, small: np.ndarray | None, depth_axis: str) -> None:
        """Show a small level of the scan with depth running down (``None`` clears)."""
        if small is None:
            self.image.clear()
            self.frame.setRect(QtCore.QRectF())
            self.length = 0
            return
        img = np.ascontiguousarray(np.swapaxes(small, 0, 1)) if depth_axis == "x" else small
        self.image.setImage(img, levels=(0, 255), autoLevels=False)
        h, w = img.shape[:2]
        self.length = h
        self.vb.setRange(QtCore.QRectF(0, 0, w, h), padding=0)

    def show_window(self, start: float, stop: float) -> None:
        """Frame the part of the log the scan view shows (fractions along depth)."""
        if not self.length:
            return
        w = self.image.width() or 1
        a, b = sorted((float(np.clip(start, 0, 1)), float(np.clip(stop, 0, 1))))
        self.frame.setRect(QtCore.QRectF(0, a * self.length, w, max(1.0, (b - a) * self.length)))

    def _to_fraction(self, pos) -> float:
        p = self.vb.mapSceneToView(self.mapToScene(pos))
        return float(np.clip(p.y() / max(1, self.length), 0.0, 1.0))

    def mousePressEvent(self, ev):
        if self.length and ev.button() == QtCore.Qt.MouseButton.LeftButton:
            self.moved.emit(self._to_fraction(ev.position().toPoint()))
            ev.accept()
            return
        super().mousePressEvent(ev)

    def mouseMoveEvent(self, ev):
        if self.length and ev.buttons() & QtCore.Qt.MouseButton.LeftButton:
            self.moved.emit(self._to_fraction(ev.position().toPoint()))
            ev.accept()
            return
        super().mouseMoveEvent(ev)
