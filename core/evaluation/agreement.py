"""Two readings of one scan compared where both are sure: the same LAS wherever it runs (issue #60).

A reading on another device, in another precision or of the picture moved by a pixel must write the same values
where both readings call them confident. Of the samples both write at or above the low-confidence line (the
second reading interpolated onto the first's depths), the share within 1 % of the curve's printed scale: the
figure ``tests/core/digitize/rules/test_same_las.py``, ``tools/same_las_check.py`` and ``tools/compare_las.py``
report."""

from __future__ import annotations

import numpy as np

from core.digitize.rules.confidence import LOW_CONFIDENCE

AGREE_SHARE = 0.01  # of the printed scale's range: a value this close is the same reading


def confident_agreement(depth_a: np.ndarray, values_a: np.ndarray, conf_a: np.ndarray, depth_b: np.ndarray,
                        values_b: np.ndarray, conf_b: np.ndarray, scale: tuple[float, float]
                        ) -> tuple[int, float | None]:
    """How many samples both readings call confident, and the share of them that agree (None when there are
    none). Reading b is interpolated onto a's depths; depths outside b's are neither."""
    vb = np.interp(depth_a, depth_b, values_b, left=np.nan, right=np.nan)
    cb = np.interp(depth_a, depth_b, conf_b, left=np.nan, right=np.nan)
    with np.errstate(invalid="ignore"):
        both = (conf_a >= LOW_CONFIDENCE) & (cb >= LOW_CONFIDENCE)
        agree = np.abs(values_a - vb)[both] <= AGREE_SHARE * abs(scale[1] - scale[0])
    return int(both.sum()), (float(agree.mean()) if both.any() else None)
