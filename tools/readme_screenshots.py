"""Make the README's tour screenshots from the real app (offscreen), as a newcomer would see it.

    QT_QPA_PLATFORM=offscreen python tools/readme_screenshots.py docs/img

1. ``tour_demo.png``: first start — the demo project with the bundled model, one scan digitised.
2. ``tour_training.png``: the training dock after a short fp16 run with one overflow (a skipped step),
   the budget bar predicted and measured, the gradient histogram, the traced curve against truth.
(The real KGS scan is left out: the bundled model needs over 12 minutes for its 30 megapixels on a
2-core CPU; ``tests/app/test_main_window.py`` opens and traces it.)

Each picture is saved with a 128-colour palette to keep the repository small.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(out: Path) -> int:
    home = Path(tempfile.mkdtemp(prefix="welltrace-shots-"))
    os.environ.update(XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
                      WELLTRACE_SETTINGS_ORG="WellTraceShots")
    from PIL import Image
    from PySide6 import QtWidgets

    from app.main_window import MainWindow
    from app.startup import make_app

    app = make_app()
    out.mkdir(parents=True, exist_ok=True)

    def wait(cond, timeout=600.0):
        t0 = time.perf_counter()
        while not cond():
            app.processEvents()
            time.sleep(0.02)
            if time.perf_counter() - t0 > timeout:
                raise TimeoutError("the app did not reach the state in time")
        for _ in range(20):
            app.processEvents()
            time.sleep(0.02)

    def save(widget, name):
        path = out / name
        widget.grab().save(str(path))
        Image.open(path).convert("RGB").quantize(128, dither=Image.Dither.NONE).save(path, optimize=True)
        print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")

    win = MainWindow()
    win.resize(1500, 950)
    win.show()
    assert win.open_demo(), "the bundled demo project did not open"
    wait(lambda: not win.scans.opening)
    first = win.scans.project_list.topLevelItem(0)
    win.open_scan(Path(first.data(0, 0x0100)))
    wait(lambda: not win.scans.opening)
    win.actions_["from_mask"].setChecked(False)  # the demo scans are labelled: show the bundled model's trace
    win.digitizing.digitize()
    wait(lambda: win.digitizing.result is not None)
    win.curves_dock.raise_()
    h = win.scans.image.shape[0]
    win.view.zoom_to(0, int(h * 0.35), win.scans.image.shape[1], int(h * 0.6))
    wait(lambda: True)
    save(win, "tour_demo.png")

    win.show_training()
    d = win.training
    d.preset.setCurrentText("tiny")
    d.crop.setValue(512)
    d.precision.setCurrentText("fp16")
    d.steps.setValue(12)
    d.fault = {"overflow_steps": [4]}
    d.train_btn.click()
    wait(lambda: d.thread is not None and d.thread.isFinished() and d._finish_handled)
    save(win, "tour_training.png")
    d.shutdown()
    win.training.hide()

    win.flush()
    win.close()
    QtWidgets.QApplication.processEvents()
    shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "img"))
