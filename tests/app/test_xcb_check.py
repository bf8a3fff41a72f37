"""The app names the X libraries the xcb plugin lacks, with the packages that hold them."""


def test_missing_x_libraries_are_named_with_their_packages(monkeypatch):
    from app import xcb_check

    monkeypatch.setattr(xcb_check.subprocess, "run", lambda *a, **k: type("R", (), {
        "stdout": "\tlibxcb-icccm.so.4 => not found\n\tlibc.so.6 => /lib/libc.so.6\n\tlibxcb-keysyms.so.1 => not found\n"})())
    monkeypatch.setattr(xcb_check.shutil, "which", lambda name: "/usr/bin/ldd")
    missing = xcb_check.missing_libraries()
    assert missing == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    text = xcb_check.advice(missing)
    assert "apt-get install libxcb-icccm4 libxcb-keysyms1" in text and "offscreen" in text
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert not xcb_check.will_use_xcb()


def _welltrace(env_changes: dict, *args):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.update(env_changes)
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, env=env, timeout=120)


def test_no_display_is_one_clear_line_and_exit_2_not_a_qt_abort():
    """Without DISPLAY Qt aborts with exit 134 and its raw message; the app says what to do first."""
    import sys

    import pytest

    if not sys.platform.startswith("linux"):
        pytest.skip("X11 displays are a Linux matter")
    res = _welltrace({})
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "no display" in lines[0] and "DISPLAY is not set" in lines[0]
    res = _welltrace({"DISPLAY": ":87"})  # set, but no X server answers there
    assert res.returncode == 2 and "cannot connect to the X display ':87'" in res.stderr
