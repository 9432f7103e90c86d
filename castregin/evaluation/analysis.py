"""Evaluating the evaluation: pool reusability, ranking stability and the uncertainty of means.

- :func:`leave_one_run_out` (Zobel 1998): how a run would have scored had it not contributed to the
  pool. Its unique contributions at depth k (items in its top k by the rank column that no other
  run has in its top k) are removed from the qrels and the run is evaluated again, unjudged items
  counting as non-relevant, as trec_eval counts them.
- :func:`ranking_correlations`: Kendall's tau (scipy's tau-b), tau_AP (Yilmaz, Aslam and Robertson
  2008), Spearman's rho and the top-k overlap between the system rankings under two (qrels, measure)
  settings; :func:`ranking_agreement` the same between two label sources, with each run's rank
  under each and the runs that move most.
- :func:`bootstrap_intervals`: percentile bootstrap confidence intervals of each mean, resampling
  turns (or topics).

All take castregin's :class:`~castregin.data.Run` and :class:`~castregin.data.Qrels` and return plain
rows; the numbers of each run come from :func:`castregin.evaluation.evaluate.evaluate_rows`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..data import Qrels, Run, topic_of
from ..errors import InputError
from ..limits import MAX_RESAMPLES
from ..track.pool import pool_runs
from .evaluate import ALL_TURNS, evaluate_rows, run_names
from .measures import MEAN, Measure, parse_measure, parse_one_measure
from .ranking import DEFAULT_SCORE_PRECISION, DEFAULT_TOP_K


def _means(runs: Sequence[Run], qrels: Qrels, measures: Sequence[str], rel_level: int,
           score_precision: str = DEFAULT_SCORE_PRECISION) -> dict[str, list[float]]:
    """Each measure's mean of each run (in the order given), from one evaluation of all of them.

    Measures are looked up by what they parse to: evaluate's rows name ``ndcg_cut.3`` (trec_eval's family
    spelling) ``ndcg_cut_3``. A name standing for several measures (``P.1,3``, ``official``) is an InputError.
    """
    parsed = {}
    for measure in measures:
        parsed[measure] = parse_one_measure(measure, rel_level)
    rows = evaluate_rows(list(runs), qrels, list(parsed.values()), rel_level, score_precision=score_precision)
    by_key = {(run, name): value for run, _, name, turn, value in rows if turn == ALL_TURNS}
    names = run_names(list(runs))
    return {measure: [by_key[name, parsed[measure].name] for name in names] for measure in measures}


def system_ranks(scores: Sequence[float]) -> list[int]:
    """Rank of each system (1 = best), ties sharing the best rank (competition ranking)."""
    return [1 + sum(other > score for other in scores) for score in scores]


# --- leave one run out ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoroRow:
    """One run's score and rank with and without the judgments only it contributed."""

    run: str
    unique: int
    score: float
    score_without: float
    rank: int
    rank_without: int
    judged_without: float

    @property
    def change(self) -> float:
        return self.score_without - self.score


def unique_contributions(runs: Sequence[Run], depth: int) -> list[dict[str, set[str]]]:
    """For each run, per turn, the items in its top ``depth`` that no other run has in its top ``depth``."""
    tops = [pool_runs([run], depth) for run in runs]
    unique = []
    for index, top in enumerate(tops):
        others = pool_runs([run for j, run in enumerate(runs) if j != index], depth)
        unique.append({turn: items - others.get(turn, set()) for turn, items in top.items()
                       if items - others.get(turn, set())})
    return unique


def _without(qrels: Qrels, removed: dict[str, set[str]]) -> Qrels:
    labels = {turn: {item: label for item, label in items.items() if item not in removed.get(turn, ())}
              for turn, items in qrels.labels.items()}
    return Qrels({turn: items for turn, items in labels.items() if items}, qrels.name, qrels.source)


