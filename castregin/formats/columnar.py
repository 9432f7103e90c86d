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

Two ways in: :func:`read_run` and :func:`read_qrels` hold a whole file's columns, and
:class:`TurnStream` (:func:`stream_run`) hands a run over in pieces of whole turns, so that
memory does not grow with the run; ``castregin evaluate`` streams, and reads a run whole only
where its turns are not contiguous. The streaming reader checks the parsed columns instead of
scanning the bytes first; both make the same checks.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import queue
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from ..arrays import THREADS, arrow, arrow_indices, in_threads, read_csv_bytes, strings, to_numpy
from ..data import Qrels, Run
from ..errors import InputError
from . import trec
from .common import Input, display_name, open_input, plain_number_text, read_bytes, stem

# Bytes that Python's str.split()/splitlines() treat as separators but a CSV parser keeps inside
# a field; a file holding any of them is left to the line-by-line reader. So is one holding a NUL byte,
# which the line reader refuses (no trec_eval id holds one), naming its line.
_OTHER_SEPARATORS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_LEFT_TO_THE_LINE_READER = (*_OTHER_SEPARATORS, b"\x00")
#: Bytes per block of pyarrow's CSV parser (the unit of its threads).
_BLOCK_SIZE = 1 << 20
#: Bytes read at a time by the scan that decides whether the fast path applies: small enough to
#: stay in the processor's cache through its several passes.
_SCAN_SIZE = 1 << 20
#: Lines per batch of whole turns whose item ids are numbered together (see the module docstring).
BATCH_LINES = 1 << 16
#: Entries of the scratch table of :func:`has_duplicates` (int32: 2 MB, reused across batches): larger
#: tables save few passes and cost memory in every thread that checks.
_DUPLICATE_TABLE_SIZE = 1 << 19
#: Lines per batch of :func:`has_duplicates` below which hashing the pairs is faster than the table.
_LINES_PER_TABLE_PASS = 300


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
    ignores it. ``numbered_first``: where the ids of another list were numbered with each
    batch's, first (see :class:`TurnStream`), ``(that list's owner, [their codes per batch])``.
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
    numbered_first: tuple | None = None

    def __len__(self) -> int:
        return len(self.scores)


@dataclass
class ColumnarQrels:
    """TREC qrels as arrays: ``turns[turn_codes[i]]``, ``items[item_codes[i]]``, ``labels[i]``.

    ``items`` is a pyarrow string array (or chunked array) of the distinct item ids. ``turns``
    holds every turn, even one whose lines were left out (``positive_only``). The streaming reader
    keeps a compact form instead: the lines in turn order, turn ``t``'s being
    ``turn_starts[t]:turn_starts[t + 1]``, ``items`` each line's item (a string array) and
    ``turn_codes`` and ``item_codes`` None; labels in the smallest integer type that holds them.
    """

    name: str
    source: str | None
    turns: np.ndarray
    turn_codes: np.ndarray | None
    items: Any
    item_codes: np.ndarray | None
    labels: np.ndarray
    #: The lines labelled 0 or less were left out (every turn is there all the same).
    positive_only: bool = False
    #: The compact form's turn bounds (see above), else None.
    turn_starts: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.labels)

    def subset(self, turns: Iterable[str]) -> ColumnarQrels:
        """The qrels of the given turns only (like :meth:`castregin.data.Qrels.subset`)."""
        keep_turn = np.isin(self.turns, np.array(list(turns), dtype=object))
        if self.turn_starts is not None:
            kept = np.flatnonzero(keep_turn)
            begins, ends = self.turn_starts[kept], self.turn_starts[kept + 1]
            lines = np.repeat(begins - np.r_[0, np.cumsum(ends - begins)][:-1], ends - begins) + np.arange(
                int((ends - begins).sum()))
            return ColumnarQrels(self.name, self.source, self.turns[keep_turn], None,
                                 self.items.take(arrow_indices(lines)), None, self.labels[lines], self.positive_only,
                                 np.r_[0, np.cumsum(ends - begins)])
        turn_codes, item_codes = self.turn_codes, self.item_codes
        if turn_codes is None or item_codes is None:
            raise ValueError("qrels with neither line codes nor turn bounds")
        keep = keep_turn[turn_codes]
        new_code = np.cumsum(keep_turn) - 1
        return ColumnarQrels(self.name, self.source, self.turns[keep_turn],
                             new_code[turn_codes[keep]].astype(np.int32), self.items,
                             item_codes[keep], self.labels[keep], self.positive_only)


