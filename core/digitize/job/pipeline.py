"""Digitise a scan: evidence (model or classical) → traces → values on the LAS depth grid.

Rotation happens at the boundary: the scan is handed to the network in the
canonical frame, and masks come back in the scan's own frame.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from core.common.errors import InputError
from core.digitize.evidence.scan import colour_evidence, mask_evidence, model_evidence
from core.digitize.job.reading_warnings import reading_warnings
from core.digitize.output.result import DigitizeResult
from core.digitize.output.values import sample_flags, trace_to_confidence, trace_to_values
from core.digitize.page.frame import from_canonical, to_canonical
from core.digitize.page.grid import detect_grid, track_bands
from core.digitize.page.ink import ink_map
from core.digitize.page.sections import null_outside_body, picture_body
from core.digitize.rules.all_curves import trace_all
from core.digitize.rules.confidence_model import calibrator_beside, calibrator_for, confidence_basis
from core.digitize.rules.passes import mark
from core.digitize.trace.params import Trace, TraceParams, model_params
from core.io.calibration import Calibration, Section


@dataclass
class ReadEvidence:
    """What a picture's evidence reading gave (``digitize``): the per-class maps and the class mask in the
    canonical frame, how they were read (``"model"``, ``"mask"``, ``"classical"``) and the network's memory plan."""

    maps: dict
    mask: np.ndarray
    method: str
    memory: dict


MIN_TRACK_PX = 40  # narrower, and a grid line or a pen width is a large share of the track


@dataclass
class PageRead:
    """What :func:`digitize` reads off a picture before it traces: the canonical picture's darkness, grid and log
    body, and the evidence of every line style (the network's maps, a mask's, the classical ink's). Reading and
    tracing are apart so that a folder run reads the next scan while it traces this one
    (``core/digitize/job/stream.py``)."""

    ink: np.ndarray | None
    grid: object | None  # ``core.digitize.page.grid.Grid``
    body: tuple[int, int] | None
    evidence: dict
    mask: np.ndarray  # the class mask, canonical
    method: str
    params: TraceParams | None
    memory: dict
    warnings: list[str]
    timings: dict  # grid_s, evidence_s


