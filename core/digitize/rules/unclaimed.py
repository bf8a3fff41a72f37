"""A curve traced beside a neighbour while a stroke of its own line style runs elsewhere in the track, traced by
no curve: which of the two is the curve is in doubt, and the reading beside the neighbour is flagged.

A multiclass map can call two pens one style. On a 1-bit print drawn by another renderer (foreign hard_006) the
network calls the dotted resistivity's short dashes beside the solid caliper "dashed"; the long-dash neutron
porosity curve followed them for the whole log, a third of the track from its own long dashes, which stood in
the track traced by nothing (485 of 899 samples confidently wrong with the bundled model). The dashed evidence
in the track then has two strokes and one dashed curve: the one it took lies on a neighbour's line, the other
nobody's. The reading is written and flagged, not NULL: where the second stroke is a curve the calibration does
not name (a repeat pass, a curve drawn in the track without a scale) the one beside the neighbour is right.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.common.runs import distance_to_true
from core.digitize.evidence.coded_map import compiled_reading
from core.digitize.page.grid import BandDamping
from core.digitize.rules.track_scans import damping_arguments, read_where_spread, uncovered_ink_rows

# a trace this near a neighbour's (a share of the track's width: the tolerance a reading is judged by) lies beside
# it. A fixed 12 px missed hard_006's dots drifting 13-20 px from the caliper on its 423-px track (173 of 485 wrong
# left); 20 px flagged 1.3 points more of log_decades' right values (docs/accuracy.md)
BESIDE_SHARE_OF_TRACK = 0.05
CLAIM_PX = 8  # rows either side of a traced curve its stroke covers (the pen, the registration)
MIN_INK_ROWS = 2  # rows of own-style evidence a column needs to hold a stroke (one pixel is speckle)
WINDOW_COLS = 96  # columns the shares below are taken over
BESIDE_SHARE = 0.6  # ... of which the trace lies beside a neighbour in this many
UNCLAIMED_SHARE = 0.3  # ... and an own-style stroke no trace covers is seen in this many
CHUNK = 4096


def unclaimed_columns(traced: list[np.ndarray], evidence: np.ndarray, lo: int, hi: int, threshold: float,
                      damping: BandDamping | Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """Per column, whether ``evidence`` holds a stroke in rows ``lo``..``hi`` (:data:`MIN_INK_ROWS` rows at
    ``threshold`` or over, damped by ``damping`` as :func:`beside_an_unclaimed_stroke` says) that no curve of ``traced``
    (rows per column, NaN where NULL) covers (:data:`CLAIM_PX`). Which curve is which changes nothing."""
    cols = traced[0].size
    traced = np.stack(traced).astype(np.float64)
    unclaimed = np.zeros(cols, bool)
    spread = read_where_spread(damping, lo, hi)
    for c0 in range(0, cols, CHUNK):
        c1 = min(cols, c0 + CHUNK)
        if damping is None or spread:  # the grid's damping is float64: the product in float64, compiled
            band, table = compiled_reading(evidence, (slice(lo, hi + 1), slice(c0, c1)))
            precision = np.float64 if spread else np.float32
        else:  # a factor given at the columns: the product in its precision (float64 or float32) as NumPy takes it
            band = np.asarray(evidence[lo : hi + 1, c0:c1], np.float32) * np.asarray(damping(np.arange(c0, c1)))
            table = np.zeros(1, np.float32)  # not read: the band is values
            precision = band.dtype.type
        # ink where the value reaches the threshold, compared in the value's precision (a Python float against a
        # float32 map compares in float32)
        at = float(precision(threshold))
        rows = np.zeros(c1 - c0, np.int64)
        uncovered_ink_rows(band, table, *damping_arguments(damping if spread else None), c0, at,
                           np.ascontiguousarray(traced[:, c0:c1]), lo, float(CLAIM_PX), rows)
        unclaimed[c0:c1] = rows >= MIN_INK_ROWS
    return unclaimed


def beside_an_unclaimed_stroke(i: int, positions: list[np.ndarray], shares_track: list[bool], evidence: np.ndarray,
                               lo: int, hi: int, threshold: float,
                               damping: BandDamping | Callable[[np.ndarray], np.ndarray] | None = None,
                               unclaimed: np.ndarray | None = None) -> np.ndarray:
    """Columns where curve ``i`` lies beside a neighbour (:data:`BESIDE_SHARE_OF_TRACK`) while its style's
    evidence holds a stroke in the track (rows ``lo``..``hi``) that no traced curve covers, both over a window
    of :data:`WINDOW_COLS` columns. ``positions``: every curve's rows per column (NaN where NULL); ``shares_track``:
    which of them share curve ``i``'s track; ``evidence``: the canonical map of curve ``i``'s style;
    ``damping``: the grid's factor for the track's rows (a ruled line the map calls a curve is no stroke): the
    grid's damping of the band (``page/grid.py: BandDamping``, read where it is spread), or a function giving the
    factor at some columns (indices), read a chunk at a time (a tall track's whole band is 100 MB and more).
    ``unclaimed``: :func:`unclaimed_columns` of the track's curves, where it was read already (the curves of one style
    in one track read the same)."""
    pos = positions[i]
    cols = pos.size
    others = [p for j, p in enumerate(positions) if j != i and shares_track[j]]
    if not others:
        return np.zeros(cols, bool)
    with np.errstate(invalid="ignore"):
        beside = np.zeros(cols, bool)
        for p in others:
            beside |= np.abs(pos - p) <= BESIDE_SHARE_OF_TRACK * (hi - lo)
    if unclaimed is None:
        unclaimed = unclaimed_columns([pos] + others, evidence, lo, hi, threshold, damping)
    k = np.ones(WINDOW_COLS) / WINDOW_COLS
    share_beside = np.convolve(beside.astype(float), k, mode="same")
    share_unclaimed = np.convolve(unclaimed.astype(float), k, mode="same")
    flag = (share_beside >= BESIDE_SHARE) & (share_unclaimed >= UNCLAIMED_SHARE) & beside
    return distance_to_true(flag) <= WINDOW_COLS // 4
