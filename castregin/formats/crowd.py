"""Crowd judgment CSVs (long form, MTurk batch results, any export by column remapping) and gold CSVs.

Every CSV castregin reads for the aggregate stage is parsed here, with pandas, ids read as
strings (``031`` stays ``031``). UTF-8 with or without BOM, CRLF line ends and quoted fields with
commas or newlines are accepted. Errors name the file and the physical line of the first problem.

The result of reading judgments is :class:`Judgments`: one row per label, that is per
(worker, turn, item, criterion), with empty cells (not judged) and rejected assignments left out.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from ..limits import MAX_SCALE_LABELS
from .common import decode, display_name, read_bytes

INPUT_FORMATS = ("auto", "long", "mturk")
ID_ROLES = ("worker_id", "turn_id", "item_id", "status")
DEFAULT_SCALE = (0, 3)
GOLD_COLUMNS = ("turn_id", "item_id", "criterion", "min_label", "max_label")

_INTEGER = r"[+-]?[0-9]+"


def default_columns(input_format: str, criteria: Sequence[str]) -> dict[str, str]:
    """The column each role is read from in ``input_format`` (``long`` or ``mturk``).

    Roles are ``worker_id``, ``turn_id``, ``item_id``, ``status`` (optional: rows whose status is
    ``Rejected`` are ignored) and one per criterion.
    """
    if input_format == "mturk":
        columns = {"worker_id": "WorkerId", "turn_id": "Input.turn_id", "item_id": "Input.item_id",
                   "status": "AssignmentStatus"}
        columns.update({c: f"Answer.{c}" for c in criteria})
    elif input_format == "long":
        columns = {role: role for role in ID_ROLES}
        columns.update({c: c for c in criteria})
    else:
        raise ValueError(f"unknown input format {input_format!r}; expected long or mturk")
    return columns


def parse_scale(text: str) -> tuple[int, int]:
    """``"0-3"`` -> ``(0, 3)``; negative bounds are written ``-1-3``. ValueError when malformed."""
    match = re.fullmatch(rf"\s*({_INTEGER})\s*-\s*({_INTEGER})\s*", text)
    if not match:
        raise ValueError(f"expected MIN-MAX such as 0-3, got {text!r}")
    low, high = int(match.group(1)), int(match.group(2))
    if low >= high:
        raise ValueError(f"the scale's minimum must be below its maximum, got {text!r}")
    if high - low >= MAX_SCALE_LABELS:
        # Counts are kept per label of the scale: a scale of 10**12 labels would need terabytes.
        raise ValueError(f"a scale holds at most {MAX_SCALE_LABELS} labels (such as 0-{MAX_SCALE_LABELS - 1}), "
                         f"{text!r} holds {high - low + 1}")
    return low, high


def parse_label_map(specs: str | Iterable[str]) -> dict[str, int]:
    """``"not_relevant=0,relevant=1"`` (or several such strings) -> ``{"not_relevant": 0, "relevant": 1}``.

    Texts are matched exactly after stripping surrounding whitespace. ValueError when malformed.
    """
    if isinstance(specs, str):
        specs = [specs]
    mapping: dict[str, int] = {}
    for spec in specs:
        for part in spec.split(","):
            if not part.strip():
                continue
            text, sep, number = part.rpartition("=")
            if not sep or not text.strip() or not re.fullmatch(_INTEGER, number.strip()):
                raise ValueError(f"expected TEXT=INTEGER, got {part.strip()!r}")
            text = text.strip()
            value = int(number.strip())
            if mapping.get(text, value) != value:
                raise ValueError(f"label {text!r} is mapped twice, to {mapping[text]} and {value}")
            mapping[text] = value
    return mapping


def parse_columns(specs: Iterable[str], criteria: Sequence[str]) -> dict[str, str]:
    """``["worker_id=_worker_id", ...]`` -> ``{"worker_id": "_worker_id", ...}``; roles are checked.

    ValueError for a malformed spec or a role that is neither an id role nor a criterion.
    """
    columns: dict[str, str] = {}
    roles = set(ID_ROLES) | set(criteria)
    for spec in specs:
        role, sep, name = spec.partition("=")
        role = role.strip()
        if not sep or not role or not name.strip():
            raise ValueError(f"expected ROLE=COLUMN, got {spec!r}")
        if role not in roles:
            raise ValueError(f"unknown role {role!r}; roles are {', '.join([*ID_ROLES, *criteria])}")
        columns[role] = name.strip()
    return columns


@dataclass
class CsvFile:
    """A CSV read into a frame of strings, keeping its text to find the line of a record on demand.

    Physical lines are computed only when an error needs one: quoted fields may span lines,
    so record ``k`` is not always on line ``k + 2``.
    """

    source: str
    text: str
    frame: pd.DataFrame
    header: list[str]
    _starts: list[int] | None = field(default=None, repr=False)

    def line_of(self, record: int) -> int:
        """The physical line (1-based) where data record ``record`` (0-based) starts."""
        if self._starts is None:
            starts = []
            reader = csv.reader(io.StringIO(self.text, newline=""))
            previous_end = 0
            for fields in reader:
                start = previous_end + 1
                previous_end = reader.line_num
                if fields:  # pandas skips blank lines, so they are not records
                    starts.append(start)
            self._starts = starts[1:]  # the header is not a data record
        if record < len(self._starts):
            return self._starts[record]
        return self.text.count("\n") + 1


def _parser_error_line(text: str, width: int) -> tuple[int | None, str]:
    """Where the csv module finds the malformed record pandas refused, and why."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for fields in reader:
            if len(fields) > width:
                return reader.line_num, f"{len(fields)} fields where the header has {width}; quote fields with commas"
    except csv.Error as err:
        return reader.line_num, f"malformed CSV ({err}); check the quotes"
    return None, "malformed CSV; check the quotes"