def leave_one_run_out(runs: Sequence[Run], qrels: Qrels, depth: int, measure: str = "nDCG@3",
                      rel_level: int = 2, score_precision: str = DEFAULT_SCORE_PRECISION) -> tuple[list[LoroRow], dict]:
    """Zobel's leave-one-run-out test of a pool's reusability.

    Each run is scored against the qrels without its unique contributions at ``depth``, the other
    runs keeping their full scores; its rank among them is compared with its rank on the full qrels.
    Returns the rows (in the order given) and a summary: Kendall's tau between the full ranking and
    the held-out ranks' ranking, and the largest rank drop. ``score_precision`` is that of
    :func:`castregin.evaluation.evaluate.evaluate`.
    """
    if len(runs) < 2:
        raise InputError("leave-one-run-out needs at least two runs", argument="runs")
    names = run_names(list(runs))
    full = _means(runs, qrels, [measure], rel_level, score_precision)[measure]
    full_ranks = system_ranks(full)
    judged_at = f"Judged@{depth}"
    rows = []
    for index, (run, removed) in enumerate(zip(runs, unique_contributions(runs, depth), strict=True)):
        means = _means([run], _without(qrels, removed), [measure, judged_at], rel_level, score_precision)
        held_out = means[measure][0]
        scores = [held_out if j == index else score for j, score in enumerate(full)]
        rows.append(LoroRow(names[index], sum(len(items) for items in removed.values()), full[index], held_out,
                            full_ranks[index], system_ranks(scores)[index], means[judged_at][0]))
    from scipy import stats

    tau = stats.kendalltau([r.score for r in rows], [r.score_without for r in rows]).statistic
    summary = {"kendall_tau": float(tau), "max_rank_drop": max(r.rank_without - r.rank for r in rows),
               "depth": depth, "measure": measure}
    return rows, summary


# --- rank correlations ----------------------------------------------------------------------------------------


def _tie_groups(scores: Sequence[float]) -> list[list[int]]:
    """The systems' indices grouped by equal score, best group first."""
    groups: dict[float, list[int]] = {}
    for index, score in enumerate(scores):
        groups.setdefault(score, []).append(index)
    return [groups[score] for score in sorted(groups, reverse=True)]


def tau_ap(reference: Sequence[float], estimate: Sequence[float]) -> float:
    """tau_AP of the ranking by ``estimate`` against the ranking by ``reference`` (Yilmaz et al. 2008).

    ``tau_AP = 2/(N-1) * sum_{i=2..N} C(i)/(i-1) - 1``, where systems are taken in the order of the
    estimate and ``C(i)`` counts the systems above position ``i`` that the reference also ranks above
    the system at ``i``. Not symmetric: swaps near the top cost more.

    Ties (the paper has none): equal scores are ordered by one random order of the systems, the same
    in both rankings (as their names would order them, without favouring a name), and tau_AP is its
    mean over every such order, computed exactly; the same rankings, ties included, give 1. For a
    system ``s`` in a tied group of ``g`` in the estimate below the systems ``H``, at the group's
    ``(j+1)``-th place (chance ``1/g``): above it are ``H`` and ``j`` of the group at random; a
    system of ``H`` the reference ties with ``s`` is above ``s`` in the tie order with chance
    ``(j+1)/(g+1)``, and one of the group above ``s`` in the estimate is so in the reference too
    unless the reference ranks it lower. Without ties this is the paper's tau_AP.
    """
    if len(reference) != len(estimate):
        raise InputError("the two rankings must have the same systems", argument="estimate")
    n = len(reference)
    if n < 2:
        return float("nan")
    total = 0.0
    higher: list[int] = []  # the systems of the estimate's groups above the current one
    for group in _tie_groups(estimate):
        size = len(group)
        for system in group:
            score = reference[system]
            better = sum(reference[other] > score for other in higher)
            tied = sum(reference[other] == score for other in higher)
            not_worse_in_group = sum(reference[other] >= score for other in group if other != system)
            for j in range(size):
                above = len(higher) + j  # the systems above `system` at the group's (j+1)-th place
                if above:
                    agreeing = better + tied * (j + 1) / (size + 1)
                    if size > 1:
                        agreeing += j * not_worse_in_group / (size - 1)
                    total += agreeing / (above * size)
        higher.extend(group)
    return 2.0 * total / (n - 1) - 1.0


