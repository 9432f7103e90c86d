"""Crowd judgment CSVs (long form, MTurk batch results, any export by column remapping) and gold CSVs.

Every CSV castregin reads for the aggregate stage is parsed here, ids read as strings (``031``
stays ``031``): by pyarrow's parser, only the columns needed and each column factorised (a code per
row, the distinct texts once), or by pandas where pyarrow would read the file otherwise. UTF-8 with or
without BOM, CRLF line ends and quoted fields with commas or newlines are accepted. Errors name the
file and the physical line of the first problem.

The result of reading judgments is :class:`Judgments`: one entry per accepted row, ids as integer
codes and one label (or none) per criterion, with rejected assignments left out.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast, overload

import numpy as np
import pandas as pd

from ..errors import InputError
from ..labels import distinct_criteria
from ..limits import MAX_JSON_DEPTH, MAX_SCALE_LABELS
from .common import decode, deeper_than, display_name, nested_too_deeply, read_bytes, without_cyclic_gc

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
        raise InputError(f"unknown input format {input_format!r}; expected long or mturk",
                         argument="input_format")
    return columns


def parse_scale(text: str) -> tuple[int, int]:
    """``"0-3"`` -> ``(0, 3)``; negative bounds are written ``-1-3``. InputError when malformed."""
    match = re.fullmatch(rf"\s*({_INTEGER})\s*-\s*({_INTEGER})\s*", text)
    if not match:
        raise InputError(f"expected MIN-MAX such as 0-3, got {text!r}", argument="scale")
    low, high = int(match.group(1)), int(match.group(2))
    if low >= high:
        raise InputError(f"the scale's minimum must be below its maximum, got {text!r}", argument="scale")
    if high - low >= MAX_SCALE_LABELS:
        # Counts are kept per label of the scale: a scale of 10**12 labels would need terabytes.
        raise InputError(f"a scale holds at most {MAX_SCALE_LABELS} labels (such as "
                         f"0-{MAX_SCALE_LABELS - 1}), {text!r} holds {high - low + 1}", argument="scale")
    return low, high


def parse_label_map(specs: str | Iterable[str]) -> dict[str, int]:
    """``"not_relevant=0,relevant=1"`` (or several such strings) -> ``{"not_relevant": 0, "relevant": 1}``.

    Texts are matched exactly after stripping surrounding whitespace. InputError when malformed.
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
                raise InputError(f"expected TEXT=INTEGER, got {part.strip()!r}", argument="label_map")
            text = text.strip()
            value = int(number.strip())
            if mapping.get(text, value) != value:
                raise InputError(f"label {text!r} is mapped twice, to {mapping[text]} and {value}",
                                 argument="label_map")
            mapping[text] = value
    return mapping


def parse_columns(specs: Iterable[str], criteria: Sequence[str]) -> dict[str, str]:
    """``["worker_id=_worker_id", ...]`` -> ``{"worker_id": "_worker_id", ...}``; roles are checked.

    InputError for a malformed spec or a role that is neither an id role nor a criterion.
    """
    columns: dict[str, str] = {}
    roles = set(ID_ROLES) | set(criteria)
    for spec in specs:
        role, sep, name = spec.partition("=")
        role = role.strip()
        if not sep or not role or not name.strip():
            raise InputError(f"expected ROLE=COLUMN, got {spec!r}", argument="columns")
        if role not in roles:
            raise InputError(f"unknown role {role!r}; roles are {', '.join([*ID_ROLES, *criteria])}",
                             argument="columns")
        columns[role] = name.strip()
    return columns


#: A row appended to a file with quotes: a quoted field left open at the end swallows it, which shows.
_SENTINEL = "\x01castregin-end-of-file\x01"
#: A byte that ``str.strip`` keeps, in ASCII text (``bytes.strip`` would also keep \x1c-\x1f).
_NOT_SPACE = re.compile(rb"[^ \t\n\r\x0b\x0c\x1c-\x1f]")
_SPACE = re.compile(r"\s")


@contextlib.contextmanager
def _fields_of_any_size(size: int):
    """The csv module reading fields of up to ``size`` characters (its limit is process-wide: put back after)."""
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, size + 1))
    try:
        yield
    finally:
        csv.field_size_limit(limit)


