"""GroupNorm for the network's inference on a CPU in channels-last: the same numbers as the reductions of
``norms._GroupNormByReduction``, in two compiled passes over the map.

Profiled on a 1,664 × 1,024 window of KGS (the bundled model, bf16 autocast, channels-last, 2-core EPYC), the
group norms took 61 % of the forward: ``var_mean`` over the channels-last memory reduces 16-channel groups
strided a whole pixel apart, and around it ran an fp32 copy of the input, the affine ``addcmul`` and the cast
back to bf16, each a pass over the map. Here the statistics are one pass (per pixel, every channel's sum and
sum of squares in float64, contiguous) and the affine and the rounding to the compute dtype a second.

Bit for bit the reductions' output: their ``var_mean`` accumulates in float64 and rounds mean and variance to
float32 (so do these sums: E[x²] − E[x]² in float64 keeps 1e-13 of a variance, far below float32's step), then
rstd, scale and shift are taken in float32 as they were (NumPy, the same operations in the same order), and
the affine is one fused multiply-add a value, as PyTorch's vectorised ``addcmul`` computes it (``_fma32``),
rounded to bf16 to nearest even as PyTorch rounds. So the network's maps, and the LAS, are those of the
reductions (``tests/core/test_cpu_group_norm.py``; KGS and four more shared scans). One place the two float64
computations can round apart is kept to the reductions: a statistic on a float32 rounding edge
(:func:`_on_a_rounding_edge`; a group mean of ``iqa_33-025-02289-0001``'s section was exactly a float32 midpoint).

The maps must not depend on the thread count (a folder's one-thread worker and a scan read alone with two
threads wrote different LAS files when PyTorch's own kernel split its sums by thread: ``core/model/norms.py``).
The pixels are cut into fixed chunks whatever the threads, each chunk's sums taken in order and the chunks'
sums added in chunk order; the threads only decide who computes which chunk.
"""

from __future__ import annotations

import numpy as np
import torch
from llvmlite import ir
from numba import njit
from numba.core import types
from numba.extending import intrinsic

from core.common.threads import in_runs

CHUNK_PX = 16384  # pixels a chunk: fixed, so the sums are the same at any thread count
BLOCK_PX = 256  # pixels the affine takes at once, every channel of them as one flat run (vectorised)



def applies(x: torch.Tensor) -> bool:
    """Whether :func:`group_norm` takes this map: inference on a CPU, a channels-last fp32 or bf16 map."""
    return (not torch.is_grad_enabled() and x.device.type == "cpu" and x.dim() == 4
            and x.dtype in (torch.float32, torch.bfloat16) and x.is_contiguous(memory_format=torch.channels_last)
            and not x.is_contiguous())


def group_norm(x: torch.Tensor, groups: int, weight: torch.Tensor, bias: torch.Tensor, eps: float,
               silu: bool = False) -> torch.Tensor:
    """``F.group_norm(x, groups, weight, bias, eps)`` of a channels-last map (:func:`applies`), in its dtype and
    layout, as ``norms._GroupNormByReduction`` computes it; with ``silu`` (a bf16 map only), ``F.silu`` of that
    output, taken in the same pass (:func:`_affine`)."""
    if silu and x.dtype != torch.bfloat16:
        raise ValueError("the fused SiLU is bit-identical to PyTorch's for bf16 maps only")
    n, c, h, w = x.shape
    bf16 = x.dtype == torch.bfloat16
    pixels = h * w
    flat = x.permute(0, 2, 3, 1).reshape(n, pixels, c)  # a view: channels-last is (n, h, w, c) in memory
    out = torch.empty_like(x)
    flat_out = out.permute(0, 2, 3, 1).reshape(n, pixels, c)
    src = (flat.view(torch.int16) if bf16 else flat).numpy()
    dst = (flat_out.view(torch.int16) if bf16 else flat_out).numpy()
    chunks = [(a, min(pixels, a + CHUNK_PX)) for a in range(0, pixels, CHUNK_PX)]
    per_group = c // groups
    w32 = weight.detach().float().numpy()
    b32 = bias.detach().float().numpy()
    for s in range(n):
        sums = np.zeros((len(chunks), 2, c))
        _spread(lambda i, a, b: _sums(src[s], bf16, a, b, sums[i]), chunks)
        total = sums.sum(0)  # chunk order: the same at any thread count
        count = float(pixels * per_group)
        mean = total[0].reshape(groups, per_group).sum(1) / count
        squares = total[1].reshape(groups, per_group).sum(1) / count  # E[x²]
        var = squares - mean * mean
        mean32, var32 = mean.astype(np.float32), np.maximum(var, 0.0).astype(np.float32)
        if _on_a_rounding_edge(mean, var, squares, count, eps):
            # a statistic within the two computations' error of a float32 rounding edge: the reductions' own
            # Welford sums decide which way it rounds (``_on_a_rounding_edge``)
            var_t, mean_t = torch.var_mean(x[s : s + 1].float().unflatten(1, (groups, per_group)), dim=(2, 3, 4),
                                           correction=0)
            mean32, var32 = mean_t[0].numpy(), var_t[0].numpy()
            EDGES[0] += 1
        rstd = np.float32(1.0) / np.sqrt(var32 + np.float32(eps))  # float32, as torch.rsqrt takes it
        scale = np.repeat(rstd, per_group) * w32
        shift = b32 - np.repeat(mean32, per_group) * scale
        table = silu_table() if silu else _NO_TABLE
        _spread(lambda i, a, b: _affine(src[s], bf16, silu, a, b, scale, shift, dst[s], table), chunks)
    return out


