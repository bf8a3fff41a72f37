"""LAS 2.0 writing and reading on lasio, following the LAS rules of docs/file-formats.md.

- ``DEPT`` first, in the calibration's unit; STRT/STOP/STEP written exactly.
- NULL is −999.25 and written as the NULL item (lasio's default differs).
- Provenance (source scan, model, date) goes in the ~Other section.
- Missing values are NULL, never invented.
- Header text stays on its line (``core/io/las_text.py``): a mnemonic or unit a LAS cannot hold is refused, a
  control character in any other text escaped, so nothing a calibration or a file name holds adds a header item.
- Depths and values are written to as many decimals as they need: every depth distinct, STEP exact, a curve on a
  0-0.001 scale as finely resolved as one on 0-150.
"""

from __future__ import annotations

import datetime as _dt
import io
import math
import os
from dataclasses import dataclass, field

import lasio
import numpy as np

from core.common.atomic import atomic_write_text
from core.common.errors import LasError, require_file
from core.io.las_text import header_text, mnemonic_problem, unit_problem

NULL = -999.25
VALUE_DECIMALS = 4  # a value's decimals unless its curve asks for more (``LasCurve.decimals``)
MAX_DECIMALS = 10  # float64 holds 15-16 digits: a depth of 99,999 keeps ten decimals exact


@dataclass
class LasCurve:
    mnemonic: str
    unit: str
    description: str
    values: np.ndarray  # NaN where unknown; written as NULL
    decimals: int | None = None  # decimals its values are written to (None: ``write_las``'s value_decimals)


@dataclass
class LasData:
    depth: np.ndarray
    depth_unit: str
    curves: list[LasCurve]
    well: dict[str, str] = field(default_factory=dict)
    other: str = ""
    step: float | None = None

    def curve(self, mnemonic: str) -> LasCurve:
        for c in self.curves:
            if c.mnemonic.upper() == mnemonic.upper():
                return c
        raise KeyError(mnemonic)

    @property
    def mnemonics(self) -> list[str]:
        return [c.mnemonic for c in self.curves]


def _decimals_for(step: float) -> int:
    """Enough decimals to write every multiple of ``step`` exactly (a step of 1/3 gets :data:`MAX_DECIMALS`)."""
    for d in range(0, MAX_DECIMALS + 1):
        if abs(round(step, d) - step) <= 1e-9 * max(abs(step), 1e-300) or abs(round(step, d) - step) < 1e-12:
            return d
    return MAX_DECIMALS


def value_decimals_for(low: float, high: float, log: bool = False) -> int:
    """Decimals that resolve a ten-thousandth of a scale from ``low`` to ``high`` (a thousandth of its smaller
    end on a log scale), at least :data:`VALUE_DECIMALS`: 4 for 0-150 and 0.2-2000 (log), 7 for 0-0.001 (written
    to 4, a 0-0.001 curve's 1,001 samples took 8 distinct values)."""
    span = 10.0 * min(abs(low), abs(high)) if log else abs(high - low)
    if not math.isfinite(span) or span <= 0:
        return VALUE_DECIMALS
    return int(min(MAX_DECIMALS, max(VALUE_DECIMALS, math.ceil(4 - math.log10(span) - 1e-9))))


def _check_names(path, curves: list[LasCurve]) -> None:
    """Refuse curves a LAS cannot hold: a mnemonic or unit that would be read back as something else, or one
    mnemonic twice (a reader keeps one of them, or renames both)."""
    seen = {"DEPT"}
    for c in curves:
        problem = mnemonic_problem(c.mnemonic.upper())
        if problem:
            raise LasError(path, f"curve {c.mnemonic!r}: its mnemonic {problem}")
        problem = unit_problem(c.unit)
        if problem:
            raise LasError(path, f"curve {c.mnemonic}: its unit {c.unit!r} {problem}")
        if c.mnemonic.upper() in seen:
            raise LasError(path, f"curve {c.mnemonic}: a second curve of that name (or the index DEPT)")
        seen.add(c.mnemonic.upper())


