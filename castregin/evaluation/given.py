"""Scores computed elsewhere, as the analyses take them: nugget scores, an earlier ``evaluate -q``, any tool.

The rows are evaluate's ``(run, qrels, measure, turn, value)`` (read by :func:`castregin.formats.scores.read_scores`);
``qrels`` names the source of the labels (a qrels, an assignment source). :func:`results_frame` makes of them
what :func:`castregin.evaluation.evaluate.evaluate` returns, so that the significance tests
(:func:`castregin.evaluation.compare.compare`), the bootstrap and the report run on them unchanged;
:func:`ranking_correlations_of` ranks the runs by their means under every two (qrels, measure) settings.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..errors import InputError
from .analysis import agreement_statistics
from .evaluate import ALL_TURNS, NUM_Q, RESULT_COLUMNS
from .ranking import DEFAULT_TOP_K

if TYPE_CHECKING:
    import pandas as pd


def select_measures(rows: Sequence[tuple], measures: Iterable[str] | None) -> list[tuple]:
    """The rows of ``measures`` (names as the tables spell them; ``num_q`` is kept), or every row."""
    wanted = list(dict.fromkeys(measures or ()))
    if not wanted:
        return list(rows)
    present = list(dict.fromkeys(row[2] for row in rows))
    for measure in wanted:
        if measure not in present:
            raise InputError(f"{measure} is in no score table (they hold {', '.join(present)})", argument="measures")
    return [row for row in rows if row[2] in wanted or row[2] == NUM_Q]


def tested_measures(rows: Sequence[tuple]) -> list[str]:
    """The measures with per-turn values, in order of appearance: those a test or an interval is about."""
    return list(dict.fromkeys(row[2] for row in rows if row[3] != ALL_TURNS))


def with_means(rows: Sequence[tuple]) -> list[tuple]:
    """``rows`` with the mean row of every (run, qrels, measure) that has per-turn rows but no mean (a table of
    per-turn values only): the mean over its turns."""
    have = {row[:3] for row in rows if row[3] == ALL_TURNS}
    per_turn: dict[tuple, list[float]] = {}
    for row in rows:
        if row[3] != ALL_TURNS and row[:3] not in have:
            per_turn.setdefault(row[:3], []).append(row[4])
    return [*rows, *((*key, ALL_TURNS, math.fsum(values) / len(values)) for key, values in per_turn.items())]


def results_frame(rows: Sequence[tuple]) -> pd.DataFrame:
    """The rows as :func:`castregin.evaluation.evaluate.evaluate`'s DataFrame (``per_turn=True``)."""
    import pandas as pd

    if not tested_measures(rows):
        raise InputError("the score tables hold no per-turn value: write them with -q (--per-turn)",
                         argument="scores")
    return pd.DataFrame(with_means(rows), columns=RESULT_COLUMNS)


def run_order(rows: Sequence[tuple]) -> list[str]:
    """The runs of ``rows`` in order of first appearance."""
    return list(dict.fromkeys(row[0] for row in rows))


def resolve_run(name: str | None, rows: Sequence[tuple], option: str = "--baseline") -> str | None:
    """``name`` if it is a run of ``rows`` (None stays None)."""
    runs = run_order(rows)
    if name is None or name in runs:
        return name
    raise InputError(f"unknown {option} {name!r}; give one of the runs of the score tables: {', '.join(runs)}")


def ranking_correlations_of(rows: Sequence[tuple], top_k: int = DEFAULT_TOP_K) -> list[dict]:
    """:func:`castregin.evaluation.analysis.agreement_statistics` between the rankings of the runs by their means
    under every two (qrels, measure) settings of ``rows``, as
    :func:`castregin.evaluation.analysis.ranking_correlations` gives them for runs and qrels.

    Every run must have a mean under every setting.
    """
    means: dict[tuple[str, str], dict[str, float]] = {}
    for run, qrels, measure, turn, value in with_means(rows):
        if turn == ALL_TURNS and measure != NUM_Q:
            means.setdefault((qrels, measure), {})[run] = value
    runs = run_order(rows)
    if len(runs) < 2:
        raise InputError("rank correlations need at least two runs", argument="scores")
    for (qrels, measure), values in means.items():
        missing = [run for run in runs if run not in values]
        if missing:
            raise InputError(f"run {missing[0]!r} has no {measure} on {qrels!r}: every run needs a mean under "
                             "every setting", argument="scores")
    settings = [(qrels, measure, [values[run] for run in runs]) for (qrels, measure), values in means.items()]
    return [{"qrels_a": qa, "measure_a": ma, "qrels_b": qb, "measure_b": mb, **agreement_statistics(a, b, top_k)}
            for (qa, ma, a), (qb, mb, b) in itertools.combinations(settings, 2)]
