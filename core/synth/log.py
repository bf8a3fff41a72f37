"""One synthetic log: truth curves drawn exactly into ink and a class mask.

A log is drawn in the tall frame (depth down the rows), exactly from a set of
truth curves on the calibration's depth step, then optionally transposed to the
wide frame (``depth_axis="x"``). Sizes given to :func:`generate_log` are in
the network's canonical frame: ``width`` along depth, ``height`` across.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.io.calibration import Calibration, CurveSpec
from core.io.colour import hex_colour, luma

from . import artefacts as art
from . import colour_page
from .catalogue import BACKUP_SIDE, CURVE_COLORS, LINEAR_CURVES, LOG_CURVES
from .page import curve_polylines, dash_pattern, draw_curve, draw_grid, make_layout, stretch_picks, wide_dash_pattern
from .shapes import default_library, draw_shape, fast_shape, load_library
from .styles import STYLE_CHOICES, PrintStyle, sample_style

STYLES = STYLE_CHOICES


@dataclass
class SyntheticLog:
    name: str
    image: np.ndarray  # uint8, in the requested depth-axis frame
    mask: np.ndarray  # uint8 classes 0..3, same frame
    calibration: Calibration
    depth: np.ndarray  # truth depth grid
    truth: dict[str, np.ndarray]  # mnemonic -> values on ``depth``
    meta: dict = field(default_factory=dict)
    rgb: np.ndarray | None = None  # the colour page (colour family), same frame; ``image`` is its luma


def generate_log(
    seed: int,
    width: int = 3200,
    height: int = 480,
    depth_axis: str = "x",
    curves: tuple[int, int] = (1, 3),
    style: str = "mixed",
    name: str = "log",
    las_dir: str | Path | None = "default",
    families: tuple[str, ...] | None = None,
    same_style: float = 0.0,
    classes: tuple[int, ...] | None = None,
) -> SyntheticLog:
    """One synthetic log, deterministic for ``seed``.

    ``width`` is the extent along depth and ``height`` across the tracks (the
    canonical wide frame); with ``depth_axis="y"`` the image is written tall. ``style`` is a print-style
    family (``core/synth/styles.py``), ``"mixed"`` for one drawn evenly from ``families`` (default: all),
    or the first generator's ``"clean"`` / ``"scanned"`` looks. ``same_style``: the chance that a track
    with two or more curves draws its first two in one line style (told apart only by continuity).
    ``classes``: every track draws exactly these line styles (e.g. ``(1, 1)``: two solid curves), none
    wrapping, so that they cross: the crossing test set (``core/evaluation/crossings.py``).
    """
    if depth_axis not in ("x", "y"):
        raise ValueError("depth_axis must be 'x' or 'y'")
    if width < 64 or height < 96:
        raise ValueError(f"a synthetic log needs at least 64 px along depth and 96 across, got {width} × {height}")
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}")
    rng = np.random.default_rng(seed)
    library = default_library() if las_dir == "default" else load_library(str(las_dir) if las_dir else None)
    depth_len, amp = int(width), int(height)
    look: PrintStyle = sample_style(style, rng, families)
    scanned = look.scanned

    # -- depth calibration: paper speed, unit, step, start depth -------------
    unit = "FT" if rng.random() < 0.75 else "M"
    if unit == "FT":
        px_per_unit, step = rng.uniform(*((1.5, 4.0) if look.coarse_depth else (2.5, 8.0))), float(rng.choice([0.5, 0.25]))
        top = float(rng.integers(10, 800) * 10)
    else:
        px_per_unit, step = rng.uniform(*((5.0, 12.0) if look.coarse_depth else (8.0, 24.0))), float(rng.choice([0.1, 0.2]))
        top = float(rng.integers(10, 300) * 10)
    picks = stretch_picks(depth_len, top, px_per_unit, rng, jitter=0.02 if scanned else 0.0)
    layout = make_layout(amp, rng, look)

    specs, widths = _curve_specs(layout, look, rng, curves, same_style, classes)
    calib = Calibration(depth_axis=depth_axis, depth_unit=unit, depth_picks=picks, step=step, curves=specs)
    depth = calib.depth_grid(depth_len)
    truth, sources = _truth(specs, depth, look, rng, library)
    _order_same_style(specs, truth)  # in place: the calibration holds this same list

    # -- truth drawn into ink and mask, then the page and the scanner ---------
    rows = np.arange(depth_len, dtype=np.float64)
    ink_level = int(rng.integers(*look.pen_strength))
    frame = np.zeros((depth_len, amp), np.uint8)
    draw_grid(frame, layout, calib, rng, look)
    ink, mask, layers, positions = _draw_curves(specs, widths, truth, depth, calib.depth_at(rows), rows, amp, look,
                                                ink_level, rng)
    if look.colour:
        rgb8, mask, applied = _colour_page(frame, layers, positions, specs, look, rng, mask, rows, scanned)
        img8 = luma(rgb8)
        return _finish(name, seed, img8, mask, calib, depth, truth, widths, sources, applied, px_per_unit, look,
                       depth_axis, rgb8)
    img8, mask, applied = _print_and_scan(frame, ink, mask, rows, look, rng)
    return _finish(name, seed, img8, mask, calib, depth, truth, widths, sources, applied, px_per_unit, look,
                   depth_axis)


def _curve_specs(layout, look: PrintStyle, rng: np.random.Generator, curves: tuple[int, int], same_style: float,
                 classes: tuple[int, ...] | None) -> tuple[list[CurveSpec], dict[str, float]]:
    """The curves of every track (1..3 in distinct line styles, unless the look says otherwise) and their pen
    widths in px."""
    specs: list[CurveSpec] = []
    widths: dict[str, float] = {}
    used: set[str] = set()
    for track in layout.tracks:
        lo_n = max(curves[0], min(look.curves_per_track[0], curves[1]))
        hi_n = max(lo_n, min(curves[1], look.curves_per_track[1]))
        n = int(rng.integers(lo_n, hi_n + 1))
        if look.broken_track and rng.random() < look.broken_track:  # dashed and dotted pens only, a style may repeat
            styles = list(rng.choice([2, 3], size=n))
        elif look.line_styles is None:
            styles = list(rng.permutation([1, 2, 3])[:n])
        else:  # a family that favours some pens (dotted 1-bit prints)
            styles = list(rng.choice([1, 2, 3], size=n, replace=False, p=np.asarray(look.line_styles)))
        if n >= 2 and same_style and rng.random() < same_style:  # two curves of one line style (two resistivities)
            styles[1] = styles[0]
        wrap_slot = int(rng.integers(n)) if (not track.log and rng.random() < 0.35) else -1
        if classes is not None:
            styles, wrap_slot = list(classes), -1
        for ci, klass in enumerate(styles):
            spec = _curve_spec(track, int(klass), ci == wrap_slot, look, rng, used)
            specs.append(spec)
            if look.pen_range:
                widths[spec.mnemonic] = round(float(rng.uniform(*look.pen_range)), 2)
            else:
                pens = {1: look.pen_widths, 2: [w for w in look.pen_widths if w <= 3] or [1],
                        3: [w for w in look.pen_widths if 2 <= w <= 3] or [2]}[int(klass)]
                widths[spec.mnemonic] = int(rng.choice(pens))
    return specs, widths


def _curve_spec(track, klass: int, wraps: bool, look: PrintStyle, rng: np.random.Generator,
                used: set[str]) -> CurveSpec:
    """One curve of a track: a mnemonic not yet ``used`` (numbered when repeated), its unit and scale."""
    # a curve's scale is its track's grid, but for a share of prints (a GR over resistivity decades)
    log = track.log != bool(look.cross_scale and rng.random() < look.cross_scale)
    if log:
        pool = [c for c in LOG_CURVES if c[0] not in used] or LOG_CURVES
        mnem, cunit, descr = pool[int(rng.integers(len(pool)))]
        s0 = float(rng.choice([0.2, 1.0, 2.0]))
        scale = (s0, s0 * 10.0 ** (track.decades or int(rng.integers(2, 5))))
    else:
        pool = [c for c in LINEAR_CURVES if c[0] not in used] or LINEAR_CURVES
        mnem, cunit, descr, scale = pool[int(rng.integers(len(pool)))]
    base, k = mnem, 2
    while mnem in used:  # a busy print repeats a curve (a repeat pass): number it
        mnem, k = f"{base}{k}", k + 1
    used.add(mnem)
    return CurveSpec(mnemonic=mnem, unit=cunit, description=descr, klass=klass,
                     track=(float(track.left), float(track.right)), scale=tuple(float(s) for s in scale), log=log,
                     wrap=wraps, backup=BACKUP_SIDE.get(base) if wraps else None, plot_colour=CURVE_COLORS[klass])


def _truth(specs: list[CurveSpec], depth: np.ndarray, look: PrintStyle, rng: np.random.Generator,
           library) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Each curve's values on the LAS depth grid (a real curve's shape placed in its track; a wrapping one
    past its edge) and the source of its shape."""
    truth: dict[str, np.ndarray] = {}
    sources: dict[str, str] = {}
    # tracks whose curves run close: the first curve's path, which the others follow at a small offset
    close = {s.track: None for s in specs if look.close_curves and rng.random() < look.close_curves}
    for spec in specs:
        if look.fast_shapes and rng.random() < look.fast_shapes:  # drawn only where a look has it
            shape, src = fast_shape(depth.size, rng, library, want_log=spec.log)
        else:
            shape, src = draw_shape(depth.size, rng, library, want_log=spec.log)
        sources[spec.mnemonic] = src
        if spec.wrap:
            lo, hi = rng.uniform(0.05, 0.3), rng.uniform(1.15, 1.6)
        else:
            lo = rng.uniform(0.03, 0.35)
            hi = rng.uniform(min(0.97, lo + 0.3), 0.97)
        frac = lo + shape * (hi - lo)
        if spec.track in close and not spec.wrap:
            frac = _run_close(frac, close, spec.track, rng)
        if spec.backup == "low":  # excursions leave the track before scale[0]
            frac = 1.0 - frac
        values = spec.value_at(spec.track[0] + frac * (spec.track[1] - spec.track[0]))
        truth[spec.mnemonic] = np.round(values, 4)
    return truth, sources


