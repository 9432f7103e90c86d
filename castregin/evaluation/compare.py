"""Comparing runs: paired significance tests on per-turn values, corrected for multiple comparisons.

The input is what :func:`castregin.evaluation.evaluate.evaluate` returns with ``per_turn=True``. For each
qrels and measure, every run is compared with the baseline (or every pair of runs when there is no
baseline) on the turns **both** runs have a value for; turns are taken in byte order, so a
randomization test with a given seed gives the same p-value on every machine.

Tests (scipy, two-sided, on ``run - baseline``):

- ``paired-t``: :func:`scipy.stats.ttest_rel`'s statistic and p-value, computed as it computes them
  (without its per-call overhead, which dominated the report of 30 runs);
- ``wilcoxon``: :func:`scipy.stats.wilcoxon` (signed-rank, zero differences dropped: ``wilcox``);
- ``tukey-hsd``: Tukey's honestly significant difference over all runs at once
  (:func:`scipy.stats.tukey_hsd`, one-way, on the turns every run has, as ranx offers it); its
  p-values already hold for the whole family, so no correction is applied on top;
- ``randomization``: :func:`scipy.stats.permutation_test` with ``permutation_type="samples"``
  (swapping the two runs' values within a turn) on the mean difference, ``permutations``
  resamples (:data:`DEFAULT_PERMUTATIONS`) drawn from ``numpy.random.default_rng(seed)``; the
  generator is seeded afresh for each comparison, so a comparison's p-value does not depend on
  which other runs were given. With few turns (``2**turns <= permutations``) scipy enumerates
  every assignment and the test is exact.

Degenerate comparisons have a defined result instead of an error: when there is no turn to
compare, every difference is zero, or the test is undefined (e.g. a t-test on a single turn),
the statistic is 0.0 and the p-value 1.0 (no evidence of a difference). A t-test on differences
that are all equal and non-zero gives scipy's statistic ``±inf`` and p-value 0.0.

The p-values of one qrels and one measure form a family corrected with statsmodels'
:func:`~statsmodels.stats.multitest.multipletests` (Holm by default); ``significant`` is its
``reject`` (``p_value_corrected <= alpha``).
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from ..data import Run
from ..errors import InputError
from ..formats import STDIO
from ..limits import MAX_PERMUTATIONS
from .evaluate import ALL_TURNS, run_names

if TYPE_CHECKING:
    import pandas as pd

# pandas, scipy, statsmodels and tqdm are imported where they are used: together they take about
# a second to import, which `castregin --help` and the evaluate command should not pay.

TESTS = ("paired-t", "wilcoxon", "randomization", "tukey-hsd")
#: Tests whose p-values already account for every comparison of a family (no further correction).
FAMILY_TESTS = ("tukey-hsd",)
CORRECTIONS = ("holm", "bonferroni", "none")
DEFAULT_PERMUTATIONS = 10_000
#: Resamples drawn at a time: memory stays at about this many times the number of turns.
_PERMUTATION_BATCH = 10_000
DEFAULT_SEED = 42

#: Columns of :func:`compare`'s DataFrame, and of every ``--format`` of ``castregin compare``.
COMPARISON_COLUMNS = ["measure", "run", "baseline", "qrels", "turns", "mean_difference", "statistic",
                      "p_value", "p_value_corrected", "significant", "direction", "effect_size"]
#: ``direction`` of a significant difference: the run is better or worse than the baseline.
BETTER, WORSE = "better", "worse"


def paired_test(values: Sequence[float], baseline: Sequence[float], test: str = "paired-t",
                permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """``(statistic, p_value)`` of a two-sided paired test of ``values`` against ``baseline``.

    Degenerate inputs (no pairs, all differences zero, a test scipy cannot compute) give
    ``(0.0, 1.0)``; see the module documentation.
    """
    if test not in TESTS:
        raise InputError(f"unknown test {test!r}; use one of {', '.join(TESTS)}", argument="test")
    x = np.asarray(values, dtype=float)
    y = np.asarray(baseline, dtype=float)
    if len(x) != len(y):
        raise InputError("paired samples must have the same length", argument="baseline")
    if len(x) == 0 or np.all(x == y):
        # wilcoxon raises here in some scipy versions and ttest_rel gives nan: no evidence either way.
        return 0.0, 1.0
    from scipy import stats

    with warnings.catch_warnings():
        # Precision-loss and divide-by-zero warnings on nearly constant differences are expected here.
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "paired-t":
            result = _paired_t(x - y)
        elif test == "wilcoxon":
            result = stats.wilcoxon(x, y)
        else:
            result = stats.permutation_test(
                (x, y), _mean_difference, permutation_type="samples", vectorized=True,
                n_resamples=permutations, alternative="two-sided", rng=np.random.default_rng(seed),
                batch=min(permutations, _PERMUTATION_BATCH))
    statistic, p_value = float(result.statistic), float(result.pvalue)
    if math.isnan(p_value):
        return 0.0, 1.0
    return (0.0 if math.isnan(statistic) else statistic), p_value


def direction(mean_difference: float, significant: bool) -> str | None:
    """``better`` or ``worse`` (the run against the baseline) for a significant difference, else None."""
    if not significant or mean_difference == 0 or math.isnan(mean_difference):
        return None
    return BETTER if mean_difference > 0 else WORSE


def _paired_t(differences: np.ndarray):
    """scipy's ``ttest_rel`` (a one-sample t-test of the differences, two-sided) without its
    per-call overhead, ten times its cost here: a report of 30 runs makes thousands of them."""
    from scipy import special

    n = len(differences)
    mean = np.mean(differences)
    # scipy's variance: the mean squared deviation, times n / (n - 1).
    variance = np.mean((differences - mean) ** 2) * (n / (n - 1)) if n > 1 else math.nan
    statistic = np.divide(mean, np.sqrt(variance / n))
    p_value = 2 * special.stdtr(n - 1, -np.abs(statistic)) if n > 1 else math.nan
    return SimpleNamespace(statistic=statistic, pvalue=p_value)


def _mean_difference(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def cohens_d(differences: Sequence[float] | np.ndarray) -> float:
    """Cohen's d of paired differences: their mean over their sample standard deviation.

    0.0 when every difference is zero; NaN when it is undefined (fewer than two differences, or
    equal non-zero differences, whose standard deviation is zero).
    """
    d = np.asarray(differences, dtype=float)
    if len(d) and np.all(d == 0):
        return 0.0
    if len(d) < 2:
        return math.nan
    sd = float(np.std(d, ddof=1))
    return float(np.mean(d)) / sd if sd > 0 else math.nan


def correct(p_values: Sequence[float], method: str = "holm", alpha: float = 0.05) -> tuple[list[float], list[bool]]:
    """Corrected p-values and rejections of one family (statsmodels' ``multipletests``).

    ``method="none"`` keeps the p-values and rejects where ``p <= alpha``.
    """
    if method not in CORRECTIONS:
        raise InputError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}",
                         argument="method")
    p = [float(v) for v in p_values]
    if not p:
        return [], []
    if method == "none":
        return p, [v <= alpha for v in p]
    from statsmodels.stats.multitest import multipletests

    # statsmodels' Holm calls gc.collect(), which walks every object of the process: 80 ms a family
    # with 30 runs in memory. Frozen objects are skipped, and nothing here makes garbage cycles.
    gc.freeze()
    try:
        reject, corrected, _, _ = multipletests(p, alpha=alpha, method=method)
    finally:
        gc.unfreeze()
    return [float(v) for v in corrected], [bool(r) for r in reject]


def pairs(names: Sequence[str], baseline: str | None = None) -> list[tuple[str, str]]:
    """``(run, baseline)`` pairs to compare: every run against ``baseline``, or every pair in order.

    Without a baseline, each run is compared with every run given before it (that earlier run
    plays the baseline, so differences read "later minus earlier").
    """
    names = list(dict.fromkeys(names))
    if baseline is not None:
        if baseline not in names:
            raise InputError(f"unknown baseline {baseline!r}; give one of the runs: {', '.join(names)}",
                             argument="baseline")
        return [(name, baseline) for name in names if name != baseline]
    return [(names[j], names[i]) for j in range(len(names)) for i in range(j)]


def resolve_baseline(baseline: str | None, paths: Sequence[str | os.PathLike], runs: Sequence[Run]) -> str | None:
    """The name (:func:`~castregin.evaluation.evaluate.run_names`) of the run ``baseline`` designates.

    ``baseline`` is one of ``paths``, the files ``runs`` were read from (however it is spelled), or the
    tag or name of exactly one run; ``None`` stays ``None`` (no baseline: every pair is compared).
    """
    if baseline is None:
        return None
    names = run_names(runs)
    if baseline != STDIO:
        target = Path(baseline).resolve() if os.path.exists(baseline) else None
        for path, name in zip(paths, names, strict=True):
            if str(path) == baseline or (target is not None and Path(path).resolve() == target):
                return name
    tagged = [name for run, name in zip(runs, names, strict=True) if baseline in (run.tag, name)]
    if len(tagged) == 1:
        return tagged[0]
    if len(tagged) > 1:
        raise InputError(f"--baseline {baseline!r} is the tag of several runs; give its file instead")
    raise InputError(f"unknown --baseline {baseline!r}; give one of the run files or tags: {', '.join(names)}")


def same_measure(first, second) -> bool:
    """Whether two parsed measures (:func:`~castregin.evaluation.measures.parse_measures`) are one measure
    under two names (``P@1`` and ``P_1``)."""
    return first.renamed("") == second.renamed("")


def tukey_hsd(table: dict, family: tuple[str, str], runs: Sequence[str]):
    """Tukey's HSD over every run of one (qrels, measure), on the turns all runs have a value for.

    Returns a function ``(run, baseline) -> (statistic, p_value)``: the statistic is scipy's (the
    difference of means, run minus baseline); with fewer than two turns or runs, ``(0.0, 1.0)``.
    """
    from scipy import stats

    qrels, measure = family
    values = [table.get((qrels, measure, run), {}) for run in runs]
    turns = sorted(set.intersection(*(set(v) for v in values))) if values else []
    index = {run: i for i, run in enumerate(runs)}
    samples = [[v[t] for t in turns] for v in values]
    if len(turns) < 2 or len(runs) < 2 or all(np.ptp(s) == 0 for s in samples):
        return lambda run, base: (0.0, 1.0)
    result = stats.tukey_hsd(*samples)
    return lambda run, base: (float(result.statistic[index[run], index[base]]),
                              float(result.pvalue[index[run], index[base]]))


def per_turn_table(results: pd.DataFrame) -> dict[tuple[str, str, str], dict[str, float]]:
    """``{(qrels, measure, run): {turn: value}}`` from evaluate's per-turn rows."""
    rows = results[results["turn"] != ALL_TURNS]
    table: dict[tuple[str, str, str], dict[str, float]] = {}
    for qrels, measure, run, turn, value in rows[["qrels", "measure", "run", "turn", "value"]].itertuples(
            index=False):
        table.setdefault((qrels, measure, run), {})[turn] = float(value)
    return table


