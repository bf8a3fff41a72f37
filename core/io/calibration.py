"""The calibration model: pixel ↔ depth along the depth axis, pixel ↔ value across a track.

File contract (``NAME.calib.json``, version 1) is in docs/file-formats.md. Every
validation failure names the offending field, e.g. ``curves[1].scale``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from core.common.atomic import atomic_write_text, json_text
from core.common.errors import CalibrationError, require_file

CALIBRATION_VERSION = 1
DEPTH_UNITS = ("FT", "M")
MAX_CLASS = 3
BACKUP_SIDES = ("high", "low")
# tracks that share no more than this many pixels across are neighbours edge to edge, not one track: a user draws
# tracks border to border, and the proposal's tracks meet on their shared border line
TRACK_BORDER_PX = 3.0


@dataclass
class CurveSpec:
    mnemonic: str
    unit: str
    description: str
    klass: int  # mask class holding the curve: 1 solid, 2 dashed, 3 dotted/dash-dot
    track: tuple[float, float]  # pixel across the amplitude axis where value == scale[0], scale[1]
    scale: tuple[float, float]
    log: bool = False
    wrap: bool = False
    # where the backup scale lies when ``wrap`` is set: "high" past scale[1] (GR 0–150 → 150–300),
    # "low" before scale[0] (DT 140–40 → 240–140); None when the header does not say
    backup: str | None = None
    plot_colour: str | None = None  # display colour of the plotted curve (optional, "#rrggbb"; "color" in the file)
    # the curve's ink on a colour scan (optional, "#rrggbb"): evidence of which line is this curve
    # (core/io/colour.py); None traces by line style alone
    colour: str | None = None
    # read from the scan's scale box by a proposal (``core/digitize/scale_box.py``) and not yet confirmed by the
    # user: ``digitize`` refuses such a curve unless told ``--accept-proposed``
    proposed: bool = False

    # -- pixel ↔ value -------------------------------------------------
    @property
    def track_lo(self) -> float:
        return min(self.track)

    @property
    def track_hi(self) -> float:
        return max(self.track)

    def shares_track_with(self, other: "CurveSpec") -> bool:
        """Whether the two curves' tracks overlap by more than a border (:data:`TRACK_BORDER_PX`)."""
        return min(self.track_hi, other.track_hi) - max(self.track_lo, other.track_lo) > TRACK_BORDER_PX

    @property
    def track_width(self) -> float:
        return abs(self.track[1] - self.track[0])

    def fraction_of(self, pos) -> np.ndarray:
        """Fraction t across the track: 0 at ``track[0]``, 1 at ``track[1]``."""
        p0, p1 = self.track
        return (np.asarray(pos, dtype=np.float64) - p0) / (p1 - p0)

    def value_at(self, pos, wraps=0) -> np.ndarray:
        """Value of a trace at pixel ``pos`` having wrapped ``wraps`` whole track widths."""
        return self.value_of_fraction(self.fraction_of(pos) + np.asarray(wraps, dtype=np.float64))

    def value_of_fraction(self, t) -> np.ndarray:
        """Value at unwrapped fraction ``t`` of the track (linear, or s0·(s1/s0)^t on a log track)."""
        t = np.asarray(t, dtype=np.float64)
        s0, s1 = self.scale
        if self.log:
            return s0 * np.power(s1 / s0, t)
        return s0 + t * (s1 - s0)

    def unwrapped_fraction(self, value) -> np.ndarray:
        v = np.asarray(value, dtype=np.float64)
        s0, s1 = self.scale
        if self.log:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.log(v / s0) / math.log(s1 / s0)
        return (v - s0) / (s1 - s0)

    def position_of(self, value) -> tuple[np.ndarray, np.ndarray]:
        """Pixel position and wrap count of a value; without wrap the count is 0 and
        the position may lie outside the track."""
        t = self.unwrapped_fraction(value)
        if self.wrap:
            k = np.floor(t)
            t = t - k
        else:
            k = np.zeros_like(t)
        p0, p1 = self.track
        return p0 + t * (p1 - p0), k

    @property
    def value_range(self) -> float:
        return abs(self.scale[1] - self.scale[0])

    def as_dict(self) -> dict:
        d = {
            "mnemonic": self.mnemonic,
            "unit": self.unit,
            "description": self.description,
            "class": self.klass,
            "track": [float(self.track[0]), float(self.track[1])],
            "scale": [float(self.scale[0]), float(self.scale[1])],
            "log": self.log,
            "wrap": self.wrap,
            **({"backup": self.backup} if self.wrap and self.backup else {}),
        }
        if self.plot_colour:
            d["color"] = self.plot_colour
        if self.colour:
            d["colour"] = self.colour
        if self.proposed:
            d["proposed"] = True
        return d


SECTION_KINDS = ("main", "repeat", "log")