def read_csv_text(data: bytes, source: str, what: str) -> CsvFile:
    """Parse CSV bytes into a frame of strings (empty cells are ``""``), errors naming their line.

    Every column is loaded: skipping columns (``usecols``) would also skip pandas' check that no
    row has more fields than the header, and such a row is an unquoted comma shifting the labels.
    """
    text = decode(data, source)
    if not text.strip():
        raise InputError(f"the file is empty, expected {what} with a header line", source=source)
    header = next(csv.reader(io.StringIO(text, newline="")), [])
    header = [name.strip() for name in header]
    seen: set[str] = set()
    for name in header:
        if name in seen and name:
            raise InputError(f"column {name!r} appears twice in the header", source=source, line=1)
        seen.add(name)
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False,
                            skipinitialspace=False, engine="c")
    except pd.errors.ParserError:
        line, problem = _parser_error_line(text, len(header))
        raise InputError(problem, source=source, line=line) from None
    except pd.errors.EmptyDataError:
        raise InputError(f"the file is empty, expected {what} with a header line", source=source) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.empty:
        raise InputError(f"the file has a header but no rows, expected {what}", source=source, line=2)
    return CsvFile(source, text, frame, header)


def _require(csv_file: CsvFile, columns: Mapping[str, str], roles: Iterable[str], hint: str) -> None:
    for role in roles:
        name = columns[role]
        if name not in csv_file.frame.columns:
            available = ", ".join(csv_file.header[:12]) + (", ..." if len(csv_file.header) > 12 else "")
            raise InputError(
                f"missing column {name!r} ({role}); the header has {available}{hint}",
                source=csv_file.source, line=1,
            )


def _first_bad(csv_file: CsvFile, rows: np.ndarray, mask: np.ndarray) -> tuple[int, int]:
    """(record index, line) of the first True in ``mask`` (indices into ``rows``)."""
    position = int(np.flatnonzero(mask)[0])
    record = int(rows[position])
    return position, csv_file.line_of(record)


def _first_row_with(csv_file: CsvFile, rows: np.ndarray, codes: np.ndarray, bad_codes) -> tuple[int, int]:
    """(position, line) of the first row whose code is one of ``bad_codes``."""
    return _first_bad(csv_file, rows, np.isin(codes, np.asarray(list(bad_codes), dtype=codes.dtype)))


def _id_problem(value: str) -> str | None:
    if value == "":
        return "is empty"
    if re.search(r"\s", value):
        return f"{value!r} contains whitespace, which qrels cannot hold"
    return None


