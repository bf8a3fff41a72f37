"""The mask a scan's labelling starts from: the model's classes with its grid lines taken out, or the classical ink.

The app's *Pre-fill mask* and the labelling-effort measure (``tools/label_effort.py``) both start here, so the
effort counted is the effort a user meets.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from core.digitize.page.frame import from_canonical, to_canonical


def prefill_mask(image: np.ndarray, depth_axis: str, model=None,
                 progress: Callable[[int, int], None] | None = None, device: str = "cpu") -> np.ndarray:
    """A class mask (scan frame) from ``model``, or from the classical tracer when there is none. ``device``: the one
    ``model`` is on, where it reads (the precision is that device's)."""
    canon = to_canonical(image, depth_axis)
    if model is not None:
        from core.digitize.evidence.network import predict_windows
        from core.digitize.page.grid import clean_mask, detect_grid
        from core.model.precision import resolve

        # the model may paint a printed grid line as curve: straight runs on the detected grid go. It reads the
        # scan in windows along depth, as digitising does: a whole real scan at once needed 16 GiB
        mask = predict_windows(model, canon, resolve("auto", device), device, progress=progress).mask
        new = clean_mask(mask, detect_grid(canon))
    else:
        from core.digitize.evidence.classical import mask as classical_mask

        new = classical_mask(canon)
    return from_canonical(new, depth_axis)
