"""Reading and writing files: the pieces every format shares.

Readers raise :class:`~castregin.errors.InputError` naming the file and line of the first problem.
Writers are atomic: a temporary file in the same directory, then a rename, so an error never leaves
a half-written file. ``-`` means standard input or output.
"""
from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError
from . import output

STDIO = "-"


def display_name(path: str | os.PathLike) -> str:
    """How a file is named in messages (``<stdin>`` for ``-``)."""
    return "<stdin>" if str(path) == STDIO else str(path)


def stem(path: str | os.PathLike) -> str:
    """A file's name without directory and last suffix (``runs/bm25.run`` -> ``bm25``)."""
    return "stdin" if str(path) == STDIO else Path(path).stem


def read_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a file, or of standard input for ``-``; a missing file is an InputError."""
    if str(path) == STDIO:
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError("no such file; check the path", source=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", source=str(path)) from None
    except PermissionError:
        raise InputError("permission denied", source=str(path)) from None


def decode(data: bytes, source: str) -> str:
    """Decode UTF-8 (with or without BOM); undecodable bytes name their line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(
            f"byte 0x{data[err.start]:02x} is not valid UTF-8; save the file as UTF-8",
            source=source, line=line,
        ) from None


def read_text(path: str | os.PathLike) -> str:
    """The text of a UTF-8 file (or standard input for ``-``)."""
    return decode(read_bytes(path), display_name(path))


#: Integers beyond this magnitude would overflow a float: they are read as infinities, which every
#: reader of numbers refuses with its JSON path ("not a finite number").
_FLOAT_LIMIT = 1 << 1023


class TooLarge(float):
    """An integer in a JSON file too large for a float: an infinity that says what it was."""

    def __new__(cls, text: str):
        value = super().__new__(cls, -math.inf if text.startswith("-") else math.inf)
        value.digits = len(text.lstrip("-"))
        return value

    def describe(self) -> str:
        return f"an integer of {self.digits} digits, too large for a number (at most about 1.8e308)"


def _json_int(text: str):
    if len(text) > 320:  # beyond any float, and beyond Python's default limit on digits
        return TooLarge(text)
    value = int(text)
    return value if abs(value) < _FLOAT_LIMIT else TooLarge(text)


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def parse_json_text(text: str, source: str, line: int | None = None, *, unique_keys: bool = False):
    """Parse JSON text (a file, or one line of a JSONL file when ``line`` is given).

    A syntax error names its line and column; nesting deeper than Python's recursion allows is one
    error line, not a RecursionError; integers too large for a float become infinities
    (:class:`TooLarge`). With ``unique_keys`` (banks, episodes: small files where a key given twice
    is a mistake that JSON would settle silently by keeping the last) a repeated key is an error.
    """
    try:
        return json.loads(text, parse_int=_json_int, object_pairs_hook=_unique_keys if unique_keys else None)
    except _DuplicateKey as err:
        raise InputError(f"the key {err.args[0]!r} appears twice in one JSON object; keep one", source=source,
                         line=line) from None
    except json.JSONDecodeError as err:
        where = line if line is not None else err.lineno
        raise InputError(f"invalid JSON at column {err.colno}: {err.msg}", source=source, line=where) from None
    except RecursionError:
        raise InputError(f"JSON nested too deeply (more than about {sys.getrecursionlimit()} levels)",
                         source=source, line=line) from None


def read_json(path: str | os.PathLike, *, unique_keys: bool = True):
    """Parse a JSON file (``-``: standard input); see :func:`parse_json_text`."""
    return parse_json_text(read_text(path), display_name(path), unique_keys=unique_keys)


def write_text(path: str | os.PathLike, text: str, inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Write text by the rules of :mod:`castregin.formats.output` (atomic, safe; ``-`` standard output)."""
    output.write_text(path, text, inputs)


def atomic_output(path: str | os.PathLike, mode: str = "w", inputs: Iterable[str | os.PathLike] = ()):
    """Stream into ``path``: it appears whole when the block ends without an error, else not at all."""
    return output.open_output(path, mode, inputs)


def write_json(path: str | os.PathLike, data, *, indent: int | None = 2) -> None:
    """Write JSON atomically (:func:`json_text`: UTF-8, no NaN, keys in insertion order, newline at the end)."""
    write_text(path, json_text(data, indent=indent))


def ensure_not_input(output_path: str | os.PathLike | None, inputs: Iterable[str | os.PathLike]) -> None:
    """Refuse an output that is an input however it is spelled (see :func:`output.check_outputs`)."""
    output.check_outputs([output_path], inputs)


# --- writing JSON ----------------------------------------------------------------------------------------


def json_value(value, *, digits: int | None = None):
    """``value`` for JSON: NaN and infinities as None, numpy numbers as Python's, recursively.

    ``digits`` rounds floats (``ope``'s estimates are rounded to 1e-9, so that the last bits of BLAS
    arithmetic never reach a file).
    """
    if isinstance(value, dict):
        return {key: json_value(v, digits=digits) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v, digits=digits) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if hasattr(value, "item") and not isinstance(value, (int, float)):
        value = value.item()  # a numpy scalar
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return round(value, digits) if digits is not None else value
    return value


def json_text(data, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """``data`` as the JSON text castregin writes: UTF-8, no NaN, a newline at the end."""
    return json.dumps(json_value(data), indent=indent, ensure_ascii=False, sort_keys=sort_keys,
                      allow_nan=False) + "\n"
