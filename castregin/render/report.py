"""A static HTML report of a set of runs: one self-contained ``index.html`` plus the figures as PNGs.

The page embeds its figures as base64 PNG and its style inline, and has no script: it opens from
a file, offline, and prints. It holds no date or path, so the same inputs give the same bytes.

Contents: the leaderboard (means as ``evaluate`` gives them, best bold, significance marks as in
``compare``), the significance matrix of every pair of runs per qrels and measure, the label
histogram of each qrels, and for each run its scores, judged@k, the classic TREC per-turn plot
(score minus the median of all runs, with the best run's score marked) and the labels of its
top-k items with the unjudged ones as their own category.
"""

from __future__ import annotations

import base64
import html
import math
import re
import sys
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from ..data import Qrels, Run
from ..errors import CoverageWarning, InputError
from ..evaluation.compare import DEFAULT_PERMUTATIONS, DEFAULT_SEED, compare
from ..evaluation.evaluate import ALL_TURNS, NUM_Q, evaluate, natural_key, run_names
from ..evaluation.measures import DEFAULT_MEASURES, parse_measures
from ..formats.output import check_replaceable_directory, replace_directory
from . import plots
from .comparison import DAGGER, run_letters, summary_cells

DEFAULT_DEPTH = 10
UNJUDGED = "unjudged"
FIGURES_DIR = "figures"
INDEX = "index.html"


# --- data ---------------------------------------------------------------------------------------------


def label_distribution(run: Run, qrels: Qrels, depth: int = DEFAULT_DEPTH) -> pd.DataFrame:
    """Counts of labels at each rank 1..``depth`` of ``run`` over the turns it shares with ``qrels``.

    Rows are ranks, columns the qrels' labels in increasing order then ``"unjudged"``; a turn
    with fewer than ``r`` items counts nowhere at rank ``r``. Items are in trec_eval's order.
    """
    labels = sorted({label for items in qrels.labels.values() for label in items.values()})
    counts = {rank: Counter() for rank in range(1, depth + 1)}
    for turn in run.scores:
        if turn not in qrels.labels:
            continue
        judged = qrels.labels[turn]
        for rank, item in enumerate(run.ranked(turn)[:depth], start=1):
            counts[rank][judged.get(item, UNJUDGED)] += 1
    columns = [*labels, UNJUDGED]
    frame = pd.DataFrame([[counts[rank][c] for c in columns] for rank in counts], columns=columns,
                         index=pd.Index(list(counts), name="rank"))
    return frame


def per_turn_versus_median(results: pd.DataFrame, qrels: str, measure: str, run: str) -> pd.DataFrame:
    """For each turn of ``run``: its value, the median and the best value of all runs having the turn."""
    rows = results[(results["qrels"] == qrels) & (results["measure"] == measure) & (results["turn"] != ALL_TURNS)]
    by_turn: dict[str, list[float]] = {}
    for turn, value in rows[["turn", "value"]].itertuples(index=False):
        by_turn.setdefault(turn, []).append(float(value))
    own = rows[rows["run"] == run]
    turns = sorted(own["turn"], key=natural_key)
    values = dict(zip(own["turn"], own["value"]))
    return pd.DataFrame({
        "turn": turns,
        "value": [float(values[t]) for t in turns],
        "median": [float(np.median(by_turn[t])) for t in turns],
        "best": [max(by_turn[t]) for t in turns],
    })


