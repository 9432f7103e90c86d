"""Files of the dialogue stage: AVM confusion matrices, dialogue tables, clembench episodes and scores.

* **AVM matrix CSV** (``paradise kappa``): a header line with a corner cell (anything, e.g.
  ``data\\key``) and one label per column (the values in the scenario keys), then one line per row
  (the values in the dialogue data): its label, then one count per column. Rows may come in any
  order; they are matched to the columns by label. A matrix without labels (every cell of the first
  line a number) is read as is, values named ``v1``, ``v2``, ...
* **Dialogue CSV** (``paradise fit`` and ``predict``): a header, then one line per dialogue; the
  columns named on the command line must hold numbers, the group and id columns any text.
* **clembench episodes**: ``RUNS_DIR/MODEL/GAME/EXPERIMENT/EPISODE/interactions.json`` with the
  ``scores.json`` clembench writes beside it: one line of JSON, Python's ``json.dumps`` layout
  (``", "`` and ``": "``), ``NaN`` for undefined scores (not standard JSON, but what clembench writes
  and reads).
* **Performance function JSON** (``paradise fit --save``, read by ``predict``): see
  :meth:`castregin.dialogue.paradise.PerformanceFunction.as_dict`.

Every reader raises :class:`~castregin.errors.InputError` naming the file and line (or JSON path).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from . import schema
from .common import display_name, plain_number_text, read_json, read_text

INTERACTIONS = "interactions.json"
SCORES = "scores.json"


# --- CSV ---------------------------------------------------------------------------------------------------

def _csv_rows(path: str | os.PathLike) -> tuple[str, list[tuple[int, list[str]]]]:
    """(display name, [(line number, cells)]) of a CSV file, blank lines skipped."""
    source = display_name(path)
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    rows = []
    line = 1
    try:
        for cells in reader:
            if any(cell.strip() for cell in cells):
                rows.append((line, cells))
            line = reader.line_num + 1
    except csv.Error as err:
        raise InputError(f"malformed CSV: {err}", source=source, line=reader.line_num) from None
    return source, rows


def _number(text: str) -> float | None:
    if not plain_number_text(text):
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _avm_columns(first: list[str], first_line: int, source: str) -> tuple[list[str], bool]:
    """The column labels of an AVM matrix, and whether its rows are labelled (a header of numbers: no)."""
    labelled = not all(_number(cell) is not None for cell in first)
    if not labelled:
        return [f"v{i + 1}" for i in range(len(first))], False
    columns = [cell.strip() for cell in first[1:]]
    while columns and not columns[-1]:
        columns.pop()
    if not columns:
        raise InputError("the header names no column", source=source, line=first_line)
    for i, label in enumerate(columns):
        if not label:
            raise InputError(f"column {i + 2} of the header has no label", source=source, line=first_line)
    if len(set(columns)) != len(columns):
        duplicate = next(c for c in columns if columns.count(c) > 1)
        raise InputError(f"column label {duplicate!r} appears twice", source=source, line=first_line)
    return columns, True


def _avm_row(cells: list[str], label: str, columns: list[str], line: int, source: str) -> list[float]:
    while len(cells) > len(columns) and not cells[-1].strip():
        cells = cells[:-1]
    if len(cells) != len(columns):
        raise InputError(f"row {label!r} has {len(cells)} counts but there are {len(columns)} columns; "
                         "a confusion matrix must be square", source=source, line=line)
    values = []
    for column, cell in zip(columns, cells, strict=True):
        value = _number(cell)
        if value is None or value < 0:
            raise InputError(f"row {label!r}, column {column!r}: expected a count (a number >= 0), "
                             f"got {cell.strip()!r}", source=source, line=line)
        values.append(value)
    return values


def read_avm_matrix(path: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    """An AVM confusion matrix: (value labels, square matrix of counts, rows = data, columns = key).

    Rows are put in the order of the columns (matched by label). Not square, a row label that is
    not a column label, a missing or negative count are InputErrors naming the line.
    """
    source, rows = _csv_rows(path)
    if not rows:
        raise InputError("the file is empty, expected a confusion matrix", source=source)
    columns, labelled = _avm_columns(rows[0][1], rows[0][0], source)
    body = rows[1:] if labelled else rows
    if len(body) != len(columns):
        raise InputError(f"the matrix has {len(body)} rows and {len(columns)} columns; a confusion matrix "
                         "must be square, one row and one column per attribute value", source=source)
    labels = [cells[0].strip() if labelled else f"v{r + 1}" for r, (_, cells) in enumerate(body)]
    values = np.array([_avm_row(cells[1:] if labelled else cells, label, columns, line, source)
                       for (line, cells), label in zip(body, labels, strict=True)],
                      dtype=float).reshape(len(body), len(columns))
    if not labelled:
        return columns, values
    for (line, _), label in zip(body, labels, strict=True):
        if label not in columns:
            raise InputError(f"row label {label!r} is not a column label; rows (values in the dialogues) "
                             "and columns (values in the keys) must list the same values", source=source, line=line)
        if labels.count(label) > 1:
            raise InputError(f"row label {label!r} appears twice", source=source, line=line)
    return columns, values[[labels.index(c) for c in columns]]


@dataclass(frozen=True)
class DialogueTable:
    """Dialogues read from a CSV: numeric columns, optional group and id, the line of each dialogue."""

    source: str
    columns: dict[str, list[float]]
    groups: list[str] | None
    ids: list[str]
    lines: list[int]


def read_dialogues(path: str | os.PathLike, numeric: Sequence[str], *, group: str | None = None,
                   id_column: str | None = None) -> DialogueTable:
    """Read the ``numeric`` columns (and ``group``, ``id_column`` as text) of a dialogue CSV.

    Ids default to the dialogue's number (1, 2, ...). A missing column, an empty cell or a value
    that is not a finite number is an InputError naming the line and column.
    """
    source, rows = _csv_rows(path)
    if not rows:
        raise InputError("the file is empty, expected a header line and one line per dialogue", source=source)
    header_line, header = rows[0]
    header = [h.strip() for h in header]
    for name in header:
        if name and header.count(name) > 1:
            raise InputError(f"column {name!r} appears twice in the header", source=source, line=header_line)
    wanted = [*numeric, *([group] if group else []), *([id_column] if id_column else [])]
    for name in wanted:
        if name not in header:
            shown = ", ".join(h for h in header if h)
            raise InputError(f"no column {name!r}; the header has: {shown}", source=source, line=header_line)
    if len(rows) == 1:
        raise InputError("the file has a header but no dialogues", source=source, line=header_line + 1)
    index = {name: header.index(name) for name in wanted}
    columns: dict[str, list[float]] = {name: [] for name in numeric}
    group_texts: list[str] = []
    ids: list[str] = []
    lines: list[int] = []
    for number, (line, cells) in enumerate(rows[1:], start=1):
        if len(cells) != len(header):
            more = "more" if len(cells) > len(header) else "fewer"
            raise InputError(f"the line has {len(cells)} fields, {more} than the {len(header)} columns of the "
                             "header; quote fields that hold commas", source=source, line=line)

        def cell(name: str, cells: list[str] = cells) -> str:
            i = index[name]
            return cells[i].strip() if i < len(cells) else ""

        for name in numeric:
            text = cell(name)
            if not text:
                raise InputError(f"column {name!r} is empty; every dialogue needs a value",
                                 source=source, line=line)
            value = _number(text)
            if value is None:
                raise InputError(f"column {name!r}: expected a finite number, got {text!r}", source=source, line=line)
            columns[name].append(value)
        if group:
            text = cell(group)
            if not text:
                raise InputError(f"group column {group!r} is empty", source=source, line=line)
            group_texts.append(text)
        ids.append(cell(id_column) if id_column else str(number))
        lines.append(line)
    return DialogueTable(source, columns, group_texts if group else None, ids, lines)


# --- clembench ---------------------------------------------------------------------------------------------

def interactions_path(path: str | os.PathLike) -> Path:
    """An episode given as its directory or its ``interactions.json``."""
    p = Path(path)
    return p / INTERACTIONS if p.is_dir() else p


def read_interactions(path: str | os.PathLike) -> tuple[dict, str]:
    """(parsed ``interactions.json``, its display name); ``path`` may be the episode directory."""
    if str(path) == "-":
        return read_json(path), display_name(path)
    p = interactions_path(path)
    if not p.exists():
        hint = f" (no {INTERACTIONS} in that directory)" if Path(path).is_dir() else ""
        raise InputError(f"no such file{hint}; give an episode directory or its {INTERACTIONS}", source=str(p))
    return read_json(p), str(p)


def scores_text(scores: dict) -> str:
    """``scores.json`` as clembench writes it: ``json.dumps`` on one line, NaN as ``NaN``, no final newline."""
    return json.dumps(scores)


def read_scores(path: str | os.PathLike) -> dict:
    """A clembench ``scores.json``: an object with an ``"episode scores"`` object.

    The two scores the leaderboard uses are checked: ``Main Score`` a number (NaN, as clembench writes
    for an aborted episode, included; not a string, not an infinity) and ``Aborted`` 0 or 1.
    """
    data = read_json(path)
    schema.validate(data, "scores", str(path))
    return data


@dataclass(frozen=True)
class EpisodeLocation:
    """Where an episode lies in a clembench results tree."""

    model: str
    game: str
    experiment: str
    episode: str
    directory: Path


def find_episodes(runs_dir: str | os.PathLike) -> list[EpisodeLocation]:
    """Every episode directory (holding ``interactions.json`` or ``scores.json``) under ``runs_dir``.

    The layout is clembench's ``MODEL/GAME/EXPERIMENT/EPISODE/``; the model is everything between
    ``runs_dir`` and the game directory (``v1.0/gpt-3.5-turbo-0613-t0.0--gpt-3.5-turbo-0613-t0.0``
    when several result trees sit side by side). Sorted by path.
    """
    root = Path(runs_dir)
    if not root.is_dir():
        raise InputError("no such directory; give clembench's results directory", source=str(runs_dir))
    directories = sorted({p.parent for name in (INTERACTIONS, SCORES) for p in root.rglob(name)})
    episodes = []
    for directory in directories:
        parts = directory.relative_to(root).parts
        if len(parts) < 4:
            raise InputError(f"{directory} is not laid out as RUNS_DIR/MODEL/GAME/EXPERIMENT/EPISODE/",
                             source=str(runs_dir))
        episodes.append(EpisodeLocation("/".join(parts[:-3]), parts[-3], parts[-2], parts[-1], directory))
    if not episodes:
        raise InputError(f"no {INTERACTIONS} or {SCORES} below this directory", source=str(runs_dir))
    return episodes


# --- PARADISE performance functions ------------------------------------------------------------------------

def performance_function_text(function) -> str:
    """A :class:`~castregin.dialogue.paradise.PerformanceFunction` as the JSON text ``--save`` writes."""
    return json.dumps(function.as_dict(), ensure_ascii=False, indent=2) + "\n"


def read_performance_function(path: str | os.PathLike) -> dict:
    """A performance function saved by ``paradise fit --save``, checked against its schema (a dict:
    :meth:`castregin.dialogue.paradise.PerformanceFunction.from_dict` builds the function)."""
    data = read_json(path)
    schema.validate(data, "performance-function", display_name(path))
    return data
