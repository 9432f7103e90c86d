"""The gain measures: ndcg, ndcg_cut, ndcg_rel, Rndcg, G and binG.

Each rule reads a turn's ranking as trec_eval's ``m_<name>.c`` does; nDCG's vectorised computation
gives the same numbers over the streaming engine's per-turn arrays (numpy is imported when it runs):
gains are the positive labels, the discount ``log2(rank + 1)`` from the C library, sums added left
to right in ranking order as trec_eval's loops add them.
"""

from __future__ import annotations

import bisect
import itertools
import math

from ..kernels import (
    libm,
    log2_table,
    prefix_before,
    ratio,
    segment_positions,
    segment_starts,
    sequential_prefix_sums,
    sequential_sums,
)
from ..trec_rules import NONPOOL, Ranking, TrecEvalRefusal, c_div, c_log2
from .definition import GAIN_PAIRS, Definition, IrName, cutoff
from .precision import CUTOFFS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

#: The measures this module declares: :mod:`.registry` gathers them when a name first asks for one of them.
MEASURES: list[Definition] = []
declare = MEASURES.append


def _binG(rr, s, p):
    total = 0.0
    for found, position in enumerate(rr.relevant, start=1):
        total += 1.0 / math.log2(float(3 + position - found))
    return [total / float(rr.num_rel)] if rr.relevant else [0.0]


class _Gains:
    """``setup_gains`` of the nDCG family, and what its measures read of it on one topic.

    Each label's gain is the label, or the gain of its ``-m ndcg.L=G`` pair. trec_eval sorts the
    labels by increasing gain and walks the ideal ranking from the top: each label's gain as many
    times as the qrels hold the label, until a gain is 0 or less. ``result_gains`` are the retrieved
    items' gains in ranking order, ``ideal`` the ideal ranking's positive gains.
    """

    def __init__(self, rr: Ranking, pairs: Sequence[tuple[int, float]]):
        entries: list[list[Any]] = [[level, 0, gain] for level, gain in pairs]  # [level, count, gain]
        first_pair: dict[int, int] = {}
        for index, (level, _) in enumerate(pairs):
            first_pair.setdefault(level, index)
        # Without pairs every gain is its label, a whole number: the labels no qrels item carries change
        # nothing, so only those the qrels hold are visited (not every level up to the largest label).
        for level in range(rr.num_rel_levels) if pairs else sorted(rr.rel_levels):
            count = rr.rel_levels.get(level, 0)
            if level in first_pair:
                entries[first_pair[level]][1] = count
            else:
                entries.append([level, count, float(level)])
        if pairs:
            _check_gain_order(rr.topic, entries)
        entries.sort(key=lambda entry: entry[2])
        lookup: dict[int, float] = {}
        for level, _, gain in entries:
            lookup.setdefault(level, gain)  # get_gain: the first level that matches, in the sorted order
        self.lookup = lookup
        get = lookup.get
        # Items outside the qrels have no gain, unless a pair gives one to their value (-1).
        positions = enumerate(rr.rels) if NONPOOL in lookup else rr.pooled
        #: The positions whose gain is not 0 (the others add nothing to a DCG), with their gains.
        self.nonzero = [(i, gain) for i, rel in positions if (gain := get(rel, 0.0)) != 0]
        self.ideal = [gain for _, count, gain in reversed(entries) if gain > 0.0 for _ in range(count)]
        #: The walk's gain before its first step (the top gain, even of a label no item carries):
        #: whether trec_eval's loops over the ideal ranking start at all.
        self.first_gain = entries[-1][2] if entries else 0.0
        partial, total = [], 0.0
        for i, gain in enumerate(self.ideal):
            total += gain / math.log2(float(i + 2))
            partial.append(total)
        #: The ideal DCG after each of its positions.
        self.ideal_dcg = partial

    def ideal_at(self, i: int) -> float:
        """The walk's gain at step ``i``: 0 once the positive gains are used up."""
        return self.ideal[i] if i < len(self.ideal) else 0.0

    def ideal_dcg_at(self, i: int) -> float:
        """The ideal DCG once step ``i`` is taken."""
        if not self.ideal:
            return 0.0
        return self.ideal_dcg[min(i, len(self.ideal) - 1)]


