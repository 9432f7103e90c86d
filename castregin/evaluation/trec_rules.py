"""trec_eval 9.0.8's measures in plain Python, rule for rule: the numbers ``castregin trec_eval`` prints.

Written from the semantics of trec_eval's C source (usnistgov/trec_eval, tag ``trec_eval-9.0.8``) and
checked against its binary (tests/cli/test_trec_eval*.py): its own test suite and random runs, byte
for byte. No C code runs here, so no input can crash it; where trec_eval itself fails, crashes or
reads memory it does not own, castregin refuses in one line instead (:class:`TrecEvalRefusal`).

What trec_eval does, step by step (``form_res_rels.c``):

- A topic is evaluated when both the run and the qrels have it, in byte order of the ids.
- Its items are ranked by score descending, as 64-bit floats (tag ``trec_eval-9.0.8`` reads them
  as ``double``; ``Settings.score_bits`` 32 ranks them as trec_eval up to v9.0.8 and pytrec_eval do:
  see :mod:`castregin.evaluation.ranking`), ties by item id in descending byte order; then cut to
  the first ``-M`` items.
- Each item gets its label; an item the qrels lack is "not in the pool" (-1), one labelled below 0
  is "in the pool but unjudged" (-2). With ``-J`` both are dropped, the others keep their order.
- Per topic: the number of qrels items at each label from 0 up (negative labels are not counted),
  ``num_rel`` (items labelled at or above the level ``-l``), ``num_rel_ret`` (judged retrieved items
  at or above the level) and the numbers of retrieved items outside the pool and unjudged.

Each measure then reads that ranking exactly as its ``m_<name>.c`` does, with the same double
arithmetic in the same order (0/0 gives trec_eval's ``-nan``), and is averaged over topics by its
``calc_avg`` (means, sums, geometric means; ``-c`` divides by the qrels' topics). ``-Z`` turns each
topic's values into z-scores from a file of means and deviations first (``convert_zscores.c``).

A topic whose labels are all negative cannot be evaluated: trec_eval stops with "Can't calculate
measure" when it comes first, and reuses the previous topic's label counts otherwise. Labels above
:data:`castregin.limits.MAX_TREC_LABEL` are refused (see there why).
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import InputError
from ..limits import MAX_CUTOFF, MAX_TREC_LABEL
from .ranking import DEFAULT_BITS, ranked_items

#: trec_eval's relevance values of a retrieved item the qrels lack, and of one labelled below 0.
NONPOOL, UNJUDGED = -1, -2
#: C's ``long`` (64 bits on the systems trec_eval is built on).
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001
#: The value trec_eval gives a measure that has no mean and deviation in the ``-Z`` file.
MISSING_ZSCORE = -1000000.0
#: x86's result of 0/0 (its sign bit set: glibc prints ``-nan``).
_C_NAN = -math.nan


class TrecEvalRefusal(InputError):
    """Input on which trec_eval fails, crashes or reads memory it does not own: castregin refuses it."""


# --- C's arithmetic -------------------------------------------------------------------------------------------


def c_div(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as C computes it in doubles: x/0 is an infinity, 0/0 a NaN (``-nan``)."""
    if denominator:
        return float(numerator) / float(denominator)
    numerator = float(numerator)
    if math.isnan(numerator):
        return numerator
    if numerator == 0:
        return _C_NAN
    return math.copysign(math.inf, numerator) * math.copysign(1.0, float(denominator))


def c_log2(value: float) -> float:
    """C's ``log2``: -inf at 0 and ``-nan`` below, where Python's raises ValueError."""
    if value > 0 or math.isnan(value):
        return math.log2(value)
    return -math.inf if value == 0 else _C_NAN


def c_exp(value: float) -> float:
    """C's ``exp``: an infinity where Python's raises OverflowError."""
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def c_long(text: str, what: str) -> int:
    """A whole number as trec_eval reads it with C's ``atol`` (beyond C's ``long``: its bound, as glibc).

    Stricter than ``atol``, which reads "abc" as 0 and "5x" as 5: anything but a whole number is an
    error naming ``what``.
    """
    if not _INTEGER.fullmatch(text):
        raise InputError(f"{what} must be a whole number, not {text!r}")
    return min(max(int(text), LONG_MIN), LONG_MAX)


def _c_double(text: str, what: str) -> float:
    """A decimal number as C's ``atof`` reads it (stricter: anything else is an error naming ``what``)."""
    if not _DECIMAL.fullmatch(text):
        raise InputError(f"{what}: {text!r} is not a decimal number")
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"{what}: {text!r} is too large")
    return value


# --- one topic's ranking (form_res_rels.c) -----------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """trec_eval's options that change a topic's values: ``-l``, ``-J``, ``-M``, ``-N``."""

    level: int = 1
    judged_only: bool = False
    max_docs: int = LONG_MAX
    num_docs_in_coll: int = 0
    #: Bits of the scores compared when ranking: 64 as trec_eval-9.0.8, 32 as pytrec_eval and trec_eval
    #: up to v9.0.8 (see :mod:`castregin.evaluation.ranking`).
    score_bits: int = DEFAULT_BITS


