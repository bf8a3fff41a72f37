"""Painting the class mask: the tools, strokes and clicks, undo, pre-fill, and the autosave of the mask.

A part of :class:`app.main_window.MainWindow` (mixed into it): it works on the window's state (scan,
calibration, mask editor, result, model) and widgets, which the window builds.
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore

from core.io.scan import mask_path_for, save_gray_png

from ..workers import Task


def _prefill_mask(image, axis, model, progress=None):
    from core.labelling.prefill import prefill_mask

    return prefill_mask(image, axis, model, progress)


class Labelling:
    """The window's labelling (a mixin)."""

    def set_tool(self, tool: str) -> None:
        self.view.set_tool(tool)
        act = self.actions_.get(f"tool_{tool}")
        if act and not act.isChecked():
            act.setChecked(True)
        if tool != "polyline":
            self.polyline_points = []
        if tool == "pick":
            self.calib_dock.raise_()

    def _stroke_start(self, row, col):
        if self.editor is None:
            return
        self.editor.begin_stroke()
        self._last_dab = None

    def _stroke_move(self, row, col):
        if self.editor is None:
            return
        if self.view.tool == "ink_brush":
            rect = self.editor.ink_dab(self.image, row, col, self.brush_radius, self.class_value, self._last_dab)
        elif self.view.tool == "restyle":
            rect = self.editor.restyle_dab(row, col, self.brush_radius, self.class_value, self._last_dab)
        else:
            value = 0 if self.view.tool == "eraser" else self.class_value
            rect = self.editor.dab(row, col, self.brush_radius, value, self._last_dab)
        self._last_dab = (row, col)
        if rect is None:
            return
        d = self._dirty_rect
        self._dirty_rect = rect if d is None else (min(d[0], rect[0]), max(d[1], rect[1]),
                                                   min(d[2], rect[2]), max(d[3], rect[3]))
        if not self.repaint_timer.isActive():
            self.repaint_timer.start()

    def _repaint_dirty(self):
        rect, self._dirty_rect = self._dirty_rect, None
        self.view.update_mask_region(rect)

    def _stroke_end(self):
        if self.editor is None:
            return
        self.editor.end_stroke()
        self._last_dab = None
        self.repaint_timer.stop()
        self._repaint_dirty()
        self.autosave_timer.start()

    def paint_stroke(self, points: list[tuple[float, float]], erase: bool = False, tool: str | None = None) -> None:
        """Programmatic stroke (row, col points) through the same path as the mouse; ``tool``: a dragging
        tool other than the brush or eraser (the ink brush)."""
        self.set_tool(tool or ("eraser" if erase else "brush"))
        self._stroke_start(*points[0])
        for p in points:
            self._stroke_move(*p)
        self._stroke_end()

    def _clicked(self, row, col):
        tool = self.view.tool
        if self.editor is None:
            return
        if tool in ("fill", "line_eraser", "restyle"):
            if tool == "fill":
                rect = self.editor.fill(int(row), int(col), self.class_value, source=self.image)
            elif tool == "line_eraser":
                rect = self.editor.erase_line(row, col)
            else:
                rect = self.editor.restyle(row, col, self.class_value)
            if rect is None:
                self.statusBar().showMessage({"fill": "no ink under the click",
                                              "line_eraser": "no straight labelled line under the click",
                                              "restyle": "no labelled stroke under the click"}[tool], 5000)
                return
            self.view.update_mask_region(rect)
            self.autosave_timer.start()
        elif tool == "polyline":
            self.polyline_points.append((row, col))
            if len(self.polyline_points) >= 2:
                a, b = self.polyline_points[-2], self.polyline_points[-1]
                rect = self.editor.polyline([a, b], max(1, int(self.brush_radius)), self.class_value)
                self.view.update_mask_region(rect)
                self.autosave_timer.start()
        elif tool == "ink":
            self._ink_picked(row, col)
        elif tool == "pick":
            axis = self.calib_panel.axis.currentText()
            pixel = row if axis == "y" else col
            depth = self.ask_depth(pixel)
            if depth is not None:
                self.calib_panel.add_pick_at(pixel, depth)

    def keyPressEvent(self, ev):
        if ev.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter):
            self.polyline_points = []
        super().keyPressEvent(ev)

    def undo(self):
        if self.editor is not None:
            self.view.update_mask_region(self.editor.undo())
            self.autosave_timer.start()

    def redo(self):
        if self.editor is not None:
            self.view.update_mask_region(self.editor.redo())
            self.autosave_timer.start()

    def prefill(self):
        """Fill the mask from the current model or the classical tracer, off the UI thread (one undo step)."""
        if self.image is None or self.closing or (self.task is not None and self.task.isRunning()):
            return
        axis = self.calib_panel.axis.currentText()
        scan = self.scan_path
        self._start_task(Task(_prefill_mask, self.image, axis, self.model, parent=self),
                         lambda mask: self._prefilled(mask, scan), "pre-filling the mask…", "pre-fill cancelled")

    def _prefilled(self, mask: np.ndarray, scan) -> None:
        self._task_done("mask pre-filled: correct it with the line eraser, restyle and ink brush")
        if self.closing or self.editor is None or scan != self.scan_path or mask.shape != self.editor.mask.shape:
            return  # another scan was opened meanwhile
        rect = self.editor.replace_all(mask)
        self.view.update_mask_region(rect)
        self.autosave_timer.start()

    def autosave_mask(self) -> None:
        if self.editor is None or self.scan_path is None or not self.editor.dirty:
            return
        snapshot = self.editor.mask.copy()
        self.editor.dirty = False
        path = mask_path_for(self.scan_path)
        fresh = not path.exists()
        self._pending_save = self._saver.submit(save_gray_png, path, snapshot)
        self._pending_save.add_done_callback(lambda fut: self._autosaved(fut, fresh))

    def _autosaved(self, fut, fresh: bool) -> None:  # on the saver thread: hand back to the UI thread
        exc = fut.exception()
        if exc is not None:
            QtCore.QMetaObject.invokeMethod(self, "_autosave_failed", QtCore.Qt.ConnectionType.QueuedConnection,
                                            QtCore.Q_ARG(str, str(exc)))
        elif fresh:  # the scan just became "labelled"
            QtCore.QMetaObject.invokeMethod(self, "refresh_project", QtCore.Qt.ConnectionType.QueuedConnection)

    @QtCore.Slot(str)
    def _autosave_failed(self, message: str) -> None:
        if self.editor is not None:
            self.editor.dirty = True
        self.show_error(f"{mask_path_for(self.scan_path)}: autosave failed: {message}")

    def save_mask(self) -> None:
        """Save now, on this thread (closing, switching scans)."""
        if self._pending_save is not None:
            self._pending_save.result()
            self._pending_save = None
        if self.editor is not None and self.scan_path is not None and self.editor.dirty:
            save_gray_png(mask_path_for(self.scan_path), self.editor.mask)
            self.editor.dirty = False
            self.refresh_project()

    def flush(self) -> None:
        self.autosave_timer.stop()
        self.save_mask()