def _gains(rr: Ranking, pairs) -> _Gains:
    # ndcg, ndcg_rel, Rndcg and G of all_trec share one table a topic.
    key = ("gains", pairs)
    if key not in rr.cache:
        rr.cache[key] = _Gains(rr, pairs)
    return rr.cache[key]


def _check_gain_order(topic: str, entries) -> None:
    # trec_eval sorts the gains with qsort and a comparator that casts their difference to an int:
    # gains less than 1 apart compare equal, and their order (which decides the ideal ranking) is
    # up to the C library; beyond 2^31 apart, the cast overflows.
    gains = sorted({entry[2] for entry in entries})
    for low, high in itertools.pairwise(gains):
        if high - low < 1:
            raise TrecEvalRefusal(
                f"topic {topic}: the gains {low:g} and {high:g} are less than 1 apart; trec_eval orders gains by "
                "their difference cast to an integer, so it may take them in either order: use gains at least 1 "
                "apart")
    if gains and (gains[-1] - gains[0]) >= 2 ** 31:
        raise TrecEvalRefusal(f"topic {topic}: gains {gains[0]:g} and {gains[-1]:g} are too far apart for "
                              "trec_eval's comparison (a C int)")


def _ndcg(rr, s, pairs):
    gains = _gains(rr, pairs)
    results_dcg = 0.0
    for i, gain in gains.nonzero:
        results_dcg += gain / math.log2(float(i + 2))
    ideal_dcg = gains.ideal_dcg_at(len(gains.ideal))
    return [results_dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0]


def _ndcg_rel(rr, s, pairs):
    gains = _gains(rr, pairs)
    results_dcg = total = 0.0
    num_rel_ret = 0
    for i, gain in gains.nonzero:
        results_dcg += gain / math.log2(float(i + 2))
        if gain > 0:
            # The ideal DCG as trec_eval has it at position i: its walk and the results' go side by side.
            total += c_div(results_dcg, gains.ideal_dcg_at(i))
            num_rel_ret += 1
    num_rel = len(gains.ideal)
    total += c_div(float(num_rel - num_rel_ret) * results_dcg, gains.ideal_dcg_at(num_rel))
    return [c_div(total, num_rel) if total > 0.0 else 0.0]


class _RndcgWalk:
    """Rndcg's walk down the ideal ranking beside the run's: each time the ideal gain changes, the DCG
    ratio so far counts."""

    def __init__(self, gains: _Gains):
        self.gains = gains
        self.results_dcg = self.ideal_dcg = self.total = 0.0
        self.changes = 0
        self.old_gain = self.ideal = gains.first_gain

    def close(self) -> None:
        if self.ideal_dcg > 0.0:
            self.total += self.results_dcg / self.ideal_dcg
            self.changes += 1

    def step(self, i: int, gain: float) -> None:
        """Position ``i``, where the run's item has ``gain``."""
        self.ideal = self.gains.ideal_at(i)
        if self.old_gain != self.ideal:
            self.close()
            self.old_gain = self.ideal
        if gain != 0:
            self.results_dcg += gain / math.log2(float(i + 2))
        if self.ideal > 0.0:
            self.ideal_dcg += self.ideal / math.log2(float(i + 2))


def _rndcg(rr, s, pairs):
    gains = _gains(rr, pairs)
    if rr.num_rel == 0:
        return [0.0]
    rels, get = rr.rels, gains.lookup.get
    num_ret = len(rels)
    walk = _RndcgWalk(gains)
    i = 0
    while i < num_ret and walk.ideal > 0.0:
        walk.step(i, get(rels[i], 0.0))
        i += 1
    if i < num_ret:
        # The ideal gains are used up: the rest of the run only adds to its DCG, counted once.
        for position, gain in gains.nonzero[bisect.bisect_left(gains.nonzero, (i, -math.inf)):]:
            walk.results_dcg += gain / math.log2(float(position + 2))
        walk.close()
        i = num_ret
    while walk.ideal > 0.0:
        walk.step(i, 0.0)
        i += 1
    return [c_div(walk.total, walk.changes)]


