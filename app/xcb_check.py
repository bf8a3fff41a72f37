"""Before Qt starts: is there a display to show the window on, and can Qt's xcb plugin load?

Qt aborts (exit 134, SIGABRT) with its own raw message when it finds no display, and on a bare Linux
desktop names the wrong X library. Both are checked here first, so the user gets one line saying what to do.

Qt's own message on a bare Linux desktop names ``libxcb-cursor0`` even when that is installed and the
real gaps are others (``libxcb-icccm4``, ``libxcb-keysyms1`` on Debian/Ubuntu). The plugin's own
dependencies are read with ``ldd``, so the message names exactly what the loader cannot find.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

# soname -> Debian/Ubuntu package
PACKAGES = {"libxcb-cursor.so.0": "libxcb-cursor0", "libxcb-icccm.so.4": "libxcb-icccm4",
            "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxcb-image.so.0": "libxcb-image0",
            "libxcb-render-util.so.0": "libxcb-render-util0", "libxcb-xkb.so.1": "libxcb-xkb1",
            "libxkbcommon-x11.so.0": "libxkbcommon-x11-0", "libxcb-shape.so.0": "libxcb-shape0",
            "libxcb-randr.so.0": "libxcb-randr0", "libxcb-xinerama.so.0": "libxcb-xinerama0"}


def will_use_xcb() -> bool:
    plat = os.environ.get("QT_QPA_PLATFORM", "")
    if plat:
        return plat.split(":")[0] == "xcb"
    return sys.platform.startswith("linux") and bool(os.environ.get("DISPLAY")) \
        and not os.environ.get("WAYLAND_DISPLAY")


def display_problem() -> str | None:
    """Why the xcb platform cannot open a window here (no DISPLAY, or an X server that does not answer); None
    when it can, or when that cannot be told (no libxcb to ask: Qt's own check then decides)."""
    display = os.environ.get("DISPLAY", "")
    if not display:
        return ("there is no display to show the window on (DISPLAY is not set). Run WellTrace from a desktop "
                "session (or over `ssh -X`); without a screen the command line does the work (`welltrace --help`), "
                "and `welltrace --screenshot shot.png` renders the window to a picture")
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("xcb") or "libxcb.so.1"
    try:
        xcb = ctypes.CDLL(name)
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    conn = xcb.xcb_connect(display.encode(), None)  # never NULL: a failed connection is an error object
    try:
        failed = xcb.xcb_connection_has_error(conn) != 0
    finally:
        xcb.xcb_disconnect(conn)
    if failed:
        return (f"cannot connect to the X display {display!r}: no X server answers there. Check DISPLAY (and "
                "XAUTHORITY over ssh); `welltrace --screenshot shot.png` renders the window without a screen")
    return None


def missing_libraries() -> list[str]:
    """Sonames the xcb plugin (and Qt's xcb library) need that the loader cannot find; [] if none or unknown."""
    ldd = shutil.which("ldd")
    if not ldd:
        return []
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    files = [qt / "plugins" / "platforms" / "libqxcb.so", *sorted((qt / "lib").glob("libQt6XcbQpa.so*"))[:1]]
    missing: list[str] = []
    for f in files:
        if not f.exists():
            continue
        try:
            out = subprocess.run([ldd, str(f)], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            return []
        for line in out.splitlines():
            if "not found" in line:
                name = line.split("=>")[0].strip()
                if name not in missing:
                    missing.append(name)
    return missing


def advice(missing: list[str]) -> str:
    pkgs = " ".join(PACKAGES.get(m, m) for m in missing)
    return (f"the Qt xcb platform plugin cannot load: missing {', '.join(missing)}. "
            f"On Debian/Ubuntu: sudo apt-get install {pkgs} "
            "(or run offscreen: QT_QPA_PLATFORM=offscreen welltrace gui --screenshot shot.png)")
