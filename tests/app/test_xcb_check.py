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
