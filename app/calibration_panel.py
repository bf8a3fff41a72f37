"""The calibration panel: depth picks and curve definitions, edited as tables.

The panel holds no calibration logic: it builds the calibration dictionary of
DESIGN.md from its tables and lets ``core.calibration`` validate it; the
error (which names the field) is shown under the tables.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from core.calibration import Calibration

CURVE_COLUMNS = ["mnemonic", "unit", "description", "class", "track from", "track to", "scale left",
                 "scale right", "log", "wrap", "backup"]
BACKUP_TIP = ("where the backup scale lies when wrap is on: high = past the right-hand scale value "
              "(GR 0–150 → 150–300), low = before the left-hand one (DT 140–40 → 240–140); "
              "empty when the header does not say")
CLASS_LABELS = {1: "1 solid", 2: "2 dashed", 3: "3 dotted"}


class CalibrationPanel(QtWidgets.QWidget):
    changed = QtCore.Signal(object)  # a valid Calibration
    add_pick_requested = QtCore.Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._loading = False
        lay = QtWidgets.QVBoxLayout(self)
        form = QtWidgets.QFormLayout()
        self.axis = QtWidgets.QComboBox()
        self.axis.addItems(["y", "x"])
        self.axis.setToolTip("y: depth increases down the rows (tall scan); x: along the columns")
        self.unit = QtWidgets.QComboBox()
        self.unit.addItems(["FT", "M"])
        self.step = QtWidgets.QDoubleSpinBox()
        self.step.setDecimals(4)
        self.step.setRange(0.001, 100.0)
        self.step.setValue(0.5)
        form.addRow("depth axis", self.axis)
        form.addRow("depth unit", self.unit)
        form.addRow("LAS step", self.step)
        lay.addLayout(form)
        lay.addWidget(QtWidgets.QLabel("Depth picks (pixel along depth → depth); drag the orange lines to adjust"))
        self.picks = QtWidgets.QTableWidget(0, 2)
        self.picks.setHorizontalHeaderLabels(["pixel", "depth"])
        self.picks.horizontalHeader().setStretchLastSection(True)
        lay.addWidget(self.picks)
        row = QtWidgets.QHBoxLayout()
        self.add_pick = QtWidgets.QPushButton("Add pick on scan")
        self.add_pick.setToolTip("then click a depth mark on the scan and type its depth (P)")
        self.remove_pick = QtWidgets.QPushButton("Remove pick")
        row.addWidget(self.add_pick)
        row.addWidget(self.remove_pick)
        lay.addLayout(row)
        lay.addWidget(QtWidgets.QLabel("Curves (drag a shaded track on the scan to move its bounds)"))
        self.curves = QtWidgets.QTableWidget(0, len(CURVE_COLUMNS))
        self.curves.setHorizontalHeaderLabels(CURVE_COLUMNS)
        lay.addWidget(self.curves)
        row2 = QtWidgets.QHBoxLayout()
        self.add_curve = QtWidgets.QPushButton("Add curve")
        self.remove_curve = QtWidgets.QPushButton("Remove curve")
        row2.addWidget(self.add_curve)
        row2.addWidget(self.remove_curve)
        lay.addLayout(row2)
        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        self.status.setStyleSheet("color: #b00020")
        lay.addWidget(self.status)
        self.amplitude_extent = 640.0
        self.add_pick.clicked.connect(self.add_pick_requested)
        self.remove_pick.clicked.connect(lambda: self._remove(self.picks))
        self.add_curve.clicked.connect(lambda: self.append_curve())
        self.remove_curve.clicked.connect(lambda: self._remove(self.curves))
        for w in (self.picks, self.curves):
            w.itemChanged.connect(self._emit)
        self.axis.currentIndexChanged.connect(self._emit)
        self.unit.currentIndexChanged.connect(self._emit)
        self.step.valueChanged.connect(self._emit)

    # -- filling the tables ------------------------------------------------------
    def _set(self, table, r, c, value) -> None:
        if isinstance(value, bool):
            item = QtWidgets.QTableWidgetItem()
            item.setFlags(item.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(QtCore.Qt.CheckState.Checked if value else QtCore.Qt.CheckState.Unchecked)
        else:
            item = QtWidgets.QTableWidgetItem(f"{value:g}" if isinstance(value, float) else str(value))
        table.setItem(r, c, item)

    def load(self, calib: Calibration | None, depth_axis_guess: str, amplitude_extent: float) -> None:
        self._loading = True
        self.amplitude_extent = amplitude_extent
        self.picks.setRowCount(0)
        self.curves.setRowCount(0)
        self.status.setText("")
        if calib is None:
            self.axis.setCurrentText(depth_axis_guess)
        else:
            self.axis.setCurrentText(calib.depth_axis)
            self.unit.setCurrentText(calib.depth_unit)
            self.step.setValue(calib.step)
            for px, d in calib.depth_picks:
                self._append_pick_row(px, d)
            for c in calib.curves:
                self.append_curve(c.as_dict(), emit=False)
        self._loading = False

    def _append_pick_row(self, pixel: float, depth: float) -> None:
        r = self.picks.rowCount()
        self.picks.insertRow(r)
        self._set(self.picks, r, 0, float(round(pixel, 2)))
        self._set(self.picks, r, 1, float(depth))

    def add_pick_at(self, pixel: float, depth: float) -> None:
        self._loading = True
        self._append_pick_row(pixel, depth)
        self._loading = False
        self._emit()

    def set_pick_pixel(self, index: int, pixel: float) -> None:
        if 0 <= index < self.picks.rowCount():
            self._set(self.picks, index, 0, float(round(pixel, 2)))

    def set_track(self, index: int, a: float, b: float) -> None:
        if 0 <= index < self.curves.rowCount():
            lo_first = self._num(self.curves, index, 4) <= self._num(self.curves, index, 5)
            lo, hi = sorted((a, b))
            self._loading = True
            self._set(self.curves, index, 4, float(round(lo if lo_first else hi, 2)))
            self._loading = False
            self._set(self.curves, index, 5, float(round(hi if lo_first else lo, 2)))

    def append_curve(self, d: dict | None = None, emit: bool = True) -> None:
        n = self.curves.rowCount()
        if d is None:
            w = self.amplitude_extent
            d = {"mnemonic": f"CURVE{n + 1}", "unit": "", "description": "", "class": 1,
                 "track": [round(0.25 * w, 1), round(0.75 * w, 1)], "scale": [0.0, 100.0], "log": False,
                 "wrap": False}
        self._loading = True
        self.curves.insertRow(n)
        values = [d["mnemonic"], d.get("unit", ""), d.get("description", ""), str(d["class"]),
                  float(d["track"][0]), float(d["track"][1]), float(d["scale"][0]), float(d["scale"][1]),
                  bool(d.get("log", False)), bool(d.get("wrap", False)), d.get("backup") or ""]
        for c, v in enumerate(values):
            self._set(self.curves, n, c, v)
        self.curves.item(n, len(values) - 1).setToolTip(BACKUP_TIP)
        self.curves.item(n, 0).setData(QtCore.Qt.ItemDataRole.UserRole, d.get("color"))  # kept, not shown
        self._loading = False
        if emit:
            self._emit()

    def _remove(self, table) -> None:
        rows = sorted({i.row() for i in table.selectedIndexes()}, reverse=True) or [table.rowCount() - 1]
        for r in rows:
            if r >= 0:
                table.removeRow(r)
        self._emit()

    # -- reading the tables -------------------------------------------------------
    @staticmethod
    def _num(table, r, c):
        item = table.item(r, c)
        try:
            return float(item.text()) if item else float("nan")
        except ValueError:
            return float("nan")

    def as_dict(self) -> dict:
        picks = [[self._num(self.picks, r, 0), self._num(self.picks, r, 1)] for r in range(self.picks.rowCount())]
        curves = []
        for r in range(self.curves.rowCount()):
            def text(c, r=r):
                it = self.curves.item(r, c)
                return it.text().strip() if it else ""

            def check(c, r=r):
                it = self.curves.item(r, c)
                return bool(it and it.checkState() == QtCore.Qt.CheckState.Checked)
            try:
                klass = int(text(3).split()[0])
            except (ValueError, IndexError):
                klass = 0
            curves.append({"mnemonic": text(0), "unit": text(1), "description": text(2), "class": klass,
                           "track": [self._num(self.curves, r, 4), self._num(self.curves, r, 5)],
                           "scale": [self._num(self.curves, r, 6), self._num(self.curves, r, 7)],
                           "log": check(8), "wrap": check(9)})
            backup = text(10).lower()
            if backup:
                curves[-1]["backup"] = backup
            color = self.curves.item(r, 0).data(QtCore.Qt.ItemDataRole.UserRole) if self.curves.item(r, 0) else None
            if color:
                curves[-1]["color"] = color
        return {"version": 1, "depth_axis": self.axis.currentText(), "depth_unit": self.unit.currentText(),
                "depth_picks": picks, "step": float(self.step.value()), "curves": curves}

    def calibration(self) -> Calibration | None:
        from core.errors import CalibrationError

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