def compare(results: pd.DataFrame, baseline: str | None = None, test: str = "paired-t",
            correction: str = "holm", alpha: float = 0.05, permutations: int = DEFAULT_PERMUTATIONS,
            seed: int = DEFAULT_SEED, progress: bool = False) -> pd.DataFrame:
    """Compare runs on per-turn values: one row per (qrels, measure, run, baseline).

    Parameters
    ----------
    results:
        :func:`castregin.evaluation.evaluate.evaluate` output with ``per_turn=True`` (mean rows are ignored).
    baseline:
        The run name (as in ``results["run"]``) every other run is compared with; ``None``
        compares every pair (see :func:`pairs`).
    test, permutations, seed:
        See :func:`paired_test`.
    correction, alpha:
        See :func:`correct`; the family is every comparison of one qrels and one measure.
    progress:
        Show a tqdm bar on standard error (the CLI sets it when standard error is a terminal).

    Returns
    -------
    A DataFrame with :data:`COMPARISON_COLUMNS`; ``mean_difference`` is ``run - baseline``
    averaged over the ``turns`` both have a value for.
    """
    if test not in TESTS:
        raise InputError(f"unknown test {test!r}; use one of {', '.join(TESTS)}", argument="test")
    if correction not in CORRECTIONS:
        raise InputError(f"unknown correction {correction!r}; use one of {', '.join(CORRECTIONS)}",
                         argument="correction")
    if not 1 <= permutations <= MAX_PERMUTATIONS:
        raise InputError(f"the number of permutations must be between 1 and {MAX_PERMUTATIONS}, "
                         f"not {permutations}", argument="permutations")
    import pandas as pd
    from tqdm import tqdm

    table = per_turn_table(results)
    run_order = list(dict.fromkeys(results["run"]))
    compared = pairs(run_order, baseline)
    # Measures without per-turn values (num_q, gm_map) have nothing to test.
    families = list(dict.fromkeys((q, m) for q, m, _ in table))
    tukey = {family: tukey_hsd(table, family, run_order) for family in families} if test == "tukey-hsd" else {}
    jobs = [(qrels, measure, run, base) for qrels, measure in families for run, base in compared]
    rows = []
    for qrels, measure, run, base in tqdm(jobs, desc="comparing", unit="test", file=sys.stderr,
                                          disable=not progress, leave=False):
        ours, theirs = table.get((qrels, measure, run), {}), table.get((qrels, measure, base), {})
        turns = sorted(set(ours) & set(theirs))  # byte order: the randomization test depends on it
        x = [ours[t] for t in turns]
        y = [theirs[t] for t in turns]
        differences = np.subtract(x, y)
        if tukey:
            statistic, p_value = tukey[qrels, measure](run, base)
        else:
            statistic, p_value = paired_test(x, y, test, permutations, seed)
        rows.append({"measure": measure, "run": run, "baseline": base, "qrels": qrels, "turns": len(turns),
                     "mean_difference": float(np.mean(differences)) if turns else 0.0,
                     "statistic": statistic, "p_value": p_value, "effect_size": cohens_d(differences)})
    frame = pd.DataFrame(rows, columns=[c for c in COMPARISON_COLUMNS if c not in ("p_value_corrected",
                                                                                     "significant", "direction")])
    if test in FAMILY_TESTS:
        correction = "none"
    corrected = [math.nan] * len(frame)
    significant = [False] * len(frame)
    for index in frame.groupby(["qrels", "measure"], sort=False).groups.values():
        positions = [frame.index.get_loc(i) for i in index]
        values, rejected = correct(frame["p_value"].iloc[positions], correction, alpha)
        for position, value, reject in zip(positions, values, rejected, strict=True):
            corrected[position], significant[position] = value, reject
    frame["p_value_corrected"] = pd.Series(corrected, dtype=float)
    frame["significant"] = pd.Series(significant, dtype=bool)
    frame["direction"] = pd.Series([direction(d, s)
                                    for d, s in zip(frame["mean_difference"], significant, strict=True)],
                                   dtype=object)
    return frame[COMPARISON_COLUMNS].reset_index(drop=True)


