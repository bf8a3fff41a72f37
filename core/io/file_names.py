"""Every file name derived from a scan's: its calibration and mask beside it, the LAS files and QC pages digitising writes."""

from __future__ import annotations

import os
import re
from pathlib import Path


def las_path_for(out: str | Path, suffix: str) -> Path:
    """``OUT.las`` for the main pass, ``OUT.repeat.las`` and the like for the other sections."""
    out = Path(out)
    return out if not suffix else out.with_name(f"{out.stem}.{suffix}{out.suffix or '.las'}")


def digitized_path_for(scan: Path) -> Path:
    return scan.with_name(scan.stem + ".digitized.las")


def mask_path_for(scan_path: str | os.PathLike) -> Path:
    p = Path(scan_path)
    return p.with_name(_stem(p) + ".mask.png")


def calib_path_for(scan_path: str | os.PathLike) -> Path:
    p = Path(scan_path)
    return p.with_name(_stem(p) + ".calib.json")


def _stem(p: Path) -> str:
    name = p.name
    for suffix in (".mask.png", ".calib.json", ".truth.las"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return p.stem


OUTPUT_MARK = ".digitized."  # in the name of every file digitising writes (``project.digitized_path_for``)


def digitized_las_for(scan: Path, out_dir: Path | None = None) -> Path:
    """``NAME.digitized.las`` beside the scan (what the app writes and looks for), or in ``out_dir``."""
    las = digitized_path_for(scan)
    return out_dir / las.name if out_dir else las


def qc_path_for(las: Path) -> Path:
    """The QC picture beside a LAS file: ``NAME.digitized.qc.png`` for ``NAME.digitized.las``."""
    return las.with_name(f"{las.stem}.qc.png")


def qc_page_paths(path: str | Path, pages: int) -> list[Path]:
    """``PATH`` for a one-page picture; ``NAME-p01.png``, ``NAME-p02.png``… beside it for more."""
    path = Path(path)
    if pages <= 1:
        return [path]
    return [path.with_name(f"{path.stem}-p{i + 1:02d}{path.suffix or '.png'}") for i in range(pages)]



def stale_qc_pages(path: str | Path, pages: list[Path]) -> list[Path]:
    """The QC pictures of ``path`` an earlier run left that are not among ``pages`` (this run's): the one-page
    picture ``PATH`` when this run wrote pages, and ``NAME-pNN.png`` past this run's last page (a scan digitised
    again with a shorter section kept 51 pages of the earlier run beside its 5)."""
    path = Path(path)
    current = {Path(p).name for p in pages}
    pattern = re.compile(re.escape(path.stem) + r"-p\d{2,}" + re.escape(path.suffix or ".png"))
    return sorted(path.parent / n for n in _file_names(path.parent)
                  if n not in current and (n == path.name or pattern.fullmatch(n)))


def stale_section_las(out: str | Path, written: list[str | Path]) -> list[Path]:
    """The LAS files of other sections of ``out`` (``OUT.repeat.las``, ``OUT.sectionN.las``: :func:`las_path_for`'s
    names) that an earlier run left and this one, which wrote ``written``, did not: a repeat pass taken out of the
    calibration kept its LAS beside the new main pass's."""
    out = Path(out)
    current = {Path(p).name for p in written}
    pattern = re.compile(re.escape(out.stem) + r"\.(repeat|section\d+)" + re.escape(out.suffix or ".las"))
    return sorted(out.parent / n for n in _file_names(out.parent) if n not in current and pattern.fullmatch(n))


def _file_names(folder: Path) -> list[str]:
    """The names of the plain files in ``folder``; none where it cannot be listed (an earlier run's leftovers are
    then not found, and nothing is removed)."""
    try:
        return [e.name for e in os.scandir(folder) if e.is_file()]
    except OSError:
        return []
