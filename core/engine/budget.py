"""The activation budget: measure one training step, predict any size, plan under a ceiling.

M_params + M_grads + M_opt + M_act(W, H, b) ≤ M_device. Parameters, gradients
and AdamW state are fp32 and exact from the parameter count. Activations
(bytes saved for backward) are linear in the padded pixel count of the step's
input: every feature map, the bottleneck's token sequence and SDPA's saved
statistics (flash/memory-efficient backends: linear in sequence length) scale
with it. So a prediction traces two small probe inputs per precision and
lever setting, fits bytes = a + b · padded pixels, and scales. Tiling along
depth trains on strips, so a long log costs what one strip costs.

Levers are taken in the whitepaper's order: 16-bit activations, then gradient
checkpointing, then tiling; never tiling when the other two suffice.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field

import torch

from core.common.errors import InputError
from core.common.vocabulary import GIB
from core.model.autocast_rules import active_rules, autocast_rules, rules_for
from core.model.footprint import fit_in_pixels, padded
from core.model.network import NetConfig, build, stage_names
from core.model.precision import RESOLVED, Precision, resolve

from .memory import SavedTensorMeter, read_peaks, reset_peaks
from .transient import step_transient

MIN_TILE = 256


@dataclass(frozen=True)
class Levers:
    precision: str  # fp32 | bf16 | fp16
    checkpointing: bool = False
    tile: int | None = None  # strip length along depth (px), None = the whole log

    def describe(self) -> str:
        parts = [f"{self.precision} activations"]
        if self.checkpointing:
            parts.append("gradient checkpointing")
        if self.tile:
            parts.append(f"tiling in {self.tile}-px strips")
        return ", ".join(parts)


@dataclass
class Terms:
    params: int
    grads: int
    optimizer: int
    activations: int
    workspace: int | None = None  # transient bytes beyond the saved activations at the step's peak (measured, or
    # predicted from the device's calibration in transient.py)

    @property
    def total(self) -> int:
        return self.params + self.grads + self.optimizer + self.activations + (self.workspace or 0)

    def as_dict(self) -> dict:
        d = {"params": self.params, "grads": self.grads, "optimizer": self.optimizer,
             "activations": self.activations}
        if self.workspace is not None:
            d["workspace"] = self.workspace
        return d


def state_terms(cfg: NetConfig) -> tuple[int, int, int]:
    """fp32 parameters, fp32 gradients, AdamW's two fp32 moments."""
    n = sum(p.numel() for p in build(cfg).parameters())
    return 4 * n, 4 * n, 8 * n


# -- measuring ----------------------------------------------------------------------