def swapped_pairs(first: Sequence[float], second: Sequence[float]) -> int:
    """Pairs of systems that the two score lists order in opposite directions (ties are not swaps)."""
    return sum(1 for i, j in itertools.combinations(range(len(first)), 2)
               if (first[i] - first[j]) * (second[i] - second[j]) < 0)


def _cuts(scores: Sequence[float], k: int) -> list[tuple[frozenset, int]]:
    """For each system, its tied group and how many of the group's places fall in the top ``k``."""
    cuts: list[tuple[frozenset, int]] = [(frozenset(), 0)] * len(scores)
    placed = 0
    for group in _tie_groups(scores):
        places = min(max(k - placed, 0), len(group))
        for index in group:
            cuts[index] = (frozenset(group), places)
        placed += len(group)
    return cuts


def cut_in_tie(scores: Sequence[float], k: int) -> bool:
    """Whether the k-th and the (k+1)-th best scores are equal: the top k is then one of several."""
    ordered = sorted(scores, reverse=True)
    return 0 < k < len(ordered) and ordered[k - 1] == ordered[k]


def top_k_overlap(first: Sequence[float], second: Sequence[float], k: int) -> float:
    """``|top k by first ∩ top k by second| / k``, equal scores ordered as :func:`tau_ap` orders them
    (one random order of the systems for both rankings; the mean over every such order, exactly).

    A system whose tied group lies wholly inside (outside) the top k of a ranking is in (out of) it;
    one whose group ``G`` has ``r`` of its places inside is in it when at most ``r - 1`` of ``G``
    come before it in the tie order. For a system cut so in both rankings, the others of the two
    groups before it are a uniform subset of each size (hypergeometric), its place among them uniform.
    """
    if k < 1:
        raise InputError(f"the top k must hold at least one system, got k = {k}", argument="top_k")
    if len(first) != len(second):
        raise InputError("the two rankings must have the same systems", argument="second")
    expected = 0.0
    for system, ((group_a, places_a), (group_b, places_b)) in enumerate(zip(_cuts(first, k), _cuts(second, k),
                                                                            strict=True)):
        if not places_a or not places_b:
            continue
        both, only_a, only_b = len((group_a & group_b) - {system}), len(group_a - group_b), len(group_b - group_a)
        others = both + only_a + only_b
        chance = sum(math.comb(both, x) * math.comb(only_a, y) * math.comb(only_b, z) / math.comb(others, x + y + z)
                     for x in range(min(both, places_a - 1, places_b - 1) + 1)
                     for y in range(min(only_a, places_a - 1 - x) + 1)
                     for z in range(min(only_b, places_b - 1 - x) + 1))
        expected += chance / (others + 1)
    return expected / k


def _undefined_if_constant(statistic, a: Sequence[float], b: Sequence[float]) -> float:
    # scipy warns and returns NaN when a ranking is one tie; castregin says NaN without the warning.
    if len(set(a)) < 2 or len(set(b)) < 2:
        return float("nan")
    return float(statistic(a, b).statistic)


