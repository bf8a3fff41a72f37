"""The decoder's join for the network's inference on a CPU in channels-last: the lower level's map brought up 2× by
nearest neighbour and set beside the skip, ``torch.cat([F.interpolate(up, size=skip's, mode="nearest"), skip], 1)``,
written in one compiled pass.

Why: PyTorch writes the upsampled map and then reads it and the skip again to interleave them pixel by pixel in
channels-last memory (``aten::cat``): in a profile of a 1,088 × 1,152 KGS window at two threads the upsampling took
17.7 ms and the joins 54 ms, passes over full-resolution maps where one suffices. At a KGS window's full resolution
(16 + 16 channels, 1,664 × 1,024) the join takes 22 ms of CPU against PyTorch's 37 ms at one thread, 27 against 69 at
two (docs/benchmarks.md, issue #64, twelfth round). Every value is copied, none computed, so the joined map is
PyTorch's bit for bit (``tests/core/test_cpu_join.py``), at any thread count.

Nearest neighbour at exactly twice the size takes row ``y // 2`` and column ``x // 2``: PyTorch's index is
``floor(y · 0.5)`` with the scale ``in / out`` = 0.5 exact in float, so the same pixel. Any other size, layout,
dtype mix or a pass that keeps a graph goes to PyTorch's own operators (:func:`applies`).
"""

from __future__ import annotations

import torch
from numba import njit

from core.common.threads import in_runs

_BITS = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.float32: torch.int32}


def applies(low: torch.Tensor, skip: torch.Tensor) -> bool:
    """Whether :func:`upsample_join` takes these maps: inference on a CPU, both channels-last, one dtype, the skip
    exactly twice the lower map's height and width."""
    return (not torch.is_grad_enabled() and low.device.type == "cpu" and skip.device.type == "cpu"
            and low.dim() == 4 and skip.dim() == 4 and low.dtype == skip.dtype and low.dtype in _BITS
            and low.shape[0] == skip.shape[0] and skip.shape[2] == 2 * low.shape[2]
            and skip.shape[3] == 2 * low.shape[3]
            and all(t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous() for t in (low, skip)))


def upsample_join(low: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
    """``torch.cat([F.interpolate(low, size=skip.shape[-2:], mode="nearest"), skip], 1)`` of maps
    :func:`applies` takes, channels-last, its rows spread over PyTorch's intra-op thread count (each row its own)."""
    n, c_low, _, _ = low.shape
    _, c_skip, h, w = skip.shape
    out = torch.empty((n, c_low + c_skip, h, w), dtype=skip.dtype, memory_format=torch.channels_last)
    bits = _BITS[skip.dtype]

    def as_nhwc(t: torch.Tensor):  # channels-last memory is (n, h, w, c): a view, then its bits
        return t.permute(0, 2, 3, 1).view(bits).numpy()

    low_a, skip_a, out_a = as_nhwc(low), as_nhwc(skip), as_nhwc(out)
    in_runs(lambda r0, r1: _join_rows(low_a, skip_a, out_a, r0, r1), n * h, threads=torch.get_num_threads(),
            pool="norm")
    return out


@njit(cache=True, nogil=True)
def _join_rows(low, skip, out, r0, r1):
    """Rows [r0, r1) of the batch's rows (n · h) of ``out``: each pixel's channels the lower map's pixel
    (y // 2, x // 2), then the skip's own."""
    h, w, c_skip = skip.shape[1], skip.shape[2], skip.shape[3]
    c_low = low.shape[3]
    for r in range(r0, r1):
        s, y = r // h, r % h
        low_row = low[s, y // 2]
        skip_row = skip[s, y]
        out_row = out[s, y]
        for x in range(w):
            src = low_row[x // 2]
            dst = out_row[x]
            for k in range(c_low):
                dst[k] = src[k]
            own = skip_row[x]
            for k in range(c_skip):
                dst[c_low + k] = own[k]