def _step_input(width: int, height: int, batch: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.rand(batch, 1, height, width, generator=g)
    y = (torch.rand(batch, height, width, generator=g) < 0.03).long()
    return x.to(device), y.to(device)


def measure_step(cfg: NetConfig, width: int, height: int, levers: Levers, batch: int = 1,
                 device: str | torch.device = "cpu", repeats: int = 1) -> dict:
    """Run real training steps and measure every term (and the step time)."""
    from .losses import loss_for

    dev = torch.device(device)
    torch.manual_seed(0)
    model = build(cfg).to(dev)
    model.set_checkpointing(levers.checkpointing)
    prec = Precision.pinned(levers.precision, dev.type, "benchmark")
    scaler = prec.make_scaler()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = loss_for(cfg.classes)
    w = min(width, levers.tile) if levers.tile else width
    x, y = _step_input(w, height, batch, dev)
    if dev.type == "cuda":
        x = x.contiguous(memory_format=torch.channels_last)
    times, act, rss_rise = [], None, 0
    for _ in range(repeats):
        opt.zero_grad(set_to_none=True)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        reset_peaks(dev, release_heap=True)
        before = read_peaks(dev)
        t0 = time.perf_counter()
        meter = SavedTensorMeter(model, stage_names(model))
        with meter:
            with prec.autocast():
                logits = model(x)
            loss = loss_fn(logits, y)
        (scaler.scale(loss) if scaler else loss).backward()
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        times.append(time.perf_counter() - t0)
        act = meter.count
        after = read_peaks(dev)
        if "rss_peak" in after and "rss" in before:
            # the largest rise over the resident size before a step: the first step's, in practice; later
            # steps reuse what the allocator kept, so their own rise understates what a step needs
            rss_rise = max(rss_rise, after["rss_peak"] - before["rss"])
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    opt_bytes = sum(v.numel() * v.element_size() for st in opt.state.values() for v in st.values()
                    if isinstance(v, torch.Tensor) and v.dim() > 0)
    out = {
        "terms": {"params": params, "grads": params, "optimizer": opt_bytes, "activations": act.total},
        "activations_by_dtype": dict(act.by_dtype),
        "activations_by_stage": dict(act.by_stage),
        "step_times": times,
        "input": [batch, 1, height, w],
    }
    if dev.type == "cuda":
        out["peak"] = after["cuda_peak"]
        out["reserved"] = after["cuda_reserved"]
        out["terms"]["workspace"] = max(0, after["cuda_peak"] - sum(out["terms"].values()))
    else:
        if "rss_peak" in after:
            out["rss_peak_delta"] = rss_rise
            # the parameters were resident before the step; its gradients and optimiser state are made in it
            out["terms"]["workspace"] = max(0, rss_rise - out["terms"]["grads"] - opt_bytes - act.total)
        out["rss_peak"] = after.get("rss_peak")
    del model, opt
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return out


def measure_forward(cfg: NetConfig, width: int, height: int, levers: Levers, batch: int = 1,
                    device: str | torch.device = "cpu") -> dict:
    """Saved-for-backward bytes of one forward, by dtype and by stage, and the forward's time.

    The backward is not needed to count what autograd saves, so this is the
    cheap way to measure activations where a full step is impractical (a
    12,800 × 640 step in bf16 on a CPU without native bf16 takes tens of minutes).
    """
    from .losses import loss_for

    dev = torch.device(device)
    torch.manual_seed(0)
    model = build(cfg).to(dev)
    model.set_checkpointing(levers.checkpointing)
    prec = Precision.pinned(levers.precision, dev.type, "probe")
    x, y = _step_input(width, height, batch, dev)
    t0 = time.perf_counter()
    with SavedTensorMeter(model, stage_names(model)) as meter:
        with prec.autocast():
            logits = model(x)
        loss_for(cfg.classes)(logits, y)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    return {"activations": meter.count.total, "activations_by_dtype": dict(meter.count.by_dtype),
            "activations_by_stage": dict(meter.count.by_stage), "forward_time": time.perf_counter() - t0}


def measure_activations(cfg: NetConfig, width: int, height: int, levers: Levers, batch: int = 1,
                        device: str | torch.device = "cpu") -> int:
    """Saved-for-backward bytes of one forward."""
    return measure_forward(cfg, width, height, levers, batch, device)["activations"]


# -- predicting ---------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _probe_fit(cfg_key: str, precision: str, checkpointing: bool, batch: int, rules: str = "cpu"
               ) -> tuple[float, float]:
    """(a, b) with activation bytes ≈ a + b · padded pixels, from two probe sizes traced on the CPU under the
    target device's autocast ``rules`` (``core/model/autocast_rules.py``: CUDA's save other dtypes than the
    CPU's)."""
    import json

    cfg = NetConfig.from_dict(json.loads(cfg_key))
    s = cfg.stride
    lev = Levers(precision, checkpointing)
    with autocast_rules(rules):
        return fit_in_pixels(lambda h, w: measure_activations(cfg, w, h, lev, batch, "cpu"),
                             ((2 * s, 8 * s), (4 * s, 16 * s)))


def _fit_for(cfg: NetConfig, levers: "Levers", batch: int) -> tuple[float, float]:
    """The probe fit for ``cfg`` and ``levers`` under the autocast rules active now (:func:`device_rules`).

    fp16's probes are bf16's: autocast casts the same operators to the one 16-bit dtype or the other (one list for
    both, on each backend), so a forward saves tensors of the same shapes and the same 2 bytes an element (measured
    equal to the byte for ``tiny`` and ``full``, CPU and CUDA rules, with and without checkpointing:
    ``tests/core/test_budget.py``). On a CPU without fp16 arithmetic the fp16 probes took 2.5-15 s each where
    bf16's took 0.1-0.3 s (``full``, 2-core EPYC): a plan for a bf16 device names its fp16 spill width too."""
    import json

    precision = "bf16" if levers.precision == "fp16" else levers.precision
    return _probe_fit(json.dumps(cfg.to_dict(), sort_keys=True), precision, levers.checkpointing, batch,
                      active_rules())


