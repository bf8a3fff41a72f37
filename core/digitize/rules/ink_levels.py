"""Which scale a curve reads where the print draws its backup scale in an ink of its own.

A colour print may draw a curve in one ink on its main scale and in another on its backup scale (the North
Dakota open-hole log iqa_33-023-01146-0006: the GR in navy on 1–300 API, in red on 300–599). There the ink
under the path names the scale, column by column, and the edges need not show the crossing: on that log both
crossings of a ten-foot excursion run along heavy depth lines, where the wrap rules of ``core/digitize/trace/wraps.py``
saw neither, and the red stretch was written on the main scale, 300 API low, at confidence 1.

A column whose ink is neither (a crossing, a grid line over the stroke, a faded stretch) takes the scale of the
columns either side where they agree; where they do not, the crossing lies between them and the columns up to
it are marked uncertain (``Trace.level_unsure``: the confidence is capped and a warning names the range). Where
neither ink is under the path anywhere, the wrap count decided from the edges stands.
"""

from __future__ import annotations

import numpy as np

from core.digitize.rules.passes import doubt
from core.digitize.trace.params import Trace
from core.io.calibration import CurveSpec

INK_SEEN = 0.3  # colour evidence (core/io/colour.py) at which an ink is under the path ...
INK_LEADS = 1.5  # ... and leads the other ink by this factor
PEN_PX = 2  # rows either side of the path the ink is looked for in (a pen's half width and the refinement)


def ink_under_path(position: np.ndarray, main: np.ndarray, backup: np.ndarray, row_offset: int) -> np.ndarray:
    """Per column: 0 where the main scale's ink is under the path, 1 where the backup's is, -1 where neither
    clearly is (no position, no ink, or both alike). ``main``, ``backup``: the two inks' evidence over the
    curve's band of rows, whose first row is ``row_offset``."""
    rows, cols = main.shape
    out = np.full(position.size, -1, np.int8)
    ok = np.flatnonzero(np.isfinite(position))
    if ok.size == 0:
        return out
    centre = np.rint(position[ok]).astype(np.int64) - row_offset
    near = np.clip(centre[None, :] + np.arange(-PEN_PX, PEN_PX + 1)[:, None], 0, rows - 1)
    m = main[near, ok[None, :]].max(axis=0)
    b = backup[near, ok[None, :]].max(axis=0)
    out[ok[(m >= INK_SEEN) & (m >= INK_LEADS * b)]] = 0
    out[ok[(b >= INK_SEEN) & (b >= INK_LEADS * m)]] = 1
    return out


def levels_by_ink(trace: Trace, spec: CurveSpec, main: np.ndarray, backup: np.ndarray, row_offset: int,
                  max_gap_px: int) -> None:
    """Set ``trace``'s scale per column from the ink under its path (in place): its wrap count (0 on the main
    scale, +1 on a "high" backup, −1 on a "low" one), and ``level_unsure`` with the confidence capped where the
    ink does not say. A column more than ``max_gap_px`` from any column the ink names keeps the edges' count."""
    said = ink_under_path(trace.position, main, backup, row_offset)
    named = np.flatnonzero(said >= 0)
    if named.size == 0:
        return
    backup_level = 1 if spec.backup == "high" else -1
    cols = np.arange(said.size)
    # the nearest column the ink names before and after each column (−1 / size where there is none)
    before = np.maximum.accumulate(np.where(said >= 0, cols, -1))
    after = np.minimum.accumulate(np.where(said >= 0, cols, said.size)[::-1])[::-1]
    has_b, has_a = before >= 0, after < said.size
    lvl_b = np.where(has_b, said[np.clip(before, 0, said.size - 1)], -1)
    lvl_a = np.where(has_a, said[np.clip(after, 0, said.size - 1)], -1)
    dist_b = np.where(has_b, cols - before, np.iinfo(np.int64).max)
    dist_a = np.where(has_a, after - cols, np.iinfo(np.int64).max)
    nearest = np.where(dist_b <= dist_a, lvl_b, lvl_a)
    reach = np.minimum(dist_b, dist_a) <= max_gap_px
    # between two columns the ink names differently the crossing is somewhere: which side a column is on is a guess
    unsure = has_b & has_a & (lvl_b != lvl_a) & (said < 0)
    level = np.where(nearest == 1, backup_level, 0)
    trace.wraps = np.where(reach, level, trace.wraps).astype(trace.wraps.dtype)
    unsure &= reach
    old = trace.level_unsure if trace.level_unsure is not None else np.zeros(said.size, bool)
    trace.level_unsure = np.where(reach, unsure, old)
    doubt(trace, trace.level_unsure, "ink_level")
