"""Tesseract: whether it can be used here (:func:`ocr_available`), and run one thread a call.

Tesseract's LSTM spreads each call over OpenMP threads. On the small pictures the proposal reads (a window of
a depth column, a row of a scale box) the threads cost more than they give: one window of iqa_33-023-01135's
depth column took 0.93 s with the default threads and 0.26 s with one (2-core EPYC), and two such calls side by
side 0.28 s. ``OMP_THREAD_LIMIT=1`` goes to the Tesseract processes only, in the environment pytesseract hands
them: this process's own environment is never touched, so a training or planner process started meanwhile (the
app's) inherits no thread limit, and PyTorch's OpenMP threads keep their count.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping

import numpy as np

LIMIT = {"OMP_THREAD_LIMIT": "1"}


class _OneThreadEnvironment(Mapping):
    """This process's environment as it is at each call, with :data:`LIMIT` over it."""

    def __getitem__(self, key: str) -> str:
        return LIMIT[key] if key in LIMIT else os.environ[key]

    def __iter__(self) -> Iterator[str]:
        yield from LIMIT
        yield from (k for k in os.environ if k not in LIMIT)

    def __len__(self) -> int:
        return len(set(os.environ) | set(LIMIT))


def _tesseract():
    """pytesseract, its Tesseract processes started with :data:`LIMIT` (pytesseract passes its module's
    ``environ`` to each ``subprocess.Popen``; a version without one runs Tesseract with its default threads)."""
    import pytesseract

    if not isinstance(getattr(pytesseract.pytesseract, "environ", None), _OneThreadEnvironment):
        pytesseract.pytesseract.environ = _OneThreadEnvironment()
    return pytesseract


def image_to_data(img: np.ndarray, config: str) -> dict:
    """``pytesseract.image_to_data`` as a dict of lists (text, left, top, width, height …), one thread."""
    tess = _tesseract()
    return tess.image_to_data(np.ascontiguousarray(img), config=config, output_type=tess.Output.DICT)


def image_to_string(img: np.ndarray, config: str) -> str:
    """``pytesseract.image_to_string``, one thread."""
    return _tesseract().image_to_string(np.ascontiguousarray(img), config=config)


def ocr_available() -> str | None:
    """None when Tesseract can be used, else how to install it."""
    try:
        import pytesseract  # noqa: F401
    except ImportError:
        return "reading printed depths needs pytesseract and Tesseract: pip install pytesseract, and install " \
               "the tesseract-ocr program (Debian/Ubuntu: apt install tesseract-ocr)"
    if shutil.which("tesseract") is None:
        return "reading printed depths needs the tesseract-ocr program (Debian/Ubuntu: apt install tesseract-ocr; " \
               "Windows and macOS: see github.com/tesseract-ocr/tesseract)"
    return None
