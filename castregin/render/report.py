"""A static HTML report of a set of runs: one self-contained ``index.html`` plus the figures as PNGs.

The page embeds its figures as base64 PNG and its style inline, and has no script: it opens from
a file, offline, and prints. It holds no date or path, so the same inputs give the same bytes.

The page is ``templates/report.html.j2`` (Jinja2, autoescaped) filled with plain data: the numbers
are computed first (:func:`gather`), then drawn (:func:`draw`), then laid out (:func:`page_context`).

Contents: the leaderboard (means as ``evaluate`` gives them, best bold, significance marks as in
``compare``), the significance matrix of every pair of runs per qrels and measure, the label
histogram of each qrels, and for each run its scores, judged@k, the classic TREC per-turn plot
(score minus the median of all runs, with the best run's score marked) and the labels of its
top-k items with the unjudged ones as their own category.
"""

from __future__ import annotations

import base64
import functools
import re
import sys
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
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
from .numbers import fixed

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


# --- the numbers --------------------------------------------------------------------------------------


@dataclass
class ReportData:
    """Everything the report shows, computed: evaluate's rows, the comparisons, judged@k."""

    runs: Sequence[Run]
    qrels: Sequence[Qrels]
    names: list[str]
    measures: list[str]
    tested: list[str]  # the measures with per-turn values, which the tests compare
    results: pd.DataFrame
    all_pairs: pd.DataFrame
    marks: pd.DataFrame
    judged: dict[tuple[str, str], float]
    baseline: str | None
    depth: int
    settings: dict

    @property
    def primary(self) -> str:
        """The measure of the per-turn plots."""
        return self.tested[0]


def _judged_at(runs, qrels, depth: int, rel_level: int) -> dict[tuple[str, str], float]:
    # judged@k is evaluate's Judged@k (ir_measures' definition), the one implementation of it.
    measure = f"Judged@{depth}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)  # the same runs and qrels: said already
        rows = evaluate(runs, qrels, [measure], rel_level=rel_level)
    rows = rows[rows["measure"] == measure]
    return {(q, r): float(v) for q, r, v in rows[["qrels", "run", "value"]].itertuples(index=False)}


def gather(runs: Sequence[Run], qrels: Sequence[Qrels], measures: Sequence[str] = DEFAULT_MEASURES,
           baseline: str | None = None, rel_level: int = 2, depth: int = DEFAULT_DEPTH, test: str = "paired-t",
           correction: str = "holm", alpha: float = 0.05, permutations: int = DEFAULT_PERMUTATIONS,
           seed: int = DEFAULT_SEED, progress: bool = False) -> ReportData:
    """Evaluate and compare: the report's numbers (see :func:`build_report` for the arguments)."""
    parsed = parse_measures(measures, rel_level)
    tested = [m.name for m in parsed if m.per_turn]  # summaries over turns (gm_map) have nothing to test
    if not tested:
        raise InputError("the report's per-turn plots need a measure with per-turn values (num_q and gm_map "
                         "have none)", argument="measures")
    results = evaluate(runs, qrels, [m.name for m in parsed], rel_level=rel_level, per_turn=True)
    options = {"test": test, "correction": correction, "alpha": alpha, "permutations": permutations,
               "seed": seed, "progress": progress}
    all_pairs = compare(results, None, **options)
    marks = compare(results, baseline, **options) if baseline is not None else all_pairs
    settings = {"test": test, "correction": correction, "alpha": alpha, "permutations": permutations,
                "seed": seed, "rel_level": rel_level}
    return ReportData(runs, qrels, run_names(runs), [m.name for m in parsed], tested, results, all_pairs, marks,
                      _judged_at(runs, qrels, depth, rel_level), baseline, depth, settings)


# --- the figures ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A PNG of the report: its file under ``figures/``, its bytes, its alternative text."""

    name: str
    png: bytes
    alt: str

    @property
    def data(self) -> str:
        return base64.b64encode(self.png).decode("ascii")


def _qrels_figure(position: int, q: Qrels) -> Figure:
    counts = Counter(label for items in q.labels.values() for label in items.values())
    png = plots.label_histogram_plot(dict(sorted(counts.items())), f"labels of {q.name}")
    return Figure(f"{FIGURES_DIR}/qrels-{position:02d}-{slug(q.name)}-labels.png", png, f"label histogram of {q.name}")


