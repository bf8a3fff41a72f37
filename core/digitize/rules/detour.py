"""The pass ``line_detour``: a path that jumps off its stroke onto a line of the printed ruling the grid's still-curve
test released, lies still along it, and jumps back to about where it left (issue #60, the seventeenth round)."""

from __future__ import annotations

import numpy as np

from core.common.runs import true_runs
from core.digitize.page.grid import Grid
from core.digitize.rules.released_ruling import near_lines

DETOUR_JUMP = 0.08  # a move of at least this share of the track from one column to the next is a jump; ...
DETOUR_COLS = 5  # ... a stay between two jumps this many columns long or longer, ...
DETOUR_PX = 1.0  # ... every position within this many rows of the stay's median (a ruling is straight), ...
DETOUR_RETURN = 0.5  # ... the path after it within this share of the smaller jump of where it was before it, ...
RELEASED_PX = 1.5  # ... within this many rows of a released line, is a detour onto it


def line_detours(position: np.ndarray, grid: Grid, track_width: float) -> np.ndarray:
    """The pass ``line_detour``: per column, whether ``position`` (canonical rows, NaN: none) lies in a detour onto a
    line the still-curve test released (``Grid.released``): a stay of ``DETOUR_COLS`` columns or more, straight to
    ``DETOUR_PX``, entered and left by a jump of ``DETOUR_JUMP`` of the track (NaN and the log's ends are no jump),
    the path coming back to within ``DETOUR_RETURN`` of the smaller jump of where it left.

    Of the confidently wrong columns of ``dense`` that lie on no curve's drawn stroke, three in four lie on a line of
    the printed ruling along depth, mostly one the still-curve test released (a log track's decade lines broken by
    a 1-bit print, a curve's ink beside them: the seventeenth round's census). Most are short stays a curve's own
    stroke passes close by, and nothing the tracer reads tells them from the right ones (a classifier over 27
    numbers it has, held out over logs, lost two to three right columns for each wrong one it caught). A path that leaves
    its stroke by a jump, lies still on such a line and jumps back to where it left has taken the ruling for its
    pen: the curve goes on elsewhere (the real shapes' dense_11 SFLU, log_decades_16 ILD). A curve lying on the line
    (dense_12 NPHI of the real shapes) is left to its path's moves of a few rows (``DETOUR_JUMP``: dense_08 NPHI's
    4-6 rows on a 99-row track) and to paths that jump away and on elsewhere (``DETOUR_RETURN``). Held out (the
    eleven sets of #60 at 24 logs): 66 confidently wrong samples doubted against 2 confident and right; the fit's
    logs 0-19: 9 against 1; logs 20-59: 8 against 8 (docs/accuracy.md, the seventeenth round)."""
    n = position.size
    out = np.zeros(n, bool)
    released = grid.released
    if released is None or not released.any() or n < DETOUR_COLS + 2:
        return out
    p = np.asarray(position, np.float64)
    finite = np.isfinite(p)
    with np.errstate(invalid="ignore"):
        step = np.abs(np.diff(p))
    jump = np.zeros(n + 1, bool)  # jump[k]: a jump between columns k-1 and k
    jump[1:n] = finite[:-1] & finite[1:] & (step >= DETOUR_JUMP * track_width)
    calm = np.zeros(n, bool)  # columns whose move from the one before is no jump: runs of them are stays
    calm[1:] = finite[1:] & finite[:-1] & ~jump[1:n]
    near = near_lines(p, grid, released, RELEASED_PX)
    starts, stops = true_runs(calm)
    for a, b in zip(starts, stops):
        a -= 1  # the run holds the columns after the first: the stay is [a, b)
        if b - a < DETOUR_COLS or not jump[a] or b >= n or not jump[b]:
            continue
        seg = p[a:b]
        if np.max(np.abs(seg - np.median(seg))) > DETOUR_PX:
            continue
        if abs(p[a - 1] - p[b]) > DETOUR_RETURN * min(abs(p[a] - p[a - 1]), abs(p[b] - p[b - 1])):
            continue  # the path goes on elsewhere: a step, not a detour
        out[a:b] = near[a:b]
    return out