@dataclass
class CsvFile:
    """A CSV's header and the columns read so far, each factorised: a code per record and the distinct texts.

    Columns are parsed on demand (:meth:`load`, :meth:`codes`), so a column nobody asks for costs
    nothing. Physical lines are computed only when an error needs one: quoted fields may span
    lines, so record ``k`` is not always on line ``k + 2``.
    """

    source: str
    data: bytes
    header: list[str]  # names stripped of surrounding whitespace
    raw_header: list[str] = field(default_factory=list, repr=False)
    n_records: int | None = None
    columns: dict[str, tuple[np.ndarray, list[str]]] = field(default_factory=dict, repr=False)
    _starts: list[int] | None = field(default=None, repr=False)

    def line_of(self, record: int | np.integer) -> int:
        """The physical line (1-based) where data record ``record`` (0-based) starts."""
        if self._starts is None:
            starts = []
            reader = csv.reader(io.StringIO(decode(self.data, self.source), newline=""))
            previous_end = 0
            with _fields_of_any_size(len(self.data)):  # pyarrow read fields beyond the csv module's 128 KiB
                for fields in reader:
                    start = previous_end + 1
                    previous_end = reader.line_num
                    if fields:  # blank lines are not records
                        starts.append(start)
            self._starts = starts[1:]  # the header is not a data record
        if record < len(self._starts):
            return self._starts[record]
        return self.data.count(b"\n") + 1

    def load(self, names: Iterable[str], what: str = "rows") -> int:
        """Parse the columns ``names`` (header names) of every record; the first call checks every row.
        Returns the number of records.

        Raises :class:`InputError` for a malformed file (the line of the first bad record) and for
        a file without records.
        """
        wanted = [name for name in dict.fromkeys(names) if name not in self.columns]
        if not wanted and self.n_records is not None:
            return self.n_records
        # The first call parses at least one column: the checks of every row come with any column.
        indices = [self.header.index(name) for name in wanted] or [0]
        parsed = _arrow_columns(self, indices)
        if parsed is None:
            parsed = _pandas_columns(self)
        n_records: int = parsed.pop(None)
        self.n_records = n_records
        self.columns.update(parsed)
        if n_records == 0:
            raise InputError(f"the file has a header but no rows, expected {what}", source=self.source, line=2)
        return n_records

    @property
    def records(self) -> int:
        """How many data records the file has (counted by the first :meth:`load`)."""
        return self.n_records if self.n_records is not None else self.load([])

    def codes(self, name: str) -> tuple[np.ndarray, list[str]]:
        """(code of each record, distinct texts) of column ``name``, parsed now if not yet."""
        if name not in self.columns:
            self.load([name])
        return self.columns[name]

    def texts(self, name: str) -> pd.Series:
        """Column ``name`` as strings, one per record (for small files: gold, HIT answers)."""
        codes, uniques = self.codes(name)
        return pd.Series(np.asarray(uniques, dtype=object)[codes], dtype=object)


