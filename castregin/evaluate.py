"""Evaluating runs against qrels with trec_eval's semantics.

Per-turn values come from trec_eval's own C code (pytrec_eval, through ir_measures); castregin
only decides which turns are averaged, because that is where tools differ:

- default (``trec_eval -l2``): the mean over turns present in both the qrels and the run;
- ``complete=True`` (``trec_eval -l2 -c``): the mean over every qrels turn, a turn the run
  lacks scoring 0. ir_measures' own aggregate always does this, so castregin averages itself.

Means are summed in trec_eval's order (turn ids in byte order, one after the other), so the
numbers equal trec_eval's to the last bit, not only to four decimals.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

import ir_measures
import pandas as pd

from . import formats
from .data import Qrels, Run
from .measures import DEFAULT_MEASURES, Measure, parse_measures

#: Columns of the long result table, as in ``--format json``.
RESULT_COLUMNS = ["run", "qrels", "measure", "turn", "value"]

ALL_TURNS = "all"


@dataclass(frozen=True)
class EvaluationSettings:
    """How to evaluate: measures, relevance level, and which turns to average."""

    measures: tuple[str, ...] = DEFAULT_MEASURES
    rel_level: int = 2
    complete: bool = False


def natural_key(turn: str):
    """Sort key that puts ``132_2-9`` before ``132_2-11`` (for people; files use byte order)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", turn)]


def trec_eval_mean(values: Iterable[float], count: int) -> float:
    """trec_eval's mean: a plain left-to-right double sum divided by ``count`` (0 when empty)."""
    total = 0.0
    for value in values:
        total += value
    return total / count if count else 0.0


def _evaluator(measures: Sequence[Measure], qrels: Qrels):
    """One evaluator for the qrels: pytrec_eval (trec_eval's C code) where it can, else ir_measures."""
    objects = [m.measure for m in measures]
    by_trec_eval = [m for m in objects if ir_measures.pytrec_eval.supports(m)]
    others = [m for m in objects if not ir_measures.pytrec_eval.supports(m)]
    evaluators = []
    if by_trec_eval:
        evaluators.append(ir_measures.pytrec_eval.evaluator(by_trec_eval, qrels.labels))
    if others:
        evaluators.append(ir_measures.evaluator(others, qrels.labels))
    return evaluators


def per_turn_scores(run: Run, qrels: Qrels, measures: Sequence[Measure]) -> dict[str, dict[str, float]]:
    """``{measure name: {turn: value}}`` for the turns present in both ``run`` and ``qrels``."""
    shared = set(run.scores) & set(qrels.labels)
    by_object = {m.measure: m.name for m in measures}
    scores: dict[str, dict[str, float]] = {m.name: {} for m in measures}
    run_in_shared = {turn: items for turn, items in run.scores.items() if turn in shared}
    if not run_in_shared:
        return scores
    for evaluator in _evaluator(measures, qrels):
        for metric in evaluator.iter_calc(run_in_shared):
            # ir_measures adds the qrels turns a run lacks; those belong to complete averaging only.
            if metric.query_id in shared:
                scores[by_object[metric.measure]][metric.query_id] = float(metric.value)
    return scores


def evaluate_run(run: Run, qrels: Qrels, settings: EvaluationSettings = EvaluationSettings(),
                 per_turn: bool = False, run_name: str | None = None) -> list[dict]:
    """Evaluate one run against one qrels: rows ``{run, qrels, measure, turn, value}``.

    The mean rows (``turn == "all"``) come first for each measure, then per-turn rows in natural
    turn order when ``per_turn``. With ``settings.complete`` a qrels turn the run lacks counts 0
    in the mean and appears with 0 among the per-turn rows.
    """
    measures = parse_measures(settings.measures, settings.rel_level)
    scores = per_turn_scores(run, qrels, measures)
    name = run_name or run.tag
    rows = []
    for measure in measures:
        values = dict(scores[measure.name])
        if settings.complete:
            for turn in qrels.labels:
                values.setdefault(turn, 0.0)
        ordered = sorted(values)  # byte order, as trec_eval sums
        mean = trec_eval_mean((values[t] for t in ordered), len(ordered))
        rows.append({"run": name, "qrels": qrels.name, "measure": measure.name, "turn": ALL_TURNS, "value": mean})
        if per_turn:
            for turn in sorted(values, key=natural_key):
                rows.append({"run": name, "qrels": qrels.name, "measure": measure.name, "turn": turn,
                             "value": values[turn]})
    return rows


def run_names(runs: Sequence[Run]) -> list[str]:
    """The name of each run in results: its tag, or ``tag (file)`` where two runs share a tag."""
    tags = [run.tag for run in runs]
    return [
        tag if tags.count(tag) == 1 else f"{tag} ({run.source})"
        for tag, run in zip(tags, runs)
    ]


def evaluate(runs: Sequence[Run] | Run, qrels: Sequence[Qrels] | Qrels,
             measures: Sequence[str] = DEFAULT_MEASURES, rel_level: int = 2,
             complete: bool = False, per_turn: bool = False,
             turns: Iterable[str] | None = None) -> pd.DataFrame:
    """Evaluate every run against every qrels, as ``trec_eval -l<rel_level> [-c]`` would.

    Parameters
    ----------
    runs, qrels:
        One or several :class:`Run` / :class:`Qrels` (see :func:`castregin.formats.read_run`).
    measures:
        Names in ir_measures' syntax (``P@1``, ``nDCG@3``) or trec_eval's (``P_1``, ``ndcg_cut_3``).
    rel_level:
        Label at or above which an item is relevant for binary measures (nDCG uses the grades).
    complete:
        Average over every qrels turn (a missing one scores 0) instead of the turns both share.
    per_turn:
        Also return one row per turn.
    turns:
        Keep only these turns of every qrels.

    Returns
    -------
    A DataFrame with columns ``run, qrels, measure, turn, value``; ``turn`` is ``"all"`` for means.

    >>> evaluate(read_run("bm25.run"), read_qrels("question_relevance_all.qrel"), ["P@1"])  # doctest: +SKIP
    """
    runs = [runs] if isinstance(runs, Run) else list(runs)
    qrels_list = [qrels] if isinstance(qrels, Qrels) else list(qrels)
    if turns is not None:
        turns = list(turns)
        qrels_list = [q.subset(turns) for q in qrels_list]
    settings = EvaluationSettings(tuple(measures), rel_level, complete)
    parse_measures(settings.measures, rel_level)  # unknown names fail before any work
    rows: list[dict] = []
    for qrels_item in qrels_list:
        for run, name in zip(runs, run_names(runs)):
            rows.extend(evaluate_run(run, qrels_item, settings, per_turn, name))
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)


def evaluate_files(run_paths: Sequence[str | os.PathLike], qrels_paths: Sequence[tuple[str | None, str]],
                   **options) -> pd.DataFrame:
    """:func:`evaluate` on files: ``qrels_paths`` holds ``(name or None, path)`` pairs."""
    qrels_list = [formats.read_qrels(path, name) for name, path in qrels_paths]
    runs = [formats.read_run(path) for path in run_paths]
    return evaluate(runs, qrels_list, **options)
