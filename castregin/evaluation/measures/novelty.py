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
from .definition import Definition, IrName, Option, cutoff

#: The measures this module declares: :mod:`.registry` gathers them when a name first asks for one of them.
MEASURES: list[Definition] = []
declare = MEASURES.append


def _check_grade(options: tuple) -> str | None:
    return None if 1 <= options[-1] <= 30 else "max_grade must be a whole number from 1 to 30"


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
    *numbers, _ = options  # the order's choices are its Option's
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
_GDEVAL_TOOL, _NDEVAL_TOOL = "gdeval.pl 1.3 (TREC Web track)", "ndeval.c 4.5 (TREC Web track)"
_MAX_GRADE = Option("max_grade", gdeval.GDEVAL_MAX_GRADE, "the largest label: a label g is relevant with "
                    "probability (2^g - 1) / 2^max_grade (gdeval's, 4; 1 to 30)")
_DCG = Option("dcg", "exp-log2", "gdeval's gains 2^label - 1 (nDCG@k without it is trec_eval's)", ("exp-log2",))
_ORDER = Option("order", "score", "the ranking: 'score' by score, ties by item id descending (trec_eval's, "
                "ndeval -traditional), 'rank' by the run's rank column (ndeval's default)", ("score", "rank"))
_ALPHA_OPTION = Option("alpha", 0.5, "redundancy: each further item relevant to a subtopic gains (1 - alpha) times "
                       "the one before (0 to 1; ndeval's 0.5)")
_BETA = Option("beta", 0.5, "patience: the weight of rank i is beta^(i-1) (0 to 1; ndeval's 0.5)")
_ALPHA = (_ALPHA_OPTION, _ORDER)


def _at(name: str, shown: str) -> tuple[IrName, ...]:
    return (IrName(name, shown, cutoff=True),)


#: ndeval's measures at a cutoff: name, value at k, formula (``g(i)``: the item at rank i's gain, summed over the
#: subtopics it is relevant to, each ``(1 - alpha)^(items above it relevant to that subtopic)``).
_NDEVAL_AT = (
    ("alpha_nDCG", lambda n, k: n.ndcg[k - 1],
     "`alpha_DCG@k / alpha_DCG@k of the ideal ranking` (ndeval's greedy one); alpha-nDCG (Clarke et al. 2008)"),
    ("alpha_DCG", lambda n, k: n.run.dcg[k - 1],
     "`sum_{i<=k} g(i) / log2(i + 1)`, over the same sum with every subtopic met at every rank"),
    ("ERR_IA", lambda n, k: n.run.err[k - 1],
     "`sum_{i<=k} g(i) / i`, over the same sum with every subtopic met at every rank (intent-aware ERR)"),
    ("nERR_IA", lambda n, k: n.nerr[k - 1], "`ERR_IA@k / ERR_IA@k of the ideal ranking`"),
    ("P_IA", lambda n, k: n.run.precision[k - 1],
     "`(relevant (item, subtopic) pairs among the first k) / (k * subtopics)`: intent-aware precision"),
    ("StRecall", lambda n, k: n.run.strec[k - 1],
     "`(subtopics with a relevant item among the first k) / subtopics`: subtopic recall"),
)
_IA = ("; `g(i)`: the rank i item's gain, over the subtopics it is relevant to "
       "`(1 - alpha)^(items above it relevant there)`")

declare(Definition("gdeval_nDCG", _gdeval_ndcg, cutoff(), uses_level=False, trec_name=False,
                   ir_measures=(IrName("nDCG", "nDCG(dcg='exp-log2')@k", cutoff=True,
                                       when=lambda params: params.get("dcg") == "exp-log2"),),
                   options=(_DCG, _MAX_GRADE), check_options=_check_grade, note=_GDEVAL + "; gains 2^label-1",
                   formula="`DCG@k / ideal DCG@k`, `DCG@k = sum_{i<=k} (2^label(i) - 1) / log2(i + 1)`; the ideal "
                           "ranking is the qrels' positive labels, largest first",
                   oracle=_GDEVAL_TOOL))
