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
import weakref

from PySide6 import QtCore

from core.common.errors import InputError


class Cancelled(Exception):
    pass


_LIVE: set["Task"] = set()  # tasks started and not yet finished: they outlive any window that started them


def _lineage(owner) -> tuple[weakref.ref, ...]:
    """Weak references to ``owner`` and its Qt ancestors, taken while they are alive (when a task is made)."""
    out = []
    obj = owner
    while obj is not None:
        try:
            out.append(weakref.ref(obj))
        except TypeError:  # an owner that takes no weak reference: kept by identity alone
            out.append(lambda obj=obj: obj)
        obj = obj.parent() if isinstance(obj, QtCore.QObject) else None
    return tuple(out)


def owned_tasks(owner) -> list["Task"]:
    """The tasks started for ``owner`` (or for an object it holds, such as a window's controller) that are still
    running. Decided from the owners' lineage recorded when each task was made, never by asking a task's owner
    now: an abandoned task outlives its window, whose objects Qt has deleted since, and asking a deleted object
    for its parent crashed the process (SIGSEGV in a later window's closeEvent, the suite under load)."""
    return [t for t in list(_LIVE) if any(ref() is owner for ref in t.lineage) and t.isRunning()]


class Task(QtCore.QThread):
    """Runs ``fn(*args, **kwargs)`` in a thread of its own, with ``progress=`` (a ``(done, total)`` callback that
    also raises when the task is cancelled) added unless ``progress=False``.

    ``owner`` is whom the task works for, not its Qt parent: a QThread that is a Qt child of a window is
    destroyed with the window, and destroying a running QThread crashes the process (a window closed while a
    5-second digitise was still running did, in the test suite). So the task holds itself alive until it has
    finished, and an owner that closes early calls :meth:`abandon` to hear nothing more from it."""

    progressed = QtCore.Signal(int, int)
    succeeded = QtCore.Signal(object)
    failed = QtCore.Signal(str)
    cancelled = QtCore.Signal()

    def __init__(self, fn, *args, owner=None, progress: bool = True, **kwargs):
        super().__init__(None)
        self.lineage = _lineage(owner)  # whom it works for (``owned_tasks``), recorded while they are alive
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.reports_progress = progress
        self._cancel = threading.Event()
        self.finished.connect(self._release)

    def start(self, *args) -> None:
        _LIVE.add(self)
        super().start(*args)

    def _release(self) -> None:
        self.wait()  # ``finished`` is emitted from the thread just before it ends
        _LIVE.discard(self)

    def abandon(self) -> None:
        """Ask the task to stop and deliver nothing more (its owner is going away)."""
        self._cancel.set()
        self.blockSignals(True)

    def cancel(self) -> None:
        self._cancel.set()

    def _progress(self, i: int, n: int) -> None:
        if self._cancel.is_set():
            raise Cancelled()
        self.progressed.emit(int(i), int(n))

    def run(self) -> None:  # in the worker thread
        try:
            extra = {"progress": self._progress} if self.reports_progress else {}
            result = self.fn(*self.args, **extra, **self.kwargs)
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
