"""The pass ``line_detour``: a path that jumps off its stroke onto a line the grid's still-curve test released, stays
there and jumps back to where it left is doubted; a path coming onto the line without a jump, one stopping too
briefly, one moving along it, one jumping by a few rows, one going on elsewhere after it, and one jumping onto a line
the grid kept or onto none, are not (``rules/detour.py: line_detours``;
docs/accuracy.md, the seventeenth round)."""

import numpy as np

from core.digitize.page.grid import Grid
from core.digitize.rules.detour import line_detours
from core.digitize.rules.passes import BY_NAME, Effect

ROWS, COLS, WIDTH = 200, 400, 200.0  # one track of 200 rows: a jump is 16 rows or more (DETOUR_JUMP)


def _grid(released_rows) -> Grid:
    along = np.zeros((ROWS, 1), np.float32)
    released = np.zeros((ROWS, 1), np.float32)
    released[list(released_rows), 0] = 1.0
    return Grid(along, np.array([0, COLS]), np.zeros((1, COLS), np.float32), [(0, ROWS)], None, released)


def _detour(on: float, at=(150, 170), off: float = 100.0) -> np.ndarray:
    """A curve wandering about row ``off`` that lies at row ``on`` over the columns ``at``."""
    cols = np.arange(COLS, dtype=np.float64)
    path = off + 4.0 * np.sin(cols / 15.0)
    path[at[0] : at[1]] = on + 0.4 * np.sin(cols[at[0] : at[1]])
    return path


def test_a_jump_onto_a_released_line_and_back_is_doubted():
    grid = _grid(range(59, 62))
    out = line_detours(_detour(60.0), grid, WIDTH)
    assert out[150:170].all() and out.sum() == 20


def test_no_jump_a_short_stop_a_kept_line_or_none_is_not():
    grid = _grid(range(59, 62))
    cols = np.arange(COLS, dtype=np.float64)
    glide = np.interp(cols, [0, 150, 170, 399], [100.0, 60.0, 60.0, 100.0])  # onto the line and off by moves of a row
    assert not line_detours(glide, grid, WIDTH).any()
    assert not line_detours(_detour(60.0, at=(150, 153)), grid, WIDTH).any()  # three columns: no stay
    assert not line_detours(_detour(140.0), grid, WIDTH).any()  # a stay on no released line
    kept = Grid(np.zeros((ROWS, 1), np.float32), np.array([0, COLS]), np.zeros((1, COLS), np.float32), [(0, ROWS)],
                None, np.zeros((ROWS, 1), np.float32))
    assert not line_detours(_detour(60.0), kept, WIDTH).any()  # the grid kept its lines: nothing released
    moving = _detour(60.0)
    moving[150:170] = np.linspace(57.0, 64.0, 20)  # along the line but moving over it: no stay
    assert not line_detours(moving, grid, WIDTH).any()
    # a stay at the log's start or against a NULL is entered by no jump
    start = _detour(60.0, at=(0, 20))
    assert not line_detours(start, grid, WIDTH).any()
    nulled = _detour(60.0)
    nulled[149] = np.nan
    assert not line_detours(nulled, grid, WIDTH).any()
    near = _detour(60.0, off=72.0)  # moves of 12 rows, 6 % of the track: a path's jitter about a curve on the line
    assert not line_detours(near, grid, WIDTH).any()
    step = _detour(60.0)
    step[170:] += 60.0  # off the line to 160: the curve went on elsewhere
    assert not line_detours(step, grid, WIDTH).any()


def test_the_pass_doubts():
    assert BY_NAME["line_detour"].effect is Effect.DOUBT
