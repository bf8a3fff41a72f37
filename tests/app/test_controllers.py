"""Each controller of the window built and driven alone: a shell that records what it says, the widgets it
needs, no main window."""

from pathlib import Path

import lasio
import numpy as np
import pytest
from PySide6 import QtWidgets

from app.scan_view import ScanView
from app.window.calibrating import CalibrationController
from app.window.digitizing import DigitizingController
from app.window.labelling import LabellingController
from app.window.model_offer import ModelOffer
from app.window.models import ModelController
from app.window.scans import ScanController
from app.window.shell import QuietShell
from core.io.calibration import Calibration
from core.io.scan import load_mask
from core.model.bundled import BUNDLED_MODEL
from core.synth import write_set
from tests.model_copies import nudged_bundled_model


@pytest.fixture
def project(tmp_path):
    write_set(tmp_path, 2, seed=4, width=900, height=256, depth_axis="y", style="clean")
    return tmp_path


def _opened(qtbot, scans: ScanController, path: Path):
    with qtbot.waitSignal(scans.opened, timeout=30000) as blocker:
        assert scans.open_scan(path)
    return blocker.args[0]


def _controllers():
    """The window's controllers over one quiet shell, as the main window wires them: shell, scans, view,
    calibration, models, labelling, digitising."""
    shell = QuietShell()
    scans, view = ScanController(shell), ScanView()
    cal = CalibrationController(shell, scans, view)
    models = ModelController(shell)
    lab = LabellingController(shell, scans, cal, models, view)
    return shell, scans, view, cal, models, lab, DigitizingController(shell, scans, cal, lab, models, view)


def test_scan_controller_opens_a_project_and_hands_the_scan_on(qtbot, project):
    shell = QuietShell()
    scans = ScanController(shell)
    with qtbot.waitSignal(scans.opened, timeout=30000) as blocker:
        assert scans.open_project(project)
    bundle = blocker.args[0]
    assert scans.path == project / "synth_000.png" and bundle.path == scans.path
    assert scans.image.shape == (900, 256) and scans.project_list.topLevelItemCount() == 2
    assert not scans.open_scan(project / "nope.png") and "nope.png" in shell.errors[-1]


def test_calibration_controller_loads_saves_and_reads_the_cursor(qtbot, project):
    shell = QuietShell()
    scans, view = ScanController(shell), ScanView()
    cal = CalibrationController(shell, scans, view)
    changes = []
    cal.changed.connect(lambda: changes.append(1))
    _opened(qtbot, scans, project / "synth_000.png")
    truth = Calibration.load(project / "synth_000.calib.json")
    assert cal.calib is not None and cal.calib.depth_picks == truth.depth_picks
    spec = truth.curves[0]
    text = cal.cursor_text(100.0, (spec.track_lo + spec.track_hi) / 2)
    assert f"depth {float(truth.depth_at(100.0)):.2f}" in text and spec.mnemonic in text
    # over a repeat pass, the repeat's own depths (the top-level picks were read there too)
    cal.panel.set_sections([{"kind": "main", "span": [0, 400]},
                            {"kind": "repeat", "span": [500, 890], "depth_picks": [[500, 7000.0], [890, 7100.0]]}])
    qtbot.waitUntil(lambda: cal.calib is not None and len(cal.calib.sections) == 2, timeout=3000)
    assert "depth 7050.00" in cal.cursor_text(695.0, spec.track_lo + 1)
    assert f"depth {float(truth.depth_at(100.0)):.2f}" in cal.cursor_text(100.0, spec.track_lo + 1)
    cal.panel.set_sections([])
    qtbot.waitUntil(lambda: cal.calib is not None and not cal.calib.sections, timeout=3000)
    changes.clear()
    cal.panel.set_track(0, spec.track_lo + 5, spec.track_hi)  # a dragged handle: saved beside the scan
    qtbot.waitUntil(lambda: bool(changes), timeout=3000)
    saved = Calibration.load(project / "synth_000.calib.json")
    assert saved.curves[0].track_lo == pytest.approx(spec.track_lo + 5, abs=0.01)


