"""Tesseract, run one thread a call.

Tesseract's LSTM spreads each call over OpenMP threads. On the small pictures the proposal reads (a window of
a depth column, a row of a scale box) the threads cost more than they give: one window of iqa_33-023-01135's
depth column took 0.93 s with the default threads and 0.26 s with one (2-core EPYC), and two such calls side by
side 0.28 s. ``OMP_THREAD_LIMIT=1`` is set for the Tesseract process only, never for this one: PyTorch's own
OpenMP threads, read when it loads, must keep their count.
"""

from __future__ import annotations

import os
import threading

import numpy as np

_ENV_LOCK = threading.Lock()  # the environment a child inherits is the process's: one call sets it at a time


def _single_threaded(call):
    with _ENV_LOCK:
        before = os.environ.get("OMP_THREAD_LIMIT")
        os.environ["OMP_THREAD_LIMIT"] = "1"
        try:
            return call()
        finally:
            if before is None:
                os.environ.pop("OMP_THREAD_LIMIT", None)
            else:
                os.environ["OMP_THREAD_LIMIT"] = before


def image_to_data(img: np.ndarray, config: str) -> dict:
    """``pytesseract.image_to_data`` as a dict of lists (text, left, top, width, height …), one thread."""
    import pytesseract

    return _single_threaded(lambda: pytesseract.image_to_data(np.ascontiguousarray(img), config=config,
                                                              output_type=pytesseract.Output.DICT))


def image_to_string(img: np.ndarray, config: str) -> str:
    """``pytesseract.image_to_string``, one thread."""
    import pytesseract

    return _single_threaded(lambda: pytesseract.image_to_string(np.ascontiguousarray(img), config=config))
