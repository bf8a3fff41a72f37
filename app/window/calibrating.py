"""The calibration on the scan: the proposal, the handles, depth and ink picks, the cursor readout.

A part of :class:`app.main_window.MainWindow` (mixed into it): it works on the window's state (scan,
calibration, mask editor, result, model) and widgets, which the window builds.
"""

from __future__ import annotations

from PySide6 import QtWidgets

from core.io.calibration import Calibration
from core.io.scan import calib_path_for

from ..curve_plots import curve_colour
from ..workers import Task


def _propose(image, axis, dpi=None, progress=None):
    from core.digitize.calibration_proposal import propose

    return propose(image, axis, dpi=dpi)


class Calibrating:
    """The window's calibration (a mixin)."""

    def propose_calibration(self) -> None:
        """Find the tracks and read the printed depths (off the UI thread); the user accepts or corrects."""
        if self.image is None or self.closing:
            return
        if getattr(self, "propose_task", None) is not None and self.propose_task.isRunning():
            return
        axis, dpi = self._depth_axis(), self.scan_dpi
        self.propose_task = Task(_propose, self.image, axis, dpi[1 if axis == "y" else 0] if dpi else None,
                                 parent=self)
        self.propose_task.succeeded.connect(self._proposed)
        self.propose_task.failed.connect(self._task_failed)
        self.progress.setRange(0, 0)
        self.progress.show()
        self.statusBar().showMessage("proposing a calibration: finding the tracks, reading the printed depths…")
        self.propose_task.start()

    def _proposed(self, prop) -> None:
        if self.closing:  # the window is closing: a late result touches nothing
            return
        self.last_proposal = prop
        self._task_done(" ".join(prop.messages))
        self.calib_panel.proposed_tracks = list(prop.tracks)
        self.view.set_proposed_tracks(prop.tracks, prop.depth_axis)
        have = self.calib.depth_picks if self.calib is not None else []
        if prop.picks:
            if len(have) < 2 or self.confirm(f"Replace the {len(have)} depth picks with the {len(prop.picks)} "
                                             "proposed from the printed depths?"):
                self.calib_panel.axis.setCurrentText(prop.depth_axis)
                self.calib_panel.set_picks(prop.picks)
                draft = prop.calibration_dict()
                self.calib_panel.set_sections(draft.get("sections", []) if draft else [])
        if self.calib is None or not self.calib.curves:
            self.statusBar().showMessage(" ".join(prop.messages) + " — now add a curve per track (Add curve "
                                         "takes the next proposed track) and set its name and scale.", 20000)
        self.calib_dock.raise_()
        self.update_steps()

    def _calibration_changed(self, calib: Calibration):
        self.calib = calib
        if self.scan_path is not None:
            try:
                calib.save(calib_path_for(self.scan_path))
            except OSError as exc:
                self.show_error(f"{calib_path_for(self.scan_path)}: cannot save: {exc}")
        self._update_handles()
        self.refresh_project()

    def _update_handles(self):
        c = self.calib
        if c is None:
            self.view.set_calibration_handles(self.calib_panel.axis.currentText(), [], [])
            self.view.set_sections([], self.calib_panel.axis.currentText())
            return
        tracks = [(s.track_lo, s.track_hi, curve_colour(s, i))
                  for i, s in enumerate(c.curves)]
        self.view.set_calibration_handles(c.depth_axis, c.depth_picks, tracks)
        self.view.set_sections([(s.start, s.stop, s.kind) for s in c.sections], c.depth_axis)

    def _pick_dragged(self, index, pixel):
        self.calib_panel.set_pick_pixel(index, pixel)

    def _track_dragged(self, index, a, b):
        self.calib_panel.set_track(index, a, b)

    def _section_dragged(self, index, a, b):
        self.calib_panel.set_section_span(index, a, b)

    def _cursor(self, row, col):
        text = f"row {row:.0f}  col {col:.0f}"
        c = self.calib
        if c is not None:
            along, across = (row, col) if c.depth_axis == "y" else (col, row)
            text += f"   depth {float(c.depth_at(along)):.2f} {c.depth_unit}"
            for s in c.curves:
                if s.track_lo <= across <= s.track_hi:
                    text += f"   {s.mnemonic} {float(s.value_at(across)):.4g} {s.unit}"
        self.cursor_label.setText(text)

    def pick_ink(self) -> None:
        """The eyedropper: the next click on the scan sets the selected curve's ink colour."""
        if self.rgb is None:
            self.show_error("this scan is greyscale: there are no ink colours to pick; curves are told apart by "
                            "line style")
            return
        if self.calib_panel.selected_curve() is None:
            self.show_error("select a curve in the calibration first")
            return
        self.set_tool("ink")
        self.statusBar().showMessage(f"click the ink of {self.calib_panel.selected_curve()} on the scan", 10000)

    def _ink_picked(self, row: float, col: float) -> None:
        from core.io.colour import hex_colour, sample_ink

        ink = sample_ink(self.rgb, col, row) if self.rgb is not None else None
        self.set_tool("pan")
        if ink is None:
            self.show_error("no ink under the click: click on the curve's line itself")
            return
        self.calib_panel.set_curve_colour(hex_colour(ink))
        self.statusBar().showMessage(f"{self.calib_panel.selected_curve()}: ink {hex_colour(ink)}", 10000)

    def _ask_depth_dialog(self, pixel: float) -> float | None:
        depth, ok = QtWidgets.QInputDialog.getDouble(self, "Depth pick", f"Depth at pixel {pixel:.1f}:",
                                                     0.0, -1e6, 1e6, 3)
        return depth if ok else None
