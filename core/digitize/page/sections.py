"""Where on a scan the log is: the stretches along depth where its track grid runs.

A scanned well log is more than a log: a header (boxes, remarks, scales), the log body, a tail (tables of
log variables, tool calibrations) and often a repeat pass with a header and depth numbers of its own. The
body is where the track grid runs, so a section is a long stretch of depth along which most of the lines
along depth (track borders and the tracks' own grid lines) are drawn. A header's boxes, the scale boxes
above a log and a tail's tables share a few of those lines (a frame, a column rule) but not the grid: on
KGS the track borders alone took in the 33-ft box of curve scales above the log, the grid lines did not.
All positions are canonical: rows across, columns along depth.
"""

from __future__ import annotations

import numpy as np

from core.common.runs import true_runs

BORDER_SHARE = 0.6  # a depth column is log body where this share of the lines along depth is drawn
SMOOTH_PX = 61  # borders broken by a printed number or a scan's speck still run: a running mean this long
BRIDGE_PX = 120  # gaps this short (a depth line's label, a splice mark) do not end a section
CLEARLY_NOT_LOG = 0.3  # a picture read whole is cut to its body only where the share falls this low beyond it
MIN_SECTION_PX = 600  # shorter stretches of border lines are boxes of a header or a table


def _distinct(lines: list[float]) -> list[float]:
    out: list[float] = []
    for r in sorted(lines):
        if not any(abs(r - o) <= 2.0 for o in out):
            out.append(r)
    return out