def test_labelling_controller_paints_undoes_and_autosaves(qtbot, project):
    shell = QuietShell()
    scans, view = ScanController(shell), ScanView()
    lab = LabellingController(shell, scans, CalibrationController(shell, scans, view), ModelController(shell),
                              view)
    _opened(qtbot, scans, project / "synth_000.png")
    before = lab.editor.mask.copy()
    view.set_tool("brush")
    lab.class_value, lab.brush_radius = 2, 4.0
    lab.stroke_start(100, 60)
    for i in range(0, 200, 4):
        lab.stroke_move(100 + i, 60 + i * 0.3)
    lab.stroke_end()
    assert (lab.editor.mask[100:300] == 2).sum() > 200
    qtbot.waitUntil(lambda: not lab.autosave_timer.isActive(), timeout=3000)
    lab.flush()
    assert np.array_equal(load_mask(project / "synth_000.mask.png", before.shape), lab.editor.mask)
    lab.undo()
    assert np.array_equal(lab.editor.mask, before)


def test_model_controller_offers_and_never_swaps_unasked(qtbot, tmp_path):
    shell = QuietShell()
    models = ModelController(shell)
    assert models.load(BUNDLED_MODEL) and models.name == "demo.safetensors"
    kept = models.model
    new = tmp_path / "model-new.safetensors"
    new.write_bytes(BUNDLED_MODEL.read_bytes())
    offer = ModelOffer(new, "training run (30 steps)", {"val_mask_f1": 0.61, "val_curve_r": 0.92,
                                                       "val_curve_rmse_pct": 5.32},
                       {"val_mask_f1": 0.93, "val_curve_r": 0.999, "val_curve_rmse_pct": 0.78}, models.name,
                       " on the run's 4 held-out log(s)")
    text = offer.question()
    assert "0.920" in text and "0.999" in text and "WORSE" in text and "held-out log" in text
    models.decide = lambda o: False
    models.offer(offer)
    assert models.model is kept and models.path == BUNDLED_MODEL and "kept demo.safetensors" in shell.messages[-1]
    # the dialog a user sees: the figures side by side, "keep" the default; it does not block the event loop
    models.decide = None
    models.offer(offer)
    box = next(w for w in QtWidgets.QApplication.topLevelWidgets()
               if isinstance(w, QtWidgets.QMessageBox) and w.isVisible())
    assert "0.999" in box.informativeText() and box.defaultButton().text() == "Keep the current model"
    box.defaultButton().click()
    assert models.path == BUNDLED_MODEL
    models.decide = lambda o: o.accept(fit=False)  # the tick box cleared: no fit (tests below fit one)
    with qtbot.waitSignal(models.changed, timeout=30000):
        models.offer(offer)
    assert models.path == new and models.model is not kept and shell.task is None


def test_digitising_controller_traces_the_labels_when_asked_and_writes_las_and_qc(qtbot, project):
    shell, scans, view, cal, models, lab, dig = _controllers()
    assert models.load(BUNDLED_MODEL)
    _opened(qtbot, scans, project / "synth_000.png")  # labelled: write_set wrote its mask
    assert lab.labelled_mask() is not None and not dig.trace_labels  # the model reads unless asked (issue 62)
    dig.trace_labels = True  # Run › Digitise from the labelled mask, ticked
    with qtbot.waitSignal(dig.digitized, timeout=120000):
        dig.digitize()
    assert dig.result.method == "mask"  # the labels, not the model
    las = lasio.read(str(project / "synth_000.digitized.las"))
    assert "method: mask" in las.other
    qtbot.waitUntil(lambda: (project / "synth_000.digitized.qc.png").exists(), timeout=30000)
    dig.trace_labels = False
    with qtbot.waitSignal(dig.digitized, timeout=120000):
        dig.digitize()
    assert dig.result.method.startswith("model")


def test_digitising_reads_with_the_bundled_model_unless_the_classical_tracer_is_chosen(qtbot):
    """A real scan opened without the demo project was read by the classical tracer, and the status bar said
    "(classical)" only afterwards: the model reads by default, and the classical tracer is the user's choice."""
    from core.model.bundled import BUNDLED_MODEL

    shell = QuietShell()
    models = ModelController(shell)
    assert models.model is None
    model, name = models.reader()
    assert model is not None and name == BUNDLED_MODEL.name and models.model is model
    models.use_classical = True
    assert models.reader() == (None, None)