@dataclass
class Ranking:
    """trec_eval's ``RES_RELS`` of one topic: labels in ranking order and the counts measures read."""

    #: Each retrieved item's label in ranking order; NONPOOL and UNJUDGED for the items outside the
    #: qrels and labelled below 0 (without ``-J``, which drops them).
    rels: list[int]
    num_rel: int
    num_rel_ret: int
    num_nonpool: int
    num_unjudged_in_pool: int
    #: How many qrels items carry each label of 0 or more.
    rel_levels: Mapping[int, int]
    #: The largest label of 0 or more, plus one.
    num_rel_levels: int
    #: The positions (from 0) whose label is at or above the level, ascending.
    relevant: list[int] = field(default_factory=list)
    #: What several measures derive from the ranking alike (the nDCG family's gains).
    cache: dict = field(default_factory=dict)

    @property
    def num_ret(self) -> int:
        return len(self.rels)

    @property
    def pooled(self) -> list[tuple[int, int]]:
        """``(position, label)`` of the retrieved items in the qrels (the others only take up ranks)."""
        if "pooled" not in self.cache:
            self.cache["pooled"] = [(i, rel) for i, rel in enumerate(self.rels) if rel != NONPOOL]
        return self.cache["pooled"]


def rank_topic(topic: str, scores: Mapping[str, float], labels: Mapping[str, int], settings: Settings) -> Ranking:
    """One topic as trec_eval's measures see it (``te_form_res_rels``)."""
    order = ranked_items(scores, settings.score_bits)
    if settings.max_docs < len(order):
        order = order[:settings.max_docs]
    get = labels.get
    rels = [NONPOOL if (label := get(item)) is None else (UNJUDGED if label < 0 else label) for item in order]
    level = settings.level
    if settings.judged_only:
        rels = [rel for rel in rels if rel >= 0]
        nonpool = unjudged = 0
    else:
        nonpool, unjudged = rels.count(NONPOOL), rels.count(UNJUDGED)
    num_rel_ret = sum(1 for rel in rels if rel >= 0 and rel >= level)
    counts = Counter(label for label in labels.values() if label >= 0)
    if not counts:
        raise TrecEvalRefusal(
            f"topic {topic}: every label is negative (trec_eval: in the pool but unjudged), so trec_eval "
            "cannot evaluate it (it stops with \"Can't calculate measure\" when the topic comes first, and "
            "reuses the previous topic's label counts otherwise); give one of its items a label of 0 or more, "
            "or leave the topic out")
    num_rel = sum(count for label, count in counts.items() if label >= level)
    return Ranking(rels, num_rel, num_rel_ret, nonpool, unjudged, counts, max(counts) + 1,
                   [i for i, rel in enumerate(rels) if rel >= level])


# --- the measures (m_<name>.c) ------------------------------------------------------------------------------------
# Each takes the topic's ranking, the settings and the measure's parameters, and returns its values
# (one per cutoff for the cutoff measures).


def _num_ret(rr, s, p):
    return [float(rr.num_ret)]


def _num_rel(rr, s, p):
    return [float(rr.num_rel)]


def _num_rel_ret(rr, s, p):
    return [float(rr.num_rel_ret)]


def _num_q(rr, s, p):
    return [1.0]


def _average_precision_sum(rr: Ranking) -> float:
    total = 0.0
    for found, position in enumerate(rr.relevant, start=1):
        total += float(found) / float(position + 1)
    return total


def _map(rr, s, p):
    return [float(_average_precision_sum(rr)) / float(rr.num_rel)] if rr.relevant else [0.0]


def _gm_map(rr, s, p):
    value = _average_precision_sum(rr) / float(rr.num_rel) if rr.relevant else 0.0
    return [math.log(max(MIN_GEO_MEAN, value))]  # C's MAX: the floor for a NaN too


def _rprec(rr, s, p):
    look_at = min(rr.num_ret, rr.num_rel)
    if look_at == 0:
        return [0.0]
    return [float(bisect.bisect_left(rr.relevant, look_at)) / float(rr.num_rel)]


def _bpref_sum(rr: Ranking, level: int) -> float:
    if "bpref" in rr.cache:
        return rr.cache["bpref"]
    num_nonrel = sum(count for label, count in rr.rel_levels.items() if label < level)
    nonrel_so_far = 0
    total = 0.0
    for _, rel in rr.pooled:
        if rel == UNJUDGED:
            continue
        if 0 <= rel < level:
            nonrel_so_far += 1
        elif nonrel_so_far > 0:
            total += 1.0 - (float(min(nonrel_so_far, rr.num_rel)) / float(min(num_nonrel, rr.num_rel)))
        else:
            total += 1.0
    rr.cache["bpref"] = total / rr.num_rel if rr.num_rel else total
    return rr.cache["bpref"]


def _bpref(rr, s, p):
    return [_bpref_sum(rr, s.level)]


