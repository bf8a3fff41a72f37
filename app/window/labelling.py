"""Painting the class mask: strokes and clicks of the labelling tools, undo, pre-fill, and the autosave.

The controller owns the scan's mask (a :class:`MaskEditor`), the brush (class, radius) and the polyline being
drawn. The mask is saved beside the scan off the UI thread, one save at a time and in order, 400 ms after the
last edit; switching scans or closing saves on the spot.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PySide6 import QtCore

from core.io.file_names import mask_path_for
from core.io.scan import save_gray_png
from core.labelling.mask_edit import MaskEditor

from ..scan_loader import ScanBundle
from ..workers import Task
from .calibrating import CalibrationController
from .models import ModelController, reading_device
from .scans import ScanController
from .shell import Shell


def _prefill_mask(image, axis, model, progress=None):
    from core.labelling.prefill import prefill_mask

    return prefill_mask(image, axis, model, progress, device=reading_device(model))


class LabellingController(QtCore.QObject):
    """The scan's class mask and the tools that paint it."""

    labels_saved = QtCore.Signal()  # a first mask file was written: the scan is now "labelled"
    _save_failed = QtCore.Signal(str)  # from the saver thread

    def __init__(self, shell: Shell, scans: ScanController, calibration: CalibrationController,
                 models: ModelController, view, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.shell, self.scans, self.calibration, self.models, self.view = shell, scans, calibration, models, view
        self.editor: MaskEditor | None = None
        self.class_value = 1
        self.brush_radius = 3.0
        self.polyline_points: list[tuple[float, float]] = []
        self._last_dab = None
        self.autosave_timer = QtCore.QTimer(self)
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(400)
        self.autosave_timer.timeout.connect(self.autosave)
        # the PNG encode of an 8-megapixel mask takes ~60 ms: autosave encodes a snapshot off the UI thread
        self._saver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="welltrace-autosave")
        self._pending_save = None
        self._save_failed.connect(self._autosave_failed)
        # brush dabs mark a dirty rectangle; the overlay re-renders at most every 16 ms
        self._dirty_rect = None
        self.repaint_timer = QtCore.QTimer(self)
        self.repaint_timer.setSingleShot(True)
        self.repaint_timer.setInterval(16)
        self.repaint_timer.timeout.connect(self._repaint_dirty)
        view.stroke_started.connect(self.stroke_start)
        view.stroke_moved.connect(self.stroke_move)
        view.stroke_finished.connect(self.stroke_end)
        scans.switching.connect(self.flush)
        scans.opened.connect(self._scan_opened)

    def _scan_opened(self, bundle: ScanBundle) -> None:
        self.editor = MaskEditor(bundle.mask)
        self.polyline_points = []
        self.view.set_mask(bundle.mask)

    def labelled_mask(self) -> np.ndarray | None:
        """A copy of the painted mask when there is any paint on it."""
        return self.editor.mask.copy() if self.editor is not None and self.editor.mask.any() else None

    def tool_changed(self, tool: str) -> None:
        if tool != "polyline":
            self.polyline_points = []

    # -- strokes ---------------------------------------------------------------------------
    def stroke_start(self, row, col):
        if self.editor is None:
            return
        self.editor.begin_stroke()
        self._last_dab = None

    def stroke_move(self, row, col):
        if self.editor is None:
            return
        tool = self.view.tool
        if tool == "ink_brush":
            rect = self.editor.ink_dab(self.scans.image, row, col, self.brush_radius, self.class_value,
                                       self._last_dab)
        elif tool == "restyle":
            rect = self.editor.restyle_dab(row, col, self.brush_radius, self.class_value, self._last_dab)
        else:
            value = 0 if tool == "eraser" else self.class_value
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

    def stroke_end(self):
        if self.editor is None:
            return
        self.editor.end_stroke()
        self._last_dab = None
        self.repaint_timer.stop()
        self._repaint_dirty()
        self.autosave_timer.start()

    # -- clicks --------------------------------------------------------------------------------
    def click(self, tool: str, row: float, col: float) -> None:
        """A click with a mask tool (fill, line eraser, restyle, polyline)."""
        if self.editor is None:
            return
        if tool in ("fill", "line_eraser", "restyle"):
            if tool == "fill":
                rect = self.editor.fill(int(row), int(col), self.class_value, source=self.scans.image)
            elif tool == "line_eraser":
                rect = self.editor.erase_line(row, col)
            else:
                rect = self.editor.restyle(row, col, self.class_value)
            if rect is None:
                self.shell.show_status({"fill": "no ink under the click",
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

    def end_polyline(self) -> None:
        self.polyline_points = []

    def undo(self):
        if self.editor is not None:
            self.view.update_mask_region(self.editor.undo())
            self.autosave_timer.start()

    def redo(self):
        if self.editor is not None:
            self.view.update_mask_region(self.editor.redo())
            self.autosave_timer.start()

    # -- pre-fill ------------------------------------------------------------------------------
    def prefill(self):
        """Fill the mask from the current model or the classical tracer, off the UI thread (one undo step)."""
        image = self.scans.image
        if image is None or self.shell.closing or self.shell.task_running():
            return
        scan = self.scans.path
        task = Task(_prefill_mask, image, self.calibration.panel.axis.currentText(), self.models.model, owner=self)
        self.shell.start_task(task, lambda mask: self._prefilled(mask, scan), "pre-filling the mask…",
                              "pre-fill cancelled")

    def _prefilled(self, mask: np.ndarray, scan) -> None:
        self.shell.task_done("mask pre-filled: correct it with the line eraser, restyle and ink brush")
        if self.shell.closing or self.editor is None or scan != self.scans.path or mask.shape != self.editor.mask.shape:
            return  # another scan was opened meanwhile
        rect = self.editor.replace_all(mask)
        self.view.update_mask_region(rect)
        self.autosave_timer.start()

    # -- saving ----------------------------------------------------------------------------------
    def autosave(self) -> None:
        if self.editor is None or self.scans.path is None or not self.editor.dirty:
            return
        snapshot = self.editor.mask.copy()
        self.editor.dirty = False
        path = mask_path_for(self.scans.path)
        fresh = not path.exists()
        self._pending_save = self._saver.submit(save_gray_png, path, snapshot)
        self._pending_save.add_done_callback(lambda fut: self._autosaved(fut, fresh))

    def _autosaved(self, fut, fresh: bool) -> None:  # on the saver thread: signals hand back to the UI thread
        exc = fut.exception()
        if exc is not None:
            self._save_failed.emit(str(exc))
        elif fresh:  # the scan just became "labelled"
            self.labels_saved.emit()

    def _autosave_failed(self, message: str) -> None:
        if self.editor is not None:
            self.editor.dirty = True
        self.shell.show_error(f"{mask_path_for(self.scans.path)}: autosave failed: {message}")

    def save_mask(self) -> None:
        """Save now, on this thread (closing, switching scans); raises OSError."""
        if self._pending_save is not None:
            self._pending_save.result()
            self._pending_save = None
        if self.editor is not None and self.scans.path is not None and self.editor.dirty:
            save_gray_png(mask_path_for(self.scans.path), self.editor.mask)
            self.editor.dirty = False
            self.labels_saved.emit()

    def flush(self) -> None:
        self.autosave_timer.stop()
        self.save_mask()
