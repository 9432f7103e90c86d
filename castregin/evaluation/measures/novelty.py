"""The measures TREC reports beside trec_eval: gdeval.pl's nDCG@k and ERR@k, ndeval.c's diversity measures.

Named as ir_measures names them: gdeval's nDCG is ``nDCG(dcg='exp-log2')@k`` (ir_measures' gdeval
provider; ``nDCG@k`` stays trec_eval's), ``ERR@k``; ndeval's are ``alpha_nDCG@k``, ``alpha_DCG@k``,
``ERR_IA@k``, ``nERR_IA@k``, ``NRBP``, ``nNRBP``, ``P_IA@k``, ``StRecall@k`` and ``AP_IA`` (ndeval's
alpha-nDCG, ERR-IA, P-IA, strec, MAP-IA). Parameters: ``max_grade`` (gdeval's maximum grade, 4),
``alpha`` and ``beta`` (ndeval's, 0.5): ``ERR(max_grade=3)@20``, ``alpha_nDCG(alpha=0.3)@20``,
``NRBP(alpha=0.5,beta=0.8)``.

The numbers are the originals' (:mod:`castregin.evaluation.gdeval`, :mod:`castregin.evaluation.ndeval`,
checked against gdeval.pl and ndeval.c), for turns of any id, with these differences, each the rule
every castregin measure follows: the run is ranked by score descending, ties by item id descending
(trec_eval's order; ndeval's ``-traditional``: ndeval itself orders by the rank column); a turn that
the run and the qrels share but where nothing is relevant scores 0 and counts in the mean (gdeval
leaves it out, ndeval's nNRBP is 0/0); cutoffs may exceed ndeval's depth of 20. ndeval's measures
binarise labels (relevant: 1 or more, whatever ``--rel-level``) and read a diversity qrels
(``topic subtopic item label``); an ordinary qrels is one with a single subtopic. gdeval's refuse a
label above ``max_grade``, as gdeval does.
"""

from __future__ import annotations

import math

from ...limits import MAX_DIVERSITY_CUTOFF
from .. import gdeval, ndeval
from ..ranking import ranked_items
from ..trec_rules import TrecEvalRefusal
from .definition import CUT_LONG, Definition, IrName, register


def _check_grade(options: tuple) -> str | None:
    if options[0] != "exp-log2" and len(options) == 2:
        return "dcg must be 'exp-log2' (gdeval's gains; nDCG@k is trec_eval's)"
    grade = options[-1]
    return None if isinstance(grade, int) and 1 <= grade <= 30 else "max_grade must be a whole number from 1 to 30"


def _gdeval_values(rr, s, params) -> tuple[float, float]:
    cutoff, *_, max_grade = params
    key = ("gdeval", cutoff, max_grade)
    if key not in rr.cache:
        top = max(rr.labels.values(), default=0)
        if top > max_grade:
            raise TrecEvalRefusal(f"topic {rr.topic}: label {top} is above the maximum grade {max_grade} (gdeval "
                                  f"refuses it too); give max_grade, as in ERR(max_grade={top})@{cutoff}")
        rr.cache[key] = gdeval.topic_values(rr.scores, rr.labels, cutoff, max_grade, s.score_bits) or (0.0, 0.0)
    return rr.cache[key]


def _gdeval_ndcg(rr, s, params):
    return [_gdeval_values(rr, s, params)[0]]


def _gdeval_err(rr, s, params):
    return [_gdeval_values(rr, s, params)[1]]


def _alpha_beta(options: tuple) -> str | None:
    *numbers, order = options
    if order not in ("score", "rank"):
        return f"order must be 'score' (trec_eval's, ndeval -traditional) or 'rank' (ndeval's), not {order!r}"
    return None if all(0.0 <= value <= 1.0 for value in numbers) else "alpha and beta must be from 0 to 1"


def _normalised(rr, s, cutoff, alpha: float, beta: float) -> ndeval.Normalised:
    depth = max(cutoff or 1, 1)
    if depth > MAX_DIVERSITY_CUTOFF:
        raise TrecEvalRefusal(f"a cutoff of {depth} for ndeval's measures: they compute every rank up to it, "
                              f"whatever the run's length; give one up to {MAX_DIVERSITY_CUTOFF:,}")
    key = ("ndeval", depth, alpha, beta)
    if key not in rr.cache:
        # The judgments and the ranking once per turn, the ideal ranking once per alpha: not per cutoff.
        if "ndeval" not in rr.cache:
            per_item = getattr(rr.labels, "subtopics", None)
            if per_item is None:  # an ordinary qrels: one subtopic
                per_item = {item: {"0": label} for item, label in rr.labels.items()}
            rr.cache["ndeval"] = (ndeval.judgments(per_item), ranked_items(rr.scores, s.score_bits))
        topic, order = rr.cache["ndeval"]
        ideal_key = ("ndeval ideal", alpha)
        if ideal_key not in rr.cache:
            rr.cache[ideal_key] = ndeval.ideal_ranking(topic, float(alpha))
        rr.cache[key] = ndeval.evaluate_topic(order, topic, float(alpha), float(beta), depth, rr.cache[ideal_key])
    return rr.cache[key]


def _cut(value):
    """A rule reading ``value(normalised, k)`` at the cutoff, with alpha (beta 0.5: no cutoff measure reads it)."""
    def rule(rr, s, params):
        cutoff, alpha, _ = params  # the order is the ranking's (castregin.evaluation.plain ranks by rank)
        return [value(_normalised(rr, s, cutoff, alpha, 0.5), cutoff)]
    return rule