def _draw_curves(specs, widths, truth, depth, row_depth, rows, amp, look: PrintStyle, ink_level: int,
                 rng: np.random.Generator):
    """Every curve drawn exactly from its truth: into one ink layer (or, on a colour page, a layer each, with
    where each runs) and the class mask. ``widths`` of faint curves are thinned in place."""
    depth_len = rows.size
    ink = np.zeros((depth_len, amp), np.uint8)
    mask = np.zeros((depth_len, amp), np.uint8)
    layers, positions = [], []
    # one curve of a track drawn fainter and thinner (a tension curve over a sonic): which is which is then told
    # by ink weight and line style, not by position
    faint = _faint_curves(specs, look, rng)
    for spec in specs:
        values = np.interp(row_depth, depth, truth[spec.mnemonic])
        if spec.log:  # interpolate log curves in log space, as the pen moved
            values = np.exp(np.interp(row_depth, depth, np.log(truth[spec.mnemonic])))
        klass, width_px = spec.klass, widths[spec.mnemonic]
        level = ink_level
        if spec.mnemonic in faint:
            width_px = widths[spec.mnemonic] = min(width_px, 2)
            level = int(ink_level * faint[spec.mnemonic])
        if look.wide_dashes:
            pattern = wide_dash_pattern(klass, width_px, rng)
        else:
            pattern = dash_pattern(klass, int(round(width_px)), rng, look.dash_scale)
        lines = curve_polylines(spec, rows, values, pattern, phase=float(rng.uniform(0, 20)))
        if look.colour:
            layers.append(np.zeros((depth_len, amp), np.uint8))
            positions.append(spec.position_of(values)[0])
            draw_curve(layers[-1], mask, lines, klass, width_px, level)
        else:
            draw_curve(ink, mask, lines, klass, width_px, level)
    return ink, mask, layers, positions


