"""What a process does with SIGINT, read from the kernel: the Ctrl-C tests' own precondition.

Three Ctrl-C tests failed together in some full runs as if the SIGINT never came: an in-process connection ran to
its time-out, and a folder run in a child process digitised every scan and exited 0 (docs/benchmarks.md, twelfth
round). A process that ignores SIGINT (its disposition ``SIG_IGN``) or a thread that blocks it hands both to every
child it starts, and Python's own ``signal.getsignal`` still reports its handler when native code changed the
disposition underneath it; ``/proc`` says what the kernel will do. A test that finds SIGINT ignored or blocked
before it sends one says so in its failure, instead of failing as if the program under test lost it."""

from __future__ import annotations

import os
from pathlib import Path

SIGINT_BIT = 1 << 1  # signal 2 is bit 1 of the masks in /proc/PID/status


def sigint_state(pid: int | None = None, thread: int | None = None) -> dict[str, bool]:
    """SIGINT's state in process ``pid`` (this one by default), for thread ``thread`` (the process's main thread by
    default): ignored (process-wide disposition), caught (a handler installed), blocked and pending (the thread's).
    Empty where /proc cannot say (not Linux, or the process is gone)."""
    pid = os.getpid() if pid is None else pid
    path = Path(f"/proc/{pid}/task/{pid if thread is None else thread}/status")
    try:
        fields = dict(line.split(":", 1) for line in path.read_text().splitlines() if ":" in line)
    except OSError:
        return {}
    return {k: bool(int(fields[f].strip(), 16) & SIGINT_BIT) for k, f in
            (("ignored", "SigIgn"), ("caught", "SigCgt"), ("blocked", "SigBlk"), ("pending", "SigPnd"))
            if f in fields}


def sigint_deliverable(pid: int | None = None) -> bool:
    """Whether a SIGINT sent to ``pid`` reaches a handler or ends it: neither ignored nor blocked by its main
    thread (True where /proc cannot say)."""
    state = sigint_state(pid)
    return not (state.get("ignored") or state.get("blocked"))