def _gm_bpref(rr, s, p):
    value = _bpref_sum(rr, s.level)
    return [math.log(max(MIN_GEO_MEAN, value))]  # C's MAX: the floor for a NaN too


def _recip_rank(rr, s, p):
    return [1.0 / float(rr.relevant[0] + 1)] if rr.relevant else [0.0]


def _interpolated(rr: Ranking, level: int, percents: Sequence[float], add: Callable[[int, float], None]) -> None:
    """The reverse walk of iprec_at_recall and 11pt_avg: ``add(cutoff index, interpolated precision)``.

    trec_eval walks from the last retrieved item up, keeping the best precision seen, and hands it
    to the cutoffs at each relevant item. Between two relevant items the number found is the same
    and the precision grows as the rank shrinks, so the best of a stretch is at its top: only the
    relevant items need visiting (the same maxima, as division rounds monotonically).
    """
    cutoffs = [int(percent * rr.num_rel + 0.9) for percent in percents]
    current = len(cutoffs) - 1
    while current >= 0 and cutoffs[current] > rr.num_rel_ret:
        current -= 1
    best = c_div(rr.num_rel_ret, rr.num_ret)
    rel_so_far = rr.num_rel_ret
    for position in reversed(rr.relevant):
        if rel_so_far <= 0:
            break
        precision = float(rel_so_far) / float(position + 1)
        best = max(best, precision)  # kept where not larger (a NaN stays), as C's `if (best < precision)`
        while current >= 0 and rel_so_far == cutoffs[current]:
            add(current, best)
            current -= 1
        rel_so_far -= 1
    while current >= 0:
        add(current, best)
        current -= 1


def _iprec_at_recall(rr, s, percents):
    values = [0.0] * len(percents)

    def add(index, value):
        values[index] = value

    _interpolated(rr, s.level, percents, add)
    return values


def _11pt_avg(rr, s, percents):
    total = [0.0]

    def add(index, value):
        total[0] += value

    _interpolated(rr, s.level, percents, add)
    return [total[0] / float(len(percents))]


def _cut_counts(rr: Ranking, cutoffs: Sequence[int]) -> list[int]:
    """For each cutoff, the number of relevant items among the first ``cutoff`` (as the cutoff loops count)."""
    return [bisect.bisect_left(rr.relevant, cutoff) for cutoff in cutoffs]


def _P(rr, s, cutoffs):
    return [float(found) / float(cutoff) for found, cutoff in zip(_cut_counts(rr, cutoffs), cutoffs)]


def _recall(rr, s, cutoffs):
    if rr.num_rel == 0:
        return [0.0] * len(cutoffs)
    return [float(found) / float(rr.num_rel) for found in _cut_counts(rr, cutoffs)]


def _relative_P(rr, s, cutoffs):
    if rr.num_rel == 0:
        return [0.0] * len(cutoffs)
    return [float(found) / float(min(cutoff, rr.num_rel)) for found, cutoff in zip(_cut_counts(rr, cutoffs), cutoffs)]


def _success(rr, s, cutoffs):
    return [1.0 if found else 0.0 for found in _cut_counts(rr, cutoffs)]


def _map_cut(rr, s, cutoffs):
    if rr.num_rel == 0:
        return [0.0] * len(cutoffs)
    partial = [0.0]
    for found, position in enumerate(rr.relevant, start=1):
        partial.append(partial[-1] + float(found) / float(position + 1))
    return [partial[found] / float(rr.num_rel) for found in _cut_counts(rr, cutoffs)]


def _infap(rr, s, p):
    level = s.level
    nonrel_so_far = rel_so_far = unjudged_so_far = 0
    total = 0.0
    for j, rel in rr.pooled:
        if rel == UNJUDGED:
            unjudged_so_far += 1
            continue
        if 0 <= rel < level:
            nonrel_so_far += 1
            continue
        rel_so_far += 1
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            total += (1.0 / (fj + 1.0)
                      + (fj / (fj + 1.0))
                      * ((rel_so_far - 1 + nonrel_so_far + unjudged_so_far) / fj)
                      * ((rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON)))
    return [total / rr.num_rel if rr.num_rel else total]


def _rprec_mult(rr, s, percents):
    # trec_eval walks from the last retrieved item up and gives a cutoff at rank i the precision there,
    # counting down from num_rel_ret at each relevant item passed; the walk stops when that count is 0.
    values = []
    relevant = rr.relevant
    for percent in percents:
        cutoff = int(percent * rr.num_rel + 0.9)
        if cutoff > rr.num_ret:
            values.append(c_div(rr.num_rel_ret, cutoff))
            continue
        found = rr.num_rel_ret - (len(relevant) - bisect.bisect_left(relevant, cutoff))
        values.append(float(found) / float(cutoff) if cutoff >= 1 and found > 0 else 0.0)
    return values


