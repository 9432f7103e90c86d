"""Comparisons as tables: the leaderboard with significance marks, then every comparison.

``json``, ``tsv`` and ``csv`` hold :func:`castregin.evaluation.compare.compare`'s rows at full precision,
effect sizes included; ``table``, ``markdown`` and ``latex`` show the leaderboard (means from evaluate's
rows, the best of each column bold, a dagger on significant wins over the baseline or, without one, the
letters of the runs beaten; in the order given or sorted by one measure), a legend, then every comparison.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..evaluation.compare import FAMILY_TESTS
from ..formats.common import json_text, json_value
from .numbers import fixed
from .tables import (
    COUNT_MEASURES,
    column_best,
    csv_text,
    latex_escape,
    latex_table,
    markdown_escape,
    markdown_table,
    text_table,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..evaluation.compare import Comparison, Leaderboard

COMPARE_FORMATS = ("table", "tsv", "csv", "json", "markdown", "latex")
DAGGER = "\u2020"


def comparison_records(comparisons: pd.DataFrame) -> list[dict]:
    """The rows as ``--format json`` objects (every column of ``compare``, non-finite numbers as None)."""
    # pandas-stubs type a row's fields as any scalar at all; compare's columns say what each is.
    rows: Iterable[Any] = comparisons.itertuples(index=False)
    return [
        json_value({"measure": r.measure, "run": r.run, "baseline": r.baseline, "qrels": r.qrels,
                    "turns": int(r.turns), "mean_difference": r.mean_difference, "statistic": r.statistic,
                    "p_value": r.p_value, "p_value_corrected": r.p_value_corrected,
                    "significant": bool(r.significant), "direction": r.direction, "effect_size": r.effect_size})
        for r in rows
    ]


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


def rounded(value, decimals: int = 4, *, sign: bool = False, integer: bool = False) -> str:
    """:func:`~castregin.render.numbers.fixed`, but a value that rounds to zero is ``0.0000``, unsigned.

    A difference of -0.00001 would otherwise read ``-0.0000``, a sign without a number behind it.
    """
    text = fixed(value, decimals, sign=sign, integer=integer)
    return text[1:] if text[:1] in "+-" and set(text[1:]) <= {"0", "."} else text


def summary_cells(board: Leaderboard, baseline: str | None, decimals: int = 4) -> dict:
    """Per leaderboard cell ``(qrels, run, measure)``: ``(text, best, marks)``.

    ``best`` says the value is the best of its column (:func:`~castregin.render.tables.column_best`); ``marks``
    is a dagger when the run is significantly better than the baseline, or (without a baseline) the letters of
    the runs it is significantly better than (letters in the order the runs were given).
    """
    best = column_best(board.values)
    letters = run_letters(board.runs)
    cells = {}
    for qrels, run in board.rows:
        for measure in board.measures:
            value = board.values.get((qrels, run, measure), math.nan)
            text = fixed(value, decimals, integer=measure in COUNT_MEASURES)
            beaten = board.beaten[(qrels, run, measure)]
            if baseline is not None:
                marks = DAGGER if baseline in beaten else ""
            else:
                marks = "".join(letters[other] for other in beaten)
            cells[(qrels, run, measure)] = (text, value == best.get((qrels, measure)), marks)
    return cells


def _summary(board: Leaderboard, baseline, fmt, decimals=4) -> str:
    measures, cells = board.measures, summary_cells(board, baseline, decimals)
    show_qrels = len({q for q, _ in board.rows}) > 1
    # The letters of the given order, as summary_cells marks them, whatever the rows' order.
    letters = run_letters(board.runs)
    rows = []
    for qrels, run in board.rows:
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


def correction_words(test: str, correction: str) -> str:
    """How the p-values are corrected, as the legends say it: ``holm correction``; a test that corrects over its
    family itself (Tukey's HSD) is corrected no further, whatever ``correction`` says."""
    if test in FAMILY_TESTS:
        return "Tukey's family-wise p-values, no further correction"
    return f"{correction} correction"


def _legend(comparisons: pd.DataFrame, baseline: str | None, test: str, correction: str, alpha: float) -> str:
    what = (f"{DAGGER}: significantly better than {baseline}" if baseline is not None
            else "letters: significantly better than the run with that letter")
    return f"{what} ({test}, {correction_words(test, correction)}, alpha {alpha}); bold: best of the column"


def _details(comparisons: pd.DataFrame, fmt: str, decimals: int = 4) -> str:
    header = ["qrels", "measure", "run", "baseline", "turns", "mean diff", "statistic", "p", "p corrected",
              "effect size", "significant"]
    rows: list[list[str]] = []
    records: Iterable[Any] = comparisons.itertuples(index=False)  # fields typed as any scalar (pandas-stubs)
    for r in records:
        cells = [r.qrels, r.measure, r.run, r.baseline, str(r.turns), rounded(r.mean_difference, decimals, sign=True),
                 fixed(r.statistic, decimals), fixed(r.p_value, decimals), fixed(r.p_value_corrected, decimals),
                 fixed(r.effect_size, decimals), r.direction or "no"]
        rows.append(cells)
    numeric = set(range(4, 10))
    if fmt == "markdown":
        escaped = [[markdown_escape(c) for c in row] for row in rows]
        return markdown_table(header, escaped, numeric)
    if fmt == "latex":
        escaped = [[latex_escape(c) for c in row] for row in rows]
        return latex_table([latex_escape(h) for h in header], escaped, numeric)
    return text_table(header, rows, numeric)


def render_comparison(compared: Comparison, fmt: str = "table", baseline: str | None = None,
                      test: str = "paired-t", correction: str = "holm", alpha: float = 0.05, decimals: int = 4) -> str:
    """Render a :class:`~castregin.evaluation.compare.Comparison` in one of :data:`COMPARE_FORMATS`.

    ``json``, ``tsv`` and ``csv`` hold the comparisons at full precision, effect sizes included.
    ``table``, ``markdown`` and ``latex`` show the leaderboard (best value bold, a dagger on significant
    wins over the baseline or, without one, the letters of the runs beaten; rows in the leaderboard's
    order), a legend, then every comparison with its effect size.
    """
    comparisons = compared.comparisons
    if fmt == "json":
        return json_text(comparison_records(comparisons))
    if fmt in ("tsv", "csv"):
        frame = comparisons.copy()
        for column in ("mean_difference", "statistic", "p_value", "p_value_corrected", "effect_size"):
            frame[column] = [repr(float(v)) for v in frame[column]]
        frame["significant"] = ["true" if v else "false" for v in frame["significant"]]
        frame["direction"] = [v or "" for v in frame["direction"]]
        return csv_text(list(frame.columns), frame.itertuples(index=False), "\t" if fmt == "tsv" else ",")
    if fmt not in COMPARE_FORMATS:
        raise InputError(f"unknown format {fmt!r}; use one of {', '.join(COMPARE_FORMATS)}")
    legend = _legend(comparisons, baseline, test, correction, alpha)
    summary = _summary(compared.leaderboard, baseline, fmt, decimals)
    details = _details(comparisons, fmt, decimals)
    if fmt == "latex":
        return f"% {latex_escape(legend)}\n{summary}\n% every comparison\n{details}"
    if fmt == "markdown":
        return f"{summary}\n{legend}\n\n{details}"
    return f"{summary}\n{legend}\n\n{details}"
