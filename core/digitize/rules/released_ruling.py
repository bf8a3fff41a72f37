"""The pass ``released_ruling``: a path lying straight along a ruled line that the grid's still-curve test took for a
curve lying still (``core/digitize/page/still_curves.py: ruled_released``), while the curve's own style shows untraced
elsewhere in its track: the ruling or the curve, a decision the picture does not make (issue #60, the fifteenth round).
"""

from __future__ import annotations

import numpy as np

from core.digitize.page.grid import Grid

RELEASED_PX = 1.5  # a trace within this many rows of a released ruled line's rows lies along it
STRAIGHT_COLS = 100  # ... and lies straight where, over this many columns ...
STRAIGHT_PX = 0.5  # ... its rows keep within this RMS of a straight line
RULED_RIVAL = 0.02  # the curve's own style this strong, untraced, elsewhere in its track: the curve may be there


def along_released_ruling(position: np.ndarray, grid: Grid, rival: np.ndarray) -> np.ndarray:
    """The pass ``released_ruling``: per column, whether ``position`` (canonical rows, NaN: none) lies straight
    (:func:`straight_columns`) along a line the grid's still-curve test released that looks ruled
    (``Grid.released_ruled``: ``page/still_curves.py: ruled_released``) while the curve's own style shows untraced
    elsewhere in its track (``rival``: the signal, ``signals.rival_strength`` smoothed, over ``RULED_RIVAL``).

    The still-curve test gives back to the tracer a line whose ink wobbles as a curve's does, and a 1-bit print bends
    its rulings so: the real shapes' dense_11 SFLU, a dotted curve hidden under its neighbour's bold line, is read
    along its track's broken 2/3-decade line for 919 columns (819 of them confidently wrong, none right). Giving such
    lines back to the grid took that curve off the line but cost the curves beside 38-57 other rulings their yield
    (the twelfth round); a doubt acts on the path alone. A curve lying still along a line (a caliper in gauge hole)
    is read confidently and rightly: on the fit's logs and the held-out families (fifteenth round), the columns of a
    path lying straight along a released line were right 42,984 times and wrong 1,333; along one that looks ruled, wrong
    819 times (all dense_11's SFLU) and right 7, but on 40 more fit logs a family right 1,500 times (three curves lying
    still, at a place of the comb, wobbling as the ruling). What those have and dense_11's SFLU has not is a stroke
    elsewhere: its own dotted style shows untraced in its track (``rival`` 0.06-0.22 over the stretch, its tenth and
    ninetieth percentiles), where nothing of theirs does (at most 0.004 on nine columns in ten). A path along a ruled
    line while its style's stroke goes untraced is the ruling or the curve: a decision the picture does not make
    (``confidence_model.DECISION_FLAGS``). With it: 785 confidently wrong columns doubted (dense_11's SFLU), none
    confident and right, and 6 columns of the 160 more logs, right."""
    ruled = grid.released_ruled
    if ruled is None or not ruled.any():
        return np.zeros(position.size, bool)
    return near_lines(position, grid, ruled) & straight_columns(position) & (np.asarray(rival) > RULED_RIVAL)


def near_lines(position: np.ndarray, grid: Grid, lines: np.ndarray, px: float = RELEASED_PX) -> np.ndarray:
    """Per column, whether ``position`` (canonical rows, NaN: none) lies within ``px`` rows (at most 2) of a row
    ``lines`` marks in the column's window (``lines``: (rows, windows) as the grid's, 1 on a line's rows)."""
    out = np.zeros(position.size, bool)
    cols = np.arange(position.size)
    window = np.clip(np.searchsorted(grid.windows, cols, side="right") - 1, 0, lines.shape[1] - 1)
    finite = np.isfinite(position)
    base = np.floor(np.where(finite, position, -10.0)).astype(np.int64)
    for k in range(-2, 3):  # every row within px of the position
        r = base + k
        inside = finite & (r >= 0) & (r < lines.shape[0])
        with np.errstate(invalid="ignore"):
            near = inside & (np.abs(position - r) <= px)
        out |= near & (lines[np.clip(r, 0, lines.shape[0] - 1), window] >= 0.5)
    return out


def straight_columns(position: np.ndarray, cols: int = STRAIGHT_COLS, px: float = STRAIGHT_PX) -> np.ndarray:
    """Per column, whether it lies in a run of ``cols`` columns, every one with a position, whose positions keep within
    ``px`` RMS of their least-squares straight line: a ruled line followed, or a curve lying still."""
    n = position.size
    out = np.zeros(n, bool)
    if n < cols:
        return out
    y = np.nan_to_num(np.asarray(position, np.float64))
    f = np.isfinite(position).astype(np.float64)
    x = np.arange(n, dtype=np.float64) - n / 2.0  # centred: the sums' rounding stays small

    def windowed(v: np.ndarray) -> np.ndarray:  # the sum of ``v`` over every run of ``cols`` columns
        c = np.concatenate([[0.0], np.cumsum(v)])
        return c[cols:] - c[:-cols]

    count = windowed(f)
    full = count == cols
    if not full.any():
        return out
    sy, syy, sx, sxx, sxy = windowed(y), windowed(y * y), windowed(x * f), windowed(x * x * f), windowed(x * y * f)
    with np.errstate(invalid="ignore", divide="ignore"):
        vy = syy / cols - (sy / cols) ** 2
        vx = sxx / cols - (sx / cols) ** 2
        cxy = sxy / cols - sx * sy / cols ** 2
        residual = vy - cxy ** 2 / vx  # the variance left about the window's straight line
    good = np.flatnonzero(full & (residual < px * px))
    cover = np.zeros(n + 1, np.int64)
    np.add.at(cover, good, 1)
    np.add.at(cover, good + cols, -1)
    return np.cumsum(cover)[:n] > 0
