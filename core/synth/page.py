"""Drawing a paper log page in the tall frame (rows = depth, columns = amplitude).

The page is drawn as ink coverage layers in [0, 1] (grid, text, curves) that
are composited onto a paper tone; the class mask is drawn from the same
polylines so that it lies on the curve ink by construction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from core.common.runs import true_runs
from core.io.calibration import Calibration, CurveSpec

SHIFT = 4  # cv2 fixed-point bits: sub-pixel polyline vertices
ONE = 1 << SHIFT


@dataclass
class Track:
    left: int
    right: int
    log: bool
    decades: int = 0  # for log tracks


@dataclass
class Layout:
    depth_col: tuple[int, int]
    tracks: list[Track] = field(default_factory=list)


MIN_TRACK_PX = 48


def make_layout(amp: int, rng: np.random.Generator, style=None) -> Layout:
    """Tracks and a depth column across ``amp`` pixels, like an API log layout.

    ``style`` (a :class:`~core.synth.styles.PrintStyle`) sets the track count, whether there is a depth
    column and where it sits; without one, the classic look (one or two tracks, depth column)."""
    margin = max(2, int(amp * rng.uniform(0.005, 0.02)))
    has_depth = True if style is None else style.depth_column
    depth_w = int(np.clip(amp * rng.uniform(0.08, 0.14), 28, 150)) if has_depth else 0
    usable = amp - 2 * margin - depth_w
    if style is None:
        n = 2 if (amp >= 300 and rng.random() < 0.75) else 1
        api = rng.random() < 0.7
        log_share = 0.4
    else:
        n = style.tracks
        api = style.api_layout
        log_share = style.log_track_share
    n = max(1, min(n, usable // MIN_TRACK_PX))
    if n == 1:
        widths = [usable]
    else:
        split = rng.dirichlet(np.full(n, 6.0))  # every track at least MIN_TRACK_PX, the rest shared out
        spare = usable - n * MIN_TRACK_PX
        widths = [MIN_TRACK_PX + int(spare * f) for f in split]
        widths[-1] = usable - sum(widths[:-1])
    # where the depth column goes: after the first track (API layout with two or more), else first
    depth_slot = 1 if (has_depth and n >= 2 and api) else 0
    x = margin
    tracks, dc = [], (margin, margin)
    for i, w in enumerate(widths):
        if has_depth and i == depth_slot:
            dc = (x, x + depth_w)
            x += depth_w
        tracks.append(Track(x, x + w, log=False))
        x += w
    for i, t in enumerate(tracks):
        t.log = i > 0 and rng.random() < log_share if n > 1 else rng.random() < (0.25 if style is None else log_share * 0.7)
        if t.log:
            lo, hi = (2, 4) if style is None else style.decades
            t.decades = int(rng.integers(lo, hi + 1))
    return Layout(depth_col=dc, tracks=tracks)


def stretch_picks(depth_len: int, top: float, px_per_unit: float, rng: np.random.Generator, jitter: float) -> list:
    """Depth picks of a scan whose paper speed varied: piecewise-linear, ±``jitter`` per segment."""
    n_seg = int(rng.integers(1, 6)) if jitter > 0 else 1
    knots = np.linspace(0, depth_len - 1, n_seg + 1)
    depth = [top]
    for i in range(n_seg):
        rate = 1.0 / (px_per_unit * (1.0 + rng.uniform(-jitter, jitter)))
        depth.append(depth[-1] + (knots[i + 1] - knots[i]) * rate)
    return [[float(round(k, 3)), float(round(d, 4))] for k, d in zip(knots, depth)]


def grid_intervals(unit: str, px_per_unit: float, least_px: float = 9.0) -> tuple[float, float, float]:
    """Minor, major and labelled depth-line intervals, as on paper logs at this scale."""
    options = [(1.0, 5.0, 25.0), (2.0, 10.0, 50.0), (5.0, 25.0, 100.0), (10.0, 50.0, 100.0)]
    if unit != "FT":
        options = [(0.5, 2.5, 10.0), (1.0, 5.0, 25.0), (2.0, 10.0, 50.0), (5.0, 25.0, 100.0)]
    for minor, major, label in options:
        if minor * px_per_unit >= least_px:
            return minor, major, label
    return options[-1]


def _vline(layer: np.ndarray, x: float, strength: float, width: int) -> None:
    h = layer.shape[0]
    cv2.line(layer, (int(round(x * ONE)), 0), (int(round(x * ONE)), (h - 1) * ONE), strength, width, cv2.LINE_AA, SHIFT)


def _hline(layer: np.ndarray, y: float, x0: float, x1: float, strength: float, width: int) -> None:
    cv2.line(
        layer, (int(round(x0 * ONE)), int(round(y * ONE))), (int(round(x1 * ONE)), int(round(y * ONE))),
        strength, width, cv2.LINE_AA, SHIFT,
    )


def draw_grid(layer: np.ndarray, layout: Layout, calib: Calibration, rng: np.random.Generator, style) -> None:
    """Track borders, amplitude grid (linear or log decades) and depth lines, ticks and numbers."""
    depth_len = layer.shape[0]
    g = style.grid_strength
    heavy = min(255.0, g * style.heavy_gain)
    d0, d1 = sorted(calib.depth_at(np.array([0.0, depth_len - 1.0])))
    minor, major, label = grid_intervals(calib.depth_unit, depth_len / max(d1 - d0, 1e-9), style.depth_line_px)
    for t in layout.tracks:
        w = t.right - t.left
        if t.log:
            for k in range(t.decades):
                for m in style.decade_lines:
                    frac = (k + math.log10(m)) / t.decades
                    _vline(layer, t.left + frac * w, heavy if m == 1 else g, style.heavy_width if m == 1 else style.grid_width)
        else:
            n = style.divisions
            for i in range(1, n):
                is_heavy = style.heavy_every is not None and i % style.heavy_every == 0
                _vline(layer, t.left + i * w / n, heavy if is_heavy else g, style.heavy_width if is_heavy else style.grid_width)
        # depth lines across the track
        for d in np.arange(math.ceil(d0 / minor) * minor, d1, minor):
            y = float(calib.pixel_at(d))
            is_major = abs(d / major - round(d / major)) < 1e-6
            big = abs(d / label - round(d / label)) < 1e-6
            _hline(layer, y, t.left, t.right, heavy if is_major else g * 0.8,
                   style.heavy_width if big else style.grid_width)
            if big and style.numbers_in_tracks:
                _text(layer, f"{d:.0f}", t.left + rng.uniform(0.05, 0.6) * w, y, rng, style.border_strength)
        _vline(layer, t.left, style.border_strength, style.border_width)
        _vline(layer, t.right, style.border_strength, style.border_width)
    for _ in range(style.annotations):
        t = layout.tracks[int(rng.integers(len(layout.tracks)))]
        word = ANNOTATIONS[int(rng.integers(len(ANNOTATIONS)))]
        x = t.left + rng.uniform(0.02, 0.5) * (t.right - t.left)
        y = rng.uniform(0.03, 0.97) * depth_len
        _text(layer, word, x, y, rng, float(rng.uniform(150, 256)), boxed=rng.random() < 0.35)
    # depth column: ticks and numbers
    c0, c1 = layout.depth_col
    if c1 - c0 < 8:
        return
    font_scale = np.clip((c1 - c0) / 110.0, 0.3, 0.7)
    for d in np.arange(math.ceil(d0 / major) * major, d1, major):
        y = float(calib.pixel_at(d))
        _hline(layer, y, c0, c0 + 0.18 * (c1 - c0), style.border_strength, 1)
        _hline(layer, y, c1 - 0.18 * (c1 - c0), c1, style.border_strength, 1)
        if abs(d / label - round(d / label)) < 1e-6:
            text = f"{d:.0f}"
            (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font_scale, 1)
            org = (int((c0 + c1) / 2 - tw / 2), int(y + th / 2))
            cv2.putText(layer, text, org, cv2.FONT_HERSHEY_SIMPLEX, font_scale, style.border_strength, 1, cv2.LINE_AA)


ANNOTATIONS = ("CASING", "TD", "LIMESTONE", "SHALE", "SAND", "REPEAT", "LOST CIRC", "CORE #2", "DST 1",
               "TOP ARBUCKLE", "MAIN PASS", "SCALE CHANGE", "BIT 7 7/8", "MUD WT 9.2", "RUN 2", "x5")


def _text(layer: np.ndarray, text: str, x: float, y: float, rng: np.random.Generator, strength: float,
          boxed: bool = False) -> None:
    """Words printed over the tracks (upright on the tall page, as on a log), optionally in a stamp box."""
    scale = float(rng.uniform(0.3, 0.6))
    thick = int(rng.choice([1, 1, 2]))
    font = int(rng.choice([cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_DUPLEX]))
    (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
    org = (int(x), int(y + th / 2))
    cv2.putText(layer, text, org, font, scale, strength, thick, cv2.LINE_AA)
    if boxed:
        cv2.rectangle(layer, (org[0] - 3, org[1] - th - 4), (org[0] + tw + 3, org[1] + 5), strength, 1, cv2.LINE_AA)


# Dash patterns along arc length (pixels): alternating on/off lengths.
def dash_pattern(klass: int, width: int, rng: np.random.Generator, scale: float = 1.0) -> list[float] | None:
    if klass == 1:
        return None
    if scale != 1.0:
        return [max(1.5, v * scale) for v in dash_pattern(klass, width, rng)]
    if klass == 2:
        return [rng.uniform(7, 14) + width, rng.uniform(4, 7) + width * 0.5]
    if rng.random() < 0.5:  # dotted: dots long enough to survive blur and thresholding
        return [max(2.0, width * 1.0), rng.uniform(2.5, 4.5) + width * 0.5]
    return [rng.uniform(8, 12) + width, rng.uniform(3, 5), max(2.0, width * 1.0), rng.uniform(3, 5)]  # dash-dot


def wide_dash_pattern(klass: int, width: float, rng: np.random.Generator) -> list[float] | None:
    """A dash or dot pattern from the whole space printers used (issue #44): dashes 7-30 px on, dots as 1-5 px
    strokes, gaps of 1-14 px of paper between the pen's round ends, dash-dot of a long and a short stroke. The classes stay apart by
    stroke length alone (a dashed stroke is at least 7 px, a dotted one at most 5), whatever the gaps: two
    broken pens of one weight in one track are then told apart by their pattern, as a reader does."""
    if klass == 1:
        return None

    def gap(most: float) -> float:  # the pen's round ends eat its width from every gap: keep 1-`most` px of paper
        return width + float(rng.uniform(1.0, most))

    if klass == 2:
        on = float(rng.uniform(7.0, 30.0))
        return [on, gap(min(14.0, 0.3 * on + 5.0))]
    dot = float(rng.uniform(1.0, 5.0))
    if rng.random() < 0.7:  # dots, or short dashes
        return [dot, gap(10.0)]
    return [float(rng.uniform(8.0, 30.0)), gap(6.0), dot, gap(6.0)]


def _densify(x: np.ndarray, y: np.ndarray, max_len: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Insert vertices so consecutive ones are at most ``max_len`` apart (for dash phase)."""
    seg = np.hypot(np.diff(x), np.diff(y))
    n = np.maximum(1, np.ceil(seg / max_len).astype(int))
    idx = np.repeat(np.arange(seg.size), n)
    frac = np.concatenate([np.arange(k) / k for k in n]) if n.size < 50_000 else _fracs(n)
    xs = x[idx] + frac * np.diff(x)[idx]
    ys = y[idx] + frac * np.diff(y)[idx]
    return np.append(xs, x[-1]), np.append(ys, y[-1])


def _fracs(n: np.ndarray) -> np.ndarray:
    starts = np.repeat(np.cumsum(n) - n, n)
    return (np.arange(n.sum()) - starts) / np.repeat(n, n)


def curve_polylines(
    spec: CurveSpec, rows: np.ndarray, values: np.ndarray, pattern: list[float] | None, phase: float
) -> list[np.ndarray]:
    """Fixed-point polylines (x across, y along depth) of the inked parts of one curve."""
    pos, wraps = spec.position_of(values)
    ok = np.isfinite(pos)
    pieces = []
    # break at wrap changes (the pen jumps to the other edge) and at missing values
    brk = np.flatnonzero((np.diff(wraps) != 0) | ~ok[1:] | ~ok[:-1]) + 1
    for part_idx in np.split(np.arange(rows.size), brk):
        part_idx = part_idx[ok[part_idx]]
        if part_idx.size < 2:
            continue
        x, y = _densify(pos[part_idx], rows[part_idx].astype(np.float64))
        if pattern is None:
            pieces.append((x, y))
            continue
        s = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))]) + phase
        period = float(sum(pattern))
        bounds = np.cumsum(pattern)
        slot = np.searchsorted(bounds, np.mod(s, period), side="right")
        on = slot % 2 == 0
        for a, b in zip(*true_runs(on)):
            if b - a >= 1:
                pieces.append((x[a:b], y[a:b]) if b - a > 1 else (x[a : a + 1].repeat(2), y[a : a + 1].repeat(2)))
    return [np.stack([np.round(px * ONE), np.round(py * ONE)], axis=1).astype(np.int32) for px, py in pieces]


def draw_curve(
    ink: np.ndarray, mask: np.ndarray, polylines: list[np.ndarray], klass: int, width: float, strength: float
) -> None:
    """Ink (anti-aliased) and mask (hard, same geometry) of one curve.

    OpenCV draws whole-pixel widths; a fractional pen (0.8, 2.4 px) is drawn at the next whole width with its
    ink thinned in proportion, which is what a scanner's pixel makes of a pen thinner than it."""
    if not polylines:
        return
    whole = max(1, int(math.ceil(width - 1e-6)))
    cv2.polylines(ink, polylines, False, strength * min(1.0, width / whole), whole, cv2.LINE_AA, SHIFT)
    cv2.polylines(mask, polylines, False, klass, whole, cv2.LINE_8, SHIFT)
