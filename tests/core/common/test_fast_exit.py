"""A finished command's process ends without the interpreter's teardown, its exit handlers and streams kept."""

import gc
import subprocess
import sys
from pathlib import Path

from core.common import fast_exit

ROOT = Path(__file__).resolve().parents[3]


def test_the_exit_handlers_run_and_the_streams_are_flushed(tmp_path):
    mark = tmp_path / "handler_ran"
    script = (
        "import atexit, sys\n"
        "from core.common.fast_exit import exit_without_teardown\n"
        f"atexit.register(lambda: open({str(mark)!r}, 'w').write('yes'))\n"
        "sys.stdout.write('no newline, still buffered')\n"
        "sys.stderr.write('and this')\n"
        "exit_without_teardown(3)\n"
        "print('never')\n"
    )
    res = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 3
    assert res.stdout == "no newline, still buffered"
    assert res.stderr == "and this"
    assert mark.read_text() == "yes"


def test_a_digitize_that_fails_ends_with_its_status_and_its_line(tmp_path):
    res = subprocess.run([sys.executable, "-m", "app.launch", "digitize", str(tmp_path / "missing.tif"), "--classical",
                          "--calib", str(tmp_path / "missing.calib.json")], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2
    assert res.stderr.startswith("welltrace: ") and "missing" in res.stderr and "Traceback" not in res.stderr


def test_a_process_that_does_not_end_at_once_keeps_its_collector_as_it_was(monkeypatch):
    # gc.freeze watched, not the count of the permanent generation: the app's tests freeze this test run's heap
    # (app/heap.py), and frozen objects that die lower that count between two readings (1,013,802 -> 1,013,800)
    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    fast_exit.keep_loaded()  # this test run is no command's own process
    assert frozen == []


def test_a_process_that_ends_at_once_keeps_what_it_loaded_out_of_the_collector():
    script = (
        "import gc\n"
        "from core.common import fast_exit\n"
        "fast_exit.end_at_once()\n"
        "fast_exit.keep_loaded()\n"
        "print(gc.get_freeze_count())\n"
    )
    res = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert int(res.stdout) > 1000
