"""How far each traced value can be trusted: a confidence per column and per LAS sample, in [0, 1].

A NULL is honest; a faint but right reading is worth keeping. So a value the tracer is unsure of is written
and flagged: its ``NAME_CONF`` curve in the LAS is below :data:`LOW_CONFIDENCE` there, the QC picture tints it
amber, the folder summary counts it (``low_confidence_share``) and the accuracy figures count a wrong value
that was flagged apart from a confidently wrong one (``core/evaluation/styles.py: score_curve``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.common.runs import distance_to_true

if TYPE_CHECKING:
    pass


# the capped confidence (``capped_by_flags``: the classical tracer's, a painted mask's): a column whose scale (main or
# backup) is uncertain reads no surer than this
UNSURE_LEVEL_CONFIDENCE = 0.3


CONFIDENT_EVIDENCE = 0.5  # a map's evidence at the path from which a column's reading is fully confident
CONFIDENCE_COLS = 9  # columns a column's confidence is averaged over (a dash gap is no doubt)
# below this a written value is flagged low-confidence (QC picture, summary, metrics). A network's confidence is the
# calibrated probability that the value is within 5 % of its scale (``confidence_model.py``): at 0.9 one flagged
# value in ten or more is wrong. Chosen on the held-out families (evaluation seed, both shape draws) against 0.5,
# where the probability is as calibrated but a confident value may be wrong one time in two: confidently wrong
# 2.5-5.7 % at 0.5, 0.7-3.3 % at 0.9, where the rules' capped confidence of d36c861 read 0.7-2.1 % at 0.5, with
# the yield (confident and right) 6-9 points higher than theirs (docs/accuracy.md). A reader of the LAS draws the
# line where they need it: the CONF curve is the probability
LOW_CONFIDENCE = 0.9


def column_confidence(strength: np.ndarray, observed: np.ndarray, position: np.ndarray,
                      max_gap_px: int) -> np.ndarray:
    """How far each column's reading can be trusted, in [0, 1] (0 where there is none).

    From the evidence along the path: the (undamped) evidence at the path over ``CONFIDENT_EVIDENCE``,
    averaged over ``CONFIDENCE_COLS`` columns with unseen columns counting 0, and in a bridged gap falling
    linearly with the distance to the nearest observation (zero past ``max_gap_px``). A curve the map sees faintly (a thin pen under a
    dark grid, p 0.12–0.3) or a stretch bridged across many dash gaps reads low; a clean stroke reads 1.
    """
    seen = np.where(observed, np.clip(np.asarray(strength, np.float64) / CONFIDENT_EVIDENCE, 0.0, 1.0), 0.0)
    k = CONFIDENCE_COLS
    smooth = np.convolve(np.pad(seen, k // 2, mode="edge"), np.ones(k) / k, mode="valid")
    bridged = 1.0 - distance_to_true(observed) / (max_gap_px + 1.0)
    out = np.where(observed, smooth, smooth * np.clip(bridged, 0.0, 1.0))
    return np.where(np.isfinite(position), out, 0.0).astype(np.float32)


STEEP_SHARE = 0.10  # a trace moving more than this share of its track in one column is doubted (``steep_columns``)
STEEP_CONFIDENCE = 0.4  # the capped confidence (``capped_by_flags``) of a value any pass doubts


def capped(confidence: np.ndarray, where: np.ndarray, cap: float) -> np.ndarray:
    """``confidence`` no higher than ``cap`` in the columns ``where`` is set (its dtype kept)."""
    return np.where(where, np.minimum(confidence, cap), confidence).astype(confidence.dtype)


def steep_columns(fraction: np.ndarray) -> np.ndarray:
    """The columns where the trace (``fraction``: its unwrapped place across the track, NaN where NULL) moves more
    than :data:`STEEP_SHARE` of the track to a neighbouring column: the pass ``steep``.

    A column is a row of the scan along depth: where the pen crosses a tenth of the track within one row (a
    bed boundary drawn as a near-horizontal stroke, a drilling-rate log swinging across the whole track
    several times a foot), half a row's registration moves the value by more than the 5 % of its scale a
    reading is judged by, and a LAS sample between two such rows takes a value the print passes through
    rather than one it holds. Such a value is written and doubted, not left NULL: the print does pass there."""
    step = np.abs(np.diff(fraction))
    steep = np.zeros(fraction.size, bool)
    with np.errstate(invalid="ignore"):
        big = step > STEEP_SHARE
    steep[:-1] |= big
    steep[1:] |= big
    return steep


def capped_by_flags(confidence: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """The confidence of the rules before it was calibrated (d36c861): the evidence's (:func:`column_confidence`) no
    higher than :data:`UNSURE_LEVEL_CONFIDENCE` where the scale is uncertain and :data:`STEEP_CONFIDENCE` where any
    other pass doubts the value. What a tracer without a fitted calibrator writes (the classical tracer's ink, a
    hand-painted mask), and the *before* of ``docs/accuracy.md``'s tables."""
    from core.digitize.rules.passes import BIT, DOUBTS

    level = BIT["backup_level"] | BIT["ink_level"]
    other = sum(BIT[n] for n in DOUBTS) & ~level
    out = capped(confidence, (flags & level) != 0, UNSURE_LEVEL_CONFIDENCE)
    return capped(out, (flags & other) != 0, STEEP_CONFIDENCE)


def low_confidence_share(values: np.ndarray, confidence: np.ndarray | None) -> float:
    """The share of a curve's samples written with a value but flagged low-confidence."""
    if confidence is None or values.size == 0:
        return 0.0
    with np.errstate(invalid="ignore"):
        return float(np.mean(np.isfinite(values) & (confidence < LOW_CONFIDENCE)))
