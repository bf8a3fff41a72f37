"""Labels of real scans read by eye (``tests/data/archive_labels``): what a calibration proposal must find.

The format is documented in that folder's README. ``load_labels`` reads and checks one file, refusing with the
file and the field named anything a scorer could not use (a section whose two depths do not increase down the
page, a track whose border columns are reversed, a curve in a track the section does not have), so a mistyped
label is caught when it is written, not when a score looks odd.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from core.common.errors import InputError

SCAN_KINDS = ("open-hole", "mud", "cement", "casing", "production", "other")
SECTION_KINDS = ("main", "repeat", "log")
LINE_STYLES = ("solid", "dashed", "dotted", "dash-dot", "long-dash")


@dataclass(frozen=True)
class LabelledCurve:
    mnemonic: str
    printed: str
    unit: str
    left: float
    right: float
    log: bool
    style: str | None
    colour: str | None
    track: int
    backup: tuple[float, float] | None


@dataclass(frozen=True)
class ScaleBox:
    rows: tuple[int, int]
    section: int
    applies_from_row: int
    curves: tuple[LabelledCurve, ...]


@dataclass(frozen=True)
class LabelledSection:
    kind: str
    rows: tuple[int, int]
    depths: tuple[tuple[float, float], ...]  # two (row, depth), far apart; empty where none is legible
    check: tuple[float, float] | None
    px_per_unit: float | None
    tracks: tuple[tuple[float, float], ...]
    other_columns: tuple[dict, ...] = ()
    notes: str = ""

    def depth_at(self, row: float) -> float:
        """The labelled depth at ``row``: the line through the two printed depths."""
        (r0, d0), (r1, d1) = self.depths
        return d0 + (row - r0) * (d1 - d0) / (r1 - r0)


@dataclass(frozen=True)
class ScanLabels:
    path: Path
    scan: str
    well: str
    size: tuple[int, int]
    dpi: float | None
    kind: str
    depth_unit: str
    sections: tuple[LabelledSection, ...]
    scale_boxes: tuple[ScaleBox, ...] = ()
    notes: str = ""

    @property
    def curves(self) -> list[LabelledCurve]:
        return [c for box in self.scale_boxes for c in box.curves]

    @property
    def stem(self) -> str:
        return Path(self.scan).stem


@dataclass
class _Reader:
    """Reads fields off one label file, naming the file and the field in every refusal."""

    path: Path
    where: list[str] = field(default_factory=list)

    def fail(self, what: str) -> InputError:
        at = ".".join(self.where)
        return InputError(self.path, f"{at + ': ' if at else ''}{what}")

    def number(self, value, name: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(f"{name} must be a finite number, not {value!r}")
        return float(value)

    def pair(self, value, name: str) -> tuple[float, float]:
        if not isinstance(value, list) or len(value) != 2:
            raise self.fail(f"{name} must be a pair [a, b], not {value!r}")
        return self.number(value[0], name), self.number(value[1], name)

    def text(self, obj: dict, name: str, default: str | None = None, allow_none: bool = False) -> str | None:
        value = obj.get(name, default)
        if value is None and allow_none:
            return None
        if not isinstance(value, str):
            raise self.fail(f"{name} must be a string, not {value!r}")
        return value

    def choice(self, obj: dict, name: str, choices: tuple[str, ...], allow_none: bool = False) -> str | None:
        value = obj.get(name)
        if value is None and allow_none:
            return None
        if value not in choices:
            raise self.fail(f"{name} must be one of {', '.join(choices)}, not {value!r}")
        return value

    def flag(self, obj: dict, name: str) -> bool:
        value = obj.get(name, False)
        if not isinstance(value, bool):
            raise self.fail(f"{name} must be true or false, not {value!r}")
        return value


def _section(r: _Reader, obj: dict, height: int) -> LabelledSection:
    top, bottom = r.pair(obj.get("rows"), "rows")
    if not 0 <= top < bottom <= height:
        raise r.fail(f"rows {top:g}–{bottom:g} must increase and lie within the scan's {height} rows")
    depths = obj.get("depths", [])
    if not isinstance(depths, list) or len(depths) not in (0, 2):
        raise r.fail("depths must hold exactly two [row, depth] (or none, with a note why)")
    picks = tuple(r.pair(d, "depths") for d in depths)
    if picks:
        (r0, d0), (r1, d1) = picks
        if not r0 < r1 or not d0 < d1:
            raise r.fail("the two depths must increase down the page, row and depth")
    check = r.pair(obj["check"], "check") if obj.get("check") is not None else None
    px_per_unit = r.number(obj["px_per_unit"], "px_per_unit") if obj.get("px_per_unit") is not None else None
    tracks = []
    for i, t in enumerate(obj.get("tracks", [])):
        lo, hi = r.pair(t, f"tracks[{i}]")
        if not lo < hi:
            raise r.fail(f"tracks[{i}] must be [left, right] with left < right, not {t!r}")
        tracks.append((lo, hi))
    if any(a[1] > b[0] + 1 for a, b in zip(tracks, tracks[1:])):
        raise r.fail("tracks must run left to right without overlapping")
    others = obj.get("other_columns", [])
    if not isinstance(others, list) or not all(isinstance(o, dict) for o in others):
        raise r.fail("other_columns must be a list of {kind, cols}")
    section = LabelledSection(kind=r.choice(obj, "kind", SECTION_KINDS), rows=(int(top), int(bottom)), depths=picks,
                              check=check, px_per_unit=px_per_unit, tracks=tuple(tracks), other_columns=tuple(others),
                              notes=r.text(obj, "notes", ""))
    if picks and check is not None and abs(section.depth_at(check[0]) - check[1]) > 2.0:
        raise r.fail(f"the check depth {check[1]:g} at row {check[0]:g} is {section.depth_at(check[0]):.1f} on the line "
                     "through the two depths: more than 2 apart")
    return section


def _curve(r: _Reader, obj: dict, tracks: int) -> LabelledCurve:
    track = obj.get("track")
    if not isinstance(track, int) or isinstance(track, bool) or not 0 <= track < max(tracks, 1):
        raise r.fail(f"track must index the section's {tracks} tracks, not {track!r}")
    backup = r.pair(obj["backup"], "backup") if obj.get("backup") is not None else None
    return LabelledCurve(mnemonic=r.text(obj, "mnemonic"), printed=r.text(obj, "printed", ""),
                         unit=r.text(obj, "unit", ""), left=r.number(obj.get("left"), "left"),
                         right=r.number(obj.get("right"), "right"), log=r.flag(obj, "log"),
                         style=r.choice(obj, "style", LINE_STYLES, allow_none=True),
                         colour=r.text(obj, "colour", None, allow_none=True), track=track, backup=backup)


def load_labels(path: str | Path) -> ScanLabels:
    """One label file, checked. Raises :class:`InputError` naming the file and the field."""
    path = Path(path)
    r = _Reader(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not a readable label file ({exc})") from None
    if not isinstance(obj, dict) or obj.get("version") != 1:
        raise r.fail("not a version 1 label file")
    width, height = (int(v) for v in r.pair(obj.get("size"), "size"))
    sections = []
    for i, s in enumerate(obj.get("sections", [])):
        r.where = [f"sections[{i}]"]
        sections.append(_section(r, s, height))
    boxes = []
    for i, b in enumerate(obj.get("scale_boxes", [])):
        r.where = [f"scale_boxes[{i}]"]
        sec = b.get("section")
        if not isinstance(sec, int) or not 0 <= sec < len(sections):
            raise r.fail(f"section must index the scan's {len(sections)} sections, not {sec!r}")
        top, bottom = r.pair(b.get("rows"), "rows")
        applies = int(r.number(b.get("applies_from_row", bottom), "applies_from_row"))
        curves = []
        for j, c in enumerate(b.get("curves", [])):
            r.where = [f"scale_boxes[{i}]", f"curves[{j}]"]
            curves.append(_curve(r, c, len(sections[sec].tracks)))
        boxes.append(ScaleBox(rows=(int(top), int(bottom)), section=sec, applies_from_row=applies, curves=tuple(curves)))
    r.where = []
    dpi = obj.get("dpi")
    return ScanLabels(path=path, scan=r.text(obj, "scan"), well=r.text(obj, "well"), size=(width, height),
                      dpi=r.number(dpi, "dpi") if dpi is not None else None, kind=r.choice(obj, "kind", SCAN_KINDS),
                      depth_unit=r.choice(obj, "depth_unit", ("FT", "M")), sections=tuple(sections),
                      scale_boxes=tuple(boxes), notes=r.text(obj, "notes", ""))


def load_folder(folder: str | Path) -> list[ScanLabels]:
    """Every ``*.labels.json`` in ``folder``, in name order."""
    return [load_labels(p) for p in sorted(Path(folder).glob("*.labels.json"))]


def load_split(folder: str | Path) -> dict[str, list[str]]:
    """``split.json``: the wells developed on (``develop``) and those held out (``held_out``)."""
    obj = json.loads((Path(folder) / "split.json").read_text(encoding="utf-8"))
    return {"develop": list(obj["develop"]), "held_out": list(obj["held_out"])}


if __name__ == "__main__":  # python -m core.evaluation.archive_labels FILE...: check label files as they are written
    import sys

    failed = 0
    for name in sys.argv[1:]:
        try:
            labels = load_labels(name)
        except InputError as exc:
            print(exc.one_line())
            failed += 1
            continue
        print(f"{name}: ok ({len(labels.sections)} sections, "
              f"{sum(len(s.tracks) for s in labels.sections)} tracks, {len(labels.curves)} curves)")
    sys.exit(1 if failed else 0)
