"""Precision and recall at ranks: P, recall, success, relative_P, Rprec, Rprec_mult, recip_rank.

Each rule reads a turn's ranking as trec_eval's ``m_<name>.c`` does; the vectorised computations
give the same numbers over the streaming engine's per-turn arrays (numpy is imported when they run).
"""

from __future__ import annotations

import bisect

from ..kernels import ratio
from ..trec_rules import c_div
from .definition import CUT_DOUBLE, Definition, IrName, Param, cutoff

#: The measures this module declares: :mod:`.registry` gathers them when a name first asks for one of them.
MEASURES: list[Definition] = []
declare = MEASURES.append

#: trec_eval's default cutoffs (``long_cutoff_array``) and multiples of R (``Rprec_cutoff_array``).
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
MULTIPLES_OF_R = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


def _P(rr, s, cutoffs):
    return [float(found) / float(cutoff) for found, cutoff in zip(rr.relevant_before(cutoffs), cutoffs, strict=True)]


def _P_arrays(ranked, measure):
    return ranked.found(measure.rel, measure.param) / float(measure.param)


def _recall(rr, s, cutoffs):
    if rr.num_rel == 0:
        return [0.0] * len(cutoffs)
    return [float(found) / float(rr.num_rel) for found in rr.relevant_before(cutoffs)]


def _recall_arrays(ranked, measure):
    return ratio(ranked.found(measure.rel, measure.param), ranked.num_rel(measure.rel))


def _success(rr, s, cutoffs):
    return [1.0 if found else 0.0 for found in rr.relevant_before(cutoffs)]


def _success_arrays(ranked, measure):
    return (ranked.found(measure.rel, measure.param) > 0).astype(float)


def _relative_P(rr, s, cutoffs):
    if rr.num_rel == 0:
        return [0.0] * len(cutoffs)
    return [float(found) / float(min(cutoff, rr.num_rel))
            for found, cutoff in zip(rr.relevant_before(cutoffs), cutoffs, strict=True)]


def _rprec(rr, s, p):
    look_at = min(rr.num_ret, rr.num_rel)
    if look_at == 0:
        return [0.0]
    return [float(bisect.bisect_left(rr.relevant, look_at)) / float(rr.num_rel)]


def _rprec_arrays(ranked, measure):
    num_rel = ranked.num_rel(measure.rel)
    return ratio(ranked.count(ranked.relevant(measure.rel) & (ranked.position < num_rel[ranked.segment])), num_rel)


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


def _rprec_mult_arrays(ranked, measure):
    import numpy as np

    num_rel = ranked.num_rel(measure.rel)
    relevant = ranked.relevant(measure.rel)
    num_rel_ret = ranked.count(relevant).astype(float)
    # int(percent * num_rel + 0.9): a double product and sum, truncated toward zero.
    cutoff = (measure.param * num_rel.astype(float) + 0.9).astype(np.int64)
    found = ranked.count(relevant & (ranked.position < cutoff[ranked.segment]))
    beyond = cutoff > ranked.lengths
    denominator = cutoff.astype(float)
    within = np.divide(found.astype(float), denominator, out=np.zeros(len(found)), where=(cutoff >= 1) & (found > 0))
    return np.where(beyond, np.divide(num_rel_ret, denominator, out=np.zeros(len(found)), where=beyond), within)


def _relative_P_arrays(ranked, measure):
    import numpy as np

    num_rel = ranked.num_rel(measure.rel)
    found = ranked.found(measure.rel, measure.param).astype(float)
    return np.divide(found, np.minimum(measure.param, num_rel).astype(float), out=np.zeros(len(found)),
                     where=num_rel > 0)


def _recip_rank(rr, s, p):
    return [1.0 / float(rr.relevant[0] + 1)] if rr.relevant else [0.0]


def _recip_rank_arrays(ranked, measure):
    import numpy as np

    where = np.flatnonzero(ranked.relevant(measure.rel))
    segment = ranked.segment[where]
    out = np.zeros(ranked.turn_count)
    first = np.ones(len(segment), dtype=bool)
    first[1:] = segment[1:] != segment[:-1]
    out[segment[first]] = 1.0 / (ranked.position[where][first] + 1).astype(np.float64)
    return out


declare(Definition("Rprec", _rprec, ir_measures=(IrName("Rprec", "Rprec"),), vectorised=_rprec_arrays, any_label=True,
                   formula=("`rel(R) / R`: precision at rank R (relevant items among the first `min(n, R)`, over R; 0 "
                            "where R is 0)")))
declare(Definition("recip_rank", _recip_rank, ir_measures=(IrName("RR", "RR"),), vectorised=_recip_rank_arrays,
                   any_label=True,
                   formula="`1 / rank` of the first relevant item; 0 without one"))
declare(Definition("P", _P, cutoff(CUTOFFS), ir_measures=(IrName("P", "P@k", cutoff=True),), vectorised=_P_arrays,
                   any_label=True,
                   formula=("`rel(k) / k`: relevant items among the first k, over k (a ranking shorter than k counts "
                            "the missing ranks as not relevant)")))
declare(Definition("recall", _recall, cutoff(CUTOFFS), ir_measures=(IrName("R", "R@k", cutoff=True),),
                   vectorised=_recall_arrays, any_label=True,
                   formula="`rel(k) / R`; 0 where R is 0"))
declare(Definition("Rprec_mult", _rprec_mult,
                   Param(CUT_DOUBLE, MULTIPLES_OF_R, "m", "a multiple of R (two decimals)", low=0, above_low=True),
                   vectorised=_rprec_mult_arrays,
                   formula=("precision at rank `c = int(m * R + 0.9)`: `rel(c) / c` (past the ranking, `num_rel_ret / "
                            "c`)")))
declare(Definition("relative_P", _relative_P, cutoff(CUTOFFS), vectorised=_relative_P_arrays,
                   formula="`rel(k) / min(k, R)`: precision up to rank R, recall after; 0 where R is 0"))
declare(Definition("success", _success, cutoff((1, 5, 10)),
                   ir_measures=(IrName("Success", "Success@k", cutoff=True),),
                   vectorised=_success_arrays, any_label=True,
                   formula="1 if a relevant item is among the first k, else 0"))
