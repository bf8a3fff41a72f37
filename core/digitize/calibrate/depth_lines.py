"""The depth lines of a log body: the lines drawn across its tracks at every depth step, which the printed depth
numbers label, found once per section for the numbers to be snapped onto (``number_placement.snap_to_depth_lines``).

Pooled over every track, an image track's rows taken for lines run into the ruling's; so each track's own lines
are kept too, where they rule the body evenly, and a number snaps to those of the track it is printed beside.
"""

from __future__ import annotations

import numpy as np

DEPTH_LINES_ALONG = 0.5  # depth lines lie (within two of their spacings) along this share of a body at least


def depth_lines(canon: np.ndarray, tracks: list[tuple[float, float]], dark: np.ndarray | None = None
                ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Centres (columns, canonical frame) of the depth lines drawn across any of the tracks, and of those drawn
    across each track on its own (empty where a track's lines are no even ruling of the body: an image track's rows
    taken for lines). ``dark``: the image's ink map, when already computed."""
    from core.digitize.page.grid import across_lines
    from core.digitize.page.ink import ink_map

    if dark is None:
        dark = ink_map(canon)
    bands = [(int(a) + 2, int(b) - 1) for a, b in tracks] or [(0, dark.shape[0])]
    kept = [(max(0, lo), min(dark.shape[0], hi)) for lo, hi in bands]
    usable = [k for k, (lo, hi) in enumerate(kept) if hi - lo >= 3]
    across = across_lines(dark, [kept[k] for k in usable])
    per_track = [np.zeros(0)] * len(tracks)
    for k, row in zip(usable, across):
        own = _ruling(np.flatnonzero(row >= 0.5), dark.shape[1])
        if k < len(tracks) and _evenly_spaced(own):
            per_track[k] = own
    cols = np.flatnonzero(across.max(axis=0) >= 0.5) if across.size else np.zeros(0, np.int64)
    return _ruling(cols, dark.shape[1]), per_track


def _ruling(cols: np.ndarray, length: int) -> np.ndarray:
    """Centres of the runs of line columns ``cols``, where they rule a body ``length`` long: depth lines rule the
    body along its length; lines across in a stretch of it only are the edges of an image or of a box (a
    compressed summary log has no depth lines, only the tops of its image columns)."""
    if cols.size == 0:
        return np.zeros(0)
    groups = np.split(cols, np.flatnonzero(np.diff(cols) > 1) + 1)
    centres = np.array([g.mean() for g in groups])
    if centres.size >= 2:
        reach = 2.0 * float(np.median(np.diff(centres)))
        near = np.zeros(length, bool)
        for c in centres:
            near[max(0, int(c - reach)) : int(c + reach) + 1] = True
        if near.mean() < DEPTH_LINES_ALONG:
            return np.zeros(0)
    return centres


EVEN_SPACING = 0.15  # a ruling's lines stand this close (a share of their usual spacing) to it ...
EVEN_SHARE = 0.7  # ... this share of them at least: a track's rows taken for lines do not (33-025-02311-0001: its
#   ruled tracks 0.99-1.00, its image tracks' and summary plots' rows 0.00-0.56)


def _evenly_spaced(centres: np.ndarray) -> bool:
    """Whether lines are a ruling: most spaced evenly (depth lines every 2, 10 or 50 ft), not a track's rows taken
    for lines (an image's, a plot's), which stand at any spacing."""
    if centres.size < 3:
        return False
    gaps = np.diff(centres)
    return bool(np.mean(np.abs(gaps / np.median(gaps) - 1.0) <= EVEN_SPACING) >= EVEN_SHARE)


def lines_beside(across: float | None, tracks: list[tuple[float, float]], per_track: list[np.ndarray],
                 pooled: np.ndarray) -> np.ndarray:
    """The depth lines a number read at ``across`` labels: those of the track nearest it (a label is printed
    beside or inside the track its line runs across), where that track's lines rule the body; else the lines
    pooled over every track. Pooled, an image track's rows taken for lines run into the ruling's: on a 70-dpi
    cement log (33-025-02311-0001) the GR track held all 190 of its heavy lines within a pixel, the pool 292
    runs whose centres lay off them, and its labels went 2 px (1.4 ft) above their lines."""
    if across is None or not tracks:
        return pooled
    k = int(np.argmin([0.0 if a <= across < b else min(abs(across - a), abs(across - b)) for a, b in tracks]))
    return per_track[k] if per_track[k].size else pooled
