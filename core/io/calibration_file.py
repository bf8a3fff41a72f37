"""Reading a calibration file (``NAME.calib.json``, version 1; docs/file-formats.md): every field checked, and
an error names the field and why, e.g. ``curves[1].scale: both ends are 0``."""

from __future__ import annotations

import math

from core.common.errors import CalibrationError
from core.io.calibration import (
    BACKUP_SIDES,
    CALIBRATION_VERSION,
    DEPTH_UNITS,
    MAX_CLASS,
    SECTION_KINDS,
    Calibration,
    CurveSpec,
    Section,
)


def _num(value, where: str, path: str | None) -> float:
    bad = isinstance(value, bool) or not isinstance(value, (int, float))
    try:
        bad = bad or not math.isfinite(value)  # an integer of 400 digits is no float: OverflowError
    except OverflowError:
        bad = True
    if bad:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise CalibrationError(path, f"{where}: expected a finite number, got {shown}")
    return float(value)


# The physical range a calibration's numbers can have: no scan is ten million pixels long, no well is deeper
# than 100,000 ft (the deepest is about 40,000), and a LAS of more than ten million samples (a 0.0001 step
# over a kilometre) is a typing error, not a log: each refused by name before any work rather than found out
# as a MemoryError or a one-sample LAS after it
MAX_PIXEL = 10_000_000.0
MAX_DEPTH = 100_000.0
MAX_SAMPLES = 10_000_000


def _pick(value, where: str, path: str | None) -> tuple[float, float]:
    pixel, depth = _pair(value, where, path)
    if not 0.0 <= pixel < MAX_PIXEL:
        raise CalibrationError(path, f"{where}: pixel {pixel:g} is outside any scan (0 to {MAX_PIXEL:,.0f})")
    if abs(depth) >= MAX_DEPTH:
        raise CalibrationError(path, f"{where}: depth {depth:g} is deeper than any well (under {MAX_DEPTH:,.0f})")
    return pixel, depth


def _pair(value, where: str, path: str | None) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise CalibrationError(path, f"{where}: expected two numbers [a, b], got {value!r}")
    return _num(value[0], f"{where}[0]", path), _num(value[1], f"{where}[1]", path)


def _require(data: dict, key: str, where: str, path: str | None):
    if key not in data:
        raise CalibrationError(path, f"{where}{key}: missing")
    return data[key]


def _parse_sections(raw, path: str | None) -> list[Section]:
    if not isinstance(raw, list):
        raise CalibrationError(path, "sections: expected a list of {kind, span, depth_picks?}")
    out = []
    for i, sec in enumerate(raw):
        where = f"sections[{i}]."
        if not isinstance(sec, dict):
            raise CalibrationError(path, f"sections[{i}]: expected an object")
        a, b = _pair(_require(sec, "span", where, path), f"{where}span", path)
        if not (0 <= a < b < MAX_PIXEL):
            raise CalibrationError(path, f"{where}span: [{a:g}, {b:g}] must be two pixels, the first >= 0 and "
                                   "less than the second")
        if int(round(b)) - int(round(a)) < 2:
            raise CalibrationError(path, f"{where}span: [{a:g}, {b:g}] covers no stretch of the scan (two pixels "
                                   "at least)")
        kind = sec.get("kind", "main")
        if kind not in SECTION_KINDS:
            raise CalibrationError(path, f"{where}kind: must be one of {', '.join(SECTION_KINDS)}, got {kind!r}")
        picks = sec.get("depth_picks")
        if picks is not None:
            if not isinstance(picks, list):
                raise CalibrationError(path, f"{where}depth_picks: expected a list of [pixel, depth] pairs")
            picks = [_pick(p, f"{where}depth_picks[{k}]", path) for k, p in enumerate(picks)]
        if out and a < out[-1].stop:
            raise CalibrationError(path, f"{where}span: overlaps the section before it (they are in order along "
                                   "depth and do not overlap)")
        out.append(Section(int(round(a)), int(round(b)), kind, picks))
    return out