def _print_and_scan(frame: np.ndarray, ink: np.ndarray, mask: np.ndarray, rows: np.ndarray, look: PrintStyle,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict]:
    """The grey page: grid and ink composited onto paper, then what the scanner (or a file's compression) did;
    the mask follows the one geometric artefact, skew."""
    scanned = look.scanned
    img = art.paper(frame.shape, rng, textured=scanned)
    frame_color = rng.uniform(20, 70)
    ink_color = rng.uniform(0, 35)
    a = frame.astype(np.float32) / 255.0
    img = img * (1 - a) + frame_color * a
    a = ink.astype(np.float32) / 255.0
    if scanned and rng.random() < look.artefacts.get("faded", 0.5):  # faded ink: strength varies slowly along depth
        fade = 1.0 - rng.uniform(0.05, 0.25) * (0.5 + 0.5 * np.sin(rows / rng.uniform(200, 900) + rng.uniform(0, 6)))
        a = a * fade[:, None].astype(np.float32)
    dropout = look.artefacts.get("dropout", 0.0)
    dropped = bool(scanned and dropout and rng.random() < dropout)  # drawn only where a look has it
    if dropped:
        a = a * art.ink_dropout(a.shape, rng)
    img = img * (1 - a) + ink_color * a
    applied: dict = {"style": "scanned" if scanned else "clean", "family": look.family}
    if dropped:
        applied["ink_dropout"] = True
    p = look.artefacts
    if scanned:
        if rng.random() < p.get("stains", 0.0):
            art.stains(img, rng)
            applied["stains"] = True
        if rng.random() < p.get("folds", 0.0):
            art.folds(img, rng)
            applied["folds"] = True
        if rng.random() < p.get("low_contrast", 0.0):
            art.low_contrast(img, rng)
            applied["low_contrast"] = True
        art.uneven_illumination(img, rng)
        if rng.random() < p.get("blur", 0.8):
            img = art.blur(img, rng)
            applied["blur"] = True
        art.gaussian_noise(img, rng)
        if rng.random() < p.get("salt", 0.5):
            art.salt_and_pepper(img, rng)
            applied["salt_pepper"] = True
        if p.get("speckle") and rng.random() < p["speckle"]:  # drawn only where a look has it: every other log is
            # drawn exactly as before the domain family (same seed, same pixels)
            art.speckle(img, rng)
            applied["speckle"] = True
        if rng.random() < p.get("skew", 0.6):
            img, mask, angle = art.skew(img, mask, rng, look.skew_px)
            applied["skew_deg"] = round(angle, 5)
    elif rng.random() < p.get("jpeg", 0.0) * 0.5:  # a clean print can still be a (lightly) compressed file
        img8, q = art.jpeg(np.clip(np.rint(img), 0, 255).astype(np.uint8), rng, (70, 95))
        img = img8.astype(np.float32)
        applied["jpeg_quality"] = q
    img8 = np.clip(np.rint(img), 0, 255).astype(np.uint8)
    if scanned:
        r = rng.random()
        if r < p.get("bilevel", 0.3):
            img8, thr = art.bilevel(img8, rng)
            applied["bilevel_threshold"] = thr
        elif r < p.get("bilevel", 0.3) + p.get("jpeg", 0.4):
            img8, q = art.jpeg(img8, rng)
            applied["jpeg_quality"] = q
    return img8, mask, applied


