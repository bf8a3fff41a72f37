"""Reading a calibration file (``NAME.calib.json``, version 1; docs/file-formats.md): a typed schema (pydantic,
strict), every field checked, and an error names the field and why, e.g. ``curves[1].scale: both ends are 0``.

Strict means a value of the wrong type is refused, never read for its truthiness: ``"log": "false"`` was read as
a true ``log`` (a linear track read as logarithmic, values off by up to 45 % of the scale, exit 0), ``"wrap": "no"``
turned wrap on. A number is a JSON number (never a boolean, a string or an integer of 400 digits), a flag is
``true`` or ``false``, text is a string. Every file valid before stays valid: only wrong types, values outside any
scan or well, and names a LAS cannot hold are refused."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

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
from core.io.las_text import mnemonic_problem, text_problem, unit_problem

# The physical range a calibration's numbers can have: no scan is ten million pixels long, no well is deeper
# than 100,000 ft (the deepest is about 40,000), and a LAS of more than ten million samples (a 0.0001 step
# over a kilometre) is a typing error, not a log: each refused by name before any work rather than found out
# as a MemoryError or a one-sample LAS after it
MAX_PIXEL = 10_000_000.0
MAX_DEPTH = 100_000.0
MAX_SAMPLES = 10_000_000
# the finest step a log can be read at: a pixel of the most detailed print (1:20) scanned at 1,000 dpi is
# 0.0017 ft or 0.0005 m of depth, so a step of 0.0001 (either unit) is already several samples a pixel; a finer
# one (2.5e-7 wrote 29,999 depths that no longer increased once printed, and STEP 0.0) is a typing error
MIN_STEP = 1e-4
# curves of one calibration: the 36 labelled archive scans print at most 38 (a mud log's gas and drilling
# curves); each curve is traced on its own (about 0.25 s on 2 cores), so 10,000 ran past 300 s showing nothing
MAX_CURVES = 100
# the largest end a curve's scale can have: the widest scales printed are gas in ppm (100 % gas is 1,000,000) and
# pressures of some 30,000 psi, so a billion is past any log; a larger end ([0, 1e308], finite, was accepted) writes
# values of up to 309 digits into the LAS (it prints 4 decimals, never exponents), nothing a reader can take
MAX_SCALE = 1e9


def _fail(reason: str, field: str | None = None):
    """A check's refusal, ``field`` (relative to where the check sits, ``scale``) named before the reason."""
    return PydanticCustomError("welltrace", "{reason}", {"reason": reason, "field": field or ""})


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- value types: each refuses in the project's words, naming what it got -----------------------------------


def _finite(value):
    bad = isinstance(value, bool) or not isinstance(value, (int, float))
    try:
        bad = bad or not math.isfinite(value)  # an integer of 400 digits is no float: OverflowError
    except OverflowError:
        bad = True
    if bad:
        raise _fail(f"expected a finite number, got {_shown(value)}")
    return float(value)


def _two(value):
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise _fail(f"expected two numbers [a, b], got {_shown(value)}")
    return tuple(value)


def _flag(value):
    if not isinstance(value, bool):
        raise _fail(f"must be true or false, got {_shown(value)}")
    return value


def _text(value):
    if not isinstance(value, str):
        raise _fail(f"must be text, got {_shown(value)}")
    problem = text_problem(value)
    if problem:
        raise _fail(problem)
    return value


def _list_of(what: str):
    def check(value):
        if not isinstance(value, list):
            raise _fail(f"expected a list of {what}")
        return value

    return check


Number = Annotated[float, BeforeValidator(_finite)]
Pair = Annotated[tuple[Number, Number], BeforeValidator(_two)]
Flag = Annotated[bool, BeforeValidator(_flag)]
Text = Annotated[str, BeforeValidator(_text)]


def _scale_problem(scale) -> str | None:
    """Why a scale's ends cannot be a log's (an end past :data:`MAX_SCALE` either side of 0), else None."""
    for end in scale:
        if abs(end) >= MAX_SCALE:
            return f"{end:g} is larger than any log reads (ends within ±{MAX_SCALE:g})"
    return None


def _pick(value):
    pixel, depth = _finite_pair(value)
    if not 0.0 <= pixel < MAX_PIXEL:
        raise _fail(f"pixel {pixel:g} is outside any scan (0 to {MAX_PIXEL:,.0f})")
    if abs(depth) >= MAX_DEPTH:
        raise _fail(f"depth {depth:g} is deeper than any well (under {MAX_DEPTH:,.0f})")
    return (pixel, depth)


def _finite_pair(value) -> tuple[float, float]:
    pair = _two(value)
    for k, v in enumerate(pair):
        try:
            _finite(v)
        except PydanticCustomError as exc:
            raise _fail(exc.context["reason"], f"[{k}]") from None
    return float(pair[0]), float(pair[1])