_SILU_TABLE: list[np.ndarray] = []
_NO_TABLE = np.zeros(1, np.int16)


def silu_table() -> np.ndarray:
    """PyTorch's own bf16 ``F.silu`` of every one of the 65,536 bf16 patterns, as int16 bits indexed by the input's
    bits (uint16): the fused pass's SiLU is a lookup, PyTorch's numbers by construction, whatever its build
    vectorises with. A bf16 SiLU is a function of its bf16 input alone (PyTorch widens it to float32, takes
    ``x / (1 + exp(-x))`` and rounds): 128 KiB, taken once a process.

    Why a table: the pass computed it before, a port of Sleef's ``expf_u10`` and a division a value, 18 of the
    43 ms of a 16-channel norm of a KGS window's full-resolution map on one core (docs/benchmarks.md, issue #64,
    twelfth round); the lookup is a load a value from a table the core's L2 holds."""
    if not _SILU_TABLE:
        patterns = torch.arange(65536, dtype=torch.int32).to(torch.int16)  # bits 0..65535, as int16
        with torch.no_grad():
            out = torch.nn.functional.silu(patterns.view(torch.bfloat16))
        _SILU_TABLE.append(np.ascontiguousarray(out.view(torch.int16).numpy()))
    return _SILU_TABLE[0]


EDGES = [0]  # samples whose statistics were taken by the reductions (``_on_a_rounding_edge``): counted for the tools


def _on_a_rounding_edge(mean: np.ndarray, var: np.ndarray, squares: np.ndarray, count: float, eps: float) -> bool:
    """Whether any group's mean or variance (float64) lies so near the middle between two float32 values that
    rounding it may go the other way than the reductions' (``norms._GroupNormByReduction``: PyTorch's Welford sums
    in float64) does.

    The two float64 computations differ by their rounding errors: these sums are exact or nearly (a bf16 value has
    8 significant bits), the mean one division off, the variance E[x²] − E[x]² a few roundings of E[x²] off;
    Welford's mean and M2 drift by about √n roundings. Where a value's distance to the nearest float32 midpoint is
    under both errors' bound, which float32 each rounds to is not known from here. That happens: the exact mean of
    a group of bf16 values is a fraction of a power of two and can be a midpoint itself (iqa_33-025-02289-0001's
    section: one group of 55,296 values whose mean is exactly −33,269,833 / 2²³; rounded to even here, PyTorch's
    Welford mean lands past it, the float32 mean a step apart and 0.3 % of that window's codes with it). Such a
    sample's statistics are then the reductions' own; elsewhere the error bound is far below float32's step and
    the two round alike. The bound: 16 √n units of float64 rounding of each statistic (Welford's drift, with room),
    plus 4 units of E[x²] for the variance's cancellation; a variance step that ``var + eps`` loses in float32 (a
    flat group's, beside eps) is no edge."""
    unit = np.finfo(np.float64).eps
    drift = 16.0 * np.sqrt(count) * unit
    var = np.maximum(var, 0.0)
    for value, slack, plus in ((mean, drift * np.abs(mean) + 4.0 * unit * np.sqrt(squares), None),
                               (var, drift * var + 4.0 * unit * (squares + mean * mean), np.float32(eps))):
        f = value.astype(np.float32)
        below, above = np.nextafter(f, np.float32(-np.inf)), np.nextafter(f, np.float32(np.inf))
        to_below = np.abs(value - (f.astype(np.float64) + below) / 2)
        to_above = np.abs(value - (f.astype(np.float64) + above) / 2)
        near = np.minimum(to_below, to_above) <= slack
        if plus is not None:  # the variance counts as var + eps in float32: a step lost in the sum changes nothing
            other = np.where(to_below < to_above, below, above)
            near &= (f + plus) != (other + plus)
        if np.any(near):
            return True
    return False


