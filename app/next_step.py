"""The steps of one scan, Calibrate → Label → Digitise → Export, with the next one highlighted.

A new user opening a scan meets a view, three docks and two toolbars, and
nothing says where to begin. The bar above the scan says it: each step shows
whether it is done, the next one is highlighted with a line saying what to do,
and a click on a step does it (or starts it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6 import QtCore, QtWidgets

STEPS = ("calibrate", "label", "digitise", "export")
TITLES = {"calibrate": "1 Calibrate", "label": "2 Label", "digitise": "3 Digitise", "export": "4 Export LAS"}


def is_placeholder_curve(spec) -> bool:
    """The curve *Add curve* starts with (``CURVE1``, no unit, 0–100) before the user names it: it calibrates
    nothing yet, so it does not tick the Calibrate step."""
    return (re.fullmatch(r"CURVE\d+", spec.mnemonic) is not None and not spec.unit
            and tuple(spec.scale) == (0.0, 100.0))


@dataclass
class ScanSteps:
    calibrated: bool = False  # two depth picks and a curve named by the user (or read from the scale box)
    labelled: bool = False  # a mask painted (optional when a model is loaded)
    digitized: bool = False
    exported: bool = False
    has_model: bool = False
    picked: bool = False  # two depth picks, whatever the curves: what is left of calibrating is naming them

    def next(self) -> str | None:
        if not self.calibrated:
            return "calibrate"
        if not self.labelled and not self.has_model and not self.digitized:  # digitised: labelling was skipped
            return "label"
        if not self.digitized:
            return "digitise"
        if not self.exported:
            return "export"
        return None

    def done(self, step: str) -> bool:
        return {"calibrate": self.calibrated, "label": self.labelled, "digitise": self.digitized,
                "export": self.exported}[step]

    def short_hint(self) -> str:
        """What to do next, in a few words (the bar's line; :meth:`hint` is the whole advice)."""
        if self.next() == "calibrate" and self.picked:
            return "Next: calibrate (name each curve and its scale)"
        return {"calibrate": "Next: calibrate (Propose calibration)", "label": "Next: label (Pre-fill, then correct)",
                "digitise": "Next: digitise", "export": "Next: export to LAS",
                None: "Done: exported"}[self.next()]

    def hint(self) -> str:
        if self.next() == "calibrate" and self.picked:
            return ("Next: calibrate. The depths are picked; check the curves in the calibration dock (read from the "
                    "scale box, or Add curve per track) and give each its name, line style and the scale ends as "
                    "printed.")
        return {
            "calibrate": "Next: calibrate. Propose calibration finds the tracks and reads the printed depths; "
                         "check the orange depth lines and the shaded tracks, then name each curve and its scale.",
            "label": "Next: label. Pre-fill paints the curves from the classical tracer; correct them with the "
                     "brush and eraser (or load a model, File › Load model).",
            "digitise": "Next: digitise. The curves are traced along depth and plotted on the right"
                        + ("; labels you painted are followed as painted." if self.labelled else "."),
            "export": "Next: export the digitised curves to a LAS file.",
            None: "Done: the curves of this scan are exported. Open the next scan in the project list.",
        }[self.next()]


class _ElidedLabel(QtWidgets.QLabel):
    """One line, cut with "…" to the width it has when it must be: the bar never grows taller than a line, nor
    holds the scan view wider than its buttons (the whole advice is in the tooltip)."""

    def __init__(self):
        super().__init__()
        self._full = ""
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        self._full = text
        self._elide()

    def text(self) -> str:
        return self._full

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, QtCore.Qt.TextElideMode.ElideRight, max(0, self.width()))
        super().setText(shown)


class StepsBar(QtWidgets.QFrame):
    step_clicked = QtCore.Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("steps_bar")
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(4, 2, 4, 2)
        outer.setSpacing(0)
        lay = QtWidgets.QHBoxLayout()
        outer.addLayout(lay)
        self.buttons: dict[str, QtWidgets.QToolButton] = {}
        for name in STEPS:
            b = QtWidgets.QToolButton()
            b.setText(TITLES[name])
            b.setAutoRaise(True)
            b.clicked.connect(lambda _=False, n=name: self.step_clicked.emit(n))
            lay.addWidget(b)
            self.buttons[name] = b
        lay.addStretch(1)
        self.hint = _ElidedLabel()  # a row of its own: the buttons leave a narrow scan view no room beside them
        # beside the hint, the readout under the cursor (pixel, depth, each curve's value): in the status bar it
        # took the messages' room (a digitise's outcome was squeezed out by it); here it costs the scan no height
        self.readout = _ElidedLabel()
        self.readout.setObjectName("cursor_readout")
        self.readout.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        self.readout.setStyleSheet("color: #333333")
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.hint, 1)
        row.addWidget(self.readout, 1)
        outer.addLayout(row)
        self.state = ScanSteps()
        self.set_state(None)

    def set_state(self, state: ScanSteps | None) -> None:
        """Show a scan's steps (``None``: no scan open)."""
        self.setEnabled(state is not None)
        self.state = state or ScanSteps()
        nxt = self.state.next() if state is not None else None
        for name, b in self.buttons.items():
            done = state is not None and self.state.done(name)
            b.setText(("✓ " if done else "") + TITLES[name])
            if name == nxt:
                b.setStyleSheet("QToolButton { background: #1f6fd1; color: white; font-weight: bold;"
                                " border-radius: 3px; padding: 2px 6px; }")
            elif done:
                b.setStyleSheet("QToolButton { color: #1b7a2f; padding: 2px 6px; }")
            else:
                b.setStyleSheet("QToolButton { color: #555; padding: 2px 6px; }")
            b.setToolTip({"calibrate": "propose a calibration, or pick depths and tracks by hand",
                          "label": "pre-fill the mask and correct it", "digitise": "trace the calibrated curves",
                          "export": "write the digitised curves to LAS"}[name])
        self.hint.setText(self.state.short_hint() if state is not None else "Open a scan or a project")
        # the hint takes the width it needs (the readout the rest), up to half the row when both are long
        self.hint.setMaximumWidth(self.hint.fontMetrics().horizontalAdvance(self.hint.text()) + 8)
        self.hint.setToolTip(self.state.hint() if state is not None else "Open a scan (File › Open scan) or a "
                             "project folder (File › Open project) to begin.")

    def next_step(self) -> str | None:
        return self.state.next()
