"""The transient of a CUDA training step: bytes at the step's peak beyond what autograd saves.

The budget counts what a forward saves for backward exactly (``budget.predict``), but a CUDA step's peak holds
more: the backward's gradient maps while the next ones are made, cuDNN's workspace, the loss's intermediates
and, with gradient checkpointing, the segment being recomputed. None of it can be traced on the CPU (cuDNN
picks its algorithms and workspaces on the device), so it is measured: on an NVIDIA H100 80GB HBM3 (torch
2.11.0+cu130, ``cudnn.benchmark`` off as in training), 2026-11-26, one batch-1 step per preset, precision,
lever and log length (1,600 to 12,800 × 640 px), by ``tools/workspace_probe.py``. At every length the
transient was a straight line in the padded pixel count; these lines put the predicted peak within 0.7 % of
the measured one without checkpointing and within 8 % with it (4 % from 3,200 px up).

What it showed: the transient is no small constant. A bf16 ``demo`` step at 12,800 × 640 peaked 2.5 GiB above
its 8.0 GiB of saved activations (a third more); with checkpointing the recomputed segment makes the transient
larger than what is saved (4.3 GiB beside 2.7), so a plan that left it out promised a fit 2.5 times too small.
A 16-bit step's transient is larger than fp32's: its gradients pass through fp32 where CUDA's autocast
computes norms and upsampling in fp32.
"""

from __future__ import annotations

from core.model.network import PRESETS, NetConfig

MIB = 1024**2

# (preset, activation width, checkpointing) -> (bytes, bytes per padded pixel of the batch); fp16 steps as bf16
_MEASURED: dict[tuple[str, str, bool], tuple[int, int]] = {
    ("demo", "bf16", False): (74 * MIB, 323),
    ("demo", "bf16", True): (73 * MIB, 548),
    ("demo", "fp32", False): (97 * MIB, 191),
    ("demo", "fp32", True): (92 * MIB, 640),
    ("full", "bf16", False): (101 * MIB, 482),
    ("full", "bf16", True): (219 * MIB, 1145),
    ("full", "fp32", False): (217 * MIB, 128),
    ("full", "fp32", True): (230 * MIB, 1844),  # three lengths: 12,800 px in fp32 with checkpointing not measured
}
# the same, as a share of the saved activations' bytes per pixel (their slope in the budget's probe fit):
# a network that was not measured gets the largest share any measured one showed, so its plan errs on the safe side
_SHARE_OF_ACTIVATIONS = {("bf16", False): 0.31, ("bf16", True): 1.54, ("fp32", False): 0.091, ("fp32", True): 1.25}
_LARGEST_CONSTANT = 230 * MIB


def cuda_transient(cfg: NetConfig, precision: str, checkpointing: bool, activation_slope: float
                   ) -> tuple[float, float]:
    """(bytes, bytes per padded pixel) the step's CUDA peak holds beyond parameters, gradients, optimiser state
    and saved activations. ``activation_slope``: the saved activations' bytes per padded pixel (the probe fit),
    used for a network no preset row matches."""
    width = "fp32" if precision == "fp32" else "bf16"
    row = _MEASURED.get((cfg.preset, width, checkpointing))
    if row is not None and _is_the_preset(cfg):
        return float(row[0]), float(row[1])
    return float(_LARGEST_CONSTANT), _SHARE_OF_ACTIVATIONS[(width, checkpointing)] * activation_slope


def _is_the_preset(cfg: NetConfig) -> bool:
    """The measured rows hold for the preset's own shape (any number of classes: the head is a sliver)."""
    base = PRESETS.get(cfg.preset)
    return base is not None and all(getattr(cfg, f) == getattr(base, f) for f in
                                    ("channels", "blocks", "attn_dim", "attn_heads", "attn_layers", "mlp_ratio"))
