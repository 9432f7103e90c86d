"""Evaluating runs against qrels with trec_eval's semantics.

Per-turn values come from castregin's vectorised engine (:mod:`castregin.engine`) for P@k, R@k,
AP, RR, nDCG@k, nDCG, Rprec, Success@k and Judged@k, which reproduces trec_eval 9's numbers
(pytrec_eval's, to the last bit on the CAsT data); any other measure goes to trec_eval's own C
code (pytrec_eval, through ir_measures). castregin decides which turns are averaged, because
that is where tools differ:

- default (``trec_eval -l2``): the mean over turns present in both the qrels and the run;
- ``complete=True`` (``trec_eval -l2 -c``): the mean over every qrels turn, a turn the run
  lacks scoring 0. ir_measures' own aggregate always does this, so castregin averages itself.

Means are summed in trec_eval's order (turn ids in byte order, one after the other), so the
numbers equal trec_eval's to the last bit, not only to four decimals.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import formats
from .data import Qrels, Run
from .engine import QrelsIndex
from .engine import evaluate_run as engine_evaluate_run
from .formats import columnar
from .measures import DEFAULT_MEASURES, Measure, parse_measures

if TYPE_CHECKING:
    import pandas as pd

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
    import ir_measures  # only for measures the engine lacks; not worth its import otherwise

    objects = [m.measure for m in measures]
    by_trec_eval = [m for m in objects if ir_measures.pytrec_eval.supports(m)]
    others = [m for m in objects if not ir_measures.pytrec_eval.supports(m)]
    evaluators = []
    if by_trec_eval:
        evaluators.append(ir_measures.pytrec_eval.evaluator(by_trec_eval, qrels.labels))
    if others:
        evaluators.append(ir_measures.evaluator(others, qrels.labels))
    return evaluators


def _pytrec_eval_scores(run: Run, qrels: Qrels, measures: Sequence[Measure]) -> dict[str, dict[str, float]]:
    """Per-turn values from pytrec_eval / ir_measures, for the turns in both run and qrels."""
    shared = set(run.scores) & set(qrels.labels)
    by_object = {m.measure: m.name for m in measures}
    scores: dict[str, dict[str, float]] = {m.name: {} for m in measures}
    run_in_shared = {turn: items for turn, items in run.scores.items() if turn in shared}
    if not run_in_shared or not measures:
        return scores
    for evaluator in _evaluator(measures, qrels):
        for metric in evaluator.iter_calc(run_in_shared):
            # ir_measures adds the qrels turns a run lacks; those belong to complete averaging only.
            if metric.query_id in shared:
                scores[by_object[metric.measure]][metric.query_id] = float(metric.value)
    return scores


def _engine_scores(run: columnar.ColumnarRun, index: QrelsIndex, measures: Sequence[Measure],
                   threads: int = columnar.THREADS) -> dict[str, dict[str, float]]:
    """Per-turn values from the engine for the measures it computes (the others are left out)."""
    mine = [m for m in measures if m.engine is not None]
    values = engine_evaluate_run(run, index, [m.engine for m in mine], threads)
    return {m.name: v for m, v in zip(mine, values)}


def per_turn_scores(run: Run, qrels: Qrels, measures: Sequence[Measure]) -> dict[str, dict[str, float]]:
    """``{measure name: {turn: value}}`` for the turns present in both ``run`` and ``qrels``."""
    scores = _engine_scores(columnar.run_from_dict(run), QrelsIndex(columnar.qrels_from_dict(qrels)), measures)
    scores.update(_pytrec_eval_scores(run, qrels, [m for m in measures if m.engine is None]))
    return scores


def _rows(name: str, qrels_name: str, qrels_turns: Sequence[str], measures: Sequence[Measure],
          scores: dict[str, dict[str, float]], complete: bool, per_turn: bool) -> list[tuple]:
    """Result rows ``(run, qrels, measure, turn, value)``: each measure's mean, then its turns."""
    rows = []
    for measure in measures:
        values = scores[measure.name]
        if complete:
            values = dict(values)
            for turn in qrels_turns:
                values.setdefault(turn, 0.0)
        ordered = sorted(values)  # byte order, as trec_eval sums
        mean = trec_eval_mean((values[t] for t in ordered), len(ordered))
        rows.append((name, qrels_name, measure.name, ALL_TURNS, mean))
        if per_turn:
            rows.extend((name, qrels_name, measure.name, turn, values[turn]) for turn in sorted(values, key=natural_key))
    return rows


def evaluate_run(run: Run, qrels: Qrels, settings: EvaluationSettings = EvaluationSettings(),
                 per_turn: bool = False, run_name: str | None = None) -> list[dict]:
    """Evaluate one run against one qrels: rows ``{run, qrels, measure, turn, value}``.

    The mean rows (``turn == "all"``) come first for each measure, then per-turn rows in natural
    turn order when ``per_turn``. With ``settings.complete`` a qrels turn the run lacks counts 0
    in the mean and appears with 0 among the per-turn rows.
    """
    measures = parse_measures(settings.measures, settings.rel_level)
    scores = per_turn_scores(run, qrels, measures)
    rows = _rows(run_name or run.tag, qrels.name, list(qrels.labels), measures, scores, settings.complete, per_turn)
    return [dict(zip(RESULT_COLUMNS, row)) for row in rows]


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
    import pandas as pd  # only here: the command line renders rows without it

    rows = evaluate_rows(runs, qrels, measures, rel_level, complete, per_turn, turns)
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)


