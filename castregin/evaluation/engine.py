"""trec_eval's measures on whole arrays: the streaming engine, for every measure with a vectorised computation.

One run against one qrels is a handful of numpy passes over the run's lines, batch by batch
(whole turns, tens of thousands of lines, whose arrays stay in the processor's cache; see
:class:`~castregin.formats.columnar.ColumnarRun`), instead of a loop per turn over Python
objects. Only judged lines are kept once ranked. The numbers are trec_eval 9's, including the
floating-point details that decide the last bits:

- Items are ordered by score descending, compared as doubles (trec_eval-9.0.8 stores scores as
  ``double``) or, with ``score_bits=32``, as 32-bit floats (as pytrec_eval and trec_eval up to
  v9.0.8 store them; see :mod:`castregin.evaluation.ranking`), ties broken by item id in descending
  byte order (``strcmp``); the rank column is ignored. Judged@k follows ir_measures' judged
  provider instead: 64-bit scores, ties by item id ascending, divided by ``min(k, items
  retrieved)``; but an item labelled below 0 counts as unjudged, as trec_eval has it ("in the pool
  but unjudged"; ir_measures counts every qrels line).
- An item is relevant when it is judged with a label >= ``rel``; unjudged items never are. A turn
  without relevant items scores 0 on binary measures (R@k, AP and Rprec divide by nothing).
- nDCG's gain is the label when it is positive, else 0 (negative labels count as 0, as in
  trec_eval); the ideal ranking sorts the turn's positive labels in descending order; the
  discount is ``log2(rank + 1)`` from the C library (``math.log2``).
- Sums (AP, DCG, ideal DCG) are accumulated left to right in ranking order, one double addition
  after the other, exactly as trec_eval's loops do; numpy's pairwise ``sum`` would differ in
  the last bits, so :func:`~castregin.evaluation.kernels.sequential_sums` adds position by
  position across all turns at once.

Turns are the run's turns that the qrels judge; means and ``--complete`` are the caller's job
(:mod:`castregin.evaluation.evaluate`). The engine ranks and matches; what a measure computes from
the ranking is its definition's (:mod:`castregin.evaluation.measures`: every measure of trec_eval's
``all_trec``, Judged@k, and the judged share evaluate warns about), over the :class:`RankedTurns` of
the order it asks for. The array kernels both use (sums and running sums added left to right, maxima, the C
library's functions per turn) are in :mod:`castregin.evaluation.kernels`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from ..arrays import THREADS, arrow, arrow_indices, byte_order_ranks, in_threads, to_numpy
from ..formats.arrow_csv import encode
from ..formats.columnar import ColumnarQrels, ColumnarRun
from ..formats.growing import as_strings
from ..limits import MAX_TREC_LABEL
from .kernels import log2_table, segment_positions, sequential_sums
from .measures import ALL_LINES, IR_MEASURES_ORDER, POSITIVE_LINES_AND_TOP, TREC_EVAL_ORDER, Measure
from .ranking import DEFAULT_BITS
from .trec_rules import refuse_unevaluable


def _descending_float_key(scores: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned keys whose ascending order is the scores' descending order (as 32 or 64-bit floats).

    ``-0.0`` becomes ``0.0`` first, since C and Python compare them equal (a tie, then item ids).
    Scores beyond the 32-bit range become infinities, as C's ``(float)`` cast makes them.
    """
    if bits == 32:
        unsigned, sign_shift = np.uint32, np.uint32(31)
        with np.errstate(over="ignore"):
            floats = scores.astype(np.float32)
    else:
        unsigned, sign_shift = np.uint64, np.uint64(63)
        floats = scores.astype(np.float64, copy=True)
    floats += 0.0
    raw = floats.view(unsigned)
    # IEEE floats order like sign-magnitude integers: negative ones keep their bits (larger
    # magnitude sorts later), positive ones are complemented but for the sign bit (larger value
    # sorts earlier). In place, without a temporary array per step: ``mask`` is 0 for a negative
    # score, every bit but the sign for a positive one.
    mask = raw >> sign_shift
    mask -= unsigned(1)
    mask &= ~(unsigned(1) << sign_shift)
    raw ^= mask
    return raw


