"""The calibration panel: depth picks as a table, curves as a list with a form for the selected one.

The panel holds no calibration logic: it builds the calibration dictionary of
docs/file-formats.md from its widgets and lets ``core.io.calibration`` validate it; the
error (which names the field) is shown under them. A curve has eleven fields,
too many for the columns of a table in a side dock on a 1280-px screen, so the
list names each curve (mnemonic, line style, unit) and the form below edits
the selected one.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from core.io.calibration import Calibration, sharing_picks

from .curve_form import CLASS_LABELS, CurveForm, spin


class CalibrationPanel(QtWidgets.QWidget):
    changed = QtCore.Signal(object)  # a valid Calibration
    add_pick_requested = QtCore.Signal()
    propose_requested = QtCore.Signal()
    ink_pick_requested = QtCore.Signal()  # the next click on the scan picks the selected curve's ink colour

    def __init__(self, parent=None):
        super().__init__(parent)
        self.sections: list[dict] = []  # the calibration's log sections, kept through the panel's edits
        # whose depth picks the table shows: None the calibration's (every section without its own), else a
        # section's index (a repeat pass prints depths of its own); the calibration's are kept here meanwhile
        self.shown: int | None = None
        self._top_picks: list[tuple[float, float]] = []
        self._loading = False
        self._curves: list[dict] = []
        self.proposed_tracks: list[tuple[float, float]] = []  # from a calibration proposal: offered to new curves
        self.amplitude_extent = 640.0
        lay = QtWidgets.QVBoxLayout(self)
        self.propose = QtWidgets.QPushButton("Propose calibration")
        self.propose.setToolTip("find the track borders and read the printed depths; you check and correct")
        lay.addWidget(self.propose)
        form = QtWidgets.QFormLayout()
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.axis = QtWidgets.QComboBox()
        self.axis.addItems(["y", "x"])
        self.axis.setToolTip("y: depth increases down the rows (tall scan); x: along the columns")
        self.unit = QtWidgets.QComboBox()
        self.unit.addItems(["FT", "M"])
        self.step = spin(0.001, 100.0, 4, "sampling interval of the LAS, in the depth unit")
        self.step.setValue(0.5)
        form.addRow("Depth axis", self.axis)
        form.addRow("Depth unit", self.unit)
        form.addRow("LAS step", self.step)
        lay.addLayout(form)

        lay.addWidget(self._heading("Depth picks", "a pixel along depth and the depth printed there; drag the "
                                    "orange lines on the scan to adjust"))
        self.picks_of = QtWidgets.QComboBox()
        self.picks_of.setToolTip("whose depth picks the table and the orange lines show: the calibration's, read "
                                 "by every section without its own, or a section's own (a repeat pass prints "
                                 "depths of its own; a section given picks here reads them)")
        self.picks_of.setVisible(False)
        lay.addWidget(self.picks_of)
        self.picks = QtWidgets.QTableWidget(0, 2)
        self.picks.setHorizontalHeaderLabels(["pixel", "depth"])
        self.picks.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Stretch)
        self.picks.verticalHeader().setDefaultSectionSize(24)
        self.picks.setMinimumHeight(90)
        self.picks.setMaximumHeight(170)
        lay.addWidget(self.picks)
        row = QtWidgets.QHBoxLayout()
        self.add_pick = QtWidgets.QPushButton("Add pick")
        self.add_pick.setToolTip("then click a depth mark on the scan and type its depth (P)")
        self.remove_pick = QtWidgets.QPushButton("Remove pick")
        row.addWidget(self.add_pick)
        row.addWidget(self.remove_pick)
        lay.addLayout(row)

        lay.addWidget(self._heading("Curves", "one per curve to digitise; drag a shaded track on the scan to move "
                                    "its bounds"))
        self.curve_list = QtWidgets.QListWidget()
        self.curve_list.setMinimumHeight(70)
        self.curve_list.setMaximumHeight(140)
        lay.addWidget(self.curve_list)
        row2 = QtWidgets.QHBoxLayout()
        self.add_curve = QtWidgets.QPushButton("Add curve")
        self.remove_curve = QtWidgets.QPushButton("Remove curve")
        row2.addWidget(self.add_curve)
        row2.addWidget(self.remove_curve)
        lay.addLayout(row2)

        self.form = CurveForm()
        lay.addWidget(self.form)

        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        self.status.setStyleSheet("color: #b00020")
        lay.addWidget(self.status)
        lay.addStretch(1)

        self.propose.clicked.connect(self.propose_requested)
        self.form.pick_ink.clicked.connect(self.ink_pick_requested)
        self.form.clear_ink.clicked.connect(lambda: self.set_curve_colour(None))
        self.form.edited.connect(self._form_edited)
        self.add_pick.clicked.connect(self.add_pick_requested)
        self.remove_pick.clicked.connect(self._remove_pick)
        self.add_curve.clicked.connect(lambda: self.append_curve())
        self.remove_curve.clicked.connect(self._remove_curve)
        self.curve_list.currentRowChanged.connect(self._show_curve)
        self.picks.itemChanged.connect(self._emit)
        self.picks_of.currentIndexChanged.connect(self._show_picks_of)
        self.axis.currentIndexChanged.connect(self._emit)
        self.unit.currentIndexChanged.connect(self._emit)
        self.step.valueChanged.connect(self._emit)
        self._show_curve(-1)

    @staticmethod
    def _heading(text: str, tip: str) -> QtWidgets.QLabel:
        label = QtWidgets.QLabel(f"<b>{text}</b>")
        label.setToolTip(tip)
        return label

    # -- filling -------------------------------------------------------------------
    def _set_pick(self, r: int, c: int, value: float) -> None:
        # the table is what is saved: every digit typed or loaded, not ":g"'s six (10150.25 became 10150.2)
        self.picks.setItem(r, c, QtWidgets.QTableWidgetItem(f"{value:.12g}"))

    def load(self, calib: Calibration | None, depth_axis_guess: str, amplitude_extent: float,
             proposed_tracks: list | None = None) -> None:
        self._loading = True
        self.amplitude_extent = amplitude_extent
        self.shown = None
        self.picks.setRowCount(0)
        self._curves = []
        self.status.setText("")
        self.proposed_tracks = [tuple(t) for t in (proposed_tracks or [])]
        # a section with its own copy of the picks the table shows reads the table's: it follows their edits
        self.sections = sharing_picks([sec.as_dict() for sec in calib.sections], calib.depth_picks) \
            if calib is not None else []
        if calib is None:
            self.axis.setCurrentText(depth_axis_guess)
        else:
            self.axis.setCurrentText(calib.depth_axis)
            self.unit.setCurrentText(calib.depth_unit)
            self.step.setValue(calib.step)
            for px, d in calib.depth_picks:
                self._append_pick_row(px, d)
            self._curves = [c.as_dict() for c in calib.curves]
        self._refresh_list(0 if self._curves else -1)
        self._refresh_picks_of()
        self._loading = False

    def _append_pick_row(self, pixel: float, depth: float) -> None:
        r = self.picks.rowCount()
        self.picks.insertRow(r)
        self._set_pick(r, 0, float(round(pixel, 2)))
        self._set_pick(r, 1, float(depth))

    def _table_picks(self) -> list[tuple[float, float]]:
        return [(self._num(r, 0), self._num(r, 1)) for r in range(self.picks.rowCount())]

    def shown_picks(self) -> list[tuple[float, float]]:
        """The picks the table shows (and the scan's pick lines): the calibration's, or the chosen section's."""
        return self._table_picks()

    def _fill_table(self, picks) -> None:
        was, self._loading = self._loading, True
        self.picks.setRowCount(0)
        for px, d in picks:
            self._append_pick_row(px, d)
        self._loading = was

    def _store_shown(self) -> None:
        """The table back into whose picks it shows: a section's that equal the calibration's are dropped, so the
        section reads the calibration's and follows their edits (``sharing_picks``); none, and it reads them too."""
        if self.shown is None or not 0 <= self.shown < len(self.sections):
            return
        sec = {k: v for k, v in self.sections[self.shown].items() if k != "depth_picks"}
        table = self._table_picks()
        if table:
            sec["depth_picks"] = [[p, d] for p, d in table]
        self.sections[self.shown] = sharing_picks([sec], self._top_picks)[0]

    def _refresh_picks_of(self) -> None:
        """The choice of whose picks are shown: the calibration's, then each section; shown with sections only."""
        self.picks_of.blockSignals(True)
        self.picks_of.clear()
        self.picks_of.addItem("Picks of the calibration (sections without their own)")
        for i, sec in enumerate(self.sections):
            self.picks_of.addItem(f"Picks of section {i + 1} ({sec.get('kind', 'main')})")
        if self.shown is not None and self.shown >= len(self.sections):
            self._show_top()
        self.picks_of.setCurrentIndex(0 if self.shown is None else self.shown + 1)
        self.picks_of.blockSignals(False)
        self.picks_of.setVisible(bool(self.sections))

    def _show_top(self) -> None:
        """Back to the calibration's picks in the table (before an edit of them: a proposal's, a new section)."""
        if self.shown is not None:
            self._store_shown()
            self.shown = None
            self._fill_table(self._top_picks)
            self.picks_of.blockSignals(True)
            self.picks_of.setCurrentIndex(0)
            self.picks_of.blockSignals(False)

    def _show_picks_of(self, index: int) -> None:
        """The table (and the pick lines) switched to the calibration's picks (0) or section ``index - 1``'s."""
        target = None if index <= 0 else index - 1
        if target == self.shown or (target is not None and target >= len(self.sections)):
            return
        if self.shown is None:
            self._top_picks = self._table_picks()
        else:
            self._store_shown()
        self.shown = target
        own = None if target is None else self.sections[target].get("depth_picks")
        self._fill_table(self._top_picks if target is None or not own else [tuple(p) for p in own])
        self._emit()

    def set_picks(self, picks: list[tuple[float, float]]) -> None:
        """Replace every pick of the calibration (an accepted proposal)."""
        self._show_top()
        self._loading = True
        self.picks.setRowCount(0)
        for px, d in picks:
            self._append_pick_row(px, d)
        self._loading = False
        self._emit()

    def add_pick_at(self, pixel: float, depth: float) -> None:
        self._loading = True
        self._append_pick_row(pixel, depth)
        self._loading = False
        self._emit()

    def set_pick_pixel(self, index: int, pixel: float) -> None:
        if 0 <= index < self.picks.rowCount():
            self._set_pick(index, 0, float(round(pixel, 2)))

    def set_track(self, index: int, a: float, b: float) -> None:
        """New track ends from a dragged region, keeping which end reads the left scale value."""
        if 0 <= index < len(self._curves):
            t0, t1 = self._curves[index]["track"]
            lo, hi = sorted((a, b))
            self._curves[index]["track"] = [round(lo, 2), round(hi, 2)] if t0 <= t1 else [round(hi, 2), round(lo, 2)]
            if index == self.curve_list.currentRow():
                self._show_curve(index)
            self._emit()

    def _next_track(self) -> list[float]:
        """A new curve's track: the first proposed track no curve uses yet, else the middle of the scan."""
        used = {tuple(round(v) for v in sorted(c["track"])) for c in self._curves}
        for lo, hi in self.proposed_tracks:
            if (round(lo), round(hi)) not in used:
                return [float(lo), float(hi)]
        if self.proposed_tracks:
            return [float(v) for v in self.proposed_tracks[0]]
        w = self.amplitude_extent
        return [round(0.25 * w, 1), round(0.75 * w, 1)]

    def append_curve(self, d: dict | None = None, emit: bool = True) -> None:
        if d is None:
            d = {"mnemonic": f"CURVE{len(self._curves) + 1}", "unit": "", "description": "", "class": 1,
                 "track": self._next_track(), "scale": [0.0, 100.0], "log": False, "wrap": False}
        self._curves.append(dict(d))
        self._refresh_list(len(self._curves) - 1)
        if emit:
            self._emit()

    def append_curves(self, curves: list) -> None:
        """Several curves at once (a proposal's, a draft's), saved once with the last."""
        curves = [c for c in curves if isinstance(c, dict)]
        for i, c in enumerate(curves):
            self.append_curve(c, emit=i == len(curves) - 1)

    def _refresh_list(self, select: int) -> None:
        loading, self._loading = self._loading, True
        self.curve_list.clear()
        for c in self._curves:
            label = f"{c['mnemonic']}  ·  {CLASS_LABELS.get(c['class'], c['class'])}"
            label += (f"  ·  {c['unit']}" if c.get("unit") else "") + ("  ·  read, check" if c.get("proposed") else "")
            self.curve_list.addItem(label)
        self.curve_list.setCurrentRow(select)
        self._loading = loading
        self._show_curve(select)

    def _show_curve(self, index: int) -> None:
        ok = 0 <= index < len(self._curves)
        self.form.setEnabled(ok)
        self.remove_curve.setEnabled(ok)
        if ok:
            self.form.show_curve(self._curves[index])
        else:
            self.form.clear()

    def set_curve_colour(self, colour: str | None) -> None:
        """Set (or clear, with None) the selected curve's ink colour ("#rrggbb")."""
        i = self.curve_list.currentRow()
        if not 0 <= i < len(self._curves):
            return
        if colour:
            self._curves[i]["colour"] = colour
        else:
            self._curves[i].pop("colour", None)
            self._curves[i].pop("backup_colour", None)  # traced by line style alone: neither ink
        self.form.show_colour(colour, self._curves[i].get("backup_colour"))
        self._emit()

    def confirm_proposed(self) -> None:
        """The curves read from the scale box taken as read (the user checked them against the print)."""
        if any([c.pop("proposed", None) for c in self._curves]):  # a list: every curve's mark goes
            self._refresh_list(max(0, self.curve_list.currentRow()))
            self._emit()

    def selected_curve(self) -> str | None:
        i = self.curve_list.currentRow()
        return self._curves[i]["mnemonic"] if 0 <= i < len(self._curves) else None

    def _form_edited(self, *_):
        i = self.curve_list.currentRow()
        if self._loading or not 0 <= i < len(self._curves):
            return
        c = self._curves[i]
        c.pop("proposed", None)  # a curve read from the scale box, looked at and edited: the user's now
        self.form.apply_to(c)
        self._refresh_list(i)
        self._emit()

    def _remove_pick(self) -> None:
        rows = sorted({i.row() for i in self.picks.selectedIndexes()}, reverse=True) or [self.picks.rowCount() - 1]
        for r in rows:
            if r >= 0:
                self.picks.removeRow(r)
        self._emit()

    def _remove_curve(self) -> None:
        i = self.curve_list.currentRow()
        if 0 <= i < len(self._curves):
            del self._curves[i]
            self._refresh_list(min(i, len(self._curves) - 1))
            self._emit()

    # -- reading ---------------------------------------------------------------------
    def _num(self, r: int, c: int) -> float:
        item = self.picks.item(r, c)
        try:
            return float(item.text()) if item else float("nan")
        except ValueError:
            return float("nan")

    def as_dict(self) -> dict:
        if self.shown is not None:  # the table holds a section's picks: the calibration's are kept aside
            self._store_shown()
        top = self._top_picks if self.shown is not None else self._table_picks()
        picks = [[p, d] for p, d in top]
        curves = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in c.items()} for c in self._curves]
        out = {"version": 1, "depth_axis": self.axis.currentText(), "depth_unit": self.unit.currentText(),
               "depth_picks": picks, "step": float(self.step.value()), "curves": curves}
        if self.sections:
            out["sections"] = [dict(sec) for sec in self.sections]
        if self.proposed_tracks:  # kept in the file: the next curve added takes the next of them
            out["proposed_tracks"] = [[float(a), float(b)] for a, b in self.proposed_tracks]
        return out

    def set_sections(self, sections: list[dict]) -> None:
        """The log sections (``core/io/calibration.py: Section`` as dicts), e.g. from a proposal."""
        self._show_top()
        # a proposal's main pass whose picks are the ones just put in the table reads the table's
        self.sections = sharing_picks(sections, self._table_picks())
        self._refresh_picks_of()
        self._emit()

    def set_section_span(self, index: int, a: float, b: float) -> None:
        """A section's border moved on the scan: its new span along depth."""
        if 0 <= index < len(self.sections):
            lo, hi = sorted((int(round(a)), int(round(b))))
            self.sections[index] = {**self.sections[index], "span": [max(0, lo), hi]}
            self._emit()

    def calibration(self) -> Calibration | None:
        from core.common.errors import CalibrationError

        try:
            cal = Calibration.from_dict(self.as_dict())
        except CalibrationError as exc:
            self.status.setText(exc.reason)
            return None
        self.status.setText("")
        return cal

    def _emit(self, *_):
        if self._loading:
            return
        cal = self.calibration()
        if cal is not None:
            self.changed.emit(cal)
