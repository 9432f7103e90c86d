"""trec_eval's measures on whole arrays: P@k, R@k, AP, RR, nDCG@k, nDCG, Rprec, Success@k, Judged@k.

One run against one qrels is a handful of numpy passes over all of the run's lines at once,
instead of a loop per turn over Python objects. The numbers are trec_eval 9's (as pytrec_eval
computes them), including the floating-point details that decide the last bits:

- Items are ordered by score descending, compared as 32-bit floats (trec_eval stores scores as
  ``float``), ties broken by item id in descending byte order (``strcmp``); the rank column is
  ignored. Judged@k follows ir_measures' judged provider instead: 64-bit scores, ties by item id
  ascending, divided by ``min(k, items retrieved)``.
- An item is relevant when it is judged with a label >= ``rel``; unjudged items never are. A turn
  without relevant items scores 0 on binary measures (R@k, AP and Rprec divide by nothing).
- nDCG's gain is the label when it is positive, else 0 (negative labels count as 0, as in
  trec_eval); the ideal ranking sorts the turn's positive labels in descending order; the
  discount is ``log2(rank + 1)`` from the C library (``math.log2``).
- Sums (AP, DCG, ideal DCG) are accumulated left to right in ranking order, one double addition
  after the other, exactly as trec_eval's loops do; numpy's pairwise ``sum`` would differ in
  the last bits, so :func:`sequential_sums` adds position by position across all turns at once.

Turns are the run's turns that the qrels judge; means and ``--complete`` are the caller's job
(:mod:`castregin.evaluate`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .formats.columnar import (
    THREADS,
    ColumnarQrels,
    ColumnarRun,
    arrow,
    arrow_indices,
    byte_order_ranks,
    in_threads,
    lookup,
    to_numpy,
)
from .measures import EngineSpec

_LOG2: list[float] = []


def log2_table(n: int) -> np.ndarray:
    """``log2(i)`` for i in 0..n-1 from the C library, as trec_eval computes it (index 0 unused)."""
    if len(_LOG2) < n:
        _LOG2.extend(math.log2(i) if i else 0.0 for i in range(len(_LOG2), n))
    return np.array(_LOG2[:n])


def sequential_sums(values: np.ndarray, segments: np.ndarray, n: int) -> np.ndarray:
    """Per-segment sums of ``values``, added strictly left to right as a C loop does.

    ``segments`` (non-decreasing, in ``0..n-1``) says which segment each value belongs to.
    Step j adds the j-th value of every segment that has one: as many vector additions as the
    longest segment, each over the segments still running.
    """
    out = np.zeros(n)
    if len(values) == 0:
        return out
    starts = np.flatnonzero(np.r_[True, segments[1:] != segments[:-1]])
    lengths = np.diff(np.r_[starts, len(values)])
    by_length = np.argsort(-lengths, kind="stable")
    starts, lengths, ids = starts[by_length], lengths[by_length], segments[starts][by_length]
    running = np.searchsorted(-lengths, -np.arange(int(lengths[0])), side="left")  # segments longer than j
    acc = np.zeros(len(starts))
    for j, count in enumerate(running.tolist()):
        if count == 1:
            # One segment left: numpy's cumsum is a sequential accumulation too.
            rest = values[starts[0] + j: starts[0] + lengths[0]]
            acc[0] = np.cumsum(np.r_[acc[0], rest])[-1]
            break
        acc[:count] += values[starts[:count] + j]
    out[ids] = acc
    return out


def _descending_float_key(scores: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned keys whose ascending order is the scores' descending order (as 32 or 64-bit floats).

    ``-0.0`` becomes ``0.0`` first, since C and Python compare them equal (a tie, then item ids).
    """
    if bits == 32:
        floats, unsigned, sign = scores.astype(np.float32) + np.float32(0.0), np.uint32, np.uint32(1 << 31)
    else:
        floats, unsigned, sign = scores.astype(np.float64) + 0.0, np.uint64, np.uint64(1 << 63)
    raw = floats.view(unsigned)
    # IEEE floats order like sign-magnitude integers: negative ones keep their bits (larger
    # magnitude sorts later), positive ones are complemented (larger value sorts earlier).
    return np.where(raw & sign, raw, ~raw & ~sign)


