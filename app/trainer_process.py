"""The parent's side of a training (or adapting) run in a child process.

The child (``app/training_child.py``) runs the engine's event generator at a lower
priority; here a reader thread moves its events into an inbox that the UI drains
on its own timer (the training dock, the adapt dialog), and a Stop reaches the
child even when clicked while it is still starting.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import time

from PySide6 import QtCore

from .training_child import lower_priority, train_in_child

EXIT_WAIT_S = 30.0  # how long the reader waits for a child that said it is done to exit (its queue flushing)


class PendingStop:
    """The parent's side of the stop flag: remembers a Stop requested before the child exists and
    passes it on to the child's event once the launch has made one."""

    def __init__(self):
        self._lock = threading.Lock()
        self._requested = False
        self._event = None

    def attach(self, event) -> None:
        with self._lock:
            self._event = event
            if self._requested:
                event.set()

    def set(self) -> None:
        with self._lock:
            self._requested = True
            if self._event is not None:
                self._event.set()

    def is_set(self) -> bool:
        return self._requested


class TrainerProcess(QtCore.QObject):
    """Training in a child process: the desktop's event loop never shares a GIL (or a crash) with
    the engine. Events arrive through a queue that the dock drains on its own timer.

    Launching the child is itself slow on a small machine (spawning the interpreter, starting
    multiprocessing's resource tracker: ~300 ms on a 2-core CPU, measured as the worst event-loop
    stall of a run), so ``start`` hands the launch to the reader thread and returns at once."""

    crashed = QtCore.Signal(str)

    def __init__(self, cfg, parent=None, target=train_in_child):
        super().__init__(parent)
        self.cfg = cfg
        self.target = target  # the child's entry: training, or adapting (core.engine.adapt)
        self.proc = None  # the child, once the reader thread has launched it
        self.events = None
        self.stop_flag = PendingStop()
        self.listeners: list = []  # called on the UI thread for every event (tests)
        self._inbox: queue.Queue = queue.Queue()
        self._done = False

    def start(self) -> None:
        threading.Thread(target=self._launch_and_receive, name="welltrace-train-events", daemon=True).start()

    def _launch_and_receive(self) -> None:
        try:
            ctx = multiprocessing.get_context("spawn")  # no fork of a Qt process
            self.events = ctx.Queue()
            stop = ctx.Event()
            self.proc = ctx.Process(target=self.target, args=(self.cfg, self.events, stop), daemon=True,
                                    name="welltrace-train")
            self.proc.start()
        except (OSError, RuntimeError, ValueError) as exc:
            self._inbox.put(("crashed", f"cannot start the training process: {exc}"))
            self._inbox.put(("gone", None))
            return
        lower_priority(self.proc.pid)
        self.stop_flag.attach(stop)  # a Stop clicked while the child was starting reaches it now
        self._receive()

    def _receive(self) -> None:
        """Reader thread: moves the child's events from the pipe into a thread-safe inbox. The UI thread never
        reads the pipe itself, where a message the child left half-written would block it for good."""
        while True:
            try:
                item = self.events.get(timeout=0.2)
            except queue.Empty:
                if not self.proc.is_alive() and self.events.empty():
                    self._inbox.put(("gone", self.proc.exitcode))  # the child is gone; nothing more will come
                    return
                continue
            except (EOFError, OSError, ValueError):
                self._inbox.put(("gone", self.proc.exitcode))
                return
            self._inbox.put(item)
            if item == ("exit", None):
                # the child ends on its own now: reap it here (off the UI thread), or it stays a zombie until the
                # app quits
                self.proc.join(EXIT_WAIT_S)
                return

    def end(self, grace_s: float) -> bool:
        """Stop the child for good (the app is quitting): ask it to stop after its step, give it ``grace_s``
        seconds, then terminate it (its last checkpoint is kept; the step under way is lost). Whether it had ended
        on its own."""
        self.stop_flag.set()
        deadline = time.monotonic() + grace_s
        while self.proc is None and time.monotonic() < deadline:
            time.sleep(0.02)  # still being launched
        proc = self.proc
        if proc is None:
            return True
        proc.join(max(0.0, deadline - time.monotonic()))
        ended = proc.exitcode is not None
        if not ended:
            proc.terminate()
            proc.join(2.0)
            if proc.exitcode is None:
                proc.kill()
                proc.join(2.0)
        self._done = True
        return ended

    def isRunning(self) -> bool:  # noqa: N802 - the QThread spelling the dock uses
        return not self._done

    def isFinished(self) -> bool:  # noqa: N802
        return self._done

    def wait(self, ms: int = 60000) -> bool:
        deadline = time.monotonic() + ms / 1000
        while not self._done and time.monotonic() < deadline:
            self.poll()
            time.sleep(0.02)
        return self._done

    def poll(self) -> list:
        """Events waiting from the child (and the end of the run, once it has ended). Never blocks."""
        out = []
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, tuple):
                kind, payload = item
                if kind == "crashed":
                    self.crashed.emit(payload)
                elif kind == "exit" and not self._done:
                    self._done = True  # the child tears down on its own; never block the UI on join
                elif kind == "gone" and not self._done:
                    self._done = True
                    if payload not in (None, 0):  # killed (out of memory, a signal): say so, keep the app
                        self.crashed.emit(f"training process ended with exit code {payload}")
                continue
            for fn in self.listeners:
                fn(item)
            out.append(item)
        return out
