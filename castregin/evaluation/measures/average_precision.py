"""Average precision and its relatives: map, gm_map, map_cut, bpref, gm_bpref, infAP, iprec_at_recall, 11pt_avg.

Each rule reads a turn's ranking as trec_eval's ``m_<name>.c`` does; map's vectorised computation
gives the same numbers over the streaming engine's per-turn arrays (numpy is imported when it runs).
"""

from __future__ import annotations

import math

from ...limits import MAX_TREC_LABEL
from ..kernels import (
    libm,
    prefix_before,
    ratio,
    segment_positions,
    segment_starts,
    segment_suffix_max,
    sequential_prefix_sums,
    sequential_sums,
)
from ..trec_rules import MIN_GEO_MEAN, UNJUDGED, Ranking, TrecEvalRefusal, c_div
from .definition import (
    ALL_LINES,
    CUT_DOUBLE,
    GEOMETRIC,
    P_DOUBLE,
    Definition,
    IrName,
    Param,
    bounded,
    cutoff,
)
from .precision import CUTOFFS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

#: The measures this module declares: :mod:`.registry` gathers them when a name first asks for one of them.
MEASURES: list[Definition] = []
declare = MEASURES.append

INFAP_EPSILON = 0.00001
#: Recall levels 0.0, 0.1, ... 1.0.
TENTHS = tuple(i / 10 for i in range(11))


def _average_precision_sum(rr: Ranking) -> float:
    total = 0.0
    for found, position in enumerate(rr.relevant, start=1):
        total += float(found) / float(position + 1)
    return total


def _map(rr, s, p):
    return [float(_average_precision_sum(rr)) / float(rr.num_rel)] if rr.relevant else [0.0]


def _map_arrays(ranked, measure):
    import numpy as np

    where = np.flatnonzero(ranked.relevant(measure.rel))
    segment = ranked.segment[where]
    precision = (segment_positions(segment) + 1) / (ranked.position[where] + 1).astype(np.float64)
    return ratio(sequential_sums(precision, segment, ranked.turn_count), ranked.num_rel(measure.rel))


def _gm_map(rr, s, p):
    value = _average_precision_sum(rr) / float(rr.num_rel) if rr.relevant else 0.0
    return [math.log(max(MIN_GEO_MEAN, value))]  # C's MAX: the floor for a NaN too


def _map_cut(rr, s, cutoffs):
    if rr.num_rel == 0:
        return [0.0] * len(cutoffs)
    partial = [0.0]
    for found, position in enumerate(rr.relevant, start=1):
        partial.append(partial[-1] + float(found) / float(position + 1))
    return [partial[found] / float(rr.num_rel) for found in rr.relevant_before(cutoffs)]


def _bpref_sum(rr: Ranking, level: int) -> float:
    _check_bpref_level(level)
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


def _check_bpref_level(level: int) -> None:
    if level > MAX_TREC_LABEL + 1:
        # trec_eval reads a count for every label below the level, past the end of its table from the
        # topic's largest label on: harmless a few entries far, a crash (seen from 20,000 on) further.
        raise TrecEvalRefusal(
            f"relevance level {level} (-l): with bpref or gm_bpref, trec_eval reads a count for every label "
            f"below the level, past the end of its table (it crashes on levels this high); use a level of at "
            f"most {MAX_TREC_LABEL + 1}, above every label castregin evaluates with trec_eval's rules")


def _bpref(rr, s, p):
    return [_bpref_sum(rr, s.level)]


def _gm_bpref(rr, s, p):
    value = _bpref_sum(rr, s.level)
    return [math.log(max(MIN_GEO_MEAN, value))]  # C's MAX: the floor for a NaN too


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


def _interpolated(rr: Ranking, percents: Sequence[float], add: Callable[[int, float], None]) -> None:
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

    _interpolated(rr, percents, add)
    return values


def _11pt_avg(rr, s, percents):
    total = [0.0]

    def add(index, value):
        total[0] += value

    _interpolated(rr, percents, add)
    return [total[0] / float(len(percents))]


# The same over the streaming engine's per-turn arrays (numpy is imported when they run): the walks
# above become passes over each turn's judged lines in ranking order, sums added left to right.


def _geometric(values):
    """``log(max(MIN_GEO_MEAN, value))`` as the rules take it, with the C library's log."""
    import numpy as np

    return libm(math.log, np.where(values > MIN_GEO_MEAN, values, MIN_GEO_MEAN))


def _gm_map_arrays(ranked, measure):
    return _geometric(_map_arrays(ranked, measure))


