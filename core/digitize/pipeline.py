"""Digitise a scan: evidence (model or classical) → traces → values on the LAS depth grid.

Rotation happens at the boundary: the scan is handed to the network in the
canonical frame, and masks come back in the scan's own frame.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from core.common.errors import InputError
from core.io.calibration import Calibration, Section
from core.io.las_io import LasCurve, write_las

from .all_curves import trace_all
from .classical import ink_map
from .confidence import LOW_CONFIDENCE, trace_to_confidence
from .frame import from_canonical, to_canonical
from .grid import detect_grid, track_bands
from .log_sections import null_outside_body, picture_body
from .scan_evidence import colour_evidence, mask_evidence, model_evidence
from .trace import Trace, TraceParams, model_params, trace_to_values

MIN_TRACK_PX = 40  # narrower, and a grid line or a pen width is a large share of the track


@dataclass
class DigitizeResult:
    depth: np.ndarray
    values: dict[str, np.ndarray]
    traces: list[Trace]
    mask: np.ndarray  # scan frame: class per pixel (binary model / classical: 0/1)
    method: str
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    memory: dict = field(default_factory=dict)  # the network's memory plan (``core/digitize/infer.py: MemoryPlan``)
    # per curve and depth sample: how far its value can be trusted, in [0, 1], NaN where it is NULL
    # (``core/digitize/confidence.py``); empty for a result read back from a LAS without it
    confidence: dict[str, np.ndarray] = field(default_factory=dict)
    others: list = field(default_factory=list)  # (LAS suffix, result) of the scan's other sections, if any


def digitize(
    image: np.ndarray,
    calib: Calibration,
    *,
    model=None,
    precision=None,
    device="cpu",
    tile: int | None = None,
    params: TraceParams | None = None,
    progress: Callable[[int, int], None] | None = None,
    source: str | None = None,
    grid: bool = True,
    mask: np.ndarray | None = None,
    rgb: np.ndarray | None = None,
    whole_picture: bool = False,
    memory_ceiling: int | None = None,
    reference: bool = False,
) -> DigitizeResult:
    """Trace every calibrated curve of ``image`` and sample it on the LAS depth grid.

    ``grid``: damp the evidence on the printed grid found in the image (``core/digitize/grid.py``); off only to
    measure what the damping buys. ``mask``: a class mask in the scan's frame (a hand-corrected label)
    to trace instead of any model or ink: the user's mask is the truth they have, so it is followed as
    painted, with no grid damping. ``rgb``: the scan's colour pixels (scan frame), for the curves whose
    calibration names an ink ``colour`` (``core/io/colour.py``); ignored when tracing a mask. A network reads the
    scan in windows along depth (``core/digitize/infer.py``) of ``tile`` px (default: the training crop, 1,024),
    its maps kept two bytes a pixel, the window shortened where a memory ceiling (``memory_ceiling`` bytes,
    default: 90 % of the memory available) requires it; ``whole_picture`` reads it in one forward instead (the
    memory grows with the scan's area: ~0.6 GiB a megapixel), to compare against. The network reads the band of
    rows the calibrated tracks need (``core/digitize/infer.py: evidence_band``) in PyTorch's channels-last layout
    (``core/model/runtime.py``); ``reference`` reads every row in the default layout instead, the path of earlier
    releases, to compare against. ``precision``: the network's (default: the one it was trained in, as
    ``welltrace digitize`` reads it, so the app, a folder's workers and the command write the same LAS)."""
    canon = _checked_canonical(image, calib, source)
    warnings, memory = [], {}
    t0 = time.perf_counter()
    grid = grid and mask is None  # the user's mask is followed as painted: no grid damping
    ink, found, body = _ink_grid_body(canon, calib, grid, mask is None)
    t_grid = time.perf_counter()
    if mask is not None:
        evidence, mask_c = mask_evidence(mask, image.shape, calib, warnings, source)
        method = "mask"
        params = replace(params or TraceParams(), ink_checks=False)  # the user's labels, followed as painted
        if progress:
            progress(1, 1)
    elif model is not None:
        # a picture read whole: the network reads its log body alone (the rest is written NULL below), as it
        # reads a section's
        evidence, mask_c, memory = model_evidence(model, canon, calib, precision, device, tile, progress,
                                                  whole_picture, memory_ceiling, reference, warnings, source, body)
        method = "model"
    else:
        from .classical import evidence as classical_evidence

        ev = classical_evidence(canon)
        evidence = {0: ev}
        mask_c = (ev > 0.4).astype(np.uint8)
        method = "classical"
        if progress:
            progress(1, 1)
    t1 = time.perf_counter()
    by_curve = colour_evidence(rgb, image.shape, calib, evidence, found, warnings, source) if mask is None else {}
    if method == "model":
        params = model_params(params)
    traces = trace_all(evidence, calib, params, found, by_curve, ink, body[0] if body else 0)
    if body:
        warnings.append(null_outside_body(traces, body, calib))
    if by_curve:
        method += " + ink colour"
    t2 = time.perf_counter()
    depth = calib.depth_grid(calib.depth_length(image.shape))
    values = {tr.mnemonic: trace_to_values(tr, spec, calib, depth) for tr, spec in zip(traces, calib.curves)}
    confidence = {tr.mnemonic: trace_to_confidence(tr, calib, values[tr.mnemonic], depth) for tr in traces}
    warnings += _same_style_meetings(traces, calib, set(by_curve)) + _uncertain_levels(traces, calib)
    warnings += [f"{name}: no evidence of the curve anywhere in its track; written as NULL"
                 for name, v in values.items() if not np.isfinite(v).any()]
    return DigitizeResult(depth, values, traces, from_canonical(mask_c, calib.depth_axis), method,
                          {"evidence_s": t1 - t_grid, "grid_s": t_grid - t0, "trace_s": t2 - t1}, warnings, memory,
                          confidence=confidence)


def _ink_grid_body(canon: np.ndarray, calib: Calibration, grid: bool, inked: bool):
    """The scan's darkness (a byte a pixel, for the pens' patterns: ``pen_pattern.py``; None for a user's mask),
    its grid (``grid.py``; None without grid damping) and the stretch of log body a picture read whole has
    (``log_sections.picture_body``), read once, before the evidence: the network reads that stretch alone."""
    dark = ink_map(canon) if inked else None
    found = detect_grid(canon, track_bands(calib, canon.shape[0]), dark=dark) if grid else None
    ink = None if dark is None else np.multiply(dark, 255.0, out=dark).astype(np.uint8)
    del dark
    return ink, found, picture_body(ink, found, calib)


def _checked_canonical(image: np.ndarray, calib: Calibration, source: str | None) -> np.ndarray:
    """The scan in the canonical frame, once it is known to fit the calibration, its tracks wide enough to trace
    and its picture not blank."""
    calib.check_fits(image.shape, source)
    for i, c in enumerate(calib.curves):
        if c.track_width < MIN_TRACK_PX:
            raise InputError(source, f"curves[{i}] ({c.mnemonic}): its track is {c.track_width:.0f} px wide; "
                             f"tracing needs at least {MIN_TRACK_PX} px across a track (scan at a higher "
                             "resolution, or check the track ends in the calibration)")
    canon = to_canonical(image, calib.depth_axis)
    # ink is what is well darker than the paper: a print in light colours may have no pixel darker than mid-grey.
    # The paper is the bright level (90th percentile), not the median: a dense dark grid can cover more than half
    # the page, and its grey then passed for the paper and the scan for blank
    paper = float(np.percentile(canon[:: max(1, canon.shape[0] // 64), :: max(1, canon.shape[1] // 512)], 90))
    if float((canon < paper - 48.0).mean()) < 1e-4 or int(canon.max()) - int(canon.min()) < 16:
        raise InputError(source, "the scan is blank: no ink to trace")
    return canon


def _same_style_meetings(traces: list[Trace], calib: Calibration, by_colour: set[int]) -> list[str]:
    """Where curves of one line style in one track meet, which is which afterwards is uncertain
    (``core/digitize/crossings.py``): name the depths, so the user checks them and swaps where needed. Curves told
    apart by their ink colour (``by_colour``) are not uncertain."""
    from .crossings import meeting_columns, same_style_groups

    out = []
    for idx in same_style_groups(calib.curves, skip=by_colour):
        cols = meeting_columns([traces[i] for i in idx])
        if not cols:
            continue
        depths = calib.depth_at(np.asarray(cols, np.float64))
        names = " and ".join(calib.curves[i].mnemonic for i in idx)
        shown = ", ".join(f"{d:.1f}" for d in depths[:6]) + (" …" if len(cols) > 6 else "")
        out.append(f"{names} share one line style in one track and meet at {len(cols)} place(s) ({shown} "
                   f"{calib.depth_unit}): which is which after a meeting is uncertain; check there and fix with "
                   "Swap curves over a range")
    return out


def _uncertain_levels(traces: list[Trace], calib: Calibration) -> list[str]:
    """The depth ranges where a backup-scale curve's scale could not be told from the ink
    (``core/digitize/wraps.py: two_level_wraps``): flagged low-confidence, named here so the user checks them."""
    from .runs import true_runs

    out = []
    for tr in traces:
        if tr.level_unsure is None or not tr.level_unsure.any():
            continue
        a, b = true_runs(tr.level_unsure)
        spans = [calib.depth_at(np.array([x, y - 1], np.float64)) for x, y in zip(a, b)]
        shown = ", ".join(f"{min(s):.1f}–{max(s):.1f}" for s in spans[:6]) + (" …" if len(spans) > 6 else "")
        out.append(f"{tr.mnemonic}: main or backup scale uncertain over {shown} {calib.depth_unit} (a crossing of "
                   "the track's edge was missed); flagged low-confidence: check the QC picture there")
    return out


def result_from_las(path: str | Path, calib: Calibration, shape: tuple[int, int]) -> DigitizeResult | None:
    """A digitised LAS read back as a result (its values, and traces placed on the scan through the
    calibration), so a scan opened again shows the curves it was digitised into; None when the LAS does not
    hold every curve of the calibration (it was written for another one: digitise again)."""
    from core.io.las_io import read_las

    las = read_las(path)
    by_name = {c.mnemonic.upper(): c.values for c in las.curves}
    if any(c.mnemonic.upper() not in by_name for c in calib.curves) or not calib.curves:
        return None
    cols = calib.depth_length(shape)
    col_depth = calib.depth_at(np.arange(cols, dtype=np.float64))
    values, traces, confidence = {}, [], {}
    order = np.argsort(las.depth)
    for spec in calib.curves:
        v = by_name[spec.mnemonic.upper()]
        values[spec.mnemonic] = v
        if confidence_mnemonic(spec.mnemonic).upper() in by_name:
            confidence[spec.mnemonic] = by_name[confidence_mnemonic(spec.mnemonic).upper()]
        known = np.isfinite(v[order])
        at_col = np.full(cols, np.nan)
        if known.sum() >= 2:
            d, vv = las.depth[order][known], v[order][known]
            at_col = np.interp(col_depth, d, vv, left=np.nan, right=np.nan)
            # a NULL stretch stays a gap on the scan: columns far from any written sample are left empty
            near = np.interp(col_depth, las.depth[order], known.astype(np.float64), left=0.0, right=0.0) > 0.5
            at_col = np.where(near, at_col, np.nan)
        pos, wraps = spec.position_of(at_col)
        observed = np.isfinite(pos)
        wraps = np.nan_to_num(np.asarray(wraps, np.float64)).astype(np.int64)
        traces.append(Trace(spec.mnemonic, pos, wraps, observed.astype(np.float32), observed))
    method = "digitised LAS"
    for line in las.other.splitlines():
        if line.lower().startswith("method"):
            method = line.split(":", 1)[-1].strip() or method
    return DigitizeResult(las.depth, values, traces, np.zeros(shape, np.uint8), method, confidence=confidence)


CONFIDENCE_SUFFIX = "_CONF"


def confidence_mnemonic(mnemonic: str) -> str:
    """The LAS mnemonic of a curve's confidence: ``GR`` → ``GR_CONF``."""
    return f"{mnemonic}{CONFIDENCE_SUFFIX}"


def write_result(path: str | Path, result: DigitizeResult, calib: Calibration, source_scan: str,
                 model_name: str | None, well: dict[str, str] | None = None) -> None:
    curves = [LasCurve(c.mnemonic, c.unit, c.description, result.values[c.mnemonic]) for c in calib.curves]
    # each curve's confidence beside it, so the LAS says where a value is unsure rather than hide it: a reader
    # keeps every value and can filter on the confidence (below LOW_CONFIDENCE the QC picture tints it)
    curves += [LasCurve(confidence_mnemonic(c.mnemonic), "", f"confidence of {c.mnemonic} (0-1; below "
                        f"{LOW_CONFIDENCE:g} uncertain)", result.confidence[c.mnemonic])
               for c in calib.curves if c.mnemonic in result.confidence]
    write_las(path, result.depth, curves, depth_unit=calib.depth_unit, step=calib.step, well=well,
              provenance={"source scan": source_scan, "model": model_name or "classical tracer",
                          "method": result.method})


def _cut(arr: np.ndarray | None, axis: str, start: int, stop: int) -> np.ndarray | None:
    if arr is None:
        return None
    return arr[start:stop] if axis == "y" else arr[:, start:stop]


def digitize_sections(image: np.ndarray, calib: Calibration, only: int | None = None, *, source: str | None = None,
                      mask: np.ndarray | None = None, rgb: np.ndarray | None = None, **kwargs
                      ) -> list[tuple[str, Section | None, DigitizeResult]]:
    """:func:`digitize` over each log section of the calibration (``core/io/calibration.py: Section``): the scan
    cut to the section's span along depth, traced with the section's picks; header, tail and the stretches
    between sections are never read. Returns (LAS suffix, section, result) per section, ``only`` the given
    index; a calibration without sections gives one part, the whole picture, as before."""
    if only is not None and not 0 <= only < len(calib.sections):
        raise InputError(source, f"there is no section {only + 1}: the calibration has "
                         + (f"{len(calib.sections)}" if calib.sections else "none (the whole picture is one log)"))
    if not calib.sections:
        return [("", None, digitize(image, calib, source=source, mask=mask, rgb=rgb, **kwargs))]
    length = calib.depth_length(image.shape)
    names = calib.section_files()
    out = []
    for i in ([only] if only is not None else range(len(calib.sections))):
        sec = calib.sections[i]
        if sec.start >= length - 1:
            raise InputError(source, f"sections[{i}].span starts at {sec.start} px, past the scan's {length} px "
                             "along depth")
        a, b = sec.start, min(sec.stop, length)
        res = digitize(_cut(image, calib.depth_axis, a, b), calib.section_calibration(i),
                       source=f"{source or 'scan'} (section {i + 1}, {sec.kind})",
                       mask=_cut(mask, calib.depth_axis, a, b), rgb=_cut(rgb, calib.depth_axis, a, b), **kwargs)
        if sec.stop > length:  # said, not cut in silence: the calibration may belong to a longer scan
            res.warnings.append(f"sections[{i}].span ends at {sec.stop} px, past the scan's {length} px along depth: "
                                f"read to the scan's end")
        out.append((names[i], sec, res))
    return out


def las_path_for(out: str | Path, suffix: str) -> Path:
    """``OUT.las`` for the main pass, ``OUT.repeat.las`` and the like for the other sections."""
    out = Path(out)
    return out if not suffix else out.with_name(f"{out.stem}.{suffix}{out.suffix or '.las'}")


def in_scan_frame(parts: list[tuple[str, object, DigitizeResult]], calib: Calibration,
                  shape: tuple[int, int]) -> DigitizeResult:
    """The main part placed on the whole scan (for viewing): its traces padded with gaps outside its section,
    every section's class mask in place; its depths and values as they are."""
    _, sec, main = next((p for p in parts if p[0] == ""), parts[0])
    if sec is None:
        return main
    length = calib.depth_length(shape)
    full_mask = np.zeros(shape, np.uint8)
    for _, s, res in parts:
        _cut(full_mask, calib.depth_axis, s.start, min(s.stop, length))[...] = res.mask  # a view: written in place
    b = min(sec.stop, length)

    def pad(arr: np.ndarray, fill) -> np.ndarray:
        out = np.full(length, fill, dtype=arr.dtype)
        out[sec.start:b] = arr
        return out

    traces = [Trace(t.mnemonic, pad(t.position, np.nan), pad(t.wraps, 0), pad(t.confidence, 0),
                    pad(t.observed, False)) for t in main.traces]
    return DigitizeResult(main.depth, main.values, traces, full_mask, main.method, main.timings, main.warnings,
                          main.memory, confidence=main.confidence)
