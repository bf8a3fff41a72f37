"""``core/digitize/trace/group.py``: two curves of one line style traced jointly through their crossing."""

import numpy as np

from core.digitize.trace.group import GroupParams, trace_group


def _crossing_lines(cols: int = 240, rows: int = 80) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two straight solid strokes crossing in an X at the middle column: (evidence, first line, second line)."""
    x = np.arange(cols)
    a = 10 + (rows - 20) * x / (cols - 1)
    b = rows - 10 - (rows - 20) * x / (cols - 1)
    ev = np.zeros((rows, cols), np.float32)
    for line in (a, b):
        r = np.rint(line).astype(int)
        for d in (-1, 0, 1):
            ev[np.clip(r + d, 0, rows - 1), x] = 1.0 if d == 0 else 0.6
    return ev, a, b


def test_two_dashed_curves_keep_their_own_lines_through_an_x():
    """Broken pens may share a run at a crossing (cheap), so each goes straight through on its velocity. (Two
    solid pens sharing a run cost more than a gap: at this shallow X one is bridged and they may bounce, a
    limitation ``docs/accuracy.md`` measures; ``test_crossings.py`` holds a steeper solid X.)"""
    ev, a, b = _crossing_lines()
    pos, observed, conf = trace_group(ev, [2, 2], GroupParams())
    assert pos.shape == observed.shape == conf.shape == (2, ev.shape[1])
    # each curve goes straight through the crossing: the one that starts on ``a`` ends on ``a``
    first = 0 if abs(pos[0, 5] - a[5]) < abs(pos[1, 5] - a[5]) else 1
    other = 1 - first
    away = np.r_[0:100, 140:240]  # apart from the columns where the strokes merge
    ok_a = np.isfinite(pos[first, away]) & (np.abs(pos[first, away] - a[away]) <= 1.5)
    ok_b = np.isfinite(pos[other, away]) & (np.abs(pos[other, away] - b[away]) <= 1.5)
    assert ok_a.mean() > 0.95 and ok_b.mean() > 0.95, (ok_a.mean(), ok_b.mean())
    assert observed[:, away].mean() > 0.95 and conf[:, away].min() >= 0.6
    solid, _, _ = trace_group(ev, [1, 1], GroupParams())
    on_a = np.abs(solid[:, away] - a[away]) <= 1.5
    on_b = np.abs(solid[:, away] - b[away]) <= 1.5
    assert ((on_a[0] & on_b[1]) | (on_b[0] & on_a[1])).mean() > 0.95  # solid: never both on one line


def test_a_curve_the_map_does_not_show_stays_unseen_rather_than_ride_its_neighbour():
    ev, a, _ = _crossing_lines()
    only_a = np.zeros_like(ev)
    r = np.rint(a).astype(int)
    only_a[r, np.arange(ev.shape[1])] = 1.0
    pos, observed, _ = trace_group(only_a, [1, 1], GroupParams())
    # one curve follows the stroke; two solid pens never share it for long (a solid curve seen nowhere else is
    # not there)
    both = observed.all(axis=0) & (np.abs(pos[0] - pos[1]) < 2)
    assert observed.any(axis=0).mean() > 0.95 and both.mean() < 0.1, both.mean()
