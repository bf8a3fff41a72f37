"""The window's lasting settings (geometry, dock layout: QSettings under the organisation the tests can change)
and its style (the platform's, with widget animations off)."""

from __future__ import annotations

import os

from PySide6 import QtCore, QtWidgets


class _StillStyle(QtWidgets.QProxyStyle):
    """The platform style with widget animations off (``app/main_window.py: MainWindow.__init__`` says why)."""

    def styleHint(self, hint, option=None, widget=None, returnData=None):  # noqa: N802 - Qt's name
        if hint == QtWidgets.QStyle.StyleHint.SH_Widget_Animation_Duration:
            return 0
        return super().styleHint(hint, option, widget, returnData)


def install_still_style() -> None:
    app = QtWidgets.QApplication.instance()
    if app is not None and not isinstance(app.style(), _StillStyle):
        app.setStyle(_StillStyle(app.style().name()))


def settings() -> QtCore.QSettings:
    return QtCore.QSettings(os.environ.get("WELLTRACE_SETTINGS_ORG", "WellTrace"), "WellTrace")