def _nrbp(normalise: bool):
    def rule(rr, s, params):
        _, alpha, beta, _ = params
        found = _normalised(rr, s, None, alpha, beta)
        value = found.nnrbp if normalise else found.run.nrbp
        return [0.0 if math.isnan(value) else value]
    return rule


def _ap_ia(rr, s, params):
    return [_normalised(rr, s, None, 0.5, 0.5).run.map_ia]


_GDEVAL = "gdeval.pl's (TREC Web track), checked against it"
_NDEVAL = "ndeval.c's (TREC Web track), checked against it; diversity qrels, labels binarised"
#: ``order``: ``'score'`` ranks by score (trec_eval's order, ndeval's ``-traditional``), ``'rank'`` by the run's
#: rank column (ndeval's default).
_ORDER = ("order", "score")
_ALPHA = (("alpha", 0.5), _ORDER)


def _at(name: str, shown: str) -> tuple[IrName, ...]:
    return (IrName(name, shown, cutoff=True),)


register(Definition("gdeval_nDCG", _gdeval_ndcg, CUT_LONG, uses_level=False, trec_name=False,
                    ir_measures=(IrName("nDCG", "nDCG(dcg='exp-log2')@k", cutoff=True,
                                        when=lambda params: params.get("dcg") == "exp-log2"),),
                    options=(("dcg", "exp-log2"), ("max_grade", gdeval.GDEVAL_MAX_GRADE)), check_options=_check_grade,
                    note=_GDEVAL + "; gains 2^label-1"))
register(Definition("ERR", _gdeval_err, CUT_LONG, uses_level=False, trec_name=False,
                    ir_measures=_at("ERR", "ERR(max_grade=4)@k"),
                    options=(("max_grade", gdeval.GDEVAL_MAX_GRADE),), check_options=_check_grade, note=_GDEVAL))
for _name, _value in (
        ("alpha_nDCG", lambda n, k: n.ndcg[k - 1]),
        ("alpha_DCG", lambda n, k: n.run.dcg[k - 1]),
        ("ERR_IA", lambda n, k: n.run.err[k - 1]),
        ("nERR_IA", lambda n, k: n.nerr[k - 1]),
        ("P_IA", lambda n, k: n.run.precision[k - 1]),
        ("StRecall", lambda n, k: n.run.strec[k - 1])):
    register(Definition(_name, _cut(_value), CUT_LONG, uses_level=False, trec_name=False,
                        ir_measures=_at(_name, f"{_name}(alpha=0.5)@k"), options=_ALPHA, check_options=_alpha_beta,
                        diversity=True, note=_NDEVAL))
register(Definition("NRBP", _nrbp(False), uses_level=False, trec_name=False,
                    ir_measures=(IrName("NRBP", "NRBP(alpha=0.5,beta=0.5)"),),
                    options=(("alpha", 0.5), ("beta", 0.5), _ORDER), check_options=_alpha_beta, diversity=True,
                    note=_NDEVAL))
register(Definition("nNRBP", _nrbp(True), uses_level=False, trec_name=False,
                    ir_measures=(IrName("nNRBP", "nNRBP(alpha=0.5,beta=0.5)"),),
                    options=(("alpha", 0.5), ("beta", 0.5), _ORDER), check_options=_alpha_beta, diversity=True,
                    note=_NDEVAL + "; 0 where nothing is relevant (ndeval: nan)"))
register(Definition("AP_IA", _ap_ia, uses_level=False, trec_name=False, ir_measures=(IrName("AP_IA", "AP_IA"),),
                    options=(_ORDER,), check_options=_alpha_beta, diversity=True, note=_NDEVAL + " (MAP-IA)"))


# --- RBP (Moffat and Zobel 2008) -------------------------------------------------------------------------------


def _check_persistence(options: tuple) -> str | None:
    return None if 0.0 < options[0] < 1.0 else "p (persistence) must be between 0 and 1"


def _rbp_parts(rr, s, params) -> tuple[float, float]:
    """RBP, and its residual: what the unjudged items of the ranking and the ranks past it could add."""
    cutoff, p = params
    key = ("rbp", cutoff, p)
    if key not in rr.cache:
        labels, level = rr.labels, rr.cache.get("level")
        order = ranked_items(rr.scores, s.score_bits)[:cutoff]
        rbp = unjudged = 0.0
        weight = 1.0 - p
        for item in order:
            label = labels.get(item)
            if label is None or label < 0:
                unjudged += weight
            elif label >= level:
                rbp += weight
            weight *= p
        rr.cache[key] = (rbp, unjudged + p ** len(order))
    return rr.cache[key]


def _rbp(residual: bool):
    def rule(rr, s, params):
        rr.cache["level"] = s.level
        parts = _rbp_parts(rr, s, params)
        return [parts[1] if residual else parts[0]]
    return rule


_RBP_NOTE = ("Moffat and Zobel's rank-biased precision, binary at the relevance level; checked against trectools "
             "0.0.50")
register(Definition("RBP", _rbp(False), CUT_LONG, trec_name=False,
                    ir_measures=(IrName("RBP", "RBP(p=0.8)@k", cutoff=None),), options=(("p", 0.8),),
                    check_options=_check_persistence, note=_RBP_NOTE))
register(Definition("RBP_residual", _rbp(True), CUT_LONG, trec_name=False,
                    ir_measures=(IrName("RBP_residual", "RBP_residual(p=0.8)@k", cutoff=None),), options=(("p", 0.8),),
                    check_options=_check_persistence,
                    note="RBP's residual: the weight of the unjudged items ranked and of the ranks past the ranking "
                         "(p^items), RBP's largest gain were they relevant; checked against trectools 0.0.50"))
