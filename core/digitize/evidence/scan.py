"""The evidence a scan gives each line style: a network's maps read in windows, a user's class mask, the ink
colours of a colour print.

Each returns per-class maps in the canonical frame (rows across, columns along depth) in [0, 1] that the
tracers follow (``core/digitize/rules/all_curves.py``), and warnings the run reports."""

from __future__ import annotations

import numpy as np

from core.common.errors import InputError, MemoryCeilingRefusal
from core.digitize.page.frame import to_canonical
from core.io.calibration import Calibration


def model_evidence(model, canon: np.ndarray, calib: Calibration, precision, device, tile: int | None, progress,
                   whole_picture: bool, memory_ceiling: int | None, reference: bool, warnings: list[str],
                   source: str | None, body: tuple[int, int] | None = None
                   ) -> tuple[dict[int, np.ndarray], np.ndarray, dict]:
    """A network's evidence of every line style over a canonical scan, its class mask and its memory plan
    (``core/digitize/job/pipeline.py: digitize`` says what the options do). ``body``: the columns of log body to read
    in windows (``log_sections.picked_body``; the maps are zero outside it), None for every column; a
    whole-picture forward reads every column."""
    from core.digitize.evidence.network import coded_evidence, predict_canonical, predict_windows
    from core.model import precision as prec

    memory: dict = {}
    classes = model.cfg.classes
    if classes not in (1, 4):
        raise InputError(source, f"model has {classes} classes; digitising needs a binary (1) or 4-class model")
    # the model's own precision by default, as the command reads it: the app read in "auto" (bf16 on a CPU
    # with AVX512-BF16) while the command read the bundled model's fp32, two LAS files for one scan
    precision = precision or prec.for_inference("model", model.trained_precision, device)
    if whole_picture:
        coded = coded_evidence(predict_canonical(model, canon, precision, device, progress=progress))
        evidence, mask_c = dict(coded.maps), coded.mask
    else:
        import torch

        from core.digitize.evidence.memory_plan import MemoryCeilingError, plan_memory
        from core.digitize.evidence.network import evidence_band
        from core.model.runtime import torch_runner

        runner = torch_runner(model, precision, device, channels_last=not reference)
        rows = (0, canon.shape[0]) if reference else \
            evidence_band([c.track for c in calib.curves], canon.shape[0], model.cfg)
        try:
            # the reference path reads as earlier releases did: one window at a time
            plan = plan_memory(model.cfg, canon.shape, precision.mode, torch.device(device).type,
                               memory_ceiling, tile, across=rows[1] - rows[0], at_once=1 if reference else None)
        except MemoryCeilingError as exc:
            raise MemoryCeilingRefusal(source, f"{exc}: raise --max-memory or free memory") from None
        memory = plan.as_dict()
        if torch.device(device).type == "cuda" and not reference:  # batched, on the device, one wait at the end
            from core.digitize.evidence.network import predict_windows_batched

            windowed = predict_windows_batched(model, canon, precision, device, plan.window, progress, rows, body)
        else:
            windowed = predict_windows(model, canon, precision, device, plan.window, progress, runner, rows, body,
                                       plan.at_once)
        evidence, mask_c = dict(windowed.maps), windowed.mask
        memory.update(windows=windowed.windows, rows=list(rows), columns=list(body or (0, canon.shape[1])),
                      path="reference" if reference else "fast")
    if classes == 1:
        by_track: dict = {}
        for c in calib.curves:
            by_track.setdefault(c.track, set()).add(c.klass)
        if any(len(v) > 1 for v in by_track.values()):
            warnings.append("a binary model cannot tell curves of one track apart by line style; "
                            "a multiclass model traces crossing curves better")
    return evidence, mask_c, memory


def mask_evidence(mask: np.ndarray, shape: tuple[int, int], calib: Calibration, warnings: list[str],
                  source: str | None) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """Per-class evidence from a class mask: each class's pixels, softened by a sub-pixel blur so the
    centroid refinement finds the stroke's middle. A mask with one class (a binary mask) serves every
    curve; otherwise a curve whose class has no pixels in its track is warned about (and NULL)."""
    import cv2

    if mask.shape != tuple(shape[:2]):
        raise InputError(source, f"mask is {mask.shape[1]} × {mask.shape[0]} but the scan is {shape[1]} × {shape[0]}")
    top = int(mask.max(initial=0))
    if top > 3:
        raise InputError(source, f"mask holds class {top}; classes run 0..3 (0 background, 1 solid, 2 dashed, "
                         "3 dotted)")
    canon = to_canonical(mask, calib.depth_axis)
    present = [k for k in (1, 2, 3) if (canon == k).any()]
    if not present:
        warnings.append("the mask is empty: no curve pixels to trace; every curve is NULL")

    def soft(m: np.ndarray) -> np.ndarray:  # a 1-px line keeps ≥ 0.3 at its centre after the blur
        return cv2.GaussianBlur(m.astype(np.float32), (0, 0), 0.7) / 0.45

    if len(present) == 1 and not any(s.klass == present[0] for s in calib.curves):
        evidence = {0: np.clip(soft(canon > 0), 0.0, 1.0)}  # a binary mask: one map for every curve
    else:
        evidence = {k: np.clip(soft(canon == k), 0.0, 1.0) for k in (1, 2, 3)}
        for c in calib.curves:
            lo, hi = c.track_rows()
            lo, hi = max(0, lo), hi + 1
            if present and not (canon[lo:hi] == c.klass).any():
                warnings.append(f"{c.mnemonic}: the mask has no class-{c.klass} pixels in its track")
    return evidence, (canon > 0).astype(np.uint8) if len(present) <= 1 else canon


def colour_evidence(rgb: np.ndarray | None, shape: tuple[int, ...], calib: Calibration, evidence: dict, found,
                    warnings: list[str], source: str | None) -> dict:
    """Each coloured curve's own evidence (``core/io/colour.py``), or nothing on a grey scan."""
    named = [c.mnemonic for c in calib.curves if c.colour]
    if not named:
        return {}
    if rgb is None:
        warnings.append(f"{', '.join(named)}: the calibration names ink colours but the scan is greyscale; "
                        "traced by line style")
        return {}
    if rgb.shape[:2] != tuple(shape[:2]) or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise InputError(source, f"the colour pixels are {rgb.shape}, not the scan's {tuple(shape[:2])} × 3")
    from core.digitize.evidence.colour import curve_colour_evidence

    by_curve, notes = curve_colour_evidence(to_canonical(rgb, calib.depth_axis), calib, evidence, found)
    warnings += notes
    return by_curve
