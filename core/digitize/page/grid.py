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

from dataclasses import dataclass, field

import cv2
import numpy as np
from numba import njit

from core.common.threads import in_order
from core.digitize.page.ink import ink_map
from core.digitize.page.percentiles import percentile
from core.digitize.page.still_curves import release_still_curves

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
    # (rows, windows): 1 on the rows of the lines the still-curve test released that look ruled (at a place of the
    # comb, wobbling as the window's lines do: ``still_curves.ruled_released``); None where none was looked for. Not
    # damped: a path lying straight along one is doubted (``rules/released_ruling.py: along_released_ruling``)
    released_ruled: np.ndarray | None = field(default=None, compare=False, repr=False)
    # (rows, windows): 1 on the rows of every line the still-curve test released; None where none was looked for
    released: np.ndarray | None = field(default=None, compare=False, repr=False)
    # the bands' dampings made so far (``band_damping``), and each column's window, kept with the grid
    _dampings: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _window: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def shape(self) -> tuple[int, int]:
        return self.along.shape[0], int(self.windows[-1])

    def map(self, rows: slice | None = None, cols: np.ndarray | None = None) -> np.ndarray:
        """Grid-ness (rows × cols) float32; ``rows`` limits it to a band of rows (a track), ``cols`` to some
        columns (indices; a tall track's whole band is 100 MB and more)."""
        r0, r1, _ = (rows or slice(0, self.shape[0])).indices(self.shape[0])
        return self._combined(self.along[r0:r1], r0, r1, cols)

    def damping(self, rows: slice | None = None, floor: float = FLOOR, cols: np.ndarray | None = None) -> np.ndarray:
        """The factor evidence is multiplied by: 1 off the grid, ``floor`` on a certain line.

        Damping says where a curve is *not*, so it only tells rows apart when the track has rows off the
        lines: where the along lines leave less than ``FREE_SHARE_FULL`` of a track's rows free (a
        ruling of 2-px lines every 3-4 px), they are damped in proportion, down to not at all when no row
        is free. Damping every row alike moves no path and only hides the curve from the observation
        threshold: such a track read as NULL throughout, the network's clean mask of it notwithstanding.
        ``cols``: some columns only (indices), as in :meth:`map`.
        """
        return self.band_damping(rows, floor).at(cols)

    def band_damping(self, rows: slice | None = None, floor: float = FLOOR) -> "BandDamping":
        """The damping of a band of rows (a track) in the form it is spread from (:class:`BandDamping`), made once
        per band and floor and kept with the grid: a scan's passes read one track's damping ten times and more (the
        tracing, the unclaimed strokes, the signals of every curve), and the compiled scans read it from this form
        a row at a time instead of a band-sized float64 array (KGS's 999-row track: 143 MB a read). Safe from
        several threads: a band made twice at once is the same numbers, and one of them is kept."""
        r0, r1, _ = (rows or slice(0, self.shape[0])).indices(self.shape[0])
        key = (r0, r1, float(floor))
        found = self._dampings.get(key)
        if found is None:
            if self._window is None:
                self._window = np.searchsorted(self.windows, np.arange(int(self.windows[-1])), side="right") - 1
            lo, hi, across = self._band_lines(r0, r1)
            ruled = self.ruled(slice(r0, r1))
            found = self._dampings.setdefault(key, BandDamping(r0, r1, ruled, self._window, across, lo, hi,
                                                               np.array([1.0 - floor], ruled.dtype)))
        return found

    def let_go_of_dampings(self) -> None:
        """Drop the bands' dampings kept so far (:meth:`band_damping`): a scan's tracing is done with them."""
        self._dampings.clear()
        self._window = None

    def kept_damping_bytes(self) -> int:
        """What the bands' dampings kept with the grid hold (:meth:`band_damping`; the column windows with them)."""
        held = sum(d.along.nbytes + d.lo.nbytes + d.hi.nbytes for d in list(self._dampings.values()))
        return held + (0 if self._window is None else self._window.nbytes)

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
        lines of each band (``damping`` spreads 1 − that times its scale in the same pass: :class:`BandDamping`).

        One compiled pass writes the result (``_spread_lines``): the NumPy of before spread the windows, took the
        maximum band by band and scaled twice, four passes over a tall track's band of float64 (KGS: 4.4 s of its
        6.5-s trace stage). The arithmetic is that NumPy's, in ``along``'s dtype (``tests/core/digitize/page``)."""
        cols = np.arange(int(self.windows[-1])) if cols is None else np.asarray(cols, np.int64)
        window = np.searchsorted(self.windows, cols, side="right") - 1
        lo, hi, across = self._band_lines(r0, r1)
        return _spread_over(along, window, cols, across, lo, hi, None)

    def _band_lines(self, r0: int, r1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi, across): each band's rows from r0, clipped to [0, r1 − r0], and the bands' across lines, as
        ``_spread_lines`` reads them for the rows [r0, r1)."""
        lo = np.array([max(lo, r0) - r0 for lo, _ in self.bands], np.int64)
        hi = np.array([min(hi, r1) - r0 for _, hi in self.bands], np.int64)
        across = np.asarray(self.across) if len(self.bands) else np.zeros((0, 1), np.float32)
        return lo, hi, across

    def across_columns(self, rows: slice, threshold: float = 0.5) -> np.ndarray:
        """Per column, whether an across line (a depth line, a header box's edge) runs through the band of
        ``rows``: there every row of the band is dark, so no row is told from another."""
        r0, r1, _ = rows.indices(self.shape[0])
        out = np.zeros(self.shape[1], bool)
        for (lo, hi), prof in zip(self.bands, self.across):
            if max(lo, r0) < min(hi, r1):
                out |= prof >= threshold
        return out

    def line_rows(self, threshold: float = 0.5) -> np.ndarray:
        """Rows that are along-depth lines in most windows (for overlays and tests)."""
        return np.flatnonzero(np.median(self.along, axis=1) >= threshold)

    def line_groups(self, threshold: float = 0.5) -> list[np.ndarray]:
        """The rows of each along-depth line (:meth:`line_rows`, adjacent rows one line), across the image."""
        rows = self.line_rows(threshold)
        return np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1) if rows.size else []

    def line_cols(self, threshold: float = 0.5) -> np.ndarray:
        """Columns that are across lines in any band."""
        if not len(self.across):
            return np.zeros(0, np.int64)
        return np.flatnonzero(np.max(self.across, axis=0) >= threshold)