def factorize_ids(csv_file: CsvFile, rows: np.ndarray, values: pd.Series, role: str,
                  column: str) -> tuple[np.ndarray, np.ndarray]:
    """(codes, unique ids) of an id column, stripped; an empty id or one with whitespace is an error.

    Stripping and checking run on the distinct values only, which keeps a million rows fast.
    """
    codes, uniques = pd.factorize(values)
    stripped = [str(u).strip() for u in uniques]
    problems = {k: p for k, p in ((k, _id_problem(v)) for k, v in enumerate(stripped)) if p}
    if problems:
        position, line = _first_row_with(csv_file, rows, codes, problems)
        problem = problems[int(codes[position])]
        raise InputError(f"{role} (column {column!r}) {problem}", source=csv_file.source, line=line)
    # Stripping can merge two raw values (" Q1" and "Q1"): factorise once more.
    merged, names = pd.factorize(np.asarray(stripped, dtype=object))
    return merged[codes] if len(codes) else codes, np.asarray(names, dtype=object)


def _label_value(text: str, label_map: Mapping[str, int]) -> int | str:
    """The integer of one distinct cell text, or the text itself when it is no label."""
    if text in label_map:
        return label_map[text]
    if re.fullmatch(_INTEGER, text):
        return int(text)
    return text