@overload
def _parser_error_line(text: str, width: int, *, refused: Literal[True] = ...) -> tuple[int | None, str]: ...
@overload
def _parser_error_line(text: str, width: int, *, refused: bool) -> tuple[int | None, str | None]: ...
def _parser_error_line(text: str, width: int, *, refused: bool = True) -> tuple[int | None, str | None]:
    """Where the csv module finds the first record with more or fewer fields than the header, or another
    malformed record, and why. ``refused``: pandas refused the text (else None when no record is wrong)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        with _fields_of_any_size(len(text)):
            for fields in reader:
                if len(fields) > width:
                    return reader.line_num, (f"{len(fields)} fields where the header has {width}; quote fields "
                                             "with commas")
                if fields and len(fields) < width:
                    return reader.line_num, (f"{len(fields)} field{'s' if len(fields) > 1 else ''} where the "
                                             f"header has {width}; give every column (empty ones as ,,)")
    except csv.Error as err:
        return reader.line_num, f"malformed CSV ({err}); check the quotes"
    return (None, "malformed CSV; check the quotes") if refused else (None, None)


def _arrow_columns(csv_file: CsvFile, indices: list[int]) -> dict | None:
    """The columns at ``indices`` parsed by pyarrow, factorised; None where pandas must decide.

    pyarrow's multithreaded parser reads only the wanted columns, so a million rows take a
    second. It checks that every row has as many fields as the header. Where it reads a file
    otherwise than pandas (a lone carriage return, a whitespace-only line under a one-column
    header, a quote left open at the end of the file) or refuses it, pandas reads the file, as
    before, and its errors stand.
    """
    from ..arrays import arrow, read_csv_bytes

    data, width = csv_file.data, len(csv_file.header)
    if width < 2 or (b"\r" in data and data.count(b"\r") != data.count(b"\r\n")):
        return None
    pa, _, pa_csv = arrow()
    quoted = b'"' in data
    raw = [csv_file.raw_header[k] for k in indices]
    # Dictionary columns: each block of the file keeps its distinct texts once, never a string per row.
    kind = pa.dictionary(pa.int32(), pa.string())
    try:
        table = read_csv_bytes(
            data + ("\n" + ",".join([_SENTINEL] * width) + "\n").encode() if quoted else data,
            read_options=pa_csv.ReadOptions(use_threads=True),
            parse_options=pa_csv.ParseOptions(newlines_in_values=quoted),
            convert_options=pa_csv.ConvertOptions(
                include_columns=raw, column_types=dict.fromkeys(raw, kind), null_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowKeyError, KeyError):
        return None
    if table.column_names != raw:
        return None
    # One dictionary per column (each block had its own), unified before the sentinel row is cut off.
    table = table.unify_dictionaries()
    if quoted:
        if table.num_rows == 0 or table.column(0)[-1].as_py() != _SENTINEL:
            return None
        table = table.slice(0, table.num_rows - 1)
    parsed: dict = {None: table.num_rows}
    for k, name in zip(indices, raw, strict=True):
        parsed[csv_file.header[k]] = _dictionary_codes(table.column(name), quoted)
        if parsed[csv_file.header[k]] is None:
            return None
    return parsed


def _dictionary_codes(column, quoted: bool) -> tuple[np.ndarray, list[str]] | None:
    """(codes, texts) of a pyarrow dictionary column whose chunks share one dictionary."""
    from ..arrays import arrow, to_numpy

    pa = arrow()[0]
    chunks = [chunk for chunk in column.chunks if len(chunk)]
    if not chunks:
        return np.zeros(0, dtype=np.int32), []
    codes = to_numpy(pa.chunked_array([chunk.indices for chunk in chunks], type=pa.int32()), np.int32)
    texts = chunks[0].dictionary.to_pylist()
    if quoted:
        # The sentinel row is gone, its text not: the last of the dictionary (a new text of the last row).
        if texts[-1] != _SENTINEL or _SENTINEL in texts[:-1]:
            return None
        texts.pop()
    return codes, texts


def _pandas_columns(csv_file: CsvFile) -> dict:
    """Every column parsed by pandas, factorised (the reader of files pyarrow does not vouch for)."""
    text = decode(csv_file.data, csv_file.source)
    width = len(csv_file.header)
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False,
                            skipinitialspace=False, engine="c")
    except pd.errors.ParserError:
        line, problem = _parser_error_line(text, width)
        raise InputError(problem, source=csv_file.source, line=line) from None
    except pd.errors.EmptyDataError:
        raise InputError("the file is empty", source=csv_file.source) from None
    if not isinstance(frame.index, pd.RangeIndex):
        # Every row had one field more than the header, and pandas took the first for an index.
        line, problem = _parser_error_line(text, width)
        raise InputError(problem, source=csv_file.source, line=line) from None
    # pandas fills a record with fewer fields than the header with empty cells: refused, as pyarrow refuses it.
    short_line, short = _parser_error_line(text, width, refused=False)
    if short is not None:
        raise InputError(short, source=csv_file.source, line=short_line)
    parsed: dict = {None: len(frame)}
    for k, name in enumerate(csv_file.header):
        if name and name not in parsed and k < frame.shape[1]:
            codes, uniques = pd.factorize(frame.iloc[:, k])
            parsed[name] = (codes.astype(np.int32), [str(u) for u in uniques])
    return parsed


def open_csv(data: bytes, source: str, what: str) -> CsvFile:
    """A :class:`CsvFile` of CSV bytes with its header read and checked; no row is parsed yet.

    UTF-8 is checked first, for the whole file. Empty files and a column named twice are errors.
    """
    if not data.isascii():
        text = decode(data, source)  # raises, naming the line of the first byte that is not UTF-8
        empty = not text.strip()
    else:
        empty = _NOT_SPACE.search(data) is None  # not data.strip(): that copies the file
    if empty:
        raise InputError(f"the file is empty, expected {what} with a header line", source=source)
    # The first record that is not blank, as pandas takes it; the text is decoded as far as it is read.
    lines = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    try:
        raw = next((fields for fields in csv.reader(lines) if fields), [])
    except csv.Error as err:  # a header field beyond the csv module's limit (128 KiB), a NUL byte...
        raise InputError(f"malformed CSV header ({err}); check the first line", source=source, line=1) from None
    header = [name.strip() for name in raw]
    seen: set[str] = set()
    for name in header:
        if name in seen and name:
            raise InputError(f"column {name!r} appears twice in the header", source=source, line=1)
        seen.add(name)
    return CsvFile(source, data, header, raw)


def read_csv_text(data: bytes, source: str, what: str, columns: Iterable[str] | None = None) -> CsvFile:
    """Open CSV bytes and parse ``columns`` (default: all) of every row, errors naming their line."""
    csv_file = open_csv(data, source, what)
    names = csv_file.header if columns is None else columns
    csv_file.load([name for name in names if name and name in csv_file.header], what)
    return csv_file


def _require(csv_file: CsvFile, columns: Mapping[str, str], roles: Iterable[str], hint: str) -> None:
    for role in roles:
        name = columns[role]
        if name not in csv_file.header:
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
    if _SPACE.search(value):
        return f"{value!r} contains whitespace, which qrels cannot hold"
    if "\0" in value:
        return f"{value!r} contains a NUL byte, which no trec_eval id can hold"
    return None


def factorize_ids(csv_file: CsvFile, rows: np.ndarray, codes: np.ndarray, uniques: Sequence[str], role: str,
                  column: str) -> tuple[np.ndarray, list[str]]:
    """(codes into ids, ids) of an id column: ``codes[k]`` is record ``rows[k]``'s index in ``uniques``.

    The ids are the distinct texts the rows use, stripped; an empty one or one holding whitespace
    is an error naming the line of its first row. The checks run on the distinct texts only, and
    on all of them at once while none fails.
    """
    # The distinct texts of a column all occur; once rows are left out, some may no longer.
    if len(rows) == csv_file.n_records:
        used, texts = np.arange(len(uniques)), list(uniques)
    else:
        used = np.flatnonzero(np.bincount(codes, minlength=len(uniques)))
        texts = [uniques[k] for k in used.tolist()]
    stripped = [text.strip() for text in texts]
    joined = "\x00".join(stripped)  # a NUL within an id shows as one NUL more than the separators
    if "" in stripped or _SPACE.search(joined) or joined.count("\x00") > max(len(stripped) - 1, 0):
        problems = {int(k): p for k, p in ((k, _id_problem(v)) for k, v in zip(used, stripped, strict=True)) if p}
        position, line = _first_row_with(csv_file, rows, codes, problems)
        problem = problems[int(codes[position])]
        raise InputError(f"{role} (column {column!r}) {problem}", source=csv_file.source, line=line)
    table = np.full(len(uniques), -1, dtype=np.int32)
    if stripped == texts:  # distinct texts, none padded: the ids as they are
        table[used] = np.arange(len(used), dtype=np.int32)
        return table[codes], stripped
    # Stripping can merge two raw values (" Q1" and "Q1"): factorise once more.
    merged, ids = pd.factorize(np.asarray(stripped, dtype=object))
    table[used] = merged
    return table[codes], [str(i) for i in ids]


def _label_value(text: str, label_map: Mapping[str, int]) -> int | str:
    """The integer of one distinct cell text, or the text itself when it is no label."""
    if text in label_map:
        return label_map[text]
    if re.fullmatch(_INTEGER, text):
        return int(text)
    return text


def _labels(csv_file: CsvFile, rows: np.ndarray, codes: np.ndarray, uniques: Sequence[str], criterion: str,
            column: str, label_map: Mapping[str, int], scale: tuple[int, int]) -> np.ndarray:
    """Each row's label of one criterion minus ``scale[0]``, -1 for an empty cell; unmapped text is an error.

    A column holds few distinct texts, so each is parsed once and the rows take its value; texts
    only rejected rows hold are not looked at.
    """
    used = (np.ones(len(uniques), dtype=bool) if len(rows) == csv_file.n_records
            else np.bincount(codes, minlength=len(uniques)) > 0)
    texts = [u.strip() for u in uniques]
    values = [None if t == "" or not use else _label_value(t, label_map)
              for t, use in zip(texts, used.tolist(), strict=True)]
    not_integer = {k for k, v in enumerate(values) if isinstance(v, str)}
    if not_integer:
        position, line = _first_row_with(csv_file, rows, codes, not_integer)
        text = texts[int(codes[position])]
        hint = "; map it with --label-map" if not re.fullmatch(r"[+-]?[0-9.eE+-]+", text) else ""
        raise InputError(f"{criterion} label {text!r} (column {column!r}) is not an integer{hint}",
                         source=csv_file.source, line=line)
    numbers = [None if isinstance(v, str) else v for v in values]  # no text is left: each is an integer
    outside = {k for k, v in enumerate(numbers) if v is not None and not scale[0] <= v <= scale[1]}
    if outside:
        position, line = _first_row_with(csv_file, rows, codes, outside)
        raise InputError(
            f"{criterion} label {texts[int(codes[position])]!r} is outside the scale {scale[0]}-{scale[1]}"
            " (set another with --scale)", source=csv_file.source, line=line,
        )
    table = np.array([-1 if v is None else v - scale[0] for v in numbers], dtype=np.int16)
    return table[codes] if len(codes) else np.zeros(0, dtype=np.int16)


def labelled_rows(values: np.ndarray) -> np.ndarray:
    """Whether each row of a rows x criteria label matrix (-1: no label) holds some label."""
    found = np.zeros(len(values), dtype=bool)
    for c in range(values.shape[1]):  # column by column: millions of rows of three cells
        found |= values[:, c] >= 0
    return found


@dataclass
class Judgments:
    """Crowd labels ready to aggregate: one entry per accepted CSV row, in reading order, ids as codes.

    Row ``r`` is worker ``worker_names[worker[r]]`` judging unit ``unit[r]``: turn
    ``turn_names[unit_turn[unit[r]]]``, item ``item_names[unit_item[unit[r]]]``. ``values[r, c]`` is
    its label of ``criteria[c]`` minus ``scale[0]``, -1 for an empty cell. Names are sorted, so codes
    sort as names do; units are every (turn, item) of an accepted row, judged or not, sorted by turn
    then item. ``file[r]``/``record[r]`` locate the row. :attr:`labels` and :attr:`items` give the
    same as pandas frames.
    """

    criteria: list[str]
    scale: tuple[int, int]
    files: list[CsvFile]
    rejected: int
    worker: np.ndarray
    unit: np.ndarray
    values: np.ndarray
    file: np.ndarray
    record: np.ndarray
    worker_names: np.ndarray
    turn_names: np.ndarray
    item_names: np.ndarray
    unit_turn: np.ndarray
    unit_item: np.ndarray

    def label_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(row, criterion index) of every label, ordered by file, then criterion, then row."""
        rows, criteria = [], []
        bounds = np.searchsorted(self.file, np.arange(len(self.files) + 1))
        for begin, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            for c in range(len(self.criteria)):
                here = np.flatnonzero(self.values[begin:end, c] >= 0) + begin
                rows.append(here)
                criteria.append(np.full(len(here), c, dtype=np.int16))
        return np.concatenate(rows), np.concatenate(criteria)

    @property
    def labels(self) -> pd.DataFrame:
        """One row per label: ``worker_id``, ``turn_id``, ``item_id``, ``criterion`` (categoricals),
        ``label`` (int64), ``file``, ``record``; in the order of :meth:`label_rows`."""
        rows, criteria = self.label_rows()
        unit = self.unit[rows]

        def categorical(codes, names):
            return pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object))

        return pd.DataFrame({
            "worker_id": categorical(self.worker[rows], self.worker_names),
            "turn_id": categorical(self.unit_turn[unit], self.turn_names),
            "item_id": categorical(self.unit_item[unit], self.item_names),
            # pandas-stubs ask for an Index; from_codes takes any list-like of categories (as documented).
            "criterion": pd.Categorical.from_codes(criteria, categories=cast("pd.Index[str]", self.criteria)),
            "label": self.values[rows, criteria].astype(np.int64) + self.scale[0],
            "file": self.file[rows], "record": self.record[rows].astype(np.int64),
        })

    @property
    def items(self) -> pd.DataFrame:
        """Every (``turn_id``, ``item_id``) of an accepted row, judged or not, sorted."""
        return pd.DataFrame({"turn_id": self.turn_names[self.unit_turn], "item_id": self.item_names[self.unit_item]})

    def line_of(self, position: int) -> tuple[str, int]:
        """(file, line) of the label at row ``position`` of :attr:`labels`."""
        row = int(self.label_rows()[0][position])
        return self.row_line(row)

    def row_line(self, row: int) -> tuple[str, int]:
        """(file, line) of accepted row ``row``."""
        csv_file = self.files[int(self.file[row])]
        return csv_file.source, csv_file.line_of(int(self.record[row]))

    def __len__(self) -> int:
        return int((self.values >= 0).sum())


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
    kept = [c for c in ("WorkerId", "AssignmentStatus") if c in csv_file.header]
    csv_file.load([HIT_ANSWERS, *kept])
    rows, lines = [], []
    columns = [csv_file.texts(c) for c in (HIT_ANSWERS, *kept)]
    for record, (answers, *fixed) in enumerate(zip(*columns, strict=True)):
        line = csv_file.line_of(record)
        try:
            elements = json.loads(answers) if answers.strip() else []
        except ValueError:
            raise InputError(f"{HIT_ANSWERS} is not JSON; expected the list the castregin HIT submits",
                             source=csv_file.source, line=line) from None
        except RecursionError:
            raise nested_too_deeply(csv_file.source, line, HIT_ANSWERS) from None
        if deeper_than(elements, MAX_JSON_DEPTH):
            raise nested_too_deeply(csv_file.source, line, HIT_ANSWERS)
        if not isinstance(elements, list) or not all(isinstance(e, dict) for e in elements):
            raise InputError(f"{HIT_ANSWERS} must be a JSON list of objects {{turn_id, item_id, <criterion>}}",
                             source=csv_file.source, line=line)
        for element in elements:
            cells = [element.get("turn_id"), element.get("item_id"), *(element.get(c) for c in criteria)]
            rows.append([*fixed, *("" if v is None else str(v) for v in cells)])
            lines.append(line)
    header = [*kept, "Input.turn_id", "Input.item_id", *(f"Answer.{c}" for c in criteria)]
    exploded = CsvFile(csv_file.source, csv_file.data, header, header, len(rows), _starts=lines)
    for k, name in enumerate(header):
        codes, uniques = pd.factorize(pd.Series([row[k] for row in rows], dtype=object))
        exploded.columns[name] = (codes.astype(np.int32), [str(u) for u in uniques])
    return exploded


