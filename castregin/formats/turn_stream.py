"""A TREC run or qrels read in pieces of whole turns, in memory that does not grow with the file.

:class:`TurnStream` parses a file with pyarrow's streaming CSV reader in a thread of its own, a
record batch at a time, while the caller works on the pieces already read; ``castregin evaluate``
and the ``trec_eval`` drop-in stream runs this way (:func:`castregin.formats.columnar.stream_run`),
and qrels written turn by turn are read so (:func:`castregin.formats.columnar.read_qrels`). The
line reader's checks (:mod:`castregin.formats.trec`) are made on the parsed columns
(:mod:`castregin.formats.arrow_csv`) instead of a scan of the bytes first; whatever the stream cannot
vouch for, or a turn that comes back after other turns, is :class:`NotStreamable`: the caller then
reads the file whole.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import arrow, arrow_indices, to_numpy
from ..errors import InputError
from . import trec
from .arrow_csv import arrays_of, csv_options, label_values, one_array, same_tokens, token_bytes
from .common import Input, display_name, open_input
from .turn_batches import batch_bounds, encode_items

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
                         for chunk in arrays_of(columns[name]))
            if not finite:
                columns_named = " or ".join(self.numbers)
                raise NotStreamable(f"its {columns_named} column holds a value that is not a finite number")
            return values
        labels = label_values(columns[self.values])
        if labels is None:
            raise NotStreamable(f"its {self.values} column holds a value that is not a whole number within 64 bits")
        return labels


RUN_LAYOUT = _Layout(("turn", "q0", "item", "rank", "score", "tag"), ("turn", "q0", "item", "tag"),
                      ("rank", "score"), "score", trec.parse_run)
QRELS_LAYOUT = _Layout(("turn", "iteration", "item", "label"), ("turn", "iteration", "item", "label"), (), "label",
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
    (:func:`same_tokens`); a column given as True or False was checked already (the turn column, see
    :meth:`TurnStream._checked`)."""
    for name, column in unchecked or ():
        if column is False or (column is not True and not same_tokens(column)):
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

    def __init__(self, path: str | os.PathLike, layout: _Layout = RUN_LAYOUT, number_first=None):
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
        is read; what cannot be read twice (standard input, a pipe) is read whole, as
        :func:`castregin.formats.arrow_csv.scan` does."""
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
            yield self.piece(parts, first_row)

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
        reader = pa_csv.open_csv(self._arrow_source, **csv_options(
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
                columns = {name: one_array([batch.column(name) for batch in group]) if name in read_here
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
                unchecked.append((name, all(raw_names) and token_bytes(b"".join(raw_names))))
            else:
                unchecked.append((name, arrays_of(columns[name]) if name == "item" else same_tokens(columns[name])))
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
        items = pa.chunked_array([chunk.view(pa.string()) for chunk in arrays_of(columns["item"])], type=pa.string())
        return _Lines(items, values, starts, names, unchecked), turn[size - 1].as_py()

    # --- in the caller's thread ----------------------------------------------------------------

    def piece(self, parts: list[_Lines], first_row: int) -> Piece:
        """A piece: its lines put together, in batches of whole turns, item ids numbered per batch, pairs checked."""
        pa = arrow()[0]
        offsets = np.cumsum([0, *(len(part) for part in parts)])
        starts = np.concatenate([part.starts + offset for part, offset in zip(parts, offsets[:-1], strict=True)])
        names = [name for part in parts for name in part.names]
        turn_codes = np.repeat(np.arange(len(names), dtype=np.int32), np.diff(np.r_[starts, offsets[-1]]))
        items = pa.chunked_array([chunk for part in parts for chunk in part.items.chunks if len(chunk)],
                                 type=pa.string())
        batch_lines, batch_turns = batch_bounds(turn_codes, len(names))
        first = self._number_first(names, batch_turns) if self._number_first is not None else None
        encoded = encode_items(items, turn_codes, batch_lines, 1, first[1] if first else None)
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