def _check_picks(picks: list[tuple[float, float]], where: str) -> None:
    if len(picks) < 2:
        raise CalibrationError(None, f"{where}: needs at least two [pixel, depth] picks")
    px = np.array([p for p, _ in picks])
    dp = np.array([d for _, d in picks])
    if not (np.all(np.isfinite(px)) and np.all(np.isfinite(dp))):
        raise CalibrationError(None, f"{where}: picks must be finite numbers")
    if np.any(np.diff(px) <= 0):
        raise CalibrationError(None, f"{where}: two picks share one pixel position")
    dd = np.diff(dp)
    if not (np.all(dd > 0) or np.all(dd < 0)):
        raise CalibrationError(None, f"{where}: depths are not monotonic along the depth axis")


@dataclass
class Section:
    """A stretch of log body along the depth axis: pixels [start, stop), and its own depth picks when it prints
    depths of its own (a repeat pass does); without them it reads the calibration's. ``kind``: "main" (written
    to ``OUT.las``), "repeat" (``OUT.repeat.las``) or "log" (another log on the same scan)."""

    start: int
    stop: int
    kind: str = "main"
    depth_picks: list[tuple[float, float]] | None = None

    def as_dict(self) -> dict:
        d = {"kind": self.kind, "span": [int(self.start), int(self.stop)]}
        if self.depth_picks:
            d["depth_picks"] = [[float(p), float(v)] for p, v in self.depth_picks]
        return d


