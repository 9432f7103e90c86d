"""Holes: the unjudged items in a run's top k, and each score as the interval they leave open.

A run that did not contribute to the pool is scored mostly on items nobody judged; trec_eval counts
them as non-relevant, and prints one number. :func:`hole_intervals` prints the range instead:

- A **hole** is an item in a turn's top ``depth`` in trec_eval's order (score descending, ties by item
  id descending: the order the measure reads) that the qrels lack or label below 0 (trec_eval's "in
  the pool but unjudged"). ``judged`` is the share of the top ``depth`` (or of the items retrieved,
  when fewer) that is not a hole.
- The interval ``[low, high]`` is the least and the greatest value the measure takes over **every**
  labelling of the turn's holes with labels from 0 to ``hole_label``, everything else as the qrels say;
  judged items keep their labels and unjudged items below the top ``depth`` count as non-relevant, as
  trec_eval counts them. It holds the score the run would get were its holes judged, whatever the
  labels (up to ``hole_label``). It is not "holes as 0" to "holes as ``hole_label``": nDCG and AP are
  not monotone in a hole's label (a relevant item found low raises the ideal DCG, or R, more than the
  run's DCG or precision sum), so either end may lie anywhere between.
- ``score`` is the value trec_eval prints (holes non-relevant); ``low <= score <= high``.

How the extremes are found, exactly and without trying all ``(L+1)^h`` labellings of ``h`` holes:
every supported measure is ``f(run's labels) / g(multiset of the turn's labels)``: nDCG's ideal DCG
and AP's, recall's and R-precision's R depend only on which labels the turn holds, and given those,
the numerator is larger the better the labels at the better ranks (nDCG: the gains times discounts
that do not grow with the rank, the rearrangement inequality; P, recall, success, RR, AP, R-precision
at a fixed R: moving a relevant item up to a non-relevant hole never lowers them). So for each
multiset of hole labels (``C(h+L, L)`` of them; for binary measures only how many holes are
relevant, ``h+1``), the best labels on the best-ranked holes give the greatest value, on the
worst-ranked holes the least; the interval is the least and greatest of those. The tests check this
against all labellings, and the end points against pytrec_eval. Measures for which this does not hold
(bpref and infAP read unjudged items, nDCG with a gain map need not reward higher labels...) are
refused, and so is a turn with more multisets than :data:`castregin.limits.MAX_HOLE_LABELLINGS`.

Each turn is ranked once (:func:`~castregin.evaluation.trec_rules.rank_topic`, holes unjudged: trec_eval's
score, by the measure's own rule). A labelling changes only the labels at the holes' positions and the
turn's label counts, so every multiset of a turn is scored at once, in numpy: a row per labelling, a
column per position that can count (the relevant or positive positions, to the cutoff, and the holes),
each row's sums added left to right as the rules add them. The values are the rules' to the last bit:
the same operations on the same doubles in the same order.

Means are over the turns ``evaluate`` averages (those in both the run and the qrels); the mean of the
turns' lows is the least mean, the turns' holes being labelled independently. Two runs' intervals are
found independently too: a hole both runs retrieve takes one label in truth, so a flip reported
(:func:`possible_flips`) may be impossible, but no possible flip goes unreported.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..data import Qrels, Run
from ..errors import CoverageWarning, InputError
from ..limits import MAX_HOLE_LABELLINGS, MAX_TREC_LABEL
from .evaluate import run_names, trec_eval_mean
from .measures import Measure, parse_measures
from .ranking import DEFAULT_SCORE_PRECISION, ranked_items, score_bits
from .trec_rules import Ranking, Settings, rank_topic

#: The measures whose interval is exact (see the module's docstring), by trec_eval name: binary ones
#: read whether a label reaches the relevance level, graded ones (nDCG) the label itself.
BINARY_MEASURES = frozenset({"P", "success", "recall", "recip_rank", "map", "map_cut", "Rprec"})
GRADED_MEASURES = frozenset({"ndcg", "ndcg_cut"})
#: As the refusal lists them.
SUPPORTED_NAMES = "P@k, Success@k, R@k, RR, AP, AP@k, Rprec, nDCG, nDCG@k (or their trec_eval names)"
#: Measures whose parameter is a cutoff (the default --depth).
_WITH_CUTOFF = frozenset({"P", "success", "recall", "map_cut", "ndcg_cut"})


@dataclass(frozen=True)
class TurnHoles:
    """One turn of one run under one measure: its holes and the interval of its value."""

    run: str
    measure: str
    turn: str
    depth: int
    #: The holes in the order of the ranking (the best-ranked first).
    hole_items: tuple[str, ...]
    judged: float
    score: float
    low: float
    high: float
    #: A labelling of the holes that gives ``low`` (``high``): ``{item: label}``.
    low_labels: Mapping[str, int] = field(default_factory=dict)
    high_labels: Mapping[str, int] = field(default_factory=dict)

    @property
    def holes(self) -> int:
        return len(self.hole_items)


@dataclass(frozen=True)
class RunInterval:
    """One run under one measure: the means over the turns averaged, and what was left out."""

    run: str
    measure: str
    depth: int
    turns: int
    holes: int
    turns_with_holes: int
    judged: float
    score: float
    low: float
    high: float
    #: Turns of the run that the qrels lack, and turns of the qrels that the run lacks (not averaged).
    run_turns_not_judged: int
    qrels_turns_not_run: int

    @property
    def width(self) -> float:
        return self.high - self.low


def check_supported(measure: Measure) -> None:
    """Refuse in one line a measure whose interval castregin cannot make exact."""
    definition = measure.definition
    why = None
    if definition.name not in BINARY_MEASURES | GRADED_MEASURES:
        why = "its value is not bounded exactly by this method"
    elif measure.judged_only:
        why = "judged-only evaluation (-J) drops the holes instead of counting them"
    elif measure.gains is not None or (definition.name == "ndcg" and measure.params):
        why = "a gain map need not reward higher labels"
    if why is not None:
        raise InputError(f"measure {measure.name!r}: {why}; analyze holes supports {SUPPORTED_NAMES}",
                         argument="measures")


def default_depth(measure: Measure) -> int | None:
    """The measure's cutoff, where it has one (P@5: 5), else None."""
    param = measure.param
    return int(param) if measure.definition.name in _WITH_CUTOFF and param is not None else None