def _spread(work, chunks: list[tuple[int, int]]) -> None:
    """``work(i, start, stop)`` for every chunk, over PyTorch's intra-op thread count (the kernels release the
    GIL); which thread takes which chunk changes nothing in the result.

    The chunks go to the threads in contiguous runs, one run a thread (``threads.in_runs``): a task a chunk was 992 tasks handed through
    the pool's queue for one KGS window's 40 norm passes (77 chunks a full-resolution pass), each a future, a
    wake-up and two turns of the interpreter's lock for ~0.1-0.3 ms of compiled work."""
    def run_of(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            work(i, *chunks[i])

    in_runs(run_of, len(chunks), threads=torch.get_num_threads(), pool="norm")


@intrinsic
def _fma32(typingctx, a, b, c):
    """a · b + c in float32, rounded once (LLVM's fma: one instruction, and vectorised in a loop)."""
    sig = types.float32(types.float32, types.float32, types.float32)

    def codegen(context, builder, signature, args):
        f32 = ir.FloatType()
        fn = builder.module.declare_intrinsic("llvm.fma", [f32], ir.FunctionType(f32, [f32, f32, f32]))
        return builder.call(fn, args)

    return sig, codegen


@njit(cache=True, nogil=True, error_model="numpy")
def _widen_bf16(src, bits):
    """bf16 bits (int16) to the bits of the same float32 values."""
    for k in range(src.size):
        bits[k] = np.uint32(np.uint16(src[k])) << np.uint32(16)


@njit(cache=True, nogil=True, error_model="numpy")
def _sums(x, bf16, start, stop, out):
    """Per channel, the sum (``out[0]``) and the sum of squares (``out[1]``) over pixels [start, stop), float64."""
    c = x.shape[1]
    bits = np.empty(c, np.uint32)
    vals = bits.view(np.float32)
    total, squares = out[0], out[1]
    for p in range(start, stop):
        if bf16:
            _widen_bf16(x[p], bits)
        else:
            vals[:] = x[p]
        for k in range(c):
            v = np.float64(vals[k])
            total[k] += v
            squares[k] += v * v


@njit(cache=True, nogil=True, error_model="numpy")
def _round_bf16(u):
    """float32 bits to bf16 bits (in the high half, the low half zero), to nearest even; no NaN comes here."""
    return (u + (((u >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF))) & np.uint32(0xFFFF0000)


@njit(cache=True, nogil=True, error_model="numpy")
def _affine(x, bf16, silu, start, stop, scale, shift, out, silu_bf16):
    """fma(x, scale, shift) per channel in float32 over pixels [start, stop), into ``out`` in the map's dtype (bf16
    rounded to nearest even; no NaN comes out of a norm). ``BLOCK_PX`` pixels at a time, their channels one flat
    run (the factors repeated along it).

    ``silu`` (bf16): then SiLU of that bf16 output, looked up in ``silu_bf16`` (:func:`silu_table`: PyTorch's own
    bf16 ``F.silu`` of every bf16 pattern, indexed by the pattern's bits)."""
    c = x.shape[1]
    n = BLOCK_PX * c
    scale_run = np.empty(n, np.float32)
    shift_run = np.empty(n, np.float32)
    for i in range(BLOCK_PX):
        scale_run[i * c : (i + 1) * c] = scale
        shift_run[i * c : (i + 1) * c] = shift
    bits = np.empty(n, np.uint32)
    vals = bits.view(np.float32)
    flat_x = x.reshape(x.size)
    flat_out = out.reshape(out.size)
    for a in range(start, stop, BLOCK_PX):
        m = (min(stop, a + BLOCK_PX) - a) * c
        src = flat_x[a * c : a * c + m]
        dst = flat_out[a * c : a * c + m]
        if bf16:
            _widen_bf16(src, bits[:m])
        else:
            vals[:m] = src
        for k in range(m):
            vals[k] = _fma32(vals[k], scale_run[k], shift_run[k])
        if bf16:
            if silu:
                for k in range(m):
                    dst[k] = silu_bf16[_round_bf16(bits[k]) >> np.uint32(16)]
            else:
                for k in range(m):
                    dst[k] = np.int16(np.uint16(_round_bf16(bits[k]) >> np.uint32(16)))
        else:
            dst[:] = vals[:m]
