"""Evaluating the evaluation: pool reusability, ranking stability and the uncertainty of means.

- :func:`leave_one_run_out` (Zobel 1998): how a run would have scored had it not contributed to the
  pool. Its unique contributions at depth k (items in its top k by the rank column that no other
  run has in its top k) are removed from the qrels and the run is evaluated again, unjudged items
  counting as non-relevant, as trec_eval counts them.
- :func:`ranking_correlations`: Kendall's tau (scipy's tau-b) and tau_AP (Yilmaz, Aslam and
  Robertson 2008) between the system rankings under two (qrels, measure) settings.
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
from .ranking import DEFAULT_SCORE_PRECISION


def _means(runs: Sequence[Run], qrels: Qrels, measures: Sequence[str], rel_level: int,
           score_precision: str = DEFAULT_SCORE_PRECISION) -> dict[str, list[float]]:
    """Each measure's mean of each run (in the order given), from one evaluation of all of them."""
    rows = evaluate_rows(list(runs), qrels, list(measures), rel_level, score_precision=score_precision)
    by_key = {(run, name): value for run, _, name, turn, value in rows if turn == ALL_TURNS}
    names = run_names(list(runs))
    return {measure: [by_key[name, measure] for name in names] for measure in measures}


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


def _order(scores: Sequence[float], names: Sequence[str]) -> list[int]:
    # Ties broken by name, so that tau_AP is defined and deterministic.
    return sorted(range(len(scores)), key=lambda i: (-scores[i], names[i]))


def tau_ap(reference: Sequence[float], estimate: Sequence[float], names: Sequence[str] | None = None) -> float:
    """tau_AP of the ranking by ``estimate`` against the ranking by ``reference`` (Yilmaz et al. 2008).

    ``tau_AP = 2/(N-1) * sum_{i=2..N} C(i)/(i-1) - 1``, where systems are taken in the order of the
    estimate and ``C(i)`` counts the systems above position ``i`` that the reference also ranks above
    the system at ``i``. Not symmetric: swaps near the top cost more. Ties are broken by name.
    """
    if len(reference) != len(estimate):
        raise InputError("the two rankings must have the same systems", argument="estimate")
    n = len(reference)
    if n < 2:
        return float("nan")
    names = list(names) if names is not None else [f"{i:09d}" for i in range(n)]
    position = {system: rank for rank, system in enumerate(_order(reference, names))}
    ordered = _order(estimate, names)
    total = 0.0
    for i in range(1, n):
        correct = sum(position[ordered[j]] < position[ordered[i]] for j in range(i))
        total += correct / i
    return 2.0 * total / (n - 1) - 1.0


def swapped_pairs(first: Sequence[float], second: Sequence[float]) -> int:
    """Pairs of systems that the two score lists order in opposite directions (ties are not swaps)."""
    return sum(1 for i, j in itertools.combinations(range(len(first)), 2)
               if (first[i] - first[j]) * (second[i] - second[j]) < 0)


def ranking_correlations(runs: Sequence[Run], settings: Sequence[tuple[Qrels, str]],
                         rel_level: int = 2, score_precision: str = DEFAULT_SCORE_PRECISION) -> list[dict]:
    """Kendall's tau, tau_AP and swapped pairs between the rankings under every pair of settings.

    ``settings`` are ``(qrels, measure)`` pairs; a row per unordered pair, the first setting of the
    pair being tau_AP's reference. ``score_precision`` is that of :func:`castregin.evaluation.evaluate.evaluate`.
    """
    from scipy import stats

    if len(runs) < 2:
        raise InputError("rank correlations need at least two runs", argument="runs")
    names = run_names(list(runs))
    # One evaluation per qrels, with every measure asked of it.
    wanted: dict[int, tuple[Qrels, dict[str, None]]] = {}
    for qrels, measure in settings:
        wanted.setdefault(id(qrels), (qrels, {}))[1][measure] = None
    means = {key: _means(runs, qrels, list(measures), rel_level, score_precision)
             for key, (qrels, measures) in wanted.items()}
    scores = [(qrels.name, measure, means[id(qrels)][measure]) for qrels, measure in settings]
    rows = []
    for (qrels_a, measure_a, a), (qrels_b, measure_b, b) in itertools.combinations(scores, 2):
        rows.append({"qrels_a": qrels_a, "measure_a": measure_a, "qrels_b": qrels_b, "measure_b": measure_b,
                     "kendall_tau": float(stats.kendalltau(a, b).statistic), "tau_ap": tau_ap(a, b, names),
                     "swapped_pairs": swapped_pairs(a, b), "runs": len(runs)})
    return rows


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
    interval does not depend on the other runs.
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
        out.append({"run": key[0], "qrels": key[1], "measure": key[2], "mean": mean,
                    "low": low, "high": high, "turns": len(values), "confidence": confidence, "by": by})
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
    return (0, int(topic), "") if topic.isdigit() else (1, 0, topic)


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
