"""Error types that carry the offending file and a one-line reason.

The CLI turns an :class:`InputError` into exit status 2 and one line on stderr;
the GUI turns it into a dialog. Anything else is an internal failure (exit 1).
"""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad input from the user: a file that is missing, malformed or unsupported."""

    def __init__(self, path: str | Path | None, reason: str):
        self.path = None if path is None else str(path)
        self.reason = reason
        super().__init__(self.one_line())

    def one_line(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


class MemoryCeilingRefusal(InputError):
    """A reading that does not fit under the memory ceiling (``--max-memory``, or the memory available now): the
    input is good and the room is short, so a folder's reader that met it beside another scan's tracing reads it
    again alone (``core/digitize/job/stream.py``) before it is the scan's failure."""


class ScanError(InputError):
    """A scan image that cannot be read or is out of bounds."""


class CalibrationError(InputError):
    """A calibration file that is malformed; the reason names the field."""


class LasError(InputError):
    """A LAS file that cannot be parsed or written."""


class ModelFileError(InputError):
    """A model or checkpoint file of the wrong format."""


class DataError(InputError):
    """A training or project folder that cannot be used."""


def require_file(path: str | Path, error: type[InputError], what: str) -> Path:
    """The path as a non-empty regular file, or ``error`` naming it and why not."""
    p = Path(path)
    if not p.exists():
        raise error(p, "no such file")
    if p.is_dir():
        raise error(p, f"is a directory, not {what}")
    if p.stat().st_size == 0:
        raise error(p, "file is empty")
    return p


class UsageError(InputError):
    """Bad command-line usage (exit 2)."""

    def __init__(self, reason: str):
        super().__init__(None, reason)