def _parse_one(csv_file: CsvFile, criteria: Sequence[str], input_format: str, columns: Mapping[str, str],
               label_map: Mapping[str, int], scale: tuple[int, int]):
    fmt = detect_format(csv_file.header) if input_format == "auto" else input_format
    if fmt == "mturk" and HIT_ANSWERS in csv_file.header and "Input.turn_id" not in csv_file.header:
        csv_file = explode_hit_answers(csv_file, criteria)
    roles = default_columns(fmt, criteria)
    roles.update(columns)
    # Rows are checked before columns, as a reader of the whole file would.
    csv_file.load([roles[r] for r in (*ID_ROLES, *criteria) if roles[r] in csv_file.header], "a judgments CSV")
    hint = "; name the column with --column ROLE=NAME"
    if fmt == "long" and input_format == "auto":
        hint += " (or --input-format mturk)"
    _require(csv_file, roles, ["worker_id", "turn_id", "item_id", *criteria], hint)
    if "status" in columns:
        _require(csv_file, roles, ["status"], hint)
    rows = np.arange(csv_file.records)
    if roles["status"] in csv_file.header:
        # MTurk writes "Rejected"; other exports vary in case and spacing.
        codes, uniques = csv_file.codes(roles["status"])
        rejected_codes = [k for k, u in enumerate(uniques) if u.strip().lower() == "rejected"]
        rows = rows[~np.isin(codes, rejected_codes)]
    selected = len(rows) < csv_file.records

    def column(role: str) -> tuple[np.ndarray, list[str]]:
        codes, uniques = csv_file.codes(roles[role])
        return (codes[rows] if selected else codes), uniques

    ids = {role: factorize_ids(csv_file, rows, *column(role), role, roles[role])
           for role in ("worker_id", "turn_id", "item_id")}
    values = np.empty((len(rows), len(criteria)), dtype=np.int16)
    for index, criterion in enumerate(criteria):
        values[:, index] = _labels(csv_file, rows, *column(criterion), criterion, roles[criterion], label_map, scale)
    part = {"ids": ids, "values": values, "record": rows.astype(np.int32)}
    return part, csv_file.records - len(rows), csv_file


