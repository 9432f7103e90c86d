"""The numbers of the HTML report, computed: :mod:`castregin.render.report` only draws and lays them out.

:func:`report_data` evaluates every run once (the measures shown, the plotted one and judged@k),
compares them (every pair, and against the baseline when there is one), bootstraps each mean's
interval with the driver of ``analyze bootstrap`` and ``evaluate --ci``
(:func:`castregin.evaluation.analysis.bootstrap_intervals`), and on request runs the rank
correlations and the leave-one-run-out test; with two qrels or more, how far every two of them
agree on the ranking of the runs by the plotted measure
(:func:`castregin.evaluation.analysis.agreement_of_scores`); it also counts, for the figures, the labels of each
qrels and those of each run's top-k items.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data import Qrels, Run, natural_key
from ..errors import InputError
from .analysis import (
    RankingAgreement,
    agreement_of_scores,
    bootstrap_intervals,
    leave_one_run_out,
    ranking_correlations,
)
from .compare import DEFAULT_PERMUTATIONS, DEFAULT_SEED, Leaderboard, compare, leaderboard, same_measure
from .evaluate import ALL_TURNS, NUM_Q, RESULT_COLUMNS, evaluate, run_names
from .measures import DEFAULT_MEASURES, Measure, parse_measures
from .ranking import DEFAULT_SCORE_PRECISION, DEFAULT_TOP_K, ranked_items, score_bits

DEFAULT_DEPTH = 10
DEFAULT_PLOT_MEASURE = "nDCG@3"
DEFAULT_CI_SAMPLES = 1000
CONFIDENCE = 0.95
#: The label of an item the qrels do not judge, in the top-k label counts.
UNJUDGED = "unjudged"


def label_distribution(run: Run, qrels: Qrels, depth: int = DEFAULT_DEPTH,
                       score_precision: str = DEFAULT_SCORE_PRECISION) -> pd.DataFrame:
    """Counts of labels at each rank 1..``depth`` of ``run`` over the turns it shares with ``qrels``.

    Rows are ranks, columns the qrels' labels in increasing order then ``"unjudged"``; a turn
    with fewer than ``r`` items counts nowhere at rank ``r``. Items are in trec_eval's order, scores
    compared with ``score_precision`` (:mod:`castregin.evaluation.ranking`), as the measures rank them.
    """
    bits = score_bits(score_precision)
    labels = sorted({label for items in qrels.labels.values() for label in items.values()})
    counts: dict[int, Counter[object]] = {rank: Counter() for rank in range(1, depth + 1)}
    for turn in run.scores:
        if turn not in qrels.labels:
            continue
        judged = qrels.labels[turn]
        for rank, item in enumerate(ranked_items(run.scores[turn], bits)[:depth], start=1):
            counts[rank][judged.get(item, UNJUDGED)] += 1
    columns = [*labels, UNJUDGED]
    return pd.DataFrame([[counts[rank][c] for c in columns] for rank in counts], columns=columns,
                        index=pd.Index(list(counts), name="rank"))


@dataclass(frozen=True)
class TopLabels:
    """The labels of a run's top-k items on one qrels: per label (the qrels' labels, then ``unjudged``),
    the share of the shared turns whose item at each rank 1..k has it."""

    labels: list
    shares: list[list[float]]
    turns: int  # the turns the run and the qrels share


def top_labels(run: Run, qrels: Qrels, depth: int = DEFAULT_DEPTH,
               score_precision: str = DEFAULT_SCORE_PRECISION) -> TopLabels:
    """:func:`label_distribution` as shares of the turns ``run`` and ``qrels`` share (0 without one)."""
    distribution = label_distribution(run, qrels, depth, score_precision)
    shared = sum(1 for turn in run.scores if turn in qrels.labels)
    shares = [[v / shared if shared else 0.0 for v in distribution[c]] for c in distribution.columns]
    return TopLabels(list(distribution.columns), shares, shared)


def judgments_per_label(qrels: Qrels) -> dict:
    """How many judgments of ``qrels`` have each label, labels in increasing order."""
    counts = Counter(label for items in qrels.labels.values() for label in items.values())
    return dict(sorted(counts.items()))


@dataclass
class TurnStatistics:
    """One measure on one qrels, per turn: the best, median and worst of all runs, and each run's value."""

    turns: list[str]  # every turn some run has, in natural order
    best: dict[str, float]
    median: dict[str, float]
    worst: dict[str, float]
    values: dict[str, dict[str, float]]  # run -> turn -> value

    def versus(self, run: str) -> pd.DataFrame:
        """The run's turns with its value beside the best, median and worst of all runs having the turn."""
        own = self.values.get(run, {})
        turns = [t for t in self.turns if t in own]
        return pd.DataFrame({"turn": turns, "value": [own[t] for t in turns],
                             "median": [self.median[t] for t in turns], "best": [self.best[t] for t in turns],
                             "worst": [self.worst[t] for t in turns]})