def agreement_statistics(a: Sequence[float], b: Sequence[float], k: int = DEFAULT_TOP_K) -> dict:
    """How far the rankings of the same systems by scores ``a`` and by scores ``b`` agree.

    Kendall's tau (tau-b) and Spearman's rho (on average ranks) from scipy, NaN when either ranking is
    one tie; :func:`tau_ap` with ``a`` the reference (``tau_ap``) and with ``b`` the reference
    (``tau_ap_reverse``); the swapped pairs; :func:`top_k_overlap` (``k`` at most the number of
    systems: ``top_k`` holds the k used) and ``top_k_cut_in_tie``, true when the k-th and (k+1)-th
    scores are equal under ``a`` or ``b`` (the overlap is then a mean over the ways to order the tie).
    Nothing depends on the systems' names.
    """
    from scipy import stats

    if len(a) != len(b):
        raise InputError("the two rankings must have the same systems", argument="b")
    if any(math.isnan(x) for x in (*a, *b)):
        raise InputError("a mean is not a number: every run must have a score under both settings", argument="b")
    if k < 1:
        raise InputError(f"the top k must hold at least one system, got k = {k}", argument="top_k")
    k = min(k, len(a))
    return {"kendall_tau": _undefined_if_constant(stats.kendalltau, a, b), "tau_ap": tau_ap(a, b),
            "tau_ap_reverse": tau_ap(b, a), "spearman_rho": _undefined_if_constant(stats.spearmanr, a, b),
            "swapped_pairs": swapped_pairs(a, b), "top_k": k, "top_k_overlap": top_k_overlap(a, b, k),
            "top_k_cut_in_tie": cut_in_tie(a, k) or cut_in_tie(b, k), "runs": len(a)}


def _expanded(settings: Sequence[tuple[Qrels, str]], rel_level: int) -> list[tuple[Qrels, str]]:
    """The settings with each trec_eval set or family (``P.1,3``) as its measures (``P_1``, ``P_3``)."""
    expanded = []
    for qrels, measure in settings:
        parsed = parse_measure(measure, rel_level)
        # One measure keeps the name given (evaluate's rows carry it); a set or family its measures' names.
        expanded += [(qrels, measure)] if len(parsed) == 1 else [(qrels, one.name) for one in parsed]
    return expanded


def _setting_scores(runs: Sequence[Run], settings: Sequence[tuple[Qrels, str]], rel_level: int,
                    score_precision: str) -> list[list[float]]:
    """Each setting's mean of every run, from one evaluation per qrels with every measure asked of it."""
    wanted: dict[int, tuple[Qrels, dict[str, None]]] = {}
    for qrels, measure in settings:
        wanted.setdefault(id(qrels), (qrels, {}))[1][measure] = None
    means = {key: _means(runs, qrels, list(measures), rel_level, score_precision)
             for key, (qrels, measures) in wanted.items()}
    return [means[id(qrels)][measure] for qrels, measure in settings]


def ranking_correlations(runs: Sequence[Run], settings: Sequence[tuple[Qrels, str]],
                         rel_level: int = 2, score_precision: str = DEFAULT_SCORE_PRECISION,
                         top_k: int = DEFAULT_TOP_K) -> list[dict]:
    """:func:`agreement_statistics` between the rankings of the runs under every pair of settings.

    ``settings`` are ``(qrels, measure)`` pairs; a row per unordered pair, the first setting of the
    pair being A (tau_AP's reference in ``tau_ap``). ``score_precision`` is that of
    :func:`castregin.evaluation.evaluate.evaluate`.
    """
    if len(runs) < 2:
        raise InputError("rank correlations need at least two runs", argument="runs")
    if top_k < 1:
        raise InputError(f"the top k must hold at least one run, got k = {top_k}", argument="top_k")
    settings = _expanded(settings, rel_level)
    scores = [(qrels.name, measure, values) for (qrels, measure), values
              in zip(settings, _setting_scores(runs, settings, rel_level, score_precision), strict=True)]
    return [{"qrels_a": qrels_a, "measure_a": measure_a, "qrels_b": qrels_b, "measure_b": measure_b,
             **agreement_statistics(a, b, top_k)}
            for (qrels_a, measure_a, a), (qrels_b, measure_b, b) in itertools.combinations(scores, 2)]


# --- ranking agreement between two label sources ------------------------------------------------------------


@dataclass(frozen=True)
class RankChange:
    """One run's mean under label sources A and B, and its rank under each (1 = best, ties share the best)."""

    run: str
    score_a: float
    score_b: float
    rank_a: int
    rank_b: int

    @property
    def change(self) -> int:
        """``rank_b - rank_a``: positive when the run falls under B."""
        return self.rank_b - self.rank_a


