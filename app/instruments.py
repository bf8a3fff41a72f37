"""The training instruments: activation budget bar, loss-scale trace, gradient underflow
histogram, loss and metric curves, reconstructed curves against truth.

Each is a pyqtgraph plot fed with engine events; none computes what the
engine reports (bytes, scales, histograms come from the events).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore

from .plot_axes import plain_axes

GIB = 1024**3
MODES = ("fp32", "bf16", "fp16")
TERMS = ("params", "grads", "optimizer", "activations")
TERM_COLORS = {"params": "#4c72b0", "grads": "#55a868", "optimizer": "#c44e52", "activations": "#dd8452"}


def _plot(title: str, left: str, bottom: str) -> pg.PlotWidget:
    w = pg.PlotWidget(background="w", title=title)
    plain_axes(w)
    w.setLabel("left", left)
    w.setLabel("bottom", bottom)
    w.showGrid(x=True, y=True, alpha=0.25)
    return w


class BudgetBar(pg.PlotWidget):
    """One stacked bar per precision mode for one step; the ceiling as a draggable line."""

    ceiling_dragged = QtCore.Signal(float)  # GiB

    def __init__(self):
        super().__init__(background="w", title="Activation budget of one step (GiB)")
        plain_axes(self)
        self.setLabel("left", "memory (GiB)")
        self.getAxis("bottom").setTicks([[(i, m) for i, m in enumerate(MODES)]])
        legend = self.addLegend(offset=(-10, 10))
        self.values: dict[str, dict[str, float]] = {}  # mode -> term -> bytes
        self.measured: set[str] = set()
        for term in TERMS:  # legend entries: one swatch per term
            legend.addItem(pg.BarGraphItem(x=[0], height=[0], width=0.5, brush=TERM_COLORS[term]), term)
        self.ceiling = pg.InfiniteLine(angle=0, movable=True, pen=pg.mkPen("#b00020", width=2),
                                       label="ceiling {value:.2f} GiB", labelOpts={"position": 0.85, "color": "#b00020"})
        self.ceiling.sigPositionChangeFinished.connect(lambda ln: self.ceiling_dragged.emit(float(ln.value())))
        self.addItem(self.ceiling)
        self.ghost = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen("#777777", width=1, style=QtCore.Qt.PenStyle.DashLine),
                                     label="fp32 footprint", labelOpts={"position": 0.5, "color": "#555555"})
        # the label sits over the middle (bf16) column, the empty space between a 16-bit bar and fp32's height
        self.addItem(self.ghost)
        # one stacked segment item per term and one label per mode, made once and updated in place:
        # rebuilding a dozen scene items on every prediction cost the UI thread ~80 ms on a 2-core CPU
        self.bars = {term: pg.BarGraphItem(x=[0], height=[0], y0=[0], width=0.6, brush=TERM_COLORS[term],
                                           pen=pg.mkPen("k", width=0.5)) for term in TERMS}
        for bar in self.bars.values():
            bar.setVisible(False)
            self.addItem(bar)
        self.labels = [pg.TextItem("", color="k", anchor=(0.5, 1.0)) for _ in MODES]
        for lbl in self.labels:
            self.addItem(lbl, ignoreBounds=True)

    def set_ceiling(self, gib: float) -> None:
        self.ceiling.setValue(gib)
        self._fit()

    def _fit(self) -> None:
        """Show the bars legibly; include the ceiling when it is within reach of them."""
        top = max((self.total(m) for m in self.values), default=0.0) / GIB
        ceil = float(self.ceiling.value())
        if top <= 0:
            return
        upper = max(ceil, top) if ceil <= 4 * top else top
        self.setYRange(0, upper * 1.25, padding=0)
        self.ceiling.label.setFormat("ceiling {value:.2f} GiB" if ceil <= upper * 1.25 else
                                     f"ceiling {ceil:.2f} GiB (above the view)")

    def set_terms(self, mode: str, terms: dict[str, float], measured: bool) -> None:
        self.set_modes({mode: terms}, measured)

    def set_modes(self, terms_by_mode: dict[str, dict[str, float]], measured: bool) -> None:
        """Several modes' terms at once (a prediction covers all three): one redraw, not one per mode."""
        for mode, terms in terms_by_mode.items():
            self.values[mode] = {t: float(terms.get(t, 0)) for t in TERMS}
            if measured:
                self.measured.add(mode)
        self._redraw()

    def total(self, mode: str) -> float:
        return sum(self.values.get(mode, {}).values())

    def _redraw(self) -> None:
        shown = [i for i, m in enumerate(MODES) if m in self.values]
        bottoms = np.zeros(len(shown))
        for term in TERMS:
            heights = np.array([self.values[MODES[i]][term] / GIB for i in shown])
            self.bars[term].setOpts(x=shown, height=heights, y0=bottoms.copy())
            self.bars[term].setVisible(bool(shown))
            bottoms += heights
        tops = dict(zip(shown, bottoms))
        for i, (mode, lbl) in enumerate(zip(MODES, self.labels)):
            if i not in tops:
                lbl.setText("")
                continue
            top = float(tops[i])
            size = f"{top:.2f} GiB" if top >= 0.1 else f"{top * 1024:.1f} MiB"
            lbl.setText(f"{size}\n{'measured' if mode in self.measured else 'predicted'}")
            lbl.setPos(i, top)
        if "fp32" in self.values:
            self.ghost.setValue(self.total("fp32") / GIB)
        self._fit()