def write_las(
    path: str | os.PathLike,
    depth: np.ndarray,
    curves: list[LasCurve],
    *,
    depth_unit: str = "FT",
    step: float | None = None,
    well: dict[str, str] | None = None,
    provenance: dict[str, str] | None = None,
    value_decimals: int = VALUE_DECIMALS,
) -> None:
    """Write a LAS 2.0 file atomically."""
    depth = np.asarray(depth, dtype=np.float64)
    if depth.ndim != 1 or depth.size == 0:
        raise LasError(path, "no depth samples to write")
    if depth.size > 1 and np.any(np.diff(depth) <= 0):
        raise LasError(path, "depths must increase strictly")
    if step is None:
        step = float(np.median(np.diff(depth))) if depth.size > 1 else 0.0
    _check_names(path, curves)
    d_dec = max(_decimals_for(step), 2)
    if depth.size > 1 and np.any(np.diff(np.round(depth, d_dec)) <= 0):  # as printed, not only as held
        raise LasError(path, f"a step of {step:g} cannot be written: its depths are not distinct at {d_dec} "
                       "decimals")
    unit = depth_unit.upper()
    las = lasio.LASFile()
    las.well["NULL"].value = NULL
    las.well["STRT"].unit = unit
    las.well["STOP"].unit = unit
    las.well["STEP"].unit = unit
    today = _dt.date.today().isoformat()
    for key, value in (well or {}).items():
        key = key.upper()
        problem = mnemonic_problem(key)
        if problem:
            raise LasError(path, f"well item {key!r}: its mnemonic {problem}")
        value = header_text(str(value))
        if key in las.well:
            las.well[key].value = value
        else:
            las.well.append(lasio.HeaderItem(key, value=value))
    if not (well or {}).get("DATE"):
        las.well["DATE"].value = today
    las.append_curve("DEPT", depth, unit=unit, descr="Depth")
    for c in curves:
        values = np.asarray(c.values, dtype=np.float64)
        if values.shape != depth.shape:
            raise LasError(path, f"curve {c.mnemonic} has {values.size} samples for {depth.size} depths")
        values = np.where(np.isfinite(values), values, NULL)
        las.append_curve(c.mnemonic, values, unit=c.unit, descr=header_text(c.description, description=True))
    prov = dict(provenance or {})
    prov.setdefault("date", today)
    prov.setdefault("software", "WellTrace")
    # one line a fact: a scan's file name may hold a line break ("~A" on the next line would start the data)
    las.other = "\n".join(f"{header_text(str(k))}: {header_text(str(v))}" for k, v in prov.items())

    column_fmt = {0: f"%.{d_dec}f"}
    for i, c in enumerate(curves, start=1):
        column_fmt[i] = f"%.{value_decimals if c.decimals is None else c.decimals}f"
    buf = io.StringIO()
    las.write(
        buf,
        version=2.0,
        wrap=False,
        STRT=round(float(depth[0]), d_dec),
        STOP=round(float(depth[-1]), d_dec),
        STEP=round(float(step), d_dec),
        fmt=f"%.{value_decimals}f",
        column_fmt=column_fmt,
    )
    text = buf.getvalue()
    # lasio without chardet guesses windows-1252 for a UTF-8 file ("Müller" read back "MÃ¼ller") but takes a file
    # that starts with the byte-order mark as UTF-8: a file with non-ASCII text gets one; an ASCII file (a LAS 2.0
    # header as most readers expect it) stays as it was
    atomic_write_text(path, text if text.isascii() else "\ufeff" + text)


def read_las(path: str | os.PathLike) -> LasData:
    """Read a LAS file; any parse failure becomes a clear :class:`LasError`."""
    p = require_file(path, LasError, "a LAS file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise LasError(p, f"cannot read: {exc.strerror or exc}") from None
    try:  # UTF-8 as written here (lasio's own guess read a UTF-8 description as mojibake), else Latin-1
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    try:
        las = lasio.read(io.StringIO(text), ignore_header_errors=False)
    except Exception as exc:  # noqa: BLE001 - lasio raises many types; all mean "unreadable"
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LasError(p, f"lasio cannot parse it: {msg}") from None
    if len(las.curves) < 1 or las.index is None or len(las.index) == 0:
        raise LasError(p, "no data in the ~A section")
    depth = np.asarray(las.index, dtype=np.float64)
    _check_complete(p, las, depth)
    null = las.well["NULL"].value if "NULL" in las.well else None
    curves = []
    for item in las.curves[1:]:
        vals = np.asarray(item.data, dtype=np.float64)
        if null is not None:
            try:
                vals = np.where(np.isclose(vals, float(null)), np.nan, vals)
            except (TypeError, ValueError):
                pass
        curves.append(LasCurve(item.mnemonic, item.unit or "", item.descr or "", vals))
    step_item = las.well["STEP"].value if "STEP" in las.well else None
    try:
        step = float(step_item) if step_item not in (None, "") else None
    except (TypeError, ValueError):
        step = None
    unit = (las.curves[0].unit or las.well["STRT"].unit or "").upper()
    well = {item.mnemonic: str(item.value) for item in las.well}
    other = las.other if isinstance(las.other, str) else str(las.other)
    if step is not None and (not math.isfinite(step) or step == 0):
        step = None
    return LasData(depth=depth, depth_unit=unit, curves=curves, well=well, other=other, step=step)


def _header_number(las, key: str) -> float | None:
    try:
        value = float(las.well[key].value)
    except (KeyError, TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value != NULL else None


def _check_complete(path, las, depth: np.ndarray) -> None:
    """Refuse a LAS whose data stop short of the depths its header gives: a file cut off while it was copied read
    as a shorter log (``eval`` scored 67 of 1,002 samples of such a file and called it r = 1.000). The ~A
    section must run from STRT to STOP, within a step (half a step of rounding either way)."""
    start, stop, step = (_header_number(las, k) for k in ("STRT", "STOP", "STEP"))
    if start is None or stop is None:
        return
    tol = abs(step) if step else 0.0
    tol = max(tol, 1e-6 * max(abs(start), abs(stop), 1.0))
    first, last = float(depth[0]), float(depth[-1])
    if abs(first - start) > tol or abs(last - stop) > tol:
        raise LasError(path, f"its data run from {first:g} to {last:g}, its header from STRT {start:g} to STOP "
                       f"{stop:g}: the file is truncated, or its header does not describe its data")