Pick = Annotated[tuple[float, float], BeforeValidator(_pick)]
Picks = Annotated[list[Pick], BeforeValidator(_list_of("[pixel, depth] pairs"))]


class _Strict(BaseModel):
    # strict: no coercion ("1" is no number, 1 is no flag); unknown fields ("draft", "color" of old files) are
    # ignored, as they always were
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class ScaleChangeFields(_Strict):
    """One entry of a curve's ``scale_changes``: from this depth down the curve reads on this scale (a new box
    printed partway down the log: a mud log's gas scale widened)."""

    from_depth: Number
    scale: Pair

    @model_validator(mode="after")
    def _ends(self):
        if abs(self.from_depth) >= MAX_DEPTH:
            raise _fail(f"{self.from_depth:g} is deeper than any well (under {MAX_DEPTH:,.0f})", "from_depth")
        if self.scale[0] == self.scale[1]:
            raise _fail(f"both ends are {self.scale[0]:g}", "scale")
        if _scale_problem(self.scale):
            raise _fail(_scale_problem(self.scale), "scale")
        return self


class CurveFields(_Strict):
    """One entry of ``curves``."""

    mnemonic: str
    klass: int = Field(alias="class")
    track: Pair
    scale: Pair
    log: Flag = False
    wrap: Flag = False
    backup: Any = None
    colour: Any = None
    backup_colour: Any = None
    color: Any = None  # the plot colour: a hint for the app, ignored unless it is text
    unit: Text = ""
    description: Text = ""
    proposed: Flag = False
    scale_changes: Annotated[list[ScaleChangeFields], BeforeValidator(_list_of("{from_depth, scale}"))] = []

    @field_validator("mnemonic", mode="before")
    @classmethod
    def _mnemonic(cls, value):
        if not isinstance(value, str) or not value.strip() or any(ch.isspace() for ch in value.strip()):
            raise _fail(f"must be a non-empty word, got {_shown(value)}")
        mnemonic = value.strip().upper()
        problem = mnemonic_problem(mnemonic)
        if problem:
            raise _fail(f"{mnemonic!r} {problem}")
        return mnemonic

    @field_validator("klass", mode="before")
    @classmethod
    def _class(cls, value):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CLASS:
            raise _fail(f"must be 1, 2 or 3, got {_shown(value)}")
        return value

    @field_validator("unit", mode="after")
    @classmethod
    def _unit(cls, value: str):
        problem = unit_problem(value)
        if problem:
            raise _fail(f"{value!r} {problem}")
        return value

    @field_validator("backup", mode="before")
    @classmethod
    def _backup(cls, value):
        if value is not None and value not in BACKUP_SIDES:
            raise _fail(f"must be \"high\" or \"low\", got {_shown(value)}")
        return value

    @field_validator("colour", "backup_colour", mode="before")
    @classmethod
    def _ink(cls, value):
        if value is None:
            return None
        from core.io.colour import parse_colour

        try:
            parse_colour(value)
        except ValueError as exc:
            raise _fail(str(exc)) from None
        return value.strip().lower()

    @model_validator(mode="after")
    def _together(self):
        track, scale = self.track, self.scale
        if abs(track[1] - track[0]) < 1.0:
            raise _fail(f"zero width ({track[0]:g} to {track[1]:g})", "track")
        if scale[0] == scale[1]:
            raise _fail(f"both ends are {scale[0]:g}", "scale")
        if _scale_problem(scale):
            raise _fail(_scale_problem(scale), "scale")
        if self.log and (scale[0] <= 0 or scale[1] <= 0):
            raise _fail(f"a log track needs positive ends, got {list(scale)}", "scale")
        if self.backup is not None and not self.wrap:
            raise _fail("a backup scale needs \"wrap\": true", "backup")
        if self.backup_colour is not None and (self.backup is None or self.colour is None):
            raise _fail("the backup scale's ink needs a backup scale (\"backup\") and the curve's own ink "
                        "(\"colour\")", "backup_colour")
        for k, change in enumerate(self.scale_changes):
            if self.log and min(change.scale) <= 0:
                raise _fail(f"a log track needs positive ends, got {list(change.scale)}", f"scale_changes[{k}].scale")
        depths = sorted(c.from_depth for c in self.scale_changes)
        if any(b == a for a, b in zip(depths, depths[1:])):
            raise _fail("two changes at one depth", "scale_changes")
        return self

    def spec(self) -> CurveSpec:
        return CurveSpec(mnemonic=self.mnemonic, unit=self.unit, description=self.description, klass=self.klass,
                         track=self.track, scale=self.scale, log=self.log, wrap=self.wrap, backup=self.backup,
                         plot_colour=self.color if isinstance(self.color, str) else None, colour=self.colour,
                         backup_colour=self.backup_colour, proposed=self.proposed,
                         scale_changes=sorted((c.from_depth, tuple(c.scale)) for c in self.scale_changes))


