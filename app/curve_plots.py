"""The digitised curves, one plot per curve side by side, read as the paper is.

One depth axis for all (the first plot carries the values; the others share
its range and its grid), each curve's x axis its track's scale as printed
(a reversed scale drawn right to left, a log track on a log axis, the LAS
unit as written), three ticks chosen from the scale's own ends and middle so
narrow tracks never run their labels together, and a horizontal scroll bar
when the curves need more width than the dock has.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from .plot_axes import plain_axes

TICK_FONT = pg.QtGui.QFont()
TICK_FONT.setPointSize(7)
LABEL_SMALL = {"font-size": "7pt"}  # a narrow plot's label: its scale's ends and unit in the tick labels' size
MIN_PLOT_PX = 110  # narrower, and three labels of a track's scale no longer fit under it ...
NARROW_PLOT_PX = 56  # ... and narrower than this, not even its two ends


def curve_colours(specs) -> list[str]:
    """The colours the curves are drawn in, each its own: the QC picture's (its display colour, its ink, or the
    palette's; ``core/digitize/output/qc_picture.py``), so a curve is one colour in the app and in its picture."""
    from core.digitize.output.qc_picture import qc_colours  # noqa: PLC0415 - its drawing's imports, when drawn

    return qc_colours(list(specs))


def track_range(spec, values: np.ndarray) -> tuple[float, float]:
    """The x range of a curve's plot: its track's scale as on the paper, widened to any value past it (a wrap,
    a backup scale); on a log track in decades, as pyqtgraph's log axes take it."""
    lo, hi = min(spec.scale), max(spec.scale)
    finite = values[np.isfinite(values) & (values > 0)] if spec.log else values[np.isfinite(values)]
    if finite.size:
        lo, hi = min(lo, float(finite.min())), max(hi, float(finite.max()))
    if spec.log:
        return float(np.log10(lo)), float(np.log10(hi))
    return lo, hi


def _label(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e6 else f"{v:.3g}"


def scale_ticks(spec, middle: bool = True) -> list[tuple[float, str]]:
    """Three ticks: the scale's two ends and its middle (the middle decade on a log track), in axis units; the
    ends only without ``middle`` (a narrow plot)."""
    a, b = spec.scale
    if spec.log:
        la, lb = np.log10(a), np.log10(b)
        mid = float(np.round((la + lb) / 2))
        ticks = [(la, _label(a)), (mid, _label(10.0 ** mid)), (lb, _label(b))]
    else:
        ticks = [(a, _label(a)), ((a + b) / 2, _label((a + b) / 2)), (b, _label(b))]
    if not middle:
        ticks = [ticks[0], ticks[-1]]
    return sorted(set(ticks))


def axis_label(spec, ends: bool) -> str:
    """The text under a curve's plot: its unit (the title names the curve; ``MSFL (OHMM)`` was cut on a narrow
    track), and with ``ends`` its scale's two ends as printed, for a plot too narrow for their tick labels."""
    unit = spec.unit or ""
    if not ends:
        return unit
    a, b = (_label(v) for v in spec.scale)
    # the left end first, as printed; three lines under every plot alike, so that the plots keep one height and
    # a depth lies at one height across them all
    return f"{a} –<br>{b}<br>{unit or '&nbsp;'}"


class CurvePlots(QtWidgets.QScrollArea):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(pg.QtCore.Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setVerticalScrollBarPolicy(pg.QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.layout_widget.setBackground("w")
        self.setWidget(self.layout_widget)
        self.plots: list[pg.PlotItem] = []
        self.specs: list = []
        self._middle: bool | None = None

    def resizeEvent(self, ev):  # noqa: N802 - Qt's name
        super().resizeEvent(ev)
        self._fit_ticks()

    def _fit_ticks(self) -> None:
        """Three scale labels per plot where a plot is wide enough for them, the two ends where it is not: every
        curve stays in sight on a laptop's dock (five curves in 345 px) instead of behind a scrollbar."""
        if not self.plots:
            return
        per_plot = (self.viewport().width() - 50) / len(self.plots)
        middle = per_plot >= MIN_PLOT_PX
        if middle == self._middle:
            return
        self._middle = middle
        for p, spec in zip(self.plots, self.specs):
            bottom = p.getAxis("bottom")
            # a narrow plot's axis has no room for its scale's labels (pyqtgraph drops a level of labels whole
            # when they would fill more than the axis: NPHI's 0.45 and -0.15 vanished at 1280 × 720), so the
            # ends go into the label under it instead, with the unit: the title names the curve
            bottom.setTicks([scale_ticks(spec, True), []] if middle else [[(v, "") for v, _ in scale_ticks(spec)], []])
            bottom.setLabel(axis_label(spec, ends=not middle), **({} if middle else LABEL_SMALL))

    def getItem(self, row: int, col: int):  # noqa: N802 - the GraphicsLayout's name, kept for callers
        return self.layout_widget.getItem(row, col)

    def clear(self) -> None:
        self.layout_widget.clear()
        self.plots, self.specs, self._middle = [], [], None
        self.layout_widget.setMinimumWidth(0)

    def show_result(self, result, calib) -> None:
        """Plot every curve of a digitising result against depth (``result`` None: nothing)."""
        self.clear()
        if result is None or calib is None:
            return
        first = None
        colours = curve_colours(calib.curves)
        for i, spec in enumerate(calib.curves):
            p = self.layout_widget.addPlot(row=0, col=i, title=spec.mnemonic)
            p.invertY(True)
            plain_axes(p)  # OHMM stays OHMM, not kOHMM
            # as on the paper: a log-scaled track (resistivity) on a log axis, a reversed scale (NPHI 0.45 → -0.15,
            # DT 140 → 40) increasing to the left
            p.setLogMode(x=spec.log, y=False)
            p.invertX(spec.scale[0] > spec.scale[1])
            bottom = p.getAxis("bottom")
            bottom.setLabel(axis_label(spec, ends=False))
            bottom.setTicks([scale_ticks(spec), []])
            # three short labels may fill a narrow track's axis: pyqtgraph drops labels past 80 % of its length
            bottom.setStyle(tickFont=TICK_FONT, hideOverlappingLabels=False, textFillLimits=[(0, 1.0)])
            if first is None:
                first = p
                p.setLabel("left", "depth", units=calib.depth_unit)
            else:  # one depth axis: the others share its range and grid, without repeating its values
                p.setYLink(first)
                p.getAxis("left").setStyle(showValues=False)
                p.getAxis("left").setWidth(6)
            values = result.values[spec.mnemonic]
            p.plot(values, result.depth, connect="finite", pen=pg.mkPen(colours[i], width=1.5))
            # room beyond the scale's ends, so their tick labels are drawn, not dropped at the axis's edges
            p.setXRange(*track_range(spec, values), padding=0.25)
            p.showGrid(x=True, y=True, alpha=0.3)
            self.plots.append(p)
            self.specs.append(spec)
        self.layout_widget.setMinimumWidth(NARROW_PLOT_PX * len(calib.curves) + 50)
        self._fit_ticks()
