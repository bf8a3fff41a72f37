"""The window's actions, with their shortcuts and tips, and the menus and toolbars that show them.

The workflow (open, calibrate, label, digitise, adapt, train, export) has a toolbar row of its own that
never overflows at 1280 px; the labelling tools sit on a second row that may fold.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets


class ActionsAndMenus:
    """Builds the window's actions (``self.actions_``), menus and toolbars (a mixin)."""

    def _action(self, text, slot, shortcut=None, checkable=False, tip=None):
        act = QtGui.QAction(text, self)
        if shortcut:
            act.setShortcut(QtGui.QKeySequence(shortcut))
        act.setCheckable(checkable)
        if slot is not None:
            act.triggered.connect(slot)
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(f"{text} ({shortcut})" if shortcut else text)
        return act

    def _build_actions(self):
        a = {}
        a["open_scan"] = self._action("Open scan…", self._open_scan_dialog, "Ctrl+O")
        a["open_project"] = self._action("Open project…", self._open_project_dialog, "Ctrl+Shift+O")
        a["add_scans"] = self._action("Add scans…", self._add_scans_dialog, "Ctrl+Shift+A")
        a["save"] = self._action("Save", self.save_all, "Ctrl+S")
        a["export"] = self._action("Export LAS…", self.export_dialog, "Ctrl+E", tip="write the digitised curves")
        a["quit"] = self._action("Quit", self.close, "Ctrl+Q")
        a["undo"] = self._action("Undo", self.undo, "Ctrl+Z")
        a["redo"] = self._action("Redo", self.redo, "Ctrl+Shift+Z")
        group = QtGui.QActionGroup(self)
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
            act = self._action(label, lambda _=False, n=name: self.set_tool(n), key, True, tip)
            group.addAction(act)
            a[f"tool_{name}"] = act
        a["tool_pan"].setChecked(True)
        a["toggle_mask"] = self._action("Show mask", self.view.set_mask_visible, "M", True)
        a["toggle_mask"].setChecked(True)
        a["rotate"] = self._action("Rotate view", self.view.set_rotated, "R", True, "turn the log by 90°")
        a["show_grid"] = self._action("Show detected grid", self.show_grid, "G", True,
                                      "the printed grid the tracers damp their evidence on")
        a["from_mask"] = self._action("Digitise from the labelled mask", None, None, True,
                                      "trace the painted mask when the scan has one, else the model")
        a["from_mask"].setChecked(True)
        a["prefill"] = self._action("Pre-fill mask", self.prefill, "Ctrl+Shift+F",
                                    tip="fill the mask from the current model or the classical tracer")
        a["digitize"] = self._action("Digitise", self.digitize, "Ctrl+D", tip="trace the calibrated curves")
        a["cancel"] = self._action("Cancel", self.cancel_task, "Esc")
        a["swap"] = self._action("Swap curves over a range…", self.swap_dialog, None, False,
                                 "fix a crossing the tracer read wrong: two curves exchange values over a depth range")
        a["load_model"] = self._action("Load model…", self._load_model_dialog)
        a["train"] = self._action("Train…", self.show_training, "Ctrl+T", tip="train the network on this project")
        a["adapt"] = self._action("Adapt…", self.adapt_dialog, None, False,
                                  "adapt the current model to this project's labelled scans, time-boxed")
        self.actions_ = a
        self.polyline_points: list[tuple[float, float]] = []

        mb = self.menuBar()
        f = mb.addMenu("&File")
        for k in ("open_scan", "open_project", "add_scans", "save", "export", "load_model", "quit"):
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
        r.addAction(a["digitize"])
        r.addAction(a["from_mask"])
        r.addAction(a["swap"])
        r.addAction(a["cancel"])

        # the workflow in order, on a toolbar of its own that never overflows at 1280 px:
        # open · calibrate (pick) · label (pre-fill) · digitise · train · export
        tb = self.addToolBar("Workflow")
        tb.setObjectName("main_toolbar")
        tb.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextOnly)
        for k in ("open_scan", "open_project"):
            tb.addAction(a[k])
        tb.addSeparator()
        for k in ("tool_pick", "prefill", "digitize", "adapt", "train", "export"):
            tb.addAction(a[k])
        self.addToolBarBreak()
        lb = self.addToolBar("Labelling")  # the secondary tools: a second row, free to fold
        lb.setObjectName("labelling_toolbar")
        for k in ("undo", "redo"):
            lb.addAction(a[k])
        lb.addSeparator()
        for k in ("tool_pan", "tool_brush", "tool_ink_brush", "tool_eraser", "tool_line_eraser", "tool_restyle",
                  "tool_fill", "tool_polyline"):
            lb.addAction(a[k])
        self.class_box = QtWidgets.QComboBox()
        self.class_box.addItems(["1 solid", "2 dashed", "3 dotted"])
        self.class_box.currentIndexChanged.connect(lambda i: setattr(self, "class_value", i + 1))
        lb.addWidget(QtWidgets.QLabel(" class "))
        lb.addWidget(self.class_box)
        self.size_box = QtWidgets.QSpinBox()
        self.size_box.setRange(1, 60)
        self.size_box.setValue(3)
        self.size_box.valueChanged.connect(lambda v: setattr(self, "brush_radius", float(v)))
        lb.addWidget(QtWidgets.QLabel(" size "))
        lb.addWidget(self.size_box)
        self.opacity_slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.opacity_slider.setRange(0, 100)
        self.opacity_slider.setValue(55)
        self.opacity_slider.setMaximumWidth(90)
        self.opacity_slider.valueChanged.connect(lambda v: self.view.set_opacity(v / 100.0))
        lb.addWidget(QtWidgets.QLabel(" opacity "))
        lb.addWidget(self.opacity_slider)
        lb.addAction(a["toggle_mask"])
        lb.addAction(a["show_grid"])
