"""What one inference forward of the network holds in memory at its peak, measured and predicted.

Training's budget (``core/engine/budget.py``) counts the bytes autograd *saves*; an inference forward
saves nothing, and what breaches a laptop is the peak of the tensors *alive at once* (a stage's input,
its norm, activation and convolution outputs, the skips the decoder still needs). :class:`LiveTensorMeter`
follows every tensor storage an operator allocates until Python's last reference to it goes, and
reports the peak of their sum: a count, independent of the allocator, the C heap and whatever else the
process holds, so the same probe gives the same figure on every machine.

The peak is linear in the padded pixel count of the input (every map scales with it; the bottleneck's
token sequence too, and SDPA's flash kernel is linear in its length), so — as the training budget does —
two small probes fit bytes = a + b · pixels and any window is predicted from them.
:func:`window_for` turns a memory ceiling into the longest window along depth whose peak fits.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import weakref
from pathlib import Path
from typing import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .network import NetConfig, build
from .runtime import probabilities

_CONVOLUTIONS = (torch.ops.aten.conv2d, torch.ops.aten.convolution, torch.ops.aten.mkldnn_convolution,
                 torch.ops.aten._convolution)


class LiveTensorMeter(TorchDispatchMode):
    """Peak bytes of the tensor storages alive at once while it is active (allocated inside it)."""

    def __init__(self):
        super().__init__()
        self.current = 0
        self.peak = 0
        self._alive: dict[int, int] = {}
        self._refs: list[weakref.ref] = []

    def _freed(self, key: int, _ref) -> None:
        self.current -= self._alive.pop(key, 0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self._count(out)
        if func.overloadpacket in _CONVOLUTIONS:
            # the CPU's convolution (oneDNN) reorders its input into a blocked layout: a copy that is no tensor,
            # alive while the operator runs. Measured against the resident rise of a demo forward less the first
            # forward's fixed 114 MiB (fp32, 1,024 px along depth; 640 / 1,664 px across): 337 / 894 MiB; this
            # count 360 / 936 (without the copy 280 / 728; counting the output's copy too, 400 / 1,040)
            # An input in channels-last (NHWC, how inference runs: core/model/runtime.py) is read as it is: no copy
            x = args[0]
            if not x.is_contiguous(memory_format=torch.channels_last):
                self.peak = max(self.peak, self.current + x.untyped_storage().nbytes())
        return out

    def _count(self, out) -> None:
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                continue
            st = t.untyped_storage()
            key = st.data_ptr()
            if key in self._alive or st.nbytes() == 0:
                continue  # a view of, or an in-place write to, a storage already counted
            self._alive[key] = st.nbytes()
            self.current += st.nbytes()
            self.peak = max(self.peak, self.current)
            self._refs.append(weakref.ref(st, functools.partial(self._freed, key)))


def receptive_radius(cfg: NetConfig) -> int:
    """Input pixels on either side of an output pixel that its convolutions can see.

    Every 3 × 3 convolution adds one input-resolution step of its level on each side, a nearest-neighbour
    upsample up to one step of the coarser level (its alignment). The network's GroupNorm statistics and the
    bottleneck's attention read the whole input and have no finite radius: this is the part a window can
    reproduce exactly, and an overlap twice this wide makes stitching exact for every layer but those.
    """
    levels = len(cfg.channels) - 1
    radius, step = 1, 1  # the stem
    for _ in range(levels):
        radius += 2 * cfg.blocks * step + step  # the stage's convolutions, then the strided one
        step *= 2
    radius += 2 * step  # the bottleneck's residual block
    for _ in range(levels):
        radius += step  # nearest upsampling's alignment
        step //= 2
        radius += 2 * cfg.blocks * step
    return radius


def measure_inference_peak(model: torch.nn.Module, height: int, width: int, precision) -> int:
    """Peak live bytes of one inference forward on a height × width (canonical) input, its output included, laid
    out as inference runs it on the CPU (channels-last, ``core/model/runtime.py``)."""
    x = torch.rand(1, 1, height, width, generator=torch.Generator().manual_seed(0))
    if precision.device_type == "cpu":
        model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.inference_mode(), precision.autocast(), LiveTensorMeter() as meter:
        out = model(x)
        probs = probabilities(out)
        del out, probs
    return meter.peak


# What decides which tensors an inference forward allocates: the network, its norms, the runtime's probabilities,
# the autocast rules and the meter itself. A change to any of them is another fit (:func:`_fit_cache_file`).
_FORWARD_SOURCES = ("network.py", "norms.py", "cpu_group_norm.py", "cpu_join.py", "runtime.py", "precision.py",
                    "autocast_rules.py", "footprint.py")


def _fit_cache_file(cfg_key: str, precision_mode: str, device_type: str) -> Path:
    """Where a fit is kept across processes: keyed by the network's configuration, the precision, the device, this
    PyTorch and the CPU features it dispatches on, and the source of the forward's modules."""
    from platformdirs import user_cache_dir

    h = hashlib.sha256(f"{cfg_key};{precision_mode};{device_type};{torch.__version__};"
                       f"{torch.backends.cpu.get_cpu_capability()};".encode())
    here = Path(__file__).parent
    for name in _FORWARD_SOURCES:
        h.update((here / name).read_bytes())
    root = Path(os.environ.get("WELLTRACE_CACHE") or user_cache_dir("welltrace"))
    return root / "inference-fit" / f"{h.hexdigest()[:24]}.json"