class _Growing:
    """A numpy array appended to in place, for columns of unknown length read piece by piece.

    The values live in an anonymous private memory map that grows by ``mremap`` (``mmap.resize``):
    no copy, and pages of the spare capacity are not touched until written, so memory holds the
    values appended and nothing more (``ndarray.resize`` would zero-fill the new capacity, and
    concatenating pieces would hold everything twice). Where a map cannot be resized (not Linux),
    a numpy array grows instead.
    """

    def __init__(self, dtype, capacity: int = 1 << 12):
        self._start(dtype, capacity)

    def _start(self, dtype, capacity: int) -> None:
        self.dtype = np.dtype(dtype)
        self.size = 0
        self._map: mmap.mmap | None = mmap.mmap(-1, capacity * self.dtype.itemsize,
                                                 flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self._array: np.ndarray | None = None

    def _numpy(self) -> np.ndarray:
        """The array holding the values once the map could not grow (there is always one or the other)."""
        if self._array is None:
            raise ValueError("neither a memory map nor an array holds the values")
        return self._array

    @property
    def capacity(self) -> int:
        return len(self._map) // self.dtype.itemsize if self._map is not None else len(self._numpy())

    def append(self, values: np.ndarray) -> None:
        end = self.size + len(values)
        if end > self.capacity:
            self._grow(max(end, 2 * self.capacity))
        if self._map is not None:
            np.frombuffer(self._map, self.dtype, len(values), self.size * self.dtype.itemsize)[:] = values
        else:
            self._numpy()[self.size:end] = values
        self.size = end

    def _grow(self, capacity: int) -> None:
        if self._map is not None:
            try:
                self._map.resize(capacity * self.dtype.itemsize)
                return
            except (OSError, SystemError, ValueError):  # no mremap here
                self._array = np.frombuffer(self._map, self.dtype, self.size).copy()
                self._map.close()
                self._map = None
        self._numpy().resize(capacity, refcheck=False)

    def widen(self, dtype) -> None:
        """Hold values of ``dtype`` from now on (the ones held are converted)."""
        held = self.done()
        self._start(dtype, max(len(held), 1))
        self.append(held)

    def done(self) -> np.ndarray:
        """The values appended, the spare capacity given back."""
        if self.size == 0:
            return np.zeros(0, dtype=self.dtype)
        if self._map is not None:
            with contextlib.suppress(OSError, SystemError, ValueError):
                self._map.resize(self.size * self.dtype.itemsize)
            return np.frombuffer(self._map, self.dtype, self.size)
        array = self._numpy()
        array.resize(self.size, refcheck=False)
        return array


class _GrowingStrings:
    """Strings appended array by array, held as the buffers of one pyarrow array.

    While every string has the same length (ids of one width, as zero-padded ids are), no offsets
    are kept and the result is a ``fixed_size_binary`` array (:func:`as_strings` reads it as
    strings): four bytes a string less, a quarter of a large qrels' memory.
    """

    def __init__(self):
        self.width: int | None = None  # the common length so far; -1 once lengths differ
        self.count = 0
        self.offsets: _Growing | None = None
        self.data = _Growing(np.uint8, 1 << 16)

    def append(self, strings) -> None:
        """Append the values of a pyarrow string (or binary) array."""
        if not len(strings):
            return
        offsets = np.frombuffer(strings.buffers()[1], np.int32, len(strings) + 1, strings.offset * 4)
        begin, end = int(offsets[0]), int(offsets[-1])
        base = self.data.size
        if base + end - begin >= 1 << 31:
            raise NotStreamable("its item ids take more than 2 GB")
        if self.width != -1:
            lengths = np.diff(offsets)
            width = int(lengths[0]) if self.width is None else self.width
            if width and (lengths == width).all():
                self.width = width
            else:  # lengths differ from now on: offsets for the strings held so far, then as they come
                self.offsets = _Growing(np.int32, max(self.count + len(strings), 1 << 12) + 1)
                self.offsets.append(np.arange(self.count + 1, dtype=np.int32) * np.int32(self.width or 0))
                self.width = -1
        self.data.append(np.frombuffer(strings.buffers()[2], np.uint8, end - begin, begin))
        if self.offsets is not None:
            self.offsets.append(offsets[1:] + np.int32(base - begin))
        self.count += len(strings)

    def done(self):
        """The strings as a pyarrow array (sharing the buffers' memory): string, or fixed_size_binary."""
        pa = arrow()[0]
        data = self.data.done()
        if self.offsets is None:
            return pa.Array.from_buffers(pa.binary(self.width or 1), self.count, [None, pa.py_buffer(data)])
        offsets = self.offsets.done()
        return pa.Array.from_buffers(pa.string(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def as_strings(array):
    """A pyarrow string array of ``array``'s values: itself, or, for a ``fixed_size_binary`` array (see
    :class:`_GrowingStrings`), the same bytes with offsets (no copy of the bytes)."""
    pa = arrow()[0]
    if not pa.types.is_fixed_size_binary(array.type):
        return array
    width, count = array.type.byte_width, len(array)
    offsets = np.arange(count + 1, dtype=np.int32) * np.int32(width)
    data = array.buffers()[1].slice(array.offset * width, count * width) if count else pa.py_buffer(b"")
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), data])


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


def run_to_dict(run: ColumnarRun) -> Run:
    """A columnar run as a :class:`~castregin.data.Run` (turns and items in the file's order; the rank column,
    which the columns do not keep, left out): what :func:`castregin.formats.read_run` reads, in less time."""
    pa = arrow()[0]
    names = pa.concat_arrays(_chunks(run.items)).take(arrow_indices(run.item_codes)).to_pylist()
    turns = run.turns.tolist()
    scores: dict[str, dict[str, float]] = {}
    for code, name, score in zip(run.turn_codes.tolist(), names, run.scores.tolist(), strict=True):
        scores.setdefault(turns[code], {})[name] = score
    return Run(run.tag, scores, source=run.source)


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
        if not chunk.isascii() or any(byte in chunk for byte in _LEFT_TO_THE_LINE_READER):
            self.ok = False
            return
        self.tab = self.tab or b"\t" in chunk
        self.space = self.space or b" " in chunk
        self.x = self.x or b"x" in chunk or b"X" in chunk


class _LineShape(_Shape):
    """:class:`_Shape`, and whether a carriage return occurs: the originals' line readers (:func:`split_lines`)
    delete it, where the parser would end a line there."""

    def __init__(self):
        super().__init__()
        self.cr = False

    def scan(self, chunk: bytes | bytearray) -> None:
        super().scan(chunk)
        self.cr = self.cr or b"\r" in chunk


def _scan(path: str | os.PathLike, data: bytes | None = None, shape: _Shape | None = None
          ) -> tuple[_Shape, bytes | None]:
    """Scan a file in blocks (no copy of it in memory), for pyarrow to parse it again by its path.

    What cannot be read twice or by path (standard input, a pipe, a compressed file) is read whole,
    decompressed, and returned: the parser then reads those bytes, so the numbers are the same.
    ``data``: the file's bytes, read already; they are scanned instead. ``shape``: what records the scan.
    """
    shape = _Shape() if shape is None else shape
    if data is not None:
        shape.scan(data)
        return shape, data
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


def _csv_options(names: list[str], types: dict, delimiter: str, block_size: int, threads: bool,
                 empty_lines: bool = True) -> dict:
    """pyarrow's CSV options for TREC text: the columns ``types`` names, no quoting, no missing values (an empty
    line skipped, or with ``empty_lines=False`` an error)."""
    pa_csv = arrow()[2]
    return {
        "read_options": pa_csv.ReadOptions(column_names=names, block_size=block_size, use_threads=threads),
        "parse_options": pa_csv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                             escape_char=False, newlines_in_values=False,
                                             ignore_empty_lines=empty_lines),
        "convert_options": pa_csv.ConvertOptions(column_types=types, include_columns=list(types), null_values=[],
                                                 true_values=[], false_values=[], strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False),
    }