def _fill_levels(measure: Measure, hole_label: int) -> list[int]:
    """The labels a hole may take that change the measure differently: for a binary measure only
    whether it reaches the level (0 or ``hole_label``), for nDCG every label from 0 to ``hole_label``."""
    if measure.definition.name in GRADED_MEASURES:
        return list(range(hole_label + 1))
    return [0, hole_label] if hole_label >= measure.rel else [0]


def labellings_to_try(holes: int, levels: int) -> int:
    """Multisets of ``holes`` labels from ``levels`` labels: ``C(holes + levels - 1, holes)``."""
    return math.comb(holes + levels - 1, holes)


@functools.cache
def _multisets(holes: int, levels: tuple[int, ...]) -> np.ndarray:
    """Every multiset of ``holes`` labels from ``levels``, a row each, its labels ascending, the rows in
    :func:`itertools.combinations_with_replacement`'s order (which decides the labelling reported on a tie)."""
    table = np.array(list(itertools.combinations_with_replacement(levels, holes)), dtype=np.int64)
    table = table.reshape(-1, holes)
    table.flags.writeable = False
    return table


@functools.cache
def _rank_discounts(size: int) -> np.ndarray:
    """``log2(i + 2)`` for the ranks i (from 0) below ``size``, as the rules compute it (``math.log2``, the C
    library's): the nDCG family's discounts."""
    table = np.array([math.log2(float(i + 2)) for i in range(size)])
    table.flags.writeable = False
    return table