@dataclass
class Calibration:
    depth_axis: str
    depth_unit: str
    depth_picks: list[tuple[float, float]]
    step: float
    curves: list[CurveSpec] = field(default_factory=list)
    version: int = CALIBRATION_VERSION
    # the log body's stretches along depth (optional): without any, the whole picture is one log, as before
    sections: list[Section] = field(default_factory=list)
    # track bounds a proposal read from the scan, offered to the curves still to add (the app's Add curve);
    # kept through every save so that adding the first curve does not lose the rest
    proposed_tracks: list[tuple[float, float]] = field(default_factory=list)

    def __post_init__(self):
        self.depth_picks = sorted((float(p), float(d)) for p, d in self.depth_picks)
        self._validate_picks("depth_picks")
        for i, sec in enumerate(self.sections):
            if sec.depth_picks is not None:
                sec.depth_picks = sorted((float(p), float(d)) for p, d in sec.depth_picks)
                _check_picks(sec.depth_picks, f"sections[{i}].depth_picks")

    # -- sections --------------------------------------------------------
    def section_calibration(self, index: int) -> "Calibration":
        """The calibration of one section's picture (the scan cut to its span along depth): its picks, or the
        calibration's, moved to the cut's pixels; the same curves; no sections."""
        sec = self.sections[index]
        picks = sec.depth_picks or self.depth_picks
        return Calibration(self.depth_axis, self.depth_unit, [(p - sec.start, d) for p, d in picks], self.step,
                           list(self.curves), self.version)

    def unconfirmed(self) -> list[str]:
        """The mnemonics of the curves a proposal read and the user has not confirmed (``CurveSpec.proposed``)."""
        return [c.mnemonic for c in self.curves if c.proposed]

    def require_confirmed(self, path, accept_proposed: bool = False) -> None:
        """Refuse (``CalibrationError`` naming ``path``) to digitise curves a proposal read and nobody checked,
        unless ``accept_proposed``: a scale misread from the box is a whole LAS curve wrong."""
        pending = self.unconfirmed()
        if pending and not accept_proposed:
            raise CalibrationError(path, f"{len(pending)} curve(s) read from the scale box and not yet confirmed "
                                   f"({', '.join(pending)}): check them against the print and remove their "
                                   "\"proposed\" mark, or give --accept-proposed")

    def section_files(self) -> list[str]:
        """The LAS suffix each section is written under: "" for the first main pass (``OUT.las``), "repeat" for
        the first repeat (``OUT.repeat.las``), "sectionN" (1-based) for any other."""
        out, taken = [], set()
        for i, sec in enumerate(self.sections):
            name = "" if sec.kind == "main" else sec.kind if sec.kind == "repeat" else f"section{i + 1}"
            if name in taken:
                name = f"section{i + 1}"
            taken.add(name)
            out.append(name)
        return out

    # -- validation ----------------------------------------------------
    def _validate_picks(self, where: str) -> None:
        _check_picks(self.depth_picks, where)


    # -- depth ---------------------------------------------------------
    def depth_at(self, pixel) -> np.ndarray:
        """Depth at a pixel along the depth axis: piecewise linear, extrapolated at the ends."""
        px = np.array([p for p, _ in self.depth_picks])
        dp = np.array([d for _, d in self.depth_picks])
        x = np.asarray(pixel, dtype=np.float64)
        idx = np.clip(np.searchsorted(px, x, side="right") - 1, 0, len(px) - 2)
        slope = (dp[idx + 1] - dp[idx]) / (px[idx + 1] - px[idx])
        return dp[idx] + (x - px[idx]) * slope

    def pixel_at(self, depth) -> np.ndarray:
        """Pixel along the depth axis for a depth (inverse of :meth:`depth_at`)."""
        px = np.array([p for p, _ in self.depth_picks])
        dp = np.array([d for _, d in self.depth_picks])
        if dp[-1] < dp[0]:
            px, dp = px[::-1], dp[::-1]
        d = np.asarray(depth, dtype=np.float64)
        idx = np.clip(np.searchsorted(dp, d, side="right") - 1, 0, len(dp) - 2)
        slope = (px[idx + 1] - px[idx]) / (dp[idx + 1] - dp[idx])
        return px[idx] + (d - dp[idx]) * slope

    @property
    def depth_increases_with_pixel(self) -> bool:
        return self.depth_picks[-1][1] > self.depth_picks[0][1]

    def depth_grid(self, depth_length: int) -> np.ndarray:
        """The LAS sampling: multiples of ``step`` inside the depths the image covers."""
        ends = self.depth_at(np.array([0.0, depth_length - 1.0]))
        lo, hi = float(ends.min()), float(ends.max())
        decimals = max(0, -int(math.floor(math.log10(self.step))) + 4)
        start = math.ceil(lo / self.step - 1e-9) * self.step
        n = int(math.floor((hi - start) / self.step + 1e-9)) + 1
        if n <= 0:
            return np.zeros(0)
        return np.round(start + self.step * np.arange(n), decimals)

    # -- helpers -------------------------------------------------------
    def depth_length(self, shape: tuple[int, int]) -> int:
        """Length of the depth axis of an image of ``shape`` (rows, cols)."""
        return shape[0] if self.depth_axis == "y" else shape[1]

    def amplitude_length(self, shape: tuple[int, int]) -> int:
        return shape[1] if self.depth_axis == "y" else shape[0]

    def check_fits(self, shape: tuple[int, int], path: str | None = None) -> None:
        """Tracks must lie inside the image's amplitude axis."""
        amp = self.amplitude_length(shape)
        for i, c in enumerate(self.curves):
            if c.track_lo < -0.5 or c.track_hi > amp - 0.5:
                raise CalibrationError(
                    path,
                    f"curves[{i}].track: [{c.track[0]:g}, {c.track[1]:g}] lies outside the image's "
                    f"{amp} px across the amplitude axis",
                )

    def as_dict(self) -> dict:
        return {
            "version": self.version,
            "depth_axis": self.depth_axis,
            "depth_unit": self.depth_unit,
            "depth_picks": [[float(p), float(d)] for p, d in self.depth_picks],
            "step": float(self.step),
            "curves": [c.as_dict() for c in self.curves],
            **({"sections": [sec.as_dict() for sec in self.sections]} if self.sections else {}),
            **({"proposed_tracks": [[float(a), float(b)] for a, b in self.proposed_tracks]}
               if self.proposed_tracks else {}),
        }

    def save(self, path: str | os.PathLike) -> None:
        atomic_write_text(path, json_text(self.as_dict()))

    @classmethod
    def from_dict(cls, data: dict, path: str | None = None) -> "Calibration":
        return _parse(data, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Calibration":
        p = require_file(path, CalibrationError, "a calibration file")
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CalibrationError(p, f"cannot read: {exc}") from None
        if not text.strip():
            raise CalibrationError(p, "file is empty")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CalibrationError(p, f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
        return _parse(data, str(p))


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


def _parse(data, path: str | None) -> Calibration:
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
    curves = []
    seen = set()
    for i, c in enumerate(curves_raw):
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
        colour = c.get("colour")
        if colour is not None:
            from .colour import parse_colour

            try:
                parse_colour(colour)
            except ValueError as exc:
                raise CalibrationError(path, f"{where}colour: {exc}") from None
            colour = colour.strip().lower()
        unit_c = c.get("unit", "")
        descr = c.get("description", "")
        if not isinstance(unit_c, str) or not isinstance(descr, str):
            raise CalibrationError(path, f"{where}unit/description: must be text")
        proposed = c.get("proposed", False)
        if not isinstance(proposed, bool):
            raise CalibrationError(path, f"{where}proposed: must be true or false, got {proposed!r}")
        curves.append(
            CurveSpec(
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
                proposed=proposed,
            )
        )
    sections = _parse_sections(data.get("sections", []), path)
    try:
        return Calibration(
            depth_axis=axis, depth_unit=unit.upper(), depth_picks=picks, step=step, curves=curves, version=version,
            sections=sections, proposed_tracks=parse_proposed_tracks(data.get("proposed_tracks")),
        )
    except CalibrationError as exc:
        raise CalibrationError(path, exc.reason) from None