def _G(rr, s, pairs):
    gains = _gains(rr, pairs)
    ideal = gains.ideal if gains.first_gain > 0.0 else []
    min_cost = 1.0
    # Each position costs its ideal gain while the ideal walk lasts (at least min_cost), then min_cost:
    # sum_cost after position i is costs[i], added one position after the other.
    costs, sum_cost = [], 0.0
    for gain in ideal:
        sum_cost += max(gain, min_cost)
        costs.append(sum_cost)
    last = gains.nonzero[-1][0] if gains.nonzero else -1
    if not (sum_cost.is_integer() and sum_cost + rr.num_ret < 2.0 ** 53):
        # Adding 1.0 to a sum with a fraction may round: add it position by position.
        while len(costs) <= last:
            sum_cost += min_cost
            costs.append(sum_cost)
    walked = len(costs)
    results_g = sum_results = 0.0
    for i, gain in gains.nonzero:
        sum_results += gain
        cost = costs[i] if i < walked else sum_cost + float(i + 1 - walked)
        results_g += c_div(gain, c_log2(2 + cost - sum_results))
    sum_ideal = 0.0
    for gain in ideal:
        sum_ideal += gain
    return [results_g / sum_ideal if sum_ideal > 0.0 else 0.0]


def _ndcg_cut(rr, s, cutoffs):
    # The DCG at each cutoff: the gains (positive labels) before it, added in ranking order.
    positions, partial, total = [], [0.0], 0.0
    for i, rel in rr.pooled:
        if rel > 0:
            total += float(rel) / math.log2(float(i + 2))
            positions.append(i)
            partial.append(total)
    values = [partial[bisect.bisect_left(positions, cutoff)] for cutoff in cutoffs]
    # The ideal DCG: the positive labels from the largest down, each as often as the qrels hold it.
    index, ideal, i = 0, 0.0, 0
    for level in sorted((label for label in rr.rel_levels if label > 0), reverse=True):
        for _ in range(rr.rel_levels[level]):
            if i == cutoffs[index]:
                if ideal > 0.0:
                    values[index] /= ideal
                index += 1
                if index == len(cutoffs):
                    return values
            ideal += float(level) / math.log2(float(i + 2))
            i += 1
    while index < len(cutoffs):
        if ideal > 0.0:
            values[index] /= ideal
        index += 1
    return values


def _ndcg_arrays(ranked, measure):
    """nDCG and nDCG@k: the turn's DCG over the ideal ranking's (0 where that is 0)."""
    import numpy as np

    # The DCG so far at each gain, once for every cutoff: at a cutoff, the last one above it.
    segment, position, _, dcg_so_far = _gained(ranked)
    dcg = prefix_before(dcg_so_far, segment, position, measure.param, ranked.turn_count)
    ideal = ranked.ideal_dcg(measure.param)
    return np.divide(dcg, ideal, out=dcg.copy(), where=ideal > 0)


# trec_eval's other gain measures over the engine's per-turn arrays, without label=gain pairs (gains are the
# labels, as in all_trec; the trec_eval command computes pairs by the rules): the positive labels retrieved
# in ranking order, and each turn's ideal ranking (its positive labels, largest first).


def _binG_arrays(ranked, measure):
    import numpy as np

    where = np.flatnonzero(ranked.relevant(measure.rel))
    segment = ranked.segment[where]
    argument = 3 + ranked.position[where] - (segment_positions(segment) + 1)
    table = log2_table(int(argument.max()) + 1 if len(argument) else 4)
    total = sequential_sums(1.0 / table[argument], segment, ranked.turn_count)
    return ratio(total, ranked.num_rel(measure.rel)) if len(where) else total


def _gained(ranked):
    """The retrieved items with a gain (label above 0), in ranking order: ``(segment, position, gain, DCG so far)``."""
    import numpy as np

    if "gained" in ranked.cache:
        return ranked.cache["gained"]
    where = np.flatnonzero(ranked.labels > 0)
    segment, position = ranked.segment[where], ranked.position[where]
    gain = ranked.labels[where].astype(float)
    discount = log2_table(int(position.max()) + 3 if len(position) else 3)[position + 2]
    ranked.cache["gained"] = segment, position, gain, sequential_prefix_sums(gain / discount, segment)
    return ranked.cache["gained"]


