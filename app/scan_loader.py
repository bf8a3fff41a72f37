"""Reading a scan and everything beside it, off the UI thread.

Decoding a 12,800 × 640 PNG takes 90–140 ms on two cores and a 30-megapixel
1-bit TIFF several hundred: on the UI thread that is a frozen window (the bar
is 100 ms). :func:`read_scan_bundle` runs in a :class:`app.workers.Task` and
hands back everything the window shows for one scan: the pixels, the mask
(checked against the scan), the calibration and the display pyramid, so the
UI thread only swaps references.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.common.errors import CalibrationError, InputError
from core.digitize.output.las import results_from_las
from core.io.calibration import Calibration
from core.io.calibration_file import parse_proposed_tracks
from core.io.file_names import calib_path_for, digitized_path_for, mask_path_for
from core.io.scan import Scan, display_pyramid, load_mask, load_scan


@dataclass
class ScanBundle:
    path: Path
    scan: Scan
    mask: np.ndarray
    calib: Calibration | None
    pyramid: list[np.ndarray]  # display levels (grey or RGB): the scan, then halved until the long side is small
    proposed_tracks: list[tuple[float, float]] = field(default_factory=list)  # from a calibration proposal
    # a refused proposal's draft (``calibrate --propose`` found tracks and curves but no depths): its curves and
    # sections, for the user to go on from once two depths are picked
    draft: dict | None = None
    digitized: object | None = None  # the scan's digitised LAS read back (a DigitizeResult), if it has one
    notes: list[str] = field(default_factory=list)
    # a calibration file beside the scan that cannot be read: why (one line naming it); the scan opens without it
    # and the calibration the user makes replaces it (the file is kept aside if it held anything)
    calib_problem: str | None = None
    calib_empty: bool = False  # the unreadable file is empty: nothing in it to keep


def _calibration_or_draft(cpath: Path) -> tuple[Calibration | None, dict | None]:
    """The scan's calibration, or the draft a refused proposal left (its curves and tracks, no depths yet);
    any other bad calibration file raises CalibrationError naming the field."""
    if not cpath.exists():
        return None, None
    try:
        return Calibration.load(cpath), None
    except CalibrationError:
        try:
            raw = json.loads(cpath.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raw = None
        if isinstance(raw, dict) and isinstance(raw.get("draft"), str):
            return None, raw
        raise


def read_scan_bundle(path: Path, progress=None) -> ScanBundle:
    """The scan at ``path`` with its mask (zeros when it has none) and calibration; raises InputError
    naming the file on an unreadable scan or mask, so nothing of a bad scan reaches the window. A calibration
    file that cannot be read is said (``calib_problem``) and left out: the user makes another."""
    path = Path(path)
    scan = load_scan(path)
    if progress:
        progress(1, 3)
    mpath = mask_path_for(path)
    mask = load_mask(mpath, scan.image.shape) if mpath.exists() else np.zeros(scan.image.shape, np.uint8)
    cpath = calib_path_for(path)
    problem, empty = None, False
    try:
        calib, draft = _calibration_or_draft(cpath)
    except CalibrationError as exc:  # an empty or broken file beside the scan never keeps the scan from opening
        calib, draft, problem = None, None, exc.one_line()
        try:
            empty = not cpath.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            empty = False
    proposed = list(calib.proposed_tracks) if calib is not None else []
    if draft is not None:
        proposed = parse_proposed_tracks(draft.get("proposed_tracks"))
    if progress:
        progress(2, 3)
    pyramid = display_pyramid(scan.display)  # in colour when the scan has colour
    bundle = ScanBundle(path, scan, mask, calib, pyramid, proposed, draft=draft, calib_problem=problem,
                        calib_empty=empty)
    if empty:
        bundle.notes.append(f"{cpath.name} is empty: the scan opens uncalibrated, and the calibration you make is "
                            "saved in its place")
    dpath = digitized_path_for(path)
    if calib is not None and dpath.exists():
        try:
            # with its other sections' LAS (NAME.digitized.repeat.las): exported again with it
            bundle.digitized, said = results_from_las(dpath, calib, scan.image.shape)
            bundle.notes += said
        except InputError as exc:
            bundle.notes.append(f"{dpath.name}: not shown ({exc.reason})")
        if bundle.digitized is None and not any(n.startswith(dpath.name) for n in bundle.notes):
            bundle.notes.append(f"{dpath.name} was written for another calibration: digitise again")
    if progress:
        progress(3, 3)
    return bundle