def _discounts(positions: np.ndarray) -> np.ndarray:
    top = int(positions.max()) + 1 if len(positions) else 1
    return _rank_discounts(1 << max(top - 1, 1).bit_length())[positions]


#: Elements of the largest matrix a turn's labellings are scored in at once (rows are taken in slices).
_CHUNK_ELEMENTS = 1 << 20


def _last_sums(terms: np.ndarray) -> np.ndarray:
    """The sum along the last axis, added left to right as the rules' loops add (numpy's ``sum`` adds
    pairwise); a 0.0 added leaves any sum as it was, so rows padded with zeros sum alike."""
    if terms.shape[-1] == 0:
        return np.zeros(terms.shape[:-1])
    return np.cumsum(terms, axis=-1)[..., -1]


#: A position beyond every ranking: where rows of positions are padded.
_BEYOND = 1 << 40


class _TurnRanking:
    """One turn ranked once, at one relevance level and depth: what a labelling of its holes changes. A
    labelling changes the labels at the holes' positions and the turn's label counts only; each measure
    below reads those, and the positions it needs, for every labelling at once (and many turns at once)."""

    def __init__(self, ranking: Ranking, holes: Sequence[int]):
        #: The holes' positions, ascending (the best-ranked first).
        self.holes = np.array(holes, dtype=np.int64)
        hole_set = set(holes)
        #: The relevant positions that are not holes, ascending.
        self.relevant = np.array([i for i in ranking.relevant if i not in hole_set], dtype=np.int64)
        self.num_rel, self.num_ret = ranking.num_rel, ranking.num_ret
        positive = [(i, rel) for i, rel in enumerate(ranking.rels) if rel > 0]
        #: The positions of the judged items labelled above 0 (no hole is), and their labels.
        self.positive = np.array([i for i, _ in positive], dtype=np.int64)
        self.positive_labels = np.array([rel for _, rel in positive], dtype=np.int64)
        #: The turn's labels above 0 (the holes' aside), largest first: its ideal ranking.
        self.ideal = np.array(sorted((label for label, count in ranking.rel_levels.items() if label > 0
                                      for _ in range(count)), reverse=True), dtype=np.int64)


def _padded(rows: Sequence[np.ndarray], fill: int) -> np.ndarray:
    """Rows of different lengths as one matrix, each padded with ``fill``."""
    out = np.full((len(rows), max((len(row) for row in rows), default=0)), fill, dtype=np.int64)
    for k, row in enumerate(rows):
        out[k, :len(row)] = row
    return out


