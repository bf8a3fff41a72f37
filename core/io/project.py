"""A project: a folder of scans with their masks and calibrations, plus ``project.json``.

Paths inside ``project.json`` are relative and must stay inside the folder; a
damaged file or a path that escapes the folder is a clear error and nothing
else in the project is touched. A synthetic folder (with ``manifest.json``)
is a valid project.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from core.common.atomic import atomic_write_text, json_text
from core.common.errors import DataError
from core.common.vocabulary import CLASS_NAMES
from core.io.file_names import calib_path_for, mask_path_for
from core.io.scan import is_scan_file

from .file_names import digitized_path_for

PROJECT_FILE = "project.json"
PROJECT_VERSION = 1


@dataclass
class Project:
    folder: Path
    scans: list[str] = field(default_factory=list)  # relative to the folder
    settings: dict = field(default_factory=dict)
    validation: list[str] = field(default_factory=list)
    class_names: list[str] = field(default_factory=lambda: list(CLASS_NAMES))

    @property
    def path(self) -> Path:
        return self.folder / PROJECT_FILE

    def scan_paths(self) -> list[Path]:
        return [self.folder / s for s in self.scans]

    def state(self, scan: Path) -> list[str]:
        """What exists for a scan: unlabelled / labelled, calibrated, digitised."""
        st = ["labelled" if mask_path_for(scan).exists() else "unlabelled"]
        if calib_path_for(scan).exists():
            st.append("calibrated")
        if digitized_path_for(scan).exists():
            st.append("digitised")
        return st

    def add_scan(self, path: str | Path) -> Path:
        """Add a scan; one from outside the folder is copied in (paths stay inside)."""
        src = Path(path).resolve()
        inside = _is_inside(src, self.folder)
        dest = src if inside else self.folder / src.name
        rel = dest.relative_to(self.folder.resolve()).as_posix() if inside else dest.name
        # well7.tif beside well7.png: one NAME.calib.json, NAME.mask.png and NAME.digitized.las for both, each
        # digitise writing over the other's LAS (as a folder run refuses dup.png beside dup.tif)
        for other in self.scans:
            o = Path(other)
            if other != rel and o.parent == Path(rel).parent and o.stem == Path(rel).stem:
                raise DataError(src, f"the project already holds {other}: its calibration, labels and LAS "
                                f"({o.stem}.calib.json …) would be this scan's too; rename one of the two")
        if not inside:
            if dest.exists():
                raise DataError(src, f"the project already holds a file named {src.name}")
            shutil.copy2(src, dest)
            for side in (mask_path_for(src), calib_path_for(src)):
                if side.exists() and not (self.folder / side.name).exists():
                    shutil.copy2(side, self.folder / side.name)
        rel = dest.relative_to(self.folder.resolve()).as_posix()
        if rel not in self.scans:
            self.scans.append(rel)
            self.save()
        return dest

    def save(self) -> None:
        data = {"version": PROJECT_VERSION, "scans": self.scans, "settings": self.settings,
                "class_names": self.class_names, "split": {"validation": self.validation}}
        atomic_write_text(self.path, json_text(data))


def _is_inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def read_project_file(path: Path) -> dict:
    """``project.json`` as a JSON object, or a ``DataError`` naming it: unreadable, not JSON, nested past what
    Python's parser takes (a deeply nested file was a RecursionError, exit 1), or no object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(path, f"project file is damaged: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise DataError(path, "project file is damaged: its JSON is nested too deeply") from None
    if not isinstance(data, dict):
        raise DataError(path, "project file is damaged: the top level is no JSON object")
    return data


def open_project(folder: str | Path, create: bool = True) -> Project:
    """Open a project folder; without ``project.json`` its scans are found (and the file
    written when ``create``)."""
    root = Path(folder)
    if not root.is_dir():
        raise DataError(root, "not a folder")
    pj = root / PROJECT_FILE
    if not pj.exists():
        scans = sorted(p.name for p in root.iterdir() if p.is_file() and is_scan_file(p))
        proj = Project(root, scans)
        if create:
            proj.save()
        return proj
    data = read_project_file(pj)
    if data.get("version") != PROJECT_VERSION:
        raise DataError(pj, f"project file has no supported version (expected {PROJECT_VERSION})")
    scans = data.get("scans", [])
    if not isinstance(scans, list) or not all(isinstance(s, str) for s in scans):
        raise DataError(pj, "scans: expected a list of relative paths")
    for s in scans:
        if Path(s).is_absolute() or not _is_inside(root / s, root):
            raise DataError(pj, f"scans: {s!r} points outside the project folder")
    split = data.get("split", {}) if isinstance(data.get("split", {}), dict) else {}
    return Project(root, list(scans), data.get("settings", {}) or {}, list(split.get("validation", []) or []),
                   list(data.get("class_names", CLASS_NAMES)))