def _break_ties(order: np.ndarray | None, sorted_keys, judged: np.ndarray, items, item_codes: np.ndarray,
                descending: bool) -> np.ndarray | None:
    """Reorder runs of equal ``sorted_keys`` (turn and score) by item id, in byte order.

    ``order`` None stands for the identity (lines already in order) and is returned when no tie
    matters. ``judged`` marks the judged lines (in the lines' own order): a tie without a judged
    line moves only unjudged lines among positions no measure looks at, so it is left alone.
    ``items[item_codes]`` are the lines' item ids.
    """
    equal = None
    for key in sorted_keys:
        same = key[1:] == key[:-1]
        equal = same if equal is None else equal & same
    if equal is None or not equal.any():
        return order
    in_tie = np.r_[equal, False] | np.r_[False, equal]
    positions = np.flatnonzero(in_tie)
    group = np.cumsum(~np.r_[False, equal][positions])
    rows = positions if order is None else order[positions]
    with_judged = np.zeros(int(group[-1]) + 1, dtype=bool)
    with_judged[group[judged[rows]]] = True
    keep = with_judged[group]
    if not keep.any():
        return order
    positions, group, rows = positions[keep], group[keep], rows[keep]
    if order is None:
        order = np.arange(len(item_codes))
    distinct, inverse = np.unique(item_codes[rows], return_inverse=True)
    ranks = byte_order_ranks(items, distinct)[inverse]
    # One 64-bit key (group, then rank) sorts far faster than a two-key lexsort; groups come in
    # ascending order already, which the stable sort exploits.
    if descending:
        ranks = (len(distinct) - 1) - ranks
    composite = (group.astype(np.uint64) << np.uint64(32)) | ranks.astype(np.uint64)
    order[positions] = rows[np.argsort(composite, kind="stable")]
    return order


_LOW_32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)


def _order_by_turn_and_score(turns: np.ndarray, float_key: np.ndarray, bits: int):
    """``(order, sorted_keys)``: the lines ordered by turn, then ``float_key`` (ascending), stably.

    ``order`` is None where the lines are in that order already, as runs written in rank order
    are (then nothing is sorted); ``sorted_keys`` are keys in that order whose equality in every
    key says a tie. Turn codes take 32 bits: a 32-bit key goes with the turn into one 64-bit key;
    a 64-bit key is sorted by (turn, its high half) first, then its low half settles the lines
    whose first key ties, so that no slow two-key sort is needed.
    """
    if bits == 32:
        key = float_key.astype(np.uint64) | (turns.astype(np.uint64) << _32)
        order = None if np.all(key[1:] >= key[:-1]) else np.argsort(key, kind="stable")
        return order, [key if order is None else key[order]]
    if np.all(turns[1:] >= turns[:-1]) and np.all((turns[1:] != turns[:-1]) | (float_key[1:] >= float_key[:-1])):
        return None, [turns, float_key]
    high, low = (turns.astype(np.uint64) << _32) | (float_key >> _32), float_key & _LOW_32
    order = np.argsort(high, kind="stable")
    high = high[order]
    same = high[1:] == high[:-1]
    if same.any():
        in_tie = np.r_[same, False] | np.r_[False, same]
        positions = np.flatnonzero(in_tie)
        group = np.cumsum(~np.r_[False, same][positions]).astype(np.uint64)
        rows = order[positions]
        order[positions] = rows[np.argsort((group << _32) | low[rows], kind="stable")]
    return order, [high, low[order]]


def _rank_batch(turns: np.ndarray, scores: np.ndarray, items, item_codes: np.ndarray, judged_rows: np.ndarray,
                bits: int, descending: bool, depth: float | None = None):
    """Where the judged lines of one batch land once its lines are ranked: ``(turn, position, by_rank, top)``.

    The batch's lines are ordered by turn, then score descending (as ``bits``-bit floats), then
    item id (``items[item_codes]``) in descending or ascending byte order. ``judged_rows``
    (ascending) index the batch's lines; ``by_rank`` reorders them so that the turns and
    positions returned are in ranking order. ``top`` (with ``depth``, else None) indexes the lines
    ranked above ``depth`` in their turn; ties are broken by item id only where a judged line is
    among them, so with ``judged_rows`` the positive lines alone, a tie of unjudged and 0-labelled
    lines across the ``depth``-th place keeps the lines' order.
    """
    order, sorted_keys = _order_by_turn_and_score(turns, _descending_float_key(scores, bits), bits)
    judged = np.zeros(len(turns), dtype=bool)
    judged[judged_rows] = True
    order = _break_ties(order, sorted_keys, judged, items, item_codes, descending)
    if order is None:
        sorted_index, by_rank = judged_rows, np.arange(len(judged_rows))
        turn_sorted = turns
    else:
        inverse = np.empty(len(order), dtype=np.int64)
        inverse[order] = np.arange(len(order))
        sorted_index = inverse[judged_rows]
        by_rank = np.argsort(sorted_index, kind="stable")
        sorted_index = sorted_index[by_rank]
        turn_sorted = turns[order]
    starts = np.flatnonzero(np.r_[True, turn_sorted[1:] != turn_sorted[:-1]])
    first = starts[np.searchsorted(starts, sorted_index, side="right") - 1]
    top = None
    if depth is not None:
        taken = np.minimum(np.diff(np.r_[starts, len(turns)]), depth)
        ends = np.cumsum(taken)
        top = np.repeat(starts, taken) + (np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - taken, taken))
        if order is not None:
            top = order[top]
    return turn_sorted[first], sorted_index - first, by_rank, top


