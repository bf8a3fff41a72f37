"""How many gestures take a pre-filled mask to a clean one, with the plain tools and with the label-faster ones.

    python tools/label_effort.py [--family uniform] [--count 3] [--classical] [--width 1600] [--height 480]

For each synthetic log of a family the mask is pre-filled as the app does
(the bundled model, its grid lines cleaned; ``--classical``: the classical
tracer's mask) and compared with the true mask. Every error is one piece: its
pixels joined across the gaps of a dashed or dotted stroke, what a user sees
as one thing to correct (pieces under 12 px ignored as the pre-fill's fringe):

- a piece painted where no curve is (a grid line, a word, a stain);
- a piece of curve left unpainted;
- a piece of curve painted in the wrong class.

*Before* (brush, eraser, fill): each piece is one drag per screenful of its
length (``SCREEN_PX`` at the 1:1 zoom a 3-px line needs), the ideal drag that
covers it exactly. *After*: the label-faster tools are run on the mask, as the
app runs them: the line eraser clicked once on each false piece where
it takes the piece (else an eraser drag as before), the restyle tool clicked
once on each wrong-class piece where the click's stroke is that piece's curve
only, else restyle-brush drags: one per screenful of a run of wrong-class
pieces within ``RESTYLE_REACH_PX`` of each other (the brush changes labelled
pixels only, so one loose drag restyles every dash of a curve under it, where
the plain brush would paint the gaps between them), and the ink brush dragged
along each missed piece (one drag per screenful: no fewer, looser). The mask the
*after* gestures leave is scored against the truth, so a click counted is a
click that worked.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.labelling.label_tools import LINE_GAP_PX, STROKE_BRIDGE_PX, straight_line_at, stroke_at  # noqa: E402
from core.labelling.mask_edit import MaskEditor  # noqa: E402
from core.labelling.prefill import prefill_mask  # noqa: E402
from core.synth import generate_log  # noqa: E402

SCREEN_PX = 800  # one drag covers at most this much of a stroke at a zoom where a 3-px line can be hit
MIN_PIECE_PX = 12
RESTYLE_REACH_PX = 24  # wrong-class pieces this close lie under one loose drag of the restyle brush
EFFORT_SEED = 626262  # no training stream's seed


def prefill(image: np.ndarray, axis: str, classical: bool) -> np.ndarray:
    """The app's pre-fill on a scan: the bundled model's, or the classical tracer's."""
    from core.model.bundled import BUNDLED_MODEL
    from core.model.model_io import load_model

    return prefill_mask(image, axis, None if classical else load_model(BUNDLED_MODEL)[0])


def pieces(wrong: np.ndarray, along_line: bool = False, bridge_px: int = STROKE_BRIDGE_PX) -> list[np.ndarray]:
    """The stretches to fix: error pixels joined across the gaps of a dashed or dotted stroke (what a user sees
    as one thing to correct), those under ``MIN_PIECE_PX`` left as the pre-fill's fringe; ``along_line``: also
    the pieces of one line across gaps of up to ``LINE_GAP_PX`` along it (one eraser drag goes over them all)."""
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * bridge_px + 1,) * 2)
    joined = cv2.dilate(wrong.astype(np.uint8), k)
    if along_line:
        for shape in ((1, LINE_GAP_PX + 1), (LINE_GAP_PX + 1, 1)):
            joined = cv2.morphologyEx(joined, cv2.MORPH_CLOSE, np.ones(shape, np.uint8))
    n, labels = cv2.connectedComponents(joined, connectivity=8)
    out = [(labels == i) & wrong for i in range(1, n)]
    return [p for p in out if p.sum() >= MIN_PIECE_PX]


def drags(piece: np.ndarray) -> int:
    rows, cols = np.nonzero(piece)
    return math.ceil(max(np.ptp(rows) + 1, np.ptp(cols) + 1) / SCREEN_PX)


