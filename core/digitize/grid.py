"""The printed grid of a log, found from the image itself, and how much to distrust evidence on it.

Both tracers (the network's class maps and the classical ink) see a grid line
as a dark straight line, and a Viterbi path finds a straight line cheaper than
a wiggling curve, so an undamped grid line wins long stretches of a trace.
What tells a grid line from a curve is that it is *straight and long*:

- an amplitude grid line or a track border runs along depth at one position
  across the track, so in a canonical image (rows across, columns along
  depth) its row is dark over a large share of the columns of any long
  window: the 65th percentile of the row's darkness over a window of about
  2,000 columns is high (the row is dark over more than 35 % of them), while
  a curve that crosses the row leaves the percentile at paper level;
- a depth line runs across a whole track, so its column is dark over most of
  the track's rows: the 40th percentile over the track's rows (dark across
  more than 60 % of the track).

Each profile is taken relative to its neighbours (a top-hat: the percentile
minus the lowest value within a few rows or columns) so a shaded band or a
dark paper tone is not a line. The result is a grid-ness map in [0, 1]. The
tracers multiply their evidence by ``1 − (1 − floor)·grid`` (``floor`` 0.15):
damped, not removed, so a curve that crosses a grid line, or runs exactly on
one for a stretch, still has evidence there and is traced through it. This
is projection-profile grid suppression; the percentiles replace the
threshold-then-count of a binary profile, so faint and dark grids need no
threshold of their own, and windows along depth keep a slightly skewed scan
(a line drifting a few pixels over the log) line-shaped within each window.

Work in the canonical frame; ``detect_grid`` takes the uint8 image (or its
darkness map) and optionally the tracks' row bands.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .classical import ink_map

WINDOW_PX = 2048  # columns per along-depth window of the row profile
ALONG_DARK_SHARE = 0.35  # a row dark over more than this share of a window is a grid line
ACROSS_DARK_SHARE = 0.60  # a column dark over more than this share of a track is a depth line
PROMINENCE = (0.06, 0.16)  # darkness above the neighbourhood: from "not a line" to "a line", linearly
NEIGHBOURHOOD_PX = 5  # the top-hat's reach each side
FLOOR = 0.15  # evidence on a certain grid line keeps this share
FREE_SHARE_FULL = 0.25  # a track with at least this share of its rows off the along lines is damped in full


@dataclass
class Grid:
    """Grid-ness in [0, 1] per pixel of a canonical image, from its two line families."""

    along: np.ndarray  # (rows, windows): rows that are lines running along depth, per window
    windows: np.ndarray  # (windows + 1,) column edges of the windows
    across: np.ndarray  # (bands, cols): columns that are lines across each band
    bands: list[tuple[int, int]]  # row ranges [lo, hi) the across profile was taken over

    @property
    def shape(self) -> tuple[int, int]:
        return self.along.shape[0], int(self.windows[-1])

    def map(self, rows: slice | None = None, cols: np.ndarray | None = None) -> np.ndarray:
        """Grid-ness (rows × cols) float32; ``rows`` limits it to a band of rows (a track), ``cols`` to some
        columns (indices; a tall track's whole band is 100 MB and more)."""
        r0, r1, _ = (rows or slice(0, self.shape[0])).indices(self.shape[0])
        return self._combined(self.along[r0:r1], r0, r1, cols)

    def damping(self, rows: slice | None = None, floor: float = FLOOR) -> np.ndarray:
        """The factor evidence is multiplied by: 1 off the grid, ``floor`` on a certain line.

        Damping says where a curve is *not*, so it only tells rows apart when the track has rows off the
        lines: where the along lines leave less than ``FREE_SHARE_FULL`` of a track's rows free (a
        ruling of 2-px lines every 3-4 px), they are damped in proportion, down to not at all when no row
        is free. Damping every row alike moves no path and only hides the curve from the observation
        threshold: such a track read as NULL throughout, the network's clean mask of it notwithstanding.
        """
        r0, r1, _ = (rows or slice(0, self.shape[0])).indices(self.shape[0])
        return 1.0 - (1.0 - floor) * self._combined(self.ruled(rows), r0, r1)

    def ruled(self, rows: slice | None = None) -> np.ndarray:
        """The along lines of a band of rows (a track), per window, counted in proportion where they leave less
        than ``FREE_SHARE_FULL`` of the band's rows free (``damping``): there every row is on a line, which
        tells no row from another."""
        r0, r1, _ = (rows or slice(0, self.shape[0])).indices(self.shape[0])
        along = self.along[r0:r1]
        if along.size:
            free = (along < 0.5).mean(axis=0)  # per window: share of the band's rows off every along line
            along = along * np.clip(free / FREE_SHARE_FULL, 0.0, 1.0)[None, :]
        return along

    def _combined(self, along: np.ndarray, r0: int, r1: int, cols: np.ndarray | None = None) -> np.ndarray:
        """``along`` (the rows r0:r1, per window) spread over the columns (every one, or ``cols``), with the across
        lines of each band."""
        if cols is None:
            out = np.repeat(along, np.diff(self.windows).astype(np.int64), axis=1)
        else:
            out = along[:, np.searchsorted(self.windows, cols, side="right") - 1]
        for (lo, hi), prof in zip(self.bands, self.across):
            a, b = max(lo, r0), min(hi, r1)
            if a < b:
                across = prof[None, :] if cols is None else prof[None, cols]
                np.maximum(out[a - r0 : b - r0], across, out=out[a - r0 : b - r0])
        return out

    def line_rows(self, threshold: float = 0.5) -> np.ndarray:
        """Rows that are along-depth lines in most windows (for overlays and tests)."""
        return np.flatnonzero(np.median(self.along, axis=1) >= threshold)

    def line_cols(self, threshold: float = 0.5) -> np.ndarray:
        """Columns that are across lines in any band."""
        if not len(self.across):
            return np.zeros(0, np.int64)
        return np.flatnonzero(np.max(self.across, axis=0) >= threshold)


def _prominence(profile: np.ndarray, axis: int) -> np.ndarray:
    """Top-hat: the profile minus its minimum within ``NEIGHBOURHOOD_PX`` each side along ``axis``."""
    k = 2 * NEIGHBOURHOOD_PX + 1
    shape = (1, k) if axis == 1 else (k, 1)
    base = cv2.erode(profile.astype(np.float32), np.ones(shape, np.uint8), borderType=cv2.BORDER_REPLICATE)
    return profile - base


def _lineness(prom: np.ndarray) -> np.ndarray:
    a, b = PROMINENCE
    return np.clip((prom - a) / (b - a), 0.0, 1.0).astype(np.float32)


def _spread(g: np.ndarray, axis: int) -> np.ndarray:
    """Widen by one pixel each side: the anti-aliased edges of a line belong to it."""
    shape = (1, 3) if axis == 1 else (3, 1)
    return cv2.dilate(g, np.ones(shape, np.uint8), borderType=cv2.BORDER_REPLICATE)


def detect_grid(img: np.ndarray | None = None, bands: list[tuple[int, int]] | None = None,
                dark: np.ndarray | None = None) -> Grid:
    """Find the grid of a canonical image (uint8, rows across, columns along depth).

    ``bands``: row ranges [lo, hi) of the tracks (the across profile is taken per track, where depth
    lines run; without them, over the whole height). ``dark``: a darkness map to use instead of the
    image's own (e.g. already computed by the classical tracer).
    """
    if dark is None:
        if img is None:
            raise ValueError("detect_grid needs an image or a darkness map")
        dark = ink_map(img)  # darkness in [0, 1] relative to the local paper tone
    h, w = dark.shape
    n_win = max(1, int(round(w / WINDOW_PX)))
    edges = np.linspace(0, w, n_win + 1).round().astype(np.int64)
    q_along = 100.0 * (1.0 - ALONG_DARK_SHARE)
    prof = np.stack([np.percentile(dark[:, a:b], q_along, axis=1) for a, b in zip(edges[:-1], edges[1:])], axis=1)
    along = _spread(_lineness(_prominence(prof.astype(np.float32), axis=0)), axis=0)
    _release_still_curves(along, prof, dark, edges)
    if not bands:
        bands = [(0, h)]
    bands = [(int(max(0, lo)), int(min(h, hi))) for lo, hi in bands if min(h, hi) - max(0, lo) >= 3]
    q_across = 100.0 * (1.0 - ACROSS_DARK_SHARE)
    across = []
    for lo, hi in bands:
        # the band's own border rows are lines along depth, dark in every column: leave them out
        inner = dark[lo + 2 : hi - 2] if hi - lo > 8 else dark[lo:hi]
        col = np.percentile(inner, q_across, axis=0).astype(np.float32)[None, :]
        across.append(_spread(_lineness(_prominence(col, axis=1)), axis=1)[0])
    across_arr = np.stack(across) if across else np.zeros((0, w), np.float32)
    return Grid(along.astype(np.float32), edges, across_arr, bands)


STILL_CURVE_ROWS = 6  # a band of along-line rows at least this wide may be a curve lying nearly still ...
STILL_CURVE_FILL = 0.6  # ... and is one when its rows are dark this much less often than a ruled line's


def _release_still_curves(along: np.ndarray, prof: np.ndarray, dark: np.ndarray, edges: np.ndarray) -> None:
    """Take back the along-line rows that are a curve lying nearly still (in place).

    A curve that hardly moves over a window (a cable tension, a caliper in gauge hole) darkens a few rows
    in more than a third of the columns, as a ruled line does: on the KGS sonic log the tension curve was
    damped as grid over 250-1050 ft and the tracer put it on the sonic's line. What tells them apart is
    that a ruled line, or a bunch of them (a decade's 7-10 lines), is dark in nearly every column in every
    row of its band, while a curve wanders across the band: each row is dark in a share of the columns
    only. So in a band of ``STILL_CURVE_ROWS`` or more rows, where a row's mean darkness over the window is
    below ``STILL_CURVE_FILL`` of its 65th percentile on average and its ink wanders about a straight line
    (``_wanders``: a ruled line on a skewed scan drifts across a band too, but straight), it is released."""
    from .runs import true_runs

    for w, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        starts, stops = true_runs(along[:, w] >= 0.5)
        for lo, hi in zip(starts, stops):
            if hi - lo < STILL_CURVE_ROWS:
                continue
            rows = slice(lo + 1, hi - 1)  # the spread rows either side belong to no line
            p = prof[rows, w]
            fill = dark[rows, a:b].mean(axis=1) / np.maximum(p, 1e-6)
            inked = p > 0.05
            if inked.any() and float(np.mean(fill[inked])) < STILL_CURVE_FILL and _wanders(dark[rows, a:b]):
                along[lo:hi, w] = 0.0


def _wanders(band: np.ndarray, straight_px: float = 0.5) -> bool:
    """Whether the ink of a band (rows × columns) wanders about a straight line rather than lying on one: a
    ruled line on a skewed scan also drifts across a band of rows, but along a straight line (the darkness
    centroid per column leaves a linear fit by under ``straight_px`` RMS: 0.0-0.3 px on the ruled bands of the
    iqa scans, 0.8 px for the KGS tension curve); a curve's centroid does not."""
    mass = band.sum(axis=0)
    cols = np.flatnonzero(mass > 0.5 * np.median(mass[mass > 0])) if (mass > 0).any() else np.zeros(0, int)
    if cols.size < 16:
        return False
    centroid = (band[:, cols] * np.arange(band.shape[0])[:, None]).sum(axis=0) / mass[cols]
    fit = np.polyval(np.polyfit(cols, centroid, 1), cols)
    return float(np.sqrt(np.mean((centroid - fit) ** 2))) > straight_px


def track_bands(calib, rows: int) -> list[tuple[int, int]]:
    """Distinct row bands [lo, hi) of a calibration's tracks, widened by two rows to take in their borders."""
    seen = []
    for c in calib.curves:
        band = (int(np.floor(c.track_lo)) - 2, int(np.ceil(c.track_hi)) + 3)
        band = (max(0, band[0]), min(rows, band[1]))
        if band not in seen:
            seen.append(band)
    return seen


def clean_mask(mask: np.ndarray, grid: Grid, threshold: float = 0.5, min_run_px: int = 61) -> np.ndarray:
    """A pre-fill mask with the grid's lines taken out, the curves' crossings of them kept.

    What goes is the labelled pixels on a grid line that form a straight run along that line of at least
    ``min_run_px``: a grid line painted as curve. Where a curve crosses such a line, its pixels on the
    line are part of the run; they come back where the curve's pixels lie on both sides of the line
    (a small closing across the line bridges them).
    """
    on_grid = grid.map() >= threshold
    labelled = ((mask > 0) & on_grid).astype(np.uint8)
    along = cv2.morphologyEx(labelled, cv2.MORPH_OPEN, np.ones((1, min_run_px), np.uint8))
    across = cv2.morphologyEx(labelled, cv2.MORPH_OPEN, np.ones((min(min_run_px, max(3, mask.shape[0] // 3)), 1),
                                                                  np.uint8))
    kept = np.where((along > 0) | (across > 0), 0, mask).astype(np.uint8)
    curve = (kept > 0).astype(np.uint8)
    # a disc, not a bar across the line: a shallow crossing has its pixels on either side of the line
    # in different columns
    bridged = cv2.morphologyEx(curve, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (11, 11))) > 0
    restore = ((along > 0) | (across > 0)) & bridged
    return np.where(restore, mask, kept).astype(np.uint8)
