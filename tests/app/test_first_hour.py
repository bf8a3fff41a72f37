"""The first hour with a scan, as a new user meets it: a window that fits, a log you can read, a next step,
a calibration proposed, curves you can read off the dock."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from PySide6 import QtWidgets

from app.curve_plots import _label
from core.digitize.calibrate.ocr import ocr_available

from .opening import open_scan, wait_opened
from .test_main_window import _shot, win  # noqa: F401 - the same window fixture and screenshot helper

SIZES = [(1280, 720), (1920, 1080)]


def _elided(widget: QtWidgets.QWidget) -> list[str]:
    """Texts of labels and buttons inside ``widget`` that do not fit their widget's width."""
    out = []
    for w in widget.findChildren(QtWidgets.QLabel) + widget.findChildren(QtWidgets.QAbstractButton):
        text = w.text().replace("&", "")
        if not w.isVisible() or not text or "<" in text or (isinstance(w, QtWidgets.QLabel) and w.wordWrap()):
            continue
        if w.fontMetrics().horizontalAdvance(text) > w.contentsRect().width() + 1:
            out.append(text)
    return out


@pytest.mark.parametrize("size", SIZES)
def test_the_demo_opens_digitised_and_fits_the_window(win, qtbot, size, shots_dir):
    win.resize(*size)
    assert win.open_demo()
    wait_opened(win, qtbot)
    qtbot.waitUntil(lambda: win.digitizing.result is not None, timeout=120000)  # the first scan digitises itself
    qtbot.wait(100)
    # the next step is highlighted, and it is the one after digitising
    assert win.steps.isVisible() and win.steps.next_step() == "export"
    assert "export" in win.steps.hint.text().lower() and "LAS" in win.steps.hint.toolTip()
    shown = win.steps.hint.fontMetrics().horizontalAdvance(win.steps.hint.text())
    assert shown <= win.steps.hint.width()  # the next step's line is read in full, not cut
    # every primary action of the workflow is on the toolbar, not in its overflow
    tb = win.findChild(QtWidgets.QToolBar, "main_toolbar")
    for key in ("open_scan", "open_project", "tool_pick", "prefill", "digitize", "adapt", "train", "export"):
        button = tb.widgetForAction(win.actions_[key])
        assert button is not None and button.isVisible() and tb.rect().contains(button.geometry()), key
    # no label or button clipped in the calibration dock or the steps bar; project states in full
    win.calib_dock.raise_()
    qtbot.wait(50)
    assert _elided(win.calibration.panel) == [] and _elided(win.steps) == []
    calib_scroll = win.calib_dock.widget()
    assert not calib_scroll.horizontalScrollBar().isVisible()  # the panel fits the dock's width
    lst = win.scans.project_list
    for i in range(lst.topLevelItemCount()):
        item = lst.topLevelItem(i)
        widest = max(lst.fontMetrics().horizontalAdvance(line) for line in item.text(0).splitlines())
        assert widest <= lst.viewport().width(), item.text(0)
    # every digitised curve is reachable: all in view, or the dock scrolls to the rest
    win.curves_dock.raise_()
    qtbot.wait(50)
    plots = win.digitizing.plots.plots
    assert len(plots) == len(win.calibration.calib.curves)
    inner, area = win.digitizing.plots.layout_widget, win.digitizing.plots.viewport()
    assert inner.width() <= area.width() and win.digitizing.plots.horizontalScrollBar().maximum() == 0  # all in view
    for p, spec in zip(plots, win.calibration.calib.curves):  # each track's scale is readable: at least its two ends, as
        # tick labels where the plot is wide enough, else in the label under it
        axis = p.getAxis("bottom")
        shown = " ".join(t for _, t in axis._tickLevels[0]) + " " + axis.labelText
        assert all(_label(v) in shown for v in spec.scale), (spec.mnemonic, shown)
        assert p.sceneBoundingRect().width() > 40
    heights = {round(p.getViewBox().sceneBoundingRect().height()) for p in plots}
    assert len(heights) == 1, heights  # one height: a depth lies level across the plots
    _shot(win, shots_dir, f"first_start_{size[0]}x{size[1]}.png")
    # the training dock open: the scan keeps most of the height, every instrument its title
    win.show_training()
    qtbot.wait(200)
    assert win.view.height() >= 0.4 * win.height(), (win.view.height(), win.height())
    assert win.training.compact == (size[1] < win.COMPACT_HEIGHT_PX)
    _shot(win, shots_dir, f"training_open_{size[0]}x{size[1]}.png")
    rows = win.training.rows[:1] if win.training.compact else win.training.rows  # a tab each, or both in sight
    for row in rows:
        assert row.isVisible() and row.height() >= 150, (row.objectName(), row.height())
    _shot(win, shots_dir, f"training_open_{size[0]}x{size[1]}.png")
    win.training.hide()