def turn_statistics(results: pd.DataFrame, qrels: str, measure: str) -> TurnStatistics:
    """:class:`TurnStatistics` from evaluate's per-turn rows (a run lacking a turn does not count there)."""
    rows = results[(results["qrels"] == qrels) & (results["measure"] == measure) & (results["turn"] != ALL_TURNS)]
    values: dict[str, dict[str, float]] = {}
    by_turn: dict[str, list[float]] = {}
    for run, turn, value in rows[["run", "turn", "value"]].itertuples(index=False):
        values.setdefault(run, {})[turn] = float(value)
        by_turn.setdefault(turn, []).append(float(value))
    turns = sorted(by_turn, key=natural_key)
    return TurnStatistics(turns, {t: max(by_turn[t]) for t in turns},
                          {t: float(np.median(by_turn[t])) for t in turns}, {t: min(by_turn[t]) for t in turns}, values)


@dataclass(frozen=True)
class ReportSettings:
    """What the report computes; see :func:`report_data`."""

    #: Names, or measures parsed already (:func:`~castregin.evaluation.measures.parse_measures`).
    measures: Sequence[str | Measure] = DEFAULT_MEASURES
    baseline: str | None = None
    rel_level: int = 2
    score_precision: str = DEFAULT_SCORE_PRECISION
    depth: int = DEFAULT_DEPTH  # k of judged@k and of the top-k labels
    test: str = "paired-t"
    correction: str = "holm"
    alpha: float = 0.05
    permutations: int = DEFAULT_PERMUTATIONS
    seed: int = DEFAULT_SEED  # of the randomization test and of the bootstrap
    plot_measure: str = DEFAULT_PLOT_MEASURE
    ci_samples: int = DEFAULT_CI_SAMPLES
    correlation: bool = False  # the rank correlations of every two (qrels, measure) settings
    loro_depth: int | None = None  # the leave-one-run-out test at this depth (first qrels, first measure)
    top_k: int = DEFAULT_TOP_K  # k of the top-k overlap of two rankings of the runs


@dataclass
class ReportData:
    """Everything the report shows, computed: evaluate's rows, the comparisons, judged@k, intervals."""

    runs: Sequence[Run]
    qrels: Sequence[Qrels]
    names: list[str]
    measures: list[str]
    tested: list[str]  # the measures with per-turn values, which the tests compare
    results: pd.DataFrame  # the measures shown, means and per-turn values
    plot_measure: str
    all_pairs: pd.DataFrame
    marks: pd.DataFrame  # the comparisons the leaderboard marks: against the baseline, else all_pairs
    leaderboard: Leaderboard  # sorted by the first measure with per-turn values, with the wins of marks
    judged: dict[tuple[str, str], float]  # (qrels, run) -> judged@k
    intervals: dict[tuple[str, str, str], tuple[float, float]]  # (qrels, measure, run) -> (low, high)
    settings: ReportSettings
    correlations: list[dict] | None = None
    loro: tuple[list, dict] | None = None
    agreements: list[RankingAgreement] = field(default_factory=list)  # every two qrels, by the plotted measure
    means: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (qrels, run, measure) -> mean
    versus_baseline: dict[tuple[str, str, str], tuple] = field(default_factory=dict)  # (qrels, measure, run)
    per_turn: dict[str, TurnStatistics] = field(default_factory=dict)  # qrels -> the plotted measure per turn
    label_counts: dict[str, dict] = field(default_factory=dict)  # qrels -> label -> judgments
    top_labels: dict[tuple[str, str], TopLabels] = field(default_factory=dict)  # (qrels, run)
    #: The numbers came as per-turn scores (report_data_from_scores): no items, labels or judged@k to show.
    given_scores: bool = False

    @property
    def primary(self) -> str:
        """The measure the leaderboard is sorted by: the first with per-turn values."""
        return self.tested[0]

    @property
    def baseline(self) -> str | None:
        """The run the leaderboard marks wins over, if any."""
        return self.settings.baseline

    @property
    def depth(self) -> int:
        """k of judged@k and of the top-k labels."""
        return self.settings.depth