def slug(text: str) -> str:
    """A file-name-safe form of a name (``nDCG@3`` -> ``nDCG_3``)."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_.") or "x"


@dataclass
class Report:
    """The report in memory: the page and its figures (``figures/<name>.png`` -> PNG bytes)."""

    html: str
    figures: dict[str, bytes] = field(default_factory=dict)


# --- page -------------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 2rem auto;
       max-width: 1200px; padding: 0 1rem; color: #222; line-height: 1.4; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2rem; margin-top: 2.2rem; }
h3 { margin-top: 1.6rem; }
table { border-collapse: collapse; margin: .6rem 0 1rem; font-size: .9rem; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid #e5e5e5; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f6f6f6; }
td.win { background: #d3f9d8; } td.loss { background: #ffe3e3; } td.diag { color: #aaa; }
.matrix th, .matrix td:first-child { max-width: 8.5rem; overflow-wrap: anywhere; }
h4 { margin: .8rem 0 0; font-size: .95rem; }
img { max-width: 100%; height: auto; display: block; margin: .4rem 0 1rem; }
.meta, .legend { color: #555; font-size: .9rem; }
td small span { white-space: nowrap; }
nav ul { columns: 2; } code { background: #f3f3f3; padding: 0 .2rem; }
.figures { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]], numeric: set[int]) -> str:
    """An HTML table; each cell is ``(html, css class)``; header cells are plain text."""
    head = "".join(f'<th class="num">{_e(h)}</th>' if i in numeric else f"<th>{_e(h)}</th>"
                   for i, h in enumerate(header))
    body = []
    for row in rows:
        cells = []
        for i, (content, css) in enumerate(row):
            classes = " ".join(c for c in (("num" if i in numeric else ""), css) if c)
            cells.append(f'<td class="{classes}">{content}</td>' if classes else f"<td>{content}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>\n"


def _img(name: str, data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img src="data:image/png;base64,{encoded}" alt="{_e(alt)}" title="{_e(name)}">\n'


def _fmt(value: float, decimals: int = 4, sign: bool = False) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return f"{value:+.{decimals}f}" if sign else f"{value:.{decimals}f}"


def _p(value: float) -> str:
    return "p&lt;0.001" if value < 0.001 else f"p={value:.3f}"


def _leaderboard(results, marks, baseline, judged, depth) -> str:
    measures, keys, cells = summary_cells(results, marks, baseline)
    letters = run_letters(list(dict.fromkeys(results["run"])))
    parts = []
    for qrels_name in dict.fromkeys(q for q, _ in keys):
        rows = []
        for qrels, run in keys:
            if qrels != qrels_name:
                continue
            name = _e(run) + ("" if baseline is not None else f" ({letters[run]})")
            if run == baseline:
                name += " <em>(baseline)</em>"
            row = [(name, "")]
            for measure in measures:
                text, is_best, mark = cells[(qrels, run, measure)]
                content = f"<strong>{text}</strong>" if is_best else text
                row.append((content + (f"<sup>{_e(mark)}</sup>" if mark else ""), ""))
            row.append((_fmt(judged[(qrels, run)]), ""))
            rows.append(row)
        header = ["run", *measures, f"judged@{depth}"]
        parts.append(f"<h3>{_e(qrels_name)}</h3>\n" + _table(header, rows, set(range(1, len(header)))))
    return "".join(parts)


def _matrix(all_pairs: pd.DataFrame, names: Sequence[str], qrels: str, measure: str) -> str:
    found = {}
    for r in all_pairs[(all_pairs["qrels"] == qrels) & (all_pairs["measure"] == measure)].itertuples(index=False):
        found[(r.run, r.baseline)] = (r.mean_difference, r.p_value_corrected, r.significant)
        found[(r.baseline, r.run)] = (-r.mean_difference, r.p_value_corrected, r.significant)
    rows = []
    for row_run in names:
        row = [(_e(row_run), "")]
        for column_run in names:
            if row_run == column_run:
                row.append(("—", "diag"))
                continue
            difference, p, significant = found[(row_run, column_run)]
            css = ("win" if difference > 0 else "loss" if difference < 0 else "") if significant else ""
            row.append((f"{_fmt(difference, 3, sign=True)}<br><small>{_p(p)}</small>", css))
        rows.append(row)
    return (f'<div class="matrix"><h4>{_e(measure)} — {_e(qrels)}</h4>\n'
            + _table(["row − column", *names], rows, set(range(1, len(names) + 1))) + "</div>")


def build_report(runs: Sequence[Run], qrels: Sequence[Qrels], measures: Sequence[str] = DEFAULT_MEASURES,
                 baseline: str | None = None, rel_level: int = 2, depth: int = DEFAULT_DEPTH,
                 test: str = "paired-t", correction: str = "holm", alpha: float = 0.05,
                 permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED,
                 progress: bool = False) -> Report:
    """Evaluate, compare and draw: the report page and its figures, in memory.

    ``baseline`` is a run name as in :func:`castregin.evaluation.evaluate.run_names`; the per-turn plots use
    the first measure. The significance matrix always compares every pair of runs (its own
    correction family per qrels and measure); the leaderboard marks wins over ``baseline`` when
    given, else over each other run.
    """
    parsed = parse_measures(measures, rel_level)
    measures = [m.name for m in parsed]
    names = run_names(runs)
    results = evaluate(runs, qrels, measures, rel_level=rel_level, per_turn=True)
    # judged@k is evaluate's Judged@k (ir_measures' definition), the one implementation of it.
    judged_measure = f"Judged@{depth}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)  # the same runs and qrels: said above
        judged_rows = evaluate(runs, qrels, [judged_measure], rel_level=rel_level)
    judged_rows = judged_rows[judged_rows["measure"] == judged_measure]
    judged = {(q, r): float(v) for q, r, v in judged_rows[["qrels", "run", "value"]].itertuples(index=False)}
    options = {"test": test, "correction": correction, "alpha": alpha, "permutations": permutations,
               "seed": seed, "progress": progress}
    all_pairs = compare(results, None, **options)
    marks = compare(results, baseline, **options) if baseline is not None else all_pairs
    tested = [m.name for m in parsed if m.per_turn]  # summaries over turns (gm_map) have nothing to test
    primary = tested[0] if tested else None
    if primary is None:
        raise InputError("the report's per-turn plots need a measure with per-turn values (num_q and gm_map "
                         "have none)")

    figures: dict[str, bytes] = {}
    jobs = [("qrels", q, None, f"{i + 1:02d}") for i, q in enumerate(qrels)] + [
        (kind, q, run, name) for run, name in zip(runs, names) for q in qrels for kind in ("per-turn", "labels")]
    images: dict[tuple, str] = {}
    for kind, q, run, name in tqdm(jobs, desc="drawing", unit="figure", file=sys.stderr,
                                   disable=not progress, leave=False):
        if kind == "qrels":
            counts = Counter(label for items in q.labels.values() for label in items.values())
            file = f"qrels-{name}-{slug(q.name)}-labels.png"  # name holds the qrels' position here
            data = plots.label_histogram_plot(dict(sorted(counts.items())), f"labels of {q.name}")
            alt = f"label histogram of {q.name}"
        else:
            run_index = names.index(name) + 1
            stem = f"run-{run_index:02d}-{slug(name)}-{slug(q.name)}"
            if kind == "per-turn":
                table = per_turn_versus_median(results, q.name, primary, name)
                file = f"{stem}-per-turn-{slug(primary)}.png"
                data = plots.per_turn_plot(list(table["turn"]), list(table["value"] - table["median"]),
                                           list(table["best"] - table["median"]),
                                           f"{name}: {primary} per turn minus the median of {len(runs)} runs "
                                           f"({q.name})", f"{primary} − median")
                alt = f"{primary} of {name} per turn minus the median"
            else:
                distribution = label_distribution(run, q, depth)
                shared = sum(1 for turn in run.scores if turn in q.labels)
                shares = {str(c): [v / shared if shared else 0.0 for v in distribution[c]]
                          for c in distribution.columns}
                file = f"{stem}-top{depth}-labels.png"
                data = plots.label_distribution_plot(shares, list(distribution.index),
                                                     f"{name}\nlabels of the top {depth} "
                                                     f"({q.name}, {shared} turns)")
                alt = f"labels of the top {depth} items of {name}"
        figures[f"{FIGURES_DIR}/{file}"] = data
        images[(kind, q.name, name if kind != "qrels" else None)] = _img(f"{FIGURES_DIR}/{file}", data, alt)

    legend = (f"{DAGGER}: significantly better than {baseline}" if baseline is not None
              else "superscript letters: significantly better than the run with that letter")
    settings = (f"{test} test, {correction} correction over the comparisons of each measure, alpha {alpha}"
                + (f", {permutations} permutations, seed {seed}" if test == "randomization" else "")
                + f"; binary measures count labels ≥ {rel_level} as relevant")
    body = [f"<h1>castregin report: {len(runs)} run{'s' if len(runs) != 1 else ''}</h1>",
            (f'<p class="meta">Qrels: {", ".join(_e(q.name) for q in qrels)}. Measures: '
             f'{", ".join(_e(m) for m in measures)}. {_e(settings)}. Means over the turns both the run '
             f"and the qrels have (trec_eval's default).</p>"),
            "<nav><strong>Contents</strong><ul>"
            '<li><a href="#leaderboard">Leaderboard</a></li><li><a href="#significance">Significance matrix</a></li>'
            '<li><a href="#qrels">Qrels</a></li>'
            + "".join(f'<li><a href="#run-{i + 1}">{_e(name)}</a></li>' for i, name in enumerate(names))
            + "</ul></nav>"]

    body.append('<h2 id="leaderboard">Leaderboard</h2>')
    body.append(f'<p class="legend">Bold: best of the column. {_e(legend)}. judged@{depth}: share of the '
                f"top {depth} items that are judged.</p>")
    body.append(_leaderboard(results, marks, baseline, judged, depth))

    body.append('<h2 id="significance">Significance matrix</h2>')
    body.append(f'<p class="legend">Each cell: mean difference row − column over the turns both have, and the '
                f"corrected p-value ({_e(test)}, {_e(correction)}, every pair of runs). Green: the row run is "
                f"significantly better (alpha {alpha}); red: significantly worse.</p>")
    if len(runs) < 2:
        body.append("<p>One run: nothing to compare.</p>")
    else:
        for q in qrels:
            body.append('<div class="figures">')
            for measure in tested:
                body.append(_matrix(all_pairs, names, q.name, measure))
            body.append("</div>")

    body.append('<h2 id="qrels">Qrels</h2>')
    body.append('<div class="figures">')
    for q in qrels:
        turns = len(q.labels)
        body.append(f"<div><h3>{_e(q.name)}</h3><p class=\"meta\">{turns} turns, {len(q)} judgments.</p>"
                    + images[("qrels", q.name, None)] + "</div>")
    body.append("</div>")

    means = results[results["turn"] == ALL_TURNS]
    for i, (run, name) in enumerate(zip(runs, names)):
        body.append(f'<h2 id="run-{i + 1}">{_e(name)}{" (baseline)" if name == baseline else ""}</h2>')
        body.append(f'<p class="meta">Tag <code>{_e(run.tag)}</code>; {len(run.scores)} turns, '
                    f"{len(run)} ranked items.</p>")
        rows = []
        header = ["qrels", "turns", *measures, f"judged@{depth}"]
        for q in qrels:
            own = means[(means["qrels"] == q.name) & (means["run"] == name)]
            shared = int(own[own["measure"] == NUM_Q]["value"].iloc[0])
            row = [(_e(q.name), ""), (str(shared), "")]
            for measure in measures:
                value = float(own[own["measure"] == measure]["value"].iloc[0])
                cell = _fmt(value)
                if baseline is not None and name != baseline and measure in tested:
                    versus = marks[(marks["qrels"] == q.name) & (marks["measure"] == measure)
                                   & (marks["run"] == name)].iloc[0]
                    css = ("win" if versus.mean_difference > 0 else "loss") if versus.significant else ""
                    cell += (f"<br><small><span>Δ {_fmt(versus.mean_difference, 4, sign=True)}</span> "
                             f"<span>{_p(versus.p_value_corrected)}</span></small>")
                    row.append((cell, css))
                else:
                    row.append((cell, ""))
            row.append((_fmt(judged[(q.name, name)]), ""))
            rows.append(row)
        body.append(_table(header, rows, set(range(1, len(header)))))
        for q in qrels:
            body.append(images[("per-turn", q.name, name)])
            body.append(images[("labels", q.name, name)])

    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>castregin report: {_e(', '.join(names))}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")
    return Report(page, figures)


def write_report(runs: Sequence[Run], qrels: Sequence[Qrels], out_dir: str | Path,
                 inputs: Sequence[str | Path] = (), **options) -> Path:
    """Make ``out_dir`` hold this report, ``index.html`` and ``figures/*.png``, and nothing else.

    The directory is replaced as a whole (:func:`castregin.formats.output.replace_directory`): an
    error leaves the old report as it was, and a directory holding files that are not a castregin
    report is refused, never deleted. ``options`` are those of :func:`build_report`; returns the
    path of index.html.
    """
    report = build_report(runs, qrels, **options)
    files = {name: data for name, data in sorted(report.figures.items())}
    files[INDEX] = report.html.encode("utf-8")
    directory = replace_directory(out_dir, files, kind="report", inputs=inputs,
                                  allowed=[INDEX, f"{FIGURES_DIR}/*.png"])
    return directory / INDEX


def check_report_directory(out_dir: str | Path, inputs: Sequence[str | Path] = ()) -> None:
    """Refuse, before any work, an ``out_dir`` that :func:`write_report` would refuse."""
    check_replaceable_directory(out_dir, kind="report", inputs=inputs, allowed=[INDEX, f"{FIGURES_DIR}/*.png"])