@dataclass(frozen=True)
class BandDamping:
    """The grid's damping of the rows [r0, r1) (a track), in the form it is spread from: at row r and column c,
    1 − ``scale`` · the larger of ``along[r − r0, window[c]]`` (the band's ruled along lines, ``Grid.ruled``) and
    ``across[b, c]`` of every band b whose rows [lo[b], hi[b]) (from r0) hold r (``_spread_lines``). A few arrays a
    few hundred KiB (KGS's 999-row track: 72 KiB of lines, 140 KiB of windows shared by every band), where the
    factor spread over the band is 8 B a pixel (143 MB). :meth:`at` spreads it; the compiled scans over a track
    (``rules/track_scans.py``) compute it a row at a time from these arrays."""

    r0: int
    r1: int
    along: np.ndarray  # (r1 − r0, windows): the ruled along lines
    window: np.ndarray  # (columns,): each column's window
    across: np.ndarray  # (bands, columns): the across lines of each band
    lo: np.ndarray  # (bands,): each band's first row, from r0 ...
    hi: np.ndarray  # ... and its end, clipped to [0, r1 − r0]
    scale: np.ndarray  # (1,): 1 − the floor, in along's dtype

    @property
    def shape(self) -> tuple[int, int]:
        return self.r1 - self.r0, self.window.size

    def at(self, cols: np.ndarray | None = None) -> np.ndarray:
        """The factor over the band's rows at every column, or at ``cols`` (indices): ``Grid.damping``."""
        cols = np.arange(self.window.size) if cols is None else np.asarray(cols, np.int64)
        return _spread_over(self.along, self.window[cols], cols, self.across, self.lo, self.hi, float(self.scale[0]))


