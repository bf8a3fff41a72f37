"""Ending a finished command's process without Python's teardown, and keeping what it loaded out of the collector's
way until then.

After ``digitize`` of KGS has written its LAS, the interpreter's own finalisation took 2.4-2.8 s more on the 2-core
EPYC at load 6-7 (0.4-0.5 s with this; ``perf`` of that stretch: ~1 s of CPU, two thirds of it the garbage
collector's final passes over the modules of PyTorch, numba, SciPy and pydantic, the rest PyTorch's operators
deregistering and the module dicts cleared), time
that writes nothing and frees nothing the system does not take back at once. So a command that is done hands the
process back at once (:func:`exit_without_teardown`): the exit handlers registered with :mod:`atexit` still run
(logging's flush, temporary folders' removal, multiprocessing's reaping of its children), the standard streams are
flushed, then ``os._exit``.

A process that ends so (:func:`end_at_once`, said by the command line's entry, never by a library or a test run)
keeps every object it has loaded until its end anyway: :func:`keep_loaded` moves them out of the collector's
generations (``gc.freeze``), so its full passes during the work no longer walk PyTorch's and the project's modules.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from typing import NoReturn

_ENDS_AT_ONCE = [False]


def end_at_once() -> None:
    """Say that this process is a command's own and ends with it (``app/launch.py: console``)."""
    _ENDS_AT_ONCE[0] = True


def keep_loaded() -> None:
    """In a process that ends at once, what is alive now stays out of the garbage collector's passes (``gc.freeze``);
    elsewhere (the app, a worker, a test run) nothing changes."""
    if _ENDS_AT_ONCE[0]:
        gc.freeze()


def exit_without_teardown(code: int) -> NoReturn:
    """End the process with ``code`` now: :mod:`atexit`'s handlers, the standard streams flushed, no interpreter
    teardown. Only for a process whose work is done and whose files are closed (a command's end, never a library)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more to say on it
            pass
    os._exit(code)