def _utility(rr, s, params):
    a, b, c, d = params
    return [a * rr.num_rel_ret + b * (rr.num_ret - rr.num_rel_ret) + c * (rr.num_rel - rr.num_rel_ret)
            + d * (s.num_docs_in_coll + rr.num_rel_ret - rr.num_ret - rr.num_rel)]


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

    def __init__(self, topic: str, rr: Ranking, pairs: Sequence[tuple[int, float]]):
        entries = [[level, 0, gain] for level, gain in pairs]
        first_pair: dict[int, int] = {}
        for index, (level, _) in enumerate(pairs):
            first_pair.setdefault(level, index)
        for level in range(rr.num_rel_levels):
            count = rr.rel_levels.get(level, 0)
            if level in first_pair:
                entries[first_pair[level]][1] = count
            else:
                entries.append([level, count, float(level)])
        _check_gain_order(topic, entries)
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


def _gains(topic: str, rr: Ranking, pairs) -> _Gains:
    # ndcg, ndcg_rel, Rndcg and G of all_trec share one table a topic.
    key = ("gains", pairs)
    if key not in rr.cache:
        rr.cache[key] = _Gains(topic, rr, pairs)
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


def _ndcg(rr, s, pairs, topic=""):
    gains = _gains(topic, rr, pairs)
    results_dcg = 0.0
    for i, gain in gains.nonzero:
        results_dcg += gain / math.log2(float(i + 2))
    ideal_dcg = gains.ideal_dcg_at(len(gains.ideal))
    return [results_dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0]


def _ndcg_rel(rr, s, pairs, topic=""):
    gains = _gains(topic, rr, pairs)
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


def _rndcg(rr, s, pairs, topic=""):
    gains = _gains(topic, rr, pairs)
    if rr.num_rel == 0:
        return [0.0]
    rels, get = rr.rels, gains.lookup.get
    num_ret = len(rels)
    results_dcg = ideal_dcg = total = 0.0
    old_gain = ideal = gains.first_gain
    changes = 0
    i = 0
    while i < num_ret and ideal > 0.0:
        gain = get(rels[i], 0.0)
        ideal = gains.ideal_at(i)
        if old_gain != ideal:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old_gain = ideal
        if gain != 0:
            results_dcg += gain / math.log2(float(i + 2))
        if ideal > 0.0:
            ideal_dcg += ideal / math.log2(float(i + 2))
        i += 1
    if i < num_ret:
        for position, gain in gains.nonzero[bisect.bisect_left(gains.nonzero, (i, -math.inf)):]:
            results_dcg += gain / math.log2(float(position + 2))
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            changes += 1
        i = num_ret
    while ideal > 0.0:
        ideal = gains.ideal_at(i)
        if old_gain != ideal:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                changes += 1
            old_gain = ideal
        if ideal > 0.0:
            ideal_dcg += ideal / math.log2(float(i + 2))
        i += 1
    return [c_div(total, changes)]


def _G(rr, s, pairs, topic=""):
    gains = _gains(topic, rr, pairs)
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
    index = 0
    level = rr.num_rel_levels - 1
    at_level = 0
    ideal = 0.0
    i = 0
    while True:
        at_level += 1
        while level > 0 and at_level > rr.rel_levels.get(level, 0):
            level -= 1
            at_level = 1
        if level == 0:
            break
        if i == cutoffs[index]:
            if ideal > 0.0:
                values[index] /= ideal
            index += 1
            if index == len(cutoffs):
                break
        ideal += float(level) / math.log2(float(i + 2))
        i += 1
    while index < len(cutoffs):
        if ideal > 0.0:
            values[index] /= ideal
        index += 1
    return values


def _set_P(rr, s, p):
    return [float(rr.num_rel_ret) / float(rr.num_ret) if rr.num_ret else 0.0]


def _set_relative_P(rr, s, p):
    if rr.num_ret and rr.num_rel:
        return [float(rr.num_rel_ret) / float(min(rr.num_ret, rr.num_rel))]
    return [0.0]


def _set_recall(rr, s, p):
    return [float(rr.num_rel_ret) / float(rr.num_rel) if rr.num_rel else 0.0]


def _set_map(rr, s, p):
    if rr.num_ret and rr.num_rel:
        return [(float(rr.num_rel_ret) * float(rr.num_rel_ret)) / (float(rr.num_ret) * float(rr.num_rel))]
    return [0.0]


def _set_F(rr, s, params):
    if not rr.num_rel_ret:
        return [0.0]
    precision = float(rr.num_rel_ret) / float(rr.num_ret)
    recall = float(rr.num_rel_ret) / float(rr.num_rel)
    beta = params[0]
    return [c_div((beta + 1.0) * precision * recall, beta * precision + recall)]


def _num_nonrel_judged_ret(rr, s, p):
    return [float(rr.num_ret) - rr.num_nonpool - rr.num_unjudged_in_pool - rr.num_rel_ret]