def _plot_measure(name: str, shown: Sequence, rel_level: int):
    try:
        parsed = parse_measures([name], rel_level)
    except InputError as err:
        raise InputError(err.problem, argument="plot_measure") from None
    if len(parsed) != 1 or not parsed[0].per_turn:
        raise InputError(f"{name} cannot be plotted per turn: give one measure with per-turn values (nDCG@3, P@1)",
                         argument="plot_measure")
    # -m ndcg_cut_3 with the default nDCG@3: one measure, evaluated once, plotted under the name given.
    return next((m for m in shown if same_measure(m, parsed[0])), parsed[0])


def _evaluate(runs, qrels, settings: ReportSettings):
    """One evaluation of every run: the measures shown, the plotted one and judged@k, split apart."""
    shown = parse_measures(settings.measures, settings.rel_level)
    tested = [m.name for m in shown if m.per_turn]  # summaries over turns (gm_map) have nothing to test
    if not tested:
        raise InputError("the report's per-turn plots need a measure with per-turn values (num_q and gm_map "
                         "have none)", argument="measures")
    plot = _plot_measure(settings.plot_measure, shown, settings.rel_level)
    judged = parse_measures([f"Judged@{settings.depth}"], settings.rel_level)[0]
    names = [m.name for m in shown]
    rows = evaluate(runs, qrels, [*shown, plot, judged],  # evaluate keeps each measure once
                    rel_level=settings.rel_level, per_turn=True, score_precision=settings.score_precision)
    results = rows[rows["measure"].isin([NUM_Q, *names])].reset_index(drop=True)
    judged_rows = rows[(rows["measure"] == judged.name) & (rows["turn"] == ALL_TURNS)]
    judged_at = {(q, r): float(v) for q, r, v in judged_rows[["qrels", "run", "value"]].itertuples(index=False)}
    return names, tested, results, rows[rows["measure"] == plot.name].reset_index(drop=True), plot.name, judged_at


def mean_intervals(results: pd.DataFrame, measures: Sequence[str], samples: int = DEFAULT_CI_SAMPLES,
                   seed: int = DEFAULT_SEED, confidence: float = CONFIDENCE) -> dict[tuple[str, str, str],
                                                                                  tuple[float, float]]:
    """``(qrels, measure, run) -> (low, high)``: the percentile bootstrap interval of each mean of ``measures``.

    :func:`~castregin.evaluation.analysis.bootstrap_intervals` on evaluate's per-turn rows, resampling turns.
    """
    rows = results[results["measure"].isin(list(measures))][RESULT_COLUMNS].itertuples(index=False, name=None)
    return {(r["qrels"], r["measure"], r["run"]): (r["low"], r["high"])
            for r in bootstrap_intervals(list(rows), "turn", samples, confidence, seed)}


def _comparisons(results: pd.DataFrame, settings: ReportSettings, progress: bool) -> tuple[pd.DataFrame,
                                                                                             pd.DataFrame]:
    """Every pair of runs compared, and the comparisons the leaderboard marks (against the baseline, if any)."""

    def comparisons(baseline: str | None) -> pd.DataFrame:
        return compare(results, baseline, test=settings.test, correction=settings.correction, alpha=settings.alpha,
                       permutations=settings.permutations, seed=settings.seed, progress=progress)

    all_pairs = comparisons(None)
    return all_pairs, (comparisons(settings.baseline) if settings.baseline is not None else all_pairs)


def _means_and_baseline(data: ReportData) -> None:
    """``data.means`` and ``data.versus_baseline`` from its results and marks."""
    means = data.results[data.results["turn"] == ALL_TURNS]
    # Looked up by key rather than filtered out of the frames again for each of 30 runs.
    data.means = {(str(q), str(r), str(m)): float(v)
                  for q, r, m, v in means[["qrels", "run", "measure", "value"]].itertuples(index=False)}
    if data.settings.baseline is not None:
        data.versus_baseline = {(str(r.qrels), str(r.measure), str(r.run)):
                                (r.mean_difference, r.p_value_corrected, r.significant)
                                for r in data.marks.itertuples(index=False)}


