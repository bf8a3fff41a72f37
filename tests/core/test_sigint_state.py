"""The Ctrl-C tests' precondition reads what the kernel will do with a SIGINT (``tests/core/sigint_state.py``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from tests.core.sigint_state import sigint_deliverable, sigint_state

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_a_thread_that_blocks_sigint_is_seen_and_the_main_thread_is_not_taken_for_it():
    seen = {}

    def blocking():
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])  # this thread's mask alone
        seen.update(sigint_state(thread=threading.get_native_id()))

    t = threading.Thread(target=blocking)
    t.start()
    t.join()
    assert seen["blocked"] is True
    here = sigint_state()
    assert here["blocked"] is False
    if here["ignored"]:  # this run was started ignoring SIGINT (a shell's background job): Python installed no handler
        assert here["caught"] is False and not sigint_deliverable()
    else:
        assert here["caught"] is True and sigint_deliverable()  # Python's handler raises KeyboardInterrupt


def test_a_process_that_ignores_sigint_is_seen_unable_to_take_one():
    """As a folder run started from a process that ignores SIGINT would be: it inherits the disposition."""
    child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                              "print('ready', flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        assert sigint_state(child.pid)["ignored"] is True
        assert not sigint_deliverable(child.pid)
    finally:
        child.kill()
        child.wait()
    assert sigint_state(child.pid) == {}  # gone: /proc cannot say