def _binary_values(turns: Sequence[_TurnRanking], relevant: np.ndarray, measure: Measure) -> np.ndarray:
    """A binary measure's value on each turn (all with as many holes) under each row of hole relevances (rows x
    holes, booleans, the holes in ranking order): turns x rows, with the rules' operations
    (:mod:`castregin.evaluation.measures`) in their order."""
    name = measure.definition.name
    cutoff = measure.params[0] if measure.params else 0  # the first of the rule's cutoffs gives its value
    holes = np.stack([turn.holes for turn in turns])  # turns x holes
    base = _padded([turn.relevant for turn in turns], _BEYOND)  # turns x relevant positions
    num_rel = np.array([turn.num_rel for turn in turns])[:, None] + relevant.sum(axis=1)[None, :]
    num_ret = np.array([turn.num_ret for turn in turns])
    shape = (len(turns), len(relevant))
    any_relevant = np.asarray(relevant.any(axis=1))[None, :]  # rows with a relevant hole
    if name in ("P", "success", "recall"):
        found = (base < cutoff).sum(axis=1)[:, None] + (holes < cutoff).astype(np.int64) @ relevant.T.astype(np.int64)
        if name == "P":
            return found.astype(np.float64) / float(cutoff)
        if name == "success":
            return (found > 0).astype(np.float64)
        return np.divide(found.astype(np.float64), num_rel.astype(np.float64), out=np.zeros(shape), where=num_rel != 0)
    if name == "recip_rank":
        # The first relevant hole of a row is the same hole in every turn (their holes are in ranking order).
        first_hole = np.where(any_relevant, holes[:, relevant.argmax(axis=1)], _BEYOND)
        first = np.minimum(first_hole, base[:, :1] if base.shape[1] else _BEYOND)
        return np.divide(1.0, (first + 1).astype(np.float64), out=np.zeros(shape), where=first < _BEYOND)
    if name == "Rprec":
        look_at = np.minimum(num_ret[:, None], num_rel)
        count = ((base[:, None, :] < look_at[:, :, None]).sum(axis=2)
                 + (relevant[None, :, :] & (holes[:, None, :] < look_at[:, :, None])).sum(axis=2))
        return np.divide(count.astype(np.float64), num_rel.astype(np.float64), out=np.zeros(shape),
                         where=look_at != 0)
    # AP and AP@k: found / (position + 1) at each relevant position (before the cutoff), added in ranking order.
    positions = np.concatenate([base, holes], axis=1)
    # -1: relevant, not a hole; -2: padding; j: hole j.
    kinds = np.concatenate([np.where(base < _BEYOND, -1, -2), np.broadcast_to(np.arange(holes.shape[1]), holes.shape)],
                           axis=1)
    if name == "map_cut":
        kinds = np.where(positions < cutoff, kinds, -2)
    positions = np.where(kinds == -2, _BEYOND, positions)
    # The events counted come first: the columns beyond the longest row's add nothing.
    order = np.argsort(positions, axis=1, kind="stable")[:, :int((kinds != -2).sum(axis=1).max(initial=0))]
    positions, kinds = np.take_along_axis(positions, order, axis=1), np.take_along_axis(kinds, order, axis=1)
    hole_flags = relevant[:, np.maximum(kinds, 0)].transpose(1, 0, 2)  # turns x rows x events
    flags = np.where((kinds == -1)[:, None, :], True, hole_flags & (kinds >= 0)[:, None, :])
    precision = np.cumsum(flags, axis=2) / (positions + 1).astype(np.float64)[:, None, :]
    total = _last_sums(np.where(flags, precision, 0.0))
    # AP is 0 without a relevant item retrieved; AP@k without one in the qrels.
    where = num_rel != 0
    if name == "map":
        where = any_relevant | (base[:, :1] < _BEYOND) if base.shape[1] else any_relevant
    return np.divide(total, num_rel.astype(np.float64), out=np.zeros(shape), where=np.broadcast_to(where, shape))


