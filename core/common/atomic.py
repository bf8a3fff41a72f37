"""Atomic file writes: write to a temporary file beside the target, then rename.

An interrupted write never leaves a truncated file behind: either the old file
or the complete new one is in place.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator


def _umask_mode() -> int:
    """The mode a plain ``open()`` would give a new file (mkstemp's is 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to ``path``; on success it replaces ``path``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    binary = "b" in mode
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.chmod(tmp, _umask_mode())
    with _replace_on_success(tmp, target):
        with os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path, "w") as fh:
        fh.write(text)


def temp_path_beside(path: str | os.PathLike) -> Path:
    """A fresh temporary path in the target's folder, for writers that insist on a filename."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix or ".tmp", dir=target.parent)
    os.close(fd)
    os.chmod(tmp, _umask_mode())
    return Path(tmp)


def check_writable(path: str | os.PathLike) -> None:
    """Raise ``OSError`` now when ``path`` could not be written (its folder cannot take the temporary file an
    atomic write needs, or the path is a folder): checked before long work, not found out after it."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(f"{target} is a folder")
    tmp = temp_path_beside(target)
    tmp.unlink()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path for a writer that takes a filename (cv2.imwrite, safetensors)."""
    target = Path(path)
    tmp = temp_path_beside(target)
    with _replace_on_success(tmp, target):
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())


@contextlib.contextmanager
def _replace_on_success(tmp: str | os.PathLike, target: Path) -> Iterator[None]:
    """The body writes ``tmp``; when it finishes, ``tmp`` replaces ``target``; when it raises (or is
    interrupted), ``tmp`` is removed and ``target`` is left as it was."""
    try:
        yield
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def json_text(data) -> str:
    """Indented JSON with short lists of numbers kept on one line ([pixel, depth] pairs)."""
    import json
    import re

    text = json.dumps(data, indent=2)

    def _collapse(m: re.Match) -> str:
        return "[" + ", ".join(part.strip() for part in m.group(1).split(",")) + "]"

    return re.sub(r"\[\s*((?:-?[\d.eE+-]+\s*,\s*){0,7}-?[\d.eE+-]+)\s*\]", _collapse, text) + "\n"