def report_data(runs: Sequence[Run], qrels: Sequence[Qrels], settings: ReportSettings | None = None,
                progress: bool = False) -> ReportData:
    """Evaluate (once), compare, bootstrap and analyse: the report's numbers.

    ``settings.baseline`` is a run name as in :func:`castregin.evaluation.evaluate.run_names`. The
    significance matrix compares every pair of runs (its own correction family per qrels and measure);
    the leaderboard marks wins over the baseline when there is one, else over each other run.
    ``progress`` shows the comparisons' progress bar on standard error.
    """
    settings = settings or ReportSettings()
    measures, tested, results, plotted, plot_measure, judged = _evaluate(runs, qrels, settings)
    all_pairs, marks = _comparisons(results, settings, progress)
    intervals = mean_intervals(results, tested, settings.ci_samples, settings.seed)
    data = ReportData(runs, qrels, run_names(runs), measures, tested, results, plot_measure, all_pairs, marks,
                      leaderboard(results, marks, sort=tested[0]), judged, intervals, settings)
    _means_and_baseline(data)
    data.per_turn = {q.name: turn_statistics(plotted, q.name, plot_measure) for q in qrels}
    data.label_counts = {q.name: judgments_per_label(q) for q in qrels}
    data.top_labels = {(q.name, name): top_labels(run, q, settings.depth, settings.score_precision)
                       for q in qrels for run, name in zip(runs, data.names, strict=True)}
    if len(runs) > 1 and settings.correlation:
        data.correlations = ranking_correlations(runs, [(q, m) for q in qrels for m in tested], settings.rel_level,
                                                 settings.score_precision, settings.top_k)
    if len(runs) > 1 and len(qrels) > 1:
        plotted_means = {(str(q), str(r)): float(v) for q, r, v
                         in plotted[plotted["turn"] == ALL_TURNS][["qrels", "run", "value"]].itertuples(index=False)}
        scores = {q.name: [plotted_means[(q.name, name)] for name in data.names] for q in qrels}
        data.agreements = [agreement_of_scores(data.names, a.name, scores[a.name], b.name, scores[b.name],
                                               plot_measure, settings.top_k)
                           for i, a in enumerate(qrels) for b in qrels[i + 1:]]
    if len(runs) > 1 and settings.loro_depth:
        data.loro = leave_one_run_out(runs, qrels[0], settings.loro_depth, data.primary, settings.rel_level,
                                      settings.score_precision)
    return data


def report_data_from_scores(rows: Sequence[tuple], settings: ReportSettings | None = None,
                            progress: bool = False) -> ReportData:
    """The report's numbers from per-turn scores computed elsewhere (``report --scores``: nugget scores, an
    earlier ``evaluate -q``): evaluate's ``(run, qrels, measure, turn, value)`` rows, ``qrels`` naming the source.

    As :func:`report_data`, less what needs runs and qrels (judged@k, label counts, the labels of the top items,
    the leave-one-run-out test): the leaderboard with intervals, the significance matrices, the per-turn plots
    and tables of the plotted measure (``settings.plot_measure`` when the tables hold it, else their first
    measure), the ranking agreement of every two sources and, on request, the rank correlations of every two
    (source, measure) settings. ``runs`` holds each run as a :class:`~castregin.data.Run` with its turns and no
    items, ``qrels`` each source as a :class:`~castregin.data.Qrels` without labels.
    """
    from .given import ranking_correlations_of, results_frame, run_order, tested_measures

    settings = settings or ReportSettings()
    results = results_frame(rows)
    tested = tested_measures(rows)
    measures = [m for m in dict.fromkeys(results["measure"]) if m != NUM_Q]
    plot_measure = settings.plot_measure if settings.plot_measure in tested else tested[0]
    names = run_order(rows)
    turns: dict[str, dict[str, dict]] = {name: {} for name in names}
    for run, _, _, turn, _ in rows:
        if turn != ALL_TURNS:
            turns[run][turn] = {}
    runs = [Run(name, scores) for name, scores in turns.items()]
    sources = [Qrels({}, name) for name in dict.fromkeys(results["qrels"])]

    all_pairs, marks = _comparisons(results, settings, progress)
    data = ReportData(runs, sources, names, measures, tested, results, plot_measure, all_pairs, marks,
                      leaderboard(results, marks, sort=tested[0]), {},
                      mean_intervals(results, tested, settings.ci_samples, settings.seed), settings,
                      given_scores=True)
    _means_and_baseline(data)
    data.per_turn = {q.name: turn_statistics(results, q.name, plot_measure) for q in sources}
    if len(runs) > 1 and settings.correlation:
        data.correlations = ranking_correlations_of([row for row in rows if row[2] in tested], settings.top_k)
    if len(runs) > 1 and len(sources) > 1:
        scores = {q.name: [data.means.get((q.name, name, plot_measure), float("nan")) for name in names]
                  for q in sources}
        data.agreements = [agreement_of_scores(names, a.name, scores[a.name], b.name, scores[b.name], plot_measure,
                                               settings.top_k)
                           for i, a in enumerate(sources) for b in sources[i + 1:]]
    return data
