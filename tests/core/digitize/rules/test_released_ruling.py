"""The pass ``released_ruling``: a path lying straight along a ruled line the grid's still-curve test released (a 1-bit
print bends its rulings as a curve wobbles), while the curve's own style shows untraced elsewhere, is doubted; a curve
lying still off the ruling's comb, or wobbling as a curve, or with nothing of its style elsewhere, and a path that
moves along such a line, are not (``page/still_curves.py: ruled_released``,
``rules/released_ruling.py: along_released_ruling``; docs/accuracy.md, the fifteenth round)."""

import numpy as np

from core.digitize.page.grid import Grid
from core.digitize.page.still_curves import at_comb_place, ruled_released
from core.digitize.rules.confidence_model import DECISION_FLAGS, PASS_FLAGS
from core.digitize.rules.passes import BY_NAME, Effect
from core.digitize.rules.released_ruling import along_released_ruling, straight_columns

ROWS, COLS = 60, 600
LINES = (10, 20, 30, 40, 50)  # a ruling every ten rows: the comb


def _dark(lines: dict[int, float]) -> np.ndarray:
    """A window's darkness: a one-row line at each row of ``lines``, its centre moved by that many rows (amplitude) in
    a slow bend along the columns (the line's ink split between two rows: its centroid is the bent row)."""
    dark = np.zeros((ROWS, COLS))
    bend = np.sin(2 * np.pi * np.arange(COLS) / 200.0)
    for row, amplitude in lines.items():
        y = row + amplitude * bend
        top = np.floor(y).astype(int)
        dark[top, np.arange(COLS)] = 1.0 - (y - top)
        dark[top + 1, np.arange(COLS)] += y - top
    return dark


def _rows(centres) -> np.ndarray:
    """The line rows the row profile reads: each line and a row either side (``grid._spread``)."""
    out = np.zeros(ROWS, bool)
    for c in centres:
        out[c - 1 : c + 2] = True
    return out


def test_a_released_line_of_the_comb_bent_as_its_neighbours_is_ruled():
    # every line of a 1-bit print bent alike, a third of a row: the middle one was released for its wobble
    dark = _dark({r: 0.3 for r in LINES})
    before = _rows(LINES)
    after = _rows([r for r in LINES if r != 30])
    assert ruled_released(dark, before, after, [(29, 32)]) == [(29, 32)]


def test_a_released_line_wobbling_as_a_curve_or_off_the_comb_stays_a_curve():
    # a curve lying still at the comb's place but wobbling five times the ruling
    dark = _dark({10: 0.3, 20: 0.3, 30: 1.5, 40: 0.3, 50: 0.3})
    assert ruled_released(dark, _rows(LINES), _rows([10, 20, 40, 50]), [(29, 32)]) == []
    # bent as the ruling is, but lying where the comb puts no line (24: four rows from 20, six from 30)
    lines = (10, 20, 24, 30, 40, 50)
    dark = _dark({r: 0.3 for r in lines})
    assert ruled_released(dark, _rows(lines), _rows([10, 20, 30, 40, 50]), [(23, 26)]) == []
    assert at_comb_place(30.0, np.array([10.0, 20.0, 40.0, 50.0]))
    assert not at_comb_place(24.0, np.array([10.0, 20.0, 30.0, 40.0, 50.0]))


def _grid(ruled_rows) -> Grid:
    along = np.zeros((ROWS, 1), np.float32)
    released = np.zeros((ROWS, 1), np.float32)
    released[list(ruled_rows), 0] = 1.0
    return Grid(along, np.array([0, COLS]), np.zeros((1, COLS), np.float32), [(0, ROWS)], released)


def test_a_path_lying_straight_along_a_released_ruling_is_doubted_where_its_style_shows_elsewhere():
    grid = _grid(range(29, 32))
    cols = np.arange(COLS, dtype=np.float64)
    elsewhere = np.full(COLS, 0.1)  # the curve's own style untraced elsewhere in its track (signals' rival)
    straight = np.full(COLS, 30.4) + 0.2 * np.sin(cols / 3.0)  # a ruling followed, to a fraction of a pixel
    assert along_released_ruling(straight, grid, elsewhere).all()
    # nothing of its style elsewhere: a curve lying still along the line, read as it is
    assert not along_released_ruling(straight, grid, np.zeros(COLS)).any()
    wiggling = 30.0 + 1.2 * np.sin(cols / 4.0)  # a curve crossing to and fro along the line, within its reach
    assert not along_released_ruling(wiggling, grid, elsewhere).any()
    off = np.full(COLS, 40.0)  # straight, but on no released line
    assert not along_released_ruling(off, grid, elsewhere).any()
    short = np.where((cols >= 100) & (cols < 180), 30.0, 45.0 + 3.0 * np.sin(cols / 2.0))  # 80 columns on it: too short
    assert not along_released_ruling(short, grid, elsewhere).any()
    assert not along_released_ruling(straight, _grid([]), elsewhere).any()  # no line released that looks ruled


def test_straight_columns_are_the_runs_straight_throughout():
    pos = np.full(300, np.nan)
    pos[50:250] = 100.0 + 0.05 * np.arange(200)  # straight, sloped
    out = straight_columns(pos)
    assert out[50:250].all() and not out[:50].any() and not out[250:].any()
    pos[[120, 200]] = np.nan  # columns without a value break it into runs of under a hundred
    assert not straight_columns(pos).any()


def test_the_pass_is_a_decision_the_calibrator_caps():
    assert BY_NAME["released_ruling"].effect is Effect.DOUBT
    assert "released_ruling" in PASS_FLAGS and "released_ruling" in DECISION_FLAGS
