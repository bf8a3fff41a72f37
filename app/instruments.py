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

from core.common.vocabulary import GIB
from core.model.precision import RESOLVED

from .plot_axes import plain_axes

# workspace: a step's transient beyond what it saves (core/engine/transient.py): predicted for CUDA and the CPU,
# absent from a training step's measured terms
TERMS = ("params", "grads", "optimizer", "activations", "workspace")
TERM_COLORS = {"params": "#4c72b0", "grads": "#55a868", "optimizer": "#c44e52", "activations": "#dd8452",
               "workspace": "#8172b3"}


SWATCH, LINE, DASHED = "■", "━", "╍"
TITLE_SIZE = "10pt"  # the instruments are small plots; pyqtgraph's default title size clipped their titles


def keyed_title(title: str, key: list[tuple[str, str, str]]) -> str:
    """A plot title with its key (label, colour, mark) as a second, smaller line.

    The instruments share a dock with the scan, so their plots can be a couple of hundred pixels
    tall; a legend inside one sat on the very bars, lines and labels it explains.
    """
    entries = " &nbsp;".join(f'<span style="color:{color}">{mark}</span>&nbsp;{label}' for label, color, mark in key)
    return f'{title}<br><span style="font-size:8pt">{entries}</span>'


class BudgetBar(pg.PlotWidget):
    """One stacked bar per precision mode for one step; the ceiling as a draggable line."""

    ceiling_dragged = QtCore.Signal(float)  # GiB

    def __init__(self):
        super().__init__(background="w")
        plain_axes(self)
        self.setLabel("left", "memory (GiB)")
        self.getAxis("bottom").setTicks([[(i, m) for i, m in enumerate(RESOLVED)]])
        self.values: dict[str, dict[str, float]] = {}  # mode -> term -> bytes
        self.measured: set[str] = set()
        # unlabelled: a label on the line sat on the bars' own labels wherever the ceiling crossed them;
        # its value is the dock's "memory ceiling" field, its meaning the axis title (see _fit)
        self.ceiling = pg.InfiniteLine(angle=0, movable=True, pen=pg.mkPen("#b00020", width=2))
        self.ceiling.setToolTip("the memory ceiling: drag it to re-plan")
        self.ceiling.sigPositionChangeFinished.connect(lambda ln: self.ceiling_dragged.emit(float(ln.value())))
        self.addItem(self.ceiling)
        ghost_pen = pg.mkPen("#777777", width=1, style=QtCore.Qt.PenStyle.DashLine)
        self.ghost = pg.InfiniteLine(angle=0, movable=False, pen=ghost_pen)
        self.addItem(self.ghost)
        self._keyed: tuple[str, ...] = ()
        self._key_terms(TERMS[:-1])
        self._caption = self.CAPTION
        self.setLabel("bottom", self._caption)
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

    def _key_terms(self, terms: tuple[str, ...]) -> None:
        """The title's colour key: the workspace only where a shown mode has one (a prediction)."""
        if terms != self._keyed:
            self._keyed = terms
            self.setTitle(keyed_title("Activation budget of one step (GiB)",
                                      [(t, TERM_COLORS[t], SWATCH) for t in terms]), size=TITLE_SIZE)

    HEAD_ROOM = 1.45  # the y range over the tallest bar (or the ceiling): room for its two-line label
    CAPTION = "dashed: fp32 footprint · red: ceiling (drag)"  # the bottom axis title while the ceiling is in view

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
        self.setYRange(0, upper * self.HEAD_ROOM, padding=0)
        self.setXRange(-0.6, len(RESOLVED) - 0.4, padding=0)  # room for the outer bars' labels
        caption = (self.CAPTION if ceil <= upper * self.HEAD_ROOM else
                   f"dashed: fp32 footprint · ceiling {ceil:.2f} GiB: off scale")
        if caption != self._caption:  # a new axis title re-lays out the plot: only when it changes
            self._caption = caption
            self.setLabel("bottom", caption)

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


