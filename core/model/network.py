"""A VeerNet-style encoder-decoder for raster well logs.

Residual convolution stages with skip connections, GroupNorm whose statistics
are fp32 but whose output (and saved input) stay in the 16-bit compute dtype,
and a transformer refinement at the bottleneck that uses
``scaled_dot_product_attention`` with a 2-D sinusoidal position code that
works for any bottleneck size. Input is the canonical wide frame: depth along
the width, amplitude across the height; any size is padded to the stride and
cropped back.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from .norms import GroupNorm16, LayerNorm16, groups_for


def image_to_input(img: np.ndarray) -> np.ndarray:
    """uint8 scan (0 ink, 255 paper) → float32 with ink ≈ 1 and paper ≈ 0."""
    return (255.0 - img.astype(np.float32)) / 255.0


@dataclass
class NetConfig:
    channels: tuple[int, ...] = (16, 32, 48, 64, 96)  # per encoder stage; the last is the bottleneck
    blocks: int = 1  # residual blocks per stage
    attn_dim: int = 128  # transformer embedding dimension at the bottleneck
    attn_heads: int = 4
    attn_layers: int = 1
    mlp_ratio: float = 2.0
    classes: int = 1  # 1 logit (binary) or 4 (background, solid, dashed, dotted)
    preset: str = "custom"

    @property
    def stride(self) -> int:
        return 2 ** (len(self.channels) - 1)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["channels"] = list(self.channels)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "NetConfig":
        d = dict(d)
        d["channels"] = tuple(int(c) for c in d["channels"])
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


PRESETS = {
    # seconds on a CPU: tests
    "tiny": NetConfig(channels=(8, 16, 32), blocks=1, attn_dim=32, attn_heads=2, attn_layers=1, preset="tiny"),
    # minutes on a CPU: the bundled demo model
    # (stride 16 keeps the bottleneck sequence short: 3200 × 480 -> 200 × 30 tokens)
    "demo": NetConfig(channels=(16, 32, 48, 64, 96), blocks=1, attn_dim=128, attn_heads=4, attn_layers=1,
                      preset="demo"),
    # the whitepaper's scale
    "full": NetConfig(channels=(32, 64, 128, 256, 256), blocks=2, attn_dim=128, attn_heads=8, attn_layers=2,
                      preset="full"),
}


def preset(name: str, classes: int = 1) -> NetConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    cfg = NetConfig(**{**asdict(PRESETS[name]), "classes": classes})
    cfg.channels = tuple(cfg.channels)
    return cfg


def norm(channels: int) -> GroupNorm16:
    return GroupNorm16(groups_for(channels), channels)


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.norm1 = norm(cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm2 = norm(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.conv1(self.norm1(x, silu=True))
        h = self.conv2(self.norm2(h, silu=True))
        if torch.is_grad_enabled():
            return self.skip(x) + h
        return h.add_(self.skip(x))  # inference: one full-resolution map fewer alive at the add


class Stage(nn.Module):
    """One encoder or decoder stage: the unit of gradient checkpointing."""

    def __init__(self, blocks: list[nn.Module]):
        super().__init__()
        self.blocks = nn.Sequential(*blocks)

    def forward(self, x):
        return self.blocks(x)


def sincos_2d(h: int, w: int, dim: int, device, dtype) -> torch.Tensor:
    """2-D sinusoidal position code for any grid (h, w): (h*w, dim)."""
    quarter = dim // 4
    freq = torch.exp(-math.log(10000.0) * torch.arange(quarter, device=device, dtype=torch.float32) / quarter)
    ys = torch.arange(h, device=device, dtype=torch.float32)[:, None] * freq[None]
    xs = torch.arange(w, device=device, dtype=torch.float32)[:, None] * freq[None]
    pe_y = torch.cat([ys.sin(), ys.cos()], 1)[:, None, :].expand(h, w, 2 * quarter)
    pe_x = torch.cat([xs.sin(), xs.cos()], 1)[None, :, :].expand(h, w, 2 * quarter)
    pe = torch.cat([pe_y, pe_x], -1).reshape(h * w, 4 * quarter)
    if pe.shape[1] < dim:
        pe = F.pad(pe, (0, dim - pe.shape[1]))
    return pe.to(dtype)


class AttentionLayer(nn.Module):
    """Pre-norm transformer layer over bottleneck tokens; attention via SDPA."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float):
        super().__init__()
        if dim % heads:
            raise ValueError(f"attention dim {dim} is not divisible by {heads} heads")
        self.heads = heads
        self.norm1 = LayerNorm16(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = LayerNorm16(dim)
        hidden = int(dim * mlp_ratio)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):  # (B, L, D)
        b, n, d = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + self.proj(attn.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Bottleneck(nn.Module):
    def __init__(self, channels: int, cfg: NetConfig):
        super().__init__()
        self.res = ResBlock(channels, channels)
        self.norm = norm(channels)
        self.to_tokens = nn.Conv2d(channels, cfg.attn_dim, 1)
        self.layers = nn.ModuleList(
            [AttentionLayer(cfg.attn_dim, cfg.attn_heads, cfg.mlp_ratio) for _ in range(cfg.attn_layers)]
        )
        self.from_tokens = nn.Conv2d(cfg.attn_dim, channels, 1)
        self.dim = cfg.attn_dim

    def forward(self, x):
        x = self.res(x)
        b, c, h, w = x.shape
        t = self.to_tokens(self.norm(x))
        tokens = t.flatten(2).transpose(1, 2)  # (B, h*w, D)
        tokens = tokens + sincos_2d(h, w, self.dim, x.device, tokens.dtype)[None]
        for layer in self.layers:
            tokens = layer(tokens)
        t = tokens.transpose(1, 2).reshape(b, self.dim, h, w)
        return x + self.from_tokens(t)


class VeerNet(nn.Module):
    def __init__(self, cfg: NetConfig):
        super().__init__()
        self.cfg = cfg
        # the precision its weights were trained in (the model file says; ``model_io``): what it reads a scan in
        # unless told otherwise, wherever it reads one (the command, a folder's workers, the app, the evaluations)
        self.trained_precision = "fp32"
        ch = list(cfg.channels)
        self.stem = nn.Conv2d(1, ch[0], 3, padding=1)
        self.encoders = nn.ModuleList()
        self.downs = nn.ModuleList()
        for i, c in enumerate(ch[:-1]):
            self.encoders.append(Stage([ResBlock(c, c) for _ in range(cfg.blocks)]))
            self.downs.append(nn.Conv2d(c, ch[i + 1], 3, stride=2, padding=1))
        self.bottleneck = Bottleneck(ch[-1], cfg)
        self.ups = nn.ModuleList()
        self.decoders = nn.ModuleList()
        for i in range(len(ch) - 1, 0, -1):
            self.ups.append(nn.Conv2d(ch[i], ch[i - 1], 1))
            blocks = [ResBlock(2 * ch[i - 1], ch[i - 1])] + [ResBlock(ch[i - 1], ch[i - 1]) for _ in range(cfg.blocks - 1)]
            self.decoders.append(Stage(blocks))
        self.head_norm = norm(ch[0])
        self.head = nn.Conv2d(ch[0], cfg.classes, 1)
        self.checkpointing = False
        self.fp32_modules: tuple[str, ...] = ()

    def set_checkpointing(self, on: bool) -> None:
        self.checkpointing = bool(on)

    def _run(self, stage: nn.Module, x: torch.Tensor) -> torch.Tensor:
        if self.checkpointing and torch.is_grad_enabled():
            return checkpoint(stage, x, use_reentrant=False)
        return stage(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, 1, H, W) with ink ≈ 1 and paper ≈ 0; returns logits (B, classes, H, W)."""
        h, w = x.shape[-2:]
        s = self.cfg.stride
        ph, pw = (-h) % s, (-w) % s
        if ph or pw:
            x = F.pad(x, (0, pw, 0, ph))  # padding is paper (0)
        x = self.stem(x)
        skips = []
        for enc, down in zip(self.encoders, self.downs):
            x = self._run(enc, x)
            skips.append(x)
            x = down(x)
        x = self._run(self.bottleneck, x)
        for up, dec in zip(self.ups, self.decoders):
            skip = skips.pop()
            # back to the skip's dtype: CUDA autocast runs upsampling in fp32 and returns fp32, the cat would then
            # promote the whole decoder stage to fp32 and every tensor it saves would be twice as large
            # (core/model/autocast_rules.py reproduces CUDA's rules on the CPU for the tests)
            x = up(x)
            if not torch.is_grad_enabled() and x.device.type == "cpu" and _cpu_join().applies(x, skip):
                x = _cpu_join().upsample_join(x, skip)  # the same map in one pass (a CPU's inference)
            else:
                x = F.interpolate(x, size=skip.shape[-2:], mode="nearest").to(skip.dtype)
                x = torch.cat([x, skip], 1)
            del skip  # the joined map holds both halves: neither stays alive through the stage beside it
            x = self._run(dec, x)
        x = self.head_norm(x, silu=True)
        if torch.is_grad_enabled():
            x = self.head(x)
        else:
            # inference: the 1 × 1 head as a product over the channels. oneDNN's 16 → 4 convolution sums in an
            # order that depends on the thread count (3e-6 apart at 1 and 2 threads), the product does not: a
            # scan's maps are the same however many threads read it
            x = F.linear(x.movedim(1, -1), self.head.weight.flatten(1), self.head.bias).movedim(-1, 1)
        return x[..., :h, :w]


def _cpu_join():
    """``core/model/cpu_join.py``, imported at a CPU's first inference (numba's start is no training's cost)."""
    from . import cpu_join

    return cpu_join


def build(cfg: NetConfig) -> VeerNet:
    return VeerNet(cfg)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def encoder_parameters(model: VeerNet) -> list[torch.nn.Parameter]:
    """The contracting half's parameters (stem, encoder stages, downsamplers): what few-shot adapting freezes
    first, so that it trains the decoder only."""
    return [*model.stem.parameters(), *model.encoders.parameters(), *model.downs.parameters()]


def stage_names(model: VeerNet) -> list[str]:
    """Module names that the budget breaks activation memory down by."""
    names = ["stem"]
    names += [f"encoders.{i}" for i in range(len(model.encoders))]
    names += [f"downs.{i}" for i in range(len(model.downs))]
    names += ["bottleneck"]
    names += [f"ups.{i}" for i in range(len(model.ups))]
    names += [f"decoders.{i}" for i in range(len(model.decoders))]
    names += ["head_norm", "head"]
    return names
