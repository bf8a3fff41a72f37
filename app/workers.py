"""Running engine work off the UI thread.

A :class:`Task` runs a plain function from ``core`` in a thread of its own;
the function gets a ``progress(i, n)`` callback that also raises
:class:`Cancelled` once the user has asked to cancel. Results and errors come
back as Qt signals (queued onto the UI thread), so the event loop never
blocks. A task that does not stop at Cancel within a second is let go of
(abandoned: nothing more is heard from it) and never holds up Quit.
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


class Task(QtCore.QObject):
    """Runs ``fn(*args, **kwargs)`` in a thread of its own, with ``progress=`` (a ``(done, total)`` callback that
    also raises :class:`Cancelled` once the task is cancelled) added unless ``progress=False``.

    The thread is a daemon thread, not a ``QThread``: a task that cannot be interrupted (a C call that reports no
    progress) must never hold the app open, and a ``QThread`` still running when the app quits aborts it ("QThread:
    Destroyed while thread is still running", after Cancel of a long proposal and File › Quit). A daemon thread
    ends with the process.

    ``owner`` is whom the task works for, not its Qt parent: the task holds itself alive (``_LIVE``) until it has
    finished, and an owner that goes away (or gives up on it after Cancel) calls :meth:`abandon` to hear nothing
    more from it."""

    progressed = QtCore.Signal(int, int)
    succeeded = QtCore.Signal(object)
    failed = QtCore.Signal(str)
    cancelled = QtCore.Signal()
    finished = QtCore.Signal()  # the thread has ended (emitted from it, delivered on the UI thread)

    def __init__(self, fn, *args, owner=None, progress: bool = True, **kwargs):
        super().__init__(None)
        self.lineage = _lineage(owner)  # whom it works for (``owned_tasks``), recorded while they are alive
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.reports_progress = progress
        self._cancel = threading.Event()
        self._ended = threading.Event()
        self._abandoned = False
        self._thread: threading.Thread | None = None
        self.finished.connect(self._release)

    def start(self) -> None:
        _LIVE.add(self)
        name = f"welltrace-task-{getattr(self.fn, '__name__', 'work')}"
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()

    def _release(self) -> None:
        _LIVE.discard(self)

    # -- the QThread spelling the app and its tests use ---------------------------------------------------------
    def isRunning(self) -> bool:  # noqa: N802
        return self._thread is not None and not self._ended.is_set()

    def isFinished(self) -> bool:  # noqa: N802
        return self._ended.is_set()

    def wait(self, ms: int | None = None) -> bool:
        """Wait for the thread to end (at most ``ms`` milliseconds); whether it has."""
        if self._thread is None:
            return True
        return self._ended.wait(None if ms is None else ms / 1000)

    # -- stopping ---------------------------------------------------------------------------------------------
    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Ask the task to stop: its next progress call raises :class:`Cancelled`."""
        self._cancel.set()

    def abandon(self) -> None:
        """Ask the task to stop and deliver nothing more (its owner is going away, or gave up waiting)."""
        self._cancel.set()
        self._abandoned = True

    def _emit(self, signal, *args) -> None:
        if not self._abandoned:
            signal.emit(*args)

    def _progress(self, i: int, n: int) -> None:
        if self._cancel.is_set():
            raise Cancelled()
        self._emit(self.progressed, int(i), int(n))

    def _work(self) -> None:  # in the task's thread
        try:
            extra = {"progress": self._progress} if self.reports_progress else {}
            result = self.fn(*self.args, **extra, **self.kwargs)
        except Cancelled:
            self._emit(self.cancelled)
        except InputError as exc:
            self._emit(self.failed, exc.one_line())
        except Exception as exc:  # noqa: BLE001 - shown to the user, never a dead app
            if not self._abandoned:
                traceback.print_exc()
            self._emit(self.failed, f"internal error: {type(exc).__name__}: {exc}")
        else:
            if self._cancel.is_set():
                self._emit(self.cancelled)
            else:
                self._emit(self.succeeded, result)
        finally:
            self._ended.set()
            self.finished.emit()  # queued: releases the task on the UI thread, after its result