def _cached_fit(path: Path) -> tuple[float, float] | None:
    try:
        got = json.loads(path.read_text(encoding="utf-8"))
        a, b = float(got["a"]), float(got["b"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (a, b) if math.isfinite(a) and math.isfinite(b) and b > 0 else None


def _keep_fit(path: Path, fit: tuple[float, float]) -> None:
    """Write the fit for the next process; a cache that cannot be written only costs that process the probes."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"a": fit[0], "b": fit[1]}), encoding="utf-8")
        os.replace(tmp, path)


@functools.lru_cache(maxsize=16)
def _fit(cfg_key: str, precision_mode: str, device_type: str) -> tuple[float, float]:
    """The probes' fit, measured once per configuration and kept on disk: the two probe forwards under the meter
    and the ``torch._dynamo`` import its dispatch mode pulls in took 3.8-8.0 s of every ``digitize``'s start and
    85 MiB of its resident size (the bundled model, bf16, the 2-core EPYC at load ~5; kept: 0.6-1.8 s with
    :func:`load_forward`, docs/benchmarks.md, issue #64), and the count is the same in every process."""
    path = _fit_cache_file(cfg_key, precision_mode, device_type)
    fit = _cached_fit(path)
    if fit is None:
        fit = _measure_fit(cfg_key, precision_mode, device_type)
        _keep_fit(path, fit)
    return fit


def _measure_fit(cfg_key: str, precision_mode: str, device_type: str) -> tuple[float, float]:
    from .precision import Precision

    cfg = NetConfig.from_dict(json.loads(cfg_key))
    torch.manual_seed(0)
    model = build(cfg).eval()
    prec = Precision(precision_mode, device_type, "inference probe")
    s = cfg.stride
    return fit_in_pixels(lambda h, w: measure_inference_peak(model, h, w, prec), ((4 * s, 8 * s), (8 * s, 16 * s)))


def fit_in_pixels(measure: Callable[[int, int], int], probes: tuple[tuple[int, int], tuple[int, int]]
                  ) -> tuple[float, float]:
    """(a, b) with bytes ≈ a + b · pixels through two probes (height, width) that ``measure(height, width)``
    counts: how the training budget and the inference footprint both scale a small measurement to any size."""
    (h1, w1), (h2, w2) = probes
    m1, m2 = measure(h1, w1), measure(h2, w2)
    b = (m2 - m1) / (h2 * w2 - h1 * w1)
    return m1 - b * h1 * w1, b


def padded(n: int, stride: int) -> int:
    """``n`` rounded up to the network's stride (the network pads its input so)."""
    return int(math.ceil(n / stride) * stride)


def inference_fit(cfg: NetConfig, precision_mode: str, device_type: str = "cpu") -> tuple[float, float]:
    """(a, b): peak bytes of an inference forward ≈ a + b · padded input pixels."""
    return _fit(json.dumps(cfg.to_dict(), sort_keys=True), precision_mode, device_type)


def load_forward(cfg: NetConfig, precision_mode: str, device_type: str = "cpu") -> None:
    """The fit (:func:`inference_fit`) and one forward of a network of ``cfg`` on a picture two strides by four, once
    per process: the first forward's fixed memory (oneDNN's code and the compiled norm's, ~145 MiB on the 2-core
    EPYC) is then in the resident size a memory plan reads after this, as it was when the probes ran in every
    process; with the fit kept on disk it costs a few hundredths of a second."""
    inference_fit(cfg, precision_mode, device_type)
    _forward_once(json.dumps(cfg.to_dict(), sort_keys=True), precision_mode, device_type)


@functools.lru_cache(maxsize=16)
def _forward_once(cfg_key: str, precision_mode: str, device_type: str) -> None:
    from .precision import Precision

    cfg = NetConfig.from_dict(json.loads(cfg_key))
    with torch.random.fork_rng(devices=[]):  # its weights' draws leave the caller's random state as it was
        model = build(cfg).eval()
    prec = Precision(precision_mode, device_type, "first forward")
    x = torch.zeros(1, 1, 2 * cfg.stride, 4 * cfg.stride)
    if device_type == "cpu":
        model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.inference_mode(), prec.autocast():
        probabilities(model(x))


def predict_inference_peak(cfg: NetConfig, height: int, width: int, precision_mode: str,
                           device_type: str = "cpu") -> int:
    """Predicted peak live bytes of one inference forward over a height × width window."""
    a, b = inference_fit(cfg, precision_mode, device_type)
    return int(round(a + b * padded(height, cfg.stride) * padded(width, cfg.stride)))


# A forward whose blocks come from a C heap kept between windows (``core/common/sysmem.py: freed_blocks_reused``,
# what ``digitize`` does on glibc's main thread) holds more than its live tensors: the heap grows wherever a block
# does not fit the free chunks the windows before left, and keeps its span for the whole reading. Measured: the
# main arena's rise (``mallinfo2``) over 13 windows of the bundled model (bf16, channels-last) ÷ the forward's
# live-tensor peak (:func:`predict_inference_peak`), each shape in a fresh process, 1 and 2 threads, 2-core EPYC
# (docs/benchmarks.md, issue #64, sixth round): 1.44-2.02 over band heights of 384-1,664 px and windows of
# 1,152-2,048 px (KGS's 1,088 × 1,152: 1.52-1.59), settled by the third window in every run. The most, and the
# 5 % the plan's test allows for the allocator's noise: a prediction under the span would breach the ceiling
HEAP_SPAN_RATIO = 2.1


def predict_forward_span(cfg: NetConfig, height: int, width: int, precision_mode: str, device_type: str = "cpu",
                         heap_kept: bool = False) -> int:
    """What one window's forward holds at its peak: its live tensors (:func:`predict_inference_peak`), or, where
    its heap is kept between windows (``heap_kept``), the span that heap keeps for the whole reading."""
    live = predict_inference_peak(cfg, height, width, precision_mode, device_type)
    return int(round(HEAP_SPAN_RATIO * live)) if heap_kept else live


def window_for(cfg: NetConfig, height: int, room: int, precision_mode: str, device_type: str = "cpu",
               heap_kept: bool = False) -> int:
    """The longest window along depth (a multiple of the stride) whose forward's peak fits in ``room`` bytes
    (:func:`predict_forward_span`); 0 when not even one stride does."""
    if heap_kept:
        room = int(room / HEAP_SPAN_RATIO)
    a, b = inference_fit(cfg, precision_mode, device_type)
    if b <= 0 or room <= a:
        return 0
    w = (room - a) / (b * padded(height, cfg.stride))
    return max(0, int(math.floor(w / cfg.stride)) * cfg.stride)
