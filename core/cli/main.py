"""The ``welltrace`` command line (headless subcommands).

Exit status: 0 success, 2 bad input or usage (one line on stderr naming the
file and the reason, no traceback), 1 internal failure. The GUI subcommand is
registered here but run by ``app`` (core never imports Qt): ``app.launch``
passes its runner in.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import Callable

from core import __version__
from core.common.errors import InputError, UsageError
from core.common.progress import progress_bar
from core.synth.styles import STYLE_CHOICES


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 with a usage block; we want one line
        # main prints "welltrace: " before it; a subcommand's parser names the subcommand
        sub = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        raise UsageError(f"{sub}: {message}" if sub else message)


# -- subcommands ---------------------------------------------------------------


def cmd_info(args) -> int:
    from core.io.scan import load_scan

    scan = load_scan(args.scan)
    info = scan.info.as_dict()
    img = scan.image
    info["ink_fraction"] = round(float((img < 128).mean()), 5)
    info["gray_range"] = [int(img.min()), int(img.max())]
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    dpi = f"{info['dpi'][0]:g} × {info['dpi'][1]:g}" if info["dpi"] else "unknown"
    print(f"file        {info['path']}")
    print(f"size        {info['width']} × {info['height']} px")
    print(f"format      {info['format']}, mode {info['mode']}, {info['pages']} page(s)")
    print(f"dpi         {dpi}")
    print(f"depth axis  {info['depth_axis_guess']} (guessed: the long axis)")
    print(f"gray range  {info['gray_range'][0]}..{info['gray_range'][1]}, ink (<128) {info['ink_fraction']:.2%}")
    for note in info["notes"]:
        print(f"note        {note}")
    return 0


def cmd_synth(args) -> int:
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


def cmd_demo(args) -> int:
    from .demo import run_demo

    return run_demo(Path(args.out) if args.out else None, quick=args.quick)


# -- parser --------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="welltrace", description="Turn scanned paper well logs into digital LAS curves.")
    p.add_argument("--version", action="version", version=f"welltrace {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    g = sub.add_parser("gui", help="open the desktop application (the default)")
    g.add_argument("paths", nargs="*", help="scans or project folders to open")
    g.add_argument("--screenshot", metavar="PNG", help="render the window once idle, save it, exit")

    i = sub.add_parser("info", help="print the facts of a scan (size, mode, dpi, guessed depth axis)")
    i.add_argument("scan")
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=cmd_info)

    s = sub.add_parser(
        "synth", help="write a synthetic set of raster logs with masks, calibrations and truth LAS",
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
    s.add_argument("--style", choices=STYLE_CHOICES, default="mixed",
                   help="a print-style family, 'mixed' (all families evenly), or the first generator's "
                   "'clean'/'scanned' looks")
    s.add_argument("--families", help="with --style mixed: the families to draw from, comma-separated")
    s.set_defaults(func=cmd_synth)

    d = sub.add_parser("demo", help="the headless end-to-end job on bundled defaults")
    d.add_argument("out", nargs="?", help="folder for the demo's files (default: a temporary folder)")
    d.add_argument("--quick", action="store_true", help="fewer, smaller logs")
    d.set_defaults(func=cmd_demo)

    from .adapt_command import add_adapt_command
    from .bench_digitize_command import add_bench_digitize_command
    from .calibrate_command import add_calibrate_command
    from .commands import add_engine_commands
    from .crossing_eval import add_eval_crossings_command
    from .eval_styles_command import add_eval_styles_command

    add_engine_commands(sub)
    add_eval_styles_command(sub)
    add_eval_crossings_command(sub)
    add_calibrate_command(sub)
    add_bench_digitize_command(sub)
    add_adapt_command(sub)
    return p


def main(argv: list[str] | None = None, gui: Callable | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")) or (
                _names_a_path(argv[0], parser)):
            argv = ["gui", *argv]  # `welltrace`, `welltrace SCAN.tif`, `welltrace --screenshot X`: the app
        args = parser.parse_args(argv)
        if args.command == "gui":
            if gui is None:
                raise UsageError("the GUI is not available from this entry point; run `welltrace gui`")
            return int(gui(args) or 0)
        if not hasattr(args, "func"):
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"welltrace: {exc.one_line()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("welltrace: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file the run cannot write or read (disk full, a read-only folder): say which
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"welltrace: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last line of defence: exit 1, say why and where the details are
        log = _crash_log(traceback.format_exc())
        print(f"welltrace: internal error: {type(exc).__name__}: {exc}"
              + (f" (details: {log})" if log else ""), file=sys.stderr)
        return 1


def _names_a_path(word: str, parser: argparse.ArgumentParser) -> bool:
    """Whether the first word is a scan or folder to open rather than a command: not a command's name, and a
    path that exists, a picture's name or a path with a folder in it (``welltrace digitse`` stays a typo)."""
    from core.io.scan import SCAN_SUFFIXES

    commands = next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if word.startswith("-") or word in commands:
        return False
    path = Path(word)
    return path.exists() or path.suffix.lower() in SCAN_SUFFIXES or len(path.parts) > 1


def _crash_log(text: str) -> str | None:
    """Write an internal failure's traceback to the user's log folder; its path, or None when it cannot be
    written (then the traceback goes to stderr: it must not be lost)."""
    import time

    try:
        from platformdirs import user_log_dir

        folder = Path(user_log_dir("welltrace", appauthor=False))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"crash-{time.strftime('%Y%m%d-%H%M%S')}.log"
        path.write_text(text, encoding="utf-8")
        return str(path)
    except Exception:  # noqa: BLE001 - no log folder: the traceback itself is the record
        print(text, file=sys.stderr, end="")
        return None
