"""Name the X libraries Qt's xcb platform plugin is missing, before Qt aborts with a misleading hint.

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