def test_run_fit_confidence_fits_the_current_model_s_calibrator_off_the_ui_thread(qtbot, tmp_path, monkeypatch):
    """A model of its own (not the bundled network) loads with the offer of the fix; Run › Fit confidence… fits its
    calibrator in a task with progress (two small logs here, not the 80 the app reads), kept beside the model file,
    and the model then reads calibrated on it. The bundled model is calibrated already; without scikit-learn the
    user is told what to install."""
    import functools
    import sys

    from app.window.models import calibration_state
    from core.digitize.rules.confidence_model import sidecar_path
    from core.evaluation import network_calibrator

    mine = nudged_bundled_model(tmp_path / "mine.safetensors")
    shell = QuietShell()
    models = ModelController(shell)
    assert models.load(BUNDLED_MODEL) and calibration_state(models.model) == "bundled"
    models.fit_confidence()
    assert "calibrated already" in shell.errors[-1] and shell.task is None
    assert models.load(mine) and calibration_state(models.model) == "none"
    assert "not calibrated for it" in shell.messages[-1] and "Fit confidence" in shell.messages[-1]
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "sklearn", None)
        models.fit_confidence()
    assert "scikit-learn" in shell.errors[-1] and shell.task is None

    small = functools.partial(network_calibrator.fit_network_calibrator, count=1, families=("random", "dense"),
                              size=(800, 320))
    monkeypatch.setattr(network_calibrator, "fit_network_calibrator", small)
    steps = []
    with qtbot.waitSignal(models.changed, timeout=120000):
        models.fit_confidence()
        shell.task.progressed.connect(lambda i, n: steps.append((i, n)))
    assert sidecar_path(mine).is_file() and "is calibrated on it now" in shell.messages[-1]
    assert steps[-1] == (2, 2) and calibration_state(models.model) == "own"
    # a read's warning that its confidence is not measured for the model offers the app's fix, not the command
    from app.window.models import with_the_fix
    from core.digitize.rules.confidence_model import bundled_confidence, confidence_basis

    said = with_the_fix(confidence_basis(bundled_confidence(), "0123456789abcdef", mine)[1])
    assert said.startswith("confidence: ") and "Run › Fit confidence…" in said and "welltrace" not in said
    assert with_the_fix("GR: no evidence of the curve") == "GR: no evidence of the curve"


def test_the_offer_of_a_new_model_fits_its_confidence_and_a_cancelled_fit_resumes(qtbot, tmp_path, monkeypatch):
    """Eighteenth round: the offer of a trained or adapted model has a tick box, ticked where scikit-learn is
    installed, that fits the model's calibrator once the user takes it, as Run › Fit confidence… does (off the UI
    thread, progress, Cancel), after the long task under way if there is one; without scikit-learn it cannot be
    ticked and says what to install. Cancel writes nothing and keeps the maps read so far (the user's cache, under the
    model's digest): the next fit re-traces them.
    A small fit (two small logs) paused after its first log until the test has pressed Cancel."""
    import sys
    import threading

    from app.window.model_offer import offer_box
    from core.common.events import FitLogEvent
    from core.digitize.rules.confidence_model import sidecar_path
    from core.evaluation import network_calibrator as nc
    from core.model.model_io import model_digest

    monkeypatch.setattr(nc, "user_fit_cache", lambda: tmp_path / "cache")
    real, first_read, go_on = nc.fit_network_calibrator, threading.Event(), threading.Event()

    def small(model_path, out=None, cache_folder=None, count=None, **_how):
        for ev in real(model_path, out, cache_folder, 1, families=("random", "dense"), size=(640, 256)):
            yield ev
            if isinstance(ev, FitLogEvent) and ev.done == 1:
                first_read.set()
                assert go_on.wait(60)

    monkeypatch.setattr(nc, "fit_network_calibrator", small)
    mine = nudged_bundled_model(tmp_path / "mine.safetensors")
    shell = QuietShell()
    models = ModelController(shell)
    assert models.load(BUNDLED_MODEL)

    with monkeypatch.context() as m:
        m.setitem(sys.modules, "sklearn", None)
        blocked = ModelOffer(mine, "training run (3 steps)", {}, {}, models.name)
        box, _use = offer_box(None, blocked)
        assert not box.checkBox().isEnabled() and not box.checkBox().isChecked()
        assert "scikit-learn is not installed" in box.informativeText() and "welltrace[fit]" in box.informativeText()
        box.done(0)

    # the window is digitising when the user takes the model: the fit starts once that task has ended
    from app.workers import Task

    release = threading.Event()
    busy = Task(lambda progress: release.wait(60))
    shell.start_task(busy, lambda _result: None, "digitising…", "digitising cancelled")
    offer = ModelOffer(mine, "training run (3 steps)", {}, {}, models.name)
    models.decide = lambda o: o.accept()  # "Use mine.safetensors", the tick box as it comes
    models.FIT_WAIT_MS = 50
    with qtbot.waitSignal(models.changed, timeout=30000):
        models.offer(offer)
    assert models.path == mine and offer.fit_wanted and "minute" in offer.fit_text()
    assert "in the background with progress and Cancel" in offer.fit_detail()
    assert "fitted once the task under way ends" in shell.messages[-1] and shell.task is busy
    release.set()
    qtbot.waitUntil(lambda: models.fit_task is not None and shell.task is models.fit_task, timeout=10000)
    task = shell.task
    assert "fitting the confidence for mine.safetensors" in shell.messages[-1]
    qtbot.waitUntil(first_read.is_set, timeout=60000)
    task.cancel()  # Cancel (Esc), while the second log waits
    go_on.set()
    qtbot.waitUntil(lambda: not task.isRunning(), timeout=60000)
    qtbot.waitUntil(lambda: "cancelled" in shell.messages[-1], timeout=5000)
    assert "nothing written" in shell.messages[-1] and "resumes" in shell.messages[-1]
    assert not sidecar_path(mine).exists()
    kept = list((tmp_path / "cache" / f"{model_digest(mine)}-model").rglob("*.npz"))
    assert len(kept) >= 1  # the log read before Cancel (and the one under way)

    with qtbot.waitSignal(models.changed, timeout=120000):
        models.fit_confidence()  # Run › Fit confidence…: it resumes
    assert sidecar_path(mine).is_file() and not (tmp_path / "cache" / f"{model_digest(mine)}-model").exists()
    assert f"{len(kept)} of them from the maps an earlier fit kept" in shell.messages[-1]


