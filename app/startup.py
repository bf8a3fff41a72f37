"""Starting the app: the QApplication as WellTrace sets it up, and a run of the main window (``welltrace``,
``welltrace SCAN``, ``welltrace --screenshot PNG``)."""

from __future__ import annotations

import sys

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .main_window import RESOURCES, MainWindow
from .planner_process import stop_planner

SCREENSHOT_WAIT_S = 300  # the longest --screenshot waits for the opening scan to be read and digitised


def make_app() -> QtWidgets.QApplication:
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setApplicationName("WellTrace")
    icon = RESOURCES / "icons" / "welltrace.png"
    if icon.exists():
        app.setWindowIcon(QtGui.QIcon(str(icon)))
    pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)
    return app


def run(paths: list[str], screenshot: str | None = None) -> int:
    app = make_app()
    app.aboutToQuit.connect(stop_planner)  # the budget planner's process ends with the app
    win = MainWindow()
    if paths:
        win.open_paths(paths)
    else:
        win.open_demo()
    win.show()
    if screenshot:
        import time

        deadline = time.monotonic() + SCREENSHOT_WAIT_S

        def shoot():
            # the scan is still being read, or the demo still digitises itself: shoot once it is shown as a user
            # sees it (the README's picture is the digitised demo), within SCREENSHOT_WAIT_S
            busy = win.scans.opening or (win.task is not None and win.task.isRunning())
            if busy and time.monotonic() < deadline:
                QtCore.QTimer.singleShot(100, shoot)
                return
            app.processEvents()
            win.grab().save(screenshot)
            win.remember_geometry = False
            win.close()
            app.quit()
        QtCore.QTimer.singleShot(300, shoot)
    return app.exec()