@dataclass(frozen=True)
class RankingAgreement:
    """How far two label sources (qrels) agree on the ranking of the same runs by one measure.

    ``statistics`` is :func:`agreement_statistics`' dict (A = ``qrels_a``); ``runs`` every run in
    the order given; ``movers`` the runs whose rank changes, by the size of the change, largest
    first, then by name.
    """

    qrels_a: str
    qrels_b: str
    measure: str
    statistics: dict
    runs: list[RankChange]
    movers: list[RankChange]

    def to_dict(self) -> dict:
        """The agreement as JSON-ready dicts and lists (each run with its ``change``)."""
        def run(row: RankChange) -> dict:
            return {**vars(row), "change": row.change}

        return {"qrels_a": self.qrels_a, "qrels_b": self.qrels_b, "measure": self.measure,
                "statistics": dict(self.statistics), "runs": [run(r) for r in self.runs],
                "movers": [run(r) for r in self.movers]}


def rank_changes(names: Sequence[str], a: Sequence[float], b: Sequence[float]) -> tuple[list[RankChange],
                                                                                      list[RankChange]]:
    """Every run's scores and ranks (:func:`system_ranks`) under A and B, and the runs that move, most first."""
    rows = [RankChange(name, score_a, score_b, rank_a, rank_b) for name, score_a, score_b, rank_a, rank_b
            in zip(names, a, b, system_ranks(a), system_ranks(b), strict=True)]
    movers = sorted((r for r in rows if r.change), key=lambda r: (-abs(r.change), r.run))
    return rows, movers


def ranking_agreements(runs: Sequence[Run], sources: Sequence[Qrels], measure: str, *,
                       top_k: int = DEFAULT_TOP_K, rel_level: int = 2,
                       score_precision: str = DEFAULT_SCORE_PRECISION) -> list[RankingAgreement]:
    """:func:`ranking_agreement` of every pair of ``sources`` (in order: first, second; first, third...),
    evaluating the runs once per source."""
    if len(runs) < 2:
        raise InputError("ranking agreement needs at least two runs", argument="runs")
    if top_k < 1:
        raise InputError(f"the top k must hold at least one run, got k = {top_k}", argument="top_k")
    parse_one_measure(measure, rel_level)
    names = run_names(list(runs))
    scores = _setting_scores(runs, [(q, measure) for q in sources], rel_level, score_precision)
    return [agreement_of_scores(names, qrels_a.name, a, qrels_b.name, b, measure, top_k)
            for (qrels_a, a), (qrels_b, b) in itertools.combinations(zip(sources, scores, strict=True), 2)]


def agreement_of_scores(names: Sequence[str], qrels_a: str, a: Sequence[float], qrels_b: str, b: Sequence[float],
                        measure: str, top_k: int = DEFAULT_TOP_K) -> RankingAgreement:
    """The :class:`RankingAgreement` of runs ``names`` whose means of ``measure`` are ``a`` under the
    qrels named ``qrels_a`` and ``b`` under ``qrels_b`` (for callers that have evaluated them already)."""
    rows, movers = rank_changes(names, a, b)
    return RankingAgreement(qrels_a, qrels_b, measure, agreement_statistics(a, b, top_k), rows, movers)


def ranking_agreement(runs: Sequence[Run], qrels_a: Qrels, qrels_b: Qrels, measure: str, *,
                      top_k: int = DEFAULT_TOP_K, rel_level: int = 2,
                      score_precision: str = DEFAULT_SCORE_PRECISION) -> RankingAgreement:
    """How far label sources ``qrels_a`` and ``qrels_b`` agree on the ranking of ``runs`` by ``measure``.

    Each run is evaluated under each source (the mean over the turns the run and the qrels share, as
    :func:`castregin.evaluation.evaluate.evaluate` gives it); the two rankings are compared by
    :func:`agreement_statistics` (A the reference of ``tau_ap``) and each run's rank under A and B
    is kept (:class:`RankingAgreement`).
    """
    return ranking_agreements(runs, [qrels_a, qrels_b], measure, top_k=top_k, rel_level=rel_level,
                              score_precision=score_precision)[0]