def test_a_tall_log_opens_fitted_to_its_tracks_with_an_overview_to_move_along(win, qtbot, tmp_path, shots_dir):
    from core.synth import generate_log, write_log

    log = generate_log(5, 6000, 384, "y", style="classic", name="tall")
    write_log(tmp_path, log)
    assert open_scan(win, qtbot, tmp_path / "tall.png")
    qtbot.wait(50)
    r = win.view.visible_scan_rect()
    tracks = [s.track for s in log.calibration.curves]
    lo, hi = min(min(t) for t in tracks), max(max(t) for t in tracks)
    assert r.left() <= lo + 2 and r.right() >= hi - 2  # the tracks across the view
    assert r.width() < 1.3 * (hi - lo) and r.height() < 0.5 * 6000  # not a thin strip of the whole log
    start, stop = win.view.depth_window("y")
    assert start < 0.02 and stop < 0.5  # from the top of the log
    # the overview frames that window; a click on it moves the view there
    frame = win.overview.frame.rect()
    assert frame.top() / win.overview.length < 0.02 and frame.height() / win.overview.length < 0.5
    win.overview.moved.emit(0.75)
    qtbot.wait(50)
    a, b = win.view.depth_window("y")
    assert abs((a + b) / 2 - 0.75) < 0.02 and abs((b - a) - (stop - start)) < 0.01  # moved, zoom kept
    # a zoomed-out view draws an averaged display level, not scattered full-resolution pixels
    win.view.vb.autoRange()
    qtbot.wait(50)
    assert win.view.level > 0
    _shot(win, shots_dir, "tall_log_overview.png")


def test_a_digitised_scan_opened_again_shows_its_curves(win, qtbot, tmp_path):
    from core.synth import generate_log, write_log

    write_log(tmp_path, generate_log(8, 1200, 320, "y", style="clean", name="w"))
    assert open_scan(win, qtbot, tmp_path / "w.png")
    win.digitizing.digitize()
    qtbot.waitUntil(lambda: win.digitizing.result is not None, timeout=120000)
    first = {k: v.copy() for k, v in win.digitizing.result.values.items()}
    # open another scan, then this one again: the digitised LAS is read back with its traces
    write_log(tmp_path, generate_log(9, 1200, 320, "y", style="clean", name="v"))
    assert open_scan(win, qtbot, tmp_path / "v.png") and win.digitizing.result is None
    assert open_scan(win, qtbot, tmp_path / "w.png") and win.digitizing.result is not None
    for k, v in first.items():  # as written to the LAS (four decimals), NULLs where they were
        back = win.digitizing.result.values[k]
        assert back.shape == v.shape and np.array_equal(np.isnan(back), np.isnan(v))
        assert np.nanmax(np.abs(back - v)) < 1e-3 * max(1.0, np.nanmax(np.abs(v)))
    assert any(np.isfinite(t.position).mean() > 0.8 for t in win.digitizing.result.traces)
    assert win.steps.next_step() == "export"


@pytest.mark.skipif(ocr_available() is not None, reason="Tesseract is not installed")
def test_the_app_writes_the_same_las_as_the_command(win, qtbot, tmp_path, kgs_scan):
    """One KGS window digitised in the app (the bundled model, off the UI thread) and by ``welltrace digitize``:
    the same values. The app read in "auto" precision (bf16 on a CPU with AVX512-BF16), the command in the
    model's own fp32."""
    import lasio

    from core.cli.main import main
    from core.io.scan import load_scan, save_gray_png
    from core.model.bundled import BUNDLED_MODEL

    calib = json.loads((Path(__file__).resolve().parents[1] / "data" / "kgs_273101_bhc_sonic.calib.json").read_text())
    calib["depth_picks"] = [[px - 2527, d] for px, d in calib["depth_picks"]]
    save_gray_png(tmp_path / "kgs.png", load_scan(kgs_scan).image[2527:3800])
    (tmp_path / "kgs.calib.json").write_text(json.dumps(calib))
    assert main(["digitize", str(tmp_path / "kgs.png"), "--calib", str(tmp_path / "kgs.calib.json"), "--model",
                 str(BUNDLED_MODEL), "--out", str(tmp_path / "command.las")]) == 0
    assert open_scan(win, qtbot, tmp_path / "kgs.png")
    win.digitizing.digitize()
    qtbot.waitUntil(lambda: win.digitizing.result is not None, timeout=120000)
    qtbot.waitUntil(lambda: (tmp_path / "kgs.digitized.las").is_file(), timeout=30000)
    app, command = lasio.read(tmp_path / "kgs.digitized.las"), lasio.read(tmp_path / "command.las")
    assert [c.mnemonic for c in app.curves] == [c.mnemonic for c in command.curves]
    for c in command.curves[1:]:
        a, b = app[c.mnemonic], command[c.mnemonic]
        assert np.array_equal(np.isfinite(a), np.isfinite(b)) and np.allclose(a, b, equal_nan=True), c.mnemonic


