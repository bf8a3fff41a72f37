"""A colour scan in the app: shown in colour, the eyedropper names a curve's ink, Digitise uses it."""

import json

import lasio
import numpy as np

from core.digitize.output.metrics import compare_curve
from core.io.colour import delta_e, parse_colour
from core.synth import generate_log, write_log

from .opening import open_scan
from .test_main_window import _shot, win  # noqa: F401 - the same window fixture and screenshot helper


def test_colour_scan_shown_in_colour_ink_picked_digitised_and_exported(win, qtbot, tmp_path, shots_dir):
    lg = generate_log(4, 1200, 320, "y", style="colour", classes=(1, 1))
    write_log(tmp_path, lg)
    inks = [c.colour for c in lg.calibration.curves]
    cal = json.loads((tmp_path / f"{lg.name}.calib.json").read_text())
    for c in cal["curves"]:
        c.pop("colour")  # the user names the inks with the eyedropper
    (tmp_path / f"{lg.name}.calib.json").write_text(json.dumps(cal))
    (tmp_path / f"{lg.name}.mask.png").unlink()
    assert open_scan(win, qtbot, tmp_path / f"{lg.name}.png")
    assert win.scans.current.rgb is not None and win.view.levels[0].ndim == 3  # shown in colour
    # the eyedropper: select a curve, Pick from scan, click its ink
    rows = np.arange(lg.image.shape[0], dtype=float)
    row_depth = lg.calibration.depth_at(rows)
    for k, spec in enumerate(lg.calibration.curves):
        win.calibration.panel.curve_list.setCurrentRow(k)
        win.calibration.panel.form.pick_ink.click()
        assert win.view.tool == "ink"
        col, _ = spec.position_of(np.interp(row_depth, lg.depth, lg.truth[spec.mnemonic]))
        r = 300 + 40 * k
        win.view.clicked.emit(float(r), float(col[r]))
        assert win.view.tool == "pan"
        picked = win.calibration.panel.as_dict()["curves"][k].get("colour")
        assert picked and delta_e(parse_colour(picked), parse_colour(inks[k])) < 25, (picked, inks[k])
    assert all(c.colour for c in win.calibration.calib.curves)
    win.digitizing.digitize(from_mask=False)
    qtbot.waitUntil(lambda: win.digitizing.result is not None, timeout=120000)
    assert "ink colour" in win.digitizing.result.method
    qtbot.wait(50)
    _shot(win, shots_dir, "colour_scan.png")
    out = tmp_path / "colour.las"
    assert win.digitizing.export_las(out)
    las = lasio.read(str(out))
    for spec in lg.calibration.curves:
        got = np.interp(lg.depth, las.index, las[spec.mnemonic])
        assert compare_curve(spec.mnemonic, lg.depth, got, lg.truth[spec.mnemonic], spec.value_range).r > 0.9


def test_the_eyedropper_on_a_grey_scan_says_there_is_no_colour(win, qtbot, tmp_path):
    lg = generate_log(4, 800, 256, "y", style="classic")
    write_log(tmp_path, lg)
    assert open_scan(win, qtbot, tmp_path / f"{lg.name}.png")
    assert win.scans.current.rgb is None
    win.calibration.panel.curve_list.setCurrentRow(0)
    win.calibration.panel.form.pick_ink.click()
    assert win.view.tool != "ink" and "greyscale" in win.statusBar().currentMessage()


def test_a_backup_scale_in_its_own_ink_is_shown_and_goes_with_the_ink_or_the_backup(win, qtbot, tmp_path):
    """A curve whose backup scale the scale box read in another ink shows both inks; clearing the ink, or the
    backup side, takes the backup's ink too (a calibration with it alone would not load)."""
    lg = generate_log(4, 800, 320, "y", style="colour", classes=(1, 1))
    write_log(tmp_path, lg)
    cal = json.loads((tmp_path / f"{lg.name}.calib.json").read_text())
    for c in cal["curves"]:
        c.update(wrap=True, backup="high", backup_colour="#ff0000")
    (tmp_path / f"{lg.name}.calib.json").write_text(json.dumps(cal))
    assert open_scan(win, qtbot, tmp_path / f"{lg.name}.png")
    panel = win.calibration.panel
    panel.curve_list.setCurrentRow(0)
    assert panel.form.backup_swatch.isVisibleTo(panel.form) and "#ff0000" in panel.form.backup_swatch.styleSheet()
    assert win.calibration.calib.curves[0].backup_colour == "#ff0000"
    panel.form.clear_ink.click()
    first = panel.as_dict()["curves"][0]
    assert "colour" not in first and "backup_colour" not in first
    assert not panel.form.backup_swatch.isVisibleTo(panel.form)
    panel.curve_list.setCurrentRow(1)
    panel.form.backup.setCurrentText("")  # the backup side cleared: its ink goes, the curve's own stays
    second = panel.as_dict()["curves"][1]
    assert "backup" not in second and "backup_colour" not in second and second["colour"]
    assert [c.backup_colour for c in win.calibration.calib.curves][:2] == [None, None]
