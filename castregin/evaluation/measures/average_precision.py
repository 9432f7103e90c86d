"""Average precision and its relatives: map, gm_map, map_cut, bpref, gm_bpref, infAP, iprec_at_recall, 11pt_avg.

Each rule reads a turn's ranking as trec_eval's ``m_<name>.c`` does; map's vectorised computation
gives the same numbers over the streaming engine's per-turn arrays (numpy is imported when it runs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ...limits import MAX_TREC_LABEL
from ..trec_rules import MIN_GEO_MEAN, UNJUDGED, Ranking, TrecEvalRefusal, c_div
from .definition import CUT_DOUBLE, CUT_LONG, GEOMETRIC, P_DOUBLE, Definition, IrName, bounded, register
from .precision import CUTOFFS

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

    from ..engine import ratio, segment_positions, sequential_sums

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
    if level > MAX_TREC_LABEL + 1:
        # trec_eval reads a count for every label below the level, past the end of its table from the
        # topic's largest label on: harmless a few entries far, a crash (seen from 20,000 on) further.
        raise TrecEvalRefusal(
            f"relevance level {level} (-l): with bpref or gm_bpref, trec_eval reads a count for every label "
            f"below the level, past the end of its table (it crashes on levels this high); use a level of at "
            f"most {MAX_TREC_LABEL + 1}, above every label castregin evaluates with trec_eval's rules")
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


register(Definition("map", _map, ir_measures=(IrName("AP", "AP"),), vectorised=_map_arrays))
register(Definition("gm_map", _gm_map, aggregate=GEOMETRIC, per_turn=False))
register(Definition("bpref", _bpref, ir_measures=(IrName("Bpref", "Bpref"),)))
register(Definition("iprec_at_recall", _iprec_at_recall, CUT_DOUBLE, TENTHS,
                    ir_measures=(IrName("IPrec", "IPrec@k", param="recall"),),
                    check=lambda value: None if 0 <= value <= 1 else "a recall level is between 0 and 1"))
register(Definition("infAP", _infap, ir_measures=(IrName("infAP", "infAP"),)))
register(Definition("gm_bpref", _gm_bpref, aggregate=GEOMETRIC, per_turn=False))
register(Definition("11pt_avg", _11pt_avg, P_DOUBLE, TENTHS, check_marked=bounded))
register(Definition("map_cut", _map_cut, CUT_LONG, CUTOFFS, ir_measures=(IrName("AP", "AP@k", cutoff=True),)))
