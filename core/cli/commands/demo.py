"""``welltrace demo``: the headless end-to-end job on bundled defaults (``core/evaluation/demo.py``)."""

from __future__ import annotations

from pathlib import Path

NAME = "demo"


def register(sub) -> None:
    d = sub.add_parser(NAME, help="the headless end-to-end job on bundled defaults")
    d.add_argument("out", nargs="?", help="folder for the demo's files (default: a temporary folder)")
    d.add_argument("--quick", action="store_true", help="fewer, smaller logs")
    d.set_defaults(func=run)


def run(args) -> int:
    from core.evaluation.demo import run_demo

    return run_demo(Path(args.out) if args.out else None, quick=args.quick)
