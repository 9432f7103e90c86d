"""The inferred measures of a stratified sample of the pool: xinfAP, infNDCG, iP@k, infIPrec@r, inum_rel(_ret).

The estimators of Yilmaz, Kanoulas and Aslam (SIGIR 2008) as NIST's ``sample_eval.pl`` computes them
(:mod:`castregin.evaluation.inferred`, checked against the script), on a stratified qrels
(``turn 0 item stratum label``, -1 for a pooled item left out of the sample: :mod:`castregin.formats.strata`),
whose turns' labels carry their strata (:class:`~castregin.data.StratumLabels`); on qrels without strata
they are refused. Names: the script prints xinfAP as ``infAP`` (castregin's ``infAP`` is trec_eval's, the
estimator of one uniform sample), ``iP10`` as castregin's ``iP@10``, ``iprec@rec0.10`` as ``infIPrec@0.1``;
``infNDCG``, ``inum_rel_ret`` and ``inum_rel`` alike.

A turn's ranking is trec_eval's (score descending, ties by item id descending), of which the first 1000
items count, as in the script (``MAX_RESULT_SIZE``); ``-M`` cuts it first. The relevance level
(``--rel-level``) says which sampled labels are relevant to xinfAP, iP@k, infIPrec@r and the counts (the
script's "above 0" is level 1; evaluate's default is 2); infNDCG takes every label above 0 as its gain,
whatever the level. The ``all`` values: the mean over the turns for the rates, the sum for inum_rel and
inum_rel_ret (the script's ``inum_rel all`` also sums the qrels turns the run lacks).
"""

from __future__ import annotations

from ...errors import InputError
from ..inferred import (
    MAX_RESULT_SIZE,
    RECALL_LEVELS,
    TopicEstimates,
    estimate_topic,
    inferred_precision,
    interpolated_precision,
    topic_sample,
)
from ..ranking import ranked_items
from .definition import CUT_DOUBLE, SUM, Definition, IrName, Param, cutoff

#: The measures this module declares: :mod:`.registry` gathers them when a name first asks for one of them.
MEASURES: list[Definition] = []
declare = MEASURES.append

#: The recall levels of infIPrec@r: sample_eval.pl's 11, as numbers (a level's value depends on the others: the
#: script credits at most one level per rank, so only these have the script's values).
RECALL_VALUES = tuple(float(level) for level in RECALL_LEVELS)


def missing_strata(names: str) -> str:
    """Why measures that read strata (named ``names``) are refused on qrels without."""
    return (f"{names} read stratified qrels (turn 0 item stratum label, -1 for a pooled item not sampled, as "
            "`castregin pool --sample --strata-out` writes them) and these have no strata; give such a file")


def _estimates(rr, s) -> TopicEstimates:
    """The turn's estimates at the relevance level, computed once for every inferred measure of the turn."""
    key = ("inferred", s.level, s.max_docs, s.score_bits)
    if key not in rr.cache:
        strata = getattr(rr.labels, "strata", None)
        if strata is None:
            raise InputError(missing_strata("the inferred measures"))
        order = ranked_items(rr.scores, s.score_bits)[:min(s.max_docs, MAX_RESULT_SIZE)]
        rr.cache[key] = estimate_topic(order, topic_sample(rr.labels, strata, s.level), cutoffs=())
    return rr.cache[key]


def _xinf_ap(rr, s, params):
    return [_estimates(rr, s).xinf_ap]


def _inf_ndcg(rr, s, params):
    return [_estimates(rr, s).inf_ndcg]


def _inum_rel(rr, s, params):
    return [_estimates(rr, s).inum_rel]


def _inum_rel_ret(rr, s, params):
    return [_estimates(rr, s).inum_rel_ret]


def _ip(rr, s, cutoffs):
    estimates = _estimates(rr, s)
    return [inferred_precision(estimates, cutoff) for cutoff in cutoffs]


def _inf_iprec(rr, s, levels):
    values = interpolated_precision(_estimates(rr, s))
    return [values[RECALL_VALUES.index(level)] for level in levels]


_TOOL = "sample_eval.pl (NIST, 10 Oct 2011)"
#: What the formulas share: a stratum's pooled, sampled and sampled relevant items.
_STRATA = ("per stratum s: `N_s` items pooled, `n_s` sampled (labelled 0 or more), `r_s` of them relevant; "
           "`R = sum_s r_s * N_s / n_s` (inum_rel)")


def _retrieved(among: str) -> str:
    """The estimated relevant items among ``among`` (the first k items, the ranking)."""
    return (f"`sum_s m_s * (q_s + 0.00001) / (p_s + 0.00003)` over the strata, of the pooled items among {among} "
            "(1000 at most): `m_s` of stratum s, `p_s` of them sampled, `q_s` of those relevant")


def _declare(name: str, rule, formula: str, printed: str, **kwargs) -> None:
    """Register an inferred measure, which sample_eval.pl prints as ``printed``."""
    kwargs.setdefault("ir_measures", (IrName(name, name),))
    declare(Definition(name, rule, trec_name=False, formula=formula, oracle=_TOOL, stratified=True,
                       note=f"sample_eval.pl's {printed}, checked against it; stratified qrels", **kwargs))


_declare("xinfAP", _xinf_ap,
         "extended inferred AP (Yilmaz, Kanoulas and Aslam 2008; sample_eval.pl prints it as infAP): "
         "`sum_s (r_s * N_s / n_s) / R * (sum_i PC(i)) / r_s` over stratum s's sampled relevant items i, at rank i "
         "`PC(i) = 1/i + (m/i) * sum_t (m_t/m) * (q_t + 0.00001) / (p_t + 0.00003)` of the m pooled items above it "
         f"(`m_t` of stratum t, `p_t` sampled, `q_t` relevant); {_STRATA}", "infAP")
_declare("infNDCG", _inf_ndcg,
         "inferred nDCG: `m * sum_s (m_s / m) * g_s / p_s` over the estimated ideal DCG, `g_s` the sum of "
         "`label(i) / log2(i + 1)` of stratum s's sampled items labelled above 0 in the ranking, `m` the pooled "
         "items ranked (`m_s` of stratum s, `p_s` sampled); the ideal DCG ranks each grade's estimated count "
         "(rounded half up) from the largest grade, grades ordered as text", "infNDCG", uses_level=False)
_declare("iP", _ip, f"inferred precision at k: {_retrieved('the first k')}, over k", "iP10, iP50, iP1000",
         parameter=cutoff(), ir_measures=(IrName("iP", "iP@k", cutoff=True),))
_declare("infIPrec", _inf_iprec,
         "inferred interpolated precision at recall r (sample_eval.pl's iprec@rec): walking the ranks from the "
         "deepest up, the largest `iP(i)` so far goes to the highest of the 11 levels `r * R` not yet given one "
         "that exceeds the estimated relevant among the first i, one level a rank (levels above inum_rel_ret "
         "skipped first); the levels left get the largest `iP(i)` of the ranking", "iprec@rec0.00 ... iprec@rec1.00 "
         "(over the turns only)", parameter=Param(CUT_DOUBLE, (), "r", "a recall level", choices=RECALL_VALUES),
         ir_measures=(IrName("infIPrec", "infIPrec@r", param="recall"),))
_declare("inum_rel_ret", _inum_rel_ret, f"the estimated relevant items retrieved: {_retrieved('the ranking')}",
         "inum_rel_ret", aggregate=SUM)
_declare("inum_rel", _inum_rel, f"the estimated relevant items of the turn's pool: `R`; {_STRATA}",
         "inum_rel (its all value sums every qrels turn, the run's or not)", aggregate=SUM)