def test_a_pick_dragged_or_typed_reaches_the_section_that_shares_the_picks(qtbot, project):
    """A proposal writes the main pass's section with its own copy of the top-level depth picks. The panel's table
    and the pick lines on the scan edit the top-level picks: a pick dragged to the right line, or a misread depth
    typed over, was saved beside the scan but the section still read its old copy, so the LAS kept the wrong
    depths. The section that shares the table's picks follows every edit of them."""
    import json

    path = project / "synth_000.calib.json"
    data = json.loads(path.read_text())
    data["sections"] = [{"kind": "main", "span": [40, 860], "depth_picks": data["depth_picks"]}]
    path.write_text(json.dumps(data))
    shell = QuietShell()
    scans, view = ScanController(shell), ScanView()
    cal = CalibrationController(shell, scans, view)
    _opened(qtbot, scans, project / "synth_000.png")
    (p0, d0), (p1, d1) = Calibration.load(path).depth_picks
    line = view.pick_lines[1]  # the second pick line dragged 30 px up the scan
    line.setValue(p1 - 30.0)
    line.sigPositionChangeFinished.emit(line)
    cal.panel.picks.item(0, 1).setText(f"{d0 + 100:g}")  # the first depth typed over
    saved = Calibration.load(path)
    assert saved.depth_picks == [(p0, d0 + 100), (p1 - 30.0, d1)]
    section = saved.section_calibration(0)  # what digitize reads for the main pass, in the section's pixels
    assert section.depth_at(p0 - 40) == pytest.approx(d0 + 100)
    assert section.depth_at(p1 - 30.0 - 40) == pytest.approx(d1)
    # a proposal accepted in the app: its picks into the table, its main pass with its own copy of them
    proposed = [(10.5, 1750.0), (880.25, 1900.125)]
    cal.panel.set_picks(proposed)
    cal.panel.set_sections([{"kind": "main", "span": [40, 860], "depth_picks": [list(p) for p in proposed]}])
    cal.panel.picks.item(1, 1).setText("1910")
    assert Calibration.load(path).section_calibration(0).depth_at(880.25 - 40) == pytest.approx(1910.0)


