"""The value written on a curve's stroke in a column: the path's row refined to the centre of the run of rows its
stroke inks there (the whole run on a steep stroke, across the breaks a network leaves in it), and on a stroke moving
one way, the quadratic over a few columns of it (issue #60's seventh and fifteenth rounds, docs/accuracy.md).

All maps are canonical: rows across the tracks, columns along depth.
"""

from __future__ import annotations

import numpy as np

from core.digitize.trace.params import Trace, TraceParams

STROKE_CAP_SHARE = 0.1  # a run of inked rows through the path is centred up to this share of the track either side
# a break in a steep stroke's ink across no longer than this share of the path's move to a neighbouring column is
# still the stroke (``steep_gap``): 0.5, 1 and 1.5 of the smaller move, and 1 of the larger, measured on KGS shifted
# and on every held-out set (docs/accuracy.md, the seventh round); the larger move, whole, kept
STROKE_GAP_SHARE = 1.0


def stroke_cap(refine_radius: int, rows: int) -> int:
    """How far (rows) either side of the path a steep stroke's run is followed: :data:`STROKE_CAP_SHARE` of the
    track's ``rows``, never less than the centroid's own ``refine_radius``."""
    return max(refine_radius, int(STROKE_CAP_SHARE * rows))


def steep_gap(path: np.ndarray, wrap_step: np.ndarray | None = None) -> np.ndarray:
    """Per column, the longest break in the ink across (rows) that :func:`stroke_runs` bridges: :data:`STROKE_GAP_SHARE`
    of the path's larger move to a neighbouring column (a wrap's move, ``wrap_step`` not 0, is none). A steep stroke
    inks the rows it crosses within the one column, and a network reads such a stroke in pieces (KGS's sonic: runs
    of 5-10 rows, 8-15 apart, where the curve moves 20-40 rows a column), so the path's own piece is one of several
    and which one moves with the scan's phase (a pixel's shift moved DT's value by 2 % of its scale there); on a
    flat stroke (a move of a row or two) a break of a row or two is bridged, no more."""
    p = np.asarray(path, np.float64)
    move = np.full(p.size, np.nan)
    if p.size > 1:
        d = np.abs(np.diff(p))
        if wrap_step is not None:  # a wrap's move crosses the paper from one edge of the track to the other
            d = np.where(np.asarray(wrap_step)[1:] != 0, np.nan, d)
        move[1:] = np.fmax(move[1:], d)
        move[:-1] = np.fmax(move[:-1], d)
    move = np.where(np.isfinite(move), move, 0.0)
    return np.floor(STROKE_GAP_SHARE * move).astype(np.int64)


