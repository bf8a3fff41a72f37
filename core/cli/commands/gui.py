"""``welltrace gui`` (and ``welltrace``, ``welltrace SCAN``): the desktop application. Registered here, run by
``app`` (the engine never imports Qt): ``app.launch`` passes its runner to :func:`core.cli.main.main`."""

from __future__ import annotations

NAME = "gui"


def register(sub) -> None:
    g = sub.add_parser(NAME, help="open the desktop application (the default)")
    g.add_argument("paths", nargs="*", help="scans or project folders to open")
    g.add_argument("--screenshot", metavar="PNG", help="render the window once idle, save it, exit")
