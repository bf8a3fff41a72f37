"""The calibration on the scan: the proposal, the handles, depth and ink picks, the cursor readout.

The controller owns the scan's calibration and its panel; the scan view's handles show it. A change made in
the panel or by dragging a handle is saved beside the scan at once (``NAME.calib.json``) and announced
(``changed``).
"""

from __future__ import annotations

from typing import Callable

from PySide6 import QtCore, QtWidgets

from core.io.calibration import Calibration
from core.io.file_names import calib_path_for

from ..calibration_panel import CalibrationPanel
from ..curve_plots import curve_colours
from ..scan_loader import ScanBundle
from ..workers import Task
from .scans import ScanController
from .shell import Shell


def _propose(image, axis, dpi=None, rgb=None, progress=None):
    from core.digitize.calibrate.proposal import propose

    return propose(image, axis, dpi=dpi, progress=progress, rgb=rgb)


def ask_depth_dialog(parent, pixel: float) -> float | None:
    depth, ok = QtWidgets.QInputDialog.getDouble(parent, "Depth pick", f"Depth at pixel {pixel:.1f}:",
                                                 0.0, -1e6, 1e6, 3)
    return depth if ok else None


UNREADABLE_SUFFIX = ".unreadable"  # an unreadable NAME.calib.json is kept as NAME.calib.json.unreadable