def relstring(rr: Ranking, length: float) -> str:
    """trec_eval's relstring: a character per item of the first ``length``: its label, ``>`` above 9,
    ``-`` outside the qrels, ``.`` labelled below 0."""
    chars = []
    for rel in rr.rels[:max(0, min(int(length), rr.num_ret))]:
        if rel > 9:
            chars.append(">")
        elif rel >= 0:
            chars.append(chr(ord("0") + rel))
        else:
            chars.append("-" if rel == NONPOOL else "." if rel == UNJUDGED else "<")
    return "".join(chars)


# --- the table of measures (measures.c) --------------------------------------------------------------------------

#: How a measure takes parameters (``te_init_meas_*``): none, cutoffs (whole numbers or decimals, sorted,
#: one value each), decimal parameters (one value named with them verbatim), ``level=gain`` pairs.
NONE, CUT_LONG, CUT_DOUBLE, P_DOUBLE, P_PAIR, TEXT = "none", "cut_long", "cut_double", "p_double", "p_pair", "text"
#: How the ``all`` value is formed (``calc_avg``): mean, sum, geometric mean, and num_q's and num_rel's own.
MEAN, SUM, GEOMETRIC, NUM_Q, NUM_REL = "mean", "sum", "geometric", "num_q", "num_rel"


@dataclass(frozen=True)
class TrecMeasure:
    """One of trec_eval's measures: how it is computed, named, averaged and printed."""

    name: str
    calc: Callable | None
    params: str = NONE
    defaults: tuple = ()
    average: str = MEAN
    #: Printed as a whole number (``%ld``), outside -Z.
    integer: bool = False
    #: Printed per topic with -q.
    per_topic: bool = True
    #: Reads gain pairs (its calc takes the topic's id for messages).
    gains: bool = False


_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_TENTHS = tuple(i / 10 for i in range(11))

#: trec_eval 9.0.8's measures on qrels, in the order it computes and prints them (``te_trec_measures``).
TREC_MEASURES: dict[str, TrecMeasure] = {m.name: m for m in (
    TrecMeasure("runid", None, TEXT, per_topic=False),
    TrecMeasure("num_q", _num_q, average=NUM_Q, integer=True, per_topic=False),
    TrecMeasure("num_ret", _num_ret, average=SUM, integer=True),
    TrecMeasure("num_rel", _num_rel, average=NUM_REL, integer=True),
    TrecMeasure("num_rel_ret", _num_rel_ret, average=SUM, integer=True),
    TrecMeasure("map", _map),
    TrecMeasure("gm_map", _gm_map, average=GEOMETRIC, per_topic=False),
    TrecMeasure("Rprec", _rprec),
    TrecMeasure("bpref", _bpref),
    TrecMeasure("recip_rank", _recip_rank),
    TrecMeasure("iprec_at_recall", _iprec_at_recall, CUT_DOUBLE, _TENTHS),
    TrecMeasure("P", _P, CUT_LONG, _CUTOFFS),
    TrecMeasure("relstring", None, P_DOUBLE, (10.0,)),
    TrecMeasure("recall", _recall, CUT_LONG, _CUTOFFS),
    TrecMeasure("infAP", _infap),
    TrecMeasure("gm_bpref", _gm_bpref, average=GEOMETRIC, per_topic=False),
    TrecMeasure("Rprec_mult", _rprec_mult, CUT_DOUBLE, tuple(i / 10 for i in range(2, 21, 2))),
    TrecMeasure("utility", _utility, P_DOUBLE, (1.0, -1.0, 0.0, 0.0)),
    TrecMeasure("11pt_avg", _11pt_avg, P_DOUBLE, _TENTHS),
    TrecMeasure("binG", _binG),
    TrecMeasure("G", _G, P_PAIR, gains=True),
    TrecMeasure("ndcg", _ndcg, P_PAIR, gains=True),
    TrecMeasure("ndcg_rel", _ndcg_rel, P_PAIR, gains=True),
    TrecMeasure("Rndcg", _rndcg, P_PAIR, gains=True),
    TrecMeasure("ndcg_cut", _ndcg_cut, CUT_LONG, _CUTOFFS),
    TrecMeasure("map_cut", _map_cut, CUT_LONG, _CUTOFFS),
    TrecMeasure("relative_P", _relative_P, CUT_LONG, _CUTOFFS),
    TrecMeasure("success", _success, CUT_LONG, (1, 5, 10)),
    TrecMeasure("set_P", _set_P),
    TrecMeasure("set_relative_P", _set_relative_P),
    TrecMeasure("set_recall", _set_recall),
    TrecMeasure("set_map", _set_map),
    TrecMeasure("set_F", _set_F, P_DOUBLE, (1.0,)),
    TrecMeasure("num_nonrel_judged_ret", _num_nonrel_judged_ret, average=SUM, integer=True),
)}


@dataclass(frozen=True)
class Marked:
    """A measure ``-m`` asked for, with its parameters and the names of its values."""

    measure: TrecMeasure
    params: tuple = ()
    #: The names trec_eval gives its values (``P_5``, ``iprec_at_recall_0.10``, ``ndcg_1=3,2=9``).
    names: tuple[str, ...] = ()