def stroke_runs(inked: np.ndarray, path: np.ndarray, cap: int, gap: np.ndarray | None = None,
                columns: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the first and last row of the inked rows (``inked``: rows × columns) that hold ``path`` (a row per
    column), followed at most ``cap`` rows either side, across breaks of at most ``gap`` rows (per column; none by
    default). ``columns``: the column of ``inked`` each of ``path``'s rows lies in (default: one a column). A column
    whose path row is not inked keeps the path's row at both ends."""
    rows = inked.shape[0]
    col = np.arange(inked.shape[1]) if columns is None else np.asarray(columns)
    cols = col.size
    on = inked[np.clip(path, 0, rows - 1), col] & (path >= 0) & (path < rows)
    allowed = np.zeros(cols, np.int64) if gap is None else np.asarray(gap, np.int64)
    ends = []
    for direction in (-1, 1):
        edge = path.copy()
        live = np.flatnonzero(on)  # the columns still followed, and their rows since the last inked one
        broken = np.zeros(live.size, np.int64)
        for k in range(1, cap + 1):
            if live.size == 0:
                break
            nxt = path[live] + direction * k
            inside = (nxt >= 0) & (nxt < rows)
            live, broken, nxt = live[inside], broken[inside], nxt[inside]
            ink = inked[nxt, col[live]]
            broken = np.where(ink, 0, broken + 1)
            keep = broken <= allowed[live]
            live, broken, nxt, ink = live[keep], broken[keep], nxt[keep], ink[keep]
            edge[live[ink]] = nxt[ink]
        ends.append(edge)
    return ends[0], ends[1]


SMOOTH_COLS = 3  # a value written is the quadratic fitted over the column and this many either side (``smoothed_rows``)
SMOOTH_MOVE_ROWS = 1.0  # ... where the stroke moves one way through the column, at least this many rows a column
# Savitzky-Golay: the weights of a quadratic's least-squares value at the middle of 2 * SMOOTH_COLS + 1 columns
_SMOOTH_WEIGHTS = np.array([-2.0, 3.0, 6.0, 7.0, 6.0, 3.0, -2.0]) / 21.0


def one_stroke(first: np.ndarray, last: np.ndarray, link: np.ndarray, gap: np.ndarray | None = None) -> np.ndarray:
    """(columns − 1) whether a column and the next are one reading of one stroke: ``link`` (both seen, no wrap
    between) and their runs (``first``..``last``, :func:`stroke_runs`; NaN: none) touching, across the breaks they
    were followed over (``gap``, per column)."""
    first = np.asarray(first, np.float64)
    last = np.asarray(last, np.float64)
    n = first.size
    g = np.zeros(n) if gap is None else np.asarray(gap, np.float64)
    reach = np.fmax(g[1:], g[:-1]) + 1
    with np.errstate(invalid="ignore"):
        touch = (first[1:] <= last[:-1] + reach) & (first[:-1] <= last[1:] + reach)
    return np.asarray(link, bool) & touch


def smoothed_rows(centre: np.ndarray, joined: np.ndarray) -> np.ndarray:
    """Each column's row (``centre``) as the quadratic fitted over it and :data:`SMOOTH_COLS` columns either side
    gives it, where those seven columns are one reading of one stroke (``joined``, :func:`one_stroke`) and the stroke
    moves one way through the column, :data:`SMOOTH_MOVE_ROWS` rows a column or more between its neighbours; the
    rest as they are: a turn keeps its own reading (a quadratic over seven columns rounds a sharp spike's tip:
    KGS's GR at 596 ft, 5.7 -> 32 API).

    A stroke that moves a row or more a column inks a run of rows along it in each column, and the column's own
    reading is the centre of the piece of that run the network inked, often not where the curve crosses the column: of the columns written at 0.9 or more
    whose value lies on the pen's own stroke more than 5 % of the scale from the truth on strokes moving 0.04 of the
    track a column or more, the truth lies outside the inked run the value was centred on at 62-89 % (the held-out
    families' first 12 logs and the fit's 80; docs/accuracy.md, issue #60's fifteenth round). A pen's curve is smooth
    over a few columns, so the columns either side hold it too: a quadratic keeps a stroke's bend (a straight line
    through the neighbours, measured too, flattened the turns) and averages away the piece's offset. Seven columns
    and a row were chosen on the fit's logs and the held-out first 12 (five, nine and eleven columns; half a row,
    two rows and none; turns smoothed too, measured): a flatter stroke's run is its pen's width about the curve."""
    c = np.asarray(centre, np.float64)
    n = c.size
    out = c.copy()
    r = SMOOTH_COLS
    if n < 2 * r + 1:
        return out
    ok = np.isfinite(c)
    j = np.asarray(joined, bool)
    whole = np.ones(n - 2 * r, bool)  # columns r .. n - r - 1 whose 2r links and 2r + 1 readings all hold
    for d in range(2 * r):
        whole &= j[d : d + n - 2 * r]
    for d in range(2 * r + 1):
        whole &= ok[d : d + n - 2 * r]
    k = np.flatnonzero(whole) + r
    before, after = c[k] - c[k - 1], c[k + 1] - c[k]
    one_way = (before * after > 0) & (np.abs(c[k + 1] - c[k - 1]) >= 2.0 * SMOOTH_MOVE_ROWS)
    k = k[one_way]
    out[k] = sum(_SMOOTH_WEIGHTS[d] * c[k + d - r] for d in range(2 * r + 1))
    return out


def written_smoothed(trace: Trace) -> None:
    """The trace's values smoothed over its strokes (``Trace.smoothed``, :func:`smoothed_rows`) where its position is
    still the one read: after every pass and the calibrated confidence, which were chosen and fitted on the column's
    own reading (their signals read from the smoothed values, `random` went 1.41 → 1.52 % confidently wrong). A
    position a later pass moved, filled or took away keeps what the pass gave it."""
    if trace.smoothed is None:
        return
    read, smoothed = trace.smoothed
    with np.errstate(invalid="ignore"):
        same = (trace.position == read) & np.isfinite(smoothed)
    trace.position = np.where(same, smoothed, trace.position)
    trace.smoothed = None


def weighted_centre(ev: np.ndarray, lo: np.ndarray, hi: np.ndarray, fallback: np.ndarray,
                    columns: np.ndarray | None = None) -> np.ndarray:
    """Per column, the evidence-weighted mean row of rows ``lo``..``hi`` of ``ev``; ``fallback`` where they hold none.
    ``columns``: the column of ``ev`` each bound lies in (default: one a column)."""
    rows = ev.shape[0]
    col = np.arange(ev.shape[1]) if columns is None else np.asarray(columns)
    width = int((hi - lo).max()) + 1 if col.size else 1
    idx = lo[None, :] + np.arange(width)[:, None]
    valid = (idx >= 0) & (idx < rows) & (idx <= hi[None, :])
    idxc = np.clip(idx, 0, rows - 1)
    w = np.where(valid, ev[idxc, col[None, :]], 0.0)
    wsum = w.sum(0)
    return np.where(wsum > 1e-6, (w * idxc).sum(0) / np.maximum(wsum, 1e-6), fallback)


def refined_rows(ev: np.ndarray, path: np.ndarray, params: TraceParams, inked: np.ndarray, gap: np.ndarray | None = None
             ) -> np.ndarray:
    """Sub-pixel rows of the path: the probability-weighted centroid around it (``refine_radius`` rows either side),
    widened to the whole run of rows the stroke inks in the column where the path crosses a steep stroke
    (``params.refine_runs``), across breaks of at most ``gap`` rows (per column, :func:`steep_gap`; none by default):
    a pen crossing many rows within one column is there at the column's middle, at the run's centre; the path's own
    row on it is any (where the Viterbi entered it), and moved by a pixel's shift of the scan or a change in the
    maps' last bits."""
    rows, cols = ev.shape
    r = params.refine_radius
    lo, hi = path - r, path + r
    if params.refine_runs:
        first, last = stroke_runs(inked, path, stroke_cap(r, rows), gap)
        lo, hi = np.minimum(lo, first), np.maximum(hi, last)
    return weighted_centre(ev, lo, hi, path)


def bridged_rows(ev: np.ndarray, path: np.ndarray, params: TraceParams, inked: np.ndarray, gap: np.ndarray,
             refined: np.ndarray) -> np.ndarray:
    """:func:`refined_rows` with the stroke's breaks of at most ``gap`` rows bridged, from its value without them
    (``refined``): only the columns whose run the breaks widen are centred again."""
    rows = ev.shape[0]
    steep = np.flatnonzero(gap > 0)
    if steep.size == 0:
        return refined
    cap = stroke_cap(params.refine_radius, rows)
    p = path[steep]
    first0, last0 = stroke_runs(inked, p, cap, columns=steep)
    first, last = stroke_runs(inked, p, cap, gap[steep], columns=steep)
    wider = (first < first0) | (last > last0)
    c, p, first, last = steep[wider], p[wider], first[wider], last[wider]
    r = params.refine_radius
    out = refined.copy()
    out[c] = weighted_centre(ev, np.minimum(p - r, first), np.maximum(p + r, last), p, columns=c)
    return out