class SectionFields(_Strict):
    """One entry of ``sections``."""

    span: Pair
    kind: Any = "main"
    depth_picks: Picks | None = None

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value):
        if value not in SECTION_KINDS:
            raise _fail(f"must be one of {', '.join(SECTION_KINDS)}, got {_shown(value)}")
        return value

    @model_validator(mode="after")
    def _span(self):
        a, b = self.span
        if not (0 <= a < b < MAX_PIXEL):
            raise _fail(f"[{a:g}, {b:g}] must be two pixels, the first >= 0 and less than the second", "span")
        if int(round(b)) - int(round(a)) < 2:
            raise _fail(f"[{a:g}, {b:g}] covers no stretch of the scan (two pixels at least)", "span")
        return self


class CalibrationFields(_Strict):
    """A whole calibration file, in the order its fields are checked."""

    version: Any
    depth_axis: Any
    depth_unit: Any
    depth_picks: Picks
    step: Number
    curves: Annotated[list[CurveFields], BeforeValidator(_list_of("curves"))]
    sections: Annotated[list[SectionFields], BeforeValidator(_list_of("{kind, span, depth_picks?}"))] = []
    draft: Any = None

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value):
        # 1 (or 1.0); never True, which Python counts as 1
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != CALIBRATION_VERSION:
            raise _fail(f"{_shown(value)} is not supported (expected {CALIBRATION_VERSION})")
        return CALIBRATION_VERSION

    @field_validator("depth_axis", mode="before")
    @classmethod
    def _axis(cls, value):
        if value not in ("x", "y") or not isinstance(value, str):
            raise _fail(f"must be \"x\" or \"y\", got {_shown(value)}")
        return value

    @field_validator("depth_unit", mode="before")
    @classmethod
    def _unit(cls, value):
        if not isinstance(value, str) or value.upper() not in DEPTH_UNITS:
            raise _fail(f"must be one of {', '.join(DEPTH_UNITS)}, got {_shown(value)}")
        return value.upper()

    @field_validator("curves", mode="after")
    @classmethod
    def _curves(cls, curves: list[CurveFields]):
        if len(curves) > MAX_CURVES:
            raise _fail(f"{len(curves):,} curves: at most {MAX_CURVES} (a scan's scale boxes print at most a few "
                        "dozen)")
        seen: set[str] = set()
        # a curve's confidence is written beside it as MNEMONIC_CONF (core/digitize/output/las.py)
        confidences = {f"{c.mnemonic}_CONF" for c in curves}
        for i, c in enumerate(curves):
            if c.mnemonic in seen or c.mnemonic == "DEPT":
                raise _fail(f"{c.mnemonic} is used twice (or is the index DEPT)", f"[{i}].mnemonic")
            if c.mnemonic in confidences:
                raise _fail(f"{c.mnemonic} is the name of {c.mnemonic[:-5]}'s confidence curve, written beside it",
                            f"[{i}].mnemonic")
            seen.add(c.mnemonic)
        return curves

    @field_validator("step", mode="after")
    @classmethod
    def _step(cls, value: float):
        if value <= 0:
            raise _fail(f"must be positive, got {value:g}")
        if value < MIN_STEP:
            raise _fail(f"{value:g} is finer than any log can be read at (at least {MIN_STEP:g})")
        return value

    @model_validator(mode="after")
    def _sections_in_order(self):
        for i in range(1, len(self.sections)):
            if self.sections[i].span[0] < int(round(self.sections[i - 1].span[1])):
                raise _fail("overlaps the section before it (they are in order along depth and do not overlap)",
                            f"sections[{i}].span")
        _check_step(self.step, self.depth_picks)
        return self


def _check_step(step: float, picks: list[tuple[float, float]]) -> None:
    """A step that samples the picked depths: at least two samples between the shallowest and the deepest pick
    and at most ``MAX_SAMPLES`` over them (``step: 1e300`` wrote one sample at depth 0 for a 1780-1849 m scan,
    ``1e-300`` ended in a MemoryError)."""
    depths = [d for _, d in picks]
    span = max(depths) - min(depths) if len(depths) >= 2 else 0.0
    if span <= 0:
        return  # too few picks to know the span: the Calibration says so itself
    if step > span / 2:
        raise _fail(f"{step:g} leaves fewer than three samples over the picked depths ({min(depths):g} to "
                    f"{max(depths):g})", "step")
    if span / step > MAX_SAMPLES:
        raise _fail(f"{step:g} asks for {span / step:,.0f} samples over the picked depths (at most "
                    f"{MAX_SAMPLES:,})", "step")


