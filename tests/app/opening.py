"""Opening scans in tests: the window reads a scan off the UI thread and shows it when it arrives."""

from __future__ import annotations

from pathlib import Path


def wait_opened(win, qtbot, timeout: int = 30000) -> None:
    """Wait until no scan is being read (the one asked for is shown, or its error dialog is up)."""
    qtbot.waitUntil(lambda: not win.scans.opening, timeout=timeout)


def open_scan(win, qtbot, path: Path, timeout: int = 30000) -> bool:
    """Open a scan and wait for it: True when it is the scan shown."""
    if not win.open_scan(path):
        return False
    wait_opened(win, qtbot, timeout)
    return win.scans.path is not None and Path(win.scans.path).resolve() == Path(path).resolve()
