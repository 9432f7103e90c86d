"""The files of nugget work done by people (``castregin nuggets tasks``, ``castregin nuggets aggregate``).

- ``nugget_tasks.json``: what the tasks were made of, written beside them and read back to aggregate the labels:
  ``{"kind", "criterion", "seed", "records", "planted"}``. ``kind`` is ``create`` (people write nuggets),
  ``importance`` (people say whether each nugget is one, and how important), ``assign`` (people label each
  nugget of each answer) or ``cite`` (people judge whether each cited passage supports its sentence). The
  ``records`` are nuggetizer's records the labels go back into: the turns (``qid``, ``query``) to write nuggets
  for; the nuggets of each turn (a nuggets file's lines); each answer with its nuggets (an assignments file's
  lines without the labels); or each answer's sentences with their citations (``run_id``, ``qid``,
  ``sentences``: ``[{"text", "citations": [passage ids]}]``, with ``max_citations``). ``planted`` lists the
  (turn, item) pairs of planted gold, which no output holds.
- the nuggets people write (the export of the nugget writing pages, or any platform's CSV with these columns):
  ``worker_id,turn_id,nugget,importance`` (``vital`` or ``okay``; other columns, such as ``seconds``, are
  ignored; a row whose nugget is empty is skipped, as a form's unused field).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import InputError
from . import schema
from .common import decode, display_name, json_text, read_bytes, read_json

MANIFEST_NAME = "nugget_tasks.json"
KINDS = ("create", "importance", "assign", "cite")
#: What each kind's records must hold besides the qid.
_NEEDED = {"create": (), "importance": ("nuggets",), "assign": ("run_id", "nuggets"), "cite": ("run_id", "sentences")}
WRITTEN_COLUMNS = ("worker_id", "turn_id", "nugget", "importance")
_IMPORTANCES = ("vital", "okay")


def format_manifest(manifest: dict) -> str:
    """``nugget_tasks.json``'s text."""
    return json_text(manifest)


def read_manifest(path: str | os.PathLike) -> dict:
    """Read ``nugget_tasks.json`` (a directory stands for the file in it), checked against its schema and its
    kind."""
    if os.path.isdir(path):
        path = os.path.join(path, MANIFEST_NAME)
    source = display_name(path)
    manifest = read_json(path)
    schema.validate(manifest, "nugget-tasks", source)
    for k, record in enumerate(manifest["records"]):
        for key in _NEEDED[manifest["kind"]]:
            if key not in record:
                raise InputError(f"records[{k}]: a record of {manifest['kind']} tasks needs {key!r}", source=source)
    if manifest["kind"] == "cite" and "max_citations" not in manifest:
        raise InputError("cite tasks need max_citations", source=source)
    return manifest


@dataclass(frozen=True)
class WrittenNugget:
    """A nugget a worker wrote for a turn, where it was read from."""

    worker_id: str
    turn_id: str
    text: str
    importance: str
    source: str
    line: int


def _id(value: str | None, column: str, source: str, line: int) -> str:
    text = (value or "").strip()
    if not text or any(c.isspace() for c in text):
        raise InputError(f"{column}: expected an id without spaces, got {text!r}", source=source, line=line)
    return text


def parse_written_nuggets(data: bytes, source: str) -> list[WrittenNugget]:
    """The nuggets of one CSV of written nuggets (see the module), in file order."""
    reader = csv.DictReader(io.StringIO(decode(data, source).lstrip("\ufeff"), newline=""))
    missing = [column for column in WRITTEN_COLUMNS if column not in (reader.fieldnames or ())]
    if missing:
        raise InputError(f"missing the column(s) {', '.join(missing)}; expected {','.join(WRITTEN_COLUMNS)}",
                         source=source, line=1)
    found = []
    for row in reader:
        line = reader.line_num
        text = " ".join((row["nugget"] or "").split())
        if not text:
            continue
        importance = (row["importance"] or "").strip().lower()
        if importance not in _IMPORTANCES:
            raise InputError(f"importance: expected vital or okay, got {row['importance']!r}", source=source,
                             line=line)
        found.append(WrittenNugget(_id(row["worker_id"], "worker_id", source, line),
                                   _id(row["turn_id"], "turn_id", source, line), text, importance, source, line))
    return found


def read_written_nuggets(paths: Iterable[str | os.PathLike]) -> list[WrittenNugget]:
    """The written nuggets of several CSVs, concatenated; a file without any is an error."""
    found = []
    for path in paths:
        nuggets = parse_written_nuggets(read_bytes(path), display_name(path))
        if not nuggets:
            raise InputError("holds no written nugget (every nugget cell is empty)", source=display_name(path))
        found.extend(nuggets)
    return found


def written_csv(rows: Sequence[tuple[str, str, str, str]]) -> str:
    """Written nuggets as the CSV :func:`read_written_nuggets` reads (``worker_id,turn_id,nugget,importance``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(WRITTEN_COLUMNS)
    writer.writerows(rows)
    return buffer.getvalue()