# --- the leaderboard: the runs' order and the wins it marks --------------------------------------------------


def wins(comparisons: pd.DataFrame) -> set[tuple[str, str, str, str]]:
    """``(qrels, measure, winner, loser)`` for every significant difference."""
    out = set()
    for r in comparisons[comparisons["significant"]].itertuples(index=False):
        if r.mean_difference > 0:
            out.add((r.qrels, r.measure, r.run, r.baseline))
        elif r.mean_difference < 0:
            out.add((r.qrels, r.measure, r.baseline, r.run))
    return out


def sort_keys(keys: Sequence[tuple[str, str]], values: dict, measure: str) -> list[tuple[str, str]]:
    """``(qrels, run)`` rows ordered by ``measure``'s mean, highest first, within each qrels.

    Qrels keep the order given, and so do runs with equal means; a run without a value comes last.
    """
    def key(position_and_row):
        position, (qrels, run) = position_and_row
        value = values.get((qrels, run, measure), math.nan)
        return (qrels_order[qrels], math.isnan(value), -value if not math.isnan(value) else 0.0, position)

    qrels_order = {q: i for i, q in enumerate(dict.fromkeys(q for q, _ in keys))}
    return [row for _, row in sorted(enumerate(keys), key=key)]


@dataclasses.dataclass
class Leaderboard:
    """The leaderboard of ``compare`` and ``report``: ``measures``; ``rows``, ``(qrels, run)`` in the order given
    or by the sort measure's mean; ``runs`` in the order given; ``values`` ``{(qrels, run, measure): mean}``; and
    ``beaten`` ``{(qrels, run, measure): [runs it is significantly better than, in the order given]}``."""

    measures: list[str]
    rows: list[tuple[str, str]]
    runs: list[str]
    values: dict[tuple[str, str, str], float]
    beaten: dict[tuple[str, str, str], list[str]]