def _per_turn_figure(data: ReportData, stem: str, q: Qrels, name: str) -> Figure:
    primary = data.primary
    table = per_turn_versus_median(data.results, q.name, primary, name)
    png = plots.per_turn_plot(list(table["turn"]), list(table["value"] - table["median"]),
                              list(table["best"] - table["median"]),
                              f"{name}: {primary} per turn minus the median of {len(data.runs)} runs ({q.name})",
                              f"{primary} − median")
    return Figure(f"{FIGURES_DIR}/{stem}-per-turn-{slug(primary)}.png", png,
                  f"{primary} of {name} per turn minus the median")


def _labels_figure(data: ReportData, stem: str, q: Qrels, run: Run, name: str) -> Figure:
    depth = data.depth
    distribution = label_distribution(run, q, depth)
    shared = sum(1 for turn in run.scores if turn in q.labels)
    shares = {str(c): [v / shared if shared else 0.0 for v in distribution[c]] for c in distribution.columns}
    png = plots.label_distribution_plot(shares, list(distribution.index),
                                        f"{name}\nlabels of the top {depth} ({q.name}, {shared} turns)")
    return Figure(f"{FIGURES_DIR}/{stem}-top{depth}-labels.png", png, f"labels of the top {depth} items of {name}")


def draw(data: ReportData, progress: bool = False) -> dict[tuple, Figure]:
    """Every figure: ``("qrels", qrels name)`` and ``(kind, qrels name, run name)`` for per-turn and labels."""
    jobs = [("qrels", i, q, None, None) for i, q in enumerate(data.qrels, 1)] + [
        (kind, i, q, run, name) for i, (run, name) in enumerate(zip(data.runs, data.names), 1) for q in data.qrels
        for kind in ("per-turn", "labels")]
    figures = {}
    for kind, position, q, run, name in tqdm(jobs, desc="drawing", unit="figure", file=sys.stderr,
                                             disable=not progress, leave=False):
        if kind == "qrels":
            figures[("qrels", q.name)] = _qrels_figure(position, q)
            continue
        stem = f"run-{position:02d}-{slug(name)}-{slug(q.name)}"
        figures[(kind, q.name, name)] = (_per_turn_figure(data, stem, q, name) if kind == "per-turn"
                                         else _labels_figure(data, stem, q, run, name))
    return figures


# --- the page ---------------------------------------------------------------------------------------------


def _cell(text, css: str = "", *, strong: bool = False, mark: str = "", note: str = "", small=()) -> dict:
    """A table cell: its text, its CSS class, bold, a superscript mark, a note, small lines under it."""
    return {"text": text, "css": css, "strong": strong, "mark": mark, "note": note, "small": list(small)}


def _p(value: float) -> str:
    return "p<0.001" if value < 0.001 else f"p={value:.3f}"


def _leaderboards(data: ReportData) -> list[dict]:
    measures, keys, cells = summary_cells(data.results, data.marks, data.baseline)
    letters = run_letters(list(dict.fromkeys(data.results["run"])))
    boards = []
    for qrels_name in dict.fromkeys(q for q, _ in keys):
        rows = []
        for qrels, run in keys:
            if qrels != qrels_name:
                continue
            label = run if data.baseline is not None else f"{run} ({letters[run]})"
            row = [_cell(label, note="(baseline)" if run == data.baseline else "")]
            for measure in measures:
                text, is_best, mark = cells[(qrels, run, measure)]
                row.append(_cell(text, strong=is_best, mark=mark))
            rows.append([*row, _cell(fixed(data.judged[(qrels, run)]))])
        header = ["run", *measures, f"judged@{data.depth}"]
        boards.append({"qrels": qrels_name, "header": header, "rows": rows, "numeric": set(range(1, len(header)))})
    return boards


def _matrix(data: ReportData, qrels: str, measure: str) -> dict:
    pairs = data.all_pairs
    found = {}
    for r in pairs[(pairs["qrels"] == qrels) & (pairs["measure"] == measure)].itertuples(index=False):
        found[(r.run, r.baseline)] = (r.mean_difference, r.p_value_corrected, r.significant)
        found[(r.baseline, r.run)] = (-r.mean_difference, r.p_value_corrected, r.significant)
    rows = []
    for row_run in data.names:
        row = [_cell(row_run)]
        for column_run in data.names:
            if row_run == column_run:
                row.append(_cell("—", "diag"))
                continue
            difference, p, significant = found[(row_run, column_run)]
            css = ("win" if difference > 0 else "loss" if difference < 0 else "") if significant else ""
            row.append(_cell(fixed(difference, 3, sign=True), css, small=[_p(p)]))
        rows.append(row)
    return {"qrels": qrels, "measure": measure, "header": ["row − column", *data.names], "rows": rows,
            "numeric": set(range(1, len(data.names) + 1))}