def _break_ties(order: np.ndarray | None, sorted_keys, judged: np.ndarray, items, item_codes: np.ndarray,
                descending: bool) -> np.ndarray | None:
    """Reorder runs of equal ``sorted_keys`` (turn and score) by item id, in byte order.

    ``order`` None stands for the identity (lines already in order) and is returned when no tie
    matters. ``judged`` marks the judged lines (in the lines' own order): a tie without a judged
    line moves only unjudged lines among positions no measure looks at, so it is left alone.
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


class _QrelsLines:
    """Some of a qrels' lines sorted by (turn, item): turn t's are ``turn_starts[t]:turn_starts[t + 1]``."""

    def __init__(self, qrels: ColumnarQrels, keep: np.ndarray | None):
        turn_codes, item_codes, labels = qrels.turn_codes, qrels.item_codes, qrels.labels
        if keep is not None:
            turn_codes, item_codes, labels = turn_codes[keep], item_codes[keep], labels[keep]
        order = np.lexsort((item_codes, turn_codes))
        self.item_codes = item_codes[order].astype(np.int64)
        self.labels = labels[order]
        self.turn_starts = np.searchsorted(turn_codes[order], np.arange(len(qrels.turns) + 1))


class QrelsIndex:
    """One qrels prepared for many runs: its lines by turn, relevant counts, ideal DCGs."""

    def __init__(self, qrels: ColumnarQrels):
        self.qrels = qrels
        self.turns = qrels.turns
        self.n_items = max(len(qrels.items), 1)
        self._lines: dict[bool, _QrelsLines] = {}
        self._num_rel: dict[int, np.ndarray] = {}
        self._ideal: dict[int | None, np.ndarray] = {}

    def lines(self, positive_only: bool) -> _QrelsLines:
        """All lines, or those labelled 1 or more: the only ones P, R, AP, RR, nDCG and Rprec see.

        A judged item whose label is 0 or less is neither relevant (``rel`` is at least 1) nor
        has a gain, so for those measures it is as good as unjudged; only Judged@k counts it.
        """
        if positive_only not in self._lines:
            self._lines[positive_only] = _QrelsLines(self.qrels, self.qrels.labels > 0 if positive_only else None)
        return self._lines[positive_only]

    def judged_lines(self, run: ColumnarRun, qrels_turn_of: np.ndarray, positive_only: bool = False,
                     threads: int = THREADS) -> tuple[np.ndarray, np.ndarray]:
        """The run's judged lines (ascending) and their labels (with ``positive_only``: labels >= 1).

        ``qrels_turn_of`` maps the run's turns to the qrels' (-1: not judged). Batch by batch, the
        batch's distinct items are looked up among the items the qrels judge for the batch's
        turns, then (turn, item) among the qrels lines of those turns: small tables, built and
        probed in the processor's cache, where one table for the whole run would not fit.
        """
        pc = arrow()[1]
        qrels = self.lines(positive_only)
        # The qrels lines of each run turn, one run turn after the other (in run turn code order).
        turn = np.maximum(qrels_turn_of, 0)
        begin = np.where(qrels_turn_of >= 0, qrels.turn_starts[turn], 0)
        count = np.where(qrels_turn_of >= 0, qrels.turn_starts[turn + 1] - begin, 0)
        first = np.r_[0, np.cumsum(count)]
        qrels_lines = np.repeat(begin - first[:-1], count) + np.arange(first[-1])
        line_items = qrels.item_codes[qrels_lines]
        line_strings = self.qrels.items.take(arrow_indices(line_items))
        # (run turn, qrels item) of each of these lines: sorted, since each turn's lines are sorted by item.
        line_keys = np.repeat(np.arange(len(count), dtype=np.int64), count) * self.n_items + line_items
        line_labels = qrels.labels[qrels_lines]
        chunk_starts = np.cumsum([0, *(len(chunk) for chunk in run.items.chunks)])

        def look_up(batches: range):
            rows, labels = [], []
            for k in batches:
                lines = slice(int(run.batch_lines[k]), int(run.batch_lines[k + 1]))
                judged = slice(int(first[run.batch_turns[k]]), int(first[run.batch_turns[k + 1]]))
                if judged.start == judged.stop:
                    continue
                # Where each distinct run item first occurs among these qrels lines (-1: nowhere).
                found = pc.index_in(run.items.chunk(k),
                                    value_set=line_strings.slice(judged.start, judged.stop - judged.start))
                item_of = np.r_[line_items[judged], -1][to_numpy(found, np.int32, fill=-1)]
                row_item = item_of[run.item_codes[lines] - chunk_starts[k]]
                hits = np.flatnonzero(row_item >= 0)
                keys = run.turn_codes[lines][hits].astype(np.int64) * self.n_items + row_item[hits]
                batch_keys = line_keys[judged]
                at = np.minimum(np.searchsorted(batch_keys, keys), len(batch_keys) - 1)
                hit = batch_keys[at] == keys
                rows.append(hits[hit] + lines.start)
                labels.append(line_labels[judged][at[hit]])
            return rows, labels

        parts = in_threads(look_up, len(run.batch_lines) - 1, threads)
        rows = [r for part_rows, _ in parts for r in part_rows]
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(rows), np.concatenate([x for _, part_labels in parts for x in part_labels])

    def num_rel(self, rel: int) -> np.ndarray:
        """Per qrels turn, the number of items judged >= ``rel`` (trec_eval's num_rel)."""
        if rel not in self._num_rel:
            self._num_rel[rel] = np.bincount(self.qrels.turn_codes[self.qrels.labels >= rel],
                                             minlength=len(self.turns))
        return self._num_rel[rel]

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray:
        """Per qrels turn, the DCG of the ideal ranking (positive labels descending) at ``cutoff``."""
        if cutoff not in self._ideal:
            positive = self.qrels.labels > 0
            turns = self.qrels.turn_codes[positive]
            labels = self.qrels.labels[positive]
            order = np.lexsort((-labels, turns))
            turns, labels = turns[order], labels[order]
            position = _positions(turns)
            if cutoff is not None:
                keep = position < cutoff
                turns, labels, position = turns[keep], labels[keep], position[keep]
            gains = labels / log2_table(int(position.max()) + 3 if len(position) else 3)[position + 2]
            self._ideal[cutoff] = sequential_sums(gains, turns, len(self.turns))
        return self._ideal[cutoff]


def _positions(segments: np.ndarray) -> np.ndarray:
    """0-based position of each element within its run of equal (sorted) segment ids."""
    if len(segments) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, segments[1:] != segments[:-1]])
    lengths = np.diff(np.r_[starts, len(segments)])
    return np.arange(len(segments)) - np.repeat(starts, lengths)


