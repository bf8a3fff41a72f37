"""The window's actions, with their shortcuts and tips, and the menus and toolbars that show them.

Each action calls its controller. The workflow (open, calibrate, label, digitise, adapt, train, export) has a
toolbar row of its own that never overflows at 1280 px; the labelling tools sit on a second row that may fold.
A ``triggered`` signal carries the action's checked state: a slot with parameters of its own is connected
through a lambda that drops it (Digitise once read it as ``from_mask=False`` and ignored the user's choice).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6 import QtCore, QtGui, QtWidgets


@dataclass
class LabellingControls:
    """The labelling toolbar's own widgets: the class painted, the brush size, the mask's opacity."""

    class_box: QtWidgets.QComboBox
    size_box: QtWidgets.QSpinBox
    opacity_slider: QtWidgets.QSlider


def build_actions(win) -> tuple[dict[str, QtGui.QAction], LabellingControls]:
    """The window's actions, menus and toolbars, wired to its controllers; returns the actions by name and the
    labelling toolbar's widgets, for the window to keep."""
    a = make_actions(win)
    _build_menus(win.menuBar(), a)
    return a, _build_toolbars(win, a)


def make_actions(win) -> dict[str, QtGui.QAction]:
    """Every action of the window by name, each calling its controller."""
    scans, labelling = win.scans, win.labelling
    digitizing, models = win.digitizing, win.models

    def action(text, slot, shortcut=None, checkable=False, tip=None):
        act = QtGui.QAction(text, win)
        if shortcut:
            act.setShortcut(QtGui.QKeySequence(shortcut))
        act.setCheckable(checkable)
        if slot is not None:
            act.triggered.connect(slot)
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(f"{text} ({shortcut})" if shortcut else text)
        return act

    def load_model_dialog():
        from pathlib import Path

        p, _ = QtWidgets.QFileDialog.getOpenFileName(win, "Load model", "", "Models (*.safetensors)")
        if p:
            models.load(Path(p))

    a = {}
    a["open_scan"] = action("Open scan…", lambda: scans.open_scan_dialog(), "Ctrl+O")
    a["open_project"] = action("Open project…", lambda: scans.open_project_dialog(), "Ctrl+Shift+O")
    a["add_scans"] = action("Add scans…", lambda: scans.add_scans_dialog(), "Ctrl+Shift+A")
    a["save"] = action("Save", lambda: win.save_all(), "Ctrl+S")
    a["export"] = action("Export LAS…", lambda: digitizing.export_dialog(), "Ctrl+E",
                         tip="write the digitised curves")
    a["export_qc"] = action("Export QC picture…", lambda: digitizing.export_qc_dialog(), None, False,
                            "the digitised curves drawn back over the scan, NULL and warnings marked: check "
                            "the LAS by looking")
    a["quit"] = action("Quit", lambda: win.close(), "Ctrl+Q")
    a["undo"] = action("Undo", lambda: labelling.undo(), "Ctrl+Z")
    a["redo"] = action("Redo", lambda: labelling.redo(), "Ctrl+Shift+Z")
    group = QtGui.QActionGroup(win)
    for name, label, key, tip in (
            ("pan", "Pan", "H", "pan and zoom"), ("brush", "Brush", "B", "paint the selected class"),
            ("ink_brush", "Ink brush", "I", "paint the selected class on the ink under the brush only: drag a "
             "wide brush loosely along a curve"),
            ("eraser", "Eraser", "E", "erase to background"),
            ("line_eraser", "Line eraser", "X", "click a straight line of the mask (a grid line pre-filled as "
             "curve): the whole line goes, the curves crossing it stay"),
            ("restyle", "Restyle", "C", "click a labelled stroke: the whole connected stroke takes the selected "
             "class; drag: the labelled pixels under the brush do (curves of one class that touch)"),
            ("fill", "Fill", "F", "fill the ink stroke clicked"),
            ("polyline", "Polyline", "L", "click points of a thin curve; Enter closes it"),
            ("pick", "Pick", "P", "click a depth mark and type its depth")):
        act = action(label, lambda _=False, n=name: win.set_tool(n), key, True, tip)
        group.addAction(act)
        a[f"tool_{name}"] = act
    a["tool_pan"].setChecked(True)
    a["toggle_mask"] = action("Show mask", win.view.set_mask_visible, "M", True)
    a["toggle_mask"].setChecked(True)
    a["rotate"] = action("Rotate view", win.view.set_rotated, "R", True, "turn the log by 90°")
    a["show_grid"] = action("Show detected grid", digitizing.show_grid, "G", True,
                            "the printed grid the tracers damp their evidence on")
    a["from_mask"] = action("Digitise from the labelled mask", None, None, True,
                            "trace the painted mask when the scan has one, else the model")
    a["from_mask"].setChecked(digitizing.trace_labels)
    a["from_mask"].toggled.connect(lambda on: setattr(digitizing, "trace_labels", on))
    a["classical"] = action("Read with the classical tracer", None, None, True,
                            "digitise with the classical ink tracer instead of the model (the model reads by default)")
    a["classical"].toggled.connect(lambda on: setattr(models, "use_classical", on))
    a["prefill"] = action("Pre-fill mask", lambda: labelling.prefill(), "Ctrl+Shift+F",
                          tip="fill the mask from the current model or the classical tracer")
    a["digitize"] = action("Digitise", lambda: digitizing.digitize(), "Ctrl+D", tip="trace the calibrated curves")
    a["cancel"] = action("Cancel", lambda: win.cancel_task(), "Esc")
    a["swap"] = action("Swap curves over a range…", lambda: digitizing.swap_dialog(), None, False,
                       "fix a crossing the tracer read wrong: two curves exchange values over a depth range")
    a["load_model"] = action("Load model…", load_model_dialog)
    a["train"] = action("Train…", lambda: win.show_training(), "Ctrl+T", tip="train the network on this project")
    a["fit_confidence"] = action("Fit confidence…", lambda: models.fit_confidence(), None, False,
                                 "fit the calibrated confidence (CONF) for the current model, kept beside its file: "
                                 "a model trained or adapted here reads a probability measured for it")
    a["adapt"] = action("Adapt…", lambda: win.adapting.open_dialog(), None, False,
                        "adapt the current model to this project's labelled scans, time-boxed")
    return a