def evaluate_rows(runs: Sequence[Run] | Run, qrels: Sequence[Qrels] | Qrels,
                  measures: Sequence[str] = DEFAULT_MEASURES, rel_level: int = 2,
                  complete: bool = False, per_turn: bool = False,
                  turns: Iterable[str] | None = None) -> list[tuple]:
    """:func:`evaluate` as plain ``(run, qrels, measure, turn, value)`` tuples, in the same order."""
    runs = [runs] if isinstance(runs, Run) else list(runs)
    qrels_list = [qrels] if isinstance(qrels, Qrels) else list(qrels)
    if turns is not None:
        turns = list(turns)
        qrels_list = [q.subset(turns) for q in qrels_list]
    parsed = parse_measures(tuple(measures), rel_level)  # unknown names fail before any work
    columnar_runs = [columnar.run_from_dict(run) for run in runs]
    rows: list[tuple] = []
    for qrels_item in qrels_list:
        index = QrelsIndex(columnar.qrels_from_dict(qrels_item))
        others = [m for m in parsed if m.engine is None]
        for run, run_columns, name in zip(runs, columnar_runs, run_names(runs)):
            scores = _engine_scores(run_columns, index, parsed)
            scores.update(_pytrec_eval_scores(run, qrels_item, others))
            rows.extend(_rows(name, qrels_item.name, list(qrels_item.labels), parsed, scores, complete, per_turn))
    return rows


def evaluate_files(run_paths: Sequence[str | os.PathLike], qrels_paths: Sequence[tuple[str | None, str]],
                   **options) -> pd.DataFrame:
    """:func:`evaluate` on files: ``qrels_paths`` holds ``(name or None, path)`` pairs.

    Each qrels is read and indexed once, while the first runs are parsed. Runs are read by the
    columnar reader and scored side by side, one a thread and a core (pyarrow's kernels and
    numpy's big loops release the GIL), and dropped once scored, so memory holds one run per core
    (at most four); a single run spreads its batches over the cores instead. With a measure the
    engine lacks, runs are read as dicts for pytrec_eval instead.
    """
    import pandas as pd  # only here: the command line renders rows without it

    return pd.DataFrame(evaluate_file_rows(run_paths, qrels_paths, **options), columns=RESULT_COLUMNS)


def evaluate_file_rows(run_paths: Sequence[str | os.PathLike], qrels_paths: Sequence[tuple[str | None, str]],
                       **options) -> list[tuple]:
    """:func:`evaluate_files` as plain ``(run, qrels, measure, turn, value)`` tuples, in the same order."""
    measures = tuple(options.get("measures", DEFAULT_MEASURES))
    rel_level = options.get("rel_level", 2)
    parsed = parse_measures(measures, rel_level)
    if any(m.engine is None for m in parsed):
        qrels_list = [formats.read_qrels(path, name) for name, path in qrels_paths]
        return evaluate_rows([formats.read_run(path) for path in run_paths], qrels_list, **options)
    unknown = set(options) - {"measures", "rel_level", "complete", "per_turn", "turns"}
    if unknown:
        raise TypeError(f"evaluate_files() got unexpected options {sorted(unknown)}")
    turns = options.get("turns")

    def load_qrels():
        qrels_list = [columnar.read_qrels(path, name) for name, path in qrels_paths]
        if turns is not None:
            qrels_list = [q.subset(turns) for q in qrels_list]
        return qrels_list, [QrelsIndex(q) for q in qrels_list]

    # Several runs are scored side by side, each in one thread; a single run spreads its own
    # batches over the threads instead.
    workers = max(1, min(len(run_paths), columnar.THREADS))
    threads = columnar.THREADS if workers == 1 else 1

    def score(path):
        run = columnar.read_run(path, threads)
        _, indexes = loading.result()
        per_qrels = [_engine_scores(run, index, parsed, threads) for index in indexes]
        return _RunInfo(run.tag, run.source), per_qrels

    # The qrels are read while the first runs are parsed; their errors still come first, and a
    # bad run is reported in the order given.
    qrels_pool, run_pool = ThreadPoolExecutor(max_workers=1), ThreadPoolExecutor(max_workers=workers)
    try:
        loading = qrels_pool.submit(load_qrels)
        scoring = run_pool.map(score, run_paths)
        qrels_list, _ = loading.result()
        results = list(scoring)
    finally:
        run_pool.shutdown(cancel_futures=True)
        qrels_pool.shutdown()
    names = run_names([info for info, _ in results])
    rows: list[tuple] = []
    for q, qrels_item in enumerate(qrels_list):
        qrels_turns = qrels_item.turns.tolist()
        for (_, per_qrels), name in zip(results, names):
            rows.extend(_rows(name, qrels_item.name, qrels_turns, parsed, per_qrels[q],
                              options.get("complete", False), options.get("per_turn", False)))
    return rows


@dataclass(frozen=True)
class _RunInfo:
    """What :func:`run_names` needs of a run that is no longer in memory."""

    tag: str
    source: str | None
