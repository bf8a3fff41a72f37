"""Inference over logs of any length: the network reads windows along depth, never the whole picture at once.

A real scan is 20,000–90,000 px long. Read whole, its feature maps need ~0.6 GiB per megapixel (16 GiB for
the 30-megapixel KGS scan); read in windows, the peak is one window's forward plus the maps kept, whatever
the length (:func:`predict_windows`). The network was trained on 1,024-px crops, so a window of that
length is also the context its GroupNorm statistics and its attention were fitted to.

Stitching. Neighbouring windows overlap by twice the network's convolutional receptive radius
(``core/model/footprint.py: receptive_radius``) plus a blend zone: each window's output is weighted zero
within that radius of a cut edge, rises linearly across the blend zone, and the weights are normalised.
So every output pixel comes from windows that saw all of its convolutional context, and for any layer
with a finite reach the stitched maps equal the whole-picture maps (``tests/core/digitize/evidence/test_windowed_inference.py``).
The network's GroupNorm statistics and bottleneck attention have no finite reach: there a window's
maps differ from a whole-picture forward's, as a 1,024-px training crop's did.

Maps are kept two bytes a class and pixel (``core/digitize/evidence/coded_map.py``), the class mask one byte a
pixel, and only the classes the tracer reads. :func:`predict_canonical` keeps the whole-picture path (float
maps) behind ``digitize --whole-picture``, to compare against.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from core.common.sysmem import freed_blocks_reused, large_blocks_from_heap
from core.digitize.evidence.coded_map import CodedMap, encode
from core.digitize.evidence.stitching import add_weighted, settle_columns
from core.digitize.page.frame import from_canonical, to_canonical
from core.model.footprint import (
    predict_inference_peak,
    receptive_radius,
)
from core.model.network import NetConfig, image_to_input
from core.model.precision import Precision
from core.model.runtime import Runner, probabilities, torch_runner

WINDOW_PX = 1024  # the training crop along depth (``welltrace train --crop``): the context the network knows
BLEND_PX = 64  # the zone across which one window hands over to the next


def strips(length: int, tile: int, overlap: int, align: int = 1) -> list[tuple[int, int]]:
    """Start/stop of overlapping strips that cover ``length``. With ``align``, every start is a multiple of it
    (the network's stride: a window then sees the same downsampling grid as the whole picture) and the last
    strip runs to the end, up to ``align`` − 1 px longer than ``tile``."""
    if tile >= length:
        return [(0, length)]
    overlap = min(overlap, tile // 2)
    step = tile - overlap
    last = (length - tile) // align * align
    starts = list(range(0, last, step)) + [last]
    out = [(s, s + tile) for s in sorted(set(starts))]
    out[-1] = (out[-1][0], length)
    return out


def predict_canonical(
    model,
    img: np.ndarray,
    precision: Precision,
    device: torch.device | str = "cpu",
    tile: int | None = None,
    overlap: int = 128,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Class probabilities (C, H, W) float32 for a canonical uint8 image (H across, W along depth), read by eager
    PyTorch in its default layout: the reference the faster runtimes are compared with."""
    run = torch_runner(model, precision, device, channels_last=False)
    x_full = image_to_input(img)[None, None]
    h, w = img.shape
    classes = model.cfg.classes
    if tile is None or tile >= w:
        out = run(x_full)
        if progress:
            progress(1, 1)
        return out
    acc = np.zeros((classes, h, w), np.float32)
    wsum = np.zeros(w, np.float32)
    parts = strips(w, tile, overlap)
    for i, (a, b) in enumerate(parts):
        p = run(x_full[..., a:b])
        ramp = np.ones(b - a, np.float32)
        ov = min(overlap, (b - a) // 2)
        if ov > 0:
            edge = (np.arange(ov, dtype=np.float32) + 0.5) / ov
            if a > 0:
                ramp[:ov] = edge
            if b < w:
                ramp[-ov:] = edge[::-1]
        acc[..., a:b] += p * ramp
        wsum[a:b] += ramp
        if progress:
            progress(i + 1, len(parts))
    return acc / np.maximum(wsum, 1e-6)


@dataclass(frozen=True)
class Windowing:
    """Windows along depth: their length, and the zero-weight margin at each cut edge (the receptive radius
    rounded up to the stride); neighbours overlap by two margins and the blend zone."""

    length: int
    margin: int
    blend: int = BLEND_PX

    @property
    def overlap(self) -> int:
        return 2 * self.margin + self.blend

    @classmethod
    def for_model(cls, cfg: NetConfig, length: int = WINDOW_PX) -> "Windowing":
        margin = int(math.ceil(receptive_radius(cfg) / cfg.stride)) * cfg.stride
        shortest = 2 * (2 * margin + BLEND_PX)  # a window is mostly its own, not its margins
        length = max(shortest, int(math.ceil(length / cfg.stride)) * cfg.stride)
        return cls(length, margin)

    def weights(self, a: int, b: int, total: int) -> np.ndarray:
        """Per column of the window [a, b) of a log ``total`` long: 0 within the margin of a cut edge, a linear
        rise across the blend zone, 1 inside. The log's own ends are no cuts."""
        n = b - a
        w = np.ones(n, np.float32)
        ramp = (np.arange(self.blend, dtype=np.float32) + 0.5) / self.blend
        inner = min(self.margin + self.blend, n)
        if a > 0:
            w[: self.margin] = 0.0
            w[self.margin : inner] = ramp[: max(0, inner - self.margin)]
        if b < total:
            w[n - self.margin :] = 0.0
            w[n - inner : n - self.margin] = np.minimum(w[n - inner : n - self.margin],
                                                        ramp[: max(0, inner - self.margin)][::-1])
        return w


@dataclass
class WindowedEvidence:
    """What the tracer and the mask need of a network's maps, in the canonical frame."""

    maps: dict[int, CodedMap]  # class → probability map (0: a binary model's curve map)
    mask: np.ndarray  # uint8 class per pixel (binary: 0/1)
    windows: int
    window: Windowing | None  # None: the whole picture in one forward


def evidence_band(tracks: list[tuple[float, float]], rows: int, cfg: NetConfig) -> tuple[int, int]:
    """The canonical rows the network needs to read for curves in ``tracks`` (their pixel ends across): from the
    first track's edge to the last's, widened by the network's convolutional reach (its receptive radius,
    rounded up to the stride) so every pixel of a track is read with all the context its convolutions see, and
    starting on the stride so the band keeps the whole picture's downsampling grid. The depth column, lithology
    and text columns beyond the tracks are not read (where they lie between two tracks they are: one band)."""
    if not tracks:
        return 0, rows
    reach = Windowing.for_model(cfg, 0).margin
    lo = max(0, int(math.floor(min(min(t) for t in tracks))) - reach) // cfg.stride * cfg.stride
    hi = min(rows, int(math.ceil(max(max(t) for t in tracks))) + 1 + reach)
    return lo, hi


def kept_classes(classes: int) -> tuple[int, ...]:
    """The map keys the tracer reads: a binary model's curve map, or the three curve classes."""
    return (0,) if classes == 1 else (1, 2, 3)


def predict_windows(model, img: np.ndarray, precision: Precision, device: torch.device | str = "cpu",
                    window: Windowing | None = None, progress: Callable[[int, int], None] | None = None,
                    runner: Runner | None = None, rows: tuple[int, int] | None = None,
                    cols: tuple[int, int] | None = None, at_once: int = 1) -> WindowedEvidence:
    """The network's maps of a canonical uint8 image, one window along depth at a time (module docstring), each
    window read by ``runner`` (``core/model/runtime.py``; default: PyTorch channels-last). ``rows``: the
    band across that the network reads (:func:`evidence_band`), ``cols`` the stretch along depth (the log body of
    a picture read whole: ``log_sections.picked_body``), read as if it were the whole picture; the maps are the
    image's size, zero outside them.

    ``at_once`` 2: two windows read at the same time, each on its own thread with half of PyTorch's intra-op
    threads (:func:`_two_at_once`; what ``memory_plan.MemoryPlan.at_once`` allows); the same maps, bit for bit."""
    run = runner or torch_runner(model, precision, device)
    h, w = img.shape
    lo, hi = rows or (0, h)
    classes = model.cfg.classes
    window = window or Windowing.for_model(model.cfg)
    keys = kept_classes(classes)
    maps = {k: CodedMap.empty(h, w) for k in keys}
    mask = np.zeros((h, w), np.uint8)
    c0, c1 = cols or (0, w)
    parts = [(a + c0, b + c0) for a, b in strips(c1 - c0, window.length, window.overlap, model.cfg.stride)]
    acc = np.zeros((classes, hi - lo, 0), np.float32)
    wsum = np.zeros(0, np.float32)
    start = c0  # the column acc[..., 0] is

    coded_classes = np.array([0 if classes == 1 else k for k in keys], np.int64)

    def settle(upto: int) -> None:  # columns [start, upto) take no more windows: code them
        nonlocal acc, wsum, start
        n = upto - start
        if n <= 0:
            return
        settle_columns(acc, wsum, n, coded_classes, tuple(maps[k].codes[lo:hi, start:upto] for k in keys),
                        mask[lo:hi, start:upto], classes == 1)
        acc, wsum, start = acc[..., n:], wsum[n:], upto

    def stitch(a: int, b: int, p: np.ndarray) -> None:  # a window's probabilities added, in the windows' order
        nonlocal acc, wsum
        settle(a)
        if b - start > acc.shape[-1]:
            grow = b - start - acc.shape[-1]
            acc = np.concatenate([acc, np.zeros((classes, hi - lo, grow), np.float32)], -1)
            wsum = np.concatenate([wsum, np.zeros(grow, np.float32)])
        wt = window.weights(a - c0, b - c0, c1 - c0)
        add_weighted(acc, p, wt, a - start)
        wsum[a - start : b - start] += wt

    def window_input(a: int, b: int) -> np.ndarray:
        return image_to_input(img[lo:hi, a:b])[None, None]

    # each window's forward in the pages the window before it freed (``sysmem.freed_blocks_reused``: 0.3-0.4 s of
    # page faults a KGS window otherwise); the plan counts the heap they are kept in (``memory_plan.plan_memory``)
    with freed_blocks_reused():
        if at_once >= 2 and len(parts) > 1 and torch.device(device).type == "cpu":
            _two_at_once(run, parts, window_input, stitch, progress)
        else:
            for i, (a, b) in enumerate(parts):
                x = window_input(a, b)
                with large_blocks_from_heap():
                    p = run(x)
                del x
                stitch(a, b, p)
                del p
                if progress:
                    progress(i + 1, len(parts))
        settle(c1)
    return WindowedEvidence(maps, mask, len(parts), window)


def _two_at_once(run: Runner, parts: list[tuple[int, int]], window_input, stitch, progress) -> None:
    """The windows read two at a time: the first of each pair on this thread (its heap kept, as one window at a time
    keeps it), the second on a helper thread, each forward with half of PyTorch's intra-op threads; then both
    stitched in the windows' order, so the sums, and the maps, are those of one window at a time.

    Why: two intra-op threads on one window buy 1.47-1.57× over one on the 2-core EPYC (the threads meet at every
    operator's barrier, the compiled norm's pool beside OpenMP's), two windows of one thread each nearly 2×
    (docs/benchmarks.md, issue #64, eighth round). The maps do not depend on the thread count (oneDNN's
    convolutions at a fixed count, ``core/model/cpu_group_norm.py``'s fixed chunks), and nothing the forward uses is
    shared mutable state between the threads: autocast's state and its cast weights are a thread's own, the weights'
    layout is set before and left alone (``runtime.torch_runner``), the compiled kernels release the interpreter's
    lock and keep no state. PyTorch's thread count is the process's: it is halved for the reading and given back."""
    threads = torch.get_num_threads()
    each = max(1, threads // 2)

    def helper(x: np.ndarray) -> np.ndarray:
        torch.set_num_threads(each)  # OpenMP's count is a thread's own: this thread's forwards take their half
        return run(x)

    torch.set_num_threads(each)
    pool = ThreadPoolExecutor(1, thread_name_prefix="welltrace-window")
    try:
        for i in range(0, len(parts), 2):
            pair = parts[i : i + 2]
            second = pool.submit(helper, window_input(*pair[1])) if len(pair) == 2 else None
            x = window_input(*pair[0])
            with large_blocks_from_heap():
                first = run(x)
            del x
            stitch(*pair[0], first)
            del first
            if second is not None:
                p = second.result()
                del second
                stitch(*pair[1], p)
                del p
            if progress:
                progress(i + len(pair), len(parts))
    finally:
        pool.shutdown(wait=True)
        torch.set_num_threads(threads)


GPU_BATCH_MAX = 16  # windows a GPU reads at once, at most
GPU_MEMORY_SHARE = 0.5  # of the GPU's free memory the batch's forwards may take (the rest: the maps, the allocator's)


def device_batch(cfg: NetConfig, rows: int, length: int, precision_mode: str, device: torch.device | str) -> int:
    """Windows a GPU reads at once: as many as :data:`GPU_MEMORY_SHARE` of its free memory holds, each window's
    forward predicted as the CPU's plan predicts it (``core/model/footprint.py``: its fp32 bytes, an upper bound
    for 16-bit), at most :data:`GPU_BATCH_MAX`; 1 on any other device."""
    dev = torch.device(device)
    if dev.type != "cuda":
        return 1
    free, _ = torch.cuda.mem_get_info(dev)
    per = predict_inference_peak(cfg, rows, length, precision_mode)
    return int(max(1, min(GPU_BATCH_MAX, GPU_MEMORY_SHARE * free // max(per, 1))))


def predict_windows_batched(model, img: np.ndarray, precision: Precision, device: torch.device | str = "cuda",
                            window: Windowing | None = None, progress: Callable[[int, int], None] | None = None,
                            rows: tuple[int, int] | None = None, cols: tuple[int, int] | None = None,
                            batch: int | None = None) -> WindowedEvidence:
    """:func:`predict_windows` for a GPU: the same windows and weights, read ``batch`` at a time (default
    :func:`device_batch`) with nothing between them waiting on the host.

    The band is sent once, as bytes (a quarter of the float input), from pinned memory; the windows are cut, turned
    into the network's input, read in channels-last under the precision's autocast (bf16 for the bundled model: the
    tensor cores' layout and dtype), stitched and coded (``coded_map.encode``'s square-root code, the class mask)
    on the device; the codes come back into pinned memory once, after the last window, and that is the only wait.
    The device keeps the band's codes (7 bytes a pixel with a 4-class network: 0.2 GB for KGS) and one batch's
    forwards. Runs on any device (the tests run it on the CPU against :func:`predict_windows`)."""
    dev = torch.device(device)
    pinned = dev.type == "cuda"
    h, w = img.shape
    lo, hi = rows or (0, h)
    c0, c1 = cols or (0, w)
    classes = model.cfg.classes
    keys = kept_classes(classes)
    window = window or Windowing.for_model(model.cfg)
    parts = [(a + c0, b + c0) for a, b in strips(c1 - c0, window.length, window.overlap, model.cfg.stride)]
    batch = batch or device_batch(model.cfg, hi - lo, window.length, precision.mode, dev)
    model.eval()
    model.to(memory_format=torch.channels_last)
    band_h, band_w = hi - lo, c1 - c0
    band = torch.from_numpy(np.ascontiguousarray(img[lo:hi, c0:c1]))
    band = (band.pin_memory() if pinned else band).to(dev, non_blocking=True)
    weights = torch.from_numpy(np.stack([np.pad(window.weights(a - c0, b - c0, c1 - c0), (0, _longest(parts) - (b - a)))
                                         for a, b in parts]))
    weights = (weights.pin_memory() if pinned else weights).to(dev, non_blocking=True)
    codes = torch.zeros((len(keys), band_h, band_w), dtype=torch.int16, device=dev)  # uint16 codes, as int16 bits
    mask = torch.zeros((band_h, band_w), dtype=torch.uint8, device=dev)
    acc = torch.zeros((classes, band_h, 0), device=dev)
    wsum = torch.zeros(0, device=dev)
    start = 0  # the band column acc[..., 0] is

    def settle(upto: int) -> None:  # band columns [start, upto) take no more windows: code them
        nonlocal acc, wsum, start
        n = upto - start
        if n <= 0:
            return
        probs = acc[..., :n] / torch.clamp(wsum[:n], min=1e-12)
        for i, k in enumerate(keys):
            # ``coded_map.encode``: the square root in float64 rounded to float32 is the correctly rounded float32
            # root NumPy takes (PyTorch's float32 root on a CPU is not, in 18 % of values)
            root = torch.sqrt(torch.clamp(probs[0 if classes == 1 else k], 0.0, 1.0).double()).float()
            codes[i, :, start:upto] = torch.round(root * 65535.0).to(torch.int32).to(torch.int16)  # its 16 bits
        mask[:, start:upto] = (probs[0] > 0.5) if classes == 1 else probs.argmax(0).to(torch.uint8)
        acc, wsum, start = acc[..., n:], wsum[n:], upto

    done = 0
    for group in _same_length_runs(parts, batch):
        x = torch.stack([band[:, a - c0 : b - c0] for a, b in group])[:, None]  # (B, 1, rows, length) bytes
        x = ((255.0 - x.float()) / 255.0).contiguous(memory_format=torch.channels_last)  # ``image_to_input``
        with torch.inference_mode(), precision.autocast():
            p = probabilities(model(x))
        for j, (a, b) in enumerate(group):
            a, b = a - c0, b - c0
            settle(a)
            if b - start > acc.shape[-1]:
                grow = b - start - acc.shape[-1]
                acc = torch.cat([acc, torch.zeros((classes, band_h, grow), device=dev)], -1)
                wsum = torch.cat([wsum, torch.zeros(grow, device=dev)])
            wt = weights[done + j, : b - a]
            acc[..., a - start : b - start] += p[j] * wt
            wsum[a - start : b - start] += wt
        del p, x
        done += len(group)
        if progress:
            progress(done, len(parts))
    settle(band_w)
    host_codes = torch.empty((len(keys), band_h, band_w), dtype=torch.int16, pin_memory=pinned)
    host_mask = torch.empty((band_h, band_w), dtype=torch.uint8, pin_memory=pinned)
    host_codes.copy_(codes, non_blocking=True)
    host_mask.copy_(mask, non_blocking=True)
    if pinned:
        torch.cuda.current_stream(dev).synchronize()  # the one wait: every window read, coded and copied back
    maps = {k: CodedMap.empty(h, w) for k in keys}
    for i, k in enumerate(keys):
        maps[k].codes[lo:hi, c0:c1] = host_codes[i].numpy().view(np.uint16)
    full_mask = np.zeros((h, w), np.uint8)
    full_mask[lo:hi, c0:c1] = host_mask.numpy()
    return WindowedEvidence(maps, full_mask, len(parts), window)


def _longest(parts: list[tuple[int, int]]) -> int:
    return max(b - a for a, b in parts)


def _same_length_runs(parts: list[tuple[int, int]], batch: int) -> list[list[tuple[int, int]]]:
    """The windows in order, in runs of up to ``batch`` of one length (every window but the last is as long)."""
    runs: list[list[tuple[int, int]]] = []
    for a, b in parts:
        if runs and len(runs[-1]) < batch and runs[-1][0][1] - runs[-1][0][0] == b - a:
            runs[-1].append((a, b))
        else:
            runs.append([(a, b)])
    return runs


def predict_scan(model, image: np.ndarray, depth_axis: str, precision: Precision, device="cpu",
                 tile: int | None = None, progress=None) -> np.ndarray:
    """Probabilities (C, rows, cols) in the scan's own pixel frame."""
    probs = predict_canonical(model, to_canonical(image, depth_axis), precision, device, tile, progress=progress)
    return np.stack([from_canonical(p, depth_axis) for p in probs])


def coded_evidence(probs: np.ndarray) -> WindowedEvidence:
    """Whole-picture probabilities (C, H, W) kept as the windowed path keeps its maps: the two paths then differ
    by how the network read the scan, not by the maps' coding (the tracer's ties flip on a 1e-5 change)."""
    maps = {k: CodedMap(encode(probs[0 if probs.shape[0] == 1 else k])) for k in kept_classes(probs.shape[0])}
    return WindowedEvidence(maps, probs_to_mask(probs), 1, None)


def evidence_by_class(probs: np.ndarray) -> dict[int, np.ndarray]:
    """Tracing evidence from class probabilities: a binary model's curve map serves every class
    (key 0); a multiclass model gives one map per curve class."""
    if probs.shape[0] == 1:
        return {0: probs[0]}
    return {k: probs[k] for k in (1, 2, 3)}


def probs_to_mask(probs: np.ndarray, threshold: float = 0.5) -> np.ndarray:
    """Binary: 1 where p > threshold; multiclass: the argmax class."""
    if probs.shape[0] == 1:
        return (probs[0] > threshold).astype(np.uint8)
    return probs.argmax(0).astype(np.uint8)