def _units(turn: np.ndarray, item: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit of each row, turn of each unit, item of each unit): units are the distinct (turn, item),
    sorted by turn then item."""
    # Item ids usually belong to one turn each: then the items are the units, found without hashing rows.
    turn_of_item = np.zeros(n_items, dtype=np.int32)
    turn_of_item[item] = turn
    if len(item) and (turn_of_item[item] == turn).all():
        items = np.flatnonzero(np.bincount(item, minlength=n_items))
        order = items[np.lexsort((items, turn_of_item[items]))]
        rank = np.zeros(n_items, dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        return rank[item], turn_of_item[order], order.astype(np.int32)
    # Else a unit is a (turn, item) as one integer; hashing, then sorting the distinct ones, beats sorting rows.
    pair = turn.astype(np.int64)
    pair *= max(n_items, 1)
    pair += item
    unit, units = pd.factorize(pair, sort=True)
    return (unit.astype(np.int32), (units // max(n_items, 1)).astype(np.int32),
            (units % max(n_items, 1)).astype(np.int32))


def _vocabulary(parts: list[dict], role: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """(sorted ids over all files, each file's row codes into them)."""
    lists = [p["ids"][role][1] for p in parts]
    distinct = lists[0] if len(lists) == 1 else list(dict.fromkeys(name for ids in lists for name in ids))
    order = sorted(range(len(distinct)), key=distinct.__getitem__)
    rank = np.empty(len(distinct), dtype=np.int32)
    rank[order] = np.arange(len(distinct), dtype=np.int32)
    if len(lists) == 1:
        tables = [rank]
    else:
        index = dict(zip(distinct, rank.tolist(), strict=True))
        tables = [np.asarray([index[name] for name in ids], dtype=np.int32) for ids in lists]
    names = np.asarray([distinct[k] for k in order] if order else [], dtype=object)
    return names, [table[p["ids"][role][0]] for table, p in zip(tables, parts, strict=True)]


@without_cyclic_gc
def parse_judgments(sources: Sequence[tuple[bytes, str]], criteria: Sequence[str], *,
                    input_format: str = "auto", columns: Mapping[str, str] | None = None,
                    label_map: Mapping[str, int] | None = None,
                    scale: tuple[int, int] = DEFAULT_SCALE) -> Judgments:
    """:func:`read_judgments` on ``(bytes, name for messages)`` pairs."""
    criteria = list(criteria)
    if not criteria:
        raise InputError("at least one criterion is needed", argument="criteria")
    distinct_criteria(criteria)
    if input_format not in INPUT_FORMATS:
        raise InputError(f"unknown input format {input_format!r}; expected one of {', '.join(INPUT_FORMATS)}",
                         argument="input_format")
    columns, label_map = dict(columns or {}), dict(label_map or {})
    files, parts, rejected = [], [], 0
    for data, source in sources:
        # The file as its rows were read: per-topic HIT answers come back one row per item.
        part, file_rejected, csv_file = _parse_one(open_csv(data, source, "a judgments CSV"), criteria,
                                                   input_format, columns, label_map, scale)
        files.append(csv_file)
        parts.append(part)
        rejected += file_rejected
    if not parts:
        raise InputError("no judgment files given", argument="paths")
    (worker_names, workers), (turn_names, turns), (item_names, items) = (
        _vocabulary(parts, role) for role in ("worker_id", "turn_id", "item_id"))
    unit, unit_turn, unit_item = _units(np.concatenate(turns), np.concatenate(items), len(item_names))
    judgments = Judgments(
        criteria, scale, files, rejected, worker=np.concatenate(workers), unit=unit,
        values=np.concatenate([p["values"] for p in parts]),
        file=np.concatenate([np.full(len(p["record"]), k, dtype=np.int32) for k, p in enumerate(parts)]),
        record=np.concatenate([p["record"] for p in parts]), worker_names=worker_names, turn_names=turn_names,
        item_names=item_names, unit_turn=unit_turn, unit_item=unit_item)
    _check_duplicates(judgments)
    return judgments


def _check_duplicates(judgments: Judgments) -> None:
    """A worker labelling the same (turn, item, criterion) twice is refused: usually a file given twice.

    Only rows of a (worker, unit) seen twice can hold such a label; among their labels, the first
    that repeats an earlier one in the order of :attr:`Judgments.labels` is reported.
    """
    labelled = labelled_rows(judgments.values)
    labelled = np.arange(len(labelled)) if labelled.all() else np.flatnonzero(labelled)
    n_units = len(judgments.unit_turn)
    pair = judgments.worker[labelled].astype(np.int64)
    pair *= n_units
    pair += judgments.unit[labelled]
    # Sorting finds whether a pair repeats (most files: none); 32-bit keys sort twice as fast.
    keys = np.sort(pair.astype(np.uint32) if len(judgments.worker_names) * n_units < 2**32 else pair)
    repeated = keys[1:][keys[1:] == keys[:-1]]
    if not len(repeated):
        return
    twice = labelled[np.isin(pair, repeated)]
    judged = judgments.values[twice] >= 0
    rows, criteria = np.nonzero(judged)
    rows = twice[rows]
    order = np.lexsort((rows, criteria, judgments.file[rows]))
    rows, criteria = rows[order], criteria[order]
    pair_code = pd.factorize(judgments.worker[rows].astype(np.int64) * n_units + judgments.unit[rows])[0]
    key = pair_code.astype(np.int64) * len(judgments.criteria) + criteria
    duplicated = pd.Series(key).duplicated().to_numpy()
    if not duplicated.any():
        return
    second = int(np.flatnonzero(duplicated)[0])
    first = int(np.flatnonzero(key == key[second])[0])
    row, unit = int(rows[second]), int(judgments.unit[rows[second]])
    first_source, first_line = judgments.row_line(int(rows[first]))
    source, line = judgments.row_line(row)
    raise InputError(
        f"worker {judgments.worker_names[judgments.worker[row]]} labels {judgments.criteria[criteria[second]]} of turn "
        f"{judgments.turn_names[judgments.unit_turn[unit]]} item {judgments.item_names[judgments.unit_item[unit]]}"
        f" a second time (first at {first_source}:{first_line}); keep one of the rows", source=source, line=line,
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
    csv_file = read_csv_text(data, source, "a gold CSV (turn_id,item_id,criterion,min_label,max_label)",
                             GOLD_COLUMNS)
    missing = [c for c in GOLD_COLUMNS if c not in csv_file.header]
    if missing:
        raise InputError(
            f"missing column {missing[0]!r}; a gold CSV has the columns {','.join(GOLD_COLUMNS)}",
            source=source, line=1,
        )
    rows = np.arange(csv_file.records)
    gold = pd.DataFrame({c: csv_file.texts(c).str.strip() for c in GOLD_COLUMNS})
    for column in ("turn_id", "item_id", "criterion"):
        factorize_ids(csv_file, rows, *csv_file.codes(column), column, column)
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