def _map_cut_arrays(ranked, measure):
    import numpy as np

    key = ("precision sums", measure.rel)
    if key not in ranked.cache:
        # The sums of precisions at the relevant items so far, once for every cutoff.
        where = np.flatnonzero(ranked.relevant(measure.rel))
        segment, position = ranked.segment[where], ranked.position[where]
        precision = (segment_positions(segment) + 1) / (position + 1).astype(np.float64)
        ranked.cache[key] = segment, position, sequential_prefix_sums(precision, segment)
    segment, position, sums = ranked.cache[key]
    return ratio(prefix_before(sums, segment, position, measure.param, ranked.turn_count), ranked.num_rel(measure.rel))


def _before_in_segment(flags, segment):
    """For each line, how many lines of its segment before it have ``flags`` set."""
    import numpy as np

    before = np.cumsum(flags) - flags
    starts = segment_starts(segment, int(segment[-1]) + 1 if len(segment) else 0)
    return before - before[starts[:-1]][segment] if len(segment) else before


def _bpref_arrays(ranked, measure):
    import numpy as np

    level = measure.rel
    _check_bpref_level(level)
    judged = np.flatnonzero(ranked.labels >= 0)
    segment, labels = ranked.segment[judged], ranked.labels[judged]
    nonrel = labels < level
    nonrel_before = _before_in_segment(nonrel.astype(np.int64), segment)
    relevant = ~nonrel
    segment, nonrel_before = segment[relevant], nonrel_before[relevant]
    num_rel = ranked.num_rel(level)
    num_nonrel = ranked.index.count_labels(0, level)[ranked.turn_of_segment]
    cap = num_rel[segment]
    penalty = np.divide(np.minimum(nonrel_before, cap).astype(float),
                        np.minimum(num_nonrel[segment], cap).astype(float), out=np.zeros(len(segment)),
                        where=nonrel_before > 0)
    values = np.where(nonrel_before > 0, 1.0 - penalty, 1.0)
    total = sequential_sums(values, segment, ranked.turn_count)
    return np.divide(total, num_rel.astype(float), out=total.copy(), where=num_rel > 0)


def _gm_bpref_arrays(ranked, measure):
    return _geometric(_bpref_arrays(ranked, measure))


def _infap_arrays(ranked, measure):
    import numpy as np

    level = measure.rel
    segment, labels = ranked.segment, ranked.labels
    unjudged = (labels < 0).astype(np.int64)
    nonrel = ((labels >= 0) & (labels < level)).astype(np.int64)
    relevant = labels >= level
    rel_before = _before_in_segment(relevant.astype(np.int64), segment)
    nonrel_before = _before_in_segment(nonrel, segment)
    unjudged_before = _before_in_segment(unjudged, segment)
    where = np.flatnonzero(relevant)
    j = ranked.position[where].astype(float)
    rel_so_far_less_1 = rel_before[where]
    nonrel_so_far, unjudged_so_far = nonrel_before[where], unjudged_before[where]
    with np.errstate(divide="ignore", invalid="ignore"):
        # As the rule: 1/(j+1) + (j/(j+1)) * (counts / j) * ((r-1+eps) / (r-1+n+2eps)), left to right.
        above = (rel_so_far_less_1 + nonrel_so_far + unjudged_so_far) / j
        share = (rel_so_far_less_1 + INFAP_EPSILON) / ((rel_so_far_less_1 + nonrel_so_far) + 2 * INFAP_EPSILON)
        values = 1.0 / (j + 1.0) + (j / (j + 1.0)) * above * share
    values = np.where(j == 0, 1.0, values)
    total = sequential_sums(values, segment[where], ranked.turn_count)
    num_rel = ranked.num_rel(level)
    return np.divide(total, num_rel.astype(float), out=total.copy(), where=num_rel > 0)


def _interpolated_arrays(ranked, rel, percents):
    """iprec_at_recall at each of ``percents`` (ascending), per turn: a (turns x percents) array.

    The rule's reverse walk gives the cutoff of ``c`` relevant items (1 <= c <= relevant retrieved) the
    best of the precision over everything retrieved and the precisions at the c-th relevant item and
    below; a cutoff of 0 or less the best of all, one beyond the relevant retrieved 0.
    """
    import numpy as np

    key = ("interpolated", rel)
    if key in ranked.cache:
        return _at_recall(ranked.cache[key], percents, ranked.turn_count)
    num_rel = ranked.num_rel(rel).astype(float)
    where = np.flatnonzero(ranked.relevant(rel))
    segment = ranked.segment[where]
    found = segment_positions(segment) + 1
    precision = found / (ranked.position[where] + 1).astype(np.float64)
    num_rel_ret = np.bincount(segment, minlength=ranked.turn_count)
    # The walk's first best: everything retrieved (no turn retrieves nothing here).
    best = np.maximum(segment_suffix_max(precision, segment), (num_rel_ret / ranked.lengths.astype(float))[segment])
    first = segment_starts(segment, ranked.turn_count)[:-1]
    overall = np.where(num_rel_ret > 0, best[np.minimum(first, max(len(best) - 1, 0))] if len(best) else 0.0,
                       num_rel_ret / ranked.lengths.astype(float))
    ranked.cache[key] = num_rel, num_rel_ret, best, first, overall
    return _at_recall(ranked.cache[key], percents, ranked.turn_count)