def test_a_repeat_pass_s_own_depth_picks_are_edited_in_the_panel_and_on_the_scan(qtbot, project):
    """A repeat pass prints depths of its own, and only the top-level picks could be edited in the app (the
    repeat's were the proposal's, right or wrong). The panel's "Picks of" chooses whose picks the table and the
    pick lines on the scan show: a depth typed over and a line dragged land in the repeat's own picks, the
    calibration's stay as they were; a section that had none takes its own at its first edit."""
    import json

    path = project / "synth_000.calib.json"
    data = json.loads(path.read_text())
    top = [tuple(p) for p in data["depth_picks"]]
    data["sections"] = [{"kind": "main", "span": [0, 450]},
                        {"kind": "repeat", "span": [450, 899], "depth_picks": [[460, 7000.0], [880, 7100.0]]}]
    path.write_text(json.dumps(data))
    shell = QuietShell()
    scans, view = ScanController(shell), ScanView()
    cal = CalibrationController(shell, scans, view)
    _opened(qtbot, scans, project / "synth_000.png")
    panel = cal.panel
    assert panel.picks_of.count() == 3 and panel.picks_of.isVisibleTo(panel)  # the calibration's, then each section
    panel.picks_of.setCurrentIndex(2)
    assert [(panel._num(r, 0), panel._num(r, 1)) for r in range(panel.picks.rowCount())] == [(460, 7000), (880, 7100)]
    assert [line.value() for line in view.pick_lines] == [460, 880]  # the repeat's lines on the scan
    panel.picks.item(1, 1).setText("7110")
    line = view.pick_lines[0]
    line.setValue(470.0)
    line.sigPositionChangeFinished.emit(line)
    saved = Calibration.load(path)
    assert saved.depth_picks == top and saved.sections[1].depth_picks == [(470.0, 7000.0), (880.0, 7110.0)]
    assert cal.cursor_text(675.0, 3.0).count("depth 7055.00") == 1
    panel.picks_of.setCurrentIndex(1)  # the main pass, which reads the calibration's: its own at its first edit
    panel.picks.item(0, 1).setText(f"{top[0][1] + 5:g}")
    saved = Calibration.load(path)
    assert saved.depth_picks == top and saved.sections[0].depth_picks == [(top[0][0], top[0][1] + 5), top[1]]
    panel.picks_of.setCurrentIndex(0)
    assert [(panel._num(r, 0), panel._num(r, 1)) for r in range(panel.picks.rowCount())] == top
    assert [line.value() for line in view.pick_lines] == [p for p, _ in top]


def test_a_depth_picked_by_hand_is_kept_to_the_digits_typed(qtbot, project):
    """The Pick tool's dialog takes three decimals, but the table showed a pick to six significant digits and saved
    what it showed: 1821.125 FT became 1821.12 (10150.25 FT 10150.2, a pick 0.05 ft off), and a loaded depth of
    1902.9364 was rewritten 1902.94 at the first edit of anything else."""
    shell = QuietShell()
    scans, view = ScanController(shell), ScanView()
    cal = CalibrationController(shell, scans, view)
    _opened(qtbot, scans, project / "synth_000.png")
    loaded = Calibration.load(project / "synth_000.calib.json").depth_picks
    cal.ask_depth = lambda pixel: 1821.125
    cal.pick_at(450.25, 100.0)
    saved = Calibration.load(project / "synth_000.calib.json")
    assert saved.depth_picks == sorted([*loaded, (450.25, 1821.125)])