def _parse_cut_long(measure: TrecMeasure, text: str) -> tuple[int, ...]:
    values = []
    for part in text.split(","):
        # atol reads "23.4" as 23, which trec_eval then names ndcg_cut_23: the fraction is dropped, not rounded.
        if not re.fullmatch(r"[+-]?[0-9]+(\.[0-9]*)?", part):
            raise InputError(f"measure {measure.name}.{text}: a cutoff must be a whole number, not {part!r}")
        values.append(int(part.split(".")[0]))
    values.sort()
    if values[0] <= 0:
        raise InputError(f"measure {measure.name}.{text}: cutoffs must be positive (trec_eval: negative cutoff)")
    if values[-1] > MAX_CUTOFF:
        raise InputError(f"measure {measure.name}.{text}: the cutoff {values[-1]} is too large (at most {MAX_CUTOFF})")
    if len(set(values)) != len(values):
        raise InputError(f"measure {measure.name}.{text}: duplicate cutoffs (trec_eval refuses them too)")
    return tuple(values)


def _parse_doubles(measure: TrecMeasure, text: str) -> tuple[float, ...]:
    return tuple(_c_double(part, f"measure {measure.name}.{text}") for part in text.split(","))


def _parse_pairs(measure: TrecMeasure, text: str) -> tuple[tuple[int, float], ...]:
    pairs = []
    for part in text.split(","):
        level, equals, gain = part.partition("=")
        if not equals or not _INTEGER.fullmatch(level):
            raise InputError(f"measure {measure.name}.{text}: parameters are label=gain pairs such as "
                             f"{measure.name}.1=1,2=3 (trec_eval: malformed pair parameters), not {part!r}")
        value = _c_double(gain, f"measure {measure.name}.{text}")
        if abs(value) >= 2 ** 30 or not -MAX_TREC_LABEL <= int(level) <= MAX_TREC_LABEL:
            raise InputError(f"measure {measure.name}.{text}: {part} is too large (labels and gains up to "
                             f"{MAX_TREC_LABEL} and 2^30)")
        pairs.append((int(level), value))
    return tuple(pairs)


