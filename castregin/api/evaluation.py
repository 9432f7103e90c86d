"""Scores: ir_measures' ``calc_aggregate`` and ``iter_calc``, castregin's ``evaluate``, hole intervals and the
ranking agreement of two label sources."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..data import Qrels
from ..errors import InputError
from ..evaluation.evaluate import evaluate as _evaluate
from ..evaluation.evaluate import evaluate_rows, natural_key
from ..evaluation.measures import DEFAULT_MEASURES, Measure, parse_measure
from ..evaluation.ranking import DEFAULT_SCORE_PRECISION
from .inputs import QRELS, RUN, as_qrels, as_run, each_input, measure_names

if TYPE_CHECKING:
    import pandas as pd


class Metric(NamedTuple):
    """One per-turn value, shaped like ir_measures' ``Metric``: the turn, the measure as passed, its value."""

    query_id: str
    measure: Any
    value: float


def measure_plan(measures, rel_level: int) -> tuple[list[Measure], list[tuple[Any, str]]]:
    """The measures to evaluate, and ``(key, castregin name)`` of each value to return, in order.

    A measure that stands for one value is keyed as passed; the measures of a set or family
    (``all_trec``, ``P.1,3``) are keyed by castregin's names (``P_1``).
    """
    parsed: list[Measure] = []
    targets: list[tuple[Any, str]] = []
    seen: dict[Any, str] = {}
    for key, name in measure_names(measures):
        measures_of_name = [key] if isinstance(key, Measure) else parse_measure(name, rel_level)
        parsed.extend(measures_of_name)
        keys = [(key, measures_of_name[0].name)] if len(measures_of_name) == 1 else \
            [(m.name, m.name) for m in measures_of_name]
        for target_key, target_name in keys:
            if seen.setdefault(target_key, target_name) != target_name:
                raise InputError(f"{seen[target_key]} and {target_name} are different measures but one key "
                                 f"({target_key!r}); pass them as strings", argument="measures")
            if (target_key, target_name) not in targets:
                targets.append((target_key, target_name))
    return parsed, targets


