"""A digitised result as a LAS file, and a LAS read back as a result."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.digitize.output.result import DigitizeResult
from core.digitize.rules.confidence import LOW_CONFIDENCE
from core.digitize.trace.params import Trace
from core.io.calibration import Calibration
from core.io.las_io import LasCurve, value_decimals_for, write_las


def results_from_las(path: str | Path, calib: Calibration, shape: tuple[int, int]
                     ) -> tuple[DigitizeResult | None, list[str]]:
    """:func:`result_from_las` of a scan's LAS, with the LAS of each other section it names beside it
    (``OUT.repeat.las``, as ``digitize`` writes them) read back into ``others`` in the section's own frame and
    depths: a scan opened again exports every pass, not its main one alone. Returns the result and what was left
    out, said (a section's LAS that cannot be read, or was written for another calibration); a section never
    digitised has no LAS and nothing to say."""
    from core.common.errors import InputError
    from core.io.file_names import las_path_for

    main = result_from_las(path, calib, shape)
    notes: list[str] = []
    if main is None:
        return None, notes
    length = calib.depth_length(shape)
    for i, (sec, suffix) in enumerate(zip(calib.sections, calib.section_files())):
        other = las_path_for(path, suffix)
        if not suffix or not other.exists():
            continue
        rows = max(0, min(sec.stop, length) - sec.start)
        part_shape = (rows, shape[1]) if calib.depth_axis == "y" else (shape[0], rows)
        try:
            res = result_from_las(other, calib.section_calibration(i), part_shape)
        except InputError as exc:
            notes.append(f"{other.name}: not read back ({exc.reason})")
            continue
        if res is None:
            notes.append(f"{other.name} was written for another calibration: digitise again")
            continue
        main.others.append((suffix, res))
    return main, notes


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
    method, basis = "digitised LAS", ""
    for line in las.other.splitlines():
        if line.lower().startswith("method"):
            method = line.split(":", 1)[-1].strip() or method
        elif line.lower().startswith("confidence:"):  # what its CONF curves are: kept when the result is saved again
            basis = line.split(":", 1)[-1].strip()
    return DigitizeResult(las.depth, values, traces, np.zeros(shape, np.uint8), method, confidence=confidence,
                          confidence_basis=basis)


CONFIDENCE_SUFFIX = "_CONF"


def confidence_mnemonic(mnemonic: str) -> str:
    """The LAS mnemonic of a curve's confidence: ``GR`` → ``GR_CONF``."""
    return f"{mnemonic}{CONFIDENCE_SUFFIX}"


def write_result(path: str | Path, result: DigitizeResult, calib: Calibration, source_scan: str,
                 model_name: str | None, well: dict[str, str] | None = None) -> None:
    # each curve to the decimals its scale needs (a 0-0.001 scale written to 4 took 8 distinct values)
    curves = [LasCurve(c.mnemonic, c.unit, c.description, result.values[c.mnemonic],
                       decimals=value_decimals_for(*c.scale, log=c.log)) for c in calib.curves]
    # each curve's confidence beside it, so the LAS says where a value is unsure rather than hide it: a reader
    # keeps every value and can filter on the confidence (below LOW_CONFIDENCE the QC picture tints it)
    curves += [LasCurve(confidence_mnemonic(c.mnemonic), "", f"confidence of {c.mnemonic} (0-1; below "
                        f"{LOW_CONFIDENCE:g} uncertain)", result.confidence[c.mnemonic])
               for c in calib.curves if c.mnemonic in result.confidence]
    write_las(path, result.depth, curves, depth_unit=calib.depth_unit, step=calib.step, well=well,
              provenance={"source scan": source_scan, "model": model_name or "classical tracer",
                          "method": result.method,
                          **({"confidence": result.confidence_basis} if result.confidence_basis else {})})