# --- bootstrap -------------------------------------------------------------------------------------------------


def percentile_interval(values: Sequence[float], samples: int = 10_000, confidence: float = 0.95,
                        seed: int = 42) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``.

    Resamples the values with replacement ``samples`` times from ``numpy.random.default_rng(seed)``.
    To resample topics, pass the topic means (:func:`topic_means`): each topic then weighs the same,
    as in the mean of topic means.
    """
    if not 0 < confidence < 1:
        raise InputError(f"the confidence level must be between 0 and 1, not {confidence}", argument="confidence")
    if not 1 <= samples <= MAX_RESAMPLES:
        raise InputError(f"the number of samples must be from 1 to {MAX_RESAMPLES}", argument="samples")
    array = np.asarray(values, dtype=float)
    if len(array) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = np.empty(samples)
    # Batches of about a million draws: memory stays flat whatever the number of samples.
    batch = max(1, 1_000_000 // len(array))
    for start in range(0, samples, batch):
        draws = rng.integers(0, len(array), size=(min(batch, samples - start), len(array)))
        means[start:start + len(draws)] = array[draws].sum(axis=1) / len(array)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_intervals(rows: Sequence[tuple], by: str = "turn", samples: int = 10_000, confidence: float = 0.95,
                        seed: int = 42) -> list[dict]:
    """Confidence intervals of every mean in evaluate's per-turn ``(run, qrels, measure, turn, value)`` rows.

    ``by`` is ``turn`` or ``topic``. By topic, the mean is the mean of topic means
    (:func:`mean_of_topic_means`, as ``evaluate --by topic`` gives it) and the topic means are
    resampled. Each (run, qrels, measure) is resampled with a generator seeded afresh, so its
    interval does not depend on the other runs. A record counts its ``turns``; by topic also its ``topics``, the
    units resampled.
    """
    if by not in ("turn", "topic"):
        raise InputError(f"resample by 'turn' or 'topic', not {by!r}", argument="by")
    per_turn: dict[tuple, dict[str, float]] = {}
    means: dict[tuple, float] = {}
    for run, qrels, measure, turn, value in rows:
        if turn == ALL_TURNS:
            means[run, qrels, measure] = value
        else:
            per_turn.setdefault((run, qrels, measure), {})[turn] = value
    out = []
    for key, values in per_turn.items():
        mean: float | None
        if by == "topic":
            topics = topic_means(values)
            units, mean = [topics[t] for t in sorted(topics)], mean_of_topic_means(values)
        else:
            units, mean = [values[t] for t in sorted(values)], means.get(key)
        low, high = percentile_interval(units, samples, confidence, seed)
        out.append({"run": key[0], "qrels": key[1], "measure": key[2], "mean": mean, "low": low, "high": high,
                    **({"topics": len(units)} if by == "topic" else {}), "turns": len(values),
                    "confidence": confidence, "by": by})
    return out


# --- evaluate --by topic and --ci ----------------------------------------------------------------------------

#: The suffixes of the interval rows ``evaluate --ci`` adds after a mean (``P@1:ci_low``).
CI_LOW, CI_HIGH = ":ci_low", ":ci_high"


def topic_means(values: Mapping[str, float]) -> dict[str, float]:
    """Each topic's mean of its turns' ``values`` (turn id -> value; the topic is the id before ``_``).

    The one definition behind every ``--by topic``: a topic's turns are averaged first, then
    :func:`mean_of_topic_means` averages the topics, each weighing the same however many turns it has.
    """
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for turn in sorted(values):  # summed in turn id order: the same bits whatever order the rows came in
        topic = topic_of(turn)
        sums[topic] = sums.get(topic, 0.0) + values[turn]
        counts[topic] = counts.get(topic, 0) + 1
    return {topic: sums[topic] / counts[topic] for topic in sums}


def mean_of_topic_means(values: Mapping[str, float]) -> float:
    """The mean over topics of :func:`topic_means` (``nan`` without a turn): ``--by topic``'s mean."""
    means = topic_means(values)
    return math.fsum(means.values()) / len(means) if means else float("nan")