def border_presence(darkness: np.ndarray, lines: list[float]) -> np.ndarray:
    """Per depth column: the share of the given lines along depth drawn there, smoothed along depth. A line is
    drawn where the darkest of the three rows about its centre reaches half its own usual darkness (its upper
    quartile over the scan), so a faint grey grid counts as well as a black border. ``darkness``: in [0, 1], or
    uint8 in [0, 255]."""
    rows = darkness.shape[0]
    scale = 255.0 if darkness.dtype == np.uint8 else 1.0  # the pipeline keeps its darkness a byte a pixel
    borders = _distinct(lines)
    if not borders:
        return np.zeros(darkness.shape[1], np.float32)
    drawn = np.zeros(darkness.shape[1], np.float32)
    step = max(1, darkness.shape[1] // 20000)
    for r in borders:
        c = int(round(r))
        v = darkness[max(0, c - 1) : min(rows, c + 2)].max(axis=0)
        usual = float(np.percentile(v[::step], 75))
        drawn += v >= max(0.05 * scale, 0.5 * usual)
    share = drawn / len(borders)
    k = np.ones(SMOOTH_PX, np.float32) / SMOOTH_PX
    return np.convolve(share, k, mode="same")


def find_sections(darkness: np.ndarray, lines: list[float]) -> list[tuple[int, int]]:
    """[start, stop) columns of each stretch of log body, in order along depth; ``lines``: the rows of the lines
    along depth the grid reading found (``track_finder.along_depth_lines``)."""
    return _sections_of(border_presence(darkness, lines))


def find_all_sections(darkness: np.ndarray, lines: list[float], lines_of, rounds: int = 3
                      ) -> list[tuple[tuple[int, int], bool]]:
    """:func:`find_sections`, then again in each stretch it left long enough to hold a section, with the lines of
    that stretch alone (``lines_of(a, b)``: the rows of the lines along depth of columns [a, b)): a page with
    several log bodies laid out differently (a cement-evaluation print's 1:600 image log, its 1:12,000 summary and
    its 1:240 correlation log) holds most of its length in one layout, whose lines outvote the others'. Returns
    ([start, stop), found in a later round) per stretch, in order along depth: a later round's may be a header's
    ruled table, for the caller to check."""
    found = [(span, False) for span in find_sections(darkness, lines)]
    n = darkness.shape[1]
    for _ in range(rounds - 1):
        edges = [0] + [e for span, _ in found for e in span] + [n]
        more = []
        for a, b in zip(edges[::2], edges[1::2]):
            if b - a < MIN_SECTION_PX:
                continue
            local = lines_of(a, b)
            if local:
                more += [((a + x, a + y), True) for x, y in find_sections(darkness[:, a:b], local)]
        if not more:
            break
        found = sorted(found + more)
    return _rejoined(found, lines_of)


JOIN_LINES = 4  # two stretches that meet are one body where each holds this many lines along depth ...
JOIN_SHARE = 0.72  # ... and this share of each one's lines lies within JOIN_PX of one of the other's: the pieces
#   of one 1-bit main log 0.91-0.96 (read JOIN_READ_PX from where they meet), a first round's stretch and a later
#   one of another layout that meet 0.06-0.57 (the develop half and its 80 variants); the log-scale middle
JOIN_PX = 3.0
JOIN_READ_PX = 4 * MIN_SECTION_PX  # each stretch's lines are read this far from where they meet: long enough that
#   a border a 1-bit cut broke in places is read (02311-0001's last piece: 19 of its 22 lines over 600 columns)


def _rejoined(found: list[tuple[tuple[int, int], bool]], lines_of) -> list[tuple[tuple[int, int], bool]]:
    """``found`` with each run of stretches that meet (within :data:`BRIDGE_PX`) and carry the same lines where
    they meet joined into one. A page whose longest layout is not its main log's (a 1-bit cut wiped out a main
    log's pale grid, its 1:12,000 summary's lines kept) outvotes the main log's lines only in places: the first
    round finds short pieces of it, the later rounds the rest between them, and one body came out as six, none
    half of it (the develop half's 02311-0001 cut to 1 bit). Only a first round's stretch is joined so: two that
    the later rounds found are each checked for a header's or a tail's ruled table (a tail's calibration tables,
    ruled alike, share 0.92 of their lines), and a header's two-line tables hold too few lines to say."""
    if len(found) < 2:
        return found
    out = [found[0]]
    for (a, b), later in found[1:]:
        (pa, pb), plater = out[-1]
        if not (plater and later) and a - pb <= BRIDGE_PX and _same_lines(lines_of, (pa, pb), (a, b)):
            out[-1] = ((pa, b), plater and later)
        else:
            out.append(((a, b), later))
    return out


def _same_lines(lines_of, first: tuple[int, int], second: tuple[int, int]) -> bool:
    """Whether two stretches that meet carry the same lines along depth where they meet (each one's last or
    first :data:`JOIN_READ_PX` columns)."""
    near = lines_of(max(first[0], first[1] - JOIN_READ_PX), first[1])
    far = lines_of(second[0], min(second[1], second[0] + JOIN_READ_PX))
    if len(near) < JOIN_LINES or len(far) < JOIN_LINES:
        return False

    def share(x: list[float], y: list[float]) -> float:
        ys = np.asarray(y, np.float64)
        return float(np.mean([np.abs(ys - v).min() <= JOIN_PX for v in x]))

    return min(share(near, far), share(far, near)) >= JOIN_SHARE


def _sections_of(presence: np.ndarray) -> list[tuple[int, int]]:
    """:func:`find_sections` from the share of lines drawn per column (``border_presence``)."""
    a, b = true_runs(presence >= BORDER_SHARE)
    spans: list[list[int]] = []
    for s, e in zip(a.tolist(), b.tolist()):
        if spans and s - spans[-1][1] <= BRIDGE_PX:
            spans[-1][1] = e
        else:
            spans.append([s, e])
    return [(s, e) for s, e in spans if e - s >= MIN_SECTION_PX]


def picked_body(darkness: np.ndarray, lines: list[float], picks: list[float]) -> tuple[int, int] | None:
    """[start, stop) columns of the stretch of log body that holds the depth picks (the middle of their range), on
    a picture read whole (a calibration without sections); None where the whole picture is body, no body is found
    or none holds the picks. Only that stretch has the picks' depths: above it lie the header and the scale boxes
    (ruled boxes, printed scale lines: no log), below it a tail's tables or a repeat pass at depths of its own. On
    the KGS sonic scan read whole, the same-style curves named in the header put DT on the tension line over the
    whole log, and the repeat pass was written at 1,140-1,755 ft, depths it does not have. A stretch within
    ``SMOOTH_PX`` of either end of the picture reaches that end (the running mean thins the borders' share there).
    The lines come from the grid reading, the lines of most windows: where a header fills half of a picture its
    ruled boxes are taken for lines, the body is not found, and the picture is read whole as before (KGS's first
    4,100 px)."""
    n = darkness.shape[1]
    presence = border_presence(darkness, lines)
    spans = [(0 if a <= SMOOTH_PX else a, n if b >= n - SMOOTH_PX else b) for a, b in _sections_of(presence)]
    mid = (min(picks) + max(picks)) / 2.0 if picks else -1.0  # picks often sit on the body's first and last lines
    holding = [(a, b) for a, b in spans if a <= mid < b]
    if not holding:
        return None
    a, b = holding[0]
    # a header, a tail and the paper between two passes lack most of the log's lines (KGS: a fifth of them in its
    # header); a log whose share only sags under the bar, where a curve found as a line lies elsewhere, goes on
    # (a synthetic 1-bit log lost its last 347 columns, 22 %, every value there right)
    inner = presence[SMOOTH_PX : max(SMOOTH_PX, n - SMOOTH_PX)]  # the running mean's ends thin
    if a > 0 and inner[: max(0, a - SMOOTH_PX)].min(initial=1.0) >= CLEARLY_NOT_LOG:
        a = 0
    if b < n and inner[max(0, b - SMOOTH_PX) :].min(initial=1.0) >= CLEARLY_NOT_LOG:
        b = n
    return None if (a, b) == (0, n) else (a, b)


def picture_body(ink: np.ndarray | None, found, calib) -> tuple[int, int] | None:
    """:func:`picked_body` of a picture being digitised, from its darkness (a byte a pixel) and its grid's lines
    (``core/digitize/page/grid.py``); None where neither was read (a user's mask is traced as painted)."""
    if ink is None or found is None:
        return None
    centres = [float(g.mean()) for g in found.line_groups(0.5)]
    return picked_body(ink, centres, [p for p, _ in calib.depth_picks])


def null_outside_body(traces: list, body: tuple[int, int], calib) -> str:
    """No reading outside the log body (traces in place): a header's boxes, a tail's tables and a repeat pass at
    depths it lacks. Returns the warning that says so."""
    for tr in traces:
        for part in (slice(0, body[0]), slice(body[1], None)):
            tr.position[part] = np.nan
            tr.observed[part] = False
            tr.confidence[part] = 0.0
            if tr.level_unsure is not None:
                tr.level_unsure[part] = False  # no scale to be unsure of where nothing is read
    a, b = calib.depth_at(np.array(body, float))
    return (f"the log body with the depth picks runs over {min(a, b):.1f}–{max(a, b):.1f} {calib.depth_unit} of "
            "this picture; the rest (a header, a tail, another pass) is no part of that log and is written NULL: "
            "give the scan its sections (welltrace calibrate --propose) to read every pass at its own depths")