def _at_recall(walk, percents, turn_count: int):
    import numpy as np

    num_rel, num_rel_ret, best, first, overall = walk
    out = np.zeros((turn_count, len(percents)))
    for column, percent in enumerate(percents):
        cutoff = (percent * num_rel + 0.9).astype(np.int64)
        inside = (cutoff >= 1) & (cutoff <= num_rel_ret)
        values = np.where(cutoff <= 0, overall, 0.0)
        turns = np.flatnonzero(inside)
        values[turns] = best[first[turns] + cutoff[turns] - 1]
        out[:, column] = values
    return out


def _iprec_at_recall_arrays(ranked, measure):
    return _interpolated_arrays(ranked, measure.rel, (measure.param,))[:, 0]


def _11pt_avg_arrays(ranked, measure):
    import numpy as np

    percents = measure.params
    values = _interpolated_arrays(ranked, measure.rel, percents)
    # The rule adds the cutoffs' values from the last to the first (a value never added is 0 here).
    total = np.zeros(ranked.turn_count)
    for column in reversed(range(len(percents))):
        total += values[:, column]
    return total / float(len(percents))


declare(Definition("map", _map, ir_measures=(IrName("AP", "AP"),), vectorised=_map_arrays, any_label=True,
                   formula="`sum P(i) / R` over the ranks i of the relevant items retrieved: average precision (AP)"))
declare(Definition("gm_map", _gm_map, aggregate=GEOMETRIC, per_turn=False, vectorised=_gm_map_arrays,
                   formula=("the geometric mean of AP over the turns: `exp(mean(log(max(AP, 0.00001))))`; no value "
                            "per turn")))
declare(Definition("bpref", _bpref, ir_measures=(IrName("Bpref", "Bpref"),), vectorised=_bpref_arrays,
                   judged_lines=ALL_LINES,
                   formula=("`sum_r (1 - min(N(r), R) / min(N, R)) / R` over the relevant items r retrieved (1 where "
                            "`N(r)` is 0); `N(r)`: the judged non-relevant items ranked above r, N: all of them "
                            "(Buckley and Voorhees 2004)")))
declare(Definition("iprec_at_recall", _iprec_at_recall, Param(CUT_DOUBLE, TENTHS, "r", "a recall level", 0, 1),
                   ir_measures=(IrName("IPrec", "IPrec@k", param="recall"),),
                   vectorised=_iprec_at_recall_arrays,
                   formula=("interpolated precision at recall level r: the largest precision `P(i)` at a rank i where "
                            "the recall reaches `int(r * R + 0.9) / R`, 0 where it never does")))
declare(Definition("infAP", _infap, ir_measures=(IrName("infAP", "infAP"),), vectorised=_infap_arrays,
                   judged_lines=ALL_LINES,
                   formula=("inferred AP (Yilmaz and Aslam 2006): `sum_r E[P(r)] / R`, each relevant item's precision "
                            "estimated from the judged items above it, the unjudged ones (labelled below 0) counted "
                            "as judged in proportion")))
declare(Definition("gm_bpref", _gm_bpref, aggregate=GEOMETRIC, per_turn=False, vectorised=_gm_bpref_arrays,
                   judged_lines=ALL_LINES,
                   formula=("the geometric mean of bpref over the turns: `exp(mean(log(max(bpref, 0.00001))))`; no "
                            "value per turn")))
declare(Definition("11pt_avg", _11pt_avg, Param(P_DOUBLE, TENTHS, "r,...", "the recall levels averaged"),
                   check_marked=bounded, vectorised=_11pt_avg_arrays,
                   formula="the mean of iprec_at_recall over the recall levels (the 11 of 0.0, 0.1, ..., 1.0)"))
declare(Definition("map_cut", _map_cut, cutoff(CUTOFFS), ir_measures=(IrName("AP", "AP@k", cutoff=True),),
                   vectorised=_map_cut_arrays,
                   formula="`sum P(i) / R` over the ranks `i <= k` of the relevant items: AP cut at k"))
