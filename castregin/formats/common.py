"""Reading and writing files: the pieces every format shares.

Readers raise :class:`~castregin.errors.InputError` naming the file and line of the first problem.
Writers are atomic: a temporary file in the same directory, then a rename, so an error never leaves
a half-written file. ``-`` means standard input or output.
"""
from __future__ import annotations

import json
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


def read_json(path: str | os.PathLike):
    """Parse a JSON file; a syntax error names its line and column."""
    source = display_name(path)
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"invalid JSON at column {err.colno}: {err.msg}", source=source, line=err.lineno) from None


def write_text(path: str | os.PathLike, text: str, inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Write text by the rules of :mod:`castregin.formats.output` (atomic, safe; ``-`` standard output)."""
    output.write_text(path, text, inputs)


def atomic_output(path: str | os.PathLike, mode: str = "w", inputs: Iterable[str | os.PathLike] = ()):
    """Stream into ``path``: it appears whole when the block ends without an error, else not at all."""
    return output.open_output(path, mode, inputs)


def write_json(path: str | os.PathLike, data, *, indent: int | None = 2) -> None:
    """Write JSON atomically, UTF-8, keys in insertion order, newline at the end."""
    write_text(path, json.dumps(data, ensure_ascii=False, indent=indent) + "\n")


def ensure_not_input(output_path: str | os.PathLike | None, inputs: Iterable[str | os.PathLike]) -> None:
    """Refuse an output that is an input however it is spelled (see :func:`output.check_outputs`)."""
    output.check_outputs([output_path], inputs)
