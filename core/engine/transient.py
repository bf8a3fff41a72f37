"""The transient of a training step: bytes at the step's peak beyond what autograd saves, per device.

The budget counts what a forward saves for backward exactly (``budget.predict``), but a step's peak holds more:
the backward's gradient maps while the next ones are made, the loss's intermediates, on CUDA cuDNN's workspace,
and, with gradient checkpointing, the segment being recomputed. It depends on the device's kernels and
allocator (cuDNN picks its algorithms and workspaces on the device), so it is measured, one batch-1 step per
preset, precision, lever and log length, and was a straight line in the padded pixel count at every length:

- CUDA (``tools/workspace_probe.py``): the peak (``max_memory_allocated``) less the terms, on an NVIDIA H100
  80GB HBM3 (torch 2.11.0+cu130, ``cudnn.benchmark`` off as in training), 2026-11-26, 1,600 to 12,800 × 640 px
  (the tests' ``tiny`` network 800 to 6,400).
  The lines put the predicted peak within 0.7 % of the measured one without checkpointing and within 8 % with
  it (4 % from 3,200 px up). A bf16 ``demo`` step at 12,800 × 640 peaked 2.5 GiB above its 8.0 GiB of saved
  activations; with checkpointing the recomputed segment made the transient larger than what is saved (4.3 GiB
  beside 2.7), so a plan that left it out promised a fit 2.5 times too small.
- CPU (``measure_step``'s resident-size rise, one process a row): on the 2-core AMD EPYC with AVX512-BF16
  (torch 2.13.0+cpu), 2026-11-26, 800 and 1,600 × 640 px (``tiny`` in fp32 to 3,200), as a share of the saved
  activations: within 9 % of the calibration rows' rise from 1,600 px up, up to 24 % under it at 800 px (a
  checkpointed ``tiny`` step measured again: 13-18 % under, its rise varying 5 % run to run). Measured again on
  2026-11-27 (one process a row, 800 and 1,600 × 640): ``tiny``'s shares had risen 8-39 % and were refitted
  (checkpointed fp32 at 1,600 px now +3 %); ``demo``'s refitted within 10 % of these and were kept.
  Without the term a checkpointed ``demo`` step rose 2.1 to 2.3 times the predicted total in fp32, and a bf16
  one 3.7 times: a laptop's plan took checkpointing as a lever that fits where it did not. In bf16 on the CPU
  checkpointing saves a fifth of a step's peak, not two thirds: its recomputation casts back and forth.

A 16-bit step's transient is larger than fp32's on both: its gradients pass through fp32 where autocast
computes norms and upsampling in fp32 (CUDA's rules), or casts back and forth (the CPU's).
"""

from __future__ import annotations

from core.model.network import PRESETS, NetConfig

MIB = 1024**2

