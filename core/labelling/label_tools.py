"""What the labelling tools select: the straight line under a click, the ink under a brush, a labelled stroke.

Labelling is the cost of the adapt loop (pre-fill, correct, adapt), and the
corrections a pre-filled mask needs are of few kinds: a printed grid line the
model painted as curve (long and straight), a stretch of curve it missed, a
stroke given the wrong line style. Each tool turns one click or one loose drag
into the pixels such a correction means; ``core.labelling.mask_edit.MaskEditor`` applies
them as one undo step. Every function works in the scan's own frame (rows,
columns), whichever way the log runs.
"""

from __future__ import annotations

import cv2
import numpy as np

from core.common.runs import true_runs

SNAP_PX = 4  # a click this close to a labelled pixel counts as on it
MIN_LINE_PX = 40  # a straight segment shorter than this is no grid line
LINE_GAP_PX = 48  # a straight line goes on across gaps up to this long (the pieces a cleaned pre-fill left of it)
MAX_SKEW = 0.02  # rows per column a scanned line may drift (about 1.1°)
MAX_LINE_PX = 9  # thicker than this across is no printed line
STROKE_BRIDGE_PX = 6  # a stroke's pieces this close are one stroke (a dotted or dashed curve's marks)


def snap_to_label(mask: np.ndarray, row: float, col: float, reach: int = SNAP_PX) -> tuple[int, int] | None:
    """The labelled pixel nearest (row, col) within ``reach``, or None."""
    h, w = mask.shape
    r, c = int(round(row)), int(round(col))
    r0, r1, c0, c1 = max(0, r - reach), min(h, r + reach + 1), max(0, c - reach), min(w, c + reach + 1)
    if r0 >= r1 or c0 >= c1:
        return None
    rr, cc = np.nonzero(mask[r0:r1, c0:c1])
    if rr.size == 0:
        return None
    k = int(np.argmin((rr + r0 - row) ** 2 + (cc + c0 - col) ** 2))
    return int(rr[k] + r0), int(cc[k] + c0)


def _closed(present: np.ndarray, gap: int) -> np.ndarray:
    """``present`` with its gaps of up to ``gap`` filled (a 1-D closing)."""
    k = np.ones((1, 2 * gap + 1), np.uint8)
    return cv2.morphologyEx(present.astype(np.uint8)[None], cv2.MORPH_CLOSE, k)[0].astype(bool)


def _segment_along_rows(lab: np.ndarray, r0: int, c0: int) -> tuple[int, np.ndarray, np.ndarray] | None:
    """The longest nearly-horizontal labelled line through (r0, c0): (count, its columns, its rows)."""
    h, w = lab.shape
    cols = np.arange(w)
    best = None
    for slope in np.linspace(-MAX_SKEW, MAX_SKEW, 9):
        y = np.rint(r0 + slope * (cols - c0)).astype(np.int64)
        inside = (y >= 1) & (y < h - 1)
        yc = np.clip(y, 1, h - 2)
        present = inside & (lab[yc, cols] | lab[yc - 1, cols] | lab[yc + 1, cols])
        joined = _closed(present, LINE_GAP_PX)
        if not joined[c0]:
            continue
        starts, stops = true_runs(joined)
        k = int(np.searchsorted(starts, c0, side="right")) - 1  # the stretch of joined columns holding the click
        span = np.arange(starts[k], stops[k])
        count = int(present[span].sum())
        if best is None or count > best[0]:
            best = (count, span[present[span]], y[span][present[span]])
    return best


def straight_line_at(mask: np.ndarray, row: float, col: float) -> np.ndarray | None:
    """The pixels of the straight labelled line under a click (horizontal or vertical in the scan, up to
    ``MAX_SKEW`` off), or None where the click is on no line at least ``MIN_LINE_PX`` long.

    Only the line's own thickness goes: where a curve crosses it (the labelled run across the line is much
    thicker than the line there) that column is kept, so erasing a grid line does not cut the curves over it.
    """
    hit = snap_to_label(mask, row, col)
    if hit is None:
        return None
    lab = mask > 0
    found = []
    for transposed in (False, True):
        grid = lab.T if transposed else lab
        r0, c0 = (hit[1], hit[0]) if transposed else hit
        seg = _segment_along_rows(np.ascontiguousarray(grid), r0, c0)
        if seg is not None:
            found.append((seg[0], transposed, seg[1], seg[2], grid))
    if not found:
        return None
    count, transposed, cols, rows, grid = max(found, key=lambda f: f[0])
    if count < MIN_LINE_PX:
        return None
    # per column: the labelled run across the line at its row (moved onto the labelled one of the three
    # rows the line was found on)
    h = grid.shape[0]
    up1, dn1 = np.clip(rows - 1, 0, h - 1), np.clip(rows + 1, 0, h - 1)
    rows = np.where(grid[rows, cols], rows, np.where(grid[up1, cols], up1, dn1))
    above = np.zeros(cols.size, np.int64)
    below = np.zeros(cols.size, np.int64)
    for d in range(1, MAX_LINE_PX + 2):
        up = np.clip(rows - d, 0, h - 1)
        dn = np.clip(rows + d, 0, h - 1)
        above += (above == d - 1) & grid[up, cols] & (rows - d >= 0)
        below += (below == d - 1) & grid[dn, cols] & (rows + d < h)
    centre_on = grid[rows, cols]
    run = np.where(centre_on, above + below + 1, 0)
    thickness = int(np.median(run[run > 0])) if (run > 0).any() else 1
    # where a curve crosses, the run is thicker than the line; a shallow crossing merges with the line for a
    # few columns either side of that, so those are kept too (a few pixels of grid left beat a cut curve)
    crossing = (run > min(MAX_LINE_PX, thickness + 2)).astype(np.uint8)
    near = 2 * thickness + 3
    crossing = cv2.dilate(crossing[None], np.ones((1, 2 * near + 1), np.uint8))[0] > 0
    line_cols = (run > 0) & ~crossing  # (over the found columns in order: a gap in them is at most LINE_GAP_PX)
    region = np.zeros_like(grid)
    for d in range(-MAX_LINE_PX, MAX_LINE_PX + 1):
        rr = rows + d
        ok = line_cols & (rr >= 0) & (rr < h) & (rr >= rows - above) & (rr <= rows + below)
        region[rr[ok], cols[ok]] = True
    region &= grid
    return region.T if transposed else region