class ScaleTrace(pg.PlotWidget):
    def __init__(self):
        super().__init__(background="w")
        self.setTitle("Loss scale (log2)", size=TITLE_SIZE)
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

    # the bands are named in the title's key: names on the axis sat on the bars of a small plot
    KEY = [("fp16 subnormal", "#f5a623", SWATCH), ("fp16 normal", "#3cb371", SWATCH),
           ("fp16 flush to zero", "#b00020", "┃")]

    def __init__(self):
        super().__init__(background="w")
        self.setTitle(keyed_title("Gradient magnitudes (log2 |g|)", self.KEY), size=TITLE_SIZE)
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
        # top-left, over magnitudes below fp16's floor where few gradients live, so it never hides bars
        self.bf16 = pg.TextItem("bf16 covers\n2^-133…2^127:\nall of this axis", color="#555555", anchor=(0, 0))
        self.addItem(self.bf16, ignoreBounds=True)
        self.counts = np.zeros(0)

    def set_hist(self, lo: int, counts: list[int], underflow_share: float) -> None:
        self.counts = np.asarray(counts, dtype=float)
        x = lo + np.arange(len(counts)) + 0.5
        self.bars.setOpts(x=x, height=self.counts, width=0.9)
        top = float(self.counts.max()) if self.counts.size else 1.0
        self.bf16.setPos(lo, top)
        self.setTitle(keyed_title(f"|g|: {underflow_share:.3%} flush to zero in unscaled fp16", self.KEY),
                      size=TITLE_SIZE)


class LossPlot(pg.PlotWidget):
    KEY = [("train loss", "#4c72b0", LINE), ("val loss", "#c44e52", LINE), ("mask F1", "#55a868", LINE),
           ("curve r", "#8172b3", DASHED)]

    def __init__(self):
        super().__init__(background="w")
        self.setTitle(keyed_title("Loss and validation", self.KEY), size=TITLE_SIZE)
        plain_axes(self)
        self.setLabel("left", "loss / metric")
        self.setLabel("bottom", "step")
        self.showGrid(x=True, y=True, alpha=0.25)
        (_, train, _), (_, val, _), (_, f1, _), (_, r, _) = self.KEY
        self.train = self.plot([], [], pen=pg.mkPen(train, width=1))
        self.val = self.plot([], [], pen=pg.mkPen(val, width=2.5))
        self.f1 = self.plot([], [], pen=pg.mkPen(f1, width=2.5))
        self.r = self.plot([], [], pen=pg.mkPen(r, width=2.5, style=QtCore.Qt.PenStyle.DashLine))
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
    TRUTH, TRACED = "#333333", "#d62728"

    def __init__(self):
        super().__init__(background="w")
        self.setTitle(self._title("Reconstructed curve"), size=TITLE_SIZE)
        plain_axes(self)
        self.invertY(True)
        self.setLabel("left", "depth")
        self.truth = self.plot([], [], pen=pg.mkPen(self.TRUTH, width=1.5))
        self.pred = self.plot([], [], pen=pg.mkPen(self.TRACED, width=1.5), connect="finite")

    def _title(self, name: str, r: float | None = None) -> str:
        """The colours of the words are the key (no legend over the curves)."""
        score = f" (r = {r:.2f})" if r is not None and math.isfinite(r) else ""
        return (f'{name}: <span style="color:{self.TRACED}">traced</span> vs '
                f'<span style="color:{self.TRUTH}">truth</span>{score}')

    def show_curve(self, name: str, depth, pred, truth, r: float | None) -> None:
        d = np.asarray(depth, float)
        p = np.array([np.nan if v is None else v for v in pred], float)
        t = np.array([np.nan if v is None else v for v in truth], float)
        self.truth.setData(t, d, connect="finite")
        self.pred.setData(p, d)
        self.setTitle(self._title(name, r), size=TITLE_SIZE)
        self.setLabel("bottom", name)

    def show_evaluation(self, ev) -> None:
        """The first curve of an evaluation event's held-out logs, traced against its truth."""
        for entry in ev.per_log:
            for c in entry.get("curves", []):
                self.show_curve(f"{entry['name']} {c['mnemonic']}", c["depth"], c["pred"], c["truth"], c["r"])
                return
