"""The training instruments: activation budget bar, loss-scale trace, gradient underflow
histogram, loss and metric curves, reconstructed curves against truth.

Each is a pyqtgraph plot fed with engine events; none computes what the
engine reports (bytes, scales, histograms come from the events).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from core.common.vocabulary import GIB
from core.model.precision import RESOLVED

from .plot_axes import plain_axes

# workspace: a step's transient beyond what it saves (core/engine/transient.py): predicted for CUDA and the CPU,
# absent from a training step's measured terms
TERMS = ("params", "grads", "optimizer", "activations", "workspace")
TERM_COLORS = {"params": "#4c72b0", "grads": "#55a868", "optimizer": "#c44e52", "activations": "#dd8452",
               "workspace": "#8172b3"}


SWATCH, LINE, DASHED, DOT = "■", "━", "╍", "●"
TITLE_SIZE = "10pt"  # the instruments are small plots; pyqtgraph's default title size clipped their titles
KEY_SIZE = "8pt"
TITLE_MARGIN_PX = 12  # kept free beside a title: the plot's own margins


class TitledPlot(pg.PlotWidget):
    """A plot whose title fits its width, whatever the width: the longest of the title's forms that fits on one
    line, and its colour key (label, colour, mark) under it, wrapped onto as many lines as it needs.

    The instruments share a dock with the scan, so at 1280 × 720 a plot is about 280 px wide: a title wider than
    that made pyqtgraph widen the whole plot past its widget, which cut its right-hand side (the r value, the
    newest steps, the third bar, the key's last entries). A legend inside the plot sat on the very bars, lines
    and labels it explains, so the key is the title's."""

    def __init__(self):
        super().__init__(background="w")
        self._forms: list[str] = [""]
        self._key: list[tuple[str, str, str]] = []
        self._shown: tuple | None = None
        self._ruler = QtWidgets.QGraphicsTextItem()  # measures a candidate line in the title's own font
        label = self.plotItem.titleLabel
        self._ruler.setFont(label.item.font())
        # the title over the whole plot (pyqtgraph puts it over the data area alone, beside the left axis): the
        # width it may take is the widget's
        self.plotItem.layout.removeItem(label)
        self.plotItem.layout.addItem(label, 0, 0, 1, 3)
        # pyqtgraph's LabelItem takes its text's width as its minimum and preferred width at every resize
        # (updateMin), and the view then clamps the whole plot to it: a title wider than the widget for a moment
        # kept the plot past the widget's right edge. The title's forms and key lines are chosen to fit
        # (title_lines), so the label asks for no width of its own
        keep_height = label.updateMin

        def update_min_no_width():
            keep_height()
            label.setMinimumWidth(0)
            for hint in (QtCore.Qt.SizeHint.MinimumSize, QtCore.Qt.SizeHint.PreferredSize):
                label._sizeHint[hint] = (0, label._sizeHint[hint][1])

        label.updateMin = update_min_no_width

    def set_title(self, forms: str | list[str], key: list[tuple[str, str, str]] | None = None) -> None:
        """The title (its forms, longest first: the first that fits is shown) and its key."""
        self._forms = [forms] if isinstance(forms, str) else list(forms)
        if key is not None:
            self._key = list(key)
        self._fit_title()

    def _width(self, html: str, size: str) -> float:
        self._ruler.setHtml(f"<span style='font-size: {size}'>{html}</span>")
        return self._ruler.boundingRect().width()

    def title_lines(self, width: float) -> tuple[str, list[str]]:
        """The title form and the key's lines that fit ``width`` pixels."""
        title = next((t for t in self._forms if self._width(t, TITLE_SIZE) <= width), self._forms[-1])
        lines: list[str] = []
        for label, color, mark in self._key:
            entry = f'<span style="color:{color}">{mark}</span>&nbsp;{label}'
            if lines and self._width(f"{lines[-1]} &nbsp;{entry}", KEY_SIZE) <= width:
                lines[-1] += f" &nbsp;{entry}"
            else:
                lines.append(entry)
        return title, lines

    def _fit_title(self) -> None:
        width = max(40.0, self.width() - TITLE_MARGIN_PX)
        title, lines = self.title_lines(width)
        if self._shown == (title, tuple(lines)):
            return  # a new title re-lays out the plot: only when it changes
        self._shown = (title, tuple(lines))
        html = title + "".join(f'<br><span style="font-size:{KEY_SIZE}">{line}</span>' for line in lines)
        self.setTitle(html, size=TITLE_SIZE)
        label = self.plotItem.titleLabel
        height = int(label.item.boundingRect().height()) + 2
        self.plotItem.layout.setRowFixedHeight(0, height)  # pyqtgraph's 30 px holds two lines, not three
        label.setMaximumHeight(height)

    def resizeEvent(self, ev):  # noqa: N802 - Qt's name
        super().resizeEvent(ev)
        if "_forms" in self.__dict__:  # not while pyqtgraph's own __init__ sizes the widget
            self._fit_title()

    def title_fits(self) -> bool:
        """Whether the title as shown lies within the widget (tests)."""
        item = self.plotItem.titleLabel.item
        rect = item.mapRectToScene(item.boundingRect())
        return rect.left() >= -0.5 and rect.right() <= self.width() + 0.5


class BudgetBar(TitledPlot):
    """One stacked bar per precision mode for one step; the ceiling as a draggable line."""

    ceiling_dragged = QtCore.Signal(float)  # GiB
    TITLE = ["Activation budget of one step (GiB)", "Budget of one step (GiB)", "Budget (GiB)"]

    def __init__(self):
        super().__init__()
        plain_axes(self)
        self.setLabel("left", "memory (GiB)")
        self.getAxis("bottom").setTicks([[(i, m) for i, m in enumerate(RESOLVED)]])
        self.values: dict[str, dict[str, float]] = {}  # mode -> term -> bytes
        self.measured: set[str] = set()
        # unlabelled: a label on the line sat on the bars' own labels wherever the ceiling crossed them;
        # its value is the dock's "memory ceiling" field, its meaning the title's key (see _fit)
        self.ceiling = pg.InfiniteLine(angle=0, movable=True, pen=pg.mkPen("#b00020", width=2))
        self.ceiling.setToolTip("the memory ceiling: drag it to re-plan")
        self.ceiling.sigPositionChangeFinished.connect(lambda ln: self.ceiling_dragged.emit(float(ln.value())))
        self.addItem(self.ceiling)
        ghost_pen = pg.mkPen("#777777", width=1, style=QtCore.Qt.PenStyle.DashLine)
        self.ghost = pg.InfiniteLine(angle=0, movable=False, pen=ghost_pen)
        self.addItem(self.ghost)
        self._keyed: tuple = ()
        self._terms_keyed = TERMS[:-1]
        self._ceiling_note = self.CEILING_KEY
        self._key_terms(TERMS[:-1])
        # one stacked segment item per term and one label per mode, made once and updated in place:
        # rebuilding a dozen scene items on every prediction cost the UI thread ~80 ms on a 2-core CPU
        self.bars = {term: pg.BarGraphItem(x=[0], height=[0], y0=[0], width=0.6, brush=TERM_COLORS[term],
                                           pen=pg.mkPen("k", width=0.5)) for term in TERMS}
        for bar in self.bars.values():
            bar.setVisible(False)
            self.addItem(bar)
        self.labels = [pg.TextItem("", color="k", anchor=(0.5, 1.0)) for _ in RESOLVED]
        for lbl in self.labels:
            self.addItem(lbl, ignoreBounds=True)
        self.plotItem.vb.sigResized.connect(lambda *_: self._fit())  # the labels' room is in pixels

    def _key_terms(self, terms: tuple[str, ...] | None = None, ceiling: str | None = None) -> None:
        """The title's colour key: the terms shown (the workspace only where a shown mode has one: a prediction),
        fp32's footprint and the ceiling."""
        self._terms_keyed = terms if terms is not None else self._terms_keyed
        self._ceiling_note = ceiling if ceiling is not None else self._ceiling_note
        keyed = (self._terms_keyed, self._ceiling_note)
        if keyed != self._keyed:
            self._keyed = keyed
            self.set_title(self.TITLE, [(t, TERM_COLORS[t], SWATCH) for t in self._terms_keyed]
                           + [("fp32 footprint", "#777777", DASHED), (self._ceiling_note, "#b00020", LINE)])

    LABEL_PX = 36  # a bar's two-line label (its size, measured or predicted) over the bar, in pixels
    CEILING_KEY = "ceiling (drag it)"  # the key's name for the ceiling while it is in view

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
        # room over the tallest bar for its label, in the plot's pixels (a fixed 45 % overlapped the title's key on
        # the 90-px plot of a 1280 × 720 window)
        view_px = max(1.0, float(self.plotItem.vb.height()))
        head = 1.0 / (1.0 - min(0.6, self.LABEL_PX / view_px))
        self.setYRange(0, upper * head, padding=0)
        self.setXRange(-0.6, len(RESOLVED) - 0.4, padding=0)  # room for the outer bars' labels
        self._key_terms(ceiling=self.CEILING_KEY if ceil <= upper * head else f"ceiling {ceil:.1f} GiB, above")

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
        shown = [i for i, m in enumerate(RESOLVED) if m in self.values]
        bottoms = np.zeros(len(shown))
        for term in TERMS:
            heights = np.array([self.values[RESOLVED[i]][term] / GIB for i in shown])
            self.bars[term].setOpts(x=shown, height=heights, y0=bottoms.copy())
            self.bars[term].setVisible(bool(shown))
            bottoms += heights
        tops = dict(zip(shown, bottoms))
        for i, (mode, lbl) in enumerate(zip(RESOLVED, self.labels)):
            if i not in tops:
                lbl.setText("")
                continue
            top = float(tops[i])
            size = f"{top:.2f} GiB" if top >= 0.1 else f"{top * 1024:.1f} MiB"
            lbl.setText(f"{size}\n{'measured' if mode in self.measured else 'predicted'}")
            lbl.setPos(i, top)
        if "fp32" in self.values:
            self.ghost.setValue(self.total("fp32") / GIB)
        self._key_terms(TERMS if any(v["workspace"] for v in self.values.values()) else TERMS[:-1])
        self._fit()


class ScaleTrace(TitledPlot):
    def __init__(self):
        super().__init__()
        self.set_title(["Loss scale (log2)", "Loss scale"])
        plain_axes(self)
        self.setLabel("left", "log2 scale")
        self.setLabel("bottom", "step")
        self.showGrid(x=True, y=True, alpha=0.25)
        self.curve = self.plot([], [], pen=pg.mkPen("#4c72b0", width=2), name="scale")
        # skipped steps as vertical marks: (pyqtgraph's scatter symbols cost ~10 ms per repaint each)
        self.skip_lines: list[pg.InfiniteLine] = []
        # what the panel says when no scaler runs (bf16, fp32): in its middle, in place of an empty axis
        self.note = pg.TextItem("", color="#555555", anchor=(0.5, 0.5))
        self.addItem(self.note, ignoreBounds=True)
        self.steps: list[int] = []
        self.log2: list[float] = []
        self.skipped: list[tuple[int, float]] = []

    def set_note(self, note: str) -> None:
        """Say why there is no trace (no scaler runs) where the trace would be, or (``""``) go back to the trace."""
        self.note.setText(note)
        for name in ("left", "bottom"):
            self.showAxis(name, not note)
        self.showGrid(x=not note, y=not note, alpha=0.25)
        if note:
            self.steps, self.log2, self.skipped = [], [], []
            self.refresh()
            self.disableAutoRange()
            self.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
            self.note.setPos(0.5, 0.5)
            self._wrap_note()
        else:
            self.enableAutoRange()

    def _wrap_note(self) -> None:
        self.note.setTextWidth(max(60.0, 0.85 * self.plotItem.vb.width()))

    def resizeEvent(self, ev):  # noqa: N802 - Qt's name
        super().resizeEvent(ev)
        if "note" in self.__dict__ and self.note.toPlainText():
            self._wrap_note()

    def reset(self, note: str = "") -> None:
        self.steps, self.log2, self.skipped = [], [], []
        self.set_note(note)
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


class GradHistogram(TitledPlot):
    """|g| on a log2 axis, with fp16's subnormal and normal ranges and bf16's range as bands."""

    # the bands are named in the title's key: names on the axis sat on the bars of a small plot, and so did a
    # note on bf16's range drawn over the bars
    KEY = [("fp16 subnormal", "#f5a623", SWATCH), ("fp16 normal", "#3cb371", SWATCH),
           ("fp16 flush to zero", "#b00020", "┃"), ("bf16: all of this axis", "#555555", "↔")]

    def __init__(self):
        super().__init__()
        self.set_title(["Gradient magnitudes (log2 |g|)", "Gradients (log2 |g|)"], self.KEY)
        plain_axes(self)
        self.setLabel("left", "elements")
        self.setLabel("bottom", "log2 |g|")
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.9, brush="#4c72b0")
        self.addItem(self.bars)
        sub = pg.LinearRegionItem((-24, -14), movable=False, brush=(255, 165, 0, 45))
        normal = pg.LinearRegionItem((-14, 16), movable=False, brush=(60, 179, 113, 30))
        for band in (sub, normal):
            self.addItem(band, ignoreBounds=True)
        self.flush_line = pg.InfiniteLine(pos=-24, angle=90, pen=pg.mkPen("#b00020", width=2))
        self.addItem(self.flush_line, ignoreBounds=True)
        self.counts = np.zeros(0)

    def set_hist(self, lo: int, counts: list[int], underflow_share: float) -> None:
        self.counts = np.asarray(counts, dtype=float)
        x = lo + np.arange(len(counts)) + 0.5
        self.bars.setOpts(x=x, height=self.counts, width=0.9)
        share = f"{underflow_share:.3%}"
        self.set_title([f"|g|: {share} would flush to zero in unscaled fp16", f"|g|: {share} flush to zero in fp16",
                        f"{share} flush to zero in fp16", f"{share} flush in fp16"])


