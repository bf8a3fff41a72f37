"""Atomic file writes: write to a temporary file beside the target, then rename.

An interrupted write never leaves a truncated file behind: either the old file
or the complete new one is in place.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterator

# the run writing inside ``outputs_together``: its (temporary, target) pairs, renamed when it ends
_STAGED: contextvars.ContextVar["_Run | None"] = contextvars.ContextVar("welltrace_staged_outputs", default=None)

NAME_MAX = 255  # the longest file name of the common file systems (ext4, XFS, APFS, NTFS)
_RANDOM = 8  # characters of mkstemp's random part
_MAX_TEMP_SUFFIX = 16  # a longer "suffix" (a name with a dot far from its end) gives a temporary ".tmp" instead


def _temp_parts(target: Path, suffix: str) -> tuple[str, str]:
    """(prefix, suffix) of a temporary file beside ``target``: ``.NAME.`` and ``.tmp`` (or the target's own suffix,
    for writers that choose the format by it), the name cut so that the temporary's name is no longer than
    :data:`NAME_MAX` (a 250-character ``--out`` was refused: its temporary's name was longer than a name can be)."""
    if len(suffix) > _MAX_TEMP_SUFFIX:
        suffix = ".tmp"
    room = NAME_MAX - 2 - _RANDOM - len(suffix)
    return f".{target.name[:room]}.", suffix


def _temporary_pattern(target: Path) -> re.Pattern:
    """The names of the temporary files written beside ``target`` (by ``atomic_open`` or ``temp_path_beside``)."""
    names = {_temp_parts(target, s) for s in (".tmp", target.suffix)}
    return re.compile("|".join(f"{re.escape(pre)}[a-z0-9_]{{{_RANDOM}}}{re.escape(suf)}" for pre, suf in names))


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
    prefix, suffix = _temp_parts(target, ".tmp")
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=target.parent)
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
    prefix, suffix = _temp_parts(target, target.suffix or ".tmp")
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=target.parent)
    os.close(fd)
    os.chmod(tmp, _umask_mode())
    return Path(tmp)


