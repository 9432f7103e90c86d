"""Fast columnar readers of TREC runs and qrels: numpy arrays instead of dicts of dicts.

Millions of run lines parsed into Python strings and floats cost seconds and gigabytes; here
pyarrow's multithreaded CSV parser reads the common shape of TREC files (ASCII, one separator
kind: tabs or single spaces) straight into arrays, and turn and item ids become integer codes.

The line-by-line reader of :mod:`castregin.formats.trec` stays the reference: whenever the fast
path meets anything it cannot vouch for (other whitespace, non-ASCII bytes, a column count the
parser rejects, a non-finite number, a duplicate pair, pyarrow missing), the same bytes go
through that reader, which either raises its usual :class:`~castregin.errors.InputError` naming
the file and line, or reads the file, whose dicts are then turned into columns. Both readers
therefore accept the same files with the same values and messages.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from ..data import Qrels, Run
from ..errors import InputError
from . import trec
from .common import display_name, read_bytes, stem

# Bytes that Python's str.split()/splitlines() treat as separators but a CSV parser keeps inside
# a field; a file holding any of them is left to the line-by-line reader.
_OTHER_SEPARATORS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_BLOCK_SIZE = 1 << 24

_arrow_modules: tuple | None = None


def arrow():
    """``(pyarrow, pyarrow.compute, pyarrow.csv)``, or None when pyarrow is not installed.

    Imported on first use: ``castregin --help`` should not pay for it.
    """
    global _arrow_modules
    if _arrow_modules is None:
        try:
            import pyarrow
            import pyarrow.compute
            import pyarrow.csv
            _arrow_modules = (pyarrow, pyarrow.compute, pyarrow.csv)
        except ImportError:  # pragma: no cover - pyarrow is a dependency; this keeps old installs working
            _arrow_modules = ()
    return _arrow_modules or None


@dataclass
class ColumnarRun:
    """A TREC run as arrays, one entry per line: ``turns[turn_codes[i]]``, ``items[item_codes[i]]``.

    ``turns`` holds the distinct turn ids (an object array of str; their order carries no meaning);
    ``items`` the distinct item ids (a pyarrow string array, or an object array without pyarrow);
    ``scores`` are the scores as read (float64). The rank column is validated, then dropped,
    since trec_eval ignores it. When read with ``known_items``, ``items`` starts with exactly
    those strings (``known_items`` is kept), so a qrels' items need no second lookup.
    """

    tag: str
    source: str | None
    turns: np.ndarray
    turn_codes: np.ndarray
    items: Any
    item_codes: np.ndarray
    scores: np.ndarray
    known_items: Any = None

    def __len__(self) -> int:
        return len(self.scores)


@dataclass
class ColumnarQrels:
    """TREC qrels as arrays (see :class:`ColumnarRun`); ``labels`` are int64."""

    name: str
    source: str | None
    turns: np.ndarray
    turn_codes: np.ndarray
    items: Any
    item_codes: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)

    def subset(self, turns: Iterable[str]) -> ColumnarQrels:
        """The qrels of the given turns only (like :meth:`castregin.data.Qrels.subset`)."""
        keep_turn = np.isin(self.turns, np.array(list(turns), dtype=object))
        keep = keep_turn[self.turn_codes]
        new_code = np.cumsum(keep_turn) - 1
        return ColumnarQrels(self.name, self.source, self.turns[keep_turn],
                             new_code[self.turn_codes[keep]].astype(np.int32), self.items,
                             self.item_codes[keep], self.labels[keep])


# ---------------------------------------------------------------------------------------------
# String columns: the engine needs two operations on item ids, with or without pyarrow.


def strings(values: list[str]):
    """Distinct ids as the column type the readers produce (pyarrow strings when available)."""
    modules = arrow()
    if modules:
        return modules[0].array(values, type=modules[0].string())
    return np.array(values, dtype=object)


def lookup(values, value_set) -> np.ndarray:
    """For each string of ``values``, its index in ``value_set`` (distinct strings), -1 when absent."""
    modules = arrow()
    if modules and not isinstance(values, np.ndarray):
        pc = modules[1]
        found = pc.index_in(values, value_set=value_set)
        return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    position = {value: i for i, value in enumerate(_as_list(value_set))}
    return np.fromiter((position.get(v, -1) for v in _as_list(values)), dtype=np.int64, count=len(values))


def byte_order_ranks(values, codes: np.ndarray | None = None) -> np.ndarray:
    """Rank of each string ``values[codes]`` in byte order (strcmp), as int64.

    With ``codes=None`` the ranks of all of ``values``. UTF-8 byte order equals code point order,
    so Python's str ordering gives the same ranks as pyarrow's binary sort.
    """
    subset = values if codes is None else _take(values, codes)
    modules = arrow()
    if modules and not isinstance(subset, np.ndarray):
        order = modules[1].sort_indices(subset).to_numpy()
    else:
        as_list = _as_list(subset)
        order = np.array(sorted(range(len(as_list)), key=as_list.__getitem__), dtype=np.int64)
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return ranks


def _take(values, codes: np.ndarray):
    if isinstance(values, np.ndarray):
        return values[codes]
    return values.take(codes)


def _as_list(values) -> list:
    return values.tolist() if isinstance(values, np.ndarray) else values.to_pylist()


def _as_objects(values) -> np.ndarray:
    return values if isinstance(values, np.ndarray) else np.array(values.to_pylist(), dtype=object)


# ---------------------------------------------------------------------------------------------
# From the dict-of-dicts data model.


def _encode(keys: list[str]) -> tuple[list[str], np.ndarray]:
    codes: dict[str, int] = {}
    array = np.fromiter((codes.setdefault(k, len(codes)) for k in keys), dtype=np.int32, count=len(keys))
    return list(codes), array


def run_from_dict(run: Run) -> ColumnarRun:
    """A :class:`~castregin.data.Run` as columns (turns and items in the run's order)."""
    turns = list(run.scores)
    counts = np.fromiter((len(run.scores[t]) for t in turns), dtype=np.int64, count=len(turns))
    total = int(counts.sum())
    items, item_codes = _encode([item for t in turns for item in run.scores[t]])
    scores = np.fromiter((s for t in turns for s in run.scores[t].values()), dtype=np.float64, count=total)
    return ColumnarRun(run.tag, run.source, np.array(turns, dtype=object),
                       np.repeat(np.arange(len(turns), dtype=np.int32), counts), strings(items), item_codes, scores)


def qrels_from_dict(qrels: Qrels) -> ColumnarQrels:
    """A :class:`~castregin.data.Qrels` as columns."""
    turns = list(qrels.labels)
    counts = np.fromiter((len(qrels.labels[t]) for t in turns), dtype=np.int64, count=len(turns))
    total = int(counts.sum())
    items, item_codes = _encode([item for t in turns for item in qrels.labels[t]])
    try:
        labels = np.fromiter((v for t in turns for v in qrels.labels[t].values()), dtype=np.int64, count=total)
    except OverflowError:
        raise InputError("a label does not fit in 64 bits", source=qrels.source) from None
    return ColumnarQrels(qrels.name, qrels.source, np.array(turns, dtype=object),
                         np.repeat(np.arange(len(turns), dtype=np.int32), counts), strings(items), item_codes, labels)


# ---------------------------------------------------------------------------------------------
# The fast path.


class _Shape:
    """What a scan of the bytes found: whether the fast parser can read them, with which separator."""

    def __init__(self):
        self.ok = True
        self.tab = self.space = False

    def scan(self, chunk: bytes) -> None:
        if not self.ok:
            return
        if not chunk.isascii() or any(byte in chunk for byte in _OTHER_SEPARATORS):
            self.ok = False
            return
        self.tab = self.tab or b"\t" in chunk
        self.space = self.space or b" " in chunk


def _scan(path: str | os.PathLike) -> tuple[_Shape, bytes | None]:
    """Scan a file in blocks (no copy of it in memory); standard input is read whole and returned."""
    shape = _Shape()
    if str(path) == "-":
        data = read_bytes(path)
        shape.scan(data)
        return shape, data
    try:
        with open(path, "rb") as handle:
            while shape.ok:
                chunk = handle.read(_BLOCK_SIZE)
                if not chunk:
                    break
                shape.scan(chunk)
    except OSError:  # a missing file and the like: the line reader reports it
        shape.ok = False
    return shape, None


def _parse_table(path, data: bytes | None, shape: _Shape, names: list[str], types: dict):
    """The file as a pyarrow table, or None when the fast path cannot vouch for it."""
    modules = arrow()
    if not modules or not shape.ok or (shape.tab and shape.space):
        return None
    pa, _, pa_csv = modules
    source = pa.py_buffer(data) if data is not None else str(path)
    try:
        return pa_csv.read_csv(
            source,
            read_options=pa_csv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE),
            parse_options=pa_csv.ParseOptions(delimiter="\t" if shape.tab else " ", quote_char=False,
                                               double_quote=False, escape_char=False,
                                               newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pa_csv.ConvertOptions(column_types=types, include_columns=list(types),
                                                  null_values=[], true_values=[], false_values=[],
                                                  strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError):
        return None


def _encoded(column):
    """(distinct values, int32 codes) of a string or dictionary column."""
    _, pc, _ = arrow()
    if not str(column.type).startswith("dictionary"):
        column = pc.dictionary_encode(column)
    combined = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return combined.dictionary, combined.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)


def _release(pa) -> None:
    # pyarrow's allocator keeps freed pages for reuse; the parsed text columns are gone for good
    # now, and numpy (another allocator) needs the memory next, so hand the pages back.
    pa.default_memory_pool().release_unused()


def _all_finite(column) -> bool:
    _, pc, _ = arrow()
    return bool(pc.all(pc.is_finite(column)).as_py())


def _no_empty_field(table, names) -> bool:
    # An empty field (two separators in a row, or one at either end of a line) reaches the
    # parser as an empty string where the line reader sees one column fewer.
    _, pc, _ = arrow()
    return all(pc.min(pc.binary_length(table.column(name))).as_py() > 0 for name in names)


def has_duplicates(turn_codes: np.ndarray, item_codes: np.ndarray, n_items: int) -> bool:
    """Whether a (turn, item) pair occurs twice, in linear time.

    Per batch of turns, each pair writes its row number into a table indexed by the pair; a
    pair seen twice finds the later row there instead of its own. Batches keep the table small.
    """
    if len(turn_codes) < 2:
        return False
    if np.any(turn_codes[1:] < turn_codes[:-1]):
        order = np.argsort(turn_codes, kind="stable")
        turn_codes, item_codes = turn_codes[order], item_codes[order]
    n_items = max(int(n_items), 1)
    # A table of about 2**23 int32 (32 MB): large enough for few batches, small enough for caches.
    per_batch = max(1, (1 << 23) // n_items)
    n_turns = int(turn_codes[-1]) + 1
    bounds = np.searchsorted(turn_codes, np.arange(0, n_turns + per_batch, per_batch, dtype=turn_codes.dtype))
    table = np.empty(min(per_batch, n_turns) * n_items, dtype=np.int32)
    for batch, (begin, end) in enumerate(pairwise(bounds)):
        if end - begin < 2:
            continue
        local = (turn_codes[begin:end].astype(np.int64) - batch * per_batch) * n_items + item_codes[begin:end]
        rows = np.arange(end - begin, dtype=np.int32)
        table[local] = rows
        if np.any(table[local] != rows):
            return True
    return False


def _fast_run(path, source: str, known_items=None) -> tuple[ColumnarRun | None, bytes | None]:
    modules = arrow()
    if not modules:
        return None, None
    pa = modules[0]
    shape, data = _scan(path)
    table = _parse_table(path, data, shape, ["turn", "q0", "item", "rank", "score", "tag"],
                         {"turn": pa.string(), "q0": pa.string(), "item": pa.string(), "rank": pa.float64(),
                          "score": pa.float64(), "tag": pa.string()})
    if (table is None or table.num_rows == 0 or not _no_empty_field(table, ["turn", "q0", "item", "tag"])
            or not _all_finite(table.column("rank"))):
        return None, data
    scores = table.column("score").to_numpy()
    if not np.isfinite(scores).all():
        return None, data
    tag = table.column("tag")[0].as_py()
    turns, turn_codes = _encoded(table.column("turn"))
    item_column = table.column("item")
    if known_items is not None:
        # Hashing the run's items once, after the known ones, numbers the known ones 0..n-1:
        # cheaper than encoding, then looking the distinct items up in the qrels.
        item_column = pa.chunked_array([known_items, *item_column.chunks], type=pa.string())
    items, item_codes = _encoded(item_column)
    if known_items is not None:
        item_codes = item_codes[len(known_items):]
    del table, item_column
    _release(pa)
    if has_duplicates(turn_codes, item_codes, len(items)):
        return None, data
    return ColumnarRun(tag, source, _as_objects(turns), turn_codes, items, item_codes, scores, known_items), data


def _fast_qrels(path, source: str, name: str) -> tuple[ColumnarQrels | None, bytes | None]:
    modules = arrow()
    if not modules:
        return None, None
    pa = modules[0]
    shape, data = _scan(path)
    table = _parse_table(path, data, shape, ["turn", "iteration", "item", "label"],
                         {"turn": pa.string(), "iteration": pa.string(), "item": pa.string(),
                          "label": pa.dictionary(pa.int32(), pa.string())})
    if table is None or table.num_rows == 0 or not _no_empty_field(table, ["turn", "iteration", "item"]):
        return None, data
    (turns, turn_codes), (items, item_codes), (label_texts, label_codes) = (
        _encoded(table.column(c)) for c in ("turn", "item", "label"))
    del table
    # Few distinct labels: each is checked with Python's int() as the line reader does (pyarrow
    # alone would take "0x10").
    values = []
    for label in label_texts.to_pylist():
        try:
            if "_" in label:
                return None, data
            values.append(int(label))
        except ValueError:
            return None, data
    if any(v < -(1 << 63) or v >= (1 << 63) for v in values):
        return None, data
    labels = np.array(values, dtype=np.int64)[label_codes]
    if has_duplicates(turn_codes, item_codes, len(items)):
        return None, data
    return ColumnarQrels(name, source, _as_objects(turns), turn_codes, items, item_codes, labels), data


def read_run(path: str | os.PathLike, known_items=None) -> ColumnarRun:
    """Read a TREC run into columns; same rules and errors as :func:`castregin.formats.read_run`.

    ``known_items`` (distinct strings, e.g. :func:`known_items` of the qrels) are numbered first.
    """
    source = display_name(path)
    fast, data = _fast_run(path, source, known_items)
    if fast is not None:
        return fast
    return run_from_dict(trec.parse_run(data if data is not None else read_bytes(path), source))


def known_items(qrels: list[ColumnarQrels]):
    """The distinct items of several qrels, to read runs with (None without pyarrow)."""
    modules = arrow()
    if not modules or not qrels or any(isinstance(q.items, np.ndarray) for q in qrels):
        return None
    pa, pc, _ = modules
    if len(qrels) == 1:
        return qrels[0].items
    return pc.dictionary_encode(pa.chunked_array([q.items for q in qrels], type=pa.string())).combine_chunks().dictionary


def read_qrels(path: str | os.PathLike, name: str | None = None) -> ColumnarQrels:
    """Read TREC qrels into columns; same rules and errors as :func:`castregin.formats.read_qrels`."""
    source = display_name(path)
    name = name or stem(path)
    fast, data = _fast_qrels(path, source, name)
    if fast is not None:
        return fast
    return qrels_from_dict(trec.parse_qrels(data if data is not None else read_bytes(path), source, name))