def _ideal(ranked):
    """Each turn's ideal ranking: ``(segment, position, gain, ideal DCG so far, first line of each turn,
    number of positive labels of each turn)``."""
    import numpy as np

    if "ideal" in ranked.cache:
        return ranked.cache["ideal"]
    segment, position, labels = ranked.ideal_gains()
    gain = labels.astype(float)
    discount = log2_table(int(position.max()) + 3 if len(position) else 3)[position + 2]
    starts = segment_starts(segment, ranked.turn_count)
    ranked.cache["ideal"] = (segment, position, gain, sequential_prefix_sums(gain / discount, segment), starts[:-1],
                             np.diff(starts))
    return ranked.cache["ideal"]


def _G_arrays(ranked, measure):
    import numpy as np

    i_segment, _, i_gain, _, i_first, n_ideal = _ideal(ranked)
    costs = sequential_prefix_sums(np.maximum(i_gain, 1.0), i_segment)
    sum_cost = np.zeros(ranked.turn_count)
    has_ideal = n_ideal > 0
    sum_cost[has_ideal] = costs[i_first[has_ideal] + n_ideal[has_ideal] - 1]
    segment, position, gain, _ = _gained(ranked)
    sum_results = sequential_prefix_sums(gain, segment)
    walked = n_ideal[segment]
    inside = position < walked
    cost = np.where(inside, costs[np.where(inside, i_first[segment] + position, 0)] if len(costs) else 0.0,
                    sum_cost[segment] + (position + 1 - walked).astype(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        # c_log2 and C's division: what the rule gives where huge labels round the costs below the results.
        terms = gain / libm(c_log2, 2 + cost - sum_results)
    results = sequential_sums(terms, segment, ranked.turn_count)
    sum_ideal = sequential_sums(i_gain, i_segment, ranked.turn_count)
    return np.divide(results, sum_ideal, out=np.zeros(ranked.turn_count), where=sum_ideal > 0.0)


def _ndcg_rel_arrays(ranked, measure):
    import numpy as np

    _, _, _, ideal_dcg, i_first, n_ideal = _ideal(ranked)
    segment, position, _, dcg = _gained(ranked)
    # A retrieved gain implies a positive label, so the turn's ideal ranking is not empty.
    at = i_first[segment] + np.minimum(position, n_ideal[segment] - 1)
    total = sequential_sums(dcg / ideal_dcg[at] if len(at) else dcg, segment, ranked.turn_count)
    found = np.bincount(segment, minlength=ranked.turn_count)
    results_dcg = np.zeros(ranked.turn_count)
    last = np.flatnonzero(np.r_[segment[1:] != segment[:-1], True]) if len(segment) else np.zeros(0, dtype=np.int64)
    results_dcg[segment[last]] = dcg[last]
    full = np.zeros(ranked.turn_count)
    has_ideal = n_ideal > 0
    full[has_ideal] = ideal_dcg[i_first[has_ideal] + n_ideal[has_ideal] - 1]
    # Without an ideal ranking, the rule's last term is 0/0 (NaN): the turn scores 0.
    total = total + np.divide((n_ideal - found).astype(float) * results_dcg, full, out=np.zeros(ranked.turn_count),
                              where=has_ideal)
    return np.divide(total, n_ideal.astype(float), out=np.zeros(ranked.turn_count), where=has_ideal & (total > 0.0))


def _rndcg_arrays(ranked, measure):
    """Rndcg: where the ideal gain changes (and where it ends), the run's DCG over the ideal's so far; averaged."""
    import numpy as np

    i_segment, i_position, i_gain, ideal_dcg, i_first, n_ideal = _ideal(ranked)
    segment, position, _, dcg = _gained(ranked)
    # The last ideal position before each change of gain, and the ideal ranking's last.
    change = np.r_[(i_segment[1:] != i_segment[:-1]) | (i_gain[1:] != i_gain[:-1]), True] if len(i_gain) else \
        np.zeros(0, dtype=bool)
    boundary = np.flatnonzero(change)
    b_segment = i_segment[boundary]
    seen = np.minimum(i_position[boundary], ranked.lengths[b_segment] - 1)
    # The run's DCG through `seen`: that of its last gain at or above it (0 before its first).
    stride = int(max(ranked.lengths.max(initial=0), 1)) + 1
    keys = segment * stride + position
    at = np.searchsorted(keys, b_segment * stride + seen, side="right") - 1
    valid = at >= 0
    valid[valid] = segment[at[valid]] == b_segment[valid]
    run_dcg = np.where(valid, dcg[np.maximum(at, 0)] if len(dcg) else 0.0, 0.0)
    total = sequential_sums(run_dcg / ideal_dcg[boundary], b_segment, ranked.turn_count)
    changes = np.bincount(b_segment, minlength=ranked.turn_count).astype(np.int64)
    # A ranking longer than the ideal one by two or more closes once more, with the whole run's DCG.
    results_dcg = np.zeros(ranked.turn_count)
    last = np.flatnonzero(np.r_[segment[1:] != segment[:-1], True]) if len(segment) else np.zeros(0, dtype=np.int64)
    results_dcg[segment[last]] = dcg[last]
    has_ideal = n_ideal > 0
    full = np.ones(ranked.turn_count)
    full[has_ideal] = ideal_dcg[i_first[has_ideal] + n_ideal[has_ideal] - 1]
    longer = has_ideal & (ranked.lengths > n_ideal + 1)
    total = np.where(longer, total + results_dcg / full, total)
    changes = changes + longer
    active = (ranked.num_rel(measure.rel) > 0) & has_ideal
    return np.divide(total, changes.astype(float), out=np.zeros(ranked.turn_count), where=active)


def _graded(cutoff: bool) -> tuple[IrName, ...]:
    # ir_measures' nDCG with trec_eval's discount; its other dcg options are other providers'.
    return (IrName("nDCG", "nDCG@k" if cutoff else "nDCG", cutoff=cutoff,
                   when=lambda params: params.get("dcg", "log2") == "log2", gains=True),)


declare(Definition("binG", _binG, vectorised=_binG_arrays,
                   formula=("`sum_r 1 / log2(2 + N(r)) / R` over the relevant items r retrieved, `N(r)` the items "
                            "ranked above r that are not relevant (trec_eval's experimental binary G)")))
declare(Definition("G", _G, GAIN_PAIRS, vectorised=_G_arrays,
                   formula=("`sum_i gain(i) / log2(2 + ideal_gain(i) - gain_above(i))`, over the ideal ranking's "
                            "total gain: each item's gain weighed by how far the gain so far lags the ideal "
                            "(trec_eval's experimental G)")))
declare(Definition("ndcg", _ndcg, GAIN_PAIRS, uses_level=False, ir_measures=_graded(False), vectorised=_ndcg_arrays,
                   any_label=True,
                   formula=("`DCG / ideal DCG` over the whole ranking, `DCG = sum_i gain(i) / log2(i + 1)`; the gain "
                            "is the label (negative labels 0) or the label=gain pairs' (Jarvelin and Kekalainen "
                            "2002)")))
declare(Definition("ndcg_rel", _ndcg_rel, GAIN_PAIRS, vectorised=_ndcg_rel_arrays,
                   formula=("nDCG averaged over the relevant items (a positive gain): at each one retrieved, the DCG "
                            "so far over the ideal DCG at its rank; one not retrieved counts the final DCG over the "
                            "ideal DCG at R")))
declare(Definition("Rndcg", _rndcg, GAIN_PAIRS, vectorised=_rndcg_arrays,
                   formula=("nDCG averaged at the ranks where the ideal ranking's gain changes (the number of items "
                            "of each gain and above, gains decreasing), and at the ranking's end")))
declare(Definition("ndcg_cut", _ndcg_cut, cutoff(CUTOFFS), uses_level=False, ir_measures=_graded(True),
                   vectorised=_ndcg_arrays, any_label=True,
                   formula=("`DCG@k / ideal DCG@k`, `DCG@k = sum_{i<=k} label(i) / log2(i + 1)` (negative labels 0); "
                            "the ideal ranking is the qrels' labels, largest first")))