class LossPlot(TitledPlot):
    # validation is measured a few times a run: its points are marked, so the first one shows on its own
    KEY = [("train loss", "#4c72b0", LINE), ("val loss", "#c44e52", LINE + DOT), ("mask F1", "#55a868", LINE + DOT),
           ("curve r", "#8172b3", DASHED + DOT)]

    def __init__(self):
        super().__init__()
        self.set_title(["Loss and validation", "Loss"], self.KEY)
        plain_axes(self)
        self.setLabel("left", "loss / metric")
        self.setLabel("bottom", "step")
        self.showGrid(x=True, y=True, alpha=0.25)
        (_, train, _), (_, val, _), (_, f1, _), (_, r, _) = self.KEY
        self.train = self.plot([], [], pen=pg.mkPen(train, width=1))

        def marked(color, style=QtCore.Qt.PenStyle.SolidLine):
            return self.plot([], [], pen=pg.mkPen(color, width=2.5, style=style), symbol="o", symbolSize=6,
                             symbolBrush=color, symbolPen=None)

        self.val, self.f1 = marked(val), marked(f1)
        self.r = marked(r, QtCore.Qt.PenStyle.DashLine)
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


class CurvesVsTruth(TitledPlot):
    TRUTH, TRACED = "#333333", "#d62728"

    def __init__(self):
        super().__init__()
        self.set_title(self._titles("Reconstructed curve"))
        plain_axes(self)
        self.invertY(True)
        self.setLabel("left", "depth")
        self.truth = self.plot([], [], pen=pg.mkPen(self.TRUTH, width=1.5))
        self.pred = self.plot([], [], pen=pg.mkPen(self.TRACED, width=1.5), connect="finite")

    def _titles(self, name: str, r: float | None = None) -> list[str]:
        """The title's forms, longest first; every one keeps r (the colours of the words are the key: no legend
        over the curves). The log's name is under the plot as well."""
        score = f" (r = {r:.2f})" if r is not None and math.isfinite(r) else ""
        vs = f'<span style="color:{self.TRACED}">traced</span> vs <span style="color:{self.TRUTH}">truth</span>'
        curve = name.split()[-1] if name else name
        return [f"{name}: {vs}{score}", f"{curve}: {vs}{score}", f"{vs}{score}",
                f'<span style="color:{self.TRACED}">traced</span>{score or " vs truth"}']

    def show_curve(self, name: str, depth, pred, truth, r: float | None) -> None:
        d = np.asarray(depth, float)
        p = np.array([np.nan if v is None else v for v in pred], float)
        t = np.array([np.nan if v is None else v for v in truth], float)
        self.truth.setData(t, d, connect="finite")
        self.pred.setData(p, d)
        self.set_title(self._titles(name, r))
        self.setLabel("bottom", name)

    def show_evaluation(self, ev) -> None:
        """The first curve of an evaluation event's held-out logs, traced against its truth."""
        for entry in ev.per_log:
            for c in entry.get("curves", []):
                self.show_curve(f"{entry['name']} {c['mnemonic']}", c["depth"], c["pred"], c["truth"], c["r"])
                return
