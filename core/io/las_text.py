"""Text that goes into a LAS header: what a mnemonic and a unit may hold, and how any other text (a description,
the well's name, the provenance) is kept on its one line.

A LAS 2.0 header line is ``MNEM.UNIT  VALUE : DESCRIPTION``: the first period ends the mnemonic, the first space
after it ends the unit, the last colon starts the description, and a line break starts the next item. So a
mnemonic with a period, a space or a colon, a unit with a space or a colon, a description with a colon, or any of
them with a line break, is read back as something else (``S.P:X`` with unit ``M V`` came back as curves ``S:1``
and ``S:2``; a description ``"sp\\nWELL.  PWNED : WELL"`` wrote a second WELL item). Non-ASCII letters are read
back in another encoding by some readers (mojibake). Mnemonics and units are therefore refused unless they are
LAS-safe (the calibration names the curve); free text is escaped on its way to the file (:func:`header_text`)."""

from __future__ import annotations

import re
import unicodedata

# letters, digits, "_" and "-": every mnemonic of the 36 labelled archive scans (AV_AI1, GR_EDTC …) and of the
# tests' calibrations is one; lasio reads back any of them as written (upper-cased)
MNEMONIC_PATTERN = re.compile(r"[A-Z0-9_][A-Z0-9_-]*")
# printable ASCII but the space and the colon (``G/C3``, ``US/F``, ``ft3/ft3``, ``%``, ``1/M``)
UNIT_PATTERN = re.compile(r"[!-9;-~]*")
MAX_MNEMONIC = 32  # LAS readers of fixed-width headers cut longer names; the archive's longest is 7
# categories of characters that are no text: controls (line feed, tab, DEL, C1), format characters (bidi
# overrides, zero-width joiners, the BOM), line and paragraph separators, lone surrogates
_NOT_TEXT = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def control_character(text: str) -> str | None:
    """The first character of ``text`` that is no printable text (a line break, a tab, a bidi override), named
    as ``U+000A``; None when there is none."""
    for ch in text:
        if unicodedata.category(ch) in _NOT_TEXT:
            return f"U+{ord(ch):04X}"
    return None


def mnemonic_problem(mnemonic: str) -> str | None:
    """Why ``mnemonic`` (already upper-cased) cannot name a LAS curve, or None when it can."""
    if not mnemonic:
        return "is empty"
    if len(mnemonic) > MAX_MNEMONIC:
        return f"is {len(mnemonic)} characters long (at most {MAX_MNEMONIC})"
    if not MNEMONIC_PATTERN.fullmatch(mnemonic):
        return "must be letters A-Z, digits, \"_\" and \"-\" (a LAS header reads a period, a colon, a space or " \
               "another character as the end of the name)"
    return None


def unit_problem(unit: str) -> str | None:
    """Why ``unit`` cannot be a LAS curve's unit, or None when it can ("" is no unit)."""
    if not UNIT_PATTERN.fullmatch(unit):
        return "must be printable ASCII without spaces or colons (a LAS header ends the unit at the first space " \
               "and reads a colon as the start of the description), e.g. G/C3, US/F, OHMM"
    return None


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be written as one header line's text, or None: a control character."""
    bad = control_character(text)
    return None if bad is None else f"holds the control character {bad} (a line break or the like would start " \
                                    "another header line)"


def header_text(text: str, description: bool = False) -> str:
    """``text`` as it can stand on one LAS header line: each control character written as an escape
    (``\\n``, ``\\x1b``, ``\\u202e``), so a name from a file or a path keeps its line; in a ``description`` (the
    text after the last colon) a colon is written as " -", since a reader takes the last colon as the start of
    the description."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in _NOT_TEXT:
            escaped = ch.encode("unicode_escape").decode("ascii")
            out.append(escaped if escaped != ch else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    text = "".join(out)
    return text.replace(":", " -") if description else text