@pytest.mark.skipif(ocr_available() is not None, reason="Tesseract is not installed")  # the depth picks are read
def test_propose_calibration_fills_the_picks_and_offers_the_tracks(win, qtbot, tmp_path, shots_dir):
    from tests.core.digitize.calibrate.test_calibration_proposal import PX_PER_FT, TOP, _page

    img, truth = _page()
    cv2.imwrite(str(tmp_path / "paper.png"), img)
    assert open_scan(win, qtbot, tmp_path / "paper.png") and win.calibration.calib is None
    assert win.steps.next_step() == "calibrate"
    win.steps.buttons["calibrate"].click()  # the highlighted step: proposes a calibration
    qtbot.waitUntil(lambda: win.calibration.last_proposal is not None, timeout=60000)
    picks = win.calibration.panel.as_dict()["depth_picks"]
    assert len(picks) >= 4
    for px, depth in picks:
        assert abs(TOP + px / PX_PER_FT - depth) < 0.3
    assert len(win.view.proposal_items) == 2 * len(truth)
    # the depths are picked: what is left of calibrating is naming the curves, and the bar says so
    assert win.steps.next_step() == "calibrate" and "name each curve" in win.steps.hint.text()
    win.calibration.panel.add_curve.click()  # a new curve takes the first proposed track
    track = win.calibration.panel.as_dict()["curves"][0]["track"]
    assert abs(min(track) - truth[0][0]) <= 2 and abs(max(track) - truth[0][1]) <= 2
    assert win.calibration.calib is not None and len(win.calibration.calib.depth_picks) == len(picks)  # saved as the scan's calibration
    saved = json.loads(Path(tmp_path / "paper.calib.json").read_text())
    assert len(saved["proposed_tracks"]) == len(truth)  # the first curve added keeps the rest of the tracks
    assert win.steps.next_step() == "calibrate"  # CURVE1, 0-100, no unit: not yet a curve anyone named
    win.calibration.panel.form.mnemonic.setText("GR")
    win.calibration.panel.form.unit.setText("GAPI")
    win.calibration.panel.form.unit.editingFinished.emit()  # as leaving the field does
    qtbot.waitUntil(lambda: win.steps.next_step() != "calibrate", timeout=5000)
    # a second proposal asks before it replaces the picks; "no" keeps them
    win.confirm = lambda question: False
    win.calibration.last_proposal = None
    win.calibration.panel.propose.click()
    qtbot.waitUntil(lambda: win.calibration.last_proposal is not None, timeout=60000)
    assert win.calibration.panel.as_dict()["depth_picks"] == picks
    _shot(win, shots_dir, "calibration_proposed.png")


def test_real_scans_open_readable(win, qtbot, shared_data, shots_dir):
    """The KGS 1-bit log and the three colour logs: each opens with its tracks across the view, not as a strip."""
    for name in ("kgs_273101_bhc_sonic.tif", "iqa_33-023-01146-0006.tif", "iqa_33-023-01135-0001.tif",
                 "iqa_33-023-01145-0002.tif"):
        assert open_scan(win, qtbot, shared_data / "scans" / name, timeout=60000), name
        qtbot.wait(100)
        h, w = win.scans.image.shape[:2]
        r = win.view.visible_scan_rect()
        assert r.width() <= 1.1 * w and r.height() < 0.6 * h, name  # fitted across, a readable stretch along
        _shot(win, shots_dir, f"first_view_{Path(name).stem}.png")


