"""Reading and writing every file castregin touches: TREC runs, qrels, pools, turn lists, JSON.

Readers validate as they go and raise :class:`~castregin.errors.InputError` naming the file and
line of the first problem. Writers are atomic: a temporary file in the same directory, then a
rename, so an error never leaves a half-written file. ``-`` means standard input or output.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Iterable, Iterator

from .data import Qrels, Run
from .errors import InputError

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


def _fields(path: str | os.PathLike, what: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, whitespace-split fields) of each non-blank line; an empty file is an error."""
    source = display_name(path)
    text = read_text(path)
    seen = False
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if fields:
            seen = True
            yield number, fields
    if not seen:
        raise InputError(f"the file is empty, expected a {what}", source=source)


def _parse_float(text: str, what: str, source: str, line: int) -> float:
    try:
        if "_" in text:
            raise ValueError
        value = float(text)
    except ValueError:
        raise InputError(f"{what} {text!r} is not a number", source=source, line=line) from None
    if not math.isfinite(value):
        raise InputError(f"{what} {text!r} is not a finite number", source=source, line=line)
    return value


def _parse_int(text: str, what: str, source: str, line: int) -> int:
    try:
        if "_" in text:
            raise ValueError
        return int(text)
    except ValueError:
        raise InputError(f"{what} {text!r} is not an integer", source=source, line=line) from None


def read_run(path: str | os.PathLike) -> Run:
    """Read a TREC run (``turn Q0 item rank score tag``, any whitespace).

    The tag is the first line's; a run without lines, a line without six columns, a rank or score
    that is not a finite number, and a (turn, item) listed twice are errors.
    """
    source = display_name(path)
    run = Run(tag="", source=source)
    for line, fields in _fields(path, "TREC run (turn Q0 item rank score tag)"):
        if len(fields) != 6:
            raise InputError(
                f"expected 6 columns (turn Q0 item rank score tag), found {len(fields)}",
                source=source, line=line,
            )
        turn, _, item, rank_text, score_text, tag = fields
        rank = _parse_float(rank_text, "rank", source, line)
        score = _parse_float(score_text, "score", source, line)
        scores = run.scores.setdefault(turn, {})
        if item in scores:
            raise InputError(f"item {item} is listed twice for turn {turn}", source=source, line=line)
        scores[item] = score
        run.ranks.setdefault(turn, {})[item] = int(rank) if rank.is_integer() else rank
        if not run.tag:
            run.tag = tag
    return run


def read_qrels(path: str | os.PathLike, name: str | None = None) -> Qrels:
    """Read TREC qrels (``turn 0 item label``, integer labels, any whitespace)."""
    source = display_name(path)
    qrels = Qrels(name=name or stem(path), source=source)
    for line, fields in _fields(path, "qrels file (turn 0 item label)"):
        if len(fields) != 4:
            raise InputError(
                f"expected 4 columns (turn 0 item label), found {len(fields)}", source=source, line=line
            )
        turn, _, item, label_text = fields
        label = _parse_int(label_text, "label", source, line)
        labels = qrels.labels.setdefault(turn, {})
        if item in labels:
            raise InputError(f"item {item} is judged twice for turn {turn}", source=source, line=line)
        labels[item] = label
    return qrels


def read_turn_list(path: str | os.PathLike) -> list[str]:
    """Turn ids from a file: one id a line, a qrels or run whose turns to take, or turn-ids JSON.

    The official ``2022_evaluation_topics_turn_ids.json`` (``{"132": ["1-1", ...]}``) is read
    as ``132_1-1`` and so on.
    """
    source = display_name(path)
    text = read_text(path)
    if text.lstrip().startswith("{"):
        data = read_json(path) if str(path) != STDIO else json.loads(text)
        return turn_ids_from_json(data, source)
    turns: dict[str, None] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) not in (1, 4, 6):
            raise InputError(
                f"expected a turn id, a qrels line or a run line, found {len(fields)} columns",
                source=source, line=number,
            )
        turns[fields[0]] = None
    if not turns:
        raise InputError("the file is empty, expected turn ids", source=source)
    return list(turns)


def turn_ids_from_json(data, source: str) -> list[str]:
    """Flatten the official turn-ids JSON ``{"132": ["1-1", ...]}`` into ``["132_1-1", ...]``."""
    if not isinstance(data, dict):
        raise InputError('expected an object {"topic": ["turn", ...]}', source=source)
    turns = []
    for topic, numbers in data.items():
        if not isinstance(numbers, list) or not all(isinstance(n, str) for n in numbers):
            raise InputError(f"{topic}: expected a list of turn numbers such as \"1-1\"", source=source)
        turns.extend(f"{topic}_{number}" for number in numbers)
    return turns


def format_score(score: float) -> str:
    """Scores are written as Python's ``repr(float)``: shortest text that reads back exactly."""
    return repr(float(score))


def format_run(run: Run, tag: str | None = None) -> str:
    """A run as TREC text, tab-separated, turns and items in the run's order."""
    tag = tag or run.tag
    lines = []
    for turn, items in run.scores.items():
        ranks = run.ranks.get(turn, {})
        for item, score in items.items():
            lines.append(f"{turn}\tQ0\t{item}\t{ranks.get(item, 0)}\t{format_score(score)}\t{tag}\n")
    return "".join(lines)


def format_pool(pool: dict[str, Iterable[str]]) -> str:
    """A pool (items per turn) as a run with rank 1, score 0.0 and tag ``dummytag``, sorted."""
    return "".join(
        f"{turn}\tQ0\t{item}\t1\t0.0\tdummytag\n" for turn in sorted(pool) for item in sorted(pool[turn])
    )


def format_qrels(qrels: Qrels | dict[str, dict[str, int]]) -> str:
    """Qrels as TREC text, space-separated, sorted by turn then item id."""
    labels = qrels.labels if isinstance(qrels, Qrels) else qrels
    return "".join(
        f"{turn} 0 {item} {labels[turn][item]}\n" for turn in sorted(labels) for item in sorted(labels[turn])
    )


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write text atomically (temporary file, then rename), or to standard output for ``-``."""
    if str(path) == STDIO:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with atomic_output(path) as handle:
        handle.write(text)


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Open ``path`` for writing so that it appears whole or not at all.

    The content goes to a temporary file beside ``path``, renamed over it on success and
    removed on any error.
    """
    if str(path) == STDIO:
        stream = sys.stdout.buffer if "b" in mode else sys.stdout
        yield stream
        stream.flush()
        return
    target = Path(path)
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"cannot create directory {directory}: {err.strerror}", source=str(path)) from None
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        encoding = None if "b" in mode else "utf-8"
        newline = None if "b" in mode else "\n"
        with io.open(fd, mode, encoding=encoding, newline=newline) as handle:
            yield handle
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def write_json(path: str | os.PathLike, data, *, indent: int | None = 2) -> None:
    """Write JSON atomically, UTF-8, keys in insertion order, newline at the end."""
    write_text(path, json.dumps(data, ensure_ascii=False, indent=indent) + "\n")


def ensure_not_input(output: str | os.PathLike, inputs: Iterable[str | os.PathLike]) -> None:
    """Refuse to write over an input file."""
    if str(output) == STDIO:
        return
    target = Path(output).resolve()
    for path in inputs:
        if str(path) != STDIO and Path(path).resolve() == target:
            raise InputError(f"refusing to overwrite the input file {path}; choose another output", source=str(output))
