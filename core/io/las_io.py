"""LAS 2.0 writing and reading on lasio, following the LAS rules of docs/file-formats.md.

- ``DEPT`` first, in the calibration's unit; STRT/STOP/STEP written exactly.
- NULL is −999.25 and written as the NULL item (lasio's default differs).
- Provenance (source scan, model, date) goes in the ~Other section.
- Missing values are NULL, never invented.
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

NULL = -999.25


@dataclass
class LasCurve:
    mnemonic: str
    unit: str
    description: str
    values: np.ndarray  # NaN where unknown; written as NULL


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
    """Enough decimals to write every multiple of ``step`` exactly."""
    for d in range(0, 7):
        if abs(round(step, d) - step) < 1e-9:
            return d
    return 6


def write_las(
    path: str | os.PathLike,
    depth: np.ndarray,
    curves: list[LasCurve],
    *,
    depth_unit: str = "FT",
    step: float | None = None,
    well: dict[str, str] | None = None,
    provenance: dict[str, str] | None = None,
    value_decimals: int = 4,
) -> None:
    """Write a LAS 2.0 file atomically."""
    depth = np.asarray(depth, dtype=np.float64)
    if depth.ndim != 1 or depth.size == 0:
        raise LasError(path, "no depth samples to write")
    if depth.size > 1 and np.any(np.diff(depth) <= 0):
        raise LasError(path, "depths must increase strictly")
    if step is None:
        step = float(np.median(np.diff(depth))) if depth.size > 1 else 0.0
    unit = depth_unit.upper()
    las = lasio.LASFile()
    las.well["NULL"].value = NULL
    las.well["STRT"].unit = unit
    las.well["STOP"].unit = unit
    las.well["STEP"].unit = unit
    today = _dt.date.today().isoformat()
    for key, value in (well or {}).items():
        key = key.upper()
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
        las.append_curve(c.mnemonic, values, unit=c.unit, descr=c.description)
    prov = dict(provenance or {})
    prov.setdefault("date", today)
    prov.setdefault("software", "WellTrace")
    las.other = "\n".join(f"{k}: {v}" for k, v in prov.items())

    d_dec = max(_decimals_for(step), 2)
    column_fmt = {0: f"%.{d_dec}f"}
    for i in range(1, len(curves) + 1):
        column_fmt[i] = f"%.{value_decimals}f"
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
    atomic_write_text(path, buf.getvalue())


def read_las(path: str | os.PathLike) -> LasData:
    """Read a LAS file; any parse failure becomes a clear :class:`LasError`."""
    p = require_file(path, LasError, "a LAS file")
    try:
        las = lasio.read(str(p), ignore_header_errors=False)
    except Exception as exc:  # noqa: BLE001 - lasio raises many types; all mean "unreadable"
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LasError(p, f"lasio cannot parse it: {msg}") from None
    if len(las.curves) < 1 or las.index is None or len(las.index) == 0:
        raise LasError(p, "no data in the ~A section")
    depth = np.asarray(las.index, dtype=np.float64)
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
