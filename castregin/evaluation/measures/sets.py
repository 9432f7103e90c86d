"""The set measures (the retrieved items as a set, their order aside): set_P, set_relative_P, set_recall,
set_map, set_F and utility."""

from __future__ import annotations

from ..trec_rules import c_div
from .definition import P_DOUBLE, Definition, IrName, Param

#: The measures this module declares: :mod:`.registry` gathers them when a name first asks for one of them.
MEASURES: list[Definition] = []
declare = MEASURES.append


def _utility(rr, s, params):
    a, b, c, d = params
    return [a * rr.num_rel_ret + b * (rr.num_ret - rr.num_rel_ret) + c * (rr.num_rel - rr.num_rel_ret)
            + d * (s.num_docs_in_coll + rr.num_rel_ret - rr.num_ret - rr.num_rel)]


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


# The same over the streaming engine's per-turn arrays (numpy is imported when they run): each from the
# turn's counts, in the rules' double arithmetic.


def _set_counts(ranked, measure):
    """Per turn: items retrieved, relevant, relevant retrieved, as doubles."""
    return (ranked.lengths.astype(float), ranked.num_rel(measure.rel).astype(float),
            ranked.count(ranked.relevant(measure.rel)).astype(float))


def _divided(numerator, denominator, where):
    import numpy as np

    return np.divide(numerator, denominator, out=np.zeros(len(numerator)), where=where)


def _utility_arrays(ranked, measure):
    a, b, c, d = measure.params
    num_ret, num_rel, num_rel_ret = (ranked.lengths, ranked.num_rel(measure.rel),
                                     ranked.count(ranked.relevant(measure.rel)))
    # The counts are whole numbers (the rule adds them as integers), each product a double, added left to right.
    return (a * num_rel_ret + b * (num_ret - num_rel_ret) + c * (num_rel - num_rel_ret)
            + d * (measure.num_docs + num_rel_ret - num_ret - num_rel))


def _set_P_arrays(ranked, measure):
    num_ret, _, num_rel_ret = _set_counts(ranked, measure)
    return _divided(num_rel_ret, num_ret, num_ret > 0)


def _set_relative_P_arrays(ranked, measure):
    import numpy as np

    num_ret, num_rel, num_rel_ret = _set_counts(ranked, measure)
    return _divided(num_rel_ret, np.minimum(num_ret, num_rel), (num_ret > 0) & (num_rel > 0))


def _set_recall_arrays(ranked, measure):
    _, num_rel, num_rel_ret = _set_counts(ranked, measure)
    return _divided(num_rel_ret, num_rel, num_rel > 0)


def _set_map_arrays(ranked, measure):
    num_ret, num_rel, num_rel_ret = _set_counts(ranked, measure)
    return _divided(num_rel_ret * num_rel_ret, num_ret * num_rel, (num_ret > 0) & (num_rel > 0))


def _set_F_arrays(ranked, measure):
    import numpy as np

    num_ret, num_rel, num_rel_ret = _set_counts(ranked, measure)
    found = num_rel_ret > 0
    precision = _divided(num_rel_ret, num_ret, found)
    recall = _divided(num_rel_ret, num_rel, found)
    beta = measure.params[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        # beta > 0 (evaluate checks it; trec_eval's command streams only then): no 0/0 where found.
        value = ((beta + 1.0) * precision * recall) / (beta * precision + recall)
    return np.where(found, value, 0.0)


declare(Definition("utility", _utility, Param(P_DOUBLE, (1.0, -1.0, 0.0, 0.0), "a,b,c,d", "the weights"),
                   check_marked=lambda params: None if len(params) == 4 else
                   "utility takes 4 coefficients (trec_eval: improper number of coefficients)",
                   vectorised=_utility_arrays,
                   formula=("`a * rel_ret + b * nonrel_ret + c * rel_not_ret + d * nonrel_not_ret` (the last needs "
                            "the collection's size, trec_eval's -N)")))
declare(Definition("set_P", _set_P,
                   ir_measures=(IrName("SetP", "SetP", when=lambda params: not params.get("relative")),),
                   vectorised=_set_P_arrays,
                   formula="`num_rel_ret / n`: precision of the items retrieved, as a set"))
declare(Definition("set_relative_P", _set_relative_P,
                   ir_measures=(IrName("SetP", "SetP(relative=True)",
                                       when=lambda params: bool(params.get("relative"))),),
                   vectorised=_set_relative_P_arrays,
                   formula="`num_rel_ret / min(n, R)`: set precision over the largest possible"))
declare(Definition("set_recall", _set_recall, ir_measures=(IrName("SetR", "SetR"),), vectorised=_set_recall_arrays,
                   formula="`num_rel_ret / R`"))
declare(Definition("set_map", _set_map, ir_measures=(IrName("SetAP", "SetAP"),), vectorised=_set_map_arrays,
                   formula="`num_rel_ret^2 / (n * R)`: set precision times set recall"))
declare(Definition("set_F", _set_F, Param(P_DOUBLE, (1.0,), "beta", "the weight of recall", low=0, above_low=True),
                   ir_measures=(IrName("SetF", "SetF", param="beta"),), vectorised=_set_F_arrays,
                   formula=("`(beta + 1) * P * Rc / (beta * P + Rc)`, P and Rc the set precision and recall "
                            "(trec_eval weighs with beta, not its square)")))
