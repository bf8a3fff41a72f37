"""Editing a class mask: brush, eraser, fill, polyline, and memory-bounded undo/redo.

Each stroke stores only the rectangle it changed (before and after), so undo
costs memory in proportion to what was painted, not to the 8-megapixel mask;
the history is trimmed to a byte budget. Every edit reports the rectangle it
touched so a view re-renders only that region.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import cv2
import numpy as np

from .label_tools import brush_stamp, ink_in_disc, straight_line_at, stroke_at

Rect = tuple[int, int, int, int]  # row0, row1, col0, col1 (exclusive ends)


@dataclass
class _Edit:
    rect: Rect
    before: np.ndarray
    after: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.before.nbytes + self.after.nbytes


def _union(a: Rect | None, b: Rect) -> Rect:
    if a is None:
        return b
    return (min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3]))


class MaskEditor:
    def __init__(self, mask: np.ndarray, history_bytes: int = 256 * 1024**2):
        if mask.dtype != np.uint8 or mask.ndim != 2:
            raise ValueError("a mask is a 2-D uint8 array")
        self.mask = mask
        self.history_bytes = history_bytes
        self._undo: deque[_Edit] = deque()
        self._redo: list[_Edit] = []
        self._stroke_rect: Rect | None = None
        self._stroke_patches: list[tuple[Rect, np.ndarray]] = []
        self.dirty = False

    # -- strokes -------------------------------------------------------------
    def begin_stroke(self) -> None:
        """Start one undo step; each dab snapshots only the rectangle it is about to change."""
        self._stroke_rect = None
        self._stroke_patches = []

    def _touch(self, rect: Rect) -> Rect:
        h, w = self.mask.shape
        r = (max(0, rect[0]), min(h, rect[1]), max(0, rect[2]), min(w, rect[3]))
        if r[0] >= r[1] or r[2] >= r[3]:
            return r
        self._stroke_patches.append((r, self.mask[r[0]:r[1], r[2]:r[3]].copy()))
        self._stroke_rect = _union(self._stroke_rect, r)
        return r

    def dab(self, row: float, col: float, radius: float, value: int,
            prev: tuple[float, float] | None = None) -> Rect | None:
        """Paint a disc (or a thick segment from ``prev``) with ``value`` (0 erases); None outside the mask."""
        return self._dab_where(brush_stamp(self.mask.shape, row, col, radius, prev), value)

    def polyline(self, points: list[tuple[float, float]], width: int, value: int) -> Rect | None:
        """A thin curve through (row, col) points, as one stroke."""
        if len(points) < 2:
            return None
        self.begin_stroke()
        rows = [p[0] for p in points]
        cols = [p[1] for p in points]
        rect = self._touch((int(min(rows)) - width - 1, int(max(rows)) + width + 2,
                            int(min(cols)) - width - 1, int(max(cols)) + width + 2))
        view = self.mask[rect[0]:rect[1], rect[2]:rect[3]]
        pts = np.array([[c - rect[2], r - rect[0]] for r, c in points], np.float64)
        cv2.polylines(view, [np.round(pts * 16).astype(np.int32)], False, int(value), max(1, width), cv2.LINE_8, 4)
        self.dirty = True
        self.end_stroke()
        return rect

    def fill(self, row: int, col: int, value: int, source: np.ndarray | None = None, tolerance: int = 40) -> Rect | None:
        """Flood-fill the connected region under (row, col): of the scan's ink when ``source``
        is given (fill a curve's stroke), else of the mask's own class."""
        h, w = self.mask.shape
        if not (0 <= row < h and 0 <= col < w):
            return None
        base = source if source is not None else self.mask
        ff = np.zeros((h + 2, w + 2), np.uint8)
        img = base.copy()
        flags = 8 | cv2.FLOODFILL_MASK_ONLY | (255 << 8)
        cv2.floodFill(img, ff, (int(col), int(row)), 0, tolerance if source is not None else 0,
                      tolerance if source is not None else 0, flags)
        return self.set_region(ff[1:-1, 1:-1] > 0, value)

    def ink_dab(self, image: np.ndarray, row: float, col: float, radius: float, value: int,
                prev: tuple[float, float] | None = None) -> Rect | None:
        """Like :meth:`dab`, on the scan's ink under the brush only (``core.labelling.label_tools.ink_in_disc``); None
        where there is no ink under it."""
        return self._dab_where(ink_in_disc(image, row, col, radius, prev), value)

    def restyle_dab(self, row: float, col: float, radius: float, value: int,
                    prev: tuple[float, float] | None = None) -> Rect | None:
        """Like :meth:`dab`, on labelled pixels only: the strokes under the brush take class ``value`` and the
        paper stays paper. None where nothing labelled is under it."""
        found = brush_stamp(self.mask.shape, row, col, radius, prev)
        if found is not None:
            (r0, r1, c0, c1), stamp = found
            found = (r0, r1, c0, c1), stamp & (self.mask[r0:r1, c0:c1] > 0)
        return self._dab_where(found, value)

    def _dab_where(self, found, value: int) -> Rect | None:
        if found is None or not found[1].any():
            return None
        (r0, r1, c0, c1), selected = found
        rect = self._touch((r0, r1, c0, c1))
        self.mask[r0:r1, c0:c1][selected] = value
        self.dirty = True
        return rect

    def set_region(self, region: np.ndarray | None, value: int) -> Rect | None:
        """Set every pixel of a boolean ``region`` (the mask's shape) to ``value``, as one undo step; None
        when the region is empty."""
        if region is None or not region.any():
            return None
        rows, cols = np.nonzero(region)
        self.begin_stroke()
        rect = self._touch((int(rows.min()), int(rows.max()) + 1, int(cols.min()), int(cols.max()) + 1))
        self.mask[rect[0]:rect[1], rect[2]:rect[3]][region[rect[0]:rect[1], rect[2]:rect[3]]] = value
        self.dirty = True
        self.end_stroke()
        return rect

    def erase_line(self, row: float, col: float) -> Rect | None:
        """Erase the straight labelled line under a click (a grid line pre-filled as curve), whole."""
        return self.set_region(straight_line_at(self.mask, row, col), 0)

    def restyle(self, row: float, col: float, value: int) -> Rect | None:
        """Give the labelled stroke under a click the class ``value``."""
        return self.set_region(stroke_at(self.mask, row, col), value)

    def end_stroke(self) -> Rect | None:
        """Close the stroke as one undo step; returns its rectangle."""
        rect = self._stroke_rect
        patches = self._stroke_patches
        self._stroke_rect = None
        self._stroke_patches = []
        if rect is None:
            return None
        before = self.mask[rect[0]:rect[1], rect[2]:rect[3]].copy()
        after = before.copy()
        # earliest snapshot wins: restore what each dab saw before the stroke began
        for r, patch in reversed(patches):
            before[r[0] - rect[0]:r[1] - rect[0], r[2] - rect[2]:r[3] - rect[2]] = patch
        if np.array_equal(before, after):
            return rect
        self._undo.append(_Edit(rect, before, after))
        self._redo.clear()
        self._trim()
        return rect

    def replace_all(self, new_mask: np.ndarray) -> Rect:
        """Replace the mask (pre-fill) as one undoable step."""
        if new_mask.shape != self.mask.shape:
            raise ValueError("mask shape differs")
        changed = np.nonzero(new_mask != self.mask)
        if changed[0].size == 0:
            return (0, 0, 0, 0)
        rect = (int(changed[0].min()), int(changed[0].max()) + 1, int(changed[1].min()), int(changed[1].max()) + 1)
        before = self.mask[rect[0]:rect[1], rect[2]:rect[3]].copy()
        self.mask[rect[0]:rect[1], rect[2]:rect[3]] = new_mask[rect[0]:rect[1], rect[2]:rect[3]]
        self._undo.append(_Edit(rect, before, self.mask[rect[0]:rect[1], rect[2]:rect[3]].copy()))
        self._redo.clear()
        self._trim()
        self.dirty = True
        return rect

    def _trim(self) -> None:
        total = sum(e.nbytes for e in self._undo)
        while self._undo and total > self.history_bytes:
            total -= self._undo.popleft().nbytes

    @property
    def history_nbytes(self) -> int:
        return sum(e.nbytes for e in self._undo) + sum(e.nbytes for e in self._redo)

    def can_undo(self) -> bool:
        return bool(self._undo)

    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo(self) -> Rect | None:
        return self._replay(self._undo, self._redo, "before")

    def redo(self) -> Rect | None:
        return self._replay(self._redo, self._undo, "after")

    def _replay(self, source: list, target: list, side: str) -> Rect | None:
        """Move the newest edit from ``source`` to ``target``, putting back its ``side`` ("before" or "after")."""
        if not source:
            return None
        e = source.pop()
        self.mask[e.rect[0]:e.rect[1], e.rect[2]:e.rect[3]] = getattr(e, side)
        target.append(e)
        self.dirty = True
        return e.rect
