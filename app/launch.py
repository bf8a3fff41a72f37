"""Console entry point: every subcommand of ``core.cli.main`` plus the GUI.

Qt is imported only when the GUI is asked for, so headless commands start
fast and run where no display exists.
"""

from __future__ import annotations

import multiprocessing
import sys


def run_gui(args) -> int:
    from core.common.errors import InputError

    try:
        from .startup import run  # noqa: PLC0415 - Qt loads only for the GUI
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("app."):
            raise InputError(None, "the desktop GUI is not part of this build yet; use the headless commands "
                             "(welltrace --help)") from None
        raise
    import os

    from .xcb_check import advice, display_problem, missing_libraries, will_use_xcb

    screen_less = sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM") \
        and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY")
    if screen_less and args.screenshot:  # a picture of the window needs no screen
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        screen_less = False
    if will_use_xcb() or screen_less:
        problem = display_problem()
        if problem:
            raise InputError(None, problem)
        missing = missing_libraries()
        if missing:
            raise InputError(None, advice(missing))
    return run(args.paths, screenshot=args.screenshot)


def main(argv: list[str] | None = None) -> int:
    multiprocessing.freeze_support()
    from core.cli.main import main as cli_main

    return cli_main(argv, gui=run_gui)


if __name__ == "__main__":
    sys.exit(main())