def _run_close(frac: np.ndarray, close: dict, track, rng: np.random.Generator) -> np.ndarray:
    """A curve of a close track: the first one's path (kept in ``close``) plus a small, slowly varying offset
    and a share of its own shape, so the curves run a few pen widths apart and cross now and then."""
    first = close[track]
    if first is None:
        close[track] = frac
        return frac
    offset = rng.uniform(0.02, 0.10) * rng.choice([-1.0, 1.0])
    drift = 0.03 * np.sin(np.arange(frac.size) / rng.uniform(80, 400) + rng.uniform(0, 6.3))
    own = rng.uniform(0.05, 0.35)
    return np.clip(first + offset + drift + own * (frac - first), 0.02, 0.98)


def _faint_curves(specs: list[CurveSpec], look: PrintStyle, rng: np.random.Generator) -> dict[str, float]:
    """Mnemonic -> ink strength factor of the curves drawn faint: at most one a track with two or more."""
    if not look.faint_curve:
        return {}
    out: dict[str, float] = {}
    tracks: dict = {}
    for s in specs:
        tracks.setdefault(s.track, []).append(s)
    for group in tracks.values():
        if len(group) >= 2 and rng.random() < look.faint_curve:
            out[group[int(rng.integers(len(group)))].mnemonic] = float(rng.uniform(0.5, 0.75))
    return out


