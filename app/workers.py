"""Running engine work off the UI thread.

A :class:`Task` runs a plain function from ``core`` in a ``QThread``; the
function gets a ``progress(i, n)`` callback that also raises
:class:`Cancelled` once the user has asked to cancel. Results and errors come
back as Qt signals (queued onto the UI thread), so the event loop never
blocks.
"""

from __future__ import annotations

import threading
import traceback

from PySide6 import QtCore

from core.errors import InputError


class Cancelled(Exception):
    pass


class Task(QtCore.QThread):
    progressed = QtCore.Signal(int, int)
    succeeded = QtCore.Signal(object)
    failed = QtCore.Signal(str)
    cancelled = QtCore.Signal()

    def __init__(self, fn, *args, parent=None, **kwargs):
        super().__init__(parent)
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def _progress(self, i: int, n: int) -> None:
        if self._cancel.is_set():
            raise Cancelled()
        self.progressed.emit(int(i), int(n))

    def run(self) -> None:  # in the worker thread
        try:
            result = self.fn(*self.args, progress=self._progress, **self.kwargs)
        except Cancelled:
            self.cancelled.emit()
        except InputError as exc:
            self.failed.emit(exc.one_line())
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a dead app
            traceback.print_exc()
            self.failed.emit(f"internal error: {type(exc).__name__}: {exc}")
        else:
            if self._cancel.is_set():
                self.cancelled.emit()
            else:
                self.succeeded.emit(result)
