"""The proposal's sections: one per stretch of log body the page's lines give, each with its curve tracks and its
other columns across (:func:`lay_out`).

Apart from the reading of depths: it reads no number, only the page's lines and ink, and every later step
(the scale box, the depth columns, the fit) works within the sections it lays out.
"""

from __future__ import annotations

import numpy as np

from core.digitize.calibrate.proposal_records import ProposedSection
from core.digitize.calibrate.tracks import along_depth_lines, propose_tracks

HEADER_EDGE_IN = 1.0  # a stretch found in its own lines that starts this near the page's top edge is the header's
#   tables (a cement log's header printed sideways, its rules a grid): the archive's 49 labelled log bodies start
#   7.6 in and more below the top, every one under its header


def lay_out(canon: np.ndarray, darkness: np.ndarray, spans: list[tuple[tuple[int, int], bool]],
            picture_lines: list[tuple[float, float]], dpi: float | None, report) -> list[ProposedSection]:
    """One section per stretch of log body, each with its own tracks and other columns: the columns its framing
    lines part (``page/body_lines.py``), told apart by ``columns.py``; where no box stands beside a body to say
    which lines frame it, the runs of lines between separators (``tracks.py``). A stretch is a section where it
    holds a curve track: gridded (a header's ruled table, a tail's listing are boxes with a rule or two inside) or,
    between framing lines, an image; one found in its own lines only (``find_all_sections``'s later rounds, where
    the page's main layout did not outvote it) where it holds a gridded track and does not start at the page's top
    edge (:data:`HEADER_EDGE_IN`). A picture with no body found is one section, read whole."""
    from core.digitize.calibrate.columns import GRID_LINES, body_columns

    sections, fallback = [], []
    for k, ((a, b), later) in enumerate(spans or [((0, canon.shape[1]), False)]):
        if later and a < HEADER_EDGE_IN * (dpi or 100.0):
            report(k + 1, max(1, len(spans)))
            continue  # found in its own lines only, at the page's top edge: the header's ruled tables
        found, cols = body_columns(darkness, a, b, dpi) if spans else (None, [])
        if later and not any(c.kind == "track" and len(c.inner) >= GRID_LINES for c in cols):
            report(k + 1, max(1, len(spans)))
            continue  # found in its own lines only, and no gridded track in it: a header's or a tail's boxes
        sec = ProposedSection(a, b)
        if found is not None and found.framed and any(c.kind == "track" for c in cols):
            sec.tracks = [(c.lo, c.hi) for c in cols if c.kind == "track"]
            sec.columns = [{"kind": "other", "cols": [round(c.lo, 1), round(c.hi, 1)], "lines": len(c.inner),
                            "ink": round(c.ink, 3)} for c in cols if c.kind != "track"]
            sec.framed = holds = True
        else:
            lines = (along_depth_lines(canon[:, a:b], darkness[:, a:b]) if spans else picture_lines) or picture_lines
            tracks, separators = propose_tracks(canon[:, a:b], darkness[:, a:b], lines)
            sec.tracks = tracks
            sec.columns = [{"kind": "other", "cols": [round(x, 1), round(y, 1)]} for x, y in separators]
            holds = any(sum(lo < r < hi for r, _ in lines) >= GRID_LINES for lo, hi in tracks)
        (sections if holds else fallback).append(sec)
        report(k + 1, max(1, len(spans)))
    sections = sections or [s for s in fallback if s.tracks]
    if not sections:
        return [ProposedSection(0, canon.shape[1])]
    return sorted(sections, key=lambda s: s.start)