class _QrelsLines:
    """Some of a qrels' lines in turn order: turn t's are ``turn_starts[t]:turn_starts[t + 1]``.

    ``strings`` holds each line's item id (a pyarrow string array), ``labels`` its label.
    """

    def __init__(self, strings, labels: np.ndarray, turn_starts: np.ndarray):
        self.strings, self.labels, self.turn_starts = strings, labels, turn_starts

    @classmethod
    def of(cls, qrels: ColumnarQrels) -> _QrelsLines:
        if qrels.turn_starts is not None:  # the streaming reader's compact form: in turn order already
            return cls(qrels.items, qrels.labels, qrels.turn_starts)
        turn_codes, item_codes, labels = qrels.turn_codes, qrels.item_codes, qrels.labels
        if turn_codes is None or item_codes is None:
            raise ValueError("qrels with neither line codes nor turn bounds")
        if np.any(turn_codes[1:] < turn_codes[:-1]):
            order = np.argsort(turn_codes, kind="stable")
            turn_codes, item_codes, labels = turn_codes[order], item_codes[order], labels[order]
        # The streaming reader stores each line's item in line order: nothing to gather then.
        in_order = len(item_codes) == len(qrels.items) and np.array_equal(item_codes, np.arange(len(item_codes)))
        strings = qrels.items if in_order else qrels.items.take(arrow_indices(item_codes))
        if hasattr(strings, "chunks"):
            # One array: pyarrow's take on an array of many chunks puts them together first, every time.
            strings = strings.combine_chunks()
        return cls(strings, labels, np.searchsorted(turn_codes, np.arange(len(qrels.turns) + 1)))

    def positive(self) -> _QrelsLines:
        """The lines labelled 1 or more, in the same order."""
        return self.where(self.labels > 0)

    def where(self, keep: np.ndarray) -> _QrelsLines:
        """The lines where ``keep`` is true, in the same order."""
        kept_before = np.r_[0, np.cumsum(keep)]
        rows = np.flatnonzero(keep)
        return _QrelsLines(self.strings.take(arrow_indices(rows)), self.labels[rows], kept_before[self.turn_starts])