def _check_step(step: float, picks: list[tuple[float, float]], path: str | None) -> None:
    """A step that samples the picked depths: at least two samples between the shallowest and the deepest pick
    and at most ``MAX_SAMPLES`` over them (``step: 1e300`` wrote one sample at depth 0 for a 1780-1849 m scan,
    ``1e-300`` ended in a MemoryError)."""
    depths = [d for _, d in picks]
    span = max(depths) - min(depths) if len(depths) >= 2 else 0.0
    if span <= 0:
        return  # too few picks to know the span: the Calibration says so itself
    if step > span / 2:
        raise CalibrationError(path, f"step: {step:g} leaves fewer than three samples over the picked depths "
                               f"({min(depths):g} to {max(depths):g})")
    if span / step > MAX_SAMPLES:
        raise CalibrationError(path, f"step: {step:g} asks for {span / step:,.0f} samples over the picked depths "
                               f"(at most {MAX_SAMPLES:,})")


def parse_proposed_tracks(raw) -> list[tuple[float, float]]:
    """``proposed_tracks`` as written by a proposal: pairs of finite numbers; anything else is dropped (a hint for
    the app, never a reason to refuse a calibration)."""
    out = []
    for t in raw if isinstance(raw, list) else []:
        if isinstance(t, (list, tuple)) and len(t) == 2 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in t):
            out.append((float(t[0]), float(t[1])))
    return out


def parse_calibration(data, path: str | None) -> Calibration:
    """A calibration from a file's JSON, every field checked; an error names the field (``curves[1].scale``)."""
    if not isinstance(data, dict):
        raise CalibrationError(path, "top level must be a JSON object")
    version = _require(data, "version", "", path)
    if version != CALIBRATION_VERSION:
        raise CalibrationError(path, f"version: {version!r} is not supported (expected {CALIBRATION_VERSION})")
    axis = _require(data, "depth_axis", "", path)
    if axis not in ("x", "y"):
        raise CalibrationError(path, f"depth_axis: must be \"x\" or \"y\", got {axis!r}")
    unit = _require(data, "depth_unit", "", path)
    if not isinstance(unit, str) or unit.upper() not in DEPTH_UNITS:
        raise CalibrationError(path, f"depth_unit: must be one of {', '.join(DEPTH_UNITS)}, got {unit!r}")
    picks_raw = _require(data, "depth_picks", "", path)
    if not isinstance(picks_raw, list):
        raise CalibrationError(path, "depth_picks: expected a list of [pixel, depth] pairs")
    if isinstance(data.get("draft"), str) and len(picks_raw) < 2:  # what a refused proposal found, kept
        raise CalibrationError(path, f"a draft, not yet a calibration: {data['draft']}")
    picks = [_pick(p, f"depth_picks[{i}]", path) for i, p in enumerate(picks_raw)]
    step = _num(_require(data, "step", "", path), "step", path)
    if step <= 0:
        raise CalibrationError(path, f"step: must be positive, got {step:g}")
    _check_step(step, picks, path)
    curves_raw = _require(data, "curves", "", path)
    if not isinstance(curves_raw, list):
        raise CalibrationError(path, "curves: expected a list")
    seen: set[str] = set()
    curves = [_parse_curve(c, i, seen, path) for i, c in enumerate(curves_raw)]
    sections = _parse_sections(data.get("sections", []), path)
    try:
        return Calibration(
            depth_axis=axis, depth_unit=unit.upper(), depth_picks=picks, step=step, curves=curves, version=version,
            sections=sections, proposed_tracks=parse_proposed_tracks(data.get("proposed_tracks")),
        )
    except CalibrationError as exc:
        raise CalibrationError(path, exc.reason) from None


def _ink(c: dict, key: str, where: str, path: str | None) -> str | None:
    """An ink colour field ("#rrggbb") of curve ``c``, lower-cased, or None; a malformed one refused by name."""
    value = c.get(key)
    if value is None:
        return None
    from core.io.colour import parse_colour

    try:
        parse_colour(value)
    except ValueError as exc:
        raise CalibrationError(path, f"{where}{key}: {exc}") from None
    return value.strip().lower()


