"""A probability map in two bytes a pixel, read back as float32 wherever the tracer slices it.

A 30-megapixel scan's four class maps in float32 are 480 MB, and whole-scan float maps were a large part
of what made digitising a real scan need 16 GiB. The tracer reads a map one track band at a time, so the
maps are kept coded and decoded band by band.

The code is the square root in 16 bits: ``q = round(65535 · √p)``, ``p = (q / 65535)²``. The tracer's emission
cost is −log p down to its floor of 1e-3, so small probabilities need the finest steps: the square root gives
2.3e-10 near zero and 3e-5 near one. One byte (255 · √p) was tried and measured too coarse: where two paths
nearly tie the Viterbi took the other (a GR trace at r 0.995 against float maps on a 1,000-px synthetic log;
16 bits: 1.0000 on every curve of three logs).
"""

from __future__ import annotations

import numpy as np
from numba import njit

TOP = 65535
_DECODE = ((np.arange(TOP + 1, dtype=np.float64) / TOP) ** 2).astype(np.float32)
DECODE_TABLE = _DECODE  # each code's probability (read only): what a compiled reader decodes codes by


def encode(p: np.ndarray) -> np.ndarray:
    """Probabilities in [0, 1] → codes (uint16)."""
    return np.rint(np.sqrt(np.clip(p, 0.0, 1.0)) * TOP).astype(np.uint16)


def decode(q: np.ndarray) -> np.ndarray:
    """Codes → probabilities (float32): the table's values, looked up in one compiled pass for a 2-D band (the
    tracer's reads: NumPy's fancy indexing took a fifth of KGS's trace stage), by NumPy otherwise."""
    if isinstance(q, np.ndarray) and q.ndim == 2 and q.dtype == np.uint16:
        out = np.empty(q.shape, np.float32)
        _lookup(q, _DECODE, out)
        return out
    return _DECODE[q]


@njit(cache=True, nogil=True, error_model="numpy")
def _lookup(q, table, out):
    for r in range(q.shape[0]):
        for c in range(q.shape[1]):
            out[r, c] = table[q[r, c]]


_NO_TABLE = np.zeros(1, np.float32)


def compiled_reading(m, key) -> tuple[np.ndarray, np.ndarray]:
    """``m[key]`` (a 2-D slice) as a compiled scan reads it: a coded map's codes, a view with nothing decoded, and the
    table the scan decodes each code it reads by (the values :func:`decode` gives); the float32 values of any other
    map, and a table that is not read. A band several passes read (the signals, the unclaimed strokes: KGS's track
    bands were decoded ten times a scan) is decoded where it is read, into no band-sized array."""
    if isinstance(m, CodedMap):
        return m.codes[key], _DECODE
    return np.asarray(m[key], np.float32), _NO_TABLE


def max_error(p: np.ndarray | float) -> np.ndarray | float:
    """The largest difference between ``p`` and its decoded code: half a code step at √p."""
    s = np.sqrt(np.clip(p, 0.0, 1.0))
    return (s + 0.25 / TOP) / TOP + 2e-7  # and float32's rounding of p and of the decoded value


class CodedMap:
    """A (rows, cols) probability map stored as codes; indexing and ``astype`` give float32 probabilities,
    so the tracer reads it where it read a float map."""

    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(self, codes: np.ndarray):
        if codes.dtype != np.uint16 or codes.ndim != 2:
            raise ValueError(f"codes must be a 2-D uint16 array, got {codes.dtype} {codes.shape}")
        self.codes = codes

    @classmethod
    def empty(cls, rows: int, cols: int) -> "CodedMap":
        return cls(np.zeros((rows, cols), np.uint16))

    @property
    def shape(self) -> tuple[int, int]:
        return self.codes.shape

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes

    def __getitem__(self, key) -> np.ndarray:
        return decode(self.codes[key])

    def band(self, rows: slice) -> "CodedMap":
        """The rows ``rows`` as a coded map of their own: a view of the codes, nothing decoded (a tracer that reads
        a band's pixels along its path only keeps this, not the band's floats)."""
        return CodedMap(self.codes[rows])

    def astype(self, dtype, copy: bool = True) -> np.ndarray:
        return decode(self.codes).astype(dtype, copy=False)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = decode(self.codes)
        return out if dtype is None else out.astype(dtype, copy=False)
