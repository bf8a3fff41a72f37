"""Closing windows while work they started still runs (issue 46): a task abandoned by a closed window outlives
it, and the next window that closes must not ask that task's dead owners anything."""

import threading

from shiboken6 import isValid

from app.main_window import MainWindow
from app.workers import Task, owned_tasks


def test_a_window_closes_while_a_task_of_a_deleted_window_still_runs(qtbot):
    release = threading.Event()

    def still_working(progress=None):
        release.wait(30)  # the budget planner under load: a minute and more
        return 1

    first = MainWindow()
    task = Task(still_working, owner=first.digitizing)
    task.start()
    assert owned_tasks(first) == [task]
    task.abandon()  # what closing it does to a task that outlives its wait
    first.deleteLater()  # ... and then Qt deletes the window and its controllers
    qtbot.waitUntil(lambda: not isValid(first), timeout=5000)
    second = MainWindow()
    qtbot.addWidget(second)
    try:
        assert owned_tasks(second) == []  # the old task is not the new window's, and asking did not crash
        second.close()  # its closeEvent looks over every live task, the abandoned one among them
        assert second.closing
    finally:
        release.set()
        task.wait(10000)