def _colour_page(frame, layers, positions, specs, look: PrintStyle, rng, mask, rows, scanned):
    """The colour family's page (``colour_page.py``): inks named in the calibration, then the scanner."""
    grid_rgb = colour_page.grid_colour(rng)
    inks = colour_page.ink_palette(len(specs), rng, grid_rgb)
    for spec, ink in zip(specs, inks):
        spec.colour = spec.plot_colour = hex_colour(ink)
    p = look.artefacts
    applied: dict = {"style": "scanned" if scanned else "clean", "family": look.family, "grid_rgb": list(grid_rgb)}
    fills = []
    shadeable = [k for k, s in enumerate(specs) if not s.wrap and not s.log]
    if shadeable and rng.random() < p.get("fills", 0.5):
        k = shadeable[int(rng.integers(len(shadeable)))]
        fill_rgb = colour_page.FILLS[int(rng.integers(len(colour_page.FILLS)))]
        fills.append((colour_page.fill_layer(frame.shape, specs[k].track, positions[k], rng), fill_rgb))
        applied["fill"] = specs[k].mnemonic
    shown = inks
    if rng.random() < p.get("faded", 0.4):
        shown = colour_page.faded_inks(inks, rng)
        applied["faded"] = True
    paper = art.paper(frame.shape, rng, textured=scanned)
    img = colour_page.composite(paper, frame, grid_rgb, fills, layers, shown, rng)
    if scanned:
        img, mask = colour_page.scanner(img, mask, rng, p, applied)
    rgb8 = np.clip(np.rint(img), 0, 255).astype(np.uint8)
    if rng.random() < p.get("jpeg", 0.7):
        rgb8, q = colour_page.colour_jpeg(rgb8, rng)
        applied["jpeg_quality"] = q
    return rgb8, mask, applied


def _finish(name, seed, img8, mask, calib, depth, truth, widths, sources, applied, px_per_unit, look, depth_axis,
            rgb8=None) -> SyntheticLog:
    specs = calib.curves
    depth_len, amp = img8.shape
    if depth_axis == "x":
        img8, mask = np.ascontiguousarray(img8.T), np.ascontiguousarray(mask.T)
        if rgb8 is not None:
            rgb8 = np.ascontiguousarray(rgb8.swapaxes(0, 1))
    meta = {
        "seed": int(seed),
        "canonical_size": [depth_len, amp],
        "depth_axis": depth_axis,
        "artefacts": applied,
        "curves": [
            {"mnemonic": s.mnemonic, "class": s.klass, "width_px": widths[s.mnemonic], "wrap": s.wrap,
             "backup": s.backup, "log": s.log, "source": sources[s.mnemonic]}
            for s in specs
        ],
        "px_per_unit": round(float(px_per_unit), 4),
        "print_style": look.as_dict(),
    }
    return SyntheticLog(name, img8, mask, calib, depth, truth, meta, rgb8)


def _order_same_style(specs: list[CurveSpec], truth: dict[str, np.ndarray]) -> None:
    """Curves of one line style in one track are listed as the tracer names them (``core/digitize/trace/crossings.py``):
    nearest the ``track[0]`` edge at the top of the log first (in place)."""
    from core.digitize.trace.crossings import same_style_groups

    def dist(i):
        pos, _ = specs[i].position_of(truth[specs[i].mnemonic][:1])
        return abs(float(pos[0]) - specs[i].track[0])

    for idx in same_style_groups(specs):
        ordered = [specs[i] for i in sorted(idx, key=dist)]
        for slot, spec in zip(idx, ordered):
            specs[slot] = spec
