"""What the commands share on their command lines: the parser that refuses in one line, the argument types
that check a value where it is typed, and the options several commands declare alike (``--device``)."""

from __future__ import annotations

import argparse
import importlib
import math
import re
from collections.abc import Callable, Iterable

from core.common.errors import UsageError

DEVICES = ("auto", "cpu", "cuda")
PRESETS = ("tiny", "demo", "full")
MIN_TILE_PX = 64  # a window shorter than this along depth is narrower than the networks' stride allows


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 with a usage block; we want one line
        # main prints "welltrace: " before it; a subcommand's parser names the subcommand
        sub = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        raise UsageError(f"{sub}: {message}" if sub else message)


class LazyChoices:
    """An argument's choices read from an engine module only when the command's own line is parsed or its help
    printed: a parser built for one command does not import every other command's engine (``synth.styles``: the
    print-style families, their generators and NumPy's). ``attr`` names the sequence as ``module:NAME``; ``extra``
    comes before it. Given by :func:`choices_later`."""

    def __init__(self, attr: str, extra: Iterable[str] = ()):
        self._attr, self._extra, self._items = attr, tuple(extra), None

    def _all(self) -> tuple:
        if self._items is None:
            module, name = self._attr.split(":")
            self._items = (*self._extra, *getattr(importlib.import_module(module), name))
        return self._items

    def __contains__(self, value) -> bool:
        return value in self._all()

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def choices_later(action: argparse.Action, attr: str, extra: Iterable[str] = ()) -> argparse.Action:
    """``action`` (an ``add_argument``'s) restricted to :class:`LazyChoices`: set after ``add_argument``, which
    formats an argument's choices once to check its metavar and would import the module at once."""
    action.choices = LazyChoices(attr, extra)
    return action


def describe_lazily(parser: argparse.ArgumentParser, describe: Callable[[], str]) -> None:
    """The parser's description written by ``describe`` when its help is printed, not when it is built (it names
    what an engine module defines: importing that for every command's start is what this avoids)."""
    plain = parser.format_help

    def format_help() -> str:
        parser.description = describe()
        return plain()

    parser.format_help = format_help


def add_device(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--device auto|cpu|cuda``: where the network runs (auto: a CUDA GPU when there is one)."""
    parser.add_argument("--device", default="auto", choices=DEVICES,
                        help=help or "where the network runs (auto: a CUDA GPU when there is one)")


def add_preset(parser: argparse.ArgumentParser, default: str = "demo") -> None:
    parser.add_argument("--preset", default=default, choices=PRESETS, help=f"network size (default {default})")


def positive_number(text: str) -> float:
    """An argparse type: a finite number above zero (``--max-memory nan`` or ``inf`` is refused by name)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number above zero, got {text!r}")
    return value


def whole_number(low: int):
    """An argparse type: a whole number of at least ``low`` (``--epochs 0`` ran 100 steps, ``--batch 0`` and
    ``--workers -1`` were taken as given)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a whole number of at least {low}, got {text!r}")
        return value

    parse.__name__ = f"whole number >= {low}"  # what argparse says of a value it refuses
    return parse


def share(text: str) -> float:
    """An argparse type: a share from 0 to 1 (``--freeze-encoder``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:  # nan fails both
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def tile_choice(text: str) -> str:
    """An argparse type: ``auto``, ``off`` or a strip length of at least :data:`MIN_TILE_PX` px (``--tile 1`` was
    taken)."""
    if text in ("auto", "off"):
        return text
    if not text.isdigit() or int(text) < MIN_TILE_PX:
        raise argparse.ArgumentTypeError(f"expected auto, off or a strip length of at least {MIN_TILE_PX} px, got "
                                         f"{text!r}")
    return str(int(text))


def header_text(text: str) -> str:
    """An argparse type: text for a LAS header line (``--well``): no control characters (a line break wrote a
    second COMP item)."""
    from core.io.las_text import text_problem

    problem = text_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{text!r} {problem}")
    return text


def tile_px(text: str) -> int:
    """An argparse type: a window length along depth in px, at least :data:`MIN_TILE_PX`."""
    if not text.isdigit() or int(text) < MIN_TILE_PX:
        raise argparse.ArgumentTypeError(f"expected a window length of at least {MIN_TILE_PX} px, got {text!r}")
    return int(text)


def scheduler_address(text: str) -> str:
    """An argparse type: a Dask scheduler's address, ``PROTOCOL://HOST:PORT`` or ``HOST:PORT``, the port 1 to 65535
    (``127.0.0.1:99999`` waited 30 s for a connection that cannot be)."""
    m = re.fullmatch(r"(?:(?:tcp|tls|ucx|ws|wss)://)?(?:\[[0-9a-fA-F:]+\]|[\w.-]+):(\d{1,5})|inproc://\S+", text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is no scheduler address (tcp://HOST:PORT, e.g. "
                                         "tcp://10.0.0.5:8786)")
    if m.group(1) is not None and not 1 <= int(m.group(1)) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: port {int(m.group(1))} is outside 1 to 65535")
    return text


def size_wxh(text: str) -> tuple[int, int]:
    """An argparse type: ``WIDTHxHEIGHT`` in px (``1600x384``)."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT, e.g. 1600x384, got {text!r}") from None
    if w < 1 or h < 1:
        raise argparse.ArgumentTypeError(f"expected a size above zero, got {text!r}")
    return w, h


def name_list(text: str) -> list[str]:
    """An argparse type: comma-separated names (``enc1,dec4``), blanks dropped."""
    return [m.strip() for m in text.split(",") if m.strip()]