def _spread_over(along: np.ndarray, window: np.ndarray, cols: np.ndarray, across: np.ndarray, lo: np.ndarray,
                 hi: np.ndarray, damped: float | None) -> np.ndarray:
    """``_spread_lines`` into a new array of ``along``'s dtype."""
    out = np.empty((along.shape[0], cols.size), along.dtype)
    scale = np.array([0.0 if damped is None else damped], along.dtype)
    _spread_lines(along, window, cols, across, lo, hi, scale, damped is not None, out)
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def _spread_lines(along, window, cols, across, lo, hi, scale, damped, out):
    """``out[r, j]``: the larger of ``along[r, window[j]]`` and every band's ``across[b, cols[j]]`` whose rows
    [lo[b], hi[b]) hold r, the maximum taken in float64 and stored in ``out``'s dtype (NumPy's ``maximum`` into a
    float32 ``out``); with ``damped``, 1 − ``scale[0]`` · that, in ``out``'s dtype as NumPy computes it with a Python
    float. Rows outer, columns inner: ``out`` is written along memory."""
    one = np.ones(1, out.dtype)[0]
    k = scale[0]
    row = np.empty(out.shape[1])
    for r in range(out.shape[0]):
        for j in range(out.shape[1]):
            row[j] = along[r, window[j]]
        for b in range(lo.size):
            if lo[b] <= r < hi[b]:
                for j in range(out.shape[1]):
                    row[j] = max(row[j], np.float64(across[b, cols[j]]))
        for j in range(out.shape[1]):
            out[r, j] = row[j]
        if damped:
            for j in range(out.shape[1]):
                out[r, j] = one - k * out[r, j]


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
                dark: np.ndarray | None = None, still_curves: bool = True) -> Grid:
    """Find the grid of a canonical image (uint8, rows across, columns along depth).

    ``bands``: row ranges [lo, hi) of the tracks (the across profile is taken per track, where depth
    lines run; without them, over the whole height). ``dark``: a darkness map to use instead of the
    image's own (e.g. already computed by the classical tracer). ``still_curves``: take back the lines that
    are a curve lying still (``still_curves.release_still_curves``); the tracks' borders are looked for without it,
    since a curve or an image beside a border makes the border's band wobble as a curve does.
    """
    if dark is None:
        if img is None:
            raise ValueError("detect_grid needs an image or a darkness map")
        dark = ink_map(img)  # darkness in [0, 1] relative to the local paper tone
    h, w = dark.shape
    n_win = max(1, int(round(w / WINDOW_PX)))
    edges = np.linspace(0, w, n_win + 1).round().astype(np.int64)
    if not bands:
        bands = [(0, h)]
    bands = [(int(max(0, lo)), int(min(h, hi))) for lo, hi in bands if min(h, hi) - max(0, lo) >= 3]
    windows = list(zip(edges[:-1].tolist(), edges[1:].tolist()))
    # every window's row profile and every band's column profile read the map alone: one list over the threads
    # (each a compiled pass that gives up the interpreter's lock), the windows' first
    profiles = in_order(lambda job: job[0](*job[1:]), [(_along_profile, dark, a, b) for a, b in windows]
                        + [(_across_line, dark, lo, hi) for lo, hi in bands], pool=POOL)
    prof = np.stack(profiles[: len(windows)], axis=1)
    along = _spread(_lineness(_prominence(prof.astype(np.float32), axis=0)), axis=0)
    released = np.zeros(along.shape, np.float32) if still_curves else None
    ruled = release_still_curves(along, prof, dark, edges, bands, POOL, released) if still_curves else None
    across_arr = np.stack(profiles[len(windows) :]) if bands else np.zeros((0, w), np.float32)
    return Grid(along.astype(np.float32), edges, across_arr, bands, ruled, released)


POOL = "page"  # the page stage's threads: apart from the tracing's, which a folder's next scan may run beside


def _along_profile(dark: np.ndarray, a: int, b: int) -> np.ndarray:
    """The rows' darkness percentile over the window of columns [a, b): dark in more than ``ALONG_DARK_SHARE`` of
    them is high."""
    return percentile(dark[:, a:b], 100.0 * (1.0 - ALONG_DARK_SHARE), axis=1)


def _across_line(dark: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The line-ness of the lines across the band of rows [lo, hi), per column (:func:`across_lines`)."""
    # the band's own border rows are lines along depth, dark in every column: leave them out
    inner = dark[lo + 2 : hi - 2] if hi - lo > 8 else dark[lo:hi]
    col = percentile(inner, 100.0 * (1.0 - ACROSS_DARK_SHARE), axis=0).astype(np.float32)[None, :]
    return _spread(_lineness(_prominence(col, axis=1)), axis=1)[0]


def across_lines(dark: np.ndarray, bands: list[tuple[int, int]]) -> np.ndarray:
    """(bands, columns) line-ness of the lines across each band of rows [lo, hi) (a track: its depth lines),
    from a canonical darkness map; the band's own border rows are left out."""
    across = in_order(lambda band: _across_line(dark, *band), bands, pool=POOL)
    return np.stack(across) if across else np.zeros((0, dark.shape[1]), np.float32)


def track_bands(calib, rows: int) -> list[tuple[int, int]]:
    """Distinct row bands [lo, hi) of a calibration's tracks, widened by two rows to take in their borders."""
    seen = []
    for c in calib.curves:
        lo, hi = c.track_rows()
        band = (lo - 2, hi + 3)
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
