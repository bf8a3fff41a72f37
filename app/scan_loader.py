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

from core.common.errors import InputError
from core.digitize.pipeline import result_from_las
from core.io.calibration import Calibration
from core.io.project import digitized_path_for
from core.io.scan import Scan, calib_path_for, display_pyramid, load_mask, load_scan, mask_path_for


@dataclass
class ScanBundle:
    path: Path
    scan: Scan
    mask: np.ndarray
    calib: Calibration | None
    pyramid: list[np.ndarray]  # display levels (grey or RGB): the scan, then halved until the long side is small
    proposed_tracks: list[tuple[float, float]] = field(default_factory=list)  # from a calibration proposal
    digitised: object | None = None  # the scan's digitised LAS read back (a DigitizeResult), if it has one
    notes: list[str] = field(default_factory=list)


def read_scan_bundle(path: Path, progress=None) -> ScanBundle:
    """The scan at ``path`` with its mask (zeros when it has none) and calibration; raises InputError
    naming the file on anything unreadable, so nothing of a bad scan reaches the window."""
    path = Path(path)
    scan = load_scan(path)
    if progress:
        progress(1, 3)
    mpath = mask_path_for(path)
    mask = load_mask(mpath, scan.image.shape) if mpath.exists() else np.zeros(scan.image.shape, np.uint8)
    cpath = calib_path_for(path)
    calib = Calibration.load(cpath) if cpath.exists() else None
    proposed = []
    if calib is not None:  # a proposal's track bounds ride in the calibration file as an optional field
        raw = json.loads(cpath.read_text(encoding="utf-8"))
        proposed = [tuple(float(v) for v in t) for t in raw.get("proposed_tracks", []) if len(t) == 2]
    if progress:
        progress(2, 3)
    pyramid = display_pyramid(scan.display)  # in colour when the scan has colour
    bundle = ScanBundle(path, scan, mask, calib, pyramid, proposed)
    dpath = digitized_path_for(path)
    if calib is not None and dpath.exists():
        try:
            bundle.digitised = result_from_las(dpath, calib, scan.image.shape)
        except InputError as exc:
            bundle.notes.append(f"{dpath.name}: not shown ({exc.reason})")
        if bundle.digitised is None and not bundle.notes:
            bundle.notes.append(f"{dpath.name} was written for another calibration: digitise again")
    if progress:
        progress(3, 3)
    return bundle
