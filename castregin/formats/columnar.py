"""Fast columnar readers of TREC runs and qrels: numpy arrays instead of dicts of dicts.

pyarrow's CSV parser reads the common shape of TREC files straight into arrays
(:mod:`castregin.formats.arrow_csv`), turn and item ids become integer codes, and item ids are
numbered batch by batch of whole turns (:mod:`castregin.formats.turn_batches`).

The line-by-line reader of :mod:`castregin.formats.trec` stays the reference: whenever the fast
path meets anything it cannot vouch for (other whitespace, non-ASCII bytes, a column count the
parser rejects, a non-finite number, a duplicate pair), the same bytes go
through that reader, which either raises its usual :class:`~castregin.errors.InputError` naming
the file and line, or reads the file, whose dicts are then turned into columns. Both readers
therefore accept the same files with the same values and messages.

Two ways in: :func:`read_run` and :func:`read_qrels` hold a whole file's columns, and
:func:`stream_run` hands a run over in pieces of whole turns (:class:`~castregin.formats.turn_stream.TurnStream`),
so that memory does not grow with the run; ``castregin evaluate`` streams, and reads a run whole only
where its turns are not contiguous. Qrels written turn by turn are streamed too, into columns that
grow in place (:mod:`castregin.formats.growing`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import THREADS, arrow, arrow_indices, strings, to_numpy
from ..data import Qrels, Run
from ..errors import InputError
from . import trec
from .arrow_csv import (
    all_finite,
    chunks,
    encode,
    label_values,
    no_empty_field,
    one_array,
    parse_table,
    release,
    scan,
)
from .common import display_name, read_bytes, stem
from .growing import Growing, GrowingStrings
from .turn_batches import batch_bounds, encode_items, has_duplicates
from .turn_stream import QRELS_LAYOUT, RUN_LAYOUT, NotStreamable, Piece, TurnStream

__all__ = ["ColumnarQrels", "ColumnarRun", "NotStreamable", "TurnStream", "piece_as_run", "qrels_from_dict",
           "read_qrels", "read_run", "run_from_dict", "run_to_dict", "stream_run"]


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
    names = pa.concat_arrays(chunks(run.items)).take(arrow_indices(run.item_codes)).to_pylist()
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
# Whole files: the fast path, else the line reader.


def _fast_run(path, source: str, threads: int = THREADS,
              data: bytes | None = None) -> tuple[ColumnarRun | None, bytes | None]:
    pa = arrow()[0]
    shape, data = scan(path, data)
    names = ["turn", "q0", "item", "rank", "score", "tag"]
    types = {"turn": pa.string(), "q0": pa.string(), "item": pa.string(), "rank": pa.float64(),
             "score": pa.float64(), "tag": pa.string()}
    # Ranks are integers in nearly every run, and integers parse faster than floats (and are
    # finite); a run with other ranks is parsed again, its ranks as floats. Without an x in the
    # file, no rank can be hexadecimal, which pyarrow's integer parser would accept.
    columns = None if shape.x else parse_table(path, data, shape, names, {**types, "rank": pa.int64()}, threads)
    if columns is None:
        columns = parse_table(path, data, shape, names, types, threads)
    if (columns is None or len(columns["score"]) == 0
            or not no_empty_field(columns, ["turn", "q0", "item", "tag"]) or not all_finite(columns["rank"])):
        return None, data
    tag = columns["tag"][0].as_py()
    # Each column is dropped once used, so that its memory serves the next step.
    del columns["q0"], columns["tag"], columns["rank"]
    scores = to_numpy(columns.pop("score"), np.float64)
    if not np.isfinite(scores).all():
        return None, data
    turns, turn_codes = encode(columns.pop("turn"))
    items = columns.pop("item")
    batch_lines, batch_turns = batch_bounds(turn_codes, len(turns))
    encoded = encode_items(items, turn_codes, batch_lines, threads)
    del items
    if threads > 1:
        release()
    if encoded is None:
        return None, data
    distinct_items, item_codes = encoded[0], encoded[1]
    return ColumnarRun(tag, source, np.array(turns.to_pylist(), dtype=object), turn_codes, distinct_items, item_codes,
                       scores, batch_lines, batch_turns), data


def _fast_qrels(path, source: str, name: str,
                data: bytes | None = None) -> tuple[ColumnarQrels | None, bytes | None]:
    pa = arrow()[0]
    shape, data = scan(path, data)
    columns = parse_table(path, data, shape, ["turn", "iteration", "item", "label"],
                          {"turn": pa.string(), "iteration": pa.string(), "item": pa.string(), "label": pa.string()})
    if columns is None or len(columns["turn"]) == 0 or not no_empty_field(columns, ["turn", "iteration", "item"]):
        return None, data
    labels = label_values(columns["label"])
    if labels is None:
        return None, data  # the line reader names the line
    (turns, turn_codes), (items, item_codes) = (encode(columns[c]) for c in ("turn", "item"))
    del columns
    if has_duplicates(turn_codes, item_codes, len(items)):
        return None, data
    return ColumnarQrels(name, source, np.array(turns.to_pylist(), dtype=object), turn_codes, items, item_codes,
                         labels), data


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
        with TurnStream(path, QRELS_LAYOUT) as stream:
            return _qrels_of_pieces(stream, name, positive_only)
    except NotStreamable as why:
        data = why.data
    fast, data = _fast_qrels(path, source, name, data)
    if fast is not None:
        return fast
    return qrels_from_dict(trec.parse_qrels(data if data is not None else read_bytes(path), source, name, stratified))


# ---------------------------------------------------------------------------------------------
# Streamed: pieces of whole turns.


def stream_run(path: str | os.PathLike, number_first=None) -> TurnStream:
    """A TREC run read piece by piece (see :class:`TurnStream`); ``values`` are its scores."""
    return TurnStream(path, RUN_LAYOUT, number_first)


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
    items, labels, counts = GrowingStrings(), Growing(np.int8), Growing(np.int64)
    for parts, first_row in stream.parts():
        piece_items = one_array([chunk for part in parts for chunk in part.items.chunks])
        offsets = np.cumsum([0, *(len(part) for part in parts)])
        starts = np.concatenate([part.starts + offset for part, offset in zip(parts, offsets[:-1], strict=True)])
        if not _sorted_within_turns(piece_items, starts):
            stream.piece(parts, first_row)  # raises the line reader's error on an item judged twice
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
        try:
            items.append(piece_items)
        except OverflowError:  # beyond the int32 offsets of a string array
            raise NotStreamable("its item ids take more than 2 GB") from None
        labels.append(values)
        counts.append(lengths)
    # Each line's item as it is, not numbered across the file: one hash table for a million ids
    # would cost more than the whole read (see encode), and matching needs the ids of a few turns only.
    turn_starts = np.r_[0, np.cumsum(counts.done())]
    return ColumnarQrels(name, stream.source, np.array(stream.turns, dtype=object), None, items.done(), None,
                         labels.done(), positive_only, turn_starts)
