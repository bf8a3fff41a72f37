"""A probability map in one byte a pixel, read back as float32 wherever the tracer slices it.

A 30-megapixel scan's four class maps in float32 are 480 MB, and whole-scan float maps were a large part
of what made digitising a real scan need 16 GiB. The tracer reads a map one track band at a time, so the
maps are kept coded and decoded band by band.

The code is the square root: ``q = round(255 · √p)``, ``p = (q / 255)²``. The tracer's emission cost is
−log p down to its floor of 1e-3, so small probabilities need fine steps and large ones do not: the square
root gives steps of 1.5e-5 near zero (the floor is 65 steps up) and at most 0.008 near one, against
0.004 everywhere for a linear byte.
"""

from __future__ import annotations

import numpy as np

_DECODE = ((np.arange(256, dtype=np.float64) / 255.0) ** 2).astype(np.float32)


def encode(p: np.ndarray) -> np.ndarray:
    """Probabilities in [0, 1] → codes (uint8)."""
    return np.rint(np.sqrt(np.clip(p, 0.0, 1.0)) * 255.0).astype(np.uint8)


def decode(q: np.ndarray) -> np.ndarray:
    return _DECODE[q]


def max_error(p: np.ndarray | float) -> np.ndarray | float:
    """The largest difference between ``p`` and its decoded code: half a code step at √p."""
    s = np.sqrt(np.clip(p, 0.0, 1.0))
    return (2.0 * s * 0.5 + 0.25 / 255.0) / 255.0


class CodedMap:
    """A (rows, cols) probability map stored as codes; indexing and ``astype`` give float32 probabilities,
    so the tracer reads it where it read a float map."""

    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(self, codes: np.ndarray):
        if codes.dtype != np.uint8 or codes.ndim != 2:
            raise ValueError(f"codes must be a 2-D uint8 array, got {codes.dtype} {codes.shape}")
        self.codes = codes

    @classmethod
    def empty(cls, rows: int, cols: int) -> "CodedMap":
        return cls(np.zeros((rows, cols), np.uint8))

    @property
    def shape(self) -> tuple[int, int]:
        return self.codes.shape

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes

    def __getitem__(self, key) -> np.ndarray:
        return _DECODE[self.codes[key]]

    def astype(self, dtype, copy: bool = True) -> np.ndarray:
        return _DECODE[self.codes].astype(dtype, copy=False)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = _DECODE[self.codes]
        return out if dtype is None else out.astype(dtype, copy=False)
