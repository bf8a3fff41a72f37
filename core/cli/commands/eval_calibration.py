"""``welltrace eval-calibration LABELS SCANS``: the calibration proposal scored on real scans labelled by eye."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..options import positive_number

NAME = "eval-calibration"


def register(sub) -> None:
    e = sub.add_parser(NAME, help="score the calibration proposal on real scans labelled by eye",
                       description="Runs `calibrate --propose` on each labelled scan (a process of its own, cut at "
                       "--timeout) and scores it against its labels: tracks within 5 px, depths within 2 ft per "
                       "section, the scale box's curves by mnemonic family and both ends, seconds. One line a scan "
                       "and a summary per split (the wells developed on and those held out, split.json).")
    e.add_argument("labels", help="the folder of NAME.labels.json files (and split.json): tests/data/archive_labels")
    e.add_argument("scans", help="the folder holding the scans NAME.tif the labels name")
    e.add_argument("--split", choices=("all", "develop", "held_out"), default="all",
                   help="score only the wells of one half (default: all, each half summarised apart)")
    e.add_argument("--only", nargs="+", metavar="NAME", help="score only these scans (names without .tif)")
    e.add_argument("--timeout", type=positive_number, default=150.0, help="seconds a proposal may run (default 150)")
    e.add_argument("--jobs", type=int, default=1, help="proposals at a time (default 1: honest seconds)")
    e.add_argument("--json", metavar="FILE", help="also write every scan's score as JSON")
    e.add_argument("--overlay", metavar="DIR", help="also draw each scan's labels (green) and proposal (red)")
    e.set_defaults(func=run)


def run(args) -> int:
    from core.common.atomic import atomic_write_text
    from core.common.errors import InputError
    from core.evaluation.archive_labels import load_folder, load_split
    from core.evaluation.calibration_eval import draw_overlay, run_proposals
    from core.evaluation.calibration_scores import score_scan, summarise

    labels = load_folder(args.labels)
    if not labels:
        raise InputError(args.labels, "no NAME.labels.json in the folder")
    split = load_split(args.labels) if (Path(args.labels) / "split.json").exists() else {"develop": [], "held_out": []}
    half = {well: name for name, wells in split.items() for well in wells}
    if args.split != "all":
        labels = [lab for lab in labels if half.get(lab.well) == args.split]
    if args.only:
        labels = [lab for lab in labels if lab.stem in set(args.only)]
    by_name = {}
    for lab in labels:
        scan = Path(args.scans) / lab.scan
        if not scan.is_file():
            raise InputError(scan, f"the scan {lab.path.name} labels is not there")
        by_name[scan.name] = (scan, lab)
    scores = []
    for run_ in run_proposals([s for s, _ in by_name.values()], args.timeout, args.jobs):
        scan, lab = by_name[run_.scan]
        sc = score_scan(lab, run_.proposal, run_.seconds, run_.error)
        scores.append(sc)
        sections = " ".join(
            f"[{s.kind} T{'+' if s.tracks_right else '-'} D{'+' if s.depths_right else '-' if s.depths_right is not None else '.'}]"
            for s in sc.sections)
        print(f"{sc.scan:<20} {half.get(sc.well, '?'):<9} {sc.seconds:6.1f} s  tracks "
              f"{'right' if sc.tracks_right else 'WRONG'}  {sections}  curves {sc.curves_right}/{sc.curves_labelled}"
              + (f"  ({sc.error})" if sc.error else ""), flush=True)
        for s in sc.sections:
            if not s.tracks_right or s.depths_right is False:
                print(f"    {s.kind} rows {s.rows[0]}–{s.rows[1]}: tracks {s.tracks_detail}; depths {s.depth_detail}")
        if args.overlay:
            draw_overlay(scan, lab, run_.proposal, Path(args.overlay) / f"{sc.scan}.png")
    order = {lab.stem: i for i, lab in enumerate(labels)}
    scores.sort(key=lambda s: order[s.scan])
    print()
    for name in ("develop", "held_out"):
        part = [s for s in scores if half.get(s.well) == name]
        if part:
            print(summarise(part).line(name))
    print(summarise(scores).line("all"))
    if args.json:
        atomic_write_text(args.json, json.dumps([s.as_dict() for s in scores], indent=1))
    sys.stdout.flush()
    return 0