class CalibrationController(QtCore.QObject):
    """The scan's calibration: proposed, picked, dragged, saved."""

    changed = QtCore.Signal()  # the calibration changed (and was saved)
    wants_tool = QtCore.Signal(str)  # a tool the next click needs ("pick", "ink", "pan")
    proposed = QtCore.Signal()  # a proposal arrived: the panel is where to look next

    def __init__(self, shell: Shell, scans: ScanController, view, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.shell, self.scans, self.view = shell, scans, view
        self.calib: Calibration | None = None
        self.last_proposal = None
        self.unreadable = None  # the scan's calibration file that could not be read: replaced at the first save
        self.unreadable_empty = False
        self.panel = CalibrationPanel()
        # the depth of a clicked pick; replaceable (tests answer without a dialog)
        self.ask_depth: Callable[[float], float | None] = lambda pixel: ask_depth_dialog(
            self.panel.window(), pixel)
        self.panel.changed.connect(self._panel_changed)
        self.panel.add_pick_requested.connect(lambda: self.wants_tool.emit("pick"))
        self.panel.propose_requested.connect(self.propose)
        self.panel.ink_pick_requested.connect(self.pick_ink)
        view.pick_moved.connect(self.panel.set_pick_pixel)
        view.track_moved.connect(self.panel.set_track)
        view.section_moved.connect(self.panel.set_section_span)
        scans.opened.connect(self._scan_opened)

    def depth_axis(self) -> str:
        return self.calib.depth_axis if self.calib is not None else self.panel.axis.currentText()

    def _scan_opened(self, bundle: ScanBundle) -> None:
        self.calib = bundle.calib
        self.last_proposal = None
        self.unreadable = None if bundle.calib_problem is None else calib_path_for(bundle.path)
        self.unreadable_empty = bundle.calib_empty
        scan = bundle.scan
        axis = bundle.calib.depth_axis if bundle.calib else scan.info.depth_axis
        amp = scan.image.shape[1] if axis == "y" else scan.image.shape[0]
        self.panel.load(bundle.calib, scan.info.depth_axis, float(amp), bundle.proposed_tracks)
        # this scan's proposed tracks (from its file), never the last scan's outlines over this one's header
        self.view.set_proposed_tracks(bundle.proposed_tracks, axis)
        if bundle.draft is not None:  # a refused proposal's findings: the curves and sections, the depths to pick
            self.panel.append_curves(bundle.draft.get("curves", []))
            self.shell.show_status(f"{bundle.path.name}: {bundle.draft['draft']}", 20000)
        if bundle.calib is not None and bundle.calib.ignored_fields:  # a misspelt "log" is a whole curve wrong
            self.shell.show_error(f"{calib_path_for(bundle.path).name}: ignored, no such field: "
                                  f"{'; '.join(bundle.calib.ignored_fields)}. Set them in the calibration dock; the "
                                  "file is saved without them at the first change.")
        if bundle.calib_problem is not None and not bundle.calib_empty:  # an empty one is a note of the scan's
            name = self.unreadable.name
            self.shell.show_error(f"{bundle.calib_problem}. The scan opens without it: propose or make a "
                                  f"calibration and it replaces the file (kept as {name}{UNREADABLE_SUFFIX}).")
        self.update_handles()

    # -- the proposal --------------------------------------------------------------------
    def propose(self) -> None:
        """Find the tracks and read the printed depths (off the UI thread); the user accepts or corrects."""
        image = self.scans.image
        if image is None or self.shell.closing or self.shell.task_running():
            return
        axis, dpi = self.depth_axis(), self.scans.current.dpi
        task = Task(_propose, image, axis, dpi[1 if axis == "y" else 0] if dpi else None, self.scans.current.rgb,
                    owner=self)
        self.shell.start_task(task, self._proposed, "proposing a calibration: finding the tracks, reading the "
                              "printed depths…", "proposal cancelled")

    def _proposed(self, prop) -> None:
        if self.shell.closing:  # the window is closing: a late result touches nothing
            return
        self.last_proposal = prop
        self.shell.task_done(" ".join(prop.messages))
        self.panel.proposed_tracks = list(prop.tracks)
        self.view.set_proposed_tracks(prop.tracks, prop.depth_axis)
        have = self.calib.depth_picks if self.calib is not None else []
        if prop.picks:
            if len(have) < 2 or self.shell.confirm(f"Replace the {len(have)} depth picks with the "
                                                   f"{len(prop.picks)} proposed from the printed depths?"):
                self.panel.axis.setCurrentText(prop.depth_axis)
                self.panel.set_picks(prop.picks)
                draft = prop.calibration_dict()
                self.panel.set_sections(draft.get("sections", []) if draft else [])
        if (self.calib is None or not self.calib.curves) and prop.curves:
            # the curves the header's scale box prints: the user checks them instead of typing them
            self.panel.append_curves(prop.curves)
            self.shell.show_status(" ".join(prop.messages) + " — check the curves read from the scale box and "
                                   "add any it does not print.", 20000)
        elif self.calib is None or not self.calib.curves:
            self.shell.show_status(" ".join(prop.messages) + " — now add a curve per track (Add curve takes the "
                                   "next proposed track) and set its name and scale.", 20000)
        self.proposed.emit()
        self.changed.emit()

    # -- edits -------------------------------------------------------------------------------
    def _panel_changed(self, calib: Calibration) -> None:
        self.calib = calib
        path = self.scans.path
        if path is not None:
            try:
                self._set_unreadable_aside()
                calib.save(calib_path_for(path))
            except OSError as exc:
                self.shell.show_error(f"{calib_path_for(path)}: cannot save: {exc}")
        self.update_handles()
        self.changed.emit()

    def commit_edits(self) -> None:
        """Take a field or pick cell of the panel still being typed in: its edit lands when it loses focus or on
        Enter, and Ctrl+D, Ctrl+E, Ctrl+S or a toolbar button move neither (a scale end typed then Ctrl+D was
        digitised on the old scale). Taking the focus away commits it, saved and announced as any edit."""
        focus = QtWidgets.QApplication.focusWidget()
        if focus is not None and self.panel.isAncestorOf(focus):
            focus.clearFocus()

    def save(self) -> None:
        """Write the calibration beside the scan (raises OSError)."""
        if self.calib is not None and self.scans.path is not None:
            self._set_unreadable_aside()
            self.calib.save(calib_path_for(self.scans.path))

    def _set_unreadable_aside(self) -> None:
        """The unreadable calibration file the scan opened beside, moved aside before the first save replaces it
        (kept, unless it was empty): the user's file is never lost without a trace."""
        old, self.unreadable = self.unreadable, None
        if old is None or not old.exists():
            return
        if self.unreadable_empty:
            return  # nothing to keep: the save writes over it
        aside = old.with_name(old.name + UNREADABLE_SUFFIX)
        old.replace(aside)
        self.shell.show_status(f"{old.name} could not be read: kept as {aside.name}", 10000)

    def update_handles(self) -> None:
        c = self.calib
        if c is None:
            self.view.set_calibration_handles(self.panel.axis.currentText(), [], [])
            self.view.set_sections([], self.panel.axis.currentText())
            return
        tracks = [(s.track_lo, s.track_hi, colour) for s, colour in zip(c.curves, curve_colours(c.curves))]
        # the picks the panel's table shows: the calibration's, or a section's own (a repeat pass's)
        self.view.set_calibration_handles(c.depth_axis, self.panel.shown_picks(), tracks)
        self.view.set_sections([(s.start, s.stop, s.kind) for s in c.sections], c.depth_axis)

    def cursor_text(self, row: float, col: float) -> str:
        """The readout under the cursor: pixel, depth and the value of each curve whose track is there."""
        text = f"row {row:.0f}  col {col:.0f}"
        c = self.calib
        if c is not None:
            along, across = (row, col) if c.depth_axis == "y" else (col, row)
            text += f"   depth {c.depth_under(along):.2f} {c.depth_unit}"  # a repeat pass's own depths over it
            for s in c.curves:
                if s.track_lo <= across <= s.track_hi:
                    text += f"   {s.mnemonic} {float(s.value_at(across)):.4g} {s.unit}"
        return text

    # -- clicks on the scan: a depth pick, an ink colour ----------------------------------------
    def pick_at(self, row: float, col: float) -> None:
        """A click with the Pick tool: the depth printed there, asked of the user."""
        pixel = row if self.panel.axis.currentText() == "y" else col
        depth = self.ask_depth(pixel)
        if depth is not None:
            self.panel.add_pick_at(pixel, depth)

    def pick_ink(self) -> None:
        """The eyedropper: the next click on the scan sets the selected curve's ink colour."""
        if self.scans.current is None or self.scans.current.rgb is None:
            self.shell.show_error("this scan is greyscale: there are no ink colours to pick; curves are told apart "
                                  "by line style")
            return
        if self.panel.selected_curve() is None:
            self.shell.show_error("select a curve in the calibration first")
            return
        self.wants_tool.emit("ink")
        self.shell.show_status(f"click the ink of {self.panel.selected_curve()} on the scan", 10000)

    def ink_at(self, row: float, col: float) -> None:
        from core.io.colour import hex_colour, sample_ink

        rgb = self.scans.current.rgb if self.scans.current else None
        ink = sample_ink(rgb, col, row) if rgb is not None else None
        self.wants_tool.emit("pan")
        if ink is None:
            self.shell.show_error("no ink under the click: click on the curve's line itself")
            return
        self.panel.set_curve_colour(hex_colour(ink))
        self.shell.show_status(f"{self.panel.selected_curve()}: ink {hex_colour(ink)}", 10000)