class QrelsIndex:
    """One qrels prepared for many runs: its lines by turn, relevant counts, ideal DCGs.

    Keeps what it needs of the lines (item ids and labels in turn order), nothing else of the
    :class:`ColumnarQrels`, which may be dropped.
    """

    def __init__(self, qrels: ColumnarQrels, keep_all: bool = True):
        self.turns = qrels.turns
        #: The qrels' file as refusals name it.
        self.source = qrels.source
        self._positive_only = qrels.positive_only
        self._all: _QrelsLines | None = _QrelsLines.of(qrels)
        self._positive: _QrelsLines | None = self._all if qrels.positive_only else None
        self._nonpositive: _QrelsLines | None = None
        if not keep_all and not qrels.positive_only:
            # Nothing will ask for every line at once (Judged@k does): the lines are kept as two
            # disjoint parts, labelled above 0 and not, in the memory of all of them.
            self._positive, self._nonpositive = self._all.where(self._all.labels > 0), \
                self._all.where(self._all.labels <= 0)
            self._all = None
        self._positive_labels: tuple[np.ndarray, np.ndarray] | None = None
        self._lines_of_run_turns: dict[tuple, _LinesOfRunTurns] = {}
        self._lock = threading.Lock()
        self._num_rel: dict[int | tuple, np.ndarray] = {}
        self._ideal: dict[int | None, np.ndarray] = {}
        self._turn_code: dict[str, int] | None = None

    def turn_codes(self, turns: np.ndarray) -> np.ndarray:
        """Each of ``turns`` (an object array of str) as a qrels turn code, -1 where the qrels lack it.

        The table is built once: a run read piece by piece asks for every piece's turns.
        """
        if self._turn_code is None:
            self._turn_code = {turn: code for code, turn in enumerate(self.turns.tolist())}
        get = self._turn_code.get
        return np.fromiter((get(turn, -1) for turn in turns.tolist()), dtype=np.int64, count=len(turns))

    def lines(self, positive_only: bool) -> _QrelsLines:
        """All lines, or those labelled 1 or more: the only ones P, R, AP, RR, nDCG and Rprec see.

        A judged item whose label is 0 or less is neither relevant (``rel`` is at least 1) nor
        has a gain, so for those measures it is as good as unjudged; only Judged@k counts it.
        """
        if positive_only:
            with self._lock:
                if self._positive is None:
                    self._positive = self._every_line().positive()
            return self._positive
        if self._positive_only:
            raise ValueError("these qrels were read without their lines labelled 0 or less (positive_only)")
        return self._every_line()

    def _every_line(self) -> _QrelsLines:
        if self._all is None:
            raise ValueError("this index was built without keep_all")
        return self._all

    def matcher(self, run: ColumnarRun, qrels_turn_of: np.ndarray, positive_only: bool) -> _JudgedLines:
        """Finds the run's judged lines batch by batch (with ``positive_only``: those labelled >= 1).

        ``qrels_turn_of`` maps the run's turns to the qrels' (-1: not judged).
        """
        lines = self._lines_of(run.turns, positive_only, qrels_turn_of)
        numbered = run.numbered_first
        return _JudgedLines(run, lines, numbered[1] if numbered is not None and numbered[0] is lines else None)

    def refuse_unevaluable(self, turns: Sequence[str]) -> None:
        """Refuse what trec_eval cannot evaluate among ``turns`` (qrels turns), in the rules' words
        (:func:`castregin.evaluation.trec_rules.refuse_unevaluable`): labels above
        :data:`~castregin.limits.MAX_TREC_LABEL`, a turn labelled only below 0. Needs every line."""
        lines = self.lines(positive_only=False)
        codes = self.turn_codes(np.array(list(turns), dtype=object))
        codes = codes[codes >= 0]
        begin, end = lines.turn_starts[codes], lines.turn_starts[codes + 1]
        # Counted once per qrels (count_labels keeps them), not per piece of a run read piece by piece.
        lowest = int(np.iinfo(lines.labels.dtype).min)
        lines_in = end - begin
        below_zero, up_to_max = (self.count_labels(lowest, top)[codes] for top in (0, MAX_TREC_LABEL + 1))
        bad = (below_zero == lines_in) | (up_to_max != lines_in)
        if not bad.any():
            return
        offending = {}
        for code, first, last in zip(codes[bad].tolist(), begin[bad].tolist(), end[bad].tolist(), strict=True):
            items = [item.decode() if isinstance(item, bytes) else item
                     for item in as_strings(lines.strings.slice(first, last - first)).to_pylist()]
            offending[self.turns[code]] = dict(zip(items, lines.labels[first:last].tolist(), strict=True))
        refuse_unevaluable(offending, list(offending), self.source)

    def labelled_nonpositive(self, qrels_turns: np.ndarray, items) -> np.ndarray:
        """Whether each (qrels turn code, item id) pair is a line of these qrels labelled 0 or less.

        Judged items that no measure but a judged share counts. ``items`` (a pyarrow string array) are
        few, a run's top items: they are hashed, and the lines of their turns looked up among them.
        """
        if self._positive_only:
            raise ValueError("these qrels were read without their lines labelled 0 or less (positive_only)")
        # Those labelled 0 or less where they are kept apart, else all of them, the others then left
        # out after the lookup (a few more lookups, no copy).
        lines = self._nonpositive if self._nonpositive is not None else self._every_line()
        found = np.zeros(len(items), dtype=bool)
        turns = np.unique(qrels_turns)
        begin, end = lines.turn_starts[turns], lines.turn_starts[turns + 1]
        count = end - begin
        if not len(items) or not count.sum():
            return found
        distinct, codes = encode(items)
        # The lines of those turns, one turn after the other: a slice when the turns follow each other.
        offsets = np.repeat(begin - np.r_[0, np.cumsum(count)[:-1]], count) + np.arange(int(count.sum()))
        if offsets[-1] - offsets[0] + 1 == len(offsets):
            strings = lines.strings.slice(int(offsets[0]), len(offsets))
        else:
            strings = lines.strings.take(arrow_indices(offsets))
        at = to_numpy(arrow()[1].index_in(as_strings(strings), value_set=distinct), np.int32, fill=-1)
        hit = (at >= 0) & (lines.labels[offsets] <= 0)
        line_turns = np.repeat(turns, count)[hit]
        keys = line_turns.astype(np.int64) * len(distinct) + at[hit]
        return np.isin(qrels_turns.astype(np.int64) * len(distinct) + codes, keys)

    def _lines_of(self, turns: np.ndarray, positive_only: bool, qrels_turn_of: np.ndarray | None = None):
        # Runs of one track list the same turns in the same order: their qrels lines are gathered once.
        key = (positive_only, tuple(turns.tolist()))
        with self._lock:
            lines = self._lines_of_run_turns.get(key)
        if lines is None:
            if qrels_turn_of is None:
                qrels_turn_of = self.turn_codes(turns)
            lines = _LinesOfRunTurns(qrels_turn_of, self.lines(positive_only))
            with self._lock:
                if len(self._lines_of_run_turns) >= 4:
                    self._lines_of_run_turns.clear()
                self._lines_of_run_turns[key] = lines
        return lines

    def items_to_number_first(self, positive_only: bool):
        """``number_first`` for :func:`castregin.formats.columnar.stream_run`: each batch's judged items.

        The reader then numbers the items this qrels judges for a batch's turns together with
        the batch's own, in one hash pass: a run line whose number is among the first names a
        judged item, and :meth:`matcher` needs no second lookup.
        """
        def judged_items(turns: list[str], batch_turns: np.ndarray):
            lines = self._lines_of(np.array(turns, dtype=object), positive_only)
            bounds = lines.first[batch_turns].tolist()
            return lines, [lines.strings.slice(begin, end - begin) for begin, end in pairwise(bounds)]

        return judged_items

    def _turn_chunks(self):
        """The positive lines in chunks of whole turns, about :data:`_CHUNK_LINES` each: ``(first turn, number of
        turns, each line's turn counted from the first, labels as int64)``.

        Per-turn tables are built chunk by chunk, so that their temporary arrays stay small whatever
        the size of the qrels (millions of lines in a large benchmark).
        """
        labels_of_lines, starts = self.positive_labels()
        n_turns = len(starts) - 1
        first = 0
        while first < n_turns:
            end = int(np.searchsorted(starts, starts[first] + _CHUNK_LINES, side="right")) - 1
            end = min(max(end, first + 1), n_turns)
            counts = np.diff(starts[first:end + 1])
            turns = np.repeat(np.arange(end - first), counts)
            yield first, end - first, turns, labels_of_lines[starts[first]:starts[end]].astype(np.int64)
            first = end

    def positive_labels(self) -> tuple[np.ndarray, np.ndarray]:
        """The labels of the lines labelled 1 or more, in turn order, and where each turn's begin: what the per-turn
        tables read, without the lines' item ids (a copy of those would cost a large qrels tens of MB)."""
        with self._lock:
            if self._positive is not None:
                return self._positive.labels, self._positive.turn_starts
            if self._positive_labels is None:
                lines = self._every_line()
                keep = lines.labels > 0
                kept_before = np.r_[0, np.cumsum(keep, dtype=np.int64)]
                self._positive_labels = lines.labels[keep], kept_before[lines.turn_starts]
            return self._positive_labels

    def num_rel(self, rel: int) -> np.ndarray:
        """Per qrels turn, the number of items judged >= ``rel`` (trec_eval's num_rel; ``rel`` is 1 or more)."""
        if rel not in self._num_rel:
            out = np.zeros(len(self.turns), dtype=np.int64)
            for first, count, turns, labels in self._turn_chunks():
                out[first:first + count] = np.bincount(turns[labels >= rel], minlength=count)
            self._num_rel[rel] = out
        return self._num_rel[rel]

    def count_labels(self, low: int, high: int) -> np.ndarray:
        """Per qrels turn, the lines labelled ``low`` or more and below ``high`` (bpref's judged non-relevant
        items: 0 up to the level), from every line."""
        key = ("labels", low, high)
        if key not in self._num_rel:
            lines = self.lines(positive_only=False)
            keep = (lines.labels >= low) & (lines.labels < high)
            kept_before = np.r_[0, np.cumsum(keep)]
            self._num_rel[key] = np.diff(kept_before[lines.turn_starts]).astype(np.int64)
        return self._num_rel[key]

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        """Per qrels turn, the DCG of the ideal ranking (positive labels descending) at ``cutoff``."""
        if cutoff not in self._ideal:
            out = np.zeros(len(self.turns))
            for first, count, chunk_turns, chunk_labels in self._turn_chunks():
                order = np.lexsort((-chunk_labels, chunk_turns))
                turns, labels = chunk_turns[order], chunk_labels[order]
                position = segment_positions(turns)
                if cutoff is not None:
                    keep = position < cutoff
                    turns, labels, position = turns[keep], labels[keep], position[keep]
                gains = labels / log2_table(int(position.max()) + 3 if len(position) else 3)[position + 2]
                out[first:first + count] = sequential_sums(gains, turns, count)
            self._ideal[cutoff] = out
        return self._ideal[cutoff]