def _build_menus(mb: QtWidgets.QMenuBar, a: dict[str, QtGui.QAction]) -> None:
    f = mb.addMenu("&File")
    for k in ("open_scan", "open_project", "add_scans", "save", "export", "export_qc", "load_model", "quit"):
        f.addAction(a[k])
    e = mb.addMenu("&Edit")
    for k in ("undo", "redo", "prefill"):
        e.addAction(a[k])
    t = mb.addMenu("&Tools")
    for k in ("tool_pan", "tool_brush", "tool_ink_brush", "tool_eraser", "tool_line_eraser", "tool_restyle",
              "tool_fill", "tool_polyline", "tool_pick"):
        t.addAction(a[k])
    v = mb.addMenu("&View")
    for k in ("toggle_mask", "rotate", "show_grid"):
        v.addAction(a[k])
    r = mb.addMenu("&Run")
    r.addAction(a["adapt"])
    r.addAction(a["train"])
    r.addAction(a["fit_confidence"])
    r.addAction(a["digitize"])
    r.addAction(a["from_mask"])
    r.addAction(a["classical"])
    r.addAction(a["swap"])
    r.addAction(a["cancel"])


def _build_toolbars(win, a: dict[str, QtGui.QAction]) -> LabellingControls:
    labelling = win.labelling
    # the workflow in order, on a toolbar of its own that never overflows at 1280 px:
    # open · calibrate (pick) · label (pre-fill) · digitise · train · export
    tb = win.addToolBar("Workflow")
    tb.setObjectName("main_toolbar")
    tb.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextOnly)
    for k in ("open_scan", "open_project"):
        tb.addAction(a[k])
    tb.addSeparator()
    for k in ("tool_pick", "prefill", "digitize", "adapt", "train", "export"):
        tb.addAction(a[k])
    win.addToolBarBreak()
    lb = win.addToolBar("Labelling")  # the secondary tools: a second row, free to fold
    lb.setObjectName("labelling_toolbar")
    for k in ("undo", "redo"):
        lb.addAction(a[k])
    lb.addSeparator()
    for k in ("tool_pan", "tool_brush", "tool_ink_brush", "tool_eraser", "tool_line_eraser", "tool_restyle",
              "tool_fill", "tool_polyline"):
        lb.addAction(a[k])
    class_box = QtWidgets.QComboBox()
    class_box.addItems(["1 solid", "2 dashed", "3 dotted"])
    class_box.currentIndexChanged.connect(lambda i: setattr(labelling, "class_value", i + 1))
    lb.addWidget(QtWidgets.QLabel(" class "))
    lb.addWidget(class_box)
    size_box = QtWidgets.QSpinBox()
    size_box.setRange(1, 60)
    size_box.setValue(int(labelling.brush_radius))
    size_box.valueChanged.connect(lambda v: setattr(labelling, "brush_radius", float(v)))
    lb.addWidget(QtWidgets.QLabel(" size "))
    lb.addWidget(size_box)
    opacity = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
    opacity.setRange(0, 100)
    opacity.setValue(55)
    opacity.setMaximumWidth(90)
    opacity.valueChanged.connect(lambda v: win.view.set_opacity(v / 100.0))
    lb.addWidget(QtWidgets.QLabel(" opacity "))
    lb.addWidget(opacity)
    lb.addAction(a["toggle_mask"])
    lb.addAction(a["show_grid"])
    return LabellingControls(class_box, size_box, opacity)