def brush_stamp(shape: tuple[int, ...], row: float, col: float, radius: float, prev: tuple[float, float] | None = None,
                margin: int = 0) -> tuple[tuple[int, int, int, int], np.ndarray] | None:
    """A brush disc at (row, col), or a thick segment from ``prev``: ``(rect, stamp)`` with ``rect`` (row0, row1,
    col0, col1) clipped to ``shape`` and widened by ``margin``; None when it lies outside."""
    h, w = shape[:2]
    rad = max(0.5, float(radius))
    pts = [(row, col)] if prev is None else [prev, (row, col)]
    r0 = max(0, int(min(p[0] for p in pts) - rad - 1) - margin)
    r1 = min(h, int(max(p[0] for p in pts) + rad + 2) + margin)
    c0 = max(0, int(min(p[1] for p in pts) - rad - 1) - margin)
    c1 = min(w, int(max(p[1] for p in pts) + rad + 2) + margin)
    if r0 >= r1 or c0 >= c1:
        return None
    stamp = np.zeros((r1 - r0, c1 - c0), np.uint8)
    a = (int(round(pts[0][1] - c0)), int(round(pts[0][0] - r0)))
    b = (int(round(pts[-1][1] - c0)), int(round(pts[-1][0] - r0)))
    if a == b:
        cv2.circle(stamp, a, max(0, int(round(rad - 0.5))), 1, -1)
    else:
        cv2.line(stamp, a, b, 1, max(1, int(round(2 * rad))), cv2.LINE_8)
    return (r0, r1, c0, c1), stamp > 0


def ink_in_disc(image: np.ndarray, row: float, col: float, radius: float,
                prev: tuple[float, float] | None = None) -> tuple[tuple[int, int, int, int], np.ndarray] | None:
    """The ink pixels under a brush disc (or a thick segment from ``prev``): ``(rect, selected)``.

    Ink is what is well darker than the paper around it (the 90th percentile of a window four radii wide):
    the threshold follows the local paper tone, so a faded log and a dark one need no setting. A loose drag
    with a wide brush along a curve labels its stroke and not the paper beside it.
    """
    found = brush_stamp(image.shape, row, col, radius, prev, margin=int(3 * max(0.5, float(radius))) + 6)
    if found is None:
        return None
    (r0, r1, c0, c1), stamp = found
    win = image[r0:r1, c0:c1]
    paper, darkest = np.percentile(win, [90, 1])
    if paper - darkest < 24:  # plain paper under the brush
        return None
    ink = win < paper - max(24.0, 0.35 * (paper - darkest))
    return (r0, r1, c0, c1), ink & stamp


def stroke_at(mask: np.ndarray, row: float, col: float) -> np.ndarray | None:
    """The labelled stroke under a click: the pixels of the clicked class connected to it, across gaps of
    up to ``2 × STROKE_BRIDGE_PX`` (the marks of a dotted or dashed curve are one stroke). None off a label.

    Curves of one class that touch or cross are one stroke here; following one of them through a crossing
    was tried (a depth-line tracker) and lost the synthetic dashed curves at their excursions across the
    track on half the logs, so for those the restyle brush (``brush_stamp`` on labelled pixels) is the tool.
    """
    hit = snap_to_label(mask, row, col)
    if hit is None:
        return None
    same = (mask == mask[hit]).astype(np.uint8)
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * STROKE_BRIDGE_PX + 1,) * 2)
    _, labels = cv2.connectedComponents(cv2.dilate(same, k), connectivity=8)
    return (labels == labels[hit]) & (same > 0)