def check_writable(path: str | os.PathLike) -> None:
    """Raise ``OSError`` now when ``path`` could not be written (its folder cannot take the temporary file an
    atomic write needs, or the path is a folder): checked before long work, not found out after it."""
    target = Path(path)
    refuse_special(target)
    # the nearest folder that exists, where a missing one would be made: checked, never made here (a refused run
    # left the empty folder of `digitize SCAN --out DIR/` behind); the write itself makes it
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
    prefix, suffix = _temp_parts(target, ".tmp")
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
    os.close(fd)
    os.unlink(tmp)


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
    when that ends); when it raises (or is interrupted), ``tmp`` is removed and ``target`` is left as it was. A
    failed write names its target (a full disk's ``OSError`` from ``write`` or ``fsync`` names no file)."""
    try:
        yield
        run = _STAGED.get()
        if run is None:
            os.replace(tmp, target)
        else:
            run.stage(Path(tmp), target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not exc.filename and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc
        raise


@dataclass
class _Run:
    """What one ``outputs_together`` block has written so far: temporaries to rename over their targets, files of
    an earlier run to remove, and the inputs no target may be."""

    protected: list[tuple[str, Path]]
    started: float
    renames: list[tuple[Path, Path]] = field(default_factory=list)
    removals: list[Path] = field(default_factory=list)

    def stage(self, tmp: Path, target: Path) -> None:
        from .output_paths import refuse_clobbering  # noqa: PLC0415 - it raises this package's InputError

        refuse_clobbering([("an output", target)], self.protected)
        for _, earlier in self.renames:
            if earlier == target or _same(earlier, target):
                from .errors import InputError  # noqa: PLC0415

                raise InputError(str(target), "written twice by one run: one output would replace the other")
        self.renames.append((tmp, target))

    def remove(self, path: Path) -> None:
        from .output_paths import same_file  # noqa: PLC0415

        if any(same_file(path, protected) for _, protected in self.protected):
            return  # named like an earlier run's output, but an input of this run (a scan "log-p01.png"): kept
        self.removals.append(path)


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def stage_removal(path: str | os.PathLike) -> None:
    """Inside ``outputs_together``: remove ``path`` (a file an earlier run wrote and this one does not, such as a
    QC page past this run's last) when the run's outputs land, and only then."""
    run = _STAGED.get()
    if run is None:
        raise RuntimeError("stage_removal is for a run's outputs, inside outputs_together")
    run.remove(Path(path))


def journal_path_for(main_output: str | os.PathLike) -> Path:
    """The commit record of a run whose main output is ``main_output``, hidden beside it:
    ``.NAME.outputs.json``."""
    target = Path(main_output)
    return target.with_name(f".{target.name[:NAME_MAX - 15]}.outputs.json")


def pending_outputs(journal: str | os.PathLike | None) -> bool:
    """Whether a run was stopped (killed) while its outputs were renamed into place: its journal is still there.
    Its outputs are then a mix of two runs until :func:`finish_outputs` (or the next run) completes them."""
    return journal is not None and Path(journal).exists()


def finish_outputs(journal: str | os.PathLike) -> list[Path]:
    """Complete the renames and removals a killed run recorded in ``journal`` before it began them: its
    temporaries were complete and on disk by then, so finishing leaves every output of that one run in place.
    Returns the targets it renamed; nothing to do (no journal) returns []."""
    journal = Path(journal)
    try:
        record = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError):  # not ours, or unreadable: leave the outputs as they are, forget the record
        with contextlib.suppress(OSError):
            journal.unlink()
        return []
    done = []
    for tmp, target in record.get("renames", []):
        if os.path.exists(tmp):
            os.replace(tmp, target)
            done.append(Path(target))
    for path in record.get("removals", []):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    _sync_folders([Path(t) for _, t in record.get("renames", [])])
    with contextlib.suppress(FileNotFoundError):
        journal.unlink()
    return done


def _sync_folders(paths: list[Path]) -> None:
    """fsync the folders of ``paths``: the renames in them are on disk, not only in the cache."""
    for folder in {p.parent for p in paths}:
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def remove_stale_temporaries(targets, before: float) -> list[Path]:
    """Remove the temporary files beside ``targets`` that a killed run left (``.NAME.xxxxxxxx.tmp``), those last
    changed before ``before`` (a run writing the same target now keeps its own). Returns what it removed."""
    removed = []
    for target in {Path(t) for t in targets}:
        pattern = _temporary_pattern(target)
        try:
            names = [e.name for e in os.scandir(target.parent) if e.name.startswith(".")]
        except OSError:
            continue
        for name in names:
            if not pattern.fullmatch(name):
                continue
            path = target.parent / name
            try:
                if path.is_file() and path.stat().st_mtime < before:
                    path.unlink()
                    removed.append(path)
            except OSError:
                continue
    return removed


@contextlib.contextmanager
def outputs_together(journal: str | os.PathLike | None = None, inputs=()) -> Iterator[None]:
    """Every file written atomically inside the block lands when the block ends, or none does: a run's outputs
    (main and repeat LAS, QC pages, class mask) come from one run. Each is written to a temporary file beside
    its target as usual; they are renamed into place one after the other only when the block finishes, and
    all removed when it raises (or is interrupted), the previous outputs left as they were.

    ``journal`` (``journal_path_for(main output)``): before the first rename the list of renames (and of an earlier
    run's files to remove, ``stage_removal``) is written there, on disk, and removed after the last. A run
    killed between the two (SIGKILL while 57 outputs were renamed left the new LAS beside the old QC pages, and
    the temporaries) is completed by the next run with that journal, or by :func:`finish_outputs`; the next run
    also removes the temporaries a killed run left beside its targets. ``inputs``: (what, path) pairs no output
    may be (the scan, its calibration): refused before anything is renamed."""
    if journal is not None:
        finish_outputs(journal)  # a killed run's outputs completed first: this run starts from one run's outputs
    run = _Run([(what, Path(p)) for what, p in inputs if p is not None], time.time())
    token = _STAGED.set(run)
    try:
        yield
    except BaseException:
        _discard(run.renames)
        raise
    finally:
        _STAGED.reset(token)
    if journal is not None and (run.renames or run.removals):
        # absolute: the run that completes it may start in another folder
        record = {"renames": [[os.path.abspath(t), os.path.abspath(g)] for t, g in run.renames],
                  "removals": [os.path.abspath(p) for p in run.removals]}
        try:
            atomic_write_text(journal, json.dumps(record))
            _sync_folders([Path(journal)])
        except BaseException:
            _discard(run.renames)
            with contextlib.suppress(FileNotFoundError):  # written just before: it would remove without renaming
                os.unlink(journal)
            raise
    for k, (tmp, target) in enumerate(run.renames):
        try:
            os.replace(tmp, target)
        except KeyboardInterrupt:
            if journal is not None:  # Ctrl-C in the middle: the rest is a few renames, done now
                finish_outputs(journal)
            else:
                _discard(run.renames[k + 1:])
            raise
        except BaseException:
            if journal is None:
                _discard(run.renames[k:])
            raise  # with a journal, the next run completes what is recorded (the temporaries are kept for it)
    for path in run.removals:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    if journal is not None:
        _sync_folders([t for _, t in run.renames])
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal)
    remove_stale_temporaries([t for _, t in run.renames] + run.removals + ([Path(journal)] if journal else []),
                             run.started)


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
