"""Where on a scan the log is: the stretches along depth where its tracks' borders run.

A scanned well log is more than a log: a header (boxes, remarks, scales), the log body, a tail (tables of
log variables, tool calibrations) and often a repeat pass with a header and depth numbers of its own. The
body is where the track grid runs, so a section is a long stretch of depth along which most of the
proposed tracks' border lines are drawn; a header or a table between two stretches ends one and starts the
next. All positions are canonical: rows across, columns along depth.
"""

from __future__ import annotations

import numpy as np

from .runs import true_runs

BORDER_SHARE = 0.6  # a depth column is log body where this share of the track borders is drawn
SMOOTH_PX = 61  # borders broken by a printed number or a scan's speck still run: a running mean this long
BRIDGE_PX = 120  # gaps this short (a depth line's label, a splice mark) do not end a section
MIN_SECTION_PX = 600  # shorter stretches of border lines are boxes of a header or a table


def border_rows(tracks: list[tuple[float, float]]) -> list[float]:
    """The distinct border lines of the tracks (two tracks that meet share one)."""
    out: list[float] = []
    for lo, hi in tracks:
        for r in (lo, hi):
            if not any(abs(r - o) <= 2.0 for o in out):
                out.append(r)
    return sorted(out)


def border_presence(dark: np.ndarray, tracks: list[tuple[float, float]]) -> np.ndarray:
    """Per depth column: the share of the tracks' border lines drawn there (a line is drawn where any of the
    three rows about its centre is dark), smoothed along depth."""
    rows = dark.shape[0]
    borders = border_rows(tracks)
    if not borders:
        return np.zeros(dark.shape[1], np.float32)
    drawn = np.zeros(dark.shape[1], np.float32)
    for r in borders:
        c = int(round(r))
        drawn += dark[max(0, c - 1) : min(rows, c + 2)].any(axis=0)
    share = drawn / len(borders)
    k = np.ones(SMOOTH_PX, np.float32) / SMOOTH_PX
    return np.convolve(share, k, mode="same")


def find_sections(dark: np.ndarray, tracks: list[tuple[float, float]]) -> list[tuple[int, int]]:
    """[start, stop) columns of each stretch of log body, in order along depth."""
    body = border_presence(dark, tracks) >= BORDER_SHARE
    a, b = true_runs(body)
    spans: list[list[int]] = []
    for s, e in zip(a.tolist(), b.tolist()):
        if spans and s - spans[-1][1] <= BRIDGE_PX:
            spans[-1][1] = e
        else:
            spans.append([s, e])
    return [(s, e) for s, e in spans if e - s >= MIN_SECTION_PX]
