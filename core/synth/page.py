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

from ..calibration import Calibration, CurveSpec

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


def make_layout(amp: int, rng: np.random.Generator) -> Layout:
    """Tracks and a depth column across ``amp`` pixels, like an API log layout."""
    margin = max(2, int(amp * rng.uniform(0.005, 0.02)))
    depth_w = int(np.clip(amp * rng.uniform(0.08, 0.14), 28, 150))
    usable = amp - 2 * margin - depth_w
    two_tracks = amp >= 300 and rng.random() < 0.75
    if two_tracks:
        split = rng.uniform(0.4, 0.55)
        w1 = int(usable * split)
        w2 = usable - w1
        if rng.random() < 0.7:  # track 1 | depth | track 2 (API layout)
            t1 = (margin, margin + w1)
            dc = (t1[1], t1[1] + depth_w)
            t2 = (dc[1], dc[1] + w2)
        else:  # depth | track 1 | track 2
            dc = (margin, margin + depth_w)
            t1 = (dc[1], dc[1] + w1)
            t2 = (t1[1], t1[1] + w2)
        tracks = [Track(*t1, log=False), Track(*t2, log=rng.random() < 0.4)]
    else:
        dc = (margin, margin + depth_w)
        tracks = [Track(dc[1], dc[1] + usable, log=rng.random() < 0.25)]
    for t in tracks:
        if t.log:
            t.decades = int(rng.integers(2, 5))
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


def grid_intervals(unit: str, px_per_unit: float) -> tuple[float, float, float]:
    """Minor, major and labelled depth-line intervals, as on paper logs at this scale."""
    options = [(1.0, 5.0, 25.0), (2.0, 10.0, 50.0), (5.0, 25.0, 100.0), (10.0, 50.0, 100.0)]
    if unit != "FT":
        options = [(0.5, 2.5, 10.0), (1.0, 5.0, 25.0), (2.0, 10.0, 50.0), (5.0, 25.0, 100.0)]
    for minor, major, label in options:
        if minor * px_per_unit >= 9.0:
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


def draw_grid(layer: np.ndarray, layout: Layout, calib: Calibration, rng: np.random.Generator, style: dict) -> None:
    """Track borders, amplitude grid (linear or log decades) and depth lines, ticks and numbers."""
    depth_len = layer.shape[0]
    g = style["grid_strength"]
    d0, d1 = sorted(calib.depth_at(np.array([0.0, depth_len - 1.0])))
    minor, major, label = grid_intervals(calib.depth_unit, depth_len / max(d1 - d0, 1e-9))
    for t in layout.tracks:
        w = t.right - t.left
        if t.log:
            for k in range(t.decades):
                for m in range(1, 10):
                    frac = (k + math.log10(m)) / t.decades
                    _vline(layer, t.left + frac * w, g * (1.0 if m == 1 else 0.55), 2 if m == 1 else 1)
        else:
            for i in range(1, 10):
                _vline(layer, t.left + i * w / 10, g * (1.0 if i == 5 else 0.6), 2 if i == 5 else 1)
        # depth lines across the track
        for d in np.arange(math.ceil(d0 / minor) * minor, d1, minor):
            y = float(calib.pixel_at(d))
            heavy = abs(d / major - round(d / major)) < 1e-6
            big = abs(d / label - round(d / label)) < 1e-6
            _hline(layer, y, t.left, t.right, g * (1.0 if heavy else 0.5), 2 if big else 1)
        _vline(layer, t.left, style["border_strength"], 2)
        _vline(layer, t.right, style["border_strength"], 2)
    # depth column: ticks and numbers
    c0, c1 = layout.depth_col
    font_scale = np.clip((c1 - c0) / 110.0, 0.3, 0.7)
    for d in np.arange(math.ceil(d0 / major) * major, d1, major):
        y = float(calib.pixel_at(d))
        _hline(layer, y, c0, c0 + 0.18 * (c1 - c0), style["border_strength"], 1)
        _hline(layer, y, c1 - 0.18 * (c1 - c0), c1, style["border_strength"], 1)
        if abs(d / label - round(d / label)) < 1e-6:
            text = f"{d:.0f}"
            (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font_scale, 1)
            org = (int((c0 + c1) / 2 - tw / 2), int(y + th / 2))
            cv2.putText(layer, text, org, cv2.FONT_HERSHEY_SIMPLEX, font_scale, style["border_strength"], 1, cv2.LINE_AA)


# Dash patterns along arc length (pixels): alternating on/off lengths.
def dash_pattern(klass: int, width: int, rng: np.random.Generator) -> list[float] | None:
    if klass == 1:
        return None
    if klass == 2:
        return [rng.uniform(7, 14) + width, rng.uniform(4, 7) + width * 0.5]
    if rng.random() < 0.5:  # dotted: dots long enough to survive blur and thresholding
        return [max(2.0, width * 1.0), rng.uniform(2.5, 4.5) + width * 0.5]
    return [rng.uniform(8, 12) + width, rng.uniform(3, 5), max(2.0, width * 1.0), rng.uniform(3, 5)]  # dash-dot


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
        edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
        for a, b in zip(edges[::2], edges[1::2]):
            if b - a >= 1:
                pieces.append((x[a:b], y[a:b]) if b - a > 1 else (x[a : a + 1].repeat(2), y[a : a + 1].repeat(2)))
    return [np.stack([np.round(px * ONE), np.round(py * ONE)], axis=1).astype(np.int32) for px, py in pieces]


def draw_curve(
    ink: np.ndarray, mask: np.ndarray, polylines: list[np.ndarray], klass: int, width: int, strength: float
) -> None:
    """Ink (anti-aliased) and mask (hard, same geometry) of one curve."""
    if not polylines:
        return
    cv2.polylines(ink, polylines, False, strength, width, cv2.LINE_AA, SHIFT)
    cv2.polylines(mask, polylines, False, klass, width, cv2.LINE_8, SHIFT)
