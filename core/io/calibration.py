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
    # the ink its backup scale is drawn in, where the print draws it in another (optional, "#rrggbb"; needs
    # ``colour`` and ``backup``): which of the two inks the curve lies on is which scale it reads
    # (core/digitize/rules/ink_levels.py)
    backup_colour: str | None = None
    # read from the scan's scale box by a proposal (``core/digitize/calibrate/scale_box.py``) and not yet confirmed by the
    # user: ``digitize`` refuses such a curve unless told ``--accept-proposed``
    proposed: bool = False
    # the scale printed anew partway down the log (a mud log's gas scale changed while drilling): (from_depth,
    # (s0, s1)) in order of depth; from that depth on, down the page, the track reads the new ends (optional)
    scale_changes: list[tuple[float, tuple[float, float]]] = field(default_factory=list)

    # -- pixel ↔ value -------------------------------------------------
    @property
    def track_lo(self) -> float:
        return min(self.track)

    @property
    def track_hi(self) -> float:
        return max(self.track)

    def track_rows(self, end: int | None = None, start: int = 0) -> tuple[int, int]:
        """The first and the last pixel across the amplitude axis (canonical rows) of the track, its ends rounded
        outwards; with ``end``, within rows ``start`` to ``end - 1`` of a map, the last at least one past the first.
        Every reader of a track's band of rows takes it from here."""
        lo, hi = int(np.floor(self.track_lo)), int(np.ceil(self.track_hi))
        if end is None:
            return lo, hi
        lo = int(np.clip(lo, start, end - 1))
        return lo, int(np.clip(hi, lo + 1, end - 1))

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

    def value_of_fraction(self, t, scale=None) -> np.ndarray:
        """Value at unwrapped fraction ``t`` of the track (linear, or s0·(s1/s0)^t on a log track); ``scale``: the
        ends to read it on (:meth:`scales_at`, one pair per value), else the curve's ``scale``."""
        t = np.asarray(t, dtype=np.float64)
        if scale is None:
            s0, s1 = self.scale
        else:
            ends = np.asarray(scale, dtype=np.float64)
            s0, s1 = ends[..., 0], ends[..., 1]
        if self.log:
            return s0 * np.power(s1 / s0, t)
        return s0 + t * (s1 - s0)

    def scales_at(self, depths, down_is_deeper: bool = True) -> np.ndarray:
        """The ends (s0, s1) the track reads at each depth, one row per depth: ``scale``, or the last of
        ``scale_changes`` whose ``from_depth`` lies above the depth on the page (at or below it in depth when
        depth increases down the page, ``down_is_deeper``; at or above it in depth when it decreases)."""
        d = np.asarray(depths, dtype=np.float64)
        out = np.empty(d.shape + (2,))
        out[...] = self.scale
        for from_depth, ends in sorted(self.scale_changes, reverse=not down_is_deeper):
            past = d >= from_depth if down_is_deeper else d <= from_depth
            out[past] = ends
        return out

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
        if self.backup_colour:
            d["backup_colour"] = self.backup_colour
        if self.proposed:
            d["proposed"] = True
        if self.scale_changes:
            d["scale_changes"] = [{"from_depth": float(depth), "scale": [float(a), float(b)]}
                                  for depth, (a, b) in self.scale_changes]
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