def parse_proposed_tracks(raw) -> list[tuple[float, float]]:
    """``proposed_tracks`` as written by a proposal: pairs of finite numbers; anything else is dropped (a hint for
    the app, never a reason to refuse a calibration)."""
    out = []
    for t in raw if isinstance(raw, list) else []:
        if isinstance(t, (list, tuple)) and len(t) == 2 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in t):
            out.append((float(t[0]), float(t[1])))
    return out


def ignored_fields(data: dict) -> list[str]:
    """The fields of a calibration file's JSON that no calibration has, each with the field it most likely meant
    (``curves[1].Log (did you mean "log"?)``), sorted: ignored, as unknown fields always were, but named. The
    fields this project's own files carry beside the schema's are no such fields: a draft's ``draft``, a
    proposal's ``proposed_tracks``, a refused section's ``refused``."""
    import difflib

    def named(where: str, obj, known: set[str]) -> list[str]:
        if not isinstance(obj, dict):
            return []
        out = []
        for key in obj:
            if key in known or not isinstance(key, str):
                continue
            lowered = {k.lower(): k for k in known}
            close = lowered.get(key.strip().lower()) or next(iter(difflib.get_close_matches(key, known, 1, 0.6)), None)
            out.append(f"{where}{key}" + (f' (did you mean "{close}"?)' if close else ""))
        return out

    top = {f.alias or n for n, f in CalibrationFields.model_fields.items()} | {"proposed_tracks"}
    curve = {f.alias or n for n, f in CurveFields.model_fields.items()}
    change = set(ScaleChangeFields.model_fields)
    section = set(SectionFields.model_fields) | {"refused"}
    out = named("", data, top)
    for i, c in enumerate(data.get("curves") or []):
        out += named(f"curves[{i}].", c, curve)
        for k, ch in enumerate((c.get("scale_changes") or []) if isinstance(c, dict) else []):
            out += named(f"curves[{i}].scale_changes[{k}].", ch, change)
    for i, sec in enumerate(data.get("sections") or []):
        out += named(f"sections[{i}].", sec, section)
    return sorted(out)


# pydantic's own refusals (a field missing, an entry that is no object) in the project's words
_PYDANTIC_WORDS = {"missing": "missing", "model_type": "expected an object", "model_attributes_type":
                   "expected an object", "dict_type": "expected an object", "list_type": "expected a list"}


def field_name(loc: tuple) -> str:
    """``("curves", 1, "scale")`` → ``curves[1].scale``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _one_line(exc: ValidationError) -> str:
    """The first refusal of a validation, as ``field: reason``."""
    err = exc.errors(include_url=False)[0]
    ctx = err.get("ctx") or {}
    where = field_name(tuple(err["loc"]))
    sub = ctx.get("field", "")
    if sub:
        where = where + sub if sub.startswith("[") or not where else f"{where}.{sub}"
    reason = ctx.get("reason") if err["type"] == "welltrace" else _PYDANTIC_WORDS.get(err["type"], err["msg"])
    return f"{where}: {reason}" if where else str(reason)


def parse_calibration(data, path: str | None) -> Calibration:
    """A calibration from a file's JSON, every field checked; an error names the field (``curves[1].scale``)."""
    if not isinstance(data, dict):
        raise CalibrationError(path, "top level must be a JSON object")
    picks = data.get("depth_picks")
    if isinstance(data.get("draft"), str) and isinstance(picks, list) and len(picks) < 2:
        # what a refused proposal found, kept for the user to pick two depths
        raise CalibrationError(path, f"a draft, not yet a calibration: {data['draft']}")
    try:
        fields = CalibrationFields.model_validate(data)
    except ValidationError as exc:
        raise CalibrationError(path, _one_line(exc)) from None
    except RecursionError:
        raise CalibrationError(path, "nested too deeply to be a calibration") from None
    sections = [Section(int(round(s.span[0])), int(round(s.span[1])), s.kind,
                        None if s.depth_picks is None else list(s.depth_picks)) for s in fields.sections]
    try:
        return Calibration(
            depth_axis=fields.depth_axis, depth_unit=fields.depth_unit, depth_picks=list(fields.depth_picks),
            step=fields.step, curves=[c.spec() for c in fields.curves], version=fields.version, sections=sections,
            proposed_tracks=parse_proposed_tracks(data.get("proposed_tracks")), source=path,
            ignored_fields=ignored_fields(data),
        )
    except CalibrationError as exc:
        raise CalibrationError(path, exc.reason) from None
