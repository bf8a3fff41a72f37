"""The ``welltrace`` command line (headless subcommands).

Each subcommand is a module of ``core/cli/commands``; this module builds the
parser from them, decides when the first word opens the app, and turns every
failure into its exit status. Exit status: 0 success, 2 bad input or usage
(one line on stderr naming the file and the reason, no traceback), 1 internal
failure. The GUI subcommand is registered here but run by ``app`` (core never
imports Qt): ``app.launch`` passes its runner in.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import Callable

from core import __version__
from core.common.errors import InputError, UsageError

from .commands import COMMANDS
from .options import OneLineParser


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="welltrace", description="Turn scanned paper well logs into digital LAS curves.")
    p.add_argument("--version", action="version", version=f"welltrace {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=OneLineParser)
    for command in COMMANDS:
        command.register(sub)
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
