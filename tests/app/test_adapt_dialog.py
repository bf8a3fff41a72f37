"""The few-shot loop in the app: label, Adapt, Digitise all unlabelled scans.

In a module of its own: run in one process right after the full-size-scan test of test_main_window,
starting the adapt child crashed Qt (a segfault in the event loop while the launcher thread created the
child's queue; it does not happen with a few seconds between the two, nor in this order). Not yet
diagnosed; see the session notes.
"""

from pathlib import Path

import lasio
import numpy as np
import pytest

from core.io.calibration import Calibration
from core.model.bundled import BUNDLED_MODEL as BUNDLED
from core.synth import write_set

from .opening import open_scan, wait_opened
from .test_main_window import _shot, win  # noqa: F401 - the same window fixture and screenshot helper


@pytest.mark.slow
def test_label_adapt_and_digitise_the_rest(win, qtbot, tmp_path, shots_dir):
    """The few-shot loop through the real widgets: pre-fill and correct a mask, Adapt (a tiny budget), the
    before/after table, Digitise all unlabelled scans, LAS files read back."""
    write_set(tmp_path, 5, seed=11, width=640, height=192, depth_axis="y", style="uniform")
    for p in tmp_path.glob("*.truth.las"):
        p.unlink()  # a user's project: the labels are the truth
    for name in ("synth_003", "synth_004"):  # two scans not labelled yet: digitised at the end
        (tmp_path / f"{name}.mask.png").unlink()
    assert win.open_project(tmp_path)
    wait_opened(win, qtbot)
    assert win.models.model is not None or win.models.load(BUNDLED)
    assert open_scan(win, qtbot, tmp_path / "synth_003.png")
    win.labelling.prefill()  # the model's mask, off the UI thread ...
    qtbot.waitUntil(lambda: win.labelling.editor.mask.any() and not win.task.isRunning(), timeout=30000)
    win.paint_stroke([(100 + i, 60.0) for i in range(0, 40, 2)], erase=True)  # ... and one correction
    win.flush()
    assert (tmp_path / "synth_003.mask.png").exists()  # now labelled: adapted on, not digitised
    win.training.run.thread = None
    offers = []
    # the user says yes to the adapted model (its confidence's fit, the offer's tick box: tests/app/test_controllers.py)
    win.models.decide = lambda offer: offers.append(offer) or offer.accept(fit=False)
    win.actions_["adapt"].trigger()
    dlg = win.adapting.dlg
    dlg.minutes.setValue(0.1)  # the dialog's least: the loop runs its one pilot step and scores it whatever the budget
    dlg.start_btn.click()
    qtbot.waitUntil(lambda: not dlg.running(), timeout=180000)
    assert dlg.report is not None and dlg.report.out, dlg.status.text()
    assert dlg.table.item(0, 1) is not None and dlg.table.item(1, 1) is not None  # curve r before / after
    assert Path(dlg.report.out).parent == tmp_path / "models" and BUNDLED.exists()
    qtbot.waitUntil(lambda: win.models.path is not None and win.models.path.name.startswith("adapted-"), timeout=30000)
    # it was offered with its held-out figures beside those of the model it started from
    offer = offers[0]
    assert offer.origin == "adaptation" and offer.current_name == "demo.safetensors"
    assert offer.new["val_curve_r"] is not None and offer.current["val_curve_r"] is not None
    assert "curve r" in offer.question() and "synth_" in offer.held_out
    _shot(dlg, shots_dir, "adapt_dialog.png")
    dlg.digitize_btn.click()
    qtbot.waitUntil(lambda: win.digitizing.last_batch is not None, timeout=120000)
    written, skipped = win.digitizing.last_batch
    assert not skipped and [p.name for p in written] == ["synth_004.digitized.las"]
    assert (tmp_path / "synth_004.digitized.qc.png").exists()  # each LAS with its QC picture
    las = lasio.read(str(written[0]))
    calib = Calibration.load(tmp_path / "synth_004.calib.json")
    assert las.well["NULL"].value == -999.25
    assert [c.mnemonic for c in las.curves[1:] if not c.mnemonic.endswith("_CONF")] == [c.mnemonic for c in calib.curves]
    assert all(np.isfinite(c.data).any() for c in las.curves[1:])  # traced, not an empty file
    assert "adapted-" in str(las.other)  # written with the adapted model
    # refused while a training run is going
    win.training.run.thread = type("Busy", (), {"isRunning": lambda self: True})()
    win.actions_["adapt"].trigger()
    assert "training run is going" in win.last_error
    win.training.run.thread = None
