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


# Commands whose process ends without the interpreter's teardown once they are done (``core/common/fast_exit.py``:
# 2.0-2.3 s of a KGS ``digitize``'s wall at load 6-7, ~1 s of CPU): they close what they write and join what they start
ENDS_AT_ONCE = ("digitize", "bench-digitize")


def console(argv: list[str] | None = None) -> int:
    """The process's entry (``python -m app.launch``, the ``welltrace`` script): :func:`main`; for the commands of
    :data:`ENDS_AT_ONCE` the process is the command's own (what it loads is kept out of the collector's passes) and
    ends there and then, its exit handlers run."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not (argv and argv[0] in ENDS_AT_ONCE):
        return main(argv)
    from core.common.fast_exit import end_at_once, exit_without_teardown
    from core.common.threads import openmp_threads_sleep_when_idle

    openmp_threads_sleep_when_idle()  # before PyTorch loads its OpenMP runtime
    end_at_once()
    exit_without_teardown(main(argv))


if __name__ == "__main__":
    sys.exit(console())