def device_rules(device: torch.device | str):
    """Predictions inside this context are for ``device``: traced under its autocast rules."""
    return autocast_rules(rules_for(device))


def predict(cfg: NetConfig, width: int, height: int, levers: Levers, batch: int = 1) -> Terms:
    """Predicted terms of one step at width × height without running it (for the device whose rules are active:
    :func:`device_rules`)."""
    params, grads, opt = state_terms(cfg)
    w = min(width, levers.tile) if levers.tile else width
    a, b = _fit_for(cfg, levers, batch)
    pix = padded(height, cfg.stride) * padded(w, cfg.stride)
    # a step's peak holds a transient beyond the saved bytes: a third of them in a bf16 CUDA step, more than them
    # with checkpointing (transient.py, measured per device)
    ta, tb = step_transient(active_rules(), cfg, levers.precision, levers.checkpointing, (a, b / batch))
    return Terms(params, grads, opt, int(round(a + b * pix)), int(round(ta + tb * pix * batch)))


def spill_width(cfg: NetConfig, height: int, levers: Levers, ceiling: int, batch: int = 1) -> int:
    """Widest log (px along depth, a multiple of the stride) whose step fits under ``ceiling``."""
    if levers.tile:
        # a tiled step costs one strip whatever the length: fits any length or none
        return 10**9 if predict(cfg, levers.tile, height, levers, batch).total <= ceiling else 0
    params, grads, opt = state_terms(cfg)
    a, b = _fit_for(cfg, levers, batch)
    ta, tb = step_transient(active_rules(), cfg, levers.precision, levers.checkpointing, (a, b / batch))
    a, b = a + ta, b + tb * batch
    room = ceiling - params - grads - opt - a
    if room <= 0 or b <= 0:
        return 0
    w = room / (b * padded(height, cfg.stride))
    return int(math.floor(w / cfg.stride) * cfg.stride)


@dataclass
class Plan:
    width: int
    height: int
    ceiling: int
    levers: Levers | None  # None: nothing fits
    predicted: Terms | None
    steps: list[dict] = field(default_factory=list)  # each lever tried, in order, and why
    spill: dict[str, dict[str, int]] = field(default_factory=dict)  # mode -> {"plain", "checkpointing"}

    @property
    def fits(self) -> bool:
        return self.levers is not None

    def as_dict(self) -> dict:
        return {
            "width": self.width, "height": self.height, "ceiling": self.ceiling, "fits": self.fits,
            "levers": None if not self.levers else {"precision": self.levers.precision,
                                                     "checkpointing": self.levers.checkpointing,
                                                     "tile": self.levers.tile},
            "summary": self.levers.describe() if self.levers else "does not fit with every lever taken",
            "predicted_total": self.predicted.total if self.predicted else None,
            "headroom": (self.ceiling - self.predicted.total) if self.predicted else None,
            "steps": self.steps, "spill_width": self.spill,
        }