def mark_measures(args: Sequence[str]) -> list[Marked]:
    """What ``trec_eval -m ARG ...`` computes, in the order trec_eval prints it.

    Sets (``official``, ``all_trec``, ``set``) and measures are marked as trec_eval marks them; a
    measure is computed once, with the parameters of the first ``-m`` that gives it some, read as
    trec_eval reads them: cutoffs (``P.5,10``: whole numbers, sorted, a fraction dropped), decimal
    cutoffs (``iprec_at_recall..1,.2``: sorted, named with two decimals), decimal parameters named
    verbatim (``utility.2,-1,0,0``, ``11pt_avg..25,.5``, ``set_F.0.5``, ``relstring.20``) and
    ``label=gain`` pairs (``ndcg.1=3,2=9``). What trec_eval refuses, or would silently ignore
    (parameters of a measure that takes none), is an :class:`InputError`.
    """
    from .measures import TREC_PREFERENCE_NAMES, TREC_SETS

    marked: set[str] = set()
    texts: dict[str, str] = {}
    for arg in args:
        name, dot, text = arg.partition(".")
        if dot and not text:
            raise InputError(f"measure {arg!r}: a '.' must be followed by parameters (trec_eval: improper measure)")
        if name in TREC_SETS:
            marked.update(TREC_SETS[name])
        elif name in TREC_MEASURES:
            marked.add(name)
            if dot:
                texts.setdefault(name, text)
        elif name in TREC_PREFERENCE_NAMES:
            raise InputError(f"measure {arg!r}: " + (
                "castregin does not compute yaap" if name == "yaap" else
                "a judgment-group measure: it needs -R qrels_jg judgments (trec_eval stops too)"
                if name in ("qrels_jg", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg") else
                "a preference measure: it needs -R prefs or -R qrels_prefs judgments (trec_eval stops too)"))
        else:
            raise InputError(f"measure {arg!r}: not a trec_eval measure or measure set (trec_eval: illegal "
                             "measure); `castregin measures` lists them")
    out = []
    for measure in TREC_MEASURES.values():
        if measure.name in marked:
            out.append(_marked(measure, texts.get(measure.name)))
    return out


def _marked(measure: TrecMeasure, text: str | None) -> Marked:
    name = measure.name
    if text is not None and measure.params == NONE:
        raise InputError(f"measure {name}.{text}: trec_eval's {name} takes no parameter (it would ignore it)")
    if measure.params == TEXT:
        return Marked(measure)
    if measure.params == CUT_LONG:
        cutoffs = _parse_cut_long(measure, text) if text is not None else measure.defaults
        return Marked(measure, cutoffs, tuple(f"{name}_{cutoff}" for cutoff in cutoffs))
    if measure.params == CUT_DOUBLE:
        cutoffs = tuple(sorted(_parse_doubles(measure, text))) if text is not None else measure.defaults
        if any(abs(cutoff) > MAX_CUTOFF for cutoff in cutoffs):
            raise InputError(f"measure {name}.{text}: a cutoff is too large (at most {MAX_CUTOFF})")
        if len(set(cutoffs)) != len(cutoffs):
            raise InputError(f"measure {name}.{text}: duplicate cutoffs (trec_eval refuses them too)")
        return Marked(measure, cutoffs, tuple(f"{name}_{cutoff:3.2f}" for cutoff in cutoffs))
    if measure.params == P_PAIR:
        pairs = _parse_pairs(measure, text) if text is not None else ()
        return Marked(measure, pairs, (name if text is None else f"{name}_{text}",))
    params = _parse_doubles(measure, text) if text is not None else measure.defaults
    if name == "utility" and len(params) != 4:
        raise InputError(f"measure utility.{text}: utility takes 4 coefficients (trec_eval: improper number of "
                         "coefficients)")
    if name in ("relstring", "11pt_avg") and any(abs(param) > MAX_CUTOFF for param in params):
        raise InputError(f"measure {name}.{text}: a parameter is too large (at most {MAX_CUTOFF})")
    return Marked(measure, params, (name if text is None else f"{name}_{text}",))


# --- -Z: z-scores (get_zscores.c, convert_zscores.c) ------------------------------------------------------------


@dataclass(frozen=True)
class ZScores:
    """A ``-Z`` file: per topic, its lines ``(measure, mean, deviation)`` sorted by measure (byte order),
    topics sorted by id, as trec_eval holds them."""

    topics: tuple[str, ...]
    #: Per topic (same order), the sorted lines.
    lines: tuple[tuple[tuple[str, float, float], ...], ...]
    source: str | None = None

    @classmethod
    def of(cls, lines: Sequence[tuple[str, str, float, float]], source: str | None = None) -> ZScores:
        """From ``(topic, measure, mean, deviation)`` lines (as :func:`castregin.formats.zscores.read_zscores` reads)."""
        by_topic: dict[str, list[tuple[str, float, float]]] = {}
        for topic, measure, mean, deviation in sorted(lines, key=lambda line: (line[0], line[1])):
            by_topic.setdefault(topic, []).append((measure, mean, deviation))
        return cls(tuple(by_topic), tuple(tuple(topic_lines) for topic_lines in by_topic.values()), source)


def _search(keys: Sequence[str], key: str, next_key: str | None) -> int | None:
    """trec_eval's binary search of ``convert_zscores.c``: its upper bound is one past the last entry.

    Returns the index found (``len(keys)`` for ``next_key``, the entry stored after the table), or None.
    A probe past the table with no ``next_key`` is memory trec_eval does not own: :class:`TrecEvalRefusal`.
    """
    start, end = 0, len(keys)
    while start <= end:
        current = (start + end) // 2
        if current == len(keys):
            if next_key is None:
                raise _PastTheTable
            probe = next_key
        else:
            probe = keys[current]
        if key < probe:
            end = current - 1
        elif key > probe:
            start = current + 1
        else:
            return current
    return None


class _PastTheTable(Exception):
    pass


def zscore_values(zscores: ZScores, topic: str, names: Sequence[str], values: list[float]) -> list[float]:
    """One topic's values as trec_eval's ``-Z`` turns them (``te_convert_to_zscore``).

    ``(value - mean) / deviation``; a deviation of 0 gives 0 where the value is the mean; a topic
    or measure the file lacks, or a deviation of 0 with another value, gives -1000000.
    """
    try:
        found = _search(zscores.topics, topic, None)
    except _PastTheTable:
        raise TrecEvalRefusal(
            f"topic {topic} sorts after every topic of the Z-score file {zscores.source or ''}: trec_eval 9.0.8 "
            "then reads past the end of its table (it crashes or reads garbage); add the topic's lines to the "
            "file") from None
    if found is None:
        return [MISSING_ZSCORE] * len(values)
    lines = zscores.lines[found]
    keys = [line[0] for line in lines]
    following = zscores.lines[found + 1][0] if found + 1 < len(zscores.lines) else None
    out = []
    for name, value in zip(names, values):
        try:
            index = _search(keys, name, following[0] if following else None)
        except _PastTheTable:
            raise TrecEvalRefusal(
                f"measure {name} sorts after every measure of topic {topic} in the Z-score file "
                f"{zscores.source or ''}: trec_eval 9.0.8 then reads past the end of its table (it crashes or "
                f"reads garbage); add a line for {name} of topic {topic}") from None
        if index is None:
            out.append(MISSING_ZSCORE)
            continue
        # Past the topic's lines, trec_eval's search reads the next topic's first line.
        _, mean, deviation = lines[index] if index < len(lines) else following
        if deviation:
            out.append((value - mean) / deviation)
        else:
            out.append(0.0 if value == mean else MISSING_ZSCORE)
    return out


# --- a whole evaluation (trec_eval.c's main loop) -----------------------------------------------------------------


@dataclass
class TopicValues:
    """One topic's values: per marked measure, its values (a text for relstring)."""

    topic: str
    values: list[list[float] | str]


@dataclass
class Evaluation:
    """What trec_eval computes: each evaluated topic's values, and the ``all`` values of every measure."""

    marked: list[Marked]
    topics: list[TopicValues]
    summary: list[list[float]]


def check_labels(qrels: Mapping[str, Mapping[str, int]], topics: Sequence[str], source: str | None) -> None:
    """Refuse a label above :data:`~castregin.limits.MAX_TREC_LABEL` in the topics to be evaluated."""
    for topic in topics:
        items = qrels[topic]
        largest = max(items.values())
        if largest > MAX_TREC_LABEL:
            item = next(item for item, label in items.items() if label == largest)
            where = f"{source}: " if source else ""
            raise TrecEvalRefusal(
                f"{where}topic {topic}, item {item}: label {largest} is above {MAX_TREC_LABEL}, the largest castregin "
                f"evaluates with trec_eval's rules (trec_eval's time and memory per topic grow with its largest label: "
                f"a label of 100,000 takes it seconds a topic, 2^30 crashes it); map the labels to a smaller scale")


def evaluate(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], marked: Sequence[Marked],
             settings: Settings, complete: bool = False, zscores: ZScores | None = None,
             source: str | None = None) -> Evaluation:
    """Every marked measure on every topic both ``run`` and ``qrels`` have, and their ``all`` values.

    ``complete`` is ``-c`` (means over every qrels topic), ``zscores`` is ``-Z``. ``source`` names
    the qrels in refusals.
    """
    topics = sorted(topic for topic in run if topic in qrels)
    check_labels(qrels, topics, source)
    _check_bpref_level(marked, settings)
    names = [name for m in marked for name in _slot_names(m)]
    accumulated = [0.0] * len(names)
    out = []
    for topic in topics:
        try:
            ranking = rank_topic(topic, run[topic], qrels[topic], settings)
        except TrecEvalRefusal as refusal:
            raise TrecEvalRefusal(f"{source}: {refusal}" if source else str(refusal)) from None
        values: list[list[float] | str] = []
        slots: list[float] = []
        for m in marked:
            measure = m.measure
            if measure.name == "relstring":
                values.append(relstring(ranking, m.params[0]))
                slots.append(0.0)
                continue
            if measure.calc is None:
                values.append([])
                continue
            result = measure.calc(ranking, settings, m.params, topic) if measure.gains else \
                measure.calc(ranking, settings, m.params)
            values.append(result)
            slots.extend(result)
        if zscores is not None:
            slots = zscore_values(zscores, topic, names, slots)
            values = _refill(values, slots)
        for index, value in enumerate(slots):
            accumulated[index] += value
        out.append(TopicValues(topic, values))
    averaged = len(qrels) if complete else len(topics)
    summary = []
    position = 0
    for m in marked:
        count = len(_slot_names(m))
        part = accumulated[position:position + count]
        position += count
        summary.append(_average(m.measure, part, averaged, len(topics), complete, qrels))
    return Evaluation(list(marked), out, summary)