def test_swapping_two_curves_swaps_their_confidence_traces_and_qc_picture_with_their_values(qtbot, project):
    """*Swap curves over a range…* exchanged the two curves' values in the LAS but not their CONF curves (GR_CONF
    then told how sure the reading of the other curve was, and was not NULL where GR now is), nor their traces on
    the scan, and the QC picture beside the LAS still showed the curves unswapped. All of them follow the swap."""
    import os

    from PIL import Image

    shell, scans, view, cal, models, lab, dig = _controllers()
    assert models.load(BUNDLED_MODEL)  # the network tells the curves of one track apart (the classical tracer not)
    _opened(qtbot, scans, project / "synth_000.png")
    with qtbot.waitSignal(dig.digitized, timeout=120000):
        dig.digitize()
    las_path, qc_path = project / "synth_000.digitized.las", project / "synth_000.digitized.qc.png"
    qtbot.waitUntil(qc_path.exists, timeout=30000)
    os.utime(qc_path, (1, 1))
    qc_before = np.asarray(Image.open(qc_path))
    a, b = [s.mnemonic for s in cal.calib.curves[:2]]
    res = dig.result
    d = res.depth
    top, bottom = float(d[len(d) // 4]), float(d[len(d) // 2])
    sel = (d >= top) & (d <= bottom)
    before = {k: {n: getattr(res, k)[n].copy() for n in (a, b)} for k in ("values", "confidence")}
    rows = np.arange(res.traces[0].position.size, dtype=float)
    in_range = (cal.calib.depth_at(rows) >= top) & (cal.calib.depth_at(rows) <= bottom)
    positions = {t.mnemonic: t.position.copy() for t in res.traces}
    assert not np.allclose(positions[a][in_range], positions[b][in_range], equal_nan=True)  # two lines, not one
    assert not np.allclose(before["confidence"][a][sel], before["confidence"][b][sel], equal_nan=True)
    assert dig.swap_curves(a, b, top, bottom)
    las = lasio.read(str(las_path))
    for name, other in ((a, b), (b, a)):
        assert np.array_equal(las[name][sel], before["values"][other][sel], equal_nan=True) or np.allclose(
            las[name][sel], before["values"][other][sel], atol=1e-3, equal_nan=True)
        conf = np.asarray(las[f"{name}_CONF"], float)
        assert np.allclose(conf[sel], before["confidence"][other][sel], atol=1e-3, equal_nan=True)
        assert np.array_equal(np.isnan(conf), np.isnan(np.asarray(las[name], float)))  # NULL exactly where it is
        trace = next(t for t in dig.result.traces if t.mnemonic == name)
        assert np.array_equal(trace.position[in_range], positions[other][in_range], equal_nan=True)
        assert np.array_equal(trace.position[~in_range], positions[name][~in_range], equal_nan=True)
    qtbot.waitUntil(lambda: qc_path.stat().st_mtime > 1, timeout=30000)  # the QC picture drawn again
    assert not np.array_equal(np.asarray(Image.open(qc_path)), qc_before)


def test_export_never_writes_over_the_scan_its_calibration_or_its_labels(qtbot, project):
    """*Export LAS* and *Export QC picture* took any path typed or browsed to: the scan itself (a slip in the
    dialog's File field, SCAN.png for SCAN.las) was replaced by a LAS, or by a QC picture, with no word. Each is
    refused with its reason, as `digitize --out SCAN` is, and the files stay as they were."""
    import hashlib

    shell, scans, view, cal, models, lab, dig = _controllers()
    models.use_classical = True
    _opened(qtbot, scans, project / "synth_000.png")
    with qtbot.waitSignal(dig.digitized, timeout=120000):
        dig.digitize()
    inputs = [project / n for n in ("synth_000.png", "synth_000.calib.json", "synth_000.mask.png")]
    before = [hashlib.md5(p.read_bytes()).hexdigest() for p in inputs]
    for target in inputs:
        assert not dig.export_las(target)
        assert str(target) in shell.errors[-1] and "destroy" in shell.errors[-1]
        assert not dig.write_qc(target)
        assert "destroy" in shell.errors[-1]
    qtbot.wait(500)  # a QC picture that was started anyway would land here
    assert [hashlib.md5(p.read_bytes()).hexdigest() for p in inputs] == before
    assert dig.export_las(project / "synth_000.las")


def test_every_warning_of_a_digitise_stays_in_sight_over_the_curves(qtbot, project):
    """The app showed each warning of a digitise in the status bar, one after the other at once: only the last
    stayed, ten seconds (33-025-01231-0014 gives six, the crossings to fix with Swap among them). They are listed
    over the digitised curves until the next result, and the status line counts them."""
    import json

    path = project / "synth_000.calib.json"
    data = json.loads(path.read_text())
    own = [[p, d + 10.0] for p, d in data["depth_picks"]]  # the main pass's own picks, apart from the top-level
    data["sections"] = [{"kind": "main", "span": [0, 2000], "depth_picks": own}]  # the scan is 900 px long
    path.write_text(json.dumps(data))
    shell, scans, view, cal, models, lab, dig = _controllers()
    models.use_classical = True
    _opened(qtbot, scans, project / "synth_000.png")
    assert dig.warnings.isHidden()
    with qtbot.waitSignal(dig.digitized, timeout=120000):
        dig.digitize()
    shown = dig.warnings.toPlainText()
    assert "sections[0].span ends at 2000 px" in shown and "differ from the top-level depth_picks" in shown
    assert not dig.warnings.isHidden()
    assert any("2 warning(s)" in m for m in shell.messages[-3:]), shell.messages[-3:]
    _opened(qtbot, scans, project / "synth_001.png")  # another scan: its own result, no warnings of this one
    assert dig.warnings.isHidden() and dig.warnings.toPlainText() == ""


def test_the_status_line_of_an_opened_scan_keeps_its_notes_apart(qtbot, tmp_path):
    """A colour LZW TIFF opened read "… P, compression tiff_lzw colour: kept for ink colours; …": two notes run
    together as one."""
    from PIL import Image

    rgb = np.full((400, 120, 3), 250, np.uint8)
    rgb[:, 60] = (200, 30, 30)
    Image.fromarray(rgb).save(tmp_path / "c.tif", compression="tiff_lzw")
    shell = QuietShell()
    scans = ScanController(shell)
    _opened(qtbot, scans, tmp_path / "c.tif")
    line = next(m for m in shell.messages if m.startswith("c.tif:"))
    # Pillow's TIFF says 1 dpi when given none: a third note, kept apart from both
    assert "compression tiff_lzw; the file says 1 × 1 dpi" in line and "not used; colour" in line, line


def test_a_calibration_with_a_misspelt_field_opens_saying_so(qtbot, project):
    """`"Log": true` typed for `"log"` in a calibration written by hand: the app opened it on a linear scale
    with no word, and its first save dropped the field. It says which fields it ignored and what they meant."""
    import json

    path = project / "synth_000.calib.json"
    data = json.loads(path.read_text())
    data["curves"][1]["Log"] = True
    path.write_text(json.dumps(data))
    shell = QuietShell()
    scans, view = ScanController(shell), ScanView()
    CalibrationController(shell, scans, view)
    _opened(qtbot, scans, project / "synth_000.png")
    assert any('curves[1].Log (did you mean "log"?)' in e for e in shell.errors), shell.errors


def test_export_las_writes_every_pass_with_the_well_name(qtbot, project):
    """*Export LAS* on a scan with a repeat pass wrote the main pass alone: the repeat pass, digitised beside the
    scan, never reached the exported set with the well's name. Each section goes beside the exported file as
    `digitize --out` names them (OUT.repeat.las)."""
    import json

    path = project / "synth_000.calib.json"
    data = json.loads(path.read_text())
    (p0, d0), (p1, d1) = data["depth_picks"]
    data["sections"] = [{"kind": "main", "span": [0, 450]},
                        {"kind": "repeat", "span": [450, 899], "depth_picks": [[450, d0], [899, d0 + (d1 - d0) / 2]]}]
    path.write_text(json.dumps(data))
    shell, scans, view, cal, models, lab, dig = _controllers()
    models.use_classical = True
    _opened(qtbot, scans, project / "synth_000.png")
    with qtbot.waitSignal(dig.digitized, timeout=120000):
        dig.digitize()
    assert (project / "synth_000.digitized.repeat.las").is_file()
    out = project / "export" / "well.las"
    assert dig.export_las(out, "Smith 1", "ACME")
    for name in ("well.las", "well.repeat.las"):
        las = lasio.read(str(out.parent / name))
        assert las.well["WELL"].value == "Smith 1" and las.well["COMP"].value == "ACME", name
    assert lasio.read(str(out.parent / "well.repeat.las")).index[0] == pytest.approx(d0, abs=0.5)
    # the scan opened again, from its LAS files: its export writes the repeat pass too (it lost it)
    shell, scans, view, cal, models, lab, dig = _controllers()
    _opened(qtbot, scans, project / "synth_000.png")
    assert dig.result is not None and [suffix for suffix, _ in dig.result.others] == ["repeat"]
    again = project / "again" / "well.las"
    assert dig.export_las(again, "Smith 1", "ACME")
    first, second = (lasio.read(str(folder / "well.repeat.las")) for folder in (out.parent, again.parent))
    assert second.index == pytest.approx(first.index) and second.keys() == first.keys()