def leaderboard(results: pd.DataFrame, comparisons: pd.DataFrame, sort: str | None = None) -> Leaderboard:
    """The leaderboard of evaluate's ``results`` (their mean rows) with the significant wins of ``comparisons``
    (:func:`compare`'s rows); ``sort`` orders the rows by that measure (:func:`sort_keys`)."""
    means = results[results["turn"] == ALL_TURNS]
    measures = list(dict.fromkeys(means["measure"]))
    keys = list(dict.fromkeys(zip(means["qrels"], means["run"], strict=True)))
    values = {(q, r, m): float(v) for q, r, m, v in means[["qrels", "run", "measure", "value"]].itertuples(
        index=False)}
    if sort is not None:
        if sort not in measures:
            raise InputError(f"cannot sort by {sort!r}: not one of the measures ({', '.join(measures)})",
                             argument="sort")
        keys = sort_keys(keys, values, sort)
    won = wins(comparisons)
    runs = list(dict.fromkeys(means["run"]))
    beaten = {(qrels, run, measure): [other for other in runs if (qrels, measure, run, other) in won]
              for qrels, run in keys for measure in measures}
    return Leaderboard(measures, keys, runs, values, beaten)


@dataclasses.dataclass
class Comparison:
    """What ``castregin compare`` shows: evaluate's per-turn ``results``, the ``comparisons`` (:func:`compare`'s
    rows) and the ``leaderboard``."""

    results: pd.DataFrame
    comparisons: pd.DataFrame
    leaderboard: Leaderboard


def comparison(results: pd.DataFrame, baseline: str | None = None,
               test: str = "paired-t", correction: str = "holm", alpha: float = 0.05,
               permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED, sort: str | None = None,
               progress: bool = False) -> Comparison:
    """``castregin compare``'s pipeline after evaluate: the per-turn ``results`` compared (:func:`compare`) and
    laid out as the leaderboard (:func:`leaderboard`, by ``sort``)."""
    comparisons = compare(results, baseline, test, correction, alpha, permutations, seed, progress=progress)
    return Comparison(results, comparisons, leaderboard(results, comparisons, sort))