def by_topic(rows: Sequence[tuple], measures: Sequence[str], keep_per_topic: bool = False) -> list[tuple]:
    """evaluate's per-turn rows averaged per topic first, then over topics (a macro average).

    The ``all`` value of each measure in ``measures`` (those averaged as means) becomes the mean of
    its topic means (:func:`mean_of_topic_means`); with ``keep_per_topic`` the per-turn rows are
    replaced by one row per topic (``turn`` is the topic id), else dropped. A ``num_topics`` row
    follows ``num_q``. Other rows (counts, sums, geometric means) keep their values.
    """
    per_turn: dict[tuple, dict[str, float]] = {}
    for run, qrels, measure, turn, value in rows:
        if turn != ALL_TURNS and measure in measures:
            per_turn.setdefault((run, qrels, measure), {})[turn] = value
    per_topic = {key: topic_means(values) for key, values in per_turn.items()}
    topics_of = {(run, qrels): len(topics) for (run, qrels, _), topics in per_topic.items()}
    out = []
    for run, qrels, measure, turn, value in rows:
        if turn != ALL_TURNS:
            continue
        key = (run, qrels, measure)
        means = per_topic.get(key)
        if means is not None:
            out.append((run, qrels, measure, ALL_TURNS, mean_of_topic_means(per_turn[key])))
            if keep_per_topic:
                out.extend((run, qrels, measure, topic, means[topic]) for topic in sorted(means, key=_topic_key))
        else:
            out.append((run, qrels, measure, turn, value))
            if measure == "num_q":
                out.append((run, qrels, "num_topics", ALL_TURNS, float(topics_of.get((run, qrels), 0))))
    return out


def _topic_key(topic: str):
    return (0, int(topic), "") if topic.isascii() and topic.isdigit() else (1, 0, topic)


def with_intervals(rows: Sequence[tuple], measures: Sequence[str], confidence: float = 0.95,
                   samples: int = 10_000, seed: int = 42, by: str = "turn") -> list[tuple]:
    """evaluate's rows with each mean of ``measures`` followed by its bootstrap interval.

    The interval comes from the per-turn rows in ``rows`` (:func:`percentile_interval`, resampling turns
    or, with ``by="topic"``, topics), as two rows ``MEASURE:ci_low`` and ``MEASURE:ci_high``.
    """
    intervals = {(r["run"], r["qrels"], r["measure"]): (r["low"], r["high"])
                 for r in bootstrap_intervals([row for row in rows if row[2] in measures], by, samples,
                                              confidence, seed)}
    out = []
    for run, qrels, measure, turn, value in rows:
        out.append((run, qrels, measure, turn, value))
        interval = intervals.get((run, qrels, measure)) if turn == ALL_TURNS else None
        if interval is not None:
            out.append((run, qrels, measure + CI_LOW, ALL_TURNS, interval[0]))
            out.append((run, qrels, measure + CI_HIGH, ALL_TURNS, interval[1]))
    return out


def topic_means_and_intervals(rows: Sequence[tuple], measures: Sequence[Measure], per_turn: bool,
                              by: str = "turn", confidence: float | None = None, samples: int = 10_000,
                              seed: int = 42) -> list[tuple]:
    """``evaluate --by topic --ci``: evaluate's per-turn ``rows`` with topic means (``by="topic"``: each topic's
    turns averaged first, the mean of them the ``all`` value) and each mean's bootstrap interval at
    ``confidence`` (None: none), for the ``measures`` averaged by a mean; the per-turn (per-topic) rows only
    with ``per_turn``."""
    means = [m.name for m in measures if m.aggregate == MEAN and m.per_turn]
    if by == "topic":
        # Topic means are the units: the interval of a mean over topics resamples topics.
        rows = by_topic(rows, means, keep_per_topic=True)
    if confidence is not None:
        rows = with_intervals(rows, means, confidence, samples, seed)
    return list(rows) if per_turn else [row for row in rows if row[3] == ALL_TURNS]
