"""Fewer judgments: sampled pools, inferred measures, adaptive judging and PPI (``castregin pool --sample``,
``sample_eval``, ``analyze ppi``)."""

from __future__ import annotations

import os

from ..data import Run
from ..errors import InputError
from ..evaluation.ranking import DEFAULT_SCORE_PRECISION
from .inputs import RUN, as_qrels, as_run, each_input, measure_names

# --- fewer judgments: sampled pools, inferred measures, adaptive judging, PPI (issue 33) ----------------------


def _stratified(qrels, argument: str = "qrels"):
    """Stratified qrels from a path or a :class:`~castregin.formats.strata.StratifiedQrels`."""
    from ..formats.strata import StratifiedQrels, read_stratified_qrels

    if isinstance(qrels, StratifiedQrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return read_stratified_qrels(qrels)
    raise InputError(f"expected stratified qrels (a file's path or StratifiedQrels), got {type(qrels).__name__}",
                     argument=argument)


def sample_pool(runs, strata: str, *, seed: int = 0, judged=None):
    """A stratified sample of the runs' pool, as ``castregin pool --sample STRATA --strata-out``.

    ``strata`` is ``"1-10:1,11-50:0.5,51-1000:10%"`` (strata by the best rank any run gives an item;
    ``FIRST-LAST:#N`` for N items a turn); ``judged`` the judgments so far (any qrels input). Returns
    ``(pool, stratified)``: the sampled items per turn (``{turn: set of items}``, what to judge) and
    the :class:`~castregin.formats.strata.StratifiedQrels` of every pooled item (-1 where not sampled or
    not judged yet), which :func:`sample_eval` reads.

    >>> pool, strata = sample_pool([{"t": {"a": 3.0, "b": 2.0, "c": 1.0}}], "1-1:1,2-3:#1", seed=1)
    >>> sorted(strata.strata["t"].items())
    [('a', '1'), ('b', '2'), ('c', '2')]
    """
    from ..track.pool import build_pool

    run_list = [_ranked(run) for run in each_input(runs, RUN, as_run, "runs")]
    built = build_pool(run_list, None, strata=strata, seed=seed,
                       judged=as_qrels(judged, "judged") if judged is not None else None)
    return built.pool, built.stratified


def _ranked(run: Run) -> Run:
    """``run`` with a rank column (a run made in Python may have none): its order by score, as trec_eval's."""
    if run.ranks:
        return run
    ranks = {turn: {item: float(rank) for rank, item in enumerate(run.ranked(turn), start=1)} for turn in run.scores}
    return Run(run.tag, run.scores, ranks, run.source)


def sample_eval(qrels, run, *, rel_level: int = 1):
    """The inferred measures of ``run`` on stratified ``qrels``, as NIST's sample_eval.pl computes them.

    ``qrels`` is a path or :class:`~castregin.formats.strata.StratifiedQrels` (``turn 0 item stratum
    label``, -1 for a pooled item not sampled); ``run`` any run input. ``rel_level`` 1 is the script's
    "label above 0 is relevant". Returns a :class:`castregin.evaluation.inferred.SampleEvalResult`: per
    topic (``topics``, each with ``estimates.xinf_ap``, ``inf_ndcg``, ``precision[k]``, ``inum_rel_ret``,
    ``inum_rel``) and the means (``xinf_ap``, ``inf_ndcg``, ``interpolated``, ``precision``...); see
    :mod:`castregin.evaluation.inferred` for the quirks it keeps.
    """
    from ..evaluation.inferred import sample_eval as _sample_eval

    return _sample_eval(_stratified(qrels), as_run(run), rel_level)


def adaptive_pool(runs, strategy: str, budget: int, *, judged=None, rel_level: int = 2,
                  depth: int | None = None) -> dict[str, list[str]]:
    """The next items to judge per turn, as ``castregin pool --strategy STRATEGY --budget N``.

    ``strategy`` is ``depth``, ``mtf`` or ``bandit`` (:mod:`castregin.track.sampling`); ``budget`` the
    judgments a turn, ``judged`` (any qrels input) included; ``depth`` the items of each run the
    strategy may judge (None: all). Returns ``{turn: [items in the order to judge them]}``.
    """
    from ..track.pool import build_pool

    run_list = [_ranked(run) for run in each_input(runs, RUN, as_run, "runs")]
    built = build_pool(run_list, depth, strategy=strategy, budget=budget, rel_level=rel_level,
                       judged=as_qrels(judged, "judged") if judged is not None else None)
    return {turn: list(items) for turn, items in built.pool.items()}


def simulate_pooling(runs, qrels, *, strategies=("depth", "mtf", "bandit"), budgets=None, measure: str = "AP",
                     rel_level: int = 2, depth: int | None = None, threshold: float = 0.9,
                     score_precision: str = DEFAULT_SCORE_PRECISION):
    """Judgments vs relevant found and vs Kendall's tau per judging strategy, as ``castregin pool simulate``.

    ``qrels`` (any qrels input) is taken as complete. Returns a
    :class:`castregin.evaluation.pooling.PoolingSimulation`: ``points`` (strategy, budget, judgments,
    relevant_found, relevant_share, kendall_tau) and ``needed`` (per strategy, the judgments from which
    tau stays at or above ``threshold``).
    """
    from ..evaluation.pooling import simulate_pooling as _simulate

    run_list = [_ranked(run) for run in each_input(runs, RUN, as_run, "runs")]
    return _simulate(run_list, as_qrels(qrels), list(strategies), budgets, measure, rel_level, depth, threshold,
                     score_precision)


def ppi(runs, human, model, measures="nDCG@3", *, rel_level: int = 2, confidence: float = 0.95,
        plan_width: float | None = None, pairs: bool = True):
    """Prediction-powered (PPI++) means of each run, as ``castregin analyze ppi``.

    ``human`` holds people's judgments of a random sample of turns, ``model`` a model's of every turn
    (each any qrels input). Returns a :class:`castregin.evaluation.ppi.PpiResult`: ``runs`` (per run and
    measure the PPI++ interval ``ppi``, ``lam``, the ``classical`` interval, ``model_mean``,
    ``effective_n``), ``differences`` (per pair of runs) and ``plans`` (with ``plan_width``).

    >>> human = {"t1": {"a": 2}, "t2": {"b": 2}}
    >>> model = {"t1": {"a": 2}, "t2": {"b": 2}, "t3": {"a": 2}}
    >>> result = ppi({"t1": {"a": 1.0}, "t2": {"a": 1.0}, "t3": {"a": 1.0}}, human, model, "P@1")
    >>> round(result.runs[0].ppi.estimate, 4), result.runs[0].n, result.runs[0].N
    (0.625, 2, 1)
    """
    from ..evaluation.ppi import ppi_estimates

    run_list = each_input(runs, RUN, as_run, "runs")
    names = [name for _, name in measure_names(measures)]
    return ppi_estimates(run_list, as_qrels(human, "human", "human"), as_qrels(model, "model", "model"), names,
                         rel_level, confidence, plan_width, pairs)
