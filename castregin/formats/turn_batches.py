"""Item ids numbered batch by batch of whole turns, and (turn, item) pairs listed twice.

trec_eval's measures compare a run's items with the qrels' items of the same turn only, so item ids
need numbers that are comparable within a turn, not across the file. Hashing a million distinct ids
into one table costs cache misses on every line, while a table per batch of whole turns (about
:data:`BATCH_LINES` lines) stays in the processor's cache: item ids are numbered batch by batch
(:func:`encode_items`, :func:`by_batches_of_turns`), in threads, and numbers are only comparable
within a batch. The same numbers find a pair listed twice (:func:`has_duplicates`), which the line
reader refuses.
"""

from __future__ import annotations

import threading
from itertools import pairwise

import numpy as np

from ..arrays import THREADS, arrow, arrow_indices, in_threads
from .arrow_csv import chunks, encode

#: Lines per batch of whole turns whose item ids are numbered together (see the module docstring).
BATCH_LINES = 1 << 16
#: Entries of the scratch table of :func:`has_duplicates` (int32: 2 MB, reused across batches): larger
#: tables save few passes and cost memory in every thread that checks.
_DUPLICATE_TABLE_SIZE = 1 << 19
#: Lines per batch of :func:`has_duplicates` below which hashing the pairs is faster than the table.
_LINES_PER_TABLE_PASS = 300


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


def batch_bounds(turn_codes: np.ndarray, n_turns: int) -> tuple[np.ndarray, np.ndarray]:
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


def encode_items(items, turn_codes: np.ndarray, batch_lines: np.ndarray, threads: int, first=None):
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
                dictionary, codes = encode(pa.chunked_array([*chunks(first[k]), *lines.chunks], type=pa.string()))
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
    batch_lines = batch_bounds(turn_codes, n_turns)[0]

    def run(batches: range) -> list:
        scratch, out = _scratch_table(), []
        for k in batches:
            begin, end = int(batch_lines[k]), int(batch_lines[k + 1])
            distinct, codes = encode(items.slice(begin, end - begin))
            twice = has_duplicates(turn_codes[begin:end], codes, len(distinct), scratch)
            out.append(visit(begin, end, distinct, codes, twice))
        return out

    return [result for part in in_threads(run, len(batch_lines) - 1, threads) for result in part]
