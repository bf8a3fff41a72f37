"""Where the tracks are: the lines along depth across a scan and the tracks between them.

The lines along depth (track borders and the amplitude grid) come from ``core.digitize.grid`` (projection
profiles; faint grey grids too). The gaps between consecutive lines are either cells of a track's grid or
*separators*: the depth column and margins, which are wider than the grid's spacing (over twice the median gap)
and mostly paper, ink along 2–60 % of their length (the printed depths and their ticks). A cell of a log grid can
be as wide but carries a curve or nothing at all; so can the cells of a coarse linear grid, which come in a row of
equal widths between grid-weight lines (:func:`_coarse_cells`). A track is a run of lines between separators; its
bounds are its outer lines' centres. Two tracks that share a border are split there where their grid spacings differ,
or where a scale box printed above them ends on that border (:func:`split_at_boxes`).
"""

from __future__ import annotations

import numpy as np

from core.digitize.page.grid import detect_grid

SPLIT_SPACING = 1.15  # grid spacings this different either side of a strong line: two tracks share that border
SEPARATOR_GAP = 2.0  # a gap this many times the median line spacing may be a depth column or margin ...
SEPARATOR_INK = (0.02, 0.60)  # ... if ink (beyond its bounding lines) lies along this share of its length
MIN_LINES = 2  # lines a track needs (its two borders)
EQUAL_CELLS = 0.10  # wide gaps in a row within this share of one width are a coarse grid's cells ...
GRID_WEIGHT = 0.5  # ... where a line bounding them is under this share of the scan's heaviest line