def test_a_screenshot_run_shows_the_digitised_demo_and_leaves_the_saved_geometry_alone(tmp_path):
    """`welltrace --screenshot` shoots the demo once it is digitised (the README's picture), and its offscreen
    window's size is not what the next real start opens at."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "HOME": str(tmp_path), "WELLTRACE_SETTINGS_ORG": "WellTraceScreenshotTest"}
    shot = tmp_path / "shot.png"
    res = subprocess.run([sys.executable, "-m", "app.launch", "--screenshot", str(shot)], env=env,
                         capture_output=True, text=True, timeout=400, cwd=Path(__file__).resolve().parents[2])
    assert res.returncode == 0, res.stderr[-2000:]
    assert shot.is_file() and cv2.imread(str(shot)) is not None
    saved = "".join(p.read_text(errors="replace") for p in (tmp_path / "config").rglob("*.conf"))
    assert "geometry" not in saved


def test_the_steps_bar_goes_on_to_export_once_digitised_without_a_label():
    """A scan digitised with the classical tracer (no model, no mask) skipped labelling: next is export."""
    from app.next_step import ScanSteps

    assert ScanSteps(calibrated=True, picked=True, digitized=True).next() == "export"
    assert ScanSteps(calibrated=True, picked=True).next() == "label"  # not yet digitised: label first (no model)
    assert ScanSteps(picked=True).short_hint() == "Next: calibrate (name each curve and its scale)"
    assert ScanSteps().short_hint() == "Next: calibrate (Propose calibration)"


def test_a_refused_proposals_draft_opens_and_curves_read_from_the_box_are_confirmed_before_digitising(
        win, qtbot, tmp_path):
    """A draft left by a refused proposal (tracks and scale-box curves, no depths) opens with its curves; once two
    depths are picked, Digitise asks before it reads curves nobody has checked, and a yes confirms them."""
    from core.synth import generate_log, write_log

    write_log(tmp_path, generate_log(3, 1200, 320, "y", style="clean", name="d"))
    cal = json.loads((tmp_path / "d.calib.json").read_text())
    draft = {**cal, "depth_picks": [], "draft": "no depth picks proposed (no depth column): pick two depths by hand",
             "proposed_tracks": [c["track"] for c in cal["curves"]],
             "curves": [{**c, "proposed": True} for c in cal["curves"]]}
    (tmp_path / "d.calib.json").write_text(json.dumps(draft))
    assert open_scan(win, qtbot, tmp_path / "d.png") and win.calibration.calib is None
    names = [c["mnemonic"] for c in cal["curves"]]
    assert [c["mnemonic"] for c in win.calibration.panel.as_dict()["curves"]] == names
    assert all("read, check" in win.calibration.panel.curve_list.item(i).text() for i in range(len(names)))
    win.calibration.panel.set_picks([tuple(p) for p in cal["depth_picks"]])  # the two depths picked by hand
    assert win.calibration.calib is not None and win.calibration.calib.unconfirmed() == names
    asked = []
    win.confirm = lambda question: asked.append(question) or False
    win.digitizing.digitize()
    assert asked and "not yet checked" in asked[0] and win.digitizing.result is None and not win.task_running()
    win.confirm = lambda question: True
    win.digitizing.digitize()
    qtbot.waitUntil(lambda: win.digitizing.result is not None, timeout=120000)
    saved = json.loads((tmp_path / "d.calib.json").read_text())
    assert not win.calibration.calib.unconfirmed() and not any(c.get("proposed") for c in saved["curves"])
    assert "draft" not in saved and len(saved["depth_picks"]) >= 2


def test_curves_a_proposal_reads_from_the_scale_box_land_in_the_calibration(win, qtbot, tmp_path, monkeypatch):
    """Propose on a scan whose box prints its curves: they are in the saved calibration at once (marked
    proposed), so the steps bar goes on to digitising, not back to "name each curve"."""
    import app.window.calibrating as calibrating
    from core.digitize.calibrate.proposal_records import Proposal
    from core.synth import generate_log, write_log

    write_log(tmp_path, generate_log(4, 1200, 320, "y", style="clean", name="box"))
    cal = json.loads((tmp_path / "box.calib.json").read_text())
    (tmp_path / "box.calib.json").unlink()
    (tmp_path / "box.mask.png").unlink()
    read = [{**c, "proposed": True} for c in cal["curves"]]
    prop = Proposal("y", tracks=[tuple(c["track"]) for c in read], picks=[tuple(p) for p in cal["depth_picks"]],
                    curves=read, messages=["read"])
    monkeypatch.setattr(calibrating, "_propose", lambda *a, **k: prop)
    assert open_scan(win, qtbot, tmp_path / "box.png") and win.calibration.calib is None
    win.steps.buttons["calibrate"].click()
    qtbot.waitUntil(lambda: win.calibration.last_proposal is not None, timeout=30000)
    assert win.calibration.calib is not None and [c.mnemonic for c in win.calibration.calib.curves] == [c["mnemonic"] for c in read]
    assert win.calibration.calib.unconfirmed() == [c["mnemonic"] for c in read]
    saved = json.loads((tmp_path / "box.calib.json").read_text())
    assert [c["mnemonic"] for c in saved["curves"]] == [c["mnemonic"] for c in read]
    assert win.steps.next_step() != "calibrate"