class ScaleTrace(pg.PlotWidget):
    def __init__(self):
        super().__init__(background="w", title="Loss scale (log2)")
        plain_axes(self)
        self.setLabel("left", "log2 scale")
        self.setLabel("bottom", "step")
        self.showGrid(x=True, y=True, alpha=0.25)
        self.curve = self.plot([], [], pen=pg.mkPen("#4c72b0", width=2), name="scale")
        # skipped steps as vertical marks: (pyqtgraph's scatter symbols cost ~10 ms per repaint each)
        self.skip_lines: list[pg.InfiniteLine] = []
        self.note = pg.TextItem("", color="#555555", anchor=(0, 0))
        self.addItem(self.note, ignoreBounds=True)
        self.steps: list[int] = []
        self.log2: list[float] = []
        self.skipped: list[tuple[int, float]] = []

    def reset(self, note: str = "") -> None:
        self.steps, self.log2, self.skipped = [], [], []
        self.note.setText(note)
        self.note.setPos(0, 0)
        self.refresh()

    def add(self, step: int, scale: float | None, skipped: bool) -> None:
        if scale is None:
            return
        self.steps.append(step)
        self.log2.append(math.log2(scale))
        if skipped:
            self.skipped.append((step, math.log2(scale)))

    def refresh(self) -> None:
        self.curve.setData(self.steps, self.log2)
        while len(self.skip_lines) > len(self.skipped):
            self.removeItem(self.skip_lines.pop())
        for step, _ in self.skipped[len(self.skip_lines):]:
            line = pg.InfiniteLine(pos=step, angle=90, pen=pg.mkPen("#b00020", width=2,
                                                                    style=QtCore.Qt.PenStyle.DashLine),
                                   label="skipped", labelOpts={"position": 0.95, "color": "#b00020"})
            self.addItem(line, ignoreBounds=True)
            self.skip_lines.append(line)