#: Lines of a qrels handled at a time when per-turn tables are built (see QrelsIndex._turn_chunks).
_CHUNK_LINES = 1 << 16


class _LinesOfRunTurns:
    """The qrels lines of a list of run turns, one run turn after the other: those of run turn
    ``t`` are ``first[t]:first[t + 1]``, with their item ids (``strings``), labels and run turn."""

    def __init__(self, qrels_turn_of: np.ndarray, qrels: _QrelsLines):
        turn = np.maximum(qrels_turn_of, 0)
        begin = np.where(qrels_turn_of >= 0, qrels.turn_starts[turn], 0)
        count = np.where(qrels_turn_of >= 0, qrels.turn_starts[turn + 1] - begin, 0)
        self.first = np.r_[0, np.cumsum(count)]
        lines = np.repeat(begin - self.first[:-1], count) + np.arange(self.first[-1])
        if len(lines) and lines[-1] - lines[0] + 1 == len(lines) and np.all(lines[1:] > lines[:-1]):
            # The run lists the qrels' turns in the qrels' order, as runs of a track do: a slice.
            self.strings = as_strings(qrels.strings.slice(int(lines[0]), len(lines)))
        else:
            self.strings = as_strings(qrels.strings.take(arrow_indices(lines)))
        self.turn = np.repeat(np.arange(len(count), dtype=np.int64), count)
        # As int64 whatever the qrels hold: compared with relevance levels of any size.
        self.labels = qrels.labels[lines].astype(np.int64)


