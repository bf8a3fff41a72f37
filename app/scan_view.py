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
        if self.view.tool in ("brush", "ink_brush", "eraser", "restyle") and ev.button() == QtCore.Qt.MouseButton.LeftButton:
            ev.accept()
            row, col = self.view.to_scan(ev.scenePos())  # scan pixels, whatever the rotation and display level
            if ev.isStart():
                self.view.stroke_started.emit(row, col)
            self.view.stroke_moved.emit(row, col)
            if ev.isFinish():
                self.view.stroke_finished.emit()
            return
        super().mouseDragEvent(ev, axis)

    def mouseClickEvent(self, ev):
        if ev.button() == QtCore.Qt.MouseButton.LeftButton and self.view.tool != "pan":
            ev.accept()
            self.view.clicked.emit(*self.view.to_scan(ev.scenePos()))
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
    section_moved = QtCore.Signal(int, float, float)  # section index, new span along depth

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
        self.levels: list[np.ndarray] = []  # display pyramid: the scan, then halvings (core.io.scan.display_pyramid)
        self.level = 0
        self.vb.sigRangeChanged.connect(self._pick_level)
        self.vb.sigRangeChanged.connect(self._clip_pick_lines)
        self.tiles: dict[tuple[int, int], pg.ImageItem] = {}
        self.mask: np.ndarray | None = None
        self.opacity = 0.55
        self.mask_visible = True
        self.trace_items: list[pg.PlotDataItem] = []
        self.pick_lines: list[pg.InfiniteLine] = []
        self.track_regions: list[pg.LinearRegionItem] = []
        self.section_regions: list[pg.LinearRegionItem] = []
        self._section_layout: tuple[str, list[str]] | None = None  # orientation and kinds the regions show
        self._handles_layout: tuple[str, int, list[str]] | None = None  # depth axis, picks, track colours shown
        self.depth_axis = "y"
        self.rotated = False
        self.scene().sigMouseMoved.connect(self._mouse_moved)

    # -- image and mask ------------------------------------------------------
    def set_scan(self, image: np.ndarray, pyramid: list[np.ndarray] | None = None) -> None:
        """Show a scan; ``pyramid`` (its display levels, computed off the UI thread) lets a zoomed-out view
        draw an averaged level instead of sampling scattered full-resolution pixels."""
        self.levels = list(pyramid) if pyramid else [image]
        self.level = -1
        self.clear_mask()
        self._show_level(len(self.levels) - 1)  # the coarsest first: a fitted overview draws it anyway
        self.vb.autoRange(padding=0.01)
        self._pick_level()

    @property
    def scan_shape(self) -> tuple[int, int]:
        return self.levels[0].shape[:2] if self.levels else (0, 0)

    def _show_level(self, k: int) -> None:
        if k == self.level or not self.levels:
            return
        self.level = k
        img = self.levels[k]
        h, w = self.scan_shape
        self.image_item.setImage(img, levels=(0, 255), autoLevels=False)
        self._place(self.image_item, QtGui.QTransform.fromScale(w / img.shape[1], h / img.shape[0]))

    def _pick_level(self, *_args) -> None:
        """The finest level with no more pixels than the screen shows: every level pixel is drawn, so a thin
        line stays continuous, and a zoomed-out 30-megapixel scan costs a 2-megapixel draw."""
        if len(self.levels) < 2:
            return
        view_w = self.vb.viewRect().width()
        screen_w = max(1.0, float(self.vb.width()))
        per_screen_px = view_w / screen_w  # scan pixels per screen pixel (the aspect is locked)
        k = int(np.clip(np.ceil(np.log2(max(per_screen_px, 1.0)) - 1e-6), 0, len(self.levels) - 1))
        self._show_level(k)

    def to_scan(self, scene_pos) -> tuple[float, float]:
        """(row, col) in the scan's own pixels of a scene position, whatever the rotation and display level."""
        p = self.image_item.mapFromScene(scene_pos)
        h, w = self.scan_shape
        img = self.levels[self.level] if self.levels else None
        sy, sx = (h / img.shape[0], w / img.shape[1]) if img is not None else (1.0, 1.0)
        return p.y() * sy, p.x() * sx

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
                    self._add(item, QtGui.QTransform.fromTranslate(tj * TILE, ti * TILE))
                    self.tiles[(ti, tj)] = item
                item.setImage(lut[sub], autoLevels=False, levels=None)

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
        layout = (depth_axis, len(picks), [colour for _a, _b, colour in tracks])
        if layout == self._handles_layout:
            self._move_calibration_handles(picks, tracks)
            return
        for it in self.pick_lines + self.track_regions:
            self.plot.removeItem(it)
            it.deleteLater()  # freed on the next turn of the event loop, not by a collection inside a paint
        self.pick_lines, self.track_regions = [], []
        self._handles_layout = layout
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
        self._clip_pick_lines()
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

    def _move_calibration_handles(self, picks: list[tuple[float, float]],
                                  tracks: list[tuple[float, float, str]]) -> None:
        """The same picks and tracks at new places: move the shown handles in place. A dragged handle's own
        ...ChangeFinished signal leads here through the saved calibration; removing and freeing the handle still on
        that signal's stack (and held by the scene's drag) crashed a paint once (a section's border, the same way)."""
        for line, (px, depth) in zip(self.pick_lines, picks, strict=True):
            if float(line.value()) != float(px):
                line.setValue(px)  # emits sigPositionChanged only: the pick_moved connection is on ...Finished
            line.label.setFormat(f"{depth:g}")
        for region, (a, b, _colour) in zip(self.track_regions, tracks, strict=True):
            _move_region(region, a, b)
        self._clip_pick_lines()

    def set_sections(self, sections: list[tuple[float, float, str]], depth_axis: str) -> None:
        """Shade each log section (start, stop, kind) along depth, its borders draggable: what is not shaded
        (header, tail, what lies between) is not log and is never traced."""
        orientation = "horizontal" if depth_axis == "y" else "vertical"  # borders across the tracks
        layout = (orientation, [kind for _a, _b, kind in sections])
        if layout == self._section_layout:  # same sections, new spans: moved in place, as the handles are
            for region, (a, b, _kind) in zip(self.section_regions, sections, strict=True):
                _move_region(region, a, b)
            return
        for it in self.section_regions:
            self.plot.removeItem(it)
            it.deleteLater()  # freed on the next turn of the event loop, not by a collection inside a paint
        self.section_regions = []
        self._section_layout = layout
        colours = {"main": (40, 160, 80, 22), "repeat": (230, 140, 20, 26), "log": (60, 120, 220, 22)}
        for i, (a, b, kind) in enumerate(sections):
            region = pg.LinearRegionItem(values=(a, b), orientation=orientation, brush=colours.get(kind),
                                         pen=pg.mkPen((40, 120, 60), width=2), movable=False)
            for line in region.lines:
                line.setMovable(True)
            pg.InfLineLabel(region.lines[0], text=f"section {i + 1}: {kind}", position=0.9,
                            color=(30, 90, 40), fill=(255, 255, 255, 200))
            region.setZValue(1)
            region.sigRegionChangeFinished.connect(
                lambda r, i=i: self.section_moved.emit(i, *[float(v) for v in r.getRegion()]))
            self._add(region)
            self.section_regions.append(region)

    def set_proposed_tracks(self, tracks: list[tuple[float, float]], depth_axis: str) -> None:
        """Outline the tracks a calibration proposal found (dashed, fixed): where Add curve places a curve."""
        for it in getattr(self, "proposal_items", []):
            self.plot.removeItem(it)
        self.proposal_items = []
        angle = 90 if depth_axis == "y" else 0  # a track bound runs along depth
        for lo, hi in tracks:
            for pos in (lo, hi):
                line = pg.InfiniteLine(pos=pos, angle=angle, movable=False,
                                       pen=pg.mkPen((120, 60, 200), width=1, style=QtCore.Qt.PenStyle.DashLine))
                line.setZValue(3)
                self._add(line)
                self.proposal_items.append(line)

    def _clip_pick_lines(self, *_args) -> None:
        """Draw each pick line across the image only (not the whole view), so it and its label stay on the log."""
        if not self.levels or not self.pick_lines:
            return
        image_rect = self.image_item.mapRectToView(self.image_item.boundingRect())
        for line in self.pick_lines:
            vr = line.viewRect()
            if vr is None or vr.width() <= 0:
                continue
            own = line.mapRectFromView(image_rect)
            a = (own.left() - vr.left()) / vr.width()
            b = (own.right() - vr.left()) / vr.width()
            a, b = float(np.clip(min(a, b), 0.0, 1.0)), float(np.clip(max(a, b), 0.0, 1.0))
            if (a, b) != tuple(line.span):
                line.setSpan(a, b)

    def fit_across(self, lo: float, hi: float, depth_axis: str, start: float = 0.0) -> None:
        """Fit [lo, hi] across the log (its tracks) to the view, from pixel ``start`` along depth (the top of the
        log, or of its first section): a tall scan shows its tracks at a readable scale instead of a strip a few
        dozen pixels wide."""
        h, w = self.scan_shape
        if not (h and w) or hi <= lo:
            return
        length = h if depth_axis == "y" else w
        aspect = max(1.0, float(self.vb.height())) / max(1.0, float(self.vb.width()))
        depth_on_screen_vertical = (depth_axis == "y") != self.rotated
        extent = (hi - lo) * (aspect if depth_on_screen_vertical else 1.0 / aspect)
        if extent >= length:
            self.vb.autoRange(padding=0.01)
            return
        start = min(max(0.0, start), length - extent)
        if depth_axis == "y":
            rect = QtCore.QRectF(lo, start, hi - lo, extent)
        else:
            rect = QtCore.QRectF(start, lo, extent, hi - lo)
        self.vb.setRange(self._transform().mapRect(rect), padding=0.0)

    def visible_scan_rect(self) -> QtCore.QRectF:
        """The part of the scan on screen, in scan pixels (whatever the rotation)."""
        inverse, _ok = self._transform().inverted()
        return inverse.mapRect(self.vb.viewRect())

    def depth_window(self, depth_axis: str) -> tuple[float, float]:
        """The stretch of the log on screen as fractions of its length along depth."""
        h, w = self.scan_shape
        r = self.visible_scan_rect()
        if depth_axis == "y":
            return (r.top() / max(1, h), r.bottom() / max(1, h))
        return (r.left() / max(1, w), r.right() / max(1, w))

    def centre_on(self, fraction: float, depth_axis: str) -> None:
        """Move the view along depth so its middle is at ``fraction`` of the log, keeping the zoom."""
        h, w = self.scan_shape
        r = self.visible_scan_rect()
        if depth_axis == "y":
            r.moveCenter(QtCore.QPointF(r.center().x(), fraction * h))
        else:
            r.moveCenter(QtCore.QPointF(fraction * w, r.center().y()))
        self.vb.setRange(self._transform().mapRect(r), padding=0.0)

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

    def _place(self, item, placement: QtGui.QTransform | None = None) -> None:
        """Set an item's transform: its own placement in scan pixels (a tile's offset, a display level's
        scale), then the view's rotation. ``ImageItem.setRect`` would replace the rotation, so it is not used."""
        if placement is not None:
            item._placement = placement
        item.setTransform(getattr(item, "_placement", QtGui.QTransform()) * self._transform())

    def _add(self, item, placement: QtGui.QTransform | None = None) -> None:
        self._place(item, placement)
        self.plot.addItem(item)

    def set_rotated(self, rotated: bool) -> None:
        """Show the log turned by 90° (depth across the screen) or as scanned."""
        self.rotated = bool(rotated)
        for item in self.plot.items:
            self._place(item)
        self.vb.autoRange(padding=0.01)

    def zoom_to(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.vb.setRange(QtCore.QRectF(x0, y0, x1 - x0, y1 - y0), padding=0)

    def _mouse_moved(self, pos) -> None:
        if self.plot.sceneBoundingRect().contains(pos) and self.levels:
            self.cursor_moved.emit(*self.to_scan(pos))


def _move_region(region: pg.LinearRegionItem, a: float, b: float) -> None:
    """Move a shown region to [a, b] without a word back: ``setRegion`` emits ``sigRegionChangeFinished``, which is
    how a drag reports to the panel, and the panel's change is what moves it here."""
    if tuple(float(v) for v in region.getRegion()) != (float(a), float(b)):
        region.blockSignals(True)
        region.setRegion((a, b))
        region.blockSignals(False)