def _ndcg_values(turns: Sequence[_TurnRanking], multisets: np.ndarray, measure: Measure
                 ) -> tuple[np.ndarray, np.ndarray]:
    """nDCG's (or nDCG@k's) value on each turn (all with as many holes) with each multiset's labels on the holes
    worst-first (the largest on the worst-ranked hole) and best-first: two arrays turns x multisets, with the
    rules' operations in their order."""
    cutoff = measure.params[0] if measure.definition.name == "ndcg_cut" else None
    limit = _BEYOND if cutoff is None else cutoff
    holes = np.stack([turn.holes for turn in turns])
    # The DCG: the positive labels' gains over their discounts, in ranking order (a label of 0 adds 0.0).
    positive = _padded([turn.positive for turn in turns], _BEYOND)
    labels = _padded([turn.positive_labels for turn in turns], 0)
    positions = np.concatenate([positive, holes], axis=1)
    kinds = np.concatenate([np.where(positive < limit, -1, -2),
                            np.where(holes < limit, np.arange(holes.shape[1]), -2)], axis=1)
    gains = np.concatenate([labels, np.zeros_like(holes)], axis=1)
    positions = np.where(kinds == -2, _BEYOND, positions)
    order = np.argsort(positions, axis=1, kind="stable")
    # The events counted come first: the columns beyond the longest row's add nothing.
    events = int((kinds != -2).sum(axis=1).max(initial=0))
    order = order[:, :events]
    positions, kinds = np.take_along_axis(positions, order, axis=1), np.take_along_axis(kinds, order, axis=1)
    gains = np.take_along_axis(gains, order, axis=1)
    counted = kinds != -2
    discounts = np.where(counted, _discounts(np.where(counted, positions, 0).ravel()).reshape(positions.shape), 1.0)
    # The ideal DCG: the largest labels of the turn's and the holes', in descending order (to the cutoff).
    ideal = _padded([turn.ideal if cutoff is None else turn.ideal[:cutoff] for turn in turns], 0)
    hole_labels = multisets[:, ::-1] if cutoff is None else multisets[:, ::-1][:, :cutoff]
    width = ideal.shape[1] + hole_labels.shape[1] if cutoff is None else min(cutoff,
                                                                             ideal.shape[1] + hole_labels.shape[1])
    ideal_discounts = _discounts(np.arange(width))
    low, high = np.empty((len(turns), len(multisets))), np.empty((len(turns), len(multisets)))
    step = max(1, _CHUNK_ELEMENTS // max(len(multisets) * (ideal.shape[1] + hole_labels.shape[1] + positions.shape[1]),
                                         1))
    for begin in range(0, len(turns), step):
        part = slice(begin, begin + step)
        count = len(ideal[part])
        merged = np.concatenate([np.broadcast_to(ideal[part][:, None, :], (count, len(multisets), ideal.shape[1])),
                                 np.broadcast_to(hole_labels[None, :, :], (count, *hole_labels.shape))], axis=2)
        merged = -np.sort(-merged, axis=2)[:, :, :width]
        ideal_dcg = _last_sums(merged / ideal_discounts)
        for assigned, out in ((multisets, low), (multisets[:, ::-1], high)):
            # Each event's gain: the turn's label, or the hole's under each multiset (turns x multisets x events).
            hole_gain = assigned[:, np.maximum(kinds[part], 0)].transpose(1, 0, 2)
            gain = np.where((kinds[part] == -1)[:, None, :], gains[part][:, None, :],
                            np.where((kinds[part] >= 0)[:, None, :], hole_gain, 0))
            dcg = _last_sums(gain.astype(np.float64) / discounts[part][:, None, :])
            fallback = np.zeros(dcg.shape) if cutoff is None else dcg.copy()
            out[part] = np.divide(dcg, ideal_dcg, out=fallback, where=ideal_dcg > 0.0)
    return low, high


