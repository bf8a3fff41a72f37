"""``welltrace synth``: a synthetic set of raster logs with their masks, calibrations and truth LAS."""

from __future__ import annotations

from pathlib import Path

from core.common.errors import InputError, UsageError
from core.common.progress import progress_bar

from ..options import choices_later

NAME = "synth"


def register(sub) -> None:
    s = sub.add_parser(
        NAME, help="write a synthetic set of raster logs with masks, calibrations and truth LAS",
        description="Sizes are in the network's frame: --width along depth, --height across the tracks. "
        "--depth-axis y writes tall images (height × width).",
    )
    s.add_argument("out")
    s.add_argument("--count", type=int, default=8)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--width", type=int, default=3200, help="pixels along depth (default 3200)")
    s.add_argument("--height", type=int, default=480, help="pixels across the tracks (default 480)")
    s.add_argument("--curves", default="1..3", help="curves per track: N or A..B within 1..3")
    s.add_argument("--depth-axis", choices=("x", "y"), default="x")
    choices_later(s.add_argument("--style", default="mixed",
                   help="a print-style family, 'mixed' (all families evenly), or the first generator's "
                   "'clean'/'scanned' looks"), "core.synth.styles:STYLE_CHOICES")
    s.add_argument("--families", help="with --style mixed: the families to draw from, comma-separated")
    s.set_defaults(func=run)


def run(args) -> int:
    from core.synth import parse_curve_range, write_set
    from core.synth.styles import parse_families

    try:
        curves = parse_curve_range(args.curves)
    except ValueError as exc:
        raise UsageError(f"--curves: {exc}") from None
    try:
        families = parse_families(args.families) if args.families else None
    except ValueError as exc:
        raise UsageError(f"--families: {exc}") from None
    if families and args.style != "mixed":
        raise UsageError("--families goes with --style mixed")
    if args.count < 1:
        raise UsageError("--count must be at least 1")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(out, "exists and is not a folder")
    with progress_bar(args.count, "synth") as bar:
        try:
            manifest = write_set(
                out, args.count, seed=args.seed, width=args.width, height=args.height,
                depth_axis=args.depth_axis, curves=curves, style=args.style,
                progress=lambda i, n: bar.update(1), families=families,
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    n_curves = sum(len(e["curves"]) for e in manifest["logs"])
    print(f"wrote {manifest['count']} logs ({n_curves} curves) to {out}")
    return 0
