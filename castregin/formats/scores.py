"""Per-turn score tables: what ``evaluate -q`` and ``nuggets score -q`` write, read back for the analyses.

``compare --scores``, ``analyze bootstrap --scores``, ``analyze correlation --scores`` and ``report --scores``
take these tables instead of runs and qrels, so that any measure computed elsewhere (nugget scores, a model's
grades, another toolkit's numbers) goes through the same tests and report. A table is evaluate's long layout:

- TSV or CSV (``--format tsv`` / ``csv``) with a header naming the columns ``run``, ``measure``, ``turn``,
  ``value`` and optionally ``qrels`` (the source of the labels: a qrels, an assignment source); other columns
  are ignored;
- JSON (``--format json``): a list of objects with those keys.

``turn`` is ``all`` on a mean row; a table without ``qrels`` gets the file's stem there. A value is a number
(``nan`` allowed: a measure undefined on a turn). The interval rows of ``evaluate --ci`` (``P@1:ci_low``) are
left out: they are no measure. A (run, qrels, measure, turn) given twice, in one file or two, is an error.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable

from ..errors import InputError
from . import schema
from .common import decode, display_name, parse_json_text, read_bytes, stem

COLUMNS = ("run", "qrels", "measure", "turn", "value")
_REQUIRED = ("run", "measure", "turn", "value")
_INTERVAL_SUFFIXES = (":ci_low", ":ci_high")


def _number(text: str, source: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"value: expected a number, got {text!r}", source=source, line=line) from None
    if math.isinf(value):
        raise InputError(f"value: expected a finite number or nan, got {text!r}", source=source, line=line)
    return value


def _table_rows(text: str, source: str, default_qrels: str) -> list[tuple[tuple, int]]:
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise InputError("the file is empty; expected a header naming run, measure, turn and value", source=source)
    delimiter = "\t" if "\t" in lines[0] else ","
    reader = csv.reader(lines, delimiter=delimiter)
    header = next(reader)
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise InputError(f"the header has no column {missing[0]!r}; expected the columns of evaluate's or "
                         f"nuggets score's --format tsv or csv (run, qrels, measure, turn, value)",
                         source=source, line=1)
    where = {c: header.index(c) for c in COLUMNS if c in header}
    rows = []
    for number, cells in enumerate(reader, start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise InputError(f"expected {len(header)} cells as the header has, got {len(cells)}", source=source,
                             line=number)
        qrels = cells[where["qrels"]] if "qrels" in where else default_qrels
        rows.append(((cells[where["run"]], qrels, cells[where["measure"]], cells[where["turn"]],
                      _number(cells[where["value"]], source, number)), number))
    return rows


def _json_rows(text: str, source: str, default_qrels: str) -> list[tuple[tuple, int]]:
    data = parse_json_text(text, source)
    schema.validate(data, "score-rows", source)
    return [((r["run"], r.get("qrels", default_qrels), r["measure"], r["turn"],
              math.nan if r["value"] is None else float(r["value"])), 0) for r in data]


def parse_scores(data: bytes, source: str, default_qrels: str) -> list[tuple[tuple, int]]:
    """``((run, qrels, measure, turn, value), line)`` pairs of a score table's bytes, in file order (line 0 in
    JSON), interval rows left out."""
    text = decode(data, source)
    read = _json_rows if text.lstrip()[:1] == "[" else _table_rows
    return [(row, line) for row, line in read(text, source, default_qrels) if not row[2].endswith(_INTERVAL_SUFFIXES)]


def read_scores(paths: Iterable[str | os.PathLike]) -> list[tuple]:
    """The rows ``(run, qrels, measure, turn, value)`` of one or more score tables, in the order given."""
    seen: dict[tuple, str] = {}
    rows = []
    for path in paths:
        source = display_name(path)
        for row, line in parse_scores(read_bytes(path), source, stem(path)):
            key = row[:4]
            where = f"{source}:{line}" if line else source
            if key in seen:
                raise InputError(f"run {row[0]!r}, {row[1]!r}, {row[2]} on turn {row[3]} is also in {seen[key]}; "
                                 "give each value once", source=source, line=line or None)
            seen[key] = where
            rows.append(row)
    if not rows:
        raise InputError("the score tables hold no row", argument="scores")
    return rows