class _Ranked:
    """The judged lines of a run in one ranking order: turn segment, position and label of each.

    Unjudged lines only take up positions, so after ranking only judged lines are kept: in a
    run of a thousand items per turn that is a tenth of the data or less.
    """

    def __init__(self, segment: np.ndarray, position: np.ndarray, labels: np.ndarray, lengths: np.ndarray,
                 turn_of_segment: np.ndarray):
        self.segment = segment
        self.position = position
        self.labels = labels
        self.lengths = lengths
        self.turn_of_segment = turn_of_segment

    def count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.segment[mask], minlength=len(self.lengths))


def _rank(order: np.ndarray | None, turn_codes: np.ndarray, judged_rows: np.ndarray, judged_labels: np.ndarray,
          qrels_turn_of: np.ndarray) -> _Ranked:
    """Positions of the judged lines once all lines are in ``order`` (None: as they are)."""
    turn_sorted = turn_codes if order is None else turn_codes[order]
    starts = np.flatnonzero(np.r_[True, turn_sorted[1:] != turn_sorted[:-1]])
    lengths = np.diff(np.r_[starts, len(turn_sorted)])
    turn_of_segment = qrels_turn_of[turn_sorted[starts]]
    del turn_sorted
    if order is None:
        sorted_index = judged_rows
    else:
        inverse = np.empty(len(order), dtype=np.int64)
        inverse[order] = np.arange(len(order))
        sorted_index = inverse[judged_rows]
        del inverse
        by_rank = np.argsort(sorted_index, kind="stable")
        sorted_index, judged_labels = sorted_index[by_rank], judged_labels[by_rank]
    segment = np.searchsorted(starts, sorted_index, side="right") - 1
    return _Ranked(segment, sorted_index - starts[segment], judged_labels, lengths, turn_of_segment)