class _JudgedLines:
    """The qrels lines of a run's turns, ready to be matched with the run's lines batch by batch.

    Batch by batch, the items the qrels judge for the batch's turns are numbered, the batch's
    distinct items looked up among them, then (turn, item) among those qrels lines: small tables,
    built and probed in the processor's cache, where one table for the whole run would not fit.
    """

    def __init__(self, run: ColumnarRun, lines: _LinesOfRunTurns, numbered: list[np.ndarray] | None = None):
        self.run = run
        self.first, self.strings, self.turn, self.labels = lines.first, lines.strings, lines.turn, lines.labels
        self.chunk_starts = np.cumsum([0, *(len(chunk) for chunk in run.items.chunks)])
        #: Per batch, the run's numbers of these qrels lines' items, where the reader numbered them first.
        self.numbered = numbered

    def batch(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Batch ``k``'s judged lines (ascending, counted from the batch's first line) and their labels."""
        pc = arrow()[1]
        run = self.run
        lines = slice(int(run.batch_lines[k]), int(run.batch_lines[k + 1]))
        judged = slice(int(self.first[run.batch_turns[k]]), int(self.first[run.batch_turns[k + 1]]))
        if judged.start == judged.stop:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        row_item = run.item_codes[lines] - self.chunk_starts[k]
        if self.numbered is not None:
            # Numbered first: the judged items are the batch's first numbers.
            judged_items, size = self.numbered[k].astype(np.int64), len(run.items.chunk(k))
            hits = np.flatnonzero(row_item <= judged_items.max())
        else:
            distinct, judged_items = encode(self.strings.slice(judged.start, judged.stop - judged.start))
            size = len(distinct)
            # Each distinct run item's number among the judged items (-1: not judged for these turns).
            row_item = to_numpy(pc.index_in(run.items.chunk(k), value_set=distinct), np.int32, fill=-1)[row_item]
            hits = np.flatnonzero(row_item >= 0)
        keys = run.turn_codes[lines][hits].astype(np.int64) * size + row_item[hits]
        # Then (turn, item) among the lines (hashing beats a binary search here).
        judged_keys = self.turn[judged] * size + judged_items
        at = to_numpy(pc.index_in(arrow_indices(keys), value_set=arrow_indices(judged_keys)), np.int32, fill=-1)
        hit = at >= 0
        return hits[hit], self.labels[judged][at[hit]]


class RankedTurns:
    """The judged lines of a run in one ranking order, what every vectorised computation reads.

    Each line's turn (``segment``: the run's turns that the qrels judge, in run turn code order),
    position in its turn's ranking and label; ``lengths`` are the turns' numbers of lines and
    ``turn_of_segment`` their qrels turn codes. Unjudged lines only take up positions, so only
    judged lines are kept: a tenth of a deep run or less (those labelled above 0 alone, unless a
    measure reads all). ``unseen_on_top``, where the lines labelled 0 or less are left out, counts
    them among each turn's top items (see :data:`~castregin.evaluation.measures.POSITIVE_LINES_AND_TOP`).
    """

    def __init__(self, segment: np.ndarray, position: np.ndarray, labels: np.ndarray, lengths: np.ndarray,
                 turn_of_segment: np.ndarray, index: QrelsIndex, unseen_on_top: np.ndarray | None = None):
        self.segment = segment
        self.position = position
        self.labels = labels
        self.lengths = lengths
        self.turn_of_segment = turn_of_segment
        self.index = index
        self.unseen_on_top = unseen_on_top
        #: What several measures derive alike from these lines (the gain measures' prefix sums).
        self.cache: dict = {}

    @property
    def turn_count(self) -> int:
        return len(self.lengths)

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per turn, the lines where ``mask`` holds."""
        return np.bincount(self.segment[mask], minlength=len(self.lengths))

    def relevant(self, rel: int) -> np.ndarray:
        """Which lines are relevant at level ``rel`` (judged with a label of ``rel`` or more)."""
        return self.labels >= rel

    def found(self, rel: int, cutoff: int) -> np.ndarray:
        """Per turn, the relevant lines among the first ``cutoff``."""
        return self.count(self.relevant(rel) & (self.position < cutoff))

    def num_rel(self, rel: int) -> np.ndarray:
        """Per turn, the items the qrels label ``rel`` or more (trec_eval's num_rel)."""
        return self.index.num_rel(rel)[self.turn_of_segment]

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        """Per turn, the ideal ranking's DCG at ``cutoff``."""
        return self.index.ideal_dcg(cutoff)[self.turn_of_segment]

    def first(self, depth: int) -> RankedTurns:
        """The turns cut to their first ``depth`` items (trec_eval's ``-M``). ``unseen_on_top`` is kept: the
        judged share of the top items is read on the uncut ranking, as the rules' path reads it."""
        keep = self.position < depth
        return RankedTurns(self.segment[keep], self.position[keep], self.labels[keep],
                           np.minimum(self.lengths, depth), self.turn_of_segment, self.index, self.unseen_on_top)

    def ideal_gains(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per turn, the ideal ranking of its positive labels (largest first): ``(segment, position, label)``
        of each, turn after turn. Computed on each call, not kept: the gain measures keep what they derive from
        it in :attr:`cache` (one copy of the ideal ranking, not two)."""
        positive, turn_starts = self.index.positive_labels()
        begin = turn_starts[self.turn_of_segment]
        count = turn_starts[self.turn_of_segment + 1] - begin
        offsets = np.r_[0, np.cumsum(count)]
        rows = np.repeat(begin - offsets[:-1], count) + np.arange(int(offsets[-1]))
        labels = positive[rows].astype(np.int64)
        segment = np.repeat(np.arange(len(count), dtype=np.int64), count)
        order = np.lexsort((-labels, segment))
        return segment, segment_positions(segment), labels[order]


#: The orders of the rankings measures read, as (bits of the scores, ties by item id descending): trec_eval's
#: at the evaluation's precision (None here), ir_measures' judged provider's (Judged@k).
_ORDERS = {TREC_EVAL_ORDER: None, IR_MEASURES_ORDER: (64, False)}


def evaluate_run(run: ColumnarRun, index: QrelsIndex, measures: Sequence[Measure],
                 threads: int = THREADS, score_bits: int = DEFAULT_BITS) -> list[dict[str, float]]:
    """Per-turn values of each measure, ``[{turn: value}]``, for the run's turns that the qrels judge.

    Items are ranked on scores compared as ``score_bits``-bit floats (64: trec_eval-9.0.8's
    doubles; 32: pytrec_eval's floats). The run is ranked and matched with the qrels batch by batch
    (whole turns, a few tens of thousands of lines), in ``threads`` threads: a batch's arrays stay
    in the processor's cache and memory is reused, instead of a dozen passes over arrays of
    millions of lines. Each measure's values come from its definition's vectorised computation.
    """
    turns, values = evaluate_run_arrays(run, index, measures, threads, score_bits)
    return [dict(zip(turns, measure_values.tolist(), strict=True)) for measure_values in values]


def evaluate_run_arrays(run: ColumnarRun, index: QrelsIndex, measures: Sequence[Measure],
                        threads: int = THREADS, score_bits: int = DEFAULT_BITS,
                        max_docs: int | None = None) -> tuple[list[str], list[np.ndarray]]:
    """:func:`evaluate_run` as ``(turns, [values of each measure, one per turn]``): no Python object per value.

    ``max_docs`` (trec_eval's ``-M``) cuts each turn's ranking in trec_eval's order to its first items.
    """
    results = [np.zeros(0) for _ in measures]
    for measure in measures:
        if not measure.in_engine:
            raise ValueError(f"the engine does not compute {measure.name}")
    qrels_turn_of = index.turn_codes(run.turns)
    shared = qrels_turn_of >= 0
    if not shared.any():
        return [], results
    trec_order = (score_bits, True)
    order_of = [_ORDERS[m.definition.order] or trec_order for m in measures]
    orders = sorted(set(order_of))
    positive_only = not any(m.definition.judged_lines == ALL_LINES for m in measures)
    judged_lines = index.matcher(run, qrels_turn_of, positive_only=positive_only)
    chunk_starts = judged_lines.chunk_starts
    # A measure that counts the lines of any label among the top k (the judged share): the matcher's
    # lines ranked above k, plus (when it holds the positive lines only) the lines labelled 0 or less
    # among the top k: each batch's top k are collected, then looked up all at once (a few lines a turn).
    depths = {m.param for m in measures if m.definition.judged_lines == POSITIVE_LINES_AND_TOP}
    if len(depths) > 1:
        raise ValueError("one depth of the top items at a time")
    depth = next(iter(depths), None)
    # Qrels read without those lines (see evaluate._score_files) give the positive lines' share alone,
    # a lower bound.
    top_depth = depth if depth is not None and positive_only and not index._positive_only else None

    lengths = np.zeros(len(run.turns), dtype=np.int64)

    def rank(batches: range) -> dict:
        # Per order: (turns, positions, labels) of the judged lines; "top": the top items' (turns, ids).
        ranked: dict[tuple[int, bool] | str, tuple[list[Any], ...]] = {order: ([], [], []) for order in orders}
        ranked["top"] = ([], [])
        for k in batches:
            lines = slice(int(run.batch_lines[k]), int(run.batch_lines[k + 1]))
            first_turn = int(run.batch_turns[k])
            counts = np.bincount(run.turn_codes[lines] - first_turn)
            lengths[first_turn: first_turn + len(counts)] = counts
            rows, labels = judged_lines.batch(k)
            if len(rows) == 0 and top_depth is None:
                continue
            for bits, descending in orders:
                turns, positions, by_rank, top = _rank_batch(
                    run.turn_codes[lines], run.scores[lines], run.items.chunk(k),
                    run.item_codes[lines] - chunk_starts[k], rows, bits, descending,
                    top_depth if (bits, descending) == trec_order else None)
                for out, values in zip(ranked[bits, descending], (turns, positions, labels[by_rank]), strict=True):
                    out.append(values)
                if top is not None:
                    ranked["top"][0].append(run.turn_codes[lines][top])
                    ranked["top"][1].append(run.items.chunk(k).take(arrow_indices(run.item_codes[lines][top]
                                                                                  - chunk_starts[k])))
        return ranked

    parts = in_threads(rank, len(run.batch_lines) - 1, threads)
    unseen_on_top = None
    if top_depth is not None:
        top_turns = _concatenate([a for part in parts for a in part["top"][0]])
        items = [a for part in parts for a in part["top"][1]]
        found = np.zeros(len(top_turns), dtype=bool)
        if items:
            judged_turn = np.flatnonzero(qrels_turn_of[top_turns] >= 0)
            found[judged_turn] = index.labelled_nonpositive(
                qrels_turn_of[top_turns[judged_turn]],
                arrow()[0].concat_arrays(items).take(arrow_indices(judged_turn)))
        unseen_on_top = np.bincount(top_turns[found], minlength=len(run.turns))[shared]
    # Ranking orders by turn code first and batches follow each other in turn code order, so the
    # judged lines put together are in (turn, position) order, as the measures need them.
    segment_of_turn = np.cumsum(shared) - 1
    lengths = lengths[shared]
    turn_of_segment = qrels_turn_of[shared]
    run_turns = run.turns[shared].tolist()
    for order in orders:
        turns, positions, labels = (_concatenate([a for part in parts for a in part[order][i]]) for i in range(3))
        ranked = RankedTurns(segment_of_turn[turns], positions, labels, lengths, turn_of_segment, index,
                             unseen_on_top if order == trec_order else None)
        if max_docs is not None and order == trec_order:
            ranked = ranked.first(max_docs)
        for i, measure in enumerate(measures):
            if order_of[i] == order:
                vectorised = measure.definition.vectorised
                if vectorised is None:
                    raise ValueError(f"{measure.name} has no vectorised computation for the engine")
                results[i] = vectorised(ranked, measure)
    return run_turns, results


def _concatenate(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


