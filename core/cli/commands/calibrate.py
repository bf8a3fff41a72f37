"""``welltrace calibrate SCAN --propose``: a draft calibration from the scan's own grid and printed depths."""

from __future__ import annotations

import json
from pathlib import Path

from ..options import positive_number

NAME = "calibrate"


def register(sub) -> None:
    c = sub.add_parser(NAME, help="propose a calibration (track bounds, depth picks) from the scan itself",
                       description="Finds the tracks between the long lines along depth and reads the printed "
                       "depths (Tesseract) to propose depth picks; writes a draft NAME.calib.json beside the scan "
                       "with the picks, the curves its scale box prints (mnemonic, unit, scale ends, line style, backup "
                       "scale: check them) and, under proposed_tracks, the track bounds.")
    c.add_argument("scan")
    c.add_argument("--propose", action="store_true", required=True, help="propose from the scan (the only mode)")
    c.add_argument("--out", help="where to write the draft (default: NAME.calib.json beside the scan)")
    c.add_argument("--force", action="store_true", help="overwrite an existing calibration file")
    c.add_argument("--depth-axis", choices=("x", "y"), help="default: the scan's long axis")
    c.add_argument("--depth-unit", choices=("FT", "M"), default="FT")
    c.add_argument("--step", type=positive_number, default=0.5, help="LAS step of the draft (default 0.5)")
    c.add_argument("--json", action="store_true", help="print the whole proposal as JSON")
    c.set_defaults(func=run)


def run(args) -> int:
    from core.common.errors import InputError
    from core.common.output_paths import refuse_clobbering
    from core.digitize.calibrate.proposal import propose_scan
    from core.io.calibration import Calibration
    from core.io.file_names import calib_path_for
    from core.io.scan import load_scan

    out = Path(args.out) if args.out else calib_path_for(args.scan)
    # the draft is never written over the scan (--force --out SCAN replaced it, even when no calibration came)
    refuse_clobbering([("--out", out)], [("the scan", Path(args.scan))])
    if out.exists() and not args.force:
        raise InputError(out, "a calibration is already there; give --force to replace it, or --out for another file")
    from core.common.atomic import require_writable

    require_writable([out])  # before the proposal's work: a folder, a special file, a read-only folder
    scan = load_scan(args.scan)
    from core.common.progress import progress_bar

    with progress_bar(100, "propose", unit="%") as bar:
        def advance(done: int, total: int) -> None:
            bar.n = done
            bar.refresh()

        prop = propose_scan(scan, args.depth_axis, args.depth_unit, progress=advance)
    from core.common.atomic import atomic_write_text, json_text

    draft = prop.calibration_dict(args.depth_unit, args.step)
    if draft is not None:
        Calibration.from_dict(draft)  # the draft is a valid calibration before it is written
        atomic_write_text(out, json_text(draft))
    if args.json:
        print(json.dumps({**prop.as_dict(), "written": str(out) if draft else None}, indent=2))
    else:
        for m in prop.messages:
            print(m)
        if draft:
            todo = ("check the curves read from the scale box and add any it does not print" if prop.curves else
                    "add the curves (mnemonic, line style, scale) before digitising")
            print(f"wrote {out}: {len(draft['depth_picks'])} depth picks, {len(prop.curves)} curve(s), "
                  f"{len(prop.tracks)} proposed track(s); {todo}")
    if not draft:  # a refusal is one line on stderr naming the scan, the reasons with it
        reasons = " ".join(m.strip().rstrip(".") + "." for m in prop.messages if m.strip())
        found = prop.draft_dict(args.depth_unit, args.step)
        if found is not None and _a_calibration(out):  # --force over a calibration: a refusal replaces a draft,
            # never the picks and curves made there (the file had become a draft with no depth picks)
            raise InputError(args.scan, "no calibration written: fewer than two depth picks could be proposed"
                             + (f" ({reasons.replace(chr(10), ' ')})" if reasons else "")
                             + f"; {out} is kept as it was")
        if found is not None:  # what was found is kept: the user picks two depths by hand and goes on
            atomic_write_text(out, json_text(found))
        # a draft is a file written: the line says so from its first words ("no calibration written … kept in
        # NAME.calib.json as a draft" read as two answers)
        kept = (f"; the {len(prop.tracks)} track(s) and {len(prop.curves)} curve(s) found are in {out}, without "
                "depth picks (digitize refuses it): pick two depths by hand" if found is not None else "")
        raise InputError(args.scan, ("only a draft written" if found is not None else "no calibration written")
                         + ": fewer than two depth picks could be proposed"
                         + (f" ({reasons.replace(chr(10), ' ')})" if reasons else "") + kept)
    return 0


def _a_calibration(path: Path) -> bool:
    """Whether ``path`` holds a calibration that ``digitize`` takes (not a draft, not an unreadable file)."""
    from core.common.errors import CalibrationError
    from core.io.calibration import Calibration

    if not path.is_file():
        return False
    try:
        Calibration.load(path)
    except (CalibrationError, OSError):
        return False
    return True