def _labelled_values(turns: Sequence[_TurnRanking], multisets: np.ndarray, measure: Measure
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The measure's value on each turn with each multiset's labels on the holes worst-first and best-first (two
    arrays turns x multisets), the turns taken a slice at a time (the arrays hold turns x multisets x positions)."""
    width = max(max(len(turn.relevant), len(turn.positive), len(turn.ideal)) for turn in turns) + multisets.shape[1]
    step = max(1, _CHUNK_ELEMENTS // (2 * len(multisets) * width))
    if len(turns) > step:
        parts = [_labelled_values(turns[begin:begin + step], multisets, measure)
                 for begin in range(0, len(turns), step)]
        return np.concatenate([low for low, _ in parts]), np.concatenate([high for _, high in parts])
    if measure.definition.name in GRADED_MEASURES:
        return _ndcg_values(turns, multisets, measure)
    relevant = multisets >= measure.rel
    values = _binary_values(turns, np.concatenate([relevant, relevant[:, ::-1]]), measure)
    return values[:, :len(multisets)], values[:, len(multisets):]


def _check_labellings(run_name: str, turn: str, holes: int, measure: Measure, depth: int, hole_label: int) -> None:
    count = labellings_to_try(holes, len(_fill_levels(measure, hole_label)))
    if count > MAX_HOLE_LABELLINGS:
        raise InputError(
            f"run {run_name!r}, turn {turn}: {holes} holes in the top {depth} with labels 0..{hole_label} "
            f"make {count:,} label multisets to try for {measure.name}, more than {MAX_HOLE_LABELLINGS:,} "
            "(castregin.limits.MAX_HOLE_LABELLINGS); use a smaller --depth or --hole-label, or a binary measure")


class _RankedTurn(NamedTuple):
    """One turn of a run: its holes at each depth, and its rankings by relevance level and depth."""

    turn: str
    holes: dict[int, list[str]]
    judged: dict[int, float]
    rankings: dict[tuple[int, int], _TurnRanking]
    scores: dict[str, float]
    #: The relevance level of the ranking each measure reads (nDCG reads the labels, at any level).
    levels: dict[str, int]


def _ranked_turn(turn: str, scores: Mapping[str, float], labels: Mapping[str, int], measures: Sequence[Measure],
                 depths: Mapping[str, int], bits: int, order: Sequence[str] | None = None) -> _RankedTurn:
    """Rank a turn once (``order``: its items as :func:`~castregin.evaluation.ranking.ranked_items` ranks them, when
    the caller has it) and score it with each measure's rule, holes unjudged: trec_eval's score."""
    if order is None:
        order = ranked_items(scores, bits)
    holes, judged, rankings, values, levels = {}, {}, {}, {}, {}
    by_level: dict[int, tuple[Settings, Ranking]] = {}
    for measure in measures:
        depth = depths[measure.name]
        if depth not in holes:
            top = order[:depth]
            holes[depth] = [item for item in top if labels.get(item, -1) < 0]
            judged[depth] = (len(top) - len(holes[depth])) / len(top) if top else 1.0
        rule = measure.definition.rule
        if rule is None:  # every supported measure has one (check_supported)
            raise InputError(f"measure {measure.name!r} has no per-turn rule", argument="measures")
        # nDCG reads the labels, not the level: any level's ranking serves it.
        level = measure.rel if measure.definition.name in BINARY_MEASURES else next(iter(by_level), measure.rel)
        if level not in by_level:
            settings = Settings(level, score_bits=bits)
            # Not strict, as evaluate: a turn labelled only below 0 has nothing relevant.
            by_level[level] = settings, rank_topic(turn, scores, labels, settings, strict=False, order=order)
        settings, ranking = by_level[level]
        values[measure.name], levels[measure.name] = rule(ranking, settings, measure.params)[0], level
        if (level, depth) not in rankings:
            positions = [i for i, item in enumerate(order[:depth]) if labels.get(item, -1) < 0]
            rankings[level, depth] = _TurnRanking(ranking, positions)
    return _RankedTurn(turn, holes, judged, rankings, values, levels)


def _measure_rows(run_name: str, ranked: Sequence[_RankedTurn], measure: Measure, depth: int, hole_label: int
                  ) -> list[TurnHoles]:
    """The rows of one measure on a run's ranked turns: every turn with as many holes scored at once."""
    levels = _fill_levels(measure, hole_label)
    for turn in ranked:
        if turn.holes[depth]:
            _check_labellings(run_name, turn.turn, len(turn.holes[depth]), measure, depth, hole_label)
    ends: dict[str, tuple[float, float, dict[str, int], dict[str, int]]] = {}
    by_holes: dict[int, list[_RankedTurn]] = {}
    for turn in ranked:
        if turn.holes[depth]:
            by_holes.setdefault(len(turn.holes[depth]), []).append(turn)
    for count, group in by_holes.items():
        multisets = _multisets(count, tuple(levels))
        least, greatest = _labelled_values([turn.rankings[turn.levels[measure.name], depth] for turn in group],
                                           multisets, measure)
        low_at, high_at = least.argmin(axis=1).tolist(), greatest.argmax(axis=1).tolist()
        for k, turn in enumerate(group):
            # The first multiset (in the order tried) that goes below (above) trec_eval's score, as a loop keeping
            # the strictly better one finds it; else the score, all holes 0.
            score, items = turn.scores[measure.name], turn.holes[depth]
            low, high = score, score
            low_labels, high_labels = dict.fromkeys(items, 0), dict.fromkeys(items, 0)
            if least[k, low_at[k]] < low:
                low = float(least[k, low_at[k]])
                low_labels = dict(zip(items, multisets[low_at[k]].tolist(), strict=True))
            if greatest[k, high_at[k]] > high:
                high = float(greatest[k, high_at[k]])
                high_labels = dict(zip(items, multisets[high_at[k], ::-1].tolist(), strict=True))
            ends[turn.turn] = (low, high, low_labels, high_labels)
    rows = []
    for turn in ranked:
        score, items = turn.scores[measure.name], turn.holes[depth]
        if not items:
            rows.append(TurnHoles(run_name, measure.name, turn.turn, depth, (), turn.judged[depth], score, score,
                                  score))
            continue
        low, high, low_labels, high_labels = ends[turn.turn]
        rows.append(TurnHoles(run_name, measure.name, turn.turn, depth, tuple(items), turn.judged[depth], score, low,
                              high, low_labels, high_labels))
    return rows


def turn_holes(run_name: str, turn: str, scores: Mapping[str, float], labels: Mapping[str, int], measure: Measure,
               depth: int, hole_label: int, bits: int, order: Sequence[str] | None = None) -> TurnHoles:
    """The holes of one turn and the exact interval of the measure's value over their labellings (``order``: the
    turn's items as :func:`~castregin.evaluation.ranking.ranked_items` ranks them, when the caller has it)."""
    ranked = _ranked_turn(turn, scores, labels, [measure], {measure.name: depth}, bits, order)
    return _measure_rows(run_name, [ranked], measure, depth, hole_label)[0]


def _mean(values: Mapping[str, float]) -> float:
    # evaluate's mean: the turns in byte order, summed left to right.
    return trec_eval_mean([values[turn] for turn in sorted(values)], len(values))


def summarise(rows: Sequence[TurnHoles], run: Run, qrels: Qrels, run_name: str, measure: Measure,
              depth: int) -> RunInterval:
    """The means of one run's per-turn rows under one measure."""
    def of(attribute):
        return _mean({row.turn: getattr(row, attribute) for row in rows})

    return RunInterval(run_name, measure.name, depth, len(rows), sum(row.holes for row in rows),
                       sum(1 for row in rows if row.holes), of("judged"), of("score"), of("low"), of("high"),
                       sum(1 for turn in run.scores if turn not in qrels.labels),
                       sum(1 for turn in qrels.labels if turn not in run.scores))


def possible_flips(intervals: Sequence[RunInterval]) -> list[dict]:
    """The pairs of runs (under the same measure) whose order labelling the holes could reverse.

    For two runs ``a`` ahead of ``b`` on trec_eval's score (on a tie, ``a`` first by name), ``b`` could
    end strictly above ``a`` when ``b.high > a.low``; on a tie, either could end above the other unless
    both intervals are that one point. Each run's interval is found on its own (conservative: a hole
    both runs retrieve takes one label in truth).
    """
    out = []
    by_measure: dict[str, list[RunInterval]] = {}
    for interval in intervals:
        by_measure.setdefault(interval.measure, []).append(interval)
    for measure, group in by_measure.items():
        ordered = sorted(group, key=lambda r: (-r.score, r.run))
        for a, b in itertools.combinations(ordered, 2):
            tie = a.score == b.score
            if b.high > a.low or (tie and a.high > b.low):
                out.append({"measure": measure, "run_a": a.run, "run_b": b.run, "score_a": a.score,
                            "score_b": b.score, "low_a": a.low, "high_a": a.high, "low_b": b.low,
                            "high_b": b.high, "tie": tie})
    return out


@dataclass
class HolesResult:
    """What :func:`hole_intervals` finds: per-turn rows, per-run means, possible flips, and its settings."""

    turns: list[TurnHoles]
    runs: list[RunInterval]
    flips: list[dict]
    settings: dict

    def records(self) -> dict:
        """As plain data (what ``--format json`` and :func:`castregin.api.holes` give):
        ``{"settings", "runs", "flips", "turns"}``, each turn with its holes and the labellings of its ends."""
        turns = [{"run": t.run, "measure": t.measure, "turn": t.turn, "depth": t.depth, "holes": t.holes,
                  "judged": t.judged, "score": t.score, "low": t.low, "high": t.high,
                  "hole_items": list(t.hole_items), "low_labels": dict(t.low_labels),
                  "high_labels": dict(t.high_labels)} for t in self.turns]
        runs = [{**vars(r), "width": r.width} for r in self.runs]
        return {"settings": self.settings, "runs": runs, "flips": self.flips, "turns": turns}


def hole_intervals(runs: Sequence[Run], qrels: Qrels, measures: Sequence[str | Measure] = ("nDCG@3",),
                   depth: int | None = None, hole_label: int | None = None, rel_level: int = 2,
                   score_precision: str = DEFAULT_SCORE_PRECISION) -> HolesResult:
    """Each run's holes at ``depth`` and its score under each measure as an exact interval.

    ``depth`` defaults to each measure's cutoff (nDCG@3: 3) and must be given for measures without
    one (AP, RR, Rprec, nDCG). ``hole_label`` (the best label a hole may have) defaults to the qrels'
    largest label. See the module's docstring for what the interval means and how it is found.
    """
    if not runs:
        raise InputError("give at least one run", argument="runs")
    bits = score_bits(score_precision)
    parsed = parse_measures(list(measures), rel_level)
    if not parsed:
        raise InputError("give at least one measure", argument="measures")
    for measure in parsed:
        check_supported(measure)
    depths = {}
    for measure in parsed:
        chosen = depth if depth is not None else default_depth(measure)
        if chosen is None:
            raise InputError(f"measure {measure.name} has no cutoff: give the depth of the holes (--depth)",
                             argument="depth")
        if chosen < 1:
            raise InputError(f"the depth must be 1 or more, not {chosen}", argument="depth")
        depths[measure.name] = chosen
    largest = max((label for items in qrels.labels.values() for label in items.values()), default=0)
    if hole_label is None:
        hole_label = max(largest, 0)
    if isinstance(hole_label, bool) or not isinstance(hole_label, int) or not 0 <= hole_label <= MAX_TREC_LABEL:
        raise InputError(f"the hole label (the best label a hole may take; default: the qrels' largest) must be a "
                         f"whole number from 0 to {MAX_TREC_LABEL}, not {hole_label!r}", argument="hole_label")
    names = run_names(list(runs))
    turns, summaries = [], []
    for run, name in zip(runs, names, strict=True):
        shared = sorted(turn for turn in run.scores if turn in qrels.labels)
        if not shared:
            warnings.warn(CoverageWarning(f"run {name!r} shares no turn with qrels {qrels.name!r}: its means are 0 "
                                          "over no turn; check the turn ids"), stacklevel=2)
        # Each turn ranked once, whatever the measures; then each measure's turns scored together.
        ranked = [_ranked_turn(turn, run.scores[turn], qrels.labels[turn], parsed, depths, bits,
                               ranked_items(run.scores[turn], bits)) for turn in shared]
        for measure in parsed:
            rows = _measure_rows(name, ranked, measure, depths[measure.name], hole_label)
            turns.extend(rows)
            summaries.append(summarise(rows, run, qrels, name, measure, depths[measure.name]))
    settings = {"qrels": qrels.name, "measures": [m.name for m in parsed], "depths": depths,
                "hole_label": hole_label, "qrels_largest_label": largest, "rel_level": rel_level,
                "score_precision": score_precision}
    return HolesResult(turns, summaries, possible_flips(summaries), settings)
