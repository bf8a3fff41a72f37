"""The scan view: the scan, its class-mask overlay, traces and calibration handles.

pyqtgraph items throughout: the scan is one row-major ``ImageItem`` with
explicit levels; the mask overlay is split into tiles so that a brush stroke
re-renders only the tiles it touched, never the whole 8-megapixel image.
Coordinates reported out of this view are the scan's own pixel frame
(x = column, y = row).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

TILE = 512
CLASS_RGB = {1: (230, 40, 40), 2: (30, 110, 230), 3: (20, 170, 60)}


class _PaintViewBox(pg.ViewBox):
    """A ViewBox whose left-drag paints when a painting tool is active (pan otherwise)."""

    def __init__(self, view: "ScanView"):
        super().__init__(invertY=True, lockAspect=True)
        self.view = view

    def mouseDragEvent(self, ev, axis=None):
        if self.view.tool in ("brush", "eraser") and ev.button() == QtCore.Qt.MouseButton.LeftButton:
            ev.accept()
            p = self.view.image_item.mapFromScene(ev.scenePos())  # scan pixels, whatever the rotation
            if ev.isStart():
                self.view.stroke_started.emit(p.y(), p.x())
            self.view.stroke_moved.emit(p.y(), p.x())
            if ev.isFinish():
                self.view.stroke_finished.emit()
            return
        super().mouseDragEvent(ev, axis)

    def mouseClickEvent(self, ev):
        if ev.button() == QtCore.Qt.MouseButton.LeftButton and self.view.tool != "pan":
            ev.accept()
            p = self.view.image_item.mapFromScene(ev.scenePos())
            self.view.clicked.emit(p.y(), p.x())
            return
        super().mouseClickEvent(ev)


class ScanView(pg.GraphicsLayoutWidget):
    stroke_started = QtCore.Signal(float, float)  # row, col
    stroke_moved = QtCore.Signal(float, float)
    stroke_finished = QtCore.Signal()
    clicked = QtCore.Signal(float, float)
    cursor_moved = QtCore.Signal(float, float)
    pick_moved = QtCore.Signal(int, float)  # pick index, new pixel along depth
    track_moved = QtCore.Signal(int, float, float)  # curve index, new track ends

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackground("w")
        self.vb = _PaintViewBox(self)
        self.plot = self.addPlot(viewBox=self.vb)
        self.plot.hideAxis("bottom")
        self.plot.hideAxis("left")
        self.tool = "pan"
        self.image_item = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image_item)
        self.tiles: dict[tuple[int, int], pg.ImageItem] = {}
        self.mask: np.ndarray | None = None
        self.opacity = 0.55
        self.mask_visible = True
        self.trace_items: list[pg.PlotDataItem] = []
        self.pick_lines: list[pg.InfiniteLine] = []
        self.track_regions: list[pg.LinearRegionItem] = []
        self.depth_axis = "y"
        self.rotated = False
        self.scene().sigMouseMoved.connect(self._mouse_moved)

    # -- image and mask ------------------------------------------------------
    def set_scan(self, image: np.ndarray) -> None:
        self.image_item.setImage(image, levels=(0, 255), autoLevels=False)
        self.image_item.setRect(QtCore.QRectF(0, 0, image.shape[1], image.shape[0]))
        self.clear_mask()
        self.vb.autoRange(padding=0.01)

    def clear_mask(self) -> None:
        for item in self.tiles.values():
            self.plot.removeItem(item)
        self.tiles.clear()
        self.mask = None

    def set_mask(self, mask: np.ndarray | None) -> None:
        self.clear_mask()
        self.mask = mask
        if mask is not None:
            self.update_mask_region((0, mask.shape[0], 0, mask.shape[1]))

    def _lut(self) -> np.ndarray:
        lut = np.zeros((256, 4), np.uint8)
        a = int(round(255 * self.opacity)) if self.mask_visible else 0
        for k, rgb in CLASS_RGB.items():
            lut[k] = (*rgb, a)
        return lut

    def update_mask_region(self, rect) -> None:
        """Re-render only the overlay tiles that ``rect`` (row0, row1, col0, col1) touches."""
        if self.mask is None or rect is None:
            return
        r0, r1, c0, c1 = rect
        lut = self._lut()
        h, w = self.mask.shape
        for ti in range(max(0, r0) // TILE, (min(h, r1) - 1) // TILE + 1):
            for tj in range(max(0, c0) // TILE, (min(w, c1) - 1) // TILE + 1):
                sub = self.mask[ti * TILE:(ti + 1) * TILE, tj * TILE:(tj + 1) * TILE]
                item = self.tiles.get((ti, tj))
                if item is None:
                    if not sub.any():
                        continue
                    item = pg.ImageItem(axisOrder="row-major")
                    item.setZValue(5)
                    self._add(item)
                    self.tiles[(ti, tj)] = item
                item.setImage(lut[sub], autoLevels=False, levels=None)
                item.setRect(QtCore.QRectF(tj * TILE, ti * TILE, sub.shape[1], sub.shape[0]))

    def set_opacity(self, opacity: float) -> None:
        self.opacity = float(opacity)
        if self.mask is not None:
            self.update_mask_region((0, self.mask.shape[0], 0, self.mask.shape[1]))

    def set_mask_visible(self, on: bool) -> None:
        self.mask_visible = bool(on)
        self.set_opacity(self.opacity)

    # -- traces and calibration handles ----------------------------------------
    def set_traces(self, traces: list[tuple[np.ndarray, np.ndarray, str]]) -> None:
        """(x, y, colour) per curve, in scan pixels."""
        for it in self.trace_items:
            self.plot.removeItem(it)
        self.trace_items = []
        for x, y, color in traces:
            item = pg.PlotDataItem(x, y, pen=pg.mkPen(color, width=2), connect="finite")
            item.setZValue(10)
            self._add(item)
            self.trace_items.append(item)

    def set_grid_lines(self, segments: np.ndarray | None) -> None:
        """The detected grid as line segments ((n, 2, 2): [[x0, y0], [x1, y1]] in scan pixels), or None."""
        if getattr(self, "grid_item", None) is not None:
            self.plot.removeItem(self.grid_item)
            self.grid_item = None
        if segments is None or len(segments) == 0:
            return
        pts = np.asarray(segments, np.float64).reshape(-1, 2)
        item = pg.PlotDataItem(pts[:, 0], pts[:, 1], connect="pairs",
                               pen=pg.mkPen((0, 170, 200, 160), width=1, style=QtCore.Qt.PenStyle.DashLine))
        item.setZValue(8)
        self._add(item)
        self.grid_item = item

    def set_calibration_handles(self, depth_axis: str, picks: list[tuple[float, float]],
                                tracks: list[tuple[float, float, str]]) -> None:
        for it in self.pick_lines + self.track_regions:
            self.plot.removeItem(it)
        self.pick_lines, self.track_regions = [], []
        self.depth_axis = depth_axis
        pick_angle = 0 if depth_axis == "y" else 90  # a pick is a line across the tracks
        for i, (px, depth) in enumerate(picks):
            line = pg.InfiniteLine(pos=px, angle=pick_angle, movable=True, pen=pg.mkPen("#ff8c00", width=2),
                                   label=f"{depth:g}", labelOpts={"position": 0.05, "color": "#ff8c00",
                                                                  "fill": (255, 255, 255, 200)})
            line.setZValue(20)
            line.sigPositionChangeFinished.connect(lambda ln, i=i: self.pick_moved.emit(i, float(ln.value())))
            self._add(line)
            self.pick_lines.append(line)
        orientation = "vertical" if depth_axis == "y" else "horizontal"
        for i, (a, b, color) in enumerate(tracks):
            c = QtGui.QColor(color)
            c.setAlpha(18)
            region = pg.LinearRegionItem(values=(a, b), orientation=orientation, brush=c, movable=True)
            region.setZValue(2)
            region.sigRegionChangeFinished.connect(
                lambda r, i=i: self.track_moved.emit(i, *[float(v) for v in r.getRegion()]))
            self._add(region)
            self.track_regions.append(region)

    # -- view ------------------------------------------------------------------
    def set_tool(self, tool: str) -> None:
        self.tool = tool
        cursor = QtCore.Qt.CursorShape.CrossCursor if tool != "pan" else QtCore.Qt.CursorShape.OpenHandCursor
        self.setCursor(cursor)

    def _transform(self) -> QtGui.QTransform:
        tr = QtGui.QTransform()
        if self.rotated:
            tr.rotate(-90)
        return tr

    def _add(self, item) -> None:
        item.setTransform(self._transform())
        self.plot.addItem(item)

    def set_rotated(self, rotated: bool) -> None:
        """Show the log turned by 90° (depth across the screen) or as scanned."""
        self.rotated = bool(rotated)
        tr = self._transform()
        for item in self.plot.items:
            item.setTransform(tr)
        self.vb.autoRange(padding=0.01)

    def zoom_to(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.vb.setRange(QtCore.QRectF(x0, y0, x1 - x0, y1 - y0), padding=0)

    def _mouse_moved(self, pos) -> None:
        if self.plot.sceneBoundingRect().contains(pos):
            p = self.image_item.mapFromScene(pos)
            self.cursor_moved.emit(p.y(), p.x())