def _labels(csv_file: CsvFile, rows: np.ndarray, cells: pd.Series, criterion: str, column: str,
            label_map: Mapping[str, int], scale: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(positions judged, integer labels) of one criterion's column; unmapped text is an error.

    A column holds few distinct texts, so each is parsed once and the rows take its value.
    """
    codes, uniques = pd.factorize(cells)
    texts = [str(u).strip() for u in uniques]
    values = [None if t == "" else _label_value(t, label_map) for t in texts]
    not_integer = {k for k, v in enumerate(values) if isinstance(v, str)}
    if not_integer:
        position, line = _first_row_with(csv_file, rows, codes, not_integer)
        text = texts[int(codes[position])]
        hint = "; map it with --label-map" if not re.fullmatch(r"[+-]?[0-9.eE+-]+", text) else ""
        raise InputError(f"{criterion} label {text!r} (column {column!r}) is not an integer{hint}",
                         source=csv_file.source, line=line)
    outside = {k for k, v in enumerate(values) if v is not None and not scale[0] <= v <= scale[1]}
    if outside:
        position, line = _first_row_with(csv_file, rows, codes, outside)
        raise InputError(
            f"{criterion} label {texts[int(codes[position])]!r} is outside the scale {scale[0]}-{scale[1]}"
            " (set another with --scale)", source=csv_file.source, line=line,
        )
    # Every value now lies on the scale, so the missing ones can borrow a sentinel below it.
    table = np.array([scale[0] - 1 if v is None else v for v in values], dtype=np.int64)
    labels = table[codes] if len(codes) else np.zeros(0, dtype=np.int64)
    positions = np.flatnonzero(labels >= scale[0])
    return positions, labels[positions]


@dataclass
class Judgments:
    """Crowd labels in long form, ready to aggregate.

    ``labels`` has one row per label: ``worker_id``, ``turn_id``, ``item_id`` (categoricals),
    ``criterion`` (categorical over ``criteria``), ``label`` (int64), and ``file``/``record``
    locating it. ``items`` holds every (turn_id, item_id) of an accepted row, judged or not, so
    that an item whose labels are all removed or empty can be reported.
    """

    labels: pd.DataFrame
    items: pd.DataFrame
    criteria: list[str]
    scale: tuple[int, int] = DEFAULT_SCALE
    files: list[CsvFile] = field(default_factory=list, repr=False)
    rejected: int = 0

    def line_of(self, position: int) -> tuple[str, int]:
        """(file, line) of the label at row ``position`` of :attr:`labels`."""
        file_index = int(self.labels["file"].iat[position])
        record = int(self.labels["record"].iat[position])
        csv_file = self.files[file_index]
        return csv_file.source, csv_file.line_of(record)

    def __len__(self) -> int:
        return len(self.labels)


def detect_format(header: Sequence[str]) -> str:
    """``mturk`` for an MTurk batch-results header (it has ``WorkerId``), else ``long``."""
    return "mturk" if "WorkerId" in header or "AssignmentStatus" in header else "long"


#: The answer field of castregin's per-topic MTurk HIT (``castregin tasks --format mturk``).
HIT_ANSWERS = "Answer.judgments"


def explode_hit_answers(csv_file: CsvFile, criteria: Sequence[str]) -> CsvFile:
    """MTurk results of castregin's per-topic HITs as one row per judged item.

    Each assignment's ``Answer.judgments`` is a JSON list of ``{turn_id, item_id, <criterion>...}``;
    each element becomes a row ``WorkerId, AssignmentStatus, Input.turn_id, Input.item_id,
    Answer.<criterion>`` that keeps the assignment's line for messages.
    """
    frame = csv_file.frame
    kept = [c for c in ("WorkerId", "AssignmentStatus") if c in frame.columns]
    rows, lines = [], []
    for record, (answers, *fixed) in enumerate(zip(frame[HIT_ANSWERS], *(frame[c] for c in kept))):
        line = csv_file.line_of(record)
        try:
            elements = json.loads(answers) if answers.strip() else []
        except ValueError:
            raise InputError(f"{HIT_ANSWERS} is not JSON; expected the list the castregin HIT submits",
                             source=csv_file.source, line=line) from None
        if not isinstance(elements, list) or not all(isinstance(e, dict) for e in elements):
            raise InputError(f"{HIT_ANSWERS} must be a JSON list of objects {{turn_id, item_id, <criterion>}}",
                             source=csv_file.source, line=line)
        for element in elements:
            cells = [element.get("turn_id"), element.get("item_id"), *(element.get(c) for c in criteria)]
            rows.append([*fixed, *("" if v is None else str(v) for v in cells)])
            lines.append(line)
    header = [*kept, "Input.turn_id", "Input.item_id", *(f"Answer.{c}" for c in criteria)]
    exploded = pd.DataFrame(rows, columns=header, dtype=str)
    return CsvFile(csv_file.source, csv_file.text, exploded, header, _starts=lines)


def _parse_one(csv_file: CsvFile, criteria: Sequence[str], input_format: str, columns: Mapping[str, str],
               label_map: Mapping[str, int], scale: tuple[int, int]):
    fmt = detect_format(csv_file.header) if input_format == "auto" else input_format
    if fmt == "mturk" and HIT_ANSWERS in csv_file.header and "Input.turn_id" not in csv_file.header:
        csv_file = explode_hit_answers(csv_file, criteria)
    roles = default_columns(fmt, criteria)
    roles.update(columns)
    hint = "; name the column with --column ROLE=NAME"
    if fmt == "long" and input_format == "auto":
        hint += " (or --input-format mturk)"
    _require(csv_file, roles, ["worker_id", "turn_id", "item_id", *criteria], hint)
    if "status" in columns:
        _require(csv_file, roles, ["status"], hint)
    frame = csv_file.frame
    rows = np.arange(len(frame))
    rejected = 0
    if roles["status"] in frame.columns:
        # MTurk writes "Rejected"; other exports vary in case and spacing.
        codes, uniques = pd.factorize(frame[roles["status"]])
        rejected_codes = [k for k, u in enumerate(uniques) if str(u).strip().lower() == "rejected"]
        keep = ~np.isin(codes, rejected_codes)
        rejected = int((~keep).sum())
        rows = rows[keep]
        frame = frame.iloc[rows]
    ids = {role: factorize_ids(csv_file, rows, frame[roles[role]], role, roles[role])
           for role in ("worker_id", "turn_id", "item_id")}
    picked_rows, picked_criteria, picked_labels = [], [], []
    for index, criterion in enumerate(criteria):
        positions, labels = _labels(csv_file, rows, frame[roles[criterion]], criterion, roles[criterion],
                                    label_map, scale)
        picked_rows.append(positions)
        picked_criteria.append(np.full(len(positions), index, dtype=np.int16))
        picked_labels.append(labels)
    return {"ids": ids, "positions": np.concatenate(picked_rows), "criterion": np.concatenate(picked_criteria),
            "label": np.concatenate(picked_labels), "rows": rows}, rejected, csv_file


def parse_judgments(sources: Sequence[tuple[bytes, str]], criteria: Sequence[str], *,
                    input_format: str = "auto", columns: Mapping[str, str] | None = None,
                    label_map: Mapping[str, int] | None = None,
                    scale: tuple[int, int] = DEFAULT_SCALE) -> Judgments:
    """:func:`read_judgments` on ``(bytes, name for messages)`` pairs."""
    # One pass over the files, then one over the rows: longer than 50 lines because each check names the
    # file and line, which the steps would otherwise pass back and forth.
    criteria = list(criteria)
    if not criteria:
        raise ValueError("at least one criterion is needed")
    if len(set(criteria)) != len(criteria):
        raise ValueError("a criterion is listed twice")
    if input_format not in INPUT_FORMATS:
        raise ValueError(f"unknown input format {input_format!r}; expected one of {', '.join(INPUT_FORMATS)}")
    columns = dict(columns or {})
    label_map = dict(label_map or {})
    files, parts = [], []
    rejected = 0
    for data, source in sources:
        csv_file = read_csv_text(data, source, "a judgments CSV")
        # The file as its rows were read: per-topic HIT answers come back one row per item.
        part, file_rejected, csv_file = _parse_one(csv_file, criteria, input_format, columns, label_map, scale)
        files.append(csv_file)
        parts.append(part)
        rejected += file_rejected
    if not parts:
        raise ValueError("no judgment files given")
    # One sorted vocabulary per id role over all files; each file's codes are mapped into it.
    row_codes: dict[str, list[np.ndarray]] = {}
    names: dict[str, np.ndarray] = {}
    for role in ("worker_id", "turn_id", "item_id"):
        names[role] = np.unique(np.concatenate([p["ids"][role][1] for p in parts]).astype(str))
        vocabulary = pd.Index(names[role])
        row_codes[role] = [vocabulary.get_indexer(p["ids"][role][1])[p["ids"][role][0]]
                           if len(p["ids"][role][0]) else np.zeros(0, dtype=np.int64) for p in parts]

    def labels_of(role):
        return np.concatenate([codes[p["positions"]] for codes, p in zip(row_codes[role], parts)])

    def categorical(role):
        return pd.Categorical.from_codes(labels_of(role), categories=pd.Index(names[role], dtype=object))

    labels = pd.DataFrame({
        "worker_id": categorical("worker_id"),
        "turn_id": categorical("turn_id"),
        "item_id": categorical("item_id"),
        "criterion": pd.Categorical.from_codes(np.concatenate([p["criterion"] for p in parts]), categories=criteria),
        "label": np.concatenate([p["label"] for p in parts]),
        "file": np.concatenate([np.full(len(p["positions"]), k, dtype=np.int32) for k, p in enumerate(parts)]),
        "record": np.concatenate([p["rows"][p["positions"]] for p in parts]).astype(np.int64),
    })
    n_items = max(len(names["item_id"]), 1)
    pairs = np.unique(np.concatenate([t.astype(np.int64) * n_items + i
                                      for t, i in zip(row_codes["turn_id"], row_codes["item_id"])]))
    items = pd.DataFrame({"turn_id": names["turn_id"][pairs // n_items].astype(object),
                          "item_id": names["item_id"][pairs % n_items].astype(object)})
    judgments = Judgments(labels, items, criteria, scale, files, rejected)
    _check_duplicates(judgments)
    return judgments


def _check_duplicates(judgments: Judgments) -> None:
    """A worker labelling the same (turn, item, criterion) twice is refused: usually a file given twice."""
    frame = judgments.labels
    if frame.empty:
        return
    key = np.zeros(len(frame), dtype=np.int64)
    room = 1.0
    for column in ("worker_id", "turn_id", "item_id", "criterion"):
        size = len(frame[column].cat.categories)
        room *= max(size, 1)
        key = key * size + frame[column].cat.codes.to_numpy().astype(np.int64)
    if room < 2.0**62:
        duplicated = pd.Series(key).duplicated().to_numpy()
    else:  # too many distinct ids for one int64 key
        duplicated = frame.duplicated(["worker_id", "turn_id", "item_id", "criterion"]).to_numpy()
    if duplicated.any():
        second = int(np.flatnonzero(duplicated)[0])
        row = frame.iloc[second]
        same = (frame["worker_id"] == row["worker_id"]) & (frame["turn_id"] == row["turn_id"]) & (
            frame["item_id"] == row["item_id"]) & (frame["criterion"] == row["criterion"])
        first = int(np.flatnonzero(same.to_numpy())[0])
        first_source, first_line = judgments.line_of(first)
        source, line = judgments.line_of(second)
        raise InputError(
            f"worker {row['worker_id']} labels {row['criterion']} of turn {row['turn_id']} item {row['item_id']}"
            f" a second time (first at {first_source}:{first_line}); keep one of the rows",
            source=source, line=line,
        )


def read_judgments(paths: Sequence[str | os.PathLike], criteria: Sequence[str], *,
                   input_format: str = "auto", columns: Mapping[str, str] | None = None,
                   label_map: Mapping[str, int] | None = None,
                   scale: tuple[int, int] = DEFAULT_SCALE) -> Judgments:
    """Read and concatenate judgment CSVs into one :class:`Judgments`.

    ``input_format`` is ``long`` (``worker_id,turn_id,item_id,<criterion>...``), ``mturk``
    (``WorkerId``, ``AssignmentStatus``, ``Input.turn_id``, ``Input.item_id``, ``Answer.<criterion>``)
    or ``auto`` (``mturk`` when the header has ``WorkerId`` or ``AssignmentStatus``). ``columns``
    maps roles (``worker_id``, ``turn_id``, ``item_id``, ``status``, each criterion) to other column
    names; ``label_map`` maps textual labels to integers. Rows whose status is ``Rejected`` and
    empty cells are skipped; a label outside ``scale`` is an :class:`InputError`.
    """
    return parse_judgments([(read_bytes(p), display_name(p)) for p in paths], criteria,
                           input_format=input_format, columns=columns, label_map=label_map, scale=scale)


def parse_gold(data: bytes, source: str, scale: tuple[int, int] | None = DEFAULT_SCALE) -> pd.DataFrame:
    """:func:`read_gold` on the bytes of a file that ``source`` names in messages."""
    csv_file = read_csv_text(data, source, "a gold CSV (turn_id,item_id,criterion,min_label,max_label)")
    frame = csv_file.frame
    missing = [c for c in GOLD_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(
            f"missing column {missing[0]!r}; a gold CSV has the columns {','.join(GOLD_COLUMNS)}",
            source=source, line=1,
        )
    rows = np.arange(len(frame))
    gold = pd.DataFrame({c: frame[c].str.strip() for c in GOLD_COLUMNS})
    for column in ("turn_id", "item_id", "criterion"):
        factorize_ids(csv_file, rows, gold[column], column, column)
    for column in ("min_label", "max_label"):
        ok = gold[column].str.fullmatch(_INTEGER).to_numpy(dtype=bool)
        if not ok.all():
            position, line = _first_bad(csv_file, rows, ~ok)
            raise InputError(f"{column} {gold[column].iloc[position]!r} is not an integer", source=source, line=line)
        gold[column] = [int(v) for v in gold[column].tolist()]
    inverted = (gold["min_label"] > gold["max_label"]).to_numpy()
    if inverted.any():
        _, line = _first_bad(csv_file, rows, inverted)
        raise InputError("min_label is above max_label", source=source, line=line)
    if scale is not None:
        outside = ((gold["min_label"] < scale[0]) | (gold["max_label"] > scale[1])).to_numpy()
        if outside.any():
            _, line = _first_bad(csv_file, rows, outside)
            raise InputError(f"the gold range is outside the scale {scale[0]}-{scale[1]}", source=source, line=line)
    twice = gold.duplicated(["turn_id", "item_id", "criterion"]).to_numpy()
    if twice.any():
        position, line = _first_bad(csv_file, rows, twice)
        g = gold.iloc[position]
        raise InputError(f"gold for turn {g.turn_id} item {g.item_id} {g.criterion} is given twice",
                         source=source, line=line)
    gold["line"] = [csv_file.line_of(r) for r in rows]
    gold = gold.sort_values(["turn_id", "item_id", "criterion"], kind="stable").reset_index(drop=True)
    gold.attrs["source"] = source
    return gold


def read_gold(path: str | os.PathLike, scale: tuple[int, int] | None = DEFAULT_SCALE) -> pd.DataFrame:
    """Read a gold CSV: ``turn_id,item_id,criterion,min_label,max_label`` (other columns ignored).

    Returns a frame with those columns (bounds as ints) and ``line``, sorted by turn, item and
    criterion. Non-integer bounds, ``min_label > max_label``, bounds outside ``scale`` and a
    (turn, item, criterion) given twice are :class:`InputError`.
    """
    return parse_gold(read_bytes(path), display_name(path), scale)