declare(Definition("ERR", _gdeval_err, cutoff(), uses_level=False, trec_name=False,
                   ir_measures=_at("ERR", "ERR(max_grade=4)@k"), options=(_MAX_GRADE,), check_options=_check_grade,
                   note=_GDEVAL,
                   formula="`sum_{i<=k} r(i) / i * prod_{j<i} (1 - r(j))`, `r(i) = (2^label(i) - 1) / 2^max_grade`: "
                           "expected reciprocal rank (Chapelle et al. 2009)",
                   oracle=_GDEVAL_TOOL))
for _name, _value, _formula in _NDEVAL_AT:
    declare(Definition(_name, _cut(_value), cutoff(), uses_level=False, trec_name=False,
                       ir_measures=_at(_name, f"{_name}(alpha=0.5)@k"), options=_ALPHA, check_options=_alpha_beta,
                       diversity=True, note=_NDEVAL, formula=_formula + (_IA if "g(i)" in _formula else ""),
                       oracle=_NDEVAL_TOOL))
_NRBP = ("`(1 - (1 - alpha) * beta) / subtopics * sum_i beta^(i-1) g(i)` over the whole ranking: novelty- and "
         "rank-biased precision (Clarke et al. 2009)" + _IA)
declare(Definition("NRBP", _nrbp(False), uses_level=False, trec_name=False,
                   ir_measures=(IrName("NRBP", "NRBP(alpha=0.5,beta=0.5)"),),
                   options=(_ALPHA_OPTION, _BETA, _ORDER), check_options=_alpha_beta, diversity=True,
                   note=_NDEVAL, formula=_NRBP, oracle=_NDEVAL_TOOL))
declare(Definition("nNRBP", _nrbp(True), uses_level=False, trec_name=False,
                   ir_measures=(IrName("nNRBP", "nNRBP(alpha=0.5,beta=0.5)"),),
                   options=(_ALPHA_OPTION, _BETA, _ORDER), check_options=_alpha_beta, diversity=True,
                   note=_NDEVAL + "; 0 where nothing is relevant (ndeval: nan)",
                   formula="`NRBP / NRBP of the ideal ranking`", oracle=_NDEVAL_TOOL))
declare(Definition("AP_IA", _ap_ia, uses_level=False, trec_name=False, ir_measures=(IrName("AP_IA", "AP_IA"),),
                   options=(_ORDER,), check_options=_alpha_beta, diversity=True, note=_NDEVAL + " (MAP-IA)",
                   formula="the mean over the subtopics of each one's average precision (MAP-IA)",
                   oracle=_NDEVAL_TOOL))


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
_TRECTOOLS = "trectools 0.0.50 (its RBP)"
_PERSISTENCE = Option("p", 0.8, "persistence: the chance of going on to the next item (between 0 and 1)")
declare(Definition("RBP", _rbp(False), cutoff(), trec_name=False,
                   ir_measures=(IrName("RBP", "RBP(p=0.8)@k", cutoff=None),), options=(_PERSISTENCE,),
                   check_options=_check_persistence, note=_RBP_NOTE,
                   formula="`(1 - p) * sum_{i<=k} rel(i) * p^(i-1)`, `rel(i)` 1 for an item labelled at or above "
                           "the level (Moffat and Zobel 2008)",
                   oracle=_TRECTOOLS))
declare(Definition("RBP_residual", _rbp(True), cutoff(), trec_name=False,
                   ir_measures=(IrName("RBP_residual", "RBP_residual(p=0.8)@k", cutoff=None),),
                   options=(_PERSISTENCE,), check_options=_check_persistence,
                   note="RBP's residual: the weight of the unjudged items ranked and of the ranks past the ranking "
                        "(p^items), RBP's largest gain were they relevant; checked against trectools 0.0.50",
                   formula="`(1 - p) * sum_{i<=k, i unjudged} p^(i-1) + p^min(k, n)`: what RBP@k could gain were "
                           "the unjudged items and the ranks past the ranking (n items) relevant",
                   oracle=_TRECTOOLS))