# CUDA: (preset, activation width, checkpointing) -> (bytes, bytes per padded pixel of the batch), the peak
# (max_memory_allocated) less the terms on an NVIDIA H100 80GB HBM3, torch 2.11.0+cu130; fp16 steps as bf16
_CUDA_LINES: dict[tuple[str, str, bool], tuple[int, int]] = {
    ("demo", "bf16", False): (74 * MIB, 323),
    ("demo", "bf16", True): (73 * MIB, 548),
    ("demo", "fp32", False): (97 * MIB, 191),
    ("demo", "fp32", True): (92 * MIB, 640),
    ("full", "bf16", False): (101 * MIB, 482),
    ("full", "bf16", True): (219 * MIB, 1145),
    ("full", "fp32", False): (217 * MIB, 128),
    ("full", "fp32", True): (230 * MIB, 1844),  # three lengths: 12,800 px in fp32 with checkpointing not measured
    # the tests' network, 800 to 6,400 x 640 px (tools/workspace_probe.py with PRESETS=tiny); its bf16 transient is
    # 16 times its fp32 one (~3.4 KB a pixel, ~55 KB a bottleneck token) and bends at 6,400 px: the line is 18 %
    # under the 3,200-px step and 6 % over the 6,400-px one. Under 800 x 640 the lines overstate (fp32 at
    # 800 x 128: 78 MiB predicted, 39 measured)
    ("tiny", "bf16", False): (1402 * MIB, 2123),
    ("tiny", "bf16", True): (1400 * MIB, 2232),
    ("tiny", "fp32", False): (68 * MIB, 102),
    ("tiny", "fp32", True): (61 * MIB, 324),
}
_CUDA_LARGEST_CONSTANT = 230 * MIB
# the CPU's transient as a share of the saved activations (a line through the origin: the resident size's rise
# holds no constant worth the name, and one fitted at 800 px and up overstated a 128-px step's by half), per
# (preset, activation width, checkpointing); 2-core AMD EPYC with AVX512-BF16, torch 2.13.0+cpu, one process a row,
# 800 and 1,600 x 640 px (tiny in fp32 to 3,200)
_CPU_SHARE: dict[tuple[str, str, bool], float] = {
    ("demo", "bf16", False): 0.648, ("demo", "bf16", True): 2.949,
    ("demo", "fp32", False): 0.188, ("demo", "fp32", True): 1.337,
    # tiny measured again 2026-11-27 (the same machine and method; the suite's two CPU checks had drifted to 11-17 %
    # under): its shares had risen by 8-39 % (was 1.096, 4.235, 0.274, 1.810); demo's, measured again beside them,
    # fitted within 10 % of these (0.589, 2.72, 0.182, 1.274): kept
    ("tiny", "bf16", False): 1.189, ("tiny", "bf16", True): 4.992,
    ("tiny", "fp32", False): 0.359, ("tiny", "fp32", True): 2.522,
}
# a network that was not measured gets the largest share of its saved activations' bytes per pixel (their slope in
# the budget's probe fit) any measured one showed, so its plan errs on the safe side. CUDA's: the lines' slopes over
# the activations' slopes measured beside them (tools/workspace_probe.py --fit); the CPU's: the table's largest
_CUDA_SHARE_OF_ACTIVATIONS = {("bf16", False): 0.31, ("bf16", True): 1.54, ("fp32", False): 0.091, ("fp32", True): 1.25}
_CPU_LARGEST_SHARE: dict[tuple[str, bool], float] = {}
for (_, _width, _ckpt), _share in _CPU_SHARE.items():
    _CPU_LARGEST_SHARE[(_width, _ckpt)] = max(_share, _CPU_LARGEST_SHARE.get((_width, _ckpt), 0.0))


def step_transient(rules: str, cfg: NetConfig, precision: str, checkpointing: bool,
                   activations: tuple[float, float]) -> tuple[float, float]:
    """(bytes, bytes per padded pixel) a step's peak holds beyond parameters, gradients, optimiser state and
    saved activations, on the device whose autocast ``rules`` the prediction follows ("cuda" or "cpu").
    ``activations``: the saved activations' line (bytes, bytes per padded pixel: the probe fit), which the CPU's
    transient is a share of, and a network no measured row matches gets the largest share measured."""
    width = "fp32" if precision == "fp32" else "bf16"
    measured = _is_the_preset(cfg)
    if rules == "cpu":
        share = _CPU_SHARE.get((cfg.preset, width, checkpointing)) if measured else None
        share = share if share is not None else _CPU_LARGEST_SHARE[(width, checkpointing)]
        return share * activations[0], share * activations[1]
    row = _CUDA_LINES.get((cfg.preset, width, checkpointing)) if measured else None
    if row is not None:
        return float(row[0]), float(row[1])
    return float(_CUDA_LARGEST_CONSTANT), _CUDA_SHARE_OF_ACTIVATIONS[(width, checkpointing)] * activations[1]


def _is_the_preset(cfg: NetConfig) -> bool:
    """The measured rows hold for the preset's own shape (any number of classes: the head is a sliver)."""
    base = PRESETS.get(cfg.preset)
    return base is not None and all(getattr(cfg, f) == getattr(base, f) for f in
                                    ("channels", "blocks", "attn_dim", "attn_heads", "attn_layers", "mlp_ratio"))
