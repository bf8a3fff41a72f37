"""What a controller of the window may ask of the window: the small interface they meet through.

Each controller (``app/window``) owns its state and its widgets and talks to the others through signals; what
they share of the window is only this: the status line, the error dialog, the one long task with its
progress bar and Cancel, a yes/no question, and whether the window is closing. The main window implements it;
a test builds a controller on :class:`QuietShell` without any window.
"""

from __future__ import annotations

from typing import Callable, Protocol

from PySide6 import QtCore


class Shell(Protocol):
    closing: bool  # set once the window closes: late results touch nothing, no new work starts

    def show_error(self, message: str) -> None: ...

    def show_status(self, message: str, ms: int = 8000) -> None: ...

    def confirm(self, question: str) -> bool: ...

    def start_task(self, task, on_result: Callable, busy: str, cancelled: str) -> None:
        """Run the window's one long task (pre-fill, digitise, propose) with the progress bar and Cancel."""

    def task_running(self) -> bool: ...

    def task_done(self, message: str) -> None:
        """The long task ended (its result handled): hide the progress, say how it went."""


class QuietShell(QtCore.QObject):
    """A shell without a window: records what a controller said (tests; headless use of a controller)."""

    def __init__(self, answer: bool = True):
        super().__init__()
        self.closing = False
        self.errors: list[str] = []
        self.messages: list[str] = []
        self.questions: list[str] = []
        self.answer = answer
        self.task = None

    def show_error(self, message: str) -> None:
        self.errors.append(message)

    def show_status(self, message: str, ms: int = 8000) -> None:
        self.messages.append(message)

    def confirm(self, question: str) -> bool:
        self.questions.append(question)
        return self.answer

    def start_task(self, task, on_result, busy: str, cancelled: str) -> None:
        self.task = task
        task.succeeded.connect(on_result)
        task.failed.connect(self.show_error)
        task.cancelled.connect(lambda: self.task_done(cancelled))
        self.messages.append(busy)
        task.start()

    def task_running(self) -> bool:
        return self.task is not None and self.task.isRunning()

    def task_done(self, message: str) -> None:
        self.messages.append(message)