def _run_section(data: ReportData, position: int, run: Run, name: str, figures: dict) -> dict:
    means = data.results[(data.results["turn"] == ALL_TURNS) & (data.results["run"] == name)]
    header = ["qrels", "turns", *data.measures, f"judged@{data.depth}"]
    rows = []
    for q in data.qrels:
        own = dict(zip(*[means[means["qrels"] == q.name][c] for c in ("measure", "value")]))
        row = [_cell(q.name), _cell(fixed(own[NUM_Q], integer=True))]
        for measure in data.measures:
            cell = _cell(fixed(own[measure]))
            if data.baseline is not None and name != data.baseline and measure in data.tested:
                marks = data.marks
                versus = marks[(marks["qrels"] == q.name) & (marks["measure"] == measure)
                               & (marks["run"] == name)].iloc[0]
                cell["css"] = ("win" if versus.mean_difference > 0 else "loss") if versus.significant else ""
                cell["small"] = [f"Δ {fixed(versus.mean_difference, sign=True)}", _p(versus.p_value_corrected)]
            row.append(cell)
        rows.append([*row, _cell(fixed(data.judged[(q.name, name)]))])
    images = [figures[(kind, q.name, name)] for q in data.qrels for kind in ("per-turn", "labels")]
    return {"name": name, "tag": run.tag, "turns": len(run.scores), "ranked": len(run), "header": header,
            "rows": rows, "numeric": set(range(1, len(header))), "figures": images,
            "is_baseline": name == data.baseline}


def page_context(data: ReportData, figures: dict) -> dict:
    """The template's data: plain dicts, lists and strings."""
    s = data.settings
    settings = (f"{s['test']} test, {s['correction']} correction over the comparisons of each measure, "
                f"alpha {s['alpha']}" + (f", {s['permutations']} permutations, seed {s['seed']}"
                                         if s["test"] == "randomization" else "")
                + f"; binary measures count labels ≥ {s['rel_level']} as relevant")
    legend = (f"{DAGGER}: significantly better than {data.baseline}" if data.baseline is not None
              else "superscript letters: significantly better than the run with that letter")
    matrices = ([[_matrix(data, q.name, m) for m in data.tested] for q in data.qrels] if len(data.runs) > 1 else [])
    return {
        "css": _template_text("report.css"), "run_names": data.names, "measures": data.measures,
        "settings": settings, "legend": legend, "depth": data.depth, "test": s["test"],
        "correction": s["correction"], "alpha": s["alpha"], "leaderboards": _leaderboards(data),
        "matrices": matrices,
        "qrels": [{"name": q.name, "turns": len(q.labels), "judgments": len(q), "figure": figures[("qrels", q.name)]}
                  for q in data.qrels],
        "runs": [_run_section(data, i, run, name, figures) for i, (run, name) in enumerate(zip(data.runs, data.names), 1)],
    }


@functools.cache
def _template_text(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


@functools.cache
def _environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
                              keep_trailing_newline=True, undefined=jinja2.StrictUndefined)


def build_report(runs: Sequence[Run], qrels: Sequence[Qrels], measures: Sequence[str] = DEFAULT_MEASURES,
                 baseline: str | None = None, rel_level: int = 2, depth: int = DEFAULT_DEPTH,
                 test: str = "paired-t", correction: str = "holm", alpha: float = 0.05,
                 permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED,
                 progress: bool = False) -> Report:
    """Evaluate, compare and draw: the report page and its figures, in memory.

    ``baseline`` is a run name as in :func:`castregin.evaluation.evaluate.run_names`; the per-turn
    plots use the first measure with per-turn values. The significance matrix always compares every
    pair of runs (its own correction family per qrels and measure); the leaderboard marks wins over
    ``baseline`` when given, else over each other run.
    """
    data = gather(runs, qrels, measures, baseline, rel_level, depth, test, correction, alpha, permutations, seed,
                  progress)
    figures = draw(data, progress)
    page = _environment().get_template("report.html.j2").render(page_context(data, figures))
    return Report(page, {figure.name: figure.png for figure in figures.values()})


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