def along_depth_lines(canon: np.ndarray, dark: np.ndarray | None = None) -> list[tuple[float, float]]:
    """(centre row, strength) of the lines running along depth (borders and grid lines), canonical frame.
    Strength: the line's width times its typical darkness, so a border outweighs a grid line."""
    groups = detect_grid(canon if dark is None else None, dark=dark).line_groups(0.5)
    if not groups:
        return []
    if dark is None:
        from core.digitize.page.ink import ink_map

        dark = ink_map(canon)
    step = max(1, dark.shape[1] // 2000)
    return [(float(g.mean()), float(np.median(dark[g][:, ::step], axis=1).sum())) for g in groups]


def body_lines(canon: np.ndarray, darkness: np.ndarray, found: list[tuple[float, float]],
               spans: list[tuple[int, int]]) -> list[tuple[float, float]]:
    """The lines along depth as the longest stretch of log body draws them (``spans``: the log sections found
    from ``found``, the lines of the whole picture). A line is one where most of the grid reading's windows see
    it, and a header's boxes, the scale boxes and a tail's tables fill windows of their own: a border printed
    only beside the log was outvoted there (iqa_33-023-01146-0006's right border at 1,613 px, in 2 of its 5
    windows), and the header's box lines made borders inside a column (the porosity, lithology and show columns
    of the mud logs iqa_33-023-01135 and -01145, read 254-324 / 361-387 / 387-404 px for the printed 254-292 /
    292-352 / 352-404). ``found`` itself where no body is found or it is the whole picture."""
    if not spans:
        return found
    a, b = max(spans, key=lambda s: s[1] - s[0])
    if b - a >= canon.shape[1]:
        return found
    return along_depth_lines(canon[:, a:b], darkness[:, a:b]) or found


def _split_abutting(lines: list[float], strength: list[float]) -> list[tuple[int, int]]:
    """Index ranges [i, j] of tracks within one run of lines: two tracks that share a border (no depth column
    between them) are split at that border where their grid spacings differ and it is as strong as the run's
    outer borders (a heavy grid line with the same spacing either side is not a border)."""
    def split(i: int, j: int) -> list[tuple[int, int]]:
        if j - i < 4:
            return [(i, j)]
        outer = min(strength[i], strength[j])
        best, at = SPLIT_SPACING, None
        for k in range(i + 2, j - 1):
            if strength[k] < 0.8 * outer:
                continue
            left, right = np.median(np.diff(lines[i : k + 1])), np.median(np.diff(lines[k : j + 1]))
            ratio = max(left, right) / max(1e-6, min(left, right))
            if ratio > best:
                best, at = ratio, k
        return [(i, j)] if at is None else split(i, at) + split(at, j)

    return split(0, len(lines) - 1)


def _coarse_cells(gaps: np.ndarray, candidate: list[bool], strength: list[float]) -> list[bool]:
    """The separator candidates that are a coarse grid's cells instead: two or more wide gaps in a row of one
    width (within :data:`EQUAL_CELLS`), each bounded on one side at least by a line of grid weight (under
    :data:`GRID_WEIGHT` of the scan's heaviest line). A depth column is one gap between two tracks' borders,
    never a row of equal gaps parted by grid lines (iqa_33-023-01135-0001: E-Log 2's four 42-px cells at
    928–1098 px, with a curve along 17–52 % of each, read as four depth columns and lost the track). Where every
    line weighs the same (a 1-bit print's), no line is of grid weight and nothing changes."""
    cells = [False] * len(gaps)
    weak = [s < GRID_WEIGHT * max(strength) for s in strength]
    i = 0
    while i < len(gaps):
        j = i
        while (j + 1 < len(gaps) and candidate[i] and candidate[j + 1]
               and abs(gaps[j + 1] - gaps[i]) <= EQUAL_CELLS * gaps[i]):
            j += 1
        if j > i:
            for k in range(i, j + 1):
                cells[k] = weak[k] or weak[k + 1]
        i = j + 1
    return cells


def ink_share(dark: np.ndarray, lo: float, hi: float) -> float:
    """Share of depth columns with ink in the middle half of the gap between two lines: where a depth column
    prints its numbers, clear of the ticks that enter it from its borders."""
    quarter = (hi - lo) / 4.0
    a, b = int(np.ceil(lo + quarter)), int(np.floor(hi - quarter))
    if b <= a:
        return 0.0
    return float(dark[a:b].any(axis=0).mean())


def propose_tracks(canon: np.ndarray, darkness: np.ndarray | None = None,
                   found: list[tuple[float, float]] | None = None
                   ) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(tracks, separators) across a canonical image: each as (lo, hi) rows; ``darkness`` its ink map and
    ``found`` its :func:`along_depth_lines`, when already computed."""
    from core.digitize.page.ink import ink_map

    if darkness is None:
        darkness = ink_map(canon)
    if found is None:
        found = along_depth_lines(canon, darkness)
    if len(found) < MIN_LINES:
        return [], []
    lines, strength = [c for c, _ in found], [s for _, s in found]
    dark = darkness > 0.5
    gaps = np.diff(lines)
    typical = float(np.median(gaps))
    candidate = [(g > SEPARATOR_GAP * typical) and (SEPARATOR_INK[0] <= ink_share(dark, a, b) <= SEPARATOR_INK[1])
                 for g, a, b in zip(gaps, lines[:-1], lines[1:])]
    separator = [c and not cell for c, cell in zip(candidate, _coarse_cells(gaps, candidate, strength))]
    runs, separators, start = [], [], 0
    for i, sep in enumerate(separator):
        if sep:
            separators.append((lines[i], lines[i + 1]))
            runs.append((start, i))
            start = i + 1
    runs.append((start, len(lines) - 1))
    tracks = []
    for a, b in runs:
        if b - a + 1 >= MIN_LINES:
            tracks += [(lines[a + i], lines[a + j]) for i, j in _split_abutting(lines[a : b + 1], strength[a : b + 1])]
    return tracks, separators


def split_at_boxes(tracks: list[tuple[float, float]], box_spans: list[tuple[float, float]],
                   lines: list[float], within: float = 5.0) -> list[tuple[float, float]]:
    """The tracks with each one split where a curve's scale box ends inside it on one of its lines.

    Two tracks whose grids have one pitch and whose shared border is as heavy as their own heavy grid lines
    read as one run of lines (iqa_33-023-01146-0006: 614–1563 px, where ROP's track is 614–1114 and another
    begins there; the lines at 864, 1114 and 1364 px are alike). The scale box printed above each track spans
    that track: where a box's edge falls on an inner line of a proposed track, that line is a border."""
    out: list[tuple[float, float]] = []
    for lo, hi in tracks:
        cuts = sorted({line for a, b in box_spans for edge in (a, b) for line in lines
                       if abs(edge - line) <= within and lo + within < line < hi - within
                       and min(a, b) >= lo - within and max(a, b) <= hi + within})
        edges = [lo, *cuts, hi]
        out += list(zip(edges[:-1], edges[1:]))
    return out