def sharing_picks(sections: list[dict], picks) -> list[dict]:
    """``sections`` (as dicts) with the own ``depth_picks`` of each that are ``picks`` (within a hundredth of a
    pixel, a millionth of a depth) dropped: such a section then reads the calibration's picks, the same depths, and
    follows an edit of them. A proposal writes the main pass's section with its own copy of the top-level picks,
    and the app's table and pick lines edit the top-level ones: with the copy kept, a pick moved to the right line
    was saved but never read."""
    ref = [(float(p), float(d)) for p, d in picks]

    def same(own) -> bool:
        return len(own) == len(ref) and all(
            abs(float(p) - q) <= 0.01 and abs(float(d) - e) <= 1e-6 * max(1.0, abs(e))
            for (p, d), (q, e) in zip(sorted(own, key=lambda pd: float(pd[0])), sorted(ref), strict=True))

    out = []
    for sec in sections:
        own = sec.get("depth_picks")
        out.append({k: v for k, v in sec.items() if k != "depth_picks"} if own and ref and same(own) else dict(sec))
    return out


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
    # the file it was read from (None: made in memory): what an error found later names, the file to fix
    source: str | None = field(default=None, compare=False, repr=False)
    # the fields of its file that no calibration has, ignored ("curves[1].Log (did you mean "log"?)"): said by the
    # run that digitises it, since a misspelt "log" or "backup" is a whole curve wrong
    ignored_fields: list[str] = field(default_factory=list, compare=False, repr=False)

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
                           list(self.curves), self.version, source=self.source)

    def main_picks_apart(self) -> int | None:
        """The index of the first main pass when it has depth picks of its own that are not the calibration's
        (None otherwise). A proposal writes the two equal, the calibration's being the main pass's; once they
        differ one copy was edited and the other was not, and the section's own are the ones read."""
        i = next((k for k, sec in enumerate(self.sections) if sec.kind == "main"), None)
        if i is None or not self.sections[i].depth_picks:
            return None
        return None if "depth_picks" not in sharing_picks([self.sections[i].as_dict()], self.depth_picks)[0] else i

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
    def depth_under(self, pixel: float) -> float:
        """Depth at a pixel along the depth axis as the scan prints it there: by the picks of the section under it
        when it has its own (a repeat pass prints depths of its own), else by the calibration's."""
        sec = next((s for s in self.sections if s.start <= pixel < s.stop and s.depth_picks), None)
        return float(self.depth_at(pixel, sec.depth_picks if sec is not None else None))

    def depth_at(self, pixel, picks=None) -> np.ndarray:
        """Depth at a pixel along the depth axis: piecewise linear, extrapolated at the ends (``picks``: other
        (pixel, depth) picks in order, a section's, than the calibration's)."""
        picks = self.depth_picks if picks is None else picks
        px = np.array([p for p, _ in picks])
        dp = np.array([d for _, d in picks])
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

    def check_fits(self, shape: tuple[int, int], scan: str | None = None, where: str = "") -> None:
        """Refuse (``CalibrationError`` naming the calibration file, the one to fix) a picture of ``shape`` this
        calibration cannot read: a track outside its amplitude axis, depths beyond any well where the picks are
        extrapolated to its ends (``[[0, 0], [1, 99000]]`` reached 1.58e8 ft), or more LAS samples over it than
        :data:`MAX_SAMPLES` (the limit on the picks alone let 16 px of picks with a 1e-6 step ask for billions
        over the whole picture). ``scan`` names the picture in the reason; ``where``: which part of it (a
        section)."""
        from core.io.calibration_file import MAX_DEPTH, MAX_SAMPLES  # noqa: PLC0415 - the schema's bounds

        picture = f"the scan {os.path.basename(scan)}" if scan else "the image"
        picture += f" ({where})" if where else ""
        amp = self.amplitude_length(shape)
        for i, c in enumerate(self.curves):
            if c.track_lo < -0.5 or c.track_hi > amp - 0.5:
                raise CalibrationError(
                    self.source,
                    f"curves[{i}].track: [{c.track[0]:g}, {c.track[1]:g}] lies outside {picture}'s {amp} px across "
                    "the amplitude axis",
                )
        length = self.depth_length(shape)
        ends = self.depth_at(np.array([0.0, max(length - 1, 0)], np.float64))
        deepest = float(np.max(np.abs(ends)))
        if not deepest < MAX_DEPTH:
            raise CalibrationError(
                self.source, f"depth_picks: extrapolated over {picture}'s {length} px along depth they reach "
                f"{ends[0]:.6g} to {ends[1]:.6g} {self.depth_unit}, beyond any well (under {MAX_DEPTH:,.0f}): "
                "picks too close together, or a depth mistyped")
        samples = abs(float(ends[1] - ends[0])) / self.step
        if samples > MAX_SAMPLES:
            raise CalibrationError(
                self.source, f"step: {self.step:g} asks for {samples:,.0f} samples over {picture}'s "
                f"{abs(float(ends[1] - ends[0])):.6g} {self.depth_unit} (at most {MAX_SAMPLES:,})")

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
        from core.io.calibration_file import parse_calibration  # noqa: PLC0415 - it builds this class

        return parse_calibration(data, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Calibration":
        p = require_file(path, CalibrationError, "a calibration file")
        try:
            text = p.read_text(encoding="utf-8-sig")  # a byte-order mark (Windows editors write one) is no content
        except (OSError, UnicodeDecodeError) as exc:
            raise CalibrationError(p, f"cannot read: {exc}") from None
        if not text.strip():
            raise CalibrationError(p, "file is empty")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CalibrationError(p, f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
        except RecursionError:  # 100,000 "[" in a row: Python's parser gives up before any calibration is seen
            raise CalibrationError(p, "not a calibration: its JSON is nested too deeply") from None
        return cls.from_dict(data, str(p))
