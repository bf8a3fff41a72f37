"""The window's docks and their sizes: built in their places, and given their default sizes back when a restored
layout leaves the scan a sliver."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

# the scan view's least share of the window before the docks are given their default sizes back
MIN_VIEW_SHARE = 0.35


def keep_scan_view_usable(win) -> None:
    """Give the docks their default sizes back when they leave the scan view a sliver.

    A layout saved on a wider screen, or saved while the training dock was pulled up, is restored
    as is by Qt, and the scan (the thing the user is here for) can open squeezed to a few pixels.
    """
    horizontal, vertical = QtCore.Qt.Orientation.Horizontal, QtCore.Qt.Orientation.Vertical
    areas = QtCore.Qt.DockWidgetArea
    docked = [d for d in win.findChildren(QtWidgets.QDockWidget) if d.isVisible() and not d.isFloating()]

    def first_in(area):
        return next((d for d in docked if win.dockWidgetArea(d) == area), None)

    if win.view.width() < MIN_VIEW_SHARE * win.width():
        pairs = [(first_in(areas.LeftDockWidgetArea), 0.18), (first_in(areas.RightDockWidgetArea), 0.27)]
        pairs = [(d, share) for d, share in pairs if d is not None]
        if pairs:
            win.resizeDocks([d for d, _ in pairs], [int(share * win.width()) for _, share in pairs], horizontal)
    bottom = first_in(areas.BottomDockWidgetArea)
    if bottom is not None and win.view.height() < MIN_VIEW_SHARE * win.height():
        # the height the central area (steps bar and scan) and the bottom dock share: 60 % to the scan's side
        shared = win.centralWidget().height() + bottom.height()
        win.resizeDocks([bottom], [int(0.4 * shared)], vertical)


TRAINING_VIEW_SHARE = 0.41  # of the window's height, what the scan view keeps when the training dock opens


def give_training_room(win) -> None:
    """The training dock, just opened, takes the height the scan can spare: the scan view keeps 41 % of the
    window's (most of what the central area has), the instruments the rest. Qt gave the dock its size hint (the
    scan a 112-px strip at 1280 × 720)."""
    dock = win.training
    if dock.isFloating() or not dock.isVisible():
        return
    central = win.centralWidget()
    shared = central.height() + dock.height()
    around_view = central.height() - win.view.height()  # the steps bar above the scan
    want = shared - around_view - int(TRAINING_VIEW_SHARE * win.height() + 0.5)
    win.resizeDocks([dock], [max(dock.minimumSizeHint().height(), want)], QtCore.Qt.Orientation.Vertical)


def build_docks(win):
    """The window's docks: the project list on the left, calibration and digitised curves tabbed on the right,
    training below (hidden until asked for); returns (calibration dock, curves dock, training dock)."""
    dock = QtWidgets.QDockWidget("Project", win)
    dock.setObjectName("project_dock")
    dock.setWidget(win.scans.project_list)
    win.addDockWidget(QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, dock)

    cdock = QtWidgets.QDockWidget("Calibration", win)
    cdock.setObjectName("calibration_dock")
    scroll = QtWidgets.QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(win.calibration.panel)
    # one scrollbar at most: the dock is never narrower than the panel, so only the height may scroll
    scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setMinimumWidth(win.calibration.panel.minimumSizeHint().width()
                           + scroll.verticalScrollBar().sizeHint().width() + 2 * scroll.frameWidth())
    cdock.setWidget(scroll)
    win.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, cdock)

    pdock = QtWidgets.QDockWidget("Digitised curves", win)
    pdock.setObjectName("curves_dock")
    curves = QtWidgets.QWidget()  # the last digitise's warnings over the plots
    column = QtWidgets.QVBoxLayout(curves)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(2)
    column.addWidget(win.digitizing.warnings)
    column.addWidget(win.digitizing.plots, 1)
    pdock.setWidget(curves)
    win.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, pdock)
    win.tabifyDockWidget(cdock, pdock)
    cdock.raise_()

    from ..training_dock import TrainingDock
    from .training import TrainingContext

    training = TrainingDock(TrainingContext(
        project_folder=lambda: win.scans.project.folder if win.scans.project is not None else None,
        model_path=lambda: win.models.path, step_size=win._step_size), win)
    win.addDockWidget(QtCore.Qt.DockWidgetArea.BottomDockWidgetArea, training)
    training.hide()
    return cdock, pdock, training