def _parse_curve(c, i: int, seen: set[str], path: str | None) -> CurveSpec:
    """``curves[i]`` of a calibration file, every field checked; ``seen``: the mnemonics before it (updated)."""
    where = f"curves[{i}]."
    if not isinstance(c, dict):
        raise CalibrationError(path, f"curves[{i}]: expected an object")
    mnem = _require(c, "mnemonic", where, path)
    if not isinstance(mnem, str) or not mnem.strip() or any(ch.isspace() for ch in mnem.strip()):
        raise CalibrationError(path, f"{where}mnemonic: must be a non-empty word, got {mnem!r}")
    mnem = mnem.strip().upper()
    if mnem in seen or mnem == "DEPT":
        raise CalibrationError(path, f"{where}mnemonic: {mnem} is used twice (or is the index DEPT)")
    seen.add(mnem)
    klass = _require(c, "class", where, path)
    if isinstance(klass, bool) or not isinstance(klass, int) or not 1 <= klass <= MAX_CLASS:
        raise CalibrationError(path, f"{where}class: must be 1, 2 or 3, got {klass!r}")
    track = _pair(_require(c, "track", where, path), f"{where}track", path)
    if abs(track[1] - track[0]) < 1.0:
        raise CalibrationError(path, f"{where}track: zero width ({track[0]:g} to {track[1]:g})")
    scale = _pair(_require(c, "scale", where, path), f"{where}scale", path)
    if scale[0] == scale[1]:
        raise CalibrationError(path, f"{where}scale: both ends are {scale[0]:g}")
    log = bool(c.get("log", False))
    if log and (scale[0] <= 0 or scale[1] <= 0):
        raise CalibrationError(path, f"{where}scale: a log track needs positive ends, got {list(scale)}")
    wrap = bool(c.get("wrap", False))
    backup = c.get("backup")
    if backup is not None and backup not in BACKUP_SIDES:
        raise CalibrationError(path, f"{where}backup: must be \"high\" or \"low\", got {backup!r}")
    if backup is not None and not wrap:
        raise CalibrationError(path, f"{where}backup: a backup scale needs \"wrap\": true")
    colour = _ink(c, "colour", where, path)
    backup_colour = _ink(c, "backup_colour", where, path)
    if backup_colour is not None and (backup is None or colour is None):
        raise CalibrationError(path, f"{where}backup_colour: the backup scale's ink needs a backup scale "
                               "(\"backup\") and the curve's own ink (\"colour\")")
    unit_c = c.get("unit", "")
    descr = c.get("description", "")
    if not isinstance(unit_c, str) or not isinstance(descr, str):
        raise CalibrationError(path, f"{where}unit/description: must be text")
    proposed = c.get("proposed", False)
    if not isinstance(proposed, bool):
        raise CalibrationError(path, f"{where}proposed: must be true or false, got {proposed!r}")
    changes = _scale_changes(c.get("scale_changes", []), log, f"{where}scale_changes", path)
    return CurveSpec(
        mnemonic=mnem,
        unit=unit_c,
        description=descr,
        klass=klass,
        track=track,
        scale=scale,
        log=log,
        wrap=wrap,
        backup=backup,
        plot_colour=c.get("color") if isinstance(c.get("color"), str) else None,
        colour=colour,
        backup_colour=backup_colour,
        proposed=proposed,
        scale_changes=changes,
    )


def _scale_changes(raw, log: bool, where: str, path: str | None) -> list[tuple[float, tuple[float, float]]]:
    """A curve's ``scale_changes``: ``[{"from_depth": D, "scale": [a, b]}, ...]``, each depth a finite depth and
    each scale two different ends (positive on a log track), no two at one depth; in order of depth."""
    if not isinstance(raw, list):
        raise CalibrationError(path, f"{where}: expected a list of {{from_depth, scale}}")
    out = []
    for k, ch in enumerate(raw):
        at = f"{where}[{k}]"
        if not isinstance(ch, dict):
            raise CalibrationError(path, f"{at}: expected an object {{from_depth, scale}}")
        depth = _num(_require(ch, "from_depth", f"{at}.", path), f"{at}.from_depth", path)
        if abs(depth) >= MAX_DEPTH:
            raise CalibrationError(path, f"{at}.from_depth: {depth:g} is deeper than any well (under {MAX_DEPTH:,.0f})")
        ends = _pair(_require(ch, "scale", f"{at}.", path), f"{at}.scale", path)
        if ends[0] == ends[1]:
            raise CalibrationError(path, f"{at}.scale: both ends are {ends[0]:g}")
        if log and (ends[0] <= 0 or ends[1] <= 0):
            raise CalibrationError(path, f"{at}.scale: a log track needs positive ends, got {list(ends)}")
        out.append((depth, ends))
    depths = sorted(d for d, _ in out)
    if any(b == a for a, b in zip(depths, depths[1:])):
        raise CalibrationError(path, f"{where}: two changes at one depth")
    return sorted(out)