class GradHistogram(pg.PlotWidget):
    """|g| on a log2 axis, with fp16's subnormal and normal ranges and bf16's range as bands."""

    def __init__(self):
        super().__init__(background="w", title="Gradient magnitudes (log2 |g|)")
        plain_axes(self)
        self.setLabel("left", "elements")
        self.setLabel("bottom", "log2 |g|")
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.9, brush="#4c72b0")
        self.addItem(self.bars)
        sub = pg.LinearRegionItem((-24, -14), movable=False, brush=(255, 165, 0, 45))
        normal = pg.LinearRegionItem((-14, 16), movable=False, brush=(60, 179, 113, 30))
        # band names sit on the axis, just above it; the normal band's moves right of the last bar (set_hist)
        self.band_labels = []
        for item, text, x in ((sub, "fp16\nsubnormal", -23.5), (normal, "fp16\nnormal", -13.5)):
            self.addItem(item, ignoreBounds=True)
            lbl = pg.TextItem(text, color="#444444", anchor=(0, 1))
            lbl.setPos(x, 0)
            self.addItem(lbl, ignoreBounds=True)
            self.band_labels.append(lbl)
        self.flush_line = pg.InfiniteLine(pos=-24, angle=90, pen=pg.mkPen("#b00020", width=2),
                                          label="fp16 flush\nto zero", labelOpts={"position": 0.6, "color": "#b00020"})
        self.addItem(self.flush_line, ignoreBounds=True)
        # top-left, over magnitudes below fp16's floor where few gradients live, so it never hides bars
        self.bf16 = pg.TextItem("bf16 covers\n2^-133 … 2^127:\nall of this axis", color="#555555", anchor=(0, 0))
        self.addItem(self.bf16, ignoreBounds=True)
        self.counts = np.zeros(0)

    def set_hist(self, lo: int, counts: list[int], underflow_share: float) -> None:
        self.counts = np.asarray(counts, dtype=float)
        x = lo + np.arange(len(counts)) + 0.5
        self.bars.setOpts(x=x, height=self.counts, width=0.9)
        top = float(self.counts.max()) if self.counts.size else 1.0
        self.bf16.setPos(lo, top)
        filled = np.flatnonzero(self.counts)
        right = lo + int(filled[-1]) + 1 if filled.size else -14
        self.band_labels[1].setPos(min(max(-13.5, right + 0.5), lo + len(counts) - 6), 0)
        self.setTitle(f"|g|: {underflow_share:.3%} flush to zero in unscaled fp16")


class LossPlot(pg.PlotWidget):
    def __init__(self):
        super().__init__(background="w", title="Loss and validation")
        plain_axes(self)
        self.setLabel("left", "loss / metric")
        self.setLabel("bottom", "step")
        self.addLegend()
        self.showGrid(x=True, y=True, alpha=0.25)
        self.train = self.plot([], [], pen=pg.mkPen("#4c72b0", width=1), name="train loss")
        self.val = self.plot([], [], pen=pg.mkPen("#c44e52", width=2.5), name="val loss")
        self.f1 = self.plot([], [], pen=pg.mkPen("#55a868", width=2.5), name="mask F1")
        self.r = self.plot([], [], pen=pg.mkPen("#8172b3", width=2.5, style=QtCore.Qt.PenStyle.DashLine),
                           name="curve r")
        self.data = {"train": ([], []), "val": ([], []), "f1": ([], []), "r": ([], [])}

    def reset(self) -> None:
        self.data = {k: ([], []) for k in self.data}
        self.refresh()

    def add(self, key: str, step: int, value: float | None) -> None:
        if value is not None and math.isfinite(value):
            self.data[key][0].append(step)
            self.data[key][1].append(value)

    def refresh(self) -> None:
        for key, item in (("train", self.train), ("val", self.val), ("f1", self.f1), ("r", self.r)):
            item.setData(*self.data[key])


class CurvesVsTruth(pg.PlotWidget):
    def __init__(self):
        super().__init__(background="w", title="Reconstructed curve vs truth")
        plain_axes(self)
        self.invertY(True)
        self.setLabel("left", "depth")
        self.addLegend()
        self.truth = self.plot([], [], pen=pg.mkPen("#333333", width=1.5), name="truth")
        self.pred = self.plot([], [], pen=pg.mkPen("#d62728", width=1.5), name="traced", connect="finite")

    def show_curve(self, name: str, depth, pred, truth, r: float | None) -> None:
        d = np.asarray(depth, float)
        p = np.array([np.nan if v is None else v for v in pred], float)
        t = np.array([np.nan if v is None else v for v in truth], float)
        self.truth.setData(t, d, connect="finite")
        self.pred.setData(p, d)
        self.setTitle(f"{name}: traced vs truth" + (f" (r = {r:.3f})" if r is not None and math.isfinite(r) else ""))
        self.setLabel("bottom", name)
