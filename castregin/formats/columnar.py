"""Fast columnar readers of TREC runs and qrels: numpy arrays instead of dicts of dicts.

Millions of run lines parsed into Python strings and floats cost seconds and gigabytes; here
pyarrow's CSV parser reads the common shape of TREC files (ASCII, one separator kind: tabs or
single spaces) straight into arrays, and turn and item ids become integer codes.

The line-by-line reader of :mod:`castregin.formats.trec` stays the reference: whenever the fast
path meets anything it cannot vouch for (other whitespace, non-ASCII bytes, a column count the
parser rejects, a non-finite number, a duplicate pair), the same bytes go
through that reader, which either raises its usual :class:`~castregin.errors.InputError` naming
the file and line, or reads the file, whose dicts are then turned into columns. Both readers
therefore accept the same files with the same values and messages.

Item ids are numbered batch by batch (a batch: whole turns, about :data:`BATCH_LINES` lines):
hashing a million distinct ids into one table costs cache misses on every line, while a table
per batch stays in the processor's cache. Numbers are therefore only comparable within a batch,
which is all that trec_eval's per-turn semantics needs. pyarrow's ``to_numpy`` imports pandas (a
quarter of a second), so primitive columns are viewed through their buffers instead.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from ..arrays import THREADS, arrow, in_threads, strings, to_numpy
from ..data import Qrels, Run
from ..errors import InputError
from . import trec
from .common import display_name, open_input, read_bytes, stem

# Bytes that Python's str.split()/splitlines() treat as separators but a CSV parser keeps inside
# a field; a file holding any of them is left to the line-by-line reader.
_OTHER_SEPARATORS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
#: Bytes per block of pyarrow's CSV parser (the unit of its threads).
_BLOCK_SIZE = 1 << 20
#: Bytes read at a time by the scan that decides whether the fast path applies: small enough to
#: stay in the processor's cache through its several passes.
_SCAN_SIZE = 1 << 20
#: Lines per batch of whole turns whose item ids are numbered together (see the module docstring).
BATCH_LINES = 1 << 16
#: Entries of the scratch table of :func:`has_duplicates` (int32: 8 MB, reused across batches).
_DUPLICATE_TABLE_SIZE = 1 << 21


@dataclass
class ColumnarRun:
    """A TREC run as arrays, one entry per line, its turns cut into batches.

    ``turns`` holds the distinct turn ids (an object array of str) and ``turn_codes`` each line's
    index into it; codes follow the turns' first appearance, so they never decrease when each
    turn's lines are contiguous, as in any run written turn by turn. The lines of batch ``k`` are
    ``batch_lines[k]:batch_lines[k + 1]`` and hold exactly the turns ``batch_turns[k]`` to
    ``batch_turns[k + 1] - 1``: whole turns, consecutive lines (a run whose turns are not
    contiguous is one batch). ``items`` is a pyarrow chunked array whose chunk ``k`` holds the
    distinct item ids of batch ``k``, and ``items[item_codes[i]]`` is line ``i``'s item, so two
    lines of one turn share a code exactly when they name the same item. ``scores`` are the
    scores as read (float64). The rank column is validated, then dropped, since trec_eval
    ignores it.
    """

    tag: str
    source: str | None
    turns: np.ndarray
    turn_codes: np.ndarray
    items: Any
    item_codes: np.ndarray
    scores: np.ndarray
    batch_lines: np.ndarray
    batch_turns: np.ndarray

    def __len__(self) -> int:
        return len(self.scores)


@dataclass
class ColumnarQrels:
    """TREC qrels as arrays: ``turns[turn_codes[i]]``, ``items[item_codes[i]]``, ``labels[i]`` (int64).

    ``items`` holds the distinct item ids (a pyarrow string array).
    """

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


# ---------------------------------------------------------------------------------------------
# From the dict-of-dicts data model.


def _encode(keys: list[str]) -> tuple[list[str], np.ndarray]:
    codes: dict[str, int] = {}
    array = np.fromiter((codes.setdefault(k, len(codes)) for k in keys), dtype=np.int32, count=len(keys))
    return list(codes), array


def run_from_dict(run: Run) -> ColumnarRun:
    """A :class:`~castregin.data.Run` as columns (turns and items in the run's order, one batch)."""
    pa = arrow()[0]
    turns = list(run.scores)
    counts = np.fromiter((len(run.scores[t]) for t in turns), dtype=np.int64, count=len(turns))
    total = int(counts.sum())
    items, item_codes = _encode([item for t in turns for item in run.scores[t]])
    scores = np.fromiter((s for t in turns for s in run.scores[t].values()), dtype=np.float64, count=total)
    return ColumnarRun(run.tag, run.source, np.array(turns, dtype=object),
                       np.repeat(np.arange(len(turns), dtype=np.int32), counts),
                       pa.chunked_array([strings(items)], type=pa.string()), item_codes, scores,
                       np.array([0, total]), np.array([0, len(turns)]))


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
    """What a scan of the bytes found: whether the fast parser can read them, with which separator.

    ``x`` records whether an ``x`` or ``X`` occurs: pyarrow's integer parser reads ``0x10`` as
    hexadecimal, where Python's ``float`` refuses it.
    """

    def __init__(self):
        self.ok = True
        self.tab = self.space = self.x = False

    def scan(self, chunk: bytes | bytearray) -> None:
        if not self.ok:
            return
        if not chunk.isascii() or any(byte in chunk for byte in _OTHER_SEPARATORS):
            self.ok = False
            return
        self.tab = self.tab or b"\t" in chunk
        self.space = self.space or b" " in chunk
        self.x = self.x or b"x" in chunk or b"X" in chunk


def _scan(path: str | os.PathLike) -> tuple[_Shape, bytes | None]:
    """Scan a file in blocks (no copy of it in memory), for pyarrow to parse it again by its path.

    What cannot be read twice or by path (standard input, a pipe, a compressed file) is read whole,
    decompressed, and returned: the parser then reads those bytes, so the numbers are the same.
    """
    shape = _Shape()
    with open_input(path) as opened:
        if not opened.in_place:
            data = opened.read()
            shape.scan(data)
            return shape, data
        # One buffer, filled again and again: a new megabyte object per read would be new memory
        # (page faults) every time.
        block = bytearray(_SCAN_SIZE)
        while shape.ok:
            size = opened.readinto(block)
            if not size:
                break
            shape.scan(block if size == len(block) else block[:size])
    return shape, None


def _parse_table(path, data: bytes | None, shape: _Shape, names: list[str], types: dict,
                 threads: int = THREADS) -> dict | None:
    """The columns named in ``types`` as pyarrow chunked arrays, or None when the fast path cannot vouch for the file.

    Text columns are parsed as binary and then viewed as strings: the scan found only ASCII, so
    the parser's UTF-8 validation would be wasted work. With ``threads=1`` the parser keeps to
    the calling thread: it spends a third less processor time than spread over the cores, which
    is what counts when other threads parse other files meanwhile.
    """
    if not shape.ok or (shape.tab and shape.space):
        return None
    pa, _, pa_csv = arrow()
    parse_types = {name: pa.binary() if kind == pa.string() else kind for name, kind in types.items()}
    source = None
    try:
        # Not by its path: pyarrow would decompress a name ending in .gz, and the scan found the file plain.
        source = pa.py_buffer(data) if data is not None else pa.input_stream(str(path), compression=None)
        table = pa_csv.read_csv(
            source,
            read_options=pa_csv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE, use_threads=threads > 1),
            parse_options=pa_csv.ParseOptions(delimiter="\t" if shape.tab else " ", quote_char=False,
                                               double_quote=False, escape_char=False,
                                               newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pa_csv.ConvertOptions(column_types=parse_types, include_columns=list(types),
                                                  null_values=[], true_values=[], false_values=[],
                                                  strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError):
        return None
    finally:
        if data is None and source is not None:
            source.close()
    columns = {}
    for name, kind in types.items():
        column = table.column(name)
        if kind == pa.string():
            column = pa.chunked_array([chunk.view(kind) for chunk in column.chunks], type=kind)
        columns[name] = column
    return columns


def _encoded(column):
    """(distinct values, int32 codes) of a string array or chunked array, codes in order of first appearance."""
    pc = arrow()[1]
    encoded = pc.dictionary_encode(column)
    if not hasattr(encoded, "chunks"):
        return encoded.dictionary, to_numpy(encoded.indices, np.int32)
    # One memo table serves all chunks, so each chunk carries the same, final dictionary.
    chunks = encoded.chunks
    if not chunks:
        return pc.unique(column), np.zeros(0, dtype=np.int32)
    codes = [to_numpy(chunk.indices, np.int32) for chunk in chunks]
    return chunks[-1].dictionary, codes[0] if len(codes) == 1 else np.concatenate(codes)


def _release() -> None:
    # pyarrow's allocator keeps freed pages for reuse; the parsed text columns are gone for good
    # now, and numpy (another allocator) needs the memory next, so hand the pages back.
    arrow()[0].default_memory_pool().release_unused()


def _all_finite(column) -> bool:
    pa, pc, _ = arrow()
    if pa.types.is_integer(column.type):
        return True
    return bool(pc.all(pc.is_finite(column)).as_py())


def _no_empty_field(columns: dict, names) -> bool:
    # An empty field (two separators in a row, or one at either end of a line) reaches the
    # parser as an empty string where the line reader sees one column fewer. Chunk by chunk,
    # the lengths stay small enough to be computed in the processor's cache.
    pc = arrow()[1]
    return all(pc.min(pc.binary_length(chunk)).as_py() > 0 for name in names for chunk in columns[name].chunks)


def has_duplicates(turn_codes: np.ndarray, item_codes: np.ndarray, n_items: int,
                   scratch: np.ndarray | None = None) -> bool:
    """Whether a (turn, item) pair occurs twice, in linear time.

    Per batch of turns, each pair writes its row number into a table indexed by the pair; a
    pair seen twice finds the later row there instead of its own. Batches keep the table small;
    ``scratch`` (int32) is used as the table when large enough, saving the allocation.
    """
    if len(turn_codes) < 2:
        return False
    if np.any(turn_codes[1:] < turn_codes[:-1]):
        order = np.argsort(turn_codes, kind="stable")
        turn_codes, item_codes = turn_codes[order], item_codes[order]
    n_items = max(int(n_items), 1)
    first_turn = int(turn_codes[0])
    per_batch = max(1, _DUPLICATE_TABLE_SIZE // n_items)
    n_turns = int(turn_codes[-1]) + 1 - first_turn
    size = min(per_batch, n_turns) * n_items
    table = scratch[:size] if scratch is not None and len(scratch) >= size else np.empty(size, dtype=np.int32)
    bounds = np.searchsorted(turn_codes, np.arange(first_turn, first_turn + n_turns + per_batch, per_batch,
                                                   dtype=np.int64))
    for batch, (begin, end) in enumerate(pairwise(bounds.tolist())):
        if end - begin < 2:
            continue
        local = (turn_codes[begin:end] - (first_turn + batch * per_batch)).astype(np.int64) * n_items
        local += item_codes[begin:end]
        rows = np.arange(end - begin, dtype=np.int32)
        table[local] = rows
        if np.any(table[local] != rows):
            return True
    return False


def _batches(turn_codes: np.ndarray, n_turns: int) -> tuple[np.ndarray, np.ndarray]:
    """``(batch_lines, batch_turns)`` bounds of batches of whole turns, about BATCH_LINES lines each."""
    if n_turns == 0 or np.any(turn_codes[1:] < turn_codes[:-1]):
        return np.array([0, len(turn_codes)]), np.array([0, n_turns])  # turns interleave: one batch
    turn_starts = np.searchsorted(turn_codes, np.arange(n_turns + 1))
    # A batch begins at the first turn that starts in each span of BATCH_LINES lines.
    new_batch = np.flatnonzero(np.diff(turn_starts[:-1] // BATCH_LINES)) + 1
    batch_turns = np.r_[0, new_batch, n_turns]
    return turn_starts[batch_turns], batch_turns


_per_thread = threading.local()


def _scratch_table() -> np.ndarray:
    """This thread's table for :func:`has_duplicates`: allocated once, its memory reused run after run."""
    if not hasattr(_per_thread, "scratch"):
        _per_thread.scratch = np.empty(_DUPLICATE_TABLE_SIZE, dtype=np.int32)
    return _per_thread.scratch


def _encode_items(items, turn_codes: np.ndarray, batch_lines: np.ndarray, threads: int):
    """``(chunked distinct items, item codes)`` numbered batch by batch, or None on a duplicate pair."""
    pa = arrow()[0]
    item_codes = np.empty(len(turn_codes), dtype=np.int32)

    def encode(batches: range):
        dictionaries = []
        scratch = _scratch_table()
        for k in batches:
            begin, end = int(batch_lines[k]), int(batch_lines[k + 1])
            dictionary, item_codes[begin:end] = _encoded(items.slice(begin, end - begin))
            if has_duplicates(turn_codes[begin:end], item_codes[begin:end], len(dictionary), scratch):
                return None
            dictionaries.append(dictionary)
        return dictionaries

    parts = in_threads(encode, len(batch_lines) - 1, threads)
    if any(part is None for part in parts):
        return None
    dictionaries = [dictionary for part in parts for dictionary in part]
    # Codes so far count from each batch's start; make them count from the start of all items.
    offset = 0
    for k, dictionary in enumerate(dictionaries):
        item_codes[batch_lines[k]:batch_lines[k + 1]] += offset
        offset += len(dictionary)
    return pa.chunked_array(dictionaries, type=pa.string()), item_codes


def _fast_run(path, source: str, threads: int = THREADS) -> tuple[ColumnarRun | None, bytes | None]:
    pa = arrow()[0]
    shape, data = _scan(path)
    names = ["turn", "q0", "item", "rank", "score", "tag"]
    types = {"turn": pa.string(), "q0": pa.string(), "item": pa.string(), "rank": pa.float64(),
             "score": pa.float64(), "tag": pa.string()}
    # Ranks are integers in nearly every run, and integers parse faster than floats (and are
    # finite); a run with other ranks is parsed again, its ranks as floats. Without an x in the
    # file, no rank can be hexadecimal, which pyarrow's integer parser would accept.
    columns = None if shape.x else _parse_table(path, data, shape, names, {**types, "rank": pa.int64()}, threads)
    if columns is None:
        columns = _parse_table(path, data, shape, names, types, threads)
    if (columns is None or len(columns["score"]) == 0
            or not _no_empty_field(columns, ["turn", "q0", "item", "tag"]) or not _all_finite(columns["rank"])):
        return None, data
    tag = columns["tag"][0].as_py()
    # Each column is dropped once used, so that its memory serves the next step.
    del columns["q0"], columns["tag"], columns["rank"]
    scores = to_numpy(columns.pop("score"), np.float64)
    if not np.isfinite(scores).all():
        return None, data
    turns, turn_codes = _encoded(columns.pop("turn"))
    items = columns.pop("item")
    batch_lines, batch_turns = _batches(turn_codes, len(turns))
    encoded = _encode_items(items, turn_codes, batch_lines, threads)
    del items
    if threads > 1:
        _release()
    if encoded is None:
        return None, data
    return ColumnarRun(tag, source, np.array(turns.to_pylist(), dtype=object), turn_codes, *encoded, scores,
                       batch_lines, batch_turns), data


def _fast_qrels(path, source: str, name: str) -> tuple[ColumnarQrels | None, bytes | None]:
    pa = arrow()[0]
    shape, data = _scan(path)
    columns = _parse_table(path, data, shape, ["turn", "iteration", "item", "label"],
                           {"turn": pa.string(), "iteration": pa.string(), "item": pa.string(),
                            "label": pa.string()})
    if columns is None or len(columns["turn"]) == 0 or not _no_empty_field(columns, ["turn", "iteration", "item"]):
        return None, data
    (turns, turn_codes), (items, item_codes), (label_texts, label_codes) = (
        _encoded(columns[c]) for c in ("turn", "item", "label"))
    del columns
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
    if any(not trec.LABEL_RANGE[0] <= v <= trec.LABEL_RANGE[1] for v in values):
        return None, data  # the line reader names the line
    labels = np.array(values, dtype=np.int64)[label_codes]
    if has_duplicates(turn_codes, item_codes, len(items)):
        return None, data
    return ColumnarQrels(name, source, np.array(turns.to_pylist(), dtype=object), turn_codes, items, item_codes,
                         labels), data


def read_run(path: str | os.PathLike, threads: int = THREADS) -> ColumnarRun:
    """Read a TREC run into columns; same rules and errors as :func:`castregin.formats.read_run`.

    ``threads`` share the work on the run's batches (pyarrow's parser uses its own pool).
    """
    source = display_name(path)
    fast, data = _fast_run(path, source, threads)
    if fast is not None:
        return fast
    return run_from_dict(trec.parse_run(data if data is not None else read_bytes(path), source))


def read_qrels(path: str | os.PathLike, name: str | None = None) -> ColumnarQrels:
    """Read TREC qrels into columns; same rules and errors as :func:`castregin.formats.read_qrels`."""
    source = display_name(path)
    name = name or stem(path)
    fast, data = _fast_qrels(path, source, name)
    if fast is not None:
        return fast
    return qrels_from_dict(trec.parse_qrels(data if data is not None else read_bytes(path), source, name))