def read_page(
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
    whole_picture: bool = False,
    memory_ceiling: int | None = None,
    reference: bool = False,
    evidence: "ReadEvidence | None" = None,
) -> PageRead:
    """:func:`digitize` up to the tracing: the picture checked and turned, its ink, grid and log body, and the
    evidence (its arguments are :func:`digitize`'s)."""
    canon = _checked_canonical(image, calib, source)
    warnings, memory = [], {}
    t0 = time.perf_counter()
    grid = grid and mask is None  # the user's mask is followed as painted: no grid damping
    ink, found, body = _ink_grid_body(canon, calib, grid, mask is None)
    t_grid = time.perf_counter()
    if evidence is not None:  # read before (``keep_evidence``): the same maps traced again
        method, memory = evidence.method, dict(evidence.memory)
        evidence, mask_c = evidence.maps, evidence.mask
        if method == "mask":
            params = replace(params or TraceParams(), ink_checks=False)
    elif mask is not None:
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
        from core.digitize.evidence.classical import evidence as classical_evidence

        ev = classical_evidence(canon)
        evidence = {0: ev}
        mask_c = (ev > 0.4).astype(np.uint8)
        method = "classical"
        if progress:
            progress(1, 1)
    return PageRead(ink, found, body, evidence, mask_c, method, params, memory, warnings,
                    {"grid_s": t_grid - t0, "evidence_s": time.perf_counter() - t_grid})


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
    evidence: "ReadEvidence | None" = None,
    keep_evidence: list | None = None,
    page: PageRead | None = None,
) -> DigitizeResult:
    """Trace every calibrated curve of ``image`` and sample it on the LAS depth grid.

    ``grid``: damp the evidence on the printed grid found in the image (``core/digitize/page/grid.py``); off only to
    measure what the damping buys. ``mask``: a class mask in the scan's frame (a hand-corrected label)
    to trace instead of any model or ink: the user's mask is the truth they have, so it is followed as
    painted, with no grid damping. ``rgb``: the scan's colour pixels (scan frame), for the curves whose
    calibration names an ink ``colour`` (``core/io/colour.py``); ignored when tracing a mask. A network reads the
    scan in windows along depth (``core/digitize/evidence/network.py``) of ``tile`` px (default: the training crop, 1,024),
    its maps kept two bytes a pixel, the window shortened where a memory ceiling (``memory_ceiling`` bytes,
    default: 90 % of the memory available) requires it; ``whole_picture`` reads it in one forward instead (the
    memory grows with the scan's area: ~0.6 GiB a megapixel), to compare against. The network reads the band of
    rows the calibrated tracks need (``core/digitize/evidence/network.py: evidence_band``) in PyTorch's channels-last layout
    (``core/model/runtime.py``); ``reference`` reads every row in the default layout instead, the path of earlier
    releases, to compare against. ``precision``: the network's (default: the one it was trained in, as
    ``welltrace digitize`` reads it, so the app, a folder's workers and the command write the same LAS).
    ``evidence``: maps read before (``keep_evidence`` of an earlier call), traced again; ``keep_evidence``: a list
    the maps read are appended to. ``page``: what :func:`read_page` read off this picture already (with these
    arguments): only the tracing is left."""
    if page is None:
        page = read_page(image, calib, model=model, precision=precision, device=device, tile=tile, params=params,
                         progress=progress, source=source, grid=grid, mask=mask, whole_picture=whole_picture,
                         memory_ceiling=memory_ceiling, reference=reference, evidence=evidence)
    params, evidence, found, body, ink = page.params, page.evidence, page.grid, page.body, page.ink
    warnings = list(page.warnings)
    t1 = time.perf_counter()
    method = page.method
    if keep_evidence is not None:
        keep_evidence.append(ReadEvidence(evidence, page.mask, method, page.memory))
    by_curve = colour_evidence(rgb, image.shape, calib, evidence, found, warnings, source) if mask is None else {}
    params = model_params(params) if method == "model" else (params or TraceParams())
    stale = None  # a calibrator beside the model file that is not its network's: said instead of the basis's warning
    if method == "model" and model is not None and params.calibrator is None:
        own, stale = calibrator_beside(model)
        if own is not None:
            params = replace(params, calibrator=own)
    traces = trace_all(evidence, calib, params, found, by_curve, ink, body[0] if body else 0)
    if body and params.runs("outside_body"):
        warnings.append(null_outside_body(traces, body, calib))
        outside = np.ones(page.mask.shape[1], bool)  # the canonical picture's columns: its depth
        outside[body[0] : body[1]] = False
        for tr in traces:
            mark(tr, outside, "outside_body")
    if by_curve:
        method += " + ink colour"
    t2 = time.perf_counter()
    depth = calib.depth_grid(calib.depth_length(image.shape))
    values = {tr.mnemonic: trace_to_values(tr, spec, calib, depth, params.passes_off)
              for tr, spec in zip(traces, calib.curves)}
    confidence = {tr.mnemonic: trace_to_confidence(tr, calib, values[tr.mnemonic], depth) for tr in traces}
    flags = {tr.mnemonic: sample_flags(tr, spec, calib, values[tr.mnemonic], depth, params.passes_off)
             for tr, spec in zip(traces, calib.curves)}
    warnings += reading_warnings(traces, calib, set(by_curve))
    warnings += [f"{name}: no evidence of the curve anywhere in its track; written as NULL"
                 for name, v in values.items() if not np.isfinite(v).any()]
    # the network's file digest (``load_model``); one built in memory is not known to be the calibrator's; maps
    # traced again without their network (an evaluation's cache) are keyed by the digest already
    digest = None if model is None else getattr(model, "file_digest", "a network not read from a file")
    basis, other_network = confidence_basis(calibrator_for(params), digest, getattr(model, "file_path", None))
    if stale is not None or other_network is not None:
        warnings.append(stale or other_network)
    return DigitizeResult(depth, values, traces, from_canonical(page.mask, calib.depth_axis), method,
                          {**page.timings, "trace_s": t2 - t1}, warnings, page.memory, confidence=confidence,
                          flags=flags, confidence_basis=basis)


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
    calib.check_fits(image.shape, source)  # names the calibration: the file to fix
    for i, c in enumerate(calib.curves):
        if c.track_width < MIN_TRACK_PX:
            # the calibration's track (or the scan's resolution): the calibration is named, the file to check
            raise InputError(calib.source or source, f"curves[{i}] ({c.mnemonic}): its track is "
                             f"{c.track_width:.0f} px wide; "
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


def _cut(arr: np.ndarray | None, axis: str, start: int, stop: int) -> np.ndarray | None:
    if arr is None:
        return None
    return arr[start:stop] if axis == "y" else arr[:, start:stop]


def digitize_sections(image: np.ndarray, calib: Calibration, only: int | None = None, *, source: str | None = None,
                      mask: np.ndarray | None = None, rgb: np.ndarray | None = None,
                      pages: list[PageRead] | None = None, **kwargs
                      ) -> list[tuple[str, Section | None, DigitizeResult]]:
    """:func:`digitize` over each log section of the calibration (``core/io/calibration.py: Section``): the scan
    cut to the section's span along depth, traced with the section's picks; header, tail and the stretches
    between sections are never read. Returns (LAS suffix, section, result) per section, ``only`` the given
    index; a calibration without sections gives one part, the whole picture, as before. ``pages``: what
    :func:`read_sections` read off the same scan with the same arguments, one a part: only the tracing is left."""
    parts = _parts(image, calib, only, source)
    pages = pages or [None] * len(parts)
    out = []
    # a misspelt field is a whole curve read wrong ("Log" for "log"): the run names every field it ignored
    said = [f"ignored in the calibration, no such field: {'; '.join(calib.ignored_fields)}"] \
        if calib.ignored_fields else []
    for (name, i, sec, a, b), page in zip(parts, pages, strict=True):
        if sec is None:
            res = digitize(image, calib, source=source, mask=mask, rgb=rgb, page=page, **kwargs)
            res.warnings[:0] = said
            return [("", None, res)]
        res = digitize(_cut(image, calib.depth_axis, a, b), calib.section_calibration(i),
                       source=f"{source or 'scan'} (section {i + 1}, {sec.kind})",
                       mask=_cut(mask, calib.depth_axis, a, b), rgb=_cut(rgb, calib.depth_axis, a, b), page=page,
                       **kwargs)
        if i == calib.main_picks_apart():  # an edit of the top-level picks only is not read: said, not ignored
            res.warnings.append(f"sections[{i}].depth_picks (the main pass's own, the ones read) differ from the "
                                "top-level depth_picks: correct the section's, or delete them to read the top-level")
        if sec.stop > b:  # said, not cut in silence: the calibration may belong to a longer scan
            res.warnings.append(f"sections[{i}].span ends at {sec.stop} px, past the scan's {b} px along depth: "
                                f"read to the scan's end")
        out.append((name, sec, res))
    _name_the_sections_warnings(out, calib)
    if out:
        out[0][2].warnings[:0] = said
    return out


def _name_the_sections_warnings(parts: list[tuple[str, Section | None, DigitizeResult]], calib: Calibration) -> None:
    """Each warning of a section other than the main pass names that section, unless the main pass gives it too
    (the calibration's, alike in every section): "meet at 9286 FT" of a repeat pass sent the user to the main
    pass's LAS, which covers those depths too."""
    main = next((res for name, _, res in parts if name == ""), None)
    common = set(main.warnings) if main is not None else set()
    for name, sec, res in parts:
        if name == "" or sec is None:
            continue
        i = next(k for k, s in enumerate(calib.sections) if s is sec) + 1
        label = f"the repeat pass (section {i})" if sec.kind == "repeat" else f"section {i} ({sec.kind})"
        res.warnings = [w if w in common else f"{label}: {w}" for w in res.warnings]


def read_sections(image: np.ndarray, calib: Calibration, only: int | None = None, *, source: str | None = None,
                  mask: np.ndarray | None = None, between: Callable[[], None] | None = None,
                  **kwargs) -> list[PageRead]:
    """:func:`read_page` of each part :func:`digitize_sections` traces (the same arguments, ``rgb`` aside):
    the reading half of a scan's digitising, done ahead of its tracing. ``between``: called once each part is read
    (a streamed folder's reader hands its thread's freed heap back there: ``core/digitize/job/stream.py``)."""
    kwargs.pop("rgb", None)
    pages = []
    for _, i, sec, a, b in _parts(image, calib, only, source):
        pages.append(read_page(image if sec is None else _cut(image, calib.depth_axis, a, b),
                               calib if sec is None else calib.section_calibration(i),
                               source=source if sec is None else f"{source or 'scan'} (section {i + 1}, {sec.kind})",
                               mask=mask if sec is None else _cut(mask, calib.depth_axis, a, b), **kwargs))
        if between is not None:
            between()
    return pages


def _parts(image: np.ndarray, calib: Calibration, only: int | None, source: str | None):
    """(LAS suffix, index, section, start, stop) of each part a scan is digitised in: its calibration's sections
    (``only`` the given one) cut to the scan, or the whole picture (no section)."""
    if only is not None and not 0 <= only < len(calib.sections):
        raise InputError(source, f"there is no section {only + 1}: the calibration has "
                         + (f"{len(calib.sections)}" if calib.sections else "none (the whole picture is one log)"))
    if not calib.sections:
        return [("", None, None, 0, 0)]
    length = calib.depth_length(image.shape)
    names = calib.section_files()
    chosen = [only] if only is not None else list(range(len(calib.sections)))
    for i in chosen:  # every section checked before the first is read: a refusal costs no work
        sec = calib.sections[i]
        if sec.start >= length - 1:
            raise InputError(calib.source or source, f"sections[{i}].span starts at {sec.start} px, past the scan's "
                             f"{length} px along depth")
        calib.section_calibration(i).check_fits(_cut(image, calib.depth_axis, sec.start, min(sec.stop, length)).shape,
                                                source, f"section {i + 1}")
    return [(names[i], i, calib.sections[i], calib.sections[i].start, min(calib.sections[i].stop, length))
            for i in chosen]


def scan_column_depth(calib: Calibration, shape: tuple[int, int]) -> np.ndarray:
    """The depth of each pixel along the scan's depth axis as :func:`in_scan_frame`'s main part reads it: through
    the picks of its section (the first main pass, else the first section), or the calibration's."""
    cols = np.arange(calib.depth_length(shape), dtype=np.float64)
    names = calib.section_files()
    if not names:
        return calib.depth_at(cols)
    i = names.index("") if "" in names else 0
    return calib.section_calibration(i).depth_at(cols - calib.sections[i].start)


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
                          main.memory, confidence=main.confidence, confidence_basis=main.confidence_basis)
