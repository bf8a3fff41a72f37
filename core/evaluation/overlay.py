"""The picture of one evaluated log: every curve's truth and trace drawn over the faded print, so the worst
curves of a family can be looked at, not only counted.

``eval-styles --overlays DIR`` writes one for the log holding each family's worst curve, its worst log-scale
curve and its worst dotted curve. Depth runs down the picture; the truth is drawn as a thin black line, the
trace in the curve's colour over it, and the depths the trace wrote NULL where the truth has a value as red
ticks at the picture's left edge, a row per curve.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from core.common.runs import true_runs
from core.digitize.output.qc_picture import NULL_COLOUR, hex_rgb, write_png
from core.model.model_io import CLASS_NAMES

FADE = 0.35  # the print's ink is drawn at this share of its darkness
# one colour a curve, up to nine curves a log (a dense print has eight): no red, red marks NULL
PALETTE = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#e377c2", "#7f7f7f", "#bcbd22"]
TICK_PX = 6  # width of a curve's NULL column at the left edge


def render_overlay(log, result, scores: list[dict]) -> np.ndarray:
    """RGB picture of ``log`` (a synthetic log with its truth) and ``result`` (its ``DigitizeResult``);
    ``scores``: the log's curve scores (``styles.score_curve``), written beside each curve's name."""
    calib = log.calibration
    grey = log.image if calib.depth_axis == "y" else log.image.T  # depth down the rows
    faded = (255 - FADE * (255 - grey.astype(np.float32))).astype(np.uint8)
    margin = TICK_PX * len(calib.curves)
    header = 18 * (len(calib.curves) + 1)
    canvas = np.full((grey.shape[0] + header, grey.shape[1] + margin, 3), 255, np.uint8)
    canvas[header:, margin:] = faded[..., None]
    colours = [hex_rgb(PALETTE[i % len(PALETTE)]) for i in range(len(calib.curves))]
    by_name = {s["mnemonic"]: s for s in scores}
    for i, spec in enumerate(calib.curves):
        truth = log.truth[spec.mnemonic]
        pred = np.interp(log.depth, result.depth, result.values[spec.mnemonic], left=np.nan, right=np.nan)
        rows = calib.pixel_at(log.depth) + header
        for values, colour, width in ((truth, (0, 0, 0), 1), (pred, colours[i], 2)):
            pos = spec.position_of(values)[0] + margin
            ok = np.isfinite(pos) & np.isfinite(rows)
            pts = np.stack([pos, rows], 1)
            for a, b in zip(*true_runs(ok)):
                if b - a >= 2:
                    cv2.polylines(canvas, [np.rint(pts[a:b]).astype(np.int32)], False, colour, width, cv2.LINE_AA)
        null = np.isfinite(truth) & ~np.isfinite(pred)
        for a, b in zip(*true_runs(null)):
            r0, r1 = int(rows[a]), int(rows[max(a, b - 1)])
            canvas[min(r0, r1) : max(r0, r1) + 1, i * TICK_PX : (i + 1) * TICK_PX - 1] = NULL_COLOUR
        s = by_name.get(spec.mnemonic, {})
        text = (f"{spec.mnemonic} ({CLASS_NAMES[4][spec.klass]}"
                f"{', log' if spec.log else ''}): r {s.get('r', float('nan')):.3f}, RMSE {s.get('rmse_pct', float('nan')):.1f} %, "
                f"NULL {100 * s.get('null', float('nan')):.1f} %")
        cv2.putText(canvas, text, (4, 14 + 18 * i), cv2.FONT_HERSHEY_SIMPLEX, 0.42, colours[i], 1, cv2.LINE_AA)
    cv2.putText(canvas, f"{log.name}: truth black, trace in colour, NULL red at the left", (4, 14 + 18 * len(calib.curves)),
                cv2.FONT_HERSHEY_SIMPLEX, 0.42, (0, 0, 0), 1, cv2.LINE_AA)
    return canvas


def write_overlay(path: str | Path, log, result, scores: list[dict]) -> Path:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return write_png(path, render_overlay(log, result, scores))
