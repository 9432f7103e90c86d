"""Comparing runs: paired significance tests on per-turn values, corrected for multiple comparisons.

The input is what :func:`castregin.evaluation.evaluate.evaluate` returns with ``per_turn=True``. For each
qrels and measure, every run is compared with the baseline (or every pair of runs when there is no
baseline) on the turns **both** runs have a value for; turns are taken in byte order, so a
randomization test with a given seed gives the same p-value on every machine.

Tests (scipy, two-sided, on ``run - baseline``):

- ``paired-t``: :func:`scipy.stats.ttest_rel`;
- ``wilcoxon``: :func:`scipy.stats.wilcoxon` (signed-rank, zero differences dropped: ``wilcox``);
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

import io
import json
import math
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..limits import MAX_PERMUTATIONS
from ..render.tables import (
    COUNT_MEASURES,
    NOT_SCORES,
    latex_escape,
    latex_table,
    markdown_escape,
    markdown_table,
    text_table,
)
from .evaluate import ALL_TURNS

if TYPE_CHECKING:
    import pandas as pd

# pandas, scipy, statsmodels and tqdm are imported where they are used: together they take about
# a second to import, which `castregin --help` and the evaluate command should not pay.

TESTS = ("paired-t", "wilcoxon", "randomization")
CORRECTIONS = ("holm", "bonferroni", "none")
DEFAULT_PERMUTATIONS = 10_000
#: Resamples drawn at a time: memory stays at about this many times the number of turns.
_PERMUTATION_BATCH = 10_000
DEFAULT_SEED = 42
COMPARE_FORMATS = ("table", "tsv", "csv", "json", "markdown", "latex")

#: Columns of :func:`compare`'s DataFrame; ``--format json`` keeps all but ``effect_size``.
COMPARISON_COLUMNS = ["measure", "run", "baseline", "qrels", "turns", "mean_difference", "statistic",
                      "p_value", "p_value_corrected", "significant", "direction", "effect_size"]
JSON_COLUMNS = COMPARISON_COLUMNS[:-1]
#: ``direction`` of a significant difference: the run is better or worse than the baseline.
BETTER, WORSE = "better", "worse"

DAGGER = "\u2020"


def paired_test(values: Sequence[float], baseline: Sequence[float], test: str = "paired-t",
                permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """``(statistic, p_value)`` of a two-sided paired test of ``values`` against ``baseline``.

    Degenerate inputs (no pairs, all differences zero, a test scipy cannot compute) give
    ``(0.0, 1.0)``; see the module documentation.
    """
    if test not in TESTS:
        raise InputError(f"unknown test {test!r}; use one of {', '.join(TESTS)}")
    x = np.asarray(values, dtype=float)
    y = np.asarray(baseline, dtype=float)
    if len(x) != len(y):
        raise ValueError("paired samples must have the same length")
    if len(x) == 0 or np.all(x == y):
        # wilcoxon raises here in some scipy versions and ttest_rel gives nan: no evidence either way.
        return 0.0, 1.0
    from scipy import stats

    with warnings.catch_warnings():
        # Precision-loss and divide-by-zero warnings on nearly constant differences are expected here.
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "paired-t":
            result = stats.ttest_rel(x, y)
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


def _mean_difference(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def cohens_d(differences: Sequence[float]) -> float:
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
        raise InputError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}")
    p = [float(v) for v in p_values]
    if not p:
        return [], []
    if method == "none":
        return p, [v <= alpha for v in p]
    from statsmodels.stats.multitest import multipletests

    reject, corrected, _, _ = multipletests(p, alpha=alpha, method=method)
    return [float(v) for v in corrected], [bool(r) for r in reject]


def pairs(names: Sequence[str], baseline: str | None = None) -> list[tuple[str, str]]:
    """``(run, baseline)`` pairs to compare: every run against ``baseline``, or every pair in order.

    Without a baseline, each run is compared with every run given before it (that earlier run
    plays the baseline, so differences read "later minus earlier").
    """
    names = list(dict.fromkeys(names))
    if baseline is not None:
        if baseline not in names:
            raise InputError(f"unknown baseline {baseline!r}; give one of the runs: {', '.join(names)}")
        return [(name, baseline) for name in names if name != baseline]
    return [(names[j], names[i]) for j in range(len(names)) for i in range(j)]


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
        raise InputError(f"unknown test {test!r}; use one of {', '.join(TESTS)}")
    if correction not in CORRECTIONS:
        raise InputError(f"unknown correction {correction!r}; use one of {', '.join(CORRECTIONS)}")
    if not 1 <= permutations <= MAX_PERMUTATIONS:
        raise InputError(f"the number of permutations must be between 1 and {MAX_PERMUTATIONS}, not {permutations}")
    import pandas as pd
    from tqdm import tqdm

    table = per_turn_table(results)
    run_order = list(dict.fromkeys(results["run"]))
    compared = pairs(run_order, baseline)
    # Measures without per-turn values (num_q, gm_map) have nothing to test.
    families = list(dict.fromkeys((q, m) for q, m, _ in table))
    jobs = [(qrels, measure, run, base) for qrels, measure in families for run, base in compared]
    rows = []
    for qrels, measure, run, base in tqdm(jobs, desc="comparing", unit="test", file=sys.stderr,
                                          disable=not progress, leave=False):
        ours, theirs = table.get((qrels, measure, run), {}), table.get((qrels, measure, base), {})
        turns = sorted(set(ours) & set(theirs))  # byte order: the randomization test depends on it
        x = [ours[t] for t in turns]
        y = [theirs[t] for t in turns]
        differences = np.subtract(x, y)
        statistic, p_value = paired_test(x, y, test, permutations, seed)
        rows.append({"measure": measure, "run": run, "baseline": base, "qrels": qrels, "turns": len(turns),
                     "mean_difference": float(np.mean(differences)) if len(turns) else 0.0,
                     "statistic": statistic, "p_value": p_value, "effect_size": cohens_d(differences)})
    frame = pd.DataFrame(rows, columns=[c for c in COMPARISON_COLUMNS if c not in ("p_value_corrected",
                                                                                     "significant", "direction")])
    corrected = [math.nan] * len(frame)
    significant = [False] * len(frame)
    for index in frame.groupby(["qrels", "measure"], sort=False).groups.values():
        positions = [frame.index.get_loc(i) for i in index]
        values, rejected = correct(frame["p_value"].iloc[positions], correction, alpha)
        for position, value, reject in zip(positions, values, rejected):
            corrected[position], significant[position] = value, reject
    frame["p_value_corrected"] = pd.Series(corrected, dtype=float)
    frame["significant"] = pd.Series(significant, dtype=bool)
    frame["direction"] = pd.Series([direction(d, s) for d, s in zip(frame["mean_difference"], significant)],
                                   dtype=object)
    return frame[COMPARISON_COLUMNS].reset_index(drop=True)


# --- rendering ---------------------------------------------------------------------------------------


def _json_number(value: float):
    # JSON has no NaN or Infinity; such a statistic (t-test on constant differences) becomes null.
    value = float(value)
    return value if math.isfinite(value) else None


def comparison_records(comparisons: pd.DataFrame) -> list[dict]:
    """The rows as ``--format json`` objects (:data:`JSON_COLUMNS`, non-finite numbers as None)."""
    return [
        {"measure": r.measure, "run": r.run, "baseline": r.baseline, "qrels": r.qrels, "turns": int(r.turns),
         "mean_difference": _json_number(r.mean_difference), "statistic": _json_number(r.statistic),
         "p_value": _json_number(r.p_value), "p_value_corrected": _json_number(r.p_value_corrected),
         "significant": bool(r.significant), "direction": r.direction}
        for r in comparisons.itertuples(index=False)
    ]


def wins(comparisons: pd.DataFrame) -> set[tuple[str, str, str, str]]:
    """``(qrels, measure, winner, loser)`` for every significant difference."""
    out = set()
    for r in comparisons[comparisons["significant"]].itertuples(index=False):
        if r.mean_difference > 0:
            out.add((r.qrels, r.measure, r.run, r.baseline))
        elif r.mean_difference < 0:
            out.add((r.qrels, r.measure, r.baseline, r.run))
    return out


def run_letters(names: Sequence[str]) -> dict[str, str]:
    """``a, b, ..., z, aa, ab, ...``: the superscript that marks a win over each run (all-pairs mode)."""
    letters = {}
    for index, name in enumerate(names):
        label, n = "", index
        while True:
            label = chr(ord("a") + n % 26) + label
            n = n // 26 - 1
            if n < 0:
                break
        letters[name] = label
    return letters


def summary_cells(results: pd.DataFrame, comparisons: pd.DataFrame, baseline: str | None,
                  decimals: int = 4) -> tuple[list[str], list[tuple[str, str]], dict]:
    """The leaderboard as data: measures, ``(qrels, run)`` rows, and per cell ``(text, best, marks)``.

    ``marks`` is a dagger when the run is significantly better than the baseline, or (without a
    baseline) the letters of the runs it is significantly better than.
    """
    means = results[results["turn"] == ALL_TURNS]
    measures = list(dict.fromkeys(means["measure"]))
    keys = list(dict.fromkeys(zip(means["qrels"], means["run"])))
    values = {(q, r, m): float(v) for q, r, m, v in means[["qrels", "run", "measure", "value"]].itertuples(
        index=False)}
    best: dict[tuple[str, str], float] = {}
    for (qrels, _run, measure), value in values.items():
        if not math.isnan(value) and measure not in NOT_SCORES:
            best[(qrels, measure)] = max(value, best.get((qrels, measure), -math.inf))
    won = wins(comparisons)
    letters = run_letters(list(dict.fromkeys(means["run"])))
    cells = {}
    for qrels, run in keys:
        for measure in measures:
            value = values.get((qrels, run, measure), math.nan)
            if math.isnan(value):
                text = "nan"
            elif measure in COUNT_MEASURES and value.is_integer():
                text = str(int(value))
            else:
                text = f"{value:.{decimals}f}"
            if baseline is not None:
                marks = DAGGER if (qrels, measure, run, baseline) in won else ""
            else:
                marks = "".join(letters[other] for other in letters if (qrels, measure, run, other) in won)
            cells[(qrels, run, measure)] = (text, value == best.get((qrels, measure)), marks)
    return measures, keys, cells


def _summary(results, comparisons, baseline, fmt, decimals=4) -> str:
    measures, keys, cells = summary_cells(results, comparisons, baseline, decimals)
    show_qrels = len({q for q, _ in keys}) > 1
    letters = run_letters(list(dict.fromkeys(r for _, r in keys)))
    rows = []
    for qrels, run in keys:
        name = run if baseline is not None else f"{run} ({letters[run]})"
        if run == baseline:
            name += " [baseline]"
        escape = {"latex": latex_escape, "markdown": markdown_escape}.get(fmt, str)
        row = ([escape(qrels)] if show_qrels else []) + [escape(name)]
        for measure in measures:
            text, is_best, marks = cells[(qrels, run, measure)]
            if fmt == "markdown":
                text = (f"**{text}**" if is_best else text) + (f"<sup>{marks}</sup>" if marks else "")
            elif fmt == "latex":
                text = (f"\\textbf{{{text}}}" if is_best else text)
                if marks:
                    text += "$^{\\dagger}$" if marks == DAGGER else f"$^{{{marks}}}$"
            else:
                text += marks
            row.append(text)
        rows.append(row)
    header = (["qrels"] if show_qrels else []) + ["run"] + list(measures)
    numeric = set(range(len(header) - len(measures), len(header)))
    if fmt == "markdown":
        return markdown_table([markdown_escape(h) for h in header], rows, numeric)
    if fmt == "latex":
        return latex_table([latex_escape(h) for h in header], rows, numeric)
    return text_table(header, rows, numeric)


def _legend(comparisons: pd.DataFrame, baseline: str | None, test: str, correction: str, alpha: float) -> str:
    what = (f"{DAGGER}: significantly better than {baseline}" if baseline is not None
            else "letters: significantly better than the run with that letter")
    return f"{what} ({test}, {correction} correction, alpha {alpha}); bold: best of the column"


def _details(comparisons: pd.DataFrame, fmt: str, decimals: int = 4) -> str:
    header = ["qrels", "measure", "run", "baseline", "turns", "mean diff", "statistic", "p", "p corrected",
              "effect size", "significant"]
    rows = []
    for r in comparisons.itertuples(index=False):
        cells = [r.qrels, r.measure, r.run, r.baseline, str(r.turns), f"{r.mean_difference:+.{decimals}f}",
                 f"{r.statistic:.{decimals}f}", f"{r.p_value:.{decimals}f}", f"{r.p_value_corrected:.{decimals}f}",
                 f"{r.effect_size:.{decimals}f}", r.direction or "no"]
        rows.append(cells)
    numeric = set(range(4, 10))
    if fmt == "markdown":
        escaped = [[markdown_escape(c) for c in row] for row in rows]
        return markdown_table(header, escaped, numeric)
    if fmt == "latex":
        escaped = [[latex_escape(c) for c in row] for row in rows]
        return latex_table([latex_escape(h) for h in header], escaped, numeric)
    return text_table(header, rows, numeric)


def render_comparison(comparisons: pd.DataFrame, results: pd.DataFrame, fmt: str = "table",
                      baseline: str | None = None, test: str = "paired-t", correction: str = "holm",
                      alpha: float = 0.05, decimals: int = 4) -> str:
    """Render :func:`compare`'s rows in one of :data:`COMPARE_FORMATS`.

    ``json``, ``tsv`` and ``csv`` hold the comparisons at full precision. ``table``, ``markdown``
    and ``latex`` show the leaderboard (means from ``results``; best value bold, a dagger on
    significant wins over the baseline or, without one, the letters of the runs beaten), a legend,
    then every comparison.
    """
    if fmt == "json":
        return json.dumps(comparison_records(comparisons), indent=2) + "\n"
    if fmt in ("tsv", "csv"):
        buffer = io.StringIO()
        frame = comparisons.copy()
        for column in ("mean_difference", "statistic", "p_value", "p_value_corrected", "effect_size"):
            frame[column] = [repr(float(v)) for v in frame[column]]
        frame["significant"] = ["true" if v else "false" for v in frame["significant"]]
        frame["direction"] = [v or "" for v in frame["direction"]]
        frame.to_csv(buffer, sep="\t" if fmt == "tsv" else ",", index=False, lineterminator="\n")
        return buffer.getvalue()
    if fmt not in COMPARE_FORMATS:
        raise InputError(f"unknown format {fmt!r}; use one of {', '.join(COMPARE_FORMATS)}")
    legend = _legend(comparisons, baseline, test, correction, alpha)
    summary = _summary(results, comparisons, baseline, fmt, decimals)
    details = _details(comparisons, fmt, decimals)
    if fmt == "latex":
        return f"% {latex_escape(legend)}\n{summary}\n% every comparison\n{details}"
    if fmt == "markdown":
        return f"{summary}\n{legend}\n\n{details}"
    return f"{summary}\n{legend}\n\n{details}"