def evaluate_run(run: ColumnarRun, index: QrelsIndex, specs: Sequence[EngineSpec],
                 threads: int = THREADS) -> list[dict[str, float]]:
    """Per-turn values of each spec, ``[{turn: value}]``, for the run's turns that the qrels judge.

    ``threads`` share the lookup of the run's judged lines, batch by batch.
    """
    results: list[dict[str, float]] = [{} for _ in specs]
    qrels_turn_of = lookup(run.turns, index.turns)
    shared = qrels_turn_of >= 0
    if not shared.any():
        return results
    positive_only = all(s.kind != "Judged" for s in specs)
    judged_rows, judged_labels = index.judged_lines(run, qrels_turn_of, positive_only, threads)
    turn_codes, item_codes, scores = run.turn_codes, run.item_codes, run.scores
    if not shared.all():
        # Lines of turns the qrels lack take no part; judged lines are never among them.
        keep = shared[turn_codes]
        judged_rows = (np.cumsum(keep) - 1)[judged_rows]
        turn_codes, item_codes, scores = turn_codes[keep], item_codes[keep], scores[keep]
    judged = np.zeros(len(turn_codes), dtype=bool)
    judged[judged_rows] = True

    trec_specs = [s for s in specs if s.kind != "Judged"]
    if trec_specs:
        key = _descending_float_key(scores, 32).astype(np.uint64)
        key |= turn_codes.astype(np.uint64) << np.uint64(32)
        order = None if np.all(key[1:] >= key[:-1]) else np.argsort(key, kind="stable")
        order = _break_ties(order, [key if order is None else key[order]], judged, run.items, item_codes,
                            descending=True)
        del key
        ranked = _rank(order, turn_codes, judged_rows, judged_labels, qrels_turn_of)
        del order
        run_turns = index.turns[ranked.turn_of_segment].tolist()
        for i, spec in enumerate(specs):
            if spec.kind != "Judged":
                results[i] = dict(zip(run_turns, _trec_measure(spec, ranked, index).tolist()))
    if len(trec_specs) < len(specs):
        float_key = _descending_float_key(scores, 64)
        order = np.lexsort((float_key, turn_codes))
        order = _break_ties(order, [turn_codes[order], float_key[order]], judged, run.items, item_codes,
                            descending=False)
        ranked = _rank(order, turn_codes, judged_rows, judged_labels, qrels_turn_of)
        run_turns = index.turns[ranked.turn_of_segment].tolist()
        everything = np.ones(len(ranked.segment), dtype=bool)
        for i, spec in enumerate(specs):
            if spec.kind == "Judged":
                cutoff = ranked.lengths if spec.cutoff is None else np.minimum(spec.cutoff, ranked.lengths)
                top = everything if spec.cutoff is None else ranked.position < spec.cutoff
                results[i] = dict(zip(run_turns, (ranked.count(top) / cutoff).tolist()))
    return results


def _trec_measure(spec: EngineSpec, ranked: _Ranked, index: QrelsIndex) -> np.ndarray:
    n = len(ranked.lengths)
    if spec.kind == "nDCG":
        gain = ranked.labels > 0
        if spec.cutoff is not None:
            gain &= ranked.position < spec.cutoff
        where = np.flatnonzero(gain)
        discount = log2_table(int(ranked.position[where].max()) + 3 if len(where) else 3)
        dcg = sequential_sums(ranked.labels[where] / discount[ranked.position[where] + 2], ranked.segment[where], n)
        ideal = index.ideal_dcg(spec.cutoff)[ranked.turn_of_segment]
        return np.divide(dcg, ideal, out=dcg.copy(), where=ideal > 0)
    relevant = ranked.labels >= spec.rel
    num_rel = index.num_rel(spec.rel)[ranked.turn_of_segment]
    if spec.kind in ("P", "R", "Success"):
        found = ranked.count(relevant & (ranked.position < spec.cutoff))
        if spec.kind == "P":
            return found / float(spec.cutoff)
        if spec.kind == "Success":
            return (found > 0).astype(np.float64)
        return _ratio(found, num_rel)
    if spec.kind == "Rprec":
        return _ratio(ranked.count(relevant & (ranked.position < num_rel[ranked.segment])), num_rel)
    where = np.flatnonzero(relevant)
    segment = ranked.segment[where]
    if spec.kind == "RR":
        out = np.zeros(n)
        first = np.ones(len(segment), dtype=bool)
        first[1:] = segment[1:] != segment[:-1]
        out[segment[first]] = 1.0 / (ranked.position[where][first] + 1).astype(np.float64)
        return out
    if spec.kind == "AP":
        rel_so_far = _positions(segment) + 1
        precision = rel_so_far / (ranked.position[where] + 1).astype(np.float64)
        return _ratio(sequential_sums(precision, segment, n), num_rel)
    raise ValueError(f"the engine does not compute {spec.kind}")


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator as doubles, 0 where the denominator is 0 (trec_eval's guard)."""
    numerator = numerator.astype(np.float64)
    return np.divide(numerator, denominator.astype(np.float64), out=np.zeros_like(numerator), where=denominator > 0)
