"""Atomic file writes: write to a temporary file beside the target, then rename.

An interrupted write never leaves a truncated file behind: either the old file
or the complete new one is in place.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

# the files written inside ``outputs_together``: (temporary, target) pairs renamed when it ends
_STAGED: contextvars.ContextVar[list | None] = contextvars.ContextVar("welltrace_staged_outputs", default=None)


def refuse_special(path: str | os.PathLike) -> None:
    """Raise ``OSError`` when ``path`` exists and is not a regular file (a folder, ``/dev/full``, a pipe): the
    atomic rename would put a regular file in its place and report success."""
    target = Path(path)
    if target.exists() and not target.is_file():
        kind = "a folder" if target.is_dir() else "not a regular file"
        raise OSError(f"{target} is {kind}: a file written there would replace it")


def _umask_mode() -> int:
    """The mode a plain ``open()`` would give a new file (mkstemp's is 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to ``path``; on success it replaces ``path``."""
    target = Path(path)
    refuse_special(target)
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
    refuse_special(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix or ".tmp", dir=target.parent)
    os.close(fd)
    os.chmod(tmp, _umask_mode())
    return Path(tmp)


def check_writable(path: str | os.PathLike) -> None:
    """Raise ``OSError`` now when ``path`` could not be written (its folder cannot take the temporary file an
    atomic write needs, or the path is a folder): checked before long work, not found out after it."""
    target = Path(path)
    tmp = temp_path_beside(target)  # refuses a target that is a folder or another special file
    tmp.unlink()


def require_writable(paths) -> None:
    """Refuse, before any work, an output that cannot be written: a folder where a file goes, a special file, a
    folder that takes no file. An ``InputError`` naming the path (``None`` entries are skipped); one check per
    folder, and per target that exists and is no file."""
    from .errors import InputError

    seen: set[tuple[str, Path]] = set()
    for raw in paths:
        if raw is None:
            continue
        path = Path(raw)
        # a file to be written is checked by its folder; a target that is no file (a folder) by itself, never
        # taken for the folder of a file beside it
        key = ("folder", path.parent) if not path.exists() or path.is_file() else ("target", path)
        if key in seen:
            continue
        seen.add(key)
        try:
            check_writable(path)
        except OSError as exc:
            raise InputError(str(path), f"cannot be written: {exc.strerror or exc}") from None


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
    """The body writes ``tmp``; when it finishes, ``tmp`` replaces ``target`` (inside ``outputs_together``:
    when that ends); when it raises (or is interrupted), ``tmp`` is removed and ``target`` is left as it was."""
    try:
        yield
        staged = _STAGED.get()
        if staged is None:
            os.replace(tmp, target)
        else:
            staged.append((Path(tmp), target))
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def outputs_together() -> Iterator[None]:
    """Every file written atomically inside the block lands when the block ends, or none does: a run's outputs
    (main and repeat LAS, QC pages, class mask) come from one run. Each is written to a temporary file beside
    its target as usual; they are renamed into place one after the other only when the block finishes, and
    all removed when it raises (or is interrupted), the previous outputs left as they were. (A rename fails
    only when the folder itself goes away: that leaves the outputs renamed so far.)"""
    staged: list[tuple[Path, Path]] = []
    token = _STAGED.set(staged)
    try:
        yield
    except BaseException:
        _discard(staged)
        raise
    finally:
        _STAGED.reset(token)
    for k, (tmp, target) in enumerate(staged):
        try:
            os.replace(tmp, target)
        except BaseException:
            _discard(staged[k:])
            raise


def _discard(staged: list[tuple[Path, Path]]) -> None:
    for tmp, _ in staged:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def json_text(data) -> str:
    """Indented JSON with short lists of numbers kept on one line ([pixel, depth] pairs)."""
    import json
    import re

    text = json.dumps(data, indent=2)

    def _collapse(m: re.Match) -> str:
        return "[" + ", ".join(part.strip() for part in m.group(1).split(",")) + "]"

    return re.sub(r"\[\s*((?:-?[\d.eE+-]+\s*,\s*){0,7}-?[\d.eE+-]+)\s*\]", _collapse, text) + "\n"