def plan(cfg: NetConfig, width: int, height: int, ceiling: int, precision: str = "bf16",
         checkpointing: str = "auto", tile: str | int = "auto", batch: int = 1,
         precision_fixed: bool = False) -> Plan:
    """Choose the cheapest sufficient levers under ``ceiling`` (bytes).

    ``precision`` is the 16-bit mode this device would use (bf16 or fp16), or
    fp32 to forbid the first lever. ``checkpointing``/``tile``: auto, on/off, or
    a strip length for tile. ``precision_fixed``: the run's precision is set, so
    the first lever is already taken (or refused) and only the others are planned.
    """
    modes = [precision] if precision_fixed else ["fp32"] + ([precision] if precision != "fp32" else [])
    ck_opts = {"auto": [False, True], "on": [True], "off": [False]}[checkpointing]
    # the whitepaper's order: the byte width first (every mode without checkpointing), then checkpointing
    candidates = [Levers(m, False) for m in modes if False in ck_opts]
    candidates += [Levers(modes[-1], True)] if True in ck_opts else []
    steps = []
    chosen = None
    for lev in candidates:
        if tile not in ("auto", "off") and tile is not None:
            break
        t = predict(cfg, width, height, lev, batch)
        ok = t.total <= ceiling
        steps.append({"levers": lev.describe(), "predicted_total": t.total, "fits": ok})
        if ok:
            chosen = (lev, t)
            break
    if chosen is None and tile != "off":
        # tiling: the longest strip that fits with the strongest non-tiling levers
        lev0 = Levers(modes[-1], ck_opts[-1])
        if isinstance(tile, int) or (isinstance(tile, str) and tile.isdigit()):
            strip = int(tile)
        else:
            strip = min(width, spill_width(cfg, height, lev0, ceiling, batch))
            strip = (strip // cfg.stride) * cfg.stride
        if strip >= MIN_TILE or (isinstance(tile, str) and tile.isdigit()):
            lev = Levers(lev0.precision, lev0.checkpointing, strip)
            t = predict(cfg, width, height, lev, batch)
            ok = t.total <= ceiling
            steps.append({"levers": lev.describe(), "predicted_total": t.total, "fits": ok})
            if ok:
                chosen = (lev, t)
        else:
            steps.append({"levers": f"tiling (no strip of at least {MIN_TILE} px fits)", "predicted_total": None,
                          "fits": False})
    spill = {}
    for mode in RESOLVED:
        spill[mode] = {"plain": spill_width(cfg, height, Levers(mode, False), ceiling, batch),
                       "checkpointing": spill_width(cfg, height, Levers(mode, True), ceiling, batch)}
    return Plan(width, height, ceiling, chosen[0] if chosen else None, chosen[1] if chosen else None, steps, spill)


def device_ceiling(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).total_memory)
    from .memory import process_memory

    return int(process_memory()["total"])


def machine_description(device: torch.device) -> str:
    import platform

    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        return f"{p.name} ({p.total_memory / GIB:.0f} GiB, cc {p.major}.{p.minor}), torch {torch.__version__}"
    cpu = platform.processor() or "CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import os

    return f"{cpu} ({os.cpu_count()} cores, torch threads {torch.get_num_threads()}), torch {torch.__version__}"


def default_16bit(device: torch.device) -> str:
    p: Precision = resolve("auto", device)
    if p.mode != "fp32":
        return p.mode
    return "bf16"  # a CPU without native 16-bit still saves half the bytes in bf16


def plan_run(trainer, feasible_only: bool = False) -> None:
    """Plan the levers for the largest step the run ``trainer`` (a :class:`core.engine.train.Trainer`) will take,
    under its ceiling, and take them. ``feasible_only``: the run's levers are its own (set, not auto): only refuse a
    ceiling that no lever can meet, and take nothing (an out-of-memory step still takes the next lever)."""
    cfg = trainer.cfg
    ceiling = int(cfg.ceiling_gib * GIB) if cfg.ceiling_gib else device_ceiling(trainer.device)
    logs = trainer.train_logs or [trainer.sampler.stream.validation(1)[0]]
    height = max(lg.image.shape[0] for lg in logs)
    width = max(lg.image.shape[1] for lg in logs)
    if trainer.crop:
        width = min(width, trainer.crop)
    per_step = 1 if cfg.stage == "binary" else max(1, min(cfg.micro_batch, trainer.logs_per_rank))
    with device_rules(trainer.device):
        found = plan(trainer.model.cfg, width, height, ceiling, precision=trainer.precision.mode,
                     checkpointing="auto" if feasible_only else cfg.checkpointing,
                     tile="auto" if feasible_only else cfg.tile, batch=per_step, precision_fixed=True)
    if found.levers is None:
        raise InputError(None, f"a {width} × {height} step does not fit under the {ceiling / GIB:.2f} GiB "
                         "ceiling with every lever taken; raise --ceiling or use a smaller preset")
    if feasible_only:
        return
    trainer.plan = found
    trainer.model.set_checkpointing(trainer.plan.levers.checkpointing)
    if trainer.plan.levers.tile:
        trainer.crop = trainer.plan.levers.tile