def _check_bpref_level(marked: Sequence[Marked], settings: Settings) -> None:
    # bpref reads a count for every label below the level, past the end of its table from the topic's
    # largest label on: harmless a few entries far, a crash (seen from 20,000 on) further.
    if settings.level > MAX_TREC_LABEL + 1 and any(m.measure.name in ("bpref", "gm_bpref") for m in marked):
        raise TrecEvalRefusal(
            f"relevance level {settings.level} (-l): with bpref or gm_bpref, trec_eval reads a count for every "
            f"label below the level, past the end of its table (it crashes on levels this high); use a level of at "
            f"most {MAX_TREC_LABEL + 1}, above every label castregin evaluates with trec_eval's rules")


def _slot_names(m: Marked) -> tuple[str, ...]:
    if m.measure.params == TEXT:
        return ()
    return m.names if m.names else (m.measure.name,)


def _refill(values: list, slots: list[float]) -> list:
    out, position = [], 0
    for value in values:
        if isinstance(value, str):
            out.append(value)
            position += 1
        else:
            out.append(slots[position:position + len(value)])
            position += len(value)
    return out


def _average(measure: TrecMeasure, sums: list[float], averaged: int, evaluated: int, complete: bool,
             qrels: Mapping[str, Mapping[str, int]]) -> list[float]:
    if measure.average == NUM_Q:
        return [float(averaged)]
    if measure.average == NUM_REL:
        if complete:
            return [float(sum(1 for items in qrels.values() for label in items.values() if label > 0))]
        return sums
    if measure.average == SUM:
        return sums
    if measure.average == GEOMETRIC:
        if averaged <= 0:
            return sums
        if complete:
            # A topic without results counts as the floor (0 would be perfection in logs).
            sums = [value + (averaged - evaluated) * math.log(MIN_GEO_MEAN) for value in sums]
        return [c_exp(value / averaged) for value in sums]
    return [value / averaged for value in sums] if averaged else sums