def score(mask: np.ndarray, truth: np.ndarray) -> float:
    """Share of pixels, curve or paper, where the mask says what the truth says, within 1 px (a stroke's edge)."""
    near = {k: cv2.dilate((truth == k).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0 for k in (1, 2, 3)}
    ok_curve = np.zeros(mask.shape, bool)
    for k in (1, 2, 3):
        ok_curve |= (mask == k) & near[k]
    ok_paper = (mask == 0) & ~cv2.erode((truth > 0).astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    considered = (mask > 0) | (truth > 0)
    return float((ok_curve | ok_paper)[considered].mean())


def effort(log, classical: bool) -> dict:
    truth = log.mask
    mask = prefill(log.image, log.calibration.depth_axis, classical)
    out = {"log": log.name, "start": score(mask, truth)}
    # within a pixel of a stroke is on it (the pre-fill's pen is a pixel thinner or thicker than the truth's)
    near_truth, near_mask = (cv2.dilate((m > 0).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0 for m in (truth, mask))
    false = pieces((mask > 0) & ~near_truth, along_line=True)
    missed = pieces((truth > 0) & ~near_mask)
    wrong = pieces((mask > 0) & (truth > 0) & (mask != truth))
    out["before"] = sum(drags(p) for p in false + missed + wrong)
    ed = MaskEditor(mask)
    after = 0
    for p in false:
        rows, cols = np.nonzero(p & (ed.mask > 0))
        if rows.size == 0:
            continue  # went with an earlier line
        k = rows.size // 2
        line = straight_line_at(ed.mask, rows[k], cols[k])
        if line is not None and (line & p).sum() >= 0.6 * p.sum() and not (line & (truth > 0)).sum() > 0.2 * line.sum():
            ed.set_region(line, 0)  # what the line eraser's click does (MaskEditor.erase_line)
            after += 1
        else:
            ed.set_region(p, 0)  # the eraser drags
            after += drags(p)
    # wrong class: one restyle click where the clicked stroke is that class's curve alone; the rest along one
    # curve go with restyle-brush drags, one per screenful of a run of them (the brush changes labelled pixels
    # only, so a loose drag over the dashes of a curve restyles them all and paints no gap between them)
    left = []
    for p in wrong:
        rows, cols = np.nonzero(p)
        k = rows.size // 2
        klass = int(truth[rows[k], cols[k]])
        stroke = stroke_at(ed.mask, rows[k], cols[k])
        if stroke is not None and (truth[stroke] == klass).mean() > 0.9:
            ed.set_region(stroke, klass)  # what the restyle click does (MaskEditor.restyle)
            after += 1
        else:
            left.append(p)
    if left:
        runs = pieces(np.any(left, axis=0), bridge_px=RESTYLE_REACH_PX)
        for run in runs:
            after += drags(run)
        for p in left:
            ed.set_region(p, int(np.bincount(truth[p]).argmax()))
    for p in missed:
        rows, cols = np.nonzero(p)
        order = np.argsort(rows if np.ptp(rows) >= np.ptp(cols) else cols)
        ed.begin_stroke()
        prev = None
        for i in order[:: max(1, order.size // 200)]:  # the drag, along the piece
            ed.ink_dab(log.image, rows[i], cols[i], 3, int(truth[rows[i], cols[i]]), prev)
            prev = (rows[i], cols[i])
        ed.end_stroke()
        after += drags(p)
    out.update(after=after, end=score(ed.mask, truth), false=len(false), missed=len(missed), wrong=len(wrong))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", default="uniform")
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--classical", action="store_true", help="pre-fill from the classical tracer, not the model")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=480)
    args = ap.parse_args()
    rows = []
    for i in range(args.count):
        log = generate_log(EFFORT_SEED + i, args.width, args.height, ("x", "y")[i % 2], style=args.family,
                           name=f"{args.family}_{i:02d}")
        r = effort(log, args.classical)
        rows.append(r)
        print(f"{r['log']}: pieces false {r['false']}, missed {r['missed']}, wrong class {r['wrong']}; gestures "
              f"{r['before']} before, {r['after']} after; mask right {r['start']:.3f} -> {r['end']:.3f}")
    print(f"total gestures: {sum(r['before'] for r in rows)} before, {sum(r['after'] for r in rows)} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
