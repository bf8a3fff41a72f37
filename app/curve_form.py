"""The form for one curve of a calibration: mnemonic, unit, description, line style, track, scale, log, wrap,
backup side and ink colour.

A view: it shows a curve's dictionary (docs/file-formats.md, ``curves[i]``) and gives back what the user typed,
saying so by :attr:`CurveForm.edited`; the calibration panel (``app/calibration_panel.py``) owns the curves.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

BACKUP_TIP = ("where the backup scale lies when wrap is on: high = past the right-hand scale value "
              "(GR 0–150 → 150–300), low = before the left-hand one (DT 140–40 → 240–140); "
              "empty when the header does not say")
CLASS_LABELS = {1: "1 solid", 2: "2 dashed", 3: "3 dotted"}


def spin(lo: float, hi: float, decimals: int, tip: str) -> QtWidgets.QDoubleSpinBox:
    s = QtWidgets.QDoubleSpinBox()
    s.setRange(lo, hi)
    s.setDecimals(decimals)
    s.setKeyboardTracking(False)  # one change per edit, not one per keystroke
    s.setToolTip(tip)
    s.setMinimumWidth(70)
    return s


def _pair(widgets) -> QtWidgets.QWidget:
    w = QtWidgets.QWidget()
    h = QtWidgets.QHBoxLayout(w)
    h.setContentsMargins(0, 0, 0, 0)
    h.addWidget(widgets[0])
    h.addWidget(QtWidgets.QLabel("to"))
    h.addWidget(widgets[1])
    return w


class CurveForm(QtWidgets.QGroupBox):
    edited = QtCore.Signal()  # the user changed a field (never while a curve is being shown)

    def __init__(self, parent=None):
        super().__init__("Selected curve", parent)
        self._showing = False
        ef = QtWidgets.QFormLayout(self)
        ef.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.mnemonic = QtWidgets.QLineEdit()
        self.unit = QtWidgets.QLineEdit()
        self.description = QtWidgets.QLineEdit()
        self.line_style = QtWidgets.QComboBox()
        self.line_style.addItems(list(CLASS_LABELS.values()))
        self.line_style.setToolTip("the line style the curve is drawn in (the mask class)")
        self.track = (spin(-1e6, 1e6, 1, "pixel across the track where the curve reads the left scale value"),
                      spin(-1e6, 1e6, 1, "pixel across the track where the curve reads the right scale value"))
        self.scale = (spin(-1e9, 1e9, 4, "value at the track's left end (as printed in the header)"),
                      spin(-1e9, 1e9, 4, "value at the track's right end"))
        self.log = QtWidgets.QCheckBox("log scale")
        self.wrap = QtWidgets.QCheckBox("wraps (backup scale)")
        self.backup = QtWidgets.QComboBox()
        self.backup.addItems(["", "high", "low"])
        self.backup.setToolTip(BACKUP_TIP)
        ef.addRow("Mnemonic", self.mnemonic)
        ef.addRow("Unit", self.unit)
        ef.addRow("Description", self.description)
        ef.addRow("Line style", self.line_style)
        ef.addRow("Track px", _pair(self.track))
        ef.addRow("Scale", _pair(self.scale))
        flags = QtWidgets.QHBoxLayout()
        flags.addWidget(self.log)
        flags.addWidget(self.wrap)
        ef.addRow(flags)
        ef.addRow("Backup side", self.backup)
        ink = QtWidgets.QHBoxLayout()
        self.swatch = QtWidgets.QLabel()
        self.swatch.setFixedSize(22, 16)
        self.swatch.setToolTip("the curve's ink colour on the scan: evidence of which line is this curve")
        self.pick_ink = QtWidgets.QPushButton("Pick from scan")
        self.pick_ink.setToolTip("then click the curve's ink on the scan (colour scans)")
        self.clear_ink = QtWidgets.QPushButton("Clear")
        self.clear_ink.setToolTip("trace this curve by its line style alone")
        # where the print draws the backup scale in an ink of its own (read from the scale box): which ink the
        # path lies on says which scale it reads (core/digitize/rules/ink_levels.py)
        self.backup_swatch = QtWidgets.QLabel()
        self.backup_swatch.setFixedSize(22, 16)
        self.backup_swatch.setToolTip("the ink of its backup scale: where the path lies on it, the backup scale is read")
        self.backup_swatch.hide()
        ink.addWidget(self.swatch)
        ink.addWidget(self.backup_swatch)
        ink.addWidget(self.pick_ink, 1)
        ink.addWidget(self.clear_ink)
        ef.addRow("Ink colour", ink)
        for w in (self.mnemonic, self.unit, self.description):
            w.editingFinished.connect(self._edited)
        for w in (*self.track, *self.scale):
            w.valueChanged.connect(self._edited)
        for w in (self.line_style, self.backup):
            w.currentIndexChanged.connect(self._edited)
        for w in (self.log, self.wrap):
            w.toggled.connect(self._edited)

    def _edited(self, *_) -> None:
        if not self._showing:
            self.edited.emit()

    def show_curve(self, c: dict) -> None:
        """Fill the fields from curve ``c`` (no :attr:`edited` while doing so)."""
        showing, self._showing = self._showing, True
        self.mnemonic.setText(c["mnemonic"])
        self.unit.setText(c.get("unit", ""))
        self.description.setText(c.get("description", ""))
        self.line_style.setCurrentIndex(max(0, min(2, int(c["class"]) - 1)) if str(c["class"]).isdigit() else 0)
        for w, v in zip(self.track, c["track"]):
            w.setValue(float(v))
        for w, v in zip(self.scale, c["scale"]):
            w.setValue(float(v))
        self.log.setChecked(bool(c.get("log")))
        self.wrap.setChecked(bool(c.get("wrap")))
        self.backup.setCurrentText(c.get("backup") or "")
        self.show_colour(c.get("colour"), c.get("backup_colour"))
        self._showing = showing

    def clear(self) -> None:
        """Empty every field (no curve selected): the last scan's curve must not stay in sight."""
        showing, self._showing = self._showing, True
        for w in (self.mnemonic, self.unit, self.description):
            w.clear()
        self.line_style.setCurrentIndex(0)
        for w in (*self.track, *self.scale):
            w.setValue(0.0)
        self.log.setChecked(False)
        self.wrap.setChecked(False)
        self.backup.setCurrentIndex(0)
        self.show_colour(None)
        self._showing = showing

    def show_colour(self, colour: str | None, backup_colour: str | None = None) -> None:
        if colour:
            self.swatch.setStyleSheet(f"background: {colour}; border: 1px solid #555")
            self.swatch.setText("")
        else:
            self.swatch.setStyleSheet("border: 1px dashed #999")
        self.backup_swatch.setVisible(bool(colour and backup_colour))
        if colour and backup_colour:
            self.backup_swatch.setStyleSheet(f"background: {backup_colour}; border: 1px solid #555")
        self.clear_ink.setEnabled(bool(colour))

    def apply_to(self, c: dict) -> None:
        """Write the fields into curve ``c`` (in place); an empty backup side removes it."""
        c.update({"mnemonic": self.mnemonic.text().strip(), "unit": self.unit.text().strip(),
                  "description": self.description.text().strip(), "class": self.line_style.currentIndex() + 1,
                  "track": [w.value() for w in self.track], "scale": [w.value() for w in self.scale],
                  "log": self.log.isChecked(), "wrap": self.wrap.isChecked()})
        if self.backup.currentText():
            c["backup"] = self.backup.currentText()
        else:
            c.pop("backup", None)
            c.pop("backup_colour", None)  # no backup scale, no ink of its own
