"""A traced line's stroke taken out of a style's map: what the next curve of that map reads.

Two curves of one map in one track cannot both follow its strongest line: a curve whose style a wrapping curve of the
track shares traces on what that curve's stroke leaves (``rules/all_curves.py``), and a broken pen read from the other
broken style's map traces on what that style's curves leave (``rules/borrowed_map.py: borrowed_maps``).
"""

from __future__ import annotations

import numpy as np


def remove_line(ev: np.ndarray, position: np.ndarray, core_px: int, reach_px: int = 16, floor: float = 0.05) -> None:
    """Zero a traced line's stroke in the evidence wherever it has a position (``position``: its rows in ``ev``, NaN
    where it has none; in place).

    Per column the stroke spans the rows the path passes through on its way from the previous column
    to the next (a steep swing covers many rows in one column), widened by ``core_px``; from there it
    goes on outwards while the evidence stays above ``floor`` (at most ``reach_px`` more), so a thick or
    blurred stroke goes whole and leaves no fringe for the next curve to follow a pen-width off.
    Faint stretches count too; across a bridged gap there is nothing to remove.
    """
    cols = np.flatnonzero(np.isfinite(position))
    if cols.size == 0:
        return
    rows = ev.shape[0]
    centre = np.clip(np.rint(position[cols]).astype(np.int64), 0, rows - 1)
    lo, hi = centre.copy(), centre.copy()
    for shift in (1, -1):  # halfway towards each neighbouring column's position
        nb = np.roll(centre, shift)
        adjacent = np.abs(np.roll(cols, shift) - cols) == 1
        half = np.where(adjacent, (nb + centre) // 2, centre)
        lo, hi = np.minimum(lo, half), np.maximum(hi, half)
    lo, hi = np.maximum(lo - core_px, 0), np.minimum(hi + core_px, rows - 1)
    lengths = hi - lo + 1
    starts = np.repeat(lo - np.cumsum(lengths) + lengths, lengths)
    ev[starts + np.arange(lengths.sum()), np.repeat(cols, lengths)] = 0.0
    for edge, direction in ((hi, 1), (lo, -1)):
        alive = np.ones(cols.size, bool)
        for k in range(1, reach_px + 1):
            r = edge + direction * k
            alive &= (r >= 0) & (r < rows)
            rc = np.clip(r, 0, rows - 1)
            alive &= ev[rc, cols] > floor
            if not alive.any():
                break
            ev[rc[alive], cols[alive]] = 0.0