def values_of(rows: Iterable[tuple]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """``(all value, {turn: value})`` per measure name from one (run, qrels)'s result rows."""
    aggregates: dict[str, float] = {}
    per_turn: dict[str, dict[str, float]] = {}
    for _run, _qrels, measure, turn, value in rows:
        if measure not in aggregates:
            aggregates[measure] = value  # each measure's first row is its "all" value
        else:
            per_turn.setdefault(measure, {})[turn] = value
    return aggregates, per_turn


def qrels_for(qrels, parsed: Sequence[Measure], argument: str = "qrels", default_name: str = "qrels") -> Qrels:
    """:func:`as_qrels`, except that a file path is read as a diversity qrels (``topic subtopic item
    label``) when one of ``parsed`` is an ndeval measure, which reads each item's label per subtopic."""
    from ..formats.diversity import diversity_reader

    read = diversity_reader(parsed)
    if read is not None and isinstance(qrels, (str, os.PathLike)):
        return read(qrels)
    return as_qrels(qrels, argument, default_name)


# --- the functions -----------------------------------------------------------------------------------------


def calc_aggregate(measures, qrels, run, *, rel_level: int = 2, complete: bool = False,
                   score_precision: str = DEFAULT_SCORE_PRECISION) -> dict[Any, float]:
    """The value of each measure over all turns, like ir_measures' ``calc_aggregate``.

    Parameters
    ----------
    measures:
        A name (``"P@1"``, ``"ndcg_cut_3"``, ``"all_trec"``), an ir_measures measure
        (``ir_measures.nDCG@3``), or a list mixing them.
    qrels, run:
        Any accepted input (a file path, a Qrels/Run, a dict, a DataFrame, ir_measures records, a
        ranx object; see :mod:`castregin.api`).
    rel_level:
        Label at or above which an item is relevant for binary measures that do not set ``rel``.
    complete:
        Average over every qrels turn (a missing one scores 0) instead of the turns both share.
    score_precision:
        ``"double"`` (default): rank items on scores compared as doubles, as trec_eval-9.0.8 does;
        ``"float"``: as 32-bit floats, as pytrec_eval, ir_measures and trec_eval up to v9.0.8 do.

    Returns
    -------
    ``{measure: value}`` in the order given. A measure that stands for one value is keyed as passed
    (the string or the ir_measures object); the measures of a set or family (``"all_trec"``,
    ``"P.1,3"``) are keyed by castregin's names (``"P_1"``, ``"num_q"``). Values are floats (counts
    such as ``num_ret`` too).

    >>> calc_aggregate(["P@1", "ndcg_cut_3"], {"t": {"a": 2}}, {"t": {"a": 1.0, "b": 0.5}})
    {'P@1': 1.0, 'ndcg_cut_3': 1.0}
    """
    parsed, targets = measure_plan(measures, rel_level)
    rows = evaluate_rows(as_run(run), qrels_for(qrels, parsed), parsed, rel_level, complete,
                         score_precision=score_precision)
    aggregates, _ = values_of(rows)
    return {key: aggregates[name] for key, name in targets}


def iter_calc(measures, qrels, run, *, rel_level: int = 2, complete: bool = False,
              score_precision: str = DEFAULT_SCORE_PRECISION) -> Iterator[Metric]:
    """Per-turn values as :class:`Metric` ``(query_id, measure, value)``, like ir_measures' ``iter_calc``.

    Parameters
    ----------
    measures, qrels, run, rel_level, complete, score_precision:
        As in :func:`calc_aggregate`.

    Returns
    -------
    An iterator over the records, turn by turn (turns in natural order: ``132_2-9`` before
    ``132_2-11``), measures in the order given, keyed as in :func:`calc_aggregate`. Measures
    without per-turn values (``num_q``, ``gm_map``, ``gm_bpref``) are left out. The turns are those
    averaged: the shared ones, or with ``complete`` every qrels turn (the run's missing ones at 0).
    Everything is computed, and every error raised, before the iterator is returned.
    """
    parsed, targets = measure_plan(measures, rel_level)
    rows = evaluate_rows(as_run(run), qrels_for(qrels, parsed), parsed, rel_level, complete, per_turn=True,
                         score_precision=score_precision)
    _, per_turn = values_of(rows)
    turns = sorted({turn for values in per_turn.values() for turn in values}, key=natural_key)
    records = [Metric(turn, key, per_turn[name][turn]) for turn in turns for key, name in targets
               if turn in per_turn.get(name, {})]
    return iter(records)


def evaluate(runs, qrels, measures=DEFAULT_MEASURES, rel_level: int = 2, complete: bool = False,
             per_turn: bool = False, turns: Iterable[str] | None = None, *,
             score_precision: str = DEFAULT_SCORE_PRECISION) -> pd.DataFrame:
    """Evaluate every run against every qrels, as ``trec_eval -l<rel_level> [-c]`` would.

    Parameters
    ----------
    runs:
        One run or a list of runs, each any accepted input (a file path, a Run, a dict
        ``{turn: {item: score}}``, a DataFrame, ir_measures records, a ranx Run).
    qrels:
        One qrels or a list of them, likewise.
    measures:
        A name, an ir_measures measure, or a list mixing them (default: the CAsT set
        ``P@1 P@3 nDCG@3 nDCG@5 AP RR R@10``).
    rel_level, complete, score_precision:
        As in :func:`calc_aggregate`.
    per_turn, turns:
        As in :func:`castregin.evaluation.evaluate.evaluate`: rows per turn too; only these turns.

    Returns
    -------
    The DataFrame of :func:`castregin.evaluation.evaluate.evaluate` (``run, qrels, measure, turn,
    value``); ``measure`` holds the names castregin parsed (an ir_measures measure's name, with a
    ``rel`` it was given). A run is named by its tag (a file's sixth column, a ranx run's name),
    else ``run`` (``runs[i]`` in a list); qrels by their name (a file's stem), else ``qrels``
    (``qrels[i]`` in a list).
    """
    run_list = each_input(runs, RUN, as_run, "runs")
    parsed, _ = measure_plan(measures, rel_level)
    qrels_list = each_input(qrels, QRELS, lambda value, *names: qrels_for(value, parsed, *names), "qrels")
    return _evaluate(run_list, qrels_list, parsed, rel_level, complete, per_turn, turns, score_precision)


# --- holes ---------------------------------------------------------------------------------------------------


def holes(runs, qrels, measures="nDCG@3", *, depth: int | None = None, hole_label: int | None = None,
          rel_level: int = 2, score_precision: str = DEFAULT_SCORE_PRECISION) -> dict:
    """Each run's score as the interval its holes (unjudged items in its top ``depth``) leave open.

    As ``castregin analyze holes`` (see :mod:`castregin.evaluation.holes` for what the interval is and
    why it is exact): for every labelling of a turn's holes with labels 0 to ``hole_label``, the least
    and the greatest value of the measure.

    Parameters
    ----------
    runs, qrels:
        One run or a list of runs, and one qrels, each any accepted input (see :mod:`castregin.api`).
    measures:
        A name or a list of names: P@k, Success@k, R@k, RR, AP, AP@k, Rprec, nDCG, nDCG@k (or
        trec_eval's names); any other is refused.
    depth:
        The holes are the unjudged items in each turn's top ``depth`` (trec_eval's order). Default:
        the measure's cutoff; required for measures without one.
    hole_label:
        The best label a hole may take. Default: the qrels' largest label.
    rel_level, score_precision:
        As in :func:`calc_aggregate`.

    Returns
    -------
    ``{"settings": {...}, "runs": [...], "flips": [...], "turns": [...]}``: per run and measure the
    means (``score`` as trec_eval prints it, ``low``, ``high``, ``judged``, ``holes``...) over the
    turns in both run and qrels; the pairs of runs whose order the holes could flip; per run, measure
    and turn the holes, ``judged``, ``score``, ``low``, ``high`` and a labelling of the holes that
    gives each end (``low_labels``, ``high_labels``).

    >>> run = holes({"t": {"a": 2.0, "b": 1.0}}, {"t": {"a": 2, "x": 2}}, "P@2")["runs"][0]
    >>> run["score"], run["low"], run["high"]
    (0.5, 0.5, 1.0)
    """
    from ..evaluation.holes import hole_intervals

    run_list = each_input(runs, RUN, as_run, "runs")
    names = [name for _, name in measure_names(measures)]
    result = hole_intervals(run_list, as_qrels(qrels), names, depth, hole_label, rel_level, score_precision)
    return result.records()


# --- ranking agreement ---------------------------------------------------------------------------------------


def ranking_agreement(runs, qrels_a, qrels_b, measure="nDCG@3", *, top_k: int | None = None, rel_level: int = 2,
                      score_precision: str = DEFAULT_SCORE_PRECISION):
    """How far two label sources agree on the ranking of ``runs`` by ``measure``.

    ``runs`` is a list of runs (two at least), ``qrels_a`` and ``qrels_b`` two qrels, each any
    accepted input (see :mod:`castregin.api`); ``measure`` one measure, a name or an ir_measures
    measure; ``top_k`` the k of the top-k overlap (default 5, at most the number of runs).

    Returns a :class:`castregin.evaluation.analysis.RankingAgreement`, plain data: ``statistics``
    (``kendall_tau``, ``tau_ap`` with A the reference, ``tau_ap_reverse`` with B, ``spearman_rho``,
    ``top_k``, ``top_k_overlap``, ``top_k_cut_in_tie``, ``swapped_pairs``, ``runs``), ``runs``
    (each run's ``score_a``, ``score_b``, ``rank_a``, ``rank_b`` and ``change``) and ``movers`` (the
    runs whose rank changes, most first); ``to_dict()`` gives it as dicts and lists. Runs are named
    as in :func:`evaluate`; the qrels by their name, else ``qrels_a`` and ``qrels_b``.
    """
    from ..evaluation.analysis import ranking_agreement as _ranking_agreement
    from ..evaluation.ranking import DEFAULT_TOP_K

    run_list = each_input(runs, RUN, as_run, "runs")
    first, second = as_qrels(qrels_a, "qrels_a", "qrels_a"), as_qrels(qrels_b, "qrels_b", "qrels_b")
    _, targets = measure_plan(measure, rel_level)
    if len(targets) != 1:
        raise InputError(f"give one measure, got {len(targets)}", argument="measure")
    return _ranking_agreement(run_list, first, second, targets[0][1],
                              top_k=DEFAULT_TOP_K if top_k is None else top_k, rel_level=rel_level,
                              score_precision=score_precision)