def _parse_table(path, data: bytes | None, shape: _Shape, names: list[str], types: dict,
                 threads: int = THREADS, empty_lines: bool = True) -> dict | None:
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
        options = _csv_options(names, parse_types, "\t" if shape.tab else " ", _BLOCK_SIZE, threads > 1, empty_lines)
        if data is not None:
            table = read_csv_bytes(data, **options)  # returns once pyarrow has let go of the bytes
        else:
            source = pa.input_stream(str(path), compression=None)
            table = pa_csv.read_csv(source, **options)
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


def encode(column):
    """(distinct values, int32 codes) of a string array or chunked array, codes in order of first appearance.

    Hashing is cache-bound: a few tens of nanoseconds a value while the distinct values number tens
    of thousands, several hundred beyond a million (hence the batches of whole turns).
    """
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
    ``scratch`` (int32) is used as the table when large enough, saving the allocation. Where the
    batches would hold few lines each (short turns, many items), the pairs are hashed instead.
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
    if -(-n_turns // per_batch) * _LINES_PER_TABLE_PASS > len(turn_codes):
        # Each pass over the table costs some fifteen microseconds: more than hashing that many pairs.
        pairs = (turn_codes.astype(np.int64) << 32) | item_codes.astype(np.int64)
        return len(arrow()[1].unique(arrow_indices(pairs))) != len(pairs)
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


def _encode_items(items, turn_codes: np.ndarray, batch_lines: np.ndarray, threads: int, first=None):
    """``(chunked distinct items, item codes, first's codes)`` numbered batch by batch, or None on a duplicate pair.

    ``first``: per batch, strings to number before the batch's items (their codes are returned
    per batch), in the same hash pass; None: nothing first.
    """
    pa = arrow()[0]
    item_codes = np.empty(len(turn_codes), dtype=np.int32)

    def encode_batches(batches: range):
        dictionaries, first_codes = [], []
        scratch = _scratch_table()
        for k in batches:
            begin, end = int(batch_lines[k]), int(batch_lines[k + 1])
            lines = items.slice(begin, end - begin)
            if first is None:
                dictionary, item_codes[begin:end] = encode(lines)
            else:
                dictionary, codes = encode(pa.chunked_array([*_chunks(first[k]), *lines.chunks], type=pa.string()))
                first_codes.append(codes[:len(first[k])])
                item_codes[begin:end] = codes[len(first[k]):]
            if has_duplicates(turn_codes[begin:end], item_codes[begin:end], len(dictionary), scratch):
                return None
            dictionaries.append(dictionary)
        return dictionaries, first_codes

    parts = in_threads(encode_batches, len(batch_lines) - 1, threads)
    if any(part is None for part in parts):
        return None
    dictionaries = [dictionary for part, _ in parts for dictionary in part]
    first_codes = [codes for _, part in parts for codes in part] if first is not None else None
    # Codes so far count from each batch's start; make them count from the start of all items.
    offset = 0
    for k, dictionary in enumerate(dictionaries):
        item_codes[batch_lines[k]:batch_lines[k + 1]] += offset
        offset += len(dictionary)
    return pa.chunked_array(dictionaries, type=pa.string()), item_codes, first_codes


def by_batches_of_turns(items, turn_codes: np.ndarray, n_turns: int, visit, threads: int = THREADS) -> list:
    """``visit(begin, end, distinct, codes, twice)`` for each batch of whole turns (lines ``begin:end``, about
    :data:`BATCH_LINES`; one batch where the turns are not contiguous): the batch's items numbered within it
    (``distinct`` a pyarrow array, ``codes`` each line's), ``twice`` whether one of its turns lists an item
    twice. Each batch's ids are hashed in a table that stays in the processor's cache and let go (see the
    module's docstring); the results in the batches' order."""
    batch_lines = _batches(turn_codes, n_turns)[0]

    def run(batches: range) -> list:
        scratch, out = _scratch_table(), []
        for k in batches:
            begin, end = int(batch_lines[k]), int(batch_lines[k + 1])
            distinct, codes = encode(items.slice(begin, end - begin))
            twice = has_duplicates(turn_codes[begin:end], codes, len(distinct), scratch)
            out.append(visit(begin, end, distinct, codes, twice))
        return out

    return [result for part in in_threads(run, len(batch_lines) - 1, threads) for result in part]


def _chunks(strings) -> list:
    return strings.chunks if hasattr(strings, "chunks") else [strings]


def _fast_run(path, source: str, threads: int = THREADS,
              data: bytes | None = None) -> tuple[ColumnarRun | None, bytes | None]:
    pa = arrow()[0]
    shape, data = _scan(path, data)
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
    turns, turn_codes = encode(columns.pop("turn"))
    items = columns.pop("item")
    batch_lines, batch_turns = _batches(turn_codes, len(turns))
    encoded = _encode_items(items, turn_codes, batch_lines, threads)
    del items
    if threads > 1:
        _release()
    if encoded is None:
        return None, data
    distinct_items, item_codes = encoded[0], encoded[1]
    return ColumnarRun(tag, source, np.array(turns.to_pylist(), dtype=object), turn_codes, distinct_items, item_codes,
                       scores, batch_lines, batch_turns), data


def _fast_qrels(path, source: str, name: str,
                data: bytes | None = None) -> tuple[ColumnarQrels | None, bytes | None]:
    pa = arrow()[0]
    shape, data = _scan(path, data)
    columns = _parse_table(path, data, shape, ["turn", "iteration", "item", "label"],
                           {"turn": pa.string(), "iteration": pa.string(), "item": pa.string(),
                            "label": pa.string()})
    if columns is None or len(columns["turn"]) == 0 or not _no_empty_field(columns, ["turn", "iteration", "item"]):
        return None, data
    labels = _label_values(columns["label"])
    if labels is None:
        return None, data  # the line reader names the line
    (turns, turn_codes), (items, item_codes) = (encode(columns[c]) for c in ("turn", "item"))
    del columns
    if has_duplicates(turn_codes, item_codes, len(items)):
        return None, data
    return ColumnarQrels(name, source, np.array(turns.to_pylist(), dtype=object), turn_codes, items, item_codes,
                         labels), data


def split_lines(path: str | os.PathLike, names: list[str], digits: tuple[str, ...] = (),
                decimals: tuple[str, ...] = ()) -> tuple[dict | None, bytes | None]:
    """The fields of a file's lines as columns named ``names`` (a line's fields as ``str.split`` gives them,
    lines cut at ``\n`` only), or None where the fast parser cannot vouch for that: non-ASCII bytes,
    other whitespace than single tabs or single spaces (one kind), a carriage return, an empty line or
    field, another number of fields (the originals' line readers, gdeval.pl's and ndeval.c's, then read
    the bytes). Columns are pyarrow string arrays, except ``digits`` (fields of ASCII digits only, else
    None: uint64 numpy arrays) and ``decimals`` (decimal numbers, ``[+-]?(d+.?d*|.d+)([eE][+-]?d+)?``,
    else None: float64 numpy arrays, every one finite). Also returns the file's bytes when they had to be
    read whole (standard input, a compressed file), for that reader."""
    pa, pc, _ = arrow()
    shape = _LineShape()
    _, data = _scan(path, shape=shape)
    if not shape.ok or shape.cr:
        return None, data
    # Every column as text: pyarrow's parser is faster so than converting as it goes, and the conversions
    # below check what they read.
    columns = _parse_table(path, data, shape, names, dict.fromkeys(names, pa.string()), empty_lines=False)
    if columns is None or len(columns[names[0]]) == 0 or not _no_empty_field(columns, names):
        return None, data
    for name in digits:
        column = columns[name]
        if not pc.all(pc.ascii_is_decimal(column)).as_py() or pc.max(pc.binary_length(column)).as_py() > 19:
            return None, data  # not digits, or too many for 64 bits
        columns[name] = to_numpy(pc.cast(column, pa.uint64()), np.uint64)
    for name in decimals:
        # pyarrow reads exactly those decimal numbers (as Python does, to the same double), and inf, nan.
        try:
            columns[name] = to_numpy(pc.cast(columns[name], pa.float64()), np.float64)
        except pa.ArrowInvalid:
            return None, data
        if not np.isfinite(columns[name]).all():
            return None, data
    return columns, data


def read_run(path: str | os.PathLike, threads: int = THREADS, *, data: bytes | None = None) -> ColumnarRun:
    """Read a TREC run into columns; same rules and errors as :func:`castregin.formats.read_run`.

    ``threads`` share the work on the run's batches (pyarrow's parser uses its own pool). ``data``:
    the file's (decompressed) bytes, when they were read already (standard input cannot be read twice).
    """
    source = display_name(path)
    fast, data = _fast_run(path, source, threads, data)
    if fast is not None:
        return fast
    return run_from_dict(trec.parse_run(data if data is not None else read_bytes(path), source))


def read_qrels(path: str | os.PathLike, name: str | None = None, *, positive_only: bool = False,
               stratified: bool | None = False) -> ColumnarQrels:
    """Read TREC qrels into columns; same rules and errors as :func:`castregin.formats.read_qrels`.

    Qrels written turn by turn are read piece by piece (:class:`TurnStream`): memory holds the
    columns, not the text. ``positive_only``: lines labelled 0 or less may be left out (every
    turn is kept), as all that Judged@k needs of them. ``stratified`` as in
    :func:`castregin.formats.trec.parse_qrels` (stratified qrels are read by the line reader: their
    labels become the columns, their strata are dropped).
    """
    source = display_name(path)
    name = name or stem(path)
    try:
        with TurnStream(path, _QRELS_LAYOUT) as stream:
            return _qrels_of_pieces(stream, name, positive_only)
    except NotStreamable as why:
        data = why.data
    fast, data = _fast_qrels(path, source, name, data)
    if fast is not None:
        return fast
    return qrels_from_dict(trec.parse_qrels(data if data is not None else read_bytes(path), source, name, stratified))


# ---------------------------------------------------------------------------------------------
# Streaming: a file read in pieces of whole turns, in memory that does not grow with it.

#: Bytes per record batch of the streaming reader (a block of pyarrow's parser): as fast as 1 MB
#: blocks, and 60 MB less resident memory (the parser keeps several blocks in flight).
STREAM_BLOCK = 1 << 18
#: Lines per piece of whole turns handed over at a time (about: a piece ends where a turn does).
PIECE_LINES = 1 << 16
#: Record batches checked together (see :meth:`TurnStream._grouped`).
CHECK_BATCHES = 4
#: Pieces parsed ahead of their reader: enough to keep both threads busy, few enough to keep memory flat.
_PIECES_AHEAD = 2
#: Bytes looked at to choose the separator (tab when the file's beginning has one, else space).
_SNIFF_BYTES = 1 << 16
_END = object()


class NotStreamable(Exception):
    """Why the streaming reader leaves a file to the readers that read it whole and vouch for every line.

    ``reason`` completes "FILE: ..."; ``advice`` says how to write the file to be streamed, where
    that is up to its writer. ``data``: the file's (decompressed) bytes where they could not be read
    again (standard input, a pipe).
    """

    def __init__(self, reason: str, advice: str | None = None, data: bytes | None = None):
        super().__init__(reason)
        self.reason = reason
        self.advice = advice
        self.data = data
        #: The text columns' checks (see :class:`_Lines`) of the lines read before this reason came, which the
        #: reader makes first.
        self.unchecked: list[tuple[str, Any]] | None = None


#: Bytes that Python's ``str.split()`` splits at (besides the file's separator) and pyarrow's parser keeps in a field.
_SPLIT_BYTES = (b" ", b"\t", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")


def _same_tokens(column) -> bool:
    """Whether the parser's fields of a binary column are the tokens the line reader's ``str.split()`` finds.

    The parser splits at one separator only and reads any other byte as part of a field, where
    ``str.split()`` (the line reader) also splits at the other separator, at the ASCII controls
    0x0b, 0x0c and 0x1c-0x1f and at Unicode spaces, and refuses bytes that are not UTF-8; an empty
    field is a separator doubled (or one at either end of a line), which ``split()`` would merge,
    shifting the fields after it. So a field must be non-empty, ASCII, and free of those bytes (and of
    NUL, which the line reader refuses with its line).
    The bytes of a column are checked at once, with the byte searches of ``bytes`` (``memchr``):
    a few milliseconds for a file of 200 MB. ``column`` may be a list of arrays (the record batches of
    a group, see :meth:`TurnStream._pieces`), each checked in turn.
    """
    if isinstance(column, list):
        return bool(column) and all(_same_tokens(chunk) for chunk in column)
    if not len(column):
        return False
    offsets = np.frombuffer(column.buffers()[1], np.int32, len(column) + 1, column.offset * 4)
    if (offsets[1:] == offsets[:-1]).any():
        return False
    data = column.buffers()[2][int(offsets[0]):int(offsets[-1])].to_pybytes()
    return data.isascii() and not any(byte in data for byte in _SPLIT_BYTES) and b"\x00" not in data


_DIGITS = b"0123456789-"


def _label_values(column) -> np.ndarray | None:
    """The labels of a column of label texts as int64, or None where the line reader would refuse one.

    Texts of digits and minus signs only are cast by pyarrow, which then reads them as Python's
    ``int()`` does (or refuses them: ``--5``, beyond 64 bits). Otherwise the few distinct texts are
    each read by ``int()`` as the line reader reads them (pyarrow alone would take ``0x10`` and
    refuse ``+5``); one beyond 64 bits is left to the line reader, which names its line.
    """
    pa, pc, _ = arrow()
    if not hasattr(column, "chunks") and len(column):
        offsets = np.frombuffer(column.buffers()[1], np.int32, len(column) + 1, column.offset * 4)
        text = column.buffers()[2][int(offsets[0]):int(offsets[-1])].to_pybytes()
        if not text.translate(None, _DIGITS):
            with contextlib.suppress(pa.ArrowInvalid):
                return to_numpy(pc.cast(column.view(pa.string()), pa.int64()), np.int64)
    texts, codes = encode(column)
    values = []
    for raw in texts.to_pylist():
        text = raw.decode() if isinstance(raw, bytes) else raw
        try:
            if not plain_number_text(text):  # "1_0", "٢": the line reader refuses them, naming the line
                return None
            values.append(int(text))
        except ValueError:
            return None
    if any(not trec.LABEL_RANGE[0] <= v <= trec.LABEL_RANGE[1] for v in values):
        return None
    return np.array(values, dtype=np.int64)[codes]


@dataclass(frozen=True)
class _Layout:
    """How the streaming reader parses and checks one kind of TREC file.

    ``text`` columns are parsed as bytes and must be non-empty printable ASCII, ``numbers`` as
    finite doubles; ``values`` is the column handed over with the items (a run's scores, a qrels'
    labels). ``duplicate`` is the line reader, to word the error of a pair listed twice.
    """

    columns: tuple[str, ...]
    text: tuple[str, ...]
    numbers: tuple[str, ...]
    values: str
    duplicate: Any

    def types(self) -> dict:
        pa = arrow()[0]
        return {name: pa.float64() if name in self.numbers else pa.binary() for name in self.columns}

    def read_here(self) -> set[str]:
        """The columns the parsing thread puts into one array per group of batches (it compares neighbouring
        turns, and hands the values over): the others stay the batches' arrays (the items, which pyarrow
        takes as chunks as they are, and those that are only checked)."""
        return {"turn", self.values}

    def values_of(self, columns: dict) -> np.ndarray:
        if self.values in self.numbers:
            values = to_numpy(columns[self.values], np.float64)
            finite = all(np.isfinite(to_numpy(chunk, np.float64)).all() for name in self.numbers
                         for chunk in _arrays(columns[name]))
            if not finite:
                columns_named = " or ".join(self.numbers)
                raise NotStreamable(f"its {columns_named} column holds a value that is not a finite number")
            return values
        labels = _label_values(columns[self.values])
        if labels is None:
            raise NotStreamable(f"its {self.values} column holds a value that is not a whole number within 64 bits")
        return labels


_RUN_LAYOUT = _Layout(("turn", "q0", "item", "rank", "score", "tag"), ("turn", "q0", "item", "tag"),
                      ("rank", "score"), "score", trec.parse_run)
_QRELS_LAYOUT = _Layout(("turn", "iteration", "item", "label"), ("turn", "iteration", "item", "label"), (), "label",
                        lambda data, source: trec.parse_qrels(data, source, "q"))


class _Lines:
    """Consecutive lines as parsed: item ids, values (scores or labels), and where turns begin (``starts``,
    ``names``). ``unchecked``: the checks of the text columns of the group of record batches these lines
    begin, in the columns' order (``(name, True or False)``, or ``(name, column)`` for one whose fields the
    reader checks, :meth:`TurnStream.parts`); None once checked or when another part of the group carries them."""

    def __init__(self, items, values: np.ndarray, starts: np.ndarray, names: list[str],
                 unchecked: list[tuple[str, Any]] | None = None):
        self.items, self.values, self.starts, self.names = items, values, starts, names
        self.unchecked = unchecked

    def __len__(self) -> int:
        return len(self.values)

    def split(self, at: int) -> tuple[_Lines, _Lines]:
        """The lines before ``at`` and those from ``at`` on (the checks of their batch go with the first)."""
        before = int(np.searchsorted(self.starts, at))
        return (_Lines(self.items.slice(0, at), self.values[:at], self.starts[:before], self.names[:before],
                       self.unchecked),
                _Lines(self.items.slice(at), self.values[at:], self.starts[before:] - at, self.names[before:]))


def _check_tokens(unchecked: list[tuple[str, Any]] | None) -> None:
    """Raise :class:`NotStreamable` where a text column's fields are not the line reader's tokens
    (:func:`_same_tokens`); a column given as True or False was checked already (the turn column, see
    :meth:`TurnStream._checked`)."""
    for name, column in unchecked or ():
        if column is False or (column is not True and not _same_tokens(column)):
            raise NotStreamable(f"its {name} column holds a field that is empty, not ASCII or holds whitespace "
                                "other than the separator")


@dataclass
class Piece:
    """Whole turns of a file, consecutive lines, as :class:`TurnStream` hands them over.

    ``turns[turn_codes[i]]`` is line ``i``'s turn (codes ascending from 0), ``items[item_codes[i]]``
    its item (``items``: a pyarrow chunked array, chunk ``k`` the distinct items of batch ``k``,
    numbered as in :class:`ColumnarRun`), ``values[i]`` its score or label; the lines of batch
    ``k`` are ``batch_lines[k]:batch_lines[k + 1]``, whole turns. ``first_row`` counts the
    non-blank lines of the file before the piece's first. ``numbered_first``: see ColumnarRun.
    """

    turns: list[str]
    turn_codes: np.ndarray
    items: Any
    item_codes: np.ndarray
    values: np.ndarray
    batch_lines: np.ndarray
    batch_turns: np.ndarray
    first_row: int
    numbered_first: tuple | None = None


class TurnStream:
    """A TREC run or qrels read in pieces of whole turns (:class:`Piece`), in memory that does not grow with it.

    A thread of its own parses the file with pyarrow's streaming CSV reader (which releases the
    GIL), a record batch of :data:`STREAM_BLOCK` bytes at a time, while the caller works on the
    pieces already read; the lines of a turn cut by a batch's end are carried over to the next
    piece, so each piece holds whole turns, about :data:`PIECE_LINES` lines. The line reader's
    checks are made on the parsed columns: text fields non-empty printable ASCII (where the
    parser and ``str.split()`` agree), numbers finite, labels read by ``int()``, no (turn, item)
    twice. A turn that comes back after other turns (a file not written turn by turn), or anything
    else the fast path cannot vouch for, raises :class:`NotStreamable` from the iteration: the
    caller then reads the file whole, by the readers that also name the line of any error. A pair
    listed twice is reported here, with its line. ``tag`` is the first line's last column and
    ``turns`` lists every turn once the iteration is over. Use as a context manager: leaving it
    stops the thread.

    ``number_first(turns, batch_turns)``, when given, returns for a piece's turns ``(owner,
    [strings per batch])``: strings numbered with each batch's items, first, in the same hash
    pass (a qrels' items for the batch's turns: the lines that match them are found with no
    second pass); the piece's ``numbered_first`` holds their codes.
    """

    def __init__(self, path: str | os.PathLike, layout: _Layout = _RUN_LAYOUT, number_first=None):
        self.source = display_name(path)
        self.tag: str | None = None
        #: The last line's tag so far (the whole run's once the iteration is over).
        self.last_tag: str | None = None
        self.turns: list[str] = []
        self._path = path
        self._layout = layout
        self._number_first = number_first
        self._queue: queue.Queue = queue.Queue(_PIECES_AHEAD)
        self._stop = threading.Event()
        self._data: bytes | None = None
        self._input: Input | None = None  # what a compressed file is read through
        self._arrow_source, self._delimiter = self._open()  # a missing file is an error here, in the caller
        self._thread = threading.Thread(target=self._produce, name="castregin-parser", daemon=True)
        self._thread.start()

    def _open(self):
        """pyarrow's input and the separator: a plain file by its path, a compressed one decompressed as it
        is read; what cannot be read twice (standard input, a pipe) is read whole, as :func:`_scan` does."""
        pa = arrow()[0]
        path = self._path
        with open_input(path) as opened:
            if not (opened.in_place or (str(path) != "-" and os.path.isfile(path))):
                data = self._data = opened.read()
                return pa.BufferReader(data), _separator(data[:_SNIFF_BYTES])
            head = opened.read(_SNIFF_BYTES)
            if opened.in_place:
                # Not by its name: pyarrow would decompress a name ending in .gz.
                return pa.input_stream(str(path), compression=None), _separator(head)
        whole = self._input = open_input(path)
        return pa.PythonFile(whole.stream, mode="r"), _separator(head)

    def __enter__(self) -> TurnStream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the parsing thread (it ends at its next batch) and release the file."""
        self._stop.set()
        while self._thread.is_alive():
            with contextlib.suppress(queue.Empty):
                self._queue.get(timeout=0.05)
        self._thread.join()

    def __iter__(self):
        for parts, first_row in self.parts():
            yield self._piece(parts, first_row)

    def parts(self):
        """The pieces as parsed and checked, before their items are numbered: ``(parts, first row)``,
        ``parts`` the :class:`_Lines` of consecutive record batches, whole turns together.

        The item column's fields are checked here, in the reader's thread, rather than in the parsing
        thread, which is the longer of the two on large runs; in the file's order, so that the reason a
        file is not streamed is the same whichever thread is ahead (see :meth:`_pieces`).
        """
        while True:
            item = self._queue.get()
            if item is _END:
                return
            try:
                if isinstance(item, NotStreamable):
                    _check_tokens(item.unchecked)  # the lines parsed before the reason came first
                    raise item
                for part in item[0]:
                    _check_tokens(part.unchecked)
                    part.unchecked = None
            except NotStreamable as why:
                why.data = self._data
                raise
            names = [name for part in item[0] for name in part.names]
            self.turns.extend(names)
            yield item

    # --- in the parsing thread ---------------------------------------------------------------

    def _hand_over(self, item) -> bool:
        """Queue ``item`` for the caller; False once the caller has stopped listening."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self) -> None:
        try:
            for piece in self._pieces():
                if not self._hand_over(piece):
                    return
            self._hand_over(_END)
        except NotStreamable as reason:
            self._hand_over(reason)
        # pyarrow refused a line (or the input failed), with whatever error: the line reader says which.
        except Exception as err:  # noqa: BLE001 - handed over (the caller rereads the input), not swallowed
            self._hand_over(NotStreamable(f"pyarrow's parser stopped ({' '.join(str(err).split())[:200]})"))
        finally:
            self._arrow_source.close()
            if self._input is not None:
                self._input.close()

    def _pieces(self):
        """``(lines, first row)`` of pieces of whole turns, about PIECE_LINES lines each, in file order."""
        pa_csv = arrow()[2]
        reader = pa_csv.open_csv(self._arrow_source, **_csv_options(
            list(self._layout.columns), self._layout.types(), self._delimiter, STREAM_BLOCK, False))
        seen: set[str] = set()
        pending: list[_Lines] = []
        count = rows = 0
        last_turn = None
        groups = self._grouped(reader)
        read_here = self._layout.read_here()
        while True:
            unchecked: list[tuple[str, Any]] = []
            try:
                group = next(groups, None)
                if group is None:
                    break
                # One array per column read here; the others (the items, the columns only checked) stay lists of
                # the batches' arrays, never put together.
                columns = {name: _one_array([batch.column(name) for batch in group]) if name in read_here
                           else [batch.column(name) for batch in group] for name in self._layout.columns}
                lines, last_turn = self._checked(columns, last_turn, seen, unchecked)
            except Exception as err:  # noqa: BLE001 - handed over as NotStreamable (see _produce)
                # What stops the stream here comes after the text of the lines read before it, which the
                # reader checks first (the reason would otherwise depend on which thread is ahead).
                why = err if isinstance(err, NotStreamable) else NotStreamable(
                    f"pyarrow's parser stopped ({' '.join(str(err).split())[:200]})")
                why.unchecked = [*(c for part in pending for c in part.unchecked or ()), *unchecked]
                raise why from None
            pending.append(lines)
            count += len(lines)
            # Cut where the batch's last turn begins: that turn may go on in the next batch.
            cut = int(lines.starts[-1]) if len(lines.starts) else None
            if count >= PIECE_LINES and cut is not None and count - len(lines) + cut > 0:
                before, after = lines.split(cut)
                yield [*pending[:-1], before], rows
                rows += count - len(after)
                pending, count = [after], len(after)
        if count:
            yield pending, rows
        elif not rows:
            raise NotStreamable("it has no lines")  # the line reader says that the file is empty

    def _grouped(self, reader):
        """The reader's record batches, :data:`CHECK_BATCHES` at a time (lists of batches, checked together).

        The checks cost a fixed few hundred microseconds a batch beside their work per line: on
        groups of batches they cost about half as much in all, while the parser keeps reading the
        small blocks that hold memory down.
        """
        group: list = []
        while not self._stop.is_set():
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            if batch.num_rows:  # else a block of blank lines
                group.append(batch)
            if len(group) == CHECK_BATCHES:
                yield group
                group = []
        if group and not self._stop.is_set():
            yield group

    def _checked(self, columns: dict, last_turn: bytes | None, seen: set[str],
                 unchecked: list[tuple[str, Any]]) -> tuple[_Lines, bytes]:
        """A group of record batches' lines (``columns``: arrays, or lists of the batches' arrays), checked, and its
        last turn; a turn seen before is NotStreamable. The text columns' checks go into ``unchecked`` (see
        :class:`_Lines`), the item column's left to the reader."""
        pa, pc, _ = arrow()
        turn = columns["turn"]
        size = len(turn)
        # Turns begin where a line's turn differs from the line before's: no hashing of every line's turn.
        differs = pc.not_equal(turn.slice(1), turn.slice(0, size - 1))
        starts = to_numpy(pc.indices_nonzero(differs), np.uint64).astype(np.int64) + 1
        if turn[0].as_py() != last_turn:
            starts = np.r_[0, starts]
        raw_names = turn.take(arrow_indices(starts)).to_pylist()
        # The text columns in order, each checked here (True or False) or, the item column, left to the reader
        # (:meth:`parts`), which holds it anyway: the parsing thread is the longer one on large runs.
        for name in self._layout.text:
            if name == "turn":
                # Each turn field is the same bytes as the first of its run (the previous group's last turn, checked
                # there, or one of these): checking those checks them all.
                joined = b"".join(raw_names)
                unchecked.append((name, all(raw_names) and joined.isascii() and b"\x00" not in joined
                                  and not any(byte in joined for byte in _SPLIT_BYTES)))
            else:
                unchecked.append((name, _arrays(columns[name]) if name == "item" else _same_tokens(columns[name])))
        if any(checked is False for _, checked in unchecked):
            _check_tokens(unchecked)  # the first in order that fails (the item column's, too, if before)
        values = self._layout.values_of(columns)
        if "tag" in columns:
            tags = columns["tag"]
            if self.tag is None:
                self.tag = tags[0][0].as_py().decode()
            self.last_tag = tags[-1][len(tags[-1]) - 1].as_py().decode()  # trec_eval's runid
        names = [name.decode() for name in raw_names]
        for name in names:
            if name in seen:
                raise NotStreamable(f"turn {name} comes back after other turns",
                                    "write each turn's lines together to evaluate it in constant memory")
            seen.add(name)
        items = pa.chunked_array([chunk.view(pa.string()) for chunk in _arrays(columns["item"])], type=pa.string())
        return _Lines(items, values, starts, names, unchecked), turn[size - 1].as_py()

    # --- in the caller's thread ----------------------------------------------------------------

    def _piece(self, parts: list[_Lines], first_row: int) -> Piece:
        """A piece: its lines put together, in batches of whole turns, item ids numbered per batch, pairs checked."""
        pa = arrow()[0]
        offsets = np.cumsum([0, *(len(part) for part in parts)])
        starts = np.concatenate([part.starts + offset for part, offset in zip(parts, offsets[:-1], strict=True)])
        names = [name for part in parts for name in part.names]
        turn_codes = np.repeat(np.arange(len(names), dtype=np.int32), np.diff(np.r_[starts, offsets[-1]]))
        items = pa.chunked_array([chunk for part in parts for chunk in part.items.chunks if len(chunk)],
                                 type=pa.string())
        batch_lines, batch_turns = _batches(turn_codes, len(names))
        first = self._number_first(names, batch_turns) if self._number_first is not None else None
        encoded = _encode_items(items, turn_codes, batch_lines, 1, first[1] if first else None)
        if encoded is None:
            self._report_duplicate(names, turn_codes, items, first_row)
        distinct, item_codes, first_codes = encoded
        return Piece(names, turn_codes, distinct, item_codes, np.concatenate([part.values for part in parts]),
                     batch_lines, batch_turns, first_row, (first[0], first_codes) if first else None)

    def _report_duplicate(self, turns: list[str], turn_codes: np.ndarray, items, first_row: int) -> None:
        """Raise the line reader's error for the first line of a piece whose (turn, item) came before."""
        seen = set()
        pairs = zip(turn_codes.tolist(), items.to_pylist(), strict=True)
        for row, pair in enumerate(pairs):  # noqa: B007 - the row where the loop breaks is read after it
            if pair in seen:
                break
            seen.add(pair)
        else:
            raise AssertionError("no pair of the piece comes twice")
        turn, item = turns[pair[0]], pair[1]
        line = _line_of_row(self._path, self._data, first_row + row)
        fields = " 0" * (len(self._layout.columns) - 3)
        try:  # the line reader's own words, from the pair alone
            self._layout.duplicate(f"{turn} Q0 {item}{fields}\n{turn} Q0 {item}{fields}\n".encode(), self.source)
        except InputError as err:
            raise InputError(err.problem, source=self.source, line=line) from None
        raise AssertionError("the line reader accepts a pair twice")


def _one_array(arrays: list):
    """Arrays of one type as one array."""
    return arrays[0] if len(arrays) == 1 else arrow()[0].concat_arrays(arrays)


def _arrays(column) -> list:
    """The arrays of a column given as an array or a list of arrays."""
    return column if isinstance(column, list) else [column]


def _separator(head: bytes) -> str:
    return "\t" if b"\t" in head else " "


def _line_of_row(path, data: bytes | None, row: int) -> int:
    """The number (from 1, blank lines counted) of the ``row``-th (from 0) non-blank line.

    Only for a part of a file that the streaming reader has read: there every line ends in a
    newline, a carriage return or both, and is empty or holds a record, as ``bytes.splitlines`` sees it.
    """
    number = rows = 0
    tail = b""
    with open_input(path) if data is None else contextlib.nullcontext(io.BytesIO(data)) as stream:
        while True:
            chunk = stream.read(1 << 20)
            lines = (tail + chunk).splitlines(keepends=True)
            # The last line may go on in the next chunk (a "\r" too, when a "\n" follows).
            tail = lines.pop() if chunk and lines else b""
            blank = lines.count(b"\n") + lines.count(b"\r") + lines.count(b"\r\n")
            if rows + len(lines) - blank <= row:
                number, rows = number + len(lines), rows + len(lines) - blank
                if not chunk:
                    raise ValueError(f"the file has no row {row}")
                continue
            for line in lines:
                number += 1
                if line.strip(b"\r\n"):
                    if rows == row:
                        return number
                    rows += 1


def stream_run(path: str | os.PathLike, number_first=None) -> TurnStream:
    """A TREC run read piece by piece (see :class:`TurnStream`); ``values`` are its scores."""
    return TurnStream(path, _RUN_LAYOUT, number_first)


def piece_as_run(stream: TurnStream, piece: Piece) -> ColumnarRun:
    """A piece of a run as a :class:`ColumnarRun` of its turns only."""
    if stream.tag is None:
        raise ValueError("a piece of a run comes before its tag was read")
    return ColumnarRun(stream.tag, stream.source, np.array(piece.turns, dtype=object), piece.turn_codes, piece.items,
                       piece.item_codes, piece.values, piece.batch_lines, piece.batch_turns, piece.numbered_first)


def _sorted_within_turns(items, starts: np.ndarray) -> bool:
    """Whether each turn's items ascend strictly in byte order (``starts``: where turns begin).

    Qrels are written sorted by turn then item: then no item is judged twice for a turn, and no
    item needs hashing to know it.
    """
    pc = arrow()[1]
    if len(items) < 2:
        return True
    ascending = pc.less(items.slice(0, len(items) - 1), items.slice(1))
    not_ascending = to_numpy(pc.indices_nonzero(pc.invert(ascending)), np.uint64).astype(np.int64) + 1
    # Where items do not ascend, a new turn must begin. ``starts`` ascend: a binary search, not np.isin,
    # whose np.unique imports numpy.ma (a tenth of a second at the start of every large evaluate).
    at = np.minimum(np.searchsorted(starts, not_ascending), len(starts) - 1)
    return not len(not_ascending) or bool(len(starts) and (starts[at] == not_ascending).all())


def _qrels_of_pieces(stream: TurnStream, name: str, positive_only: bool) -> ColumnarQrels:
    """Qrels from the pieces of a stream (see :func:`read_qrels`), in the compact form of :class:`ColumnarQrels`.

    Only the kept lines' items and labels are held, appended to columns that grow in place: the
    memory of a qrels read is about that of its kept items, whatever the file's size. A piece
    whose items do not ascend within its turns is checked for an item judged twice by hashing.
    """
    items, labels, counts = _GrowingStrings(), _Growing(np.int8), _Growing(np.int64)
    for parts, first_row in stream.parts():
        piece_items = _one_array([chunk for part in parts for chunk in part.items.chunks])
        offsets = np.cumsum([0, *(len(part) for part in parts)])
        starts = np.concatenate([part.starts + offset for part, offset in zip(parts, offsets[:-1], strict=True)])
        if not _sorted_within_turns(piece_items, starts):
            stream._piece(parts, first_row)  # raises the line reader's error on an item judged twice
        values = np.concatenate([part.values for part in parts]) if len(parts) > 1 else parts[0].values
        lengths = np.diff(np.r_[starts, len(values)])
        if positive_only:
            keep = values > 0
            kept_per_turn = np.add.reduceat(keep.astype(np.int64), starts) if len(starts) else lengths
            rows = np.flatnonzero(keep)
            if len(rows) < len(values):
                piece_items, values = piece_items.take(arrow_indices(rows)), values[rows]
            lengths = kept_per_turn
        if len(values) and (values.min() < np.iinfo(labels.dtype).min or
                            values.max() > np.iinfo(labels.dtype).max):
            labels.widen(np.int64)
        items.append(piece_items)
        labels.append(values)
        counts.append(lengths)
    # Each line's item as it is, not numbered across the file: one hash table for a million ids
    # would cost more than the whole read (see encode), and matching needs the ids of a few turns only.
    turn_starts = np.r_[0, np.cumsum(counts.done())]
    return ColumnarQrels(name, stream.source, np.array(stream.turns, dtype=object), None, items.done(), None,
                         labels.done(), positive_only, turn_starts)
