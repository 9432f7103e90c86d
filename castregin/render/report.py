"""A static HTML report of a set of runs: one self-contained ``index.html`` plus the figures as PNGs.

The page embeds its figures as base64 PNG and its style inline, and has no script: it opens from
a file, offline, and prints. Apart from its reproducibility block (the command line, the date and
the inputs' SHA-256), the same inputs give the same bytes; the date is injectable, and honours
``SOURCE_DATE_EPOCH`` as reproducible builds do.

The page is ``templates/report.html.j2`` (Jinja2, autoescaped) filled with plain data: the numbers
are computed first (:func:`gather`, one evaluation of every run), then drawn (:func:`draw`), then
laid out (:func:`page_context`). ``--per-run-files`` adds ``runs/<run>.html``, one self-contained
page per run (``templates/report_run.html.j2``) for its participant.

Contents: the leaderboard sorted by the first measure (means as ``evaluate`` gives them with
bootstrap intervals, best bold, significance marks as in ``compare``) and its figure, the
significance matrix of every pair of runs per qrels and measure, on request the rank correlations
of every (qrels, measure) pair and the leave-one-run-out test, the label histogram of each qrels,
for each run (the classic TREC appendix) its scores, judged@k, its per-turn score beside the best,
median and worst of all runs (a plot and a table) and the labels of its top-k items with the
unjudged ones as their own category, and the reproducibility block.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import re
import shlex
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from ..data import Qrels, Run
from ..errors import InputError
from ..evaluation.analysis import leave_one_run_out, percentile_interval, ranking_correlations
from ..evaluation.compare import DEFAULT_PERMUTATIONS, DEFAULT_SEED, compare, per_turn_table
from ..evaluation.evaluate import ALL_TURNS, NUM_Q, evaluate, natural_key, run_names
from ..evaluation.measures import DEFAULT_MEASURES, parse_measures
from ..evaluation.ranking import DEFAULT_SCORE_PRECISION, ranked_items, score_bits
from ..formats.output import check_replaceable_directory, replace_directory
from . import plots
from .comparison import DAGGER, rounded, run_letters, same_measure, summary_cells

DEFAULT_DEPTH = 10
DEFAULT_PLOT_MEASURE = "nDCG@3"
DEFAULT_CI_SAMPLES = 1000
CONFIDENCE = 0.95
UNJUDGED = "unjudged"
FIGURES_DIR = "figures"
RUNS_DIR = "runs"
INDEX = "index.html"
#: What a report directory may hold (anything else: it is not a report, and is never replaced).
REPORT_FILES = [INDEX, f"{FIGURES_DIR}/*.png", f"{RUNS_DIR}/*.html"]
#: Run names longer than this are cut in the significance matrix's header (the full name is its tooltip).
HEADER_CHARACTERS = 24
_HASH_CHUNK = 1 << 20


# --- data ---------------------------------------------------------------------------------------------


def label_distribution(run: Run, qrels: Qrels, depth: int = DEFAULT_DEPTH,
                       score_precision: str = DEFAULT_SCORE_PRECISION) -> pd.DataFrame:
    """Counts of labels at each rank 1..``depth`` of ``run`` over the turns it shares with ``qrels``.

    Rows are ranks, columns the qrels' labels in increasing order then ``"unjudged"``; a turn
    with fewer than ``r`` items counts nowhere at rank ``r``. Items are in trec_eval's order, scores
    compared with ``score_precision`` (:mod:`castregin.evaluation.ranking`), as the measures rank them.
    """
    bits = score_bits(score_precision)
    labels = sorted({label for items in qrels.labels.values() for label in items.values()})
    counts = {rank: Counter() for rank in range(1, depth + 1)}
    for turn in run.scores:
        if turn not in qrels.labels:
            continue
        judged = qrels.labels[turn]
        for rank, item in enumerate(ranked_items(run.scores[turn], bits)[:depth], start=1):
            counts[rank][judged.get(item, UNJUDGED)] += 1
    columns = [*labels, UNJUDGED]
    frame = pd.DataFrame([[counts[rank][c] for c in columns] for rank in counts], columns=columns,
                         index=pd.Index(list(counts), name="rank"))
    return frame


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


def per_turn_versus_median(results: pd.DataFrame, qrels: str, measure: str, run: str) -> pd.DataFrame:
    """For each turn of ``run``: its value, the median, the best and the worst value of all runs having the turn."""
    return turn_statistics(results, qrels, measure).versus(run)


def slug(text: str) -> str:
    """A file-name-safe form of a name (``nDCG@3`` -> ``nDCG_3``)."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_.") or "x"


def run_file_names(names: Sequence[str]) -> dict[str, str]:
    """``runs/<slug>.html`` for each run; names whose slugs collide get ``-2``, ``-3``, ... in order."""
    taken: set[str] = set()
    files = {}
    for name in names:
        stem, number = slug(name), 1
        while (stem if number == 1 else f"{stem}-{number}").lower() in taken:
            number += 1
        stem = stem if number == 1 else f"{stem}-{number}"
        taken.add(stem.lower())  # case-insensitive file systems
        files[name] = f"{RUNS_DIR}/{stem}.html"
    return files


# --- reproducibility ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Provenance:
    """What made a report: castregin's version, the command line, the date, each input and its SHA-256."""

    version: str
    command: str
    date: str
    inputs: list[tuple[str, str]]


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes as stored (a compressed input: of its compressed bytes), read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def utc_date(epoch: float | None = None) -> str:
    """An ISO 8601 UTC date to the second: ``epoch``, else ``$SOURCE_DATE_EPOCH``, else now."""
    if epoch is None:
        configured = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
        epoch = int(configured) if configured.isdigit() else time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def castregin_version() -> str:
    """The installed castregin's version (as ``castregin --version`` says it)."""
    from importlib import metadata

    try:
        return metadata.version("castregin")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def provenance(inputs: Sequence[str | Path], command: str | None = None, date: str | None = None) -> Provenance:
    """The reproducibility block of ``inputs`` (paths as given; ``-`` is standard input, not hashed).

    ``command`` defaults to this process's command line, shell-quoted; ``date`` to :func:`utc_date`.
    """
    hashed = []
    for path in dict.fromkeys(str(p) for p in inputs):
        if path == "-":
            hashed.append((path, "standard input (not hashed)"))
            continue
        try:
            hashed.append((path, sha256_file(path)))
        except OSError as err:
            raise InputError(f"cannot read it to hash it ({err.strerror})", source=path) from None
    return Provenance(castregin_version(), command if command is not None else shlex.join(sys.argv),
                      date if date is not None else utc_date(), hashed)


def _default_inputs(runs: Sequence[Run], qrels: Sequence[Qrels]) -> list[str]:
    # Without the CLI's list of files, the files the runs and qrels were read from, where known.
    sources = [getattr(item, "source", None) for item in (*runs, *qrels)]
    return [s for s in sources if s and s != "-" and os.path.isfile(s)]


# --- the numbers --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportOptions:
    """What the report computes and holds; see :func:`build_report`."""

    measures: Sequence[str] = DEFAULT_MEASURES
    baseline: str | None = None
    rel_level: int = 2
    score_precision: str = DEFAULT_SCORE_PRECISION
    depth: int = DEFAULT_DEPTH
    test: str = "paired-t"
    correction: str = "holm"
    alpha: float = 0.05
    permutations: int = DEFAULT_PERMUTATIONS
    seed: int = DEFAULT_SEED
    plot_measure: str = DEFAULT_PLOT_MEASURE
    ci_samples: int = DEFAULT_CI_SAMPLES
    correlation: bool = False
    loro_depth: int | None = None
    per_run_files: bool = False
    progress: bool = False


@dataclass
class ReportData:
    """Everything the report shows, computed: evaluate's rows, the comparisons, judged@k, intervals."""

    runs: Sequence[Run]
    qrels: Sequence[Qrels]
    names: list[str]
    measures: list[str]
    tested: list[str]  # the measures with per-turn values, which the tests compare
    results: pd.DataFrame  # the measures shown, means and per-turn values
    plotted: pd.DataFrame  # the per-turn plot's measure
    plot_measure: str
    all_pairs: pd.DataFrame
    marks: pd.DataFrame
    judged: dict[tuple[str, str], float]
    intervals: dict[tuple[str, str, str], tuple[float, float]]  # (qrels, measure, run) -> (low, high)
    options: ReportOptions
    correlations: list[dict] | None = None
    loro: tuple[list, dict] | None = None
    means: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (qrels, run, measure) -> mean
    versus_baseline: dict[tuple[str, str, str], tuple] = field(default_factory=dict)  # (qrels, measure, run)
    per_turn: dict[str, TurnStatistics] = field(default_factory=dict)  # qrels -> the plotted measure per turn

    @property
    def primary(self) -> str:
        """The measure the leaderboard is sorted by: the first with per-turn values."""
        return self.tested[0]

    @property
    def baseline(self) -> str | None:
        """The run the leaderboard marks wins over, if any."""
        return self.options.baseline

    @property
    def depth(self) -> int:
        """k of judged@k and of the top-k labels."""
        return self.options.depth


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


def _evaluate(runs, qrels, options: ReportOptions):
    """One evaluation of every run: the measures shown, the plotted one and judged@k, split apart."""
    shown = parse_measures(options.measures, options.rel_level)
    tested = [m.name for m in shown if m.per_turn]  # summaries over turns (gm_map) have nothing to test
    if not tested:
        raise InputError("the report's per-turn plots need a measure with per-turn values (num_q and gm_map "
                         "have none)", argument="measures")
    plot = _plot_measure(options.plot_measure, shown, options.rel_level)
    judged = f"Judged@{options.depth}"
    names = [m.name for m in shown]
    rows = evaluate(runs, qrels, [*names, *(m for m in (plot.name, judged) if m not in names)],
                    rel_level=options.rel_level, per_turn=True, score_precision=options.score_precision)
    results = rows[rows["measure"].isin([NUM_Q, *names])].reset_index(drop=True)
    judged_rows = rows[(rows["measure"] == judged) & (rows["turn"] == ALL_TURNS)]
    judged_at = {(q, r): float(v) for q, r, v in judged_rows[["qrels", "run", "value"]].itertuples(index=False)}
    return names, tested, results, rows[rows["measure"] == plot.name].reset_index(drop=True), plot.name, judged_at


def bootstrap(results: pd.DataFrame, measures: Sequence[str], samples: int = DEFAULT_CI_SAMPLES,
              seed: int = DEFAULT_SEED) -> dict[tuple[str, str, str], tuple[float, float]]:
    """``(qrels, measure, run) -> (low, high)``: the 95 % percentile bootstrap interval of each mean.

    The turns averaged are resampled (:func:`castregin.evaluation.analysis.percentile_interval`), in
    byte order, with a generator seeded afresh for each mean.
    """
    table = per_turn_table(results)
    out = {}
    for (qrels, measure, run), values in table.items():
        if measure in measures:
            out[(qrels, measure, run)] = percentile_interval([values[t] for t in sorted(values)], samples=samples,
                                                             confidence=CONFIDENCE, seed=seed)
    return out


def gather(runs: Sequence[Run], qrels: Sequence[Qrels], options: ReportOptions | None = None) -> ReportData:
    """Evaluate (once), compare, bootstrap and analyse: the report's numbers (see :func:`build_report`)."""
    options = options or ReportOptions()
    measures, tested, results, plotted, plot_measure, judged = _evaluate(runs, qrels, options)
    settings = {"test": options.test, "correction": options.correction, "alpha": options.alpha,
                "permutations": options.permutations, "seed": options.seed, "progress": options.progress}
    all_pairs = compare(results, None, **settings)
    marks = compare(results, options.baseline, **settings) if options.baseline is not None else all_pairs
    intervals = bootstrap(results, tested, options.ci_samples, options.seed)
    data = ReportData(runs, qrels, run_names(runs), measures, tested, results, plotted, plot_measure, all_pairs,
                      marks, judged, intervals, options)
    _index(data)
    if len(runs) > 1 and options.correlation:
        settings_pairs = [(q, m) for q in qrels for m in tested]
        data.correlations = ranking_correlations(runs, settings_pairs, options.rel_level, options.score_precision)
    if len(runs) > 1 and options.loro_depth:
        data.loro = leave_one_run_out(runs, qrels[0], options.loro_depth, data.primary, options.rel_level,
                                      options.score_precision)
    return data


def _index(data: ReportData) -> None:
    # Looked up by key rather than filtered out of the frames again for each of 30 runs.
    means = data.results[data.results["turn"] == ALL_TURNS]
    data.means = {(q, r, m): float(v) for q, r, m, v in means[["qrels", "run", "measure", "value"]].itertuples(
        index=False)}
    if data.baseline is not None:
        data.versus_baseline = {(r.qrels, r.measure, r.run): (r.mean_difference, r.p_value_corrected, r.significant)
                                for r in data.marks.itertuples(index=False)}
    data.per_turn = {q.name: turn_statistics(data.plotted, q.name, data.plot_measure) for q in data.qrels}


# --- the figures ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A PNG of the report: its file under ``figures/``, its bytes, its alternative text."""

    name: str
    png: bytes
    alt: str

    @property
    def data(self) -> str:
        """The PNG in base64, for a ``data:`` URL."""
        return base64.b64encode(self.png).decode("ascii")


def _qrels_figure(position: int, q: Qrels) -> Figure:
    counts = Counter(label for items in q.labels.values() for label in items.values())
    png = plots.label_histogram_plot(dict(sorted(counts.items())), f"labels of {q.name}")
    return Figure(f"{FIGURES_DIR}/qrels-{position:02d}-{slug(q.name)}-labels.png", png, f"label histogram of {q.name}")


def _leaderboard_figure(data: ReportData, position: int, q: Qrels, order: Sequence[str]) -> Figure:
    primary = data.primary
    bounds = [data.intervals.get((q.name, primary, name), (np.nan, np.nan)) for name in order]
    png = plots.leaderboard_plot(order, [data.means[(q.name, name, primary)] for name in order], [b[0] for b in bounds],
                                 [b[1] for b in bounds],
                                 f"{primary} on {q.name}\nmean and {CONFIDENCE:.0%} bootstrap interval", primary)
    return Figure(f"{FIGURES_DIR}/leaderboard-{position:02d}-{slug(q.name)}-{slug(primary)}.png", png,
                  f"{primary} of every run on {q.name} with its bootstrap interval")


def _per_turn_figures(data: ReportData, q: Qrels, stems: dict[str, str]) -> dict[tuple, Figure]:
    measure, stats = data.plot_measure, data.per_turn[q.name]
    median = [stats.median[t] for t in stats.turns]
    canvas = plots.PerTurnFigure(stats.turns, np.subtract([stats.best[t] for t in stats.turns], median),
                                 np.subtract([stats.worst[t] for t in stats.turns], median), f"{measure} − median")
    figures = {}
    for name in data.names:
        table = stats.versus(name)
        title = f"{name}: {measure} per turn minus the median of {len(data.runs)} runs ({q.name})"
        png = canvas.png(list(table["turn"]), list(table["value"] - table["median"]), title)
        figures[("per-turn", q.name, name)] = Figure(f"{FIGURES_DIR}/{stems[name]}-per-turn-{slug(measure)}.png",
                                                     png, f"{measure} of {name} per turn minus the median")
    return figures


def _labels_figures(data: ReportData, q: Qrels, stems: dict[str, str]) -> dict[tuple, Figure]:
    depth = data.depth
    labels = [*sorted({label for items in q.labels.values() for label in items.values()}), UNJUDGED]
    canvas = plots.LabelsFigure(labels, list(range(1, depth + 1)))
    figures = {}
    for run, name in zip(data.runs, data.names):
        distribution = label_distribution(run, q, depth, data.options.score_precision)
        shared = sum(1 for turn in run.scores if turn in q.labels)
        shares = [[v / shared if shared else 0.0 for v in distribution[c]] for c in distribution.columns]
        png = canvas.png(shares, f"{name}\nlabels of the top {depth} ({q.name}, {shared} turns)")
        figures[("labels", q.name, name)] = Figure(f"{FIGURES_DIR}/{stems[name]}-top{depth}-labels.png", png,
                                                   f"labels of the top {depth} items of {name}")
    return figures


def draw(data: ReportData, progress: bool = False) -> dict[tuple, Figure]:
    """Every figure: ``("qrels", q)``, ``("leaderboard", q)``, and ``(kind, q, run)`` for per-turn and labels.

    The per-run figures of one qrels share one matplotlib figure whose axes are drawn once.
    """
    figures = {}
    orders = leaderboard_orders(data)
    jobs = [(kind, i, q) for i, q in enumerate(data.qrels, 1) for kind in ("qrels", "leaderboard", "per-turn",
                                                                            "labels")]
    for kind, position, q in tqdm(jobs, desc="drawing", unit="group", file=sys.stderr, disable=not progress,
                                  leave=False):
        stems = {name: f"run-{i:02d}-{slug(name)}-{slug(q.name)}" for i, name in enumerate(data.names, 1)}
        if kind == "qrels":
            figures[("qrels", q.name)] = _qrels_figure(position, q)
        elif kind == "leaderboard":
            figures[("leaderboard", q.name)] = _leaderboard_figure(data, position, q, orders[q.name])
        elif kind == "per-turn":
            figures.update(_per_turn_figures(data, q, stems))
        else:
            figures.update(_labels_figures(data, q, stems))
    return figures


# --- the page ---------------------------------------------------------------------------------------------


def _cell(text, css: str = "", *, strong: bool = False, mark: str = "", note: str = "", small=(),
          title: str = "") -> dict:
    """A table cell: its text, CSS class, bold, a superscript mark, a note, small lines under it, a tooltip."""
    return {"text": text, "css": css, "strong": strong, "mark": mark, "note": note, "small": list(small),
            "title": title}


def _p(value: float) -> str:
    return "p<0.001" if value < 0.001 else f"p={value:.3f}"


def leaderboard_orders(data: ReportData) -> dict[str, list[str]]:
    """Per qrels, the runs by the mean of the first measure with per-turn values, highest first."""
    _, keys, _ = summary_cells(data.results, data.marks, data.baseline, sort=data.primary)
    orders: dict[str, list[str]] = {}
    for qrels, run in keys:
        orders.setdefault(qrels, []).append(run)
    return orders


def _leaderboards(data: ReportData, figures: dict) -> list[dict]:
    measures, keys, cells = summary_cells(data.results, data.marks, data.baseline, sort=data.primary)
    letters = run_letters(data.names)
    boards = []
    for qrels_name in dict.fromkeys(q for q, _ in keys):
        rows = []
        for run in (r for q, r in keys if q == qrels_name):
            label = run if data.baseline is not None else f"{run} ({letters[run]})"
            row = [_cell(label, note="(baseline)" if run == data.baseline else "")]
            for measure in measures:
                text, is_best, mark = cells[(qrels_name, run, measure)]
                interval = data.intervals.get((qrels_name, measure, run))
                small = [f"[{rounded(interval[0])}, {rounded(interval[1])}]"] if interval else []
                row.append(_cell(text, strong=is_best, mark=mark, small=small))
            rows.append([*row, _cell(rounded(data.judged[(qrels_name, run)]))])
        header = ["run", *measures, f"judged@{data.depth}"]
        boards.append({"qrels": qrels_name, "header": header, "rows": rows, "numeric": set(range(1, len(header))),
                       "figure": figures[("leaderboard", qrels_name)]})
    return boards


def _short(name: str) -> str:
    return name if len(name) <= HEADER_CHARACTERS else name[:HEADER_CHARACTERS - 1] + "…"


def _matrix(data: ReportData, qrels: str, measure: str, order: Sequence[str]) -> dict:
    pairs = data.all_pairs
    found = {}
    for r in pairs[(pairs["qrels"] == qrels) & (pairs["measure"] == measure)].itertuples(index=False):
        found[(r.run, r.baseline)] = (r.mean_difference, r.p_value_corrected, r.significant)
        found[(r.baseline, r.run)] = (-r.mean_difference, r.p_value_corrected, r.significant)
    rows = []
    for row_run in order:
        row = [_cell(row_run, "name")]
        for column_run in order:
            if row_run == column_run:
                row.append(_cell("—", "diag"))
                continue
            difference, p, significant = found[(row_run, column_run)]
            css = ("win" if difference > 0 else "loss" if difference < 0 else "") if significant else ""
            row.append(_cell(rounded(difference, 3, sign=True), css, small=[_p(p)],
                             title=f"{row_run} − {column_run}: {rounded(difference, 4, sign=True)}, "
                                   f"corrected p = {p:.4g}"))
        rows.append(row)
    header = [{"text": "row − column", "title": "", "css": ""}]
    header += [{"text": _short(name), "title": name, "css": "rot"} for name in order]
    return {"qrels": qrels, "measure": measure, "header": header, "rows": rows,
            "numeric": set(range(1, len(order) + 1))}


def _summary_rows(data: ReportData, name: str) -> list[list[dict]]:
    rows = []
    for q in data.qrels:
        row = [_cell(q.name), _cell(rounded(data.means[(q.name, name, NUM_Q)], integer=True))]
        for measure in data.measures:
            cell = _cell(rounded(data.means[(q.name, name, measure)]))
            versus = data.versus_baseline.get((q.name, measure, name))
            if versus is not None:
                difference, p, significant = versus
                cell["css"] = ("win" if difference > 0 else "loss") if significant else ""
                cell["small"] = [f"Δ {rounded(difference, sign=True)}", _p(p)]
            row.append(cell)
        rows.append([*row, _cell(rounded(data.judged[(q.name, name)]))])
    return rows


def _turn_tables(data: ReportData, name: str) -> list[dict]:
    tables = []
    for q in data.qrels:
        table = data.per_turn[q.name].versus(name)
        rows = [[_cell(turn), _cell(rounded(value), strong=value == best), _cell(rounded(best)),
                 _cell(rounded(median)), _cell(rounded(worst))]
                for turn, value, median, best, worst in table.itertuples(index=False)]
        tables.append({"qrels": q.name, "header": ["turn", "this run", "best", "median", "worst"], "rows": rows,
                       "numeric": {1, 2, 3, 4}})
    return tables


def _run_section(data: ReportData, position: int, run: Run, name: str, figures: dict) -> dict:
    header = ["qrels", "turns", *data.measures, f"judged@{data.depth}"]
    images = [figures[(kind, q.name, name)] for q in data.qrels for kind in ("per-turn", "labels")]
    return {"name": name, "anchor": f"run-{position}", "tag": run.tag, "turns": len(run.scores), "ranked": len(run),
            "header": header, "rows": _summary_rows(data, name), "numeric": set(range(1, len(header))),
            "figures": images, "is_baseline": name == data.baseline, "plot_measure": data.plot_measure,
            "turn_tables": _turn_tables(data, name), "runs": len(data.runs)}


def _correlation_table(data: ReportData) -> dict | None:
    if data.correlations is None:
        return None
    header = ["qrels A", "measure A", "qrels B", "measure B", "Kendall's τ", "τ_AP", "swapped pairs"]
    rows = [[_cell(r["qrels_a"]), _cell(r["measure_a"]), _cell(r["qrels_b"]), _cell(r["measure_b"]),
             _cell(rounded(r["kendall_tau"], 3)), _cell(rounded(r["tau_ap"], 3)), _cell(str(r["swapped_pairs"]))]
            for r in data.correlations]
    return {"header": header, "rows": rows, "numeric": {4, 5, 6}}


def _loro_table(data: ReportData) -> dict | None:
    if data.loro is None:
        return None
    loro, summary = data.loro
    k = summary["depth"]
    header = ["run", "unique items", summary["measure"], "without its own", "change", "rank",
              "rank without", f"judged@{k} without"]
    rows = [[_cell(r.run), _cell(str(r.unique)), _cell(rounded(r.score)), _cell(rounded(r.score_without)),
             _cell(rounded(r.change, sign=True)), _cell(str(r.rank)), _cell(str(r.rank_without)),
             _cell(rounded(r.judged_without))] for r in loro]
    return {"header": header, "rows": rows, "numeric": set(range(1, 8)), "depth": k, "measure": summary["measure"],
            "qrels": data.qrels[0].name, "tau": rounded(summary["kendall_tau"], 3),
            "max_drop": summary["max_rank_drop"]}


def _settings_text(options: ReportOptions) -> str:
    text = (f"{options.test} test, {options.correction} correction over the comparisons of each measure, "
            f"alpha {options.alpha}")
    if options.test == "randomization":
        text += f", {options.permutations} permutations, seed {options.seed}"
    compared = "doubles" if score_bits(options.score_precision) == 64 else "32-bit floats (pytrec_eval's ranking)"
    return (text + f"; items ranked on scores compared as {compared}"
            f"; binary measures count labels ≥ {options.rel_level} as relevant; intervals: "
            f"{CONFIDENCE:.0%} percentile bootstrap over the turns, {options.ci_samples} samples, seed {options.seed}")


def _provenance_context(record: Provenance) -> dict:
    return {"version": record.version, "command": record.command, "date": record.date,
            "inputs": [{"path": path, "sha256": digest} for path, digest in record.inputs]}


def page_context(data: ReportData, figures: dict, record: Provenance) -> dict:
    """The template's data: plain dicts, lists and strings (the runs' own pages use ``runs``' entries)."""
    legend = (f"{DAGGER}: significantly better than {data.baseline}" if data.baseline is not None
              else "superscript letters: significantly better than the run with that letter")
    orders = leaderboard_orders(data)
    matrices = ([[_matrix(data, q.name, m, orders[q.name]) for m in data.tested] for q in data.qrels]
                if len(data.runs) > 1 else [])
    files = run_file_names(data.names) if data.options.per_run_files else {}
    runs = [{**_run_section(data, i, run, name, figures), "file": files.get(name)}
            for i, (run, name) in enumerate(zip(data.runs, data.names), 1)]
    return {
        "css": _template_text("report.css"), "run_names": data.names, "measures": data.measures,
        "settings": _settings_text(data.options), "legend": legend, "depth": data.depth, "primary": data.primary,
        "test": data.options.test, "correction": data.options.correction, "alpha": data.options.alpha,
        "leaderboards": _leaderboards(data, figures), "matrices": matrices, "runs": runs,
        "qrels": [{"name": q.name, "turns": len(q.labels), "judgments": len(q), "figure": figures[("qrels", q.name)]}
                  for q in data.qrels],
        "correlation": _correlation_table(data), "correlation_asked": data.options.correlation,
        "loro": _loro_table(data), "loro_asked": bool(data.options.loro_depth),
        "provenance": _provenance_context(record),
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


@dataclass
class Report:
    """The report in memory: the pages (``index.html``, ``runs/*.html``) and figures, by file name."""

    html: str
    figures: dict[str, bytes] = field(default_factory=dict)
    pages: dict[str, str] = field(default_factory=dict)


def build_report(runs: Sequence[Run], qrels: Sequence[Qrels], measures: Sequence[str] = DEFAULT_MEASURES,
                 baseline: str | None = None, *, inputs: Sequence[str | Path] | None = None,
                 command: str | None = None, date: str | None = None, **options) -> Report:
    """Evaluate, compare and draw: the report pages and figures, in memory.

    ``baseline`` is a run name as in :func:`castregin.evaluation.evaluate.run_names`. ``options``
    are :class:`ReportOptions`' fields: ``rel_level``, ``score_precision`` (that of
    :func:`castregin.evaluation.evaluate.evaluate`), ``depth`` (judged@k and the top-k labels),
    ``test``, ``correction``, ``alpha``, ``permutations``, ``seed`` (the tests and the bootstrap),
    ``plot_measure`` (the per-turn plots, nDCG@3 by default), ``ci_samples``, ``correlation`` (the
    rank correlation table), ``loro_depth`` (the leave-one-run-out table, on the first qrels with
    the first measure), ``per_run_files`` (``runs/<run>.html``) and ``progress``. The significance
    matrix always compares every pair of runs (its own correction family per qrels and measure);
    the leaderboard marks wins over ``baseline`` when given, else over each other run.

    The reproducibility block lists ``inputs`` (default: the files the runs and qrels were read
    from) with their SHA-256, ``command`` (default: ``sys.argv`` shell-quoted) and ``date``
    (default: :func:`utc_date`).
    """
    settings = ReportOptions(measures=tuple(measures), baseline=baseline, **options)
    record = provenance(_default_inputs(runs, qrels) if inputs is None else inputs, command, date)
    data = gather(runs, qrels, settings)
    figures = draw(data, settings.progress)
    context = page_context(data, figures, record)
    environment = _environment()
    pages = {}
    if settings.per_run_files:
        template = environment.get_template("report_run.html.j2")
        for run in context["runs"]:
            pages[run["file"]] = template.render({**context, "run": {**run, "file": None}})
    html = environment.get_template("report.html.j2").render(context)
    return Report(html, {figure.name: figure.png for figure in figures.values()}, pages)


def write_report(runs: Sequence[Run], qrels: Sequence[Qrels], out_dir: str | Path,
                 inputs: Sequence[str | Path] | None = None, **options) -> Path:
    """Make ``out_dir`` hold this report, ``index.html``, ``figures/*.png`` (and ``runs/*.html``), nothing else.

    The directory is replaced as a whole (:func:`castregin.formats.output.replace_directory`): an
    error leaves the old report as it was, and a directory holding files that are not a castregin
    report is refused, never deleted. ``options`` are those of :func:`build_report`; returns the
    path of index.html.
    """
    report = build_report(runs, qrels, inputs=inputs, **options)
    files = {name: data for name, data in sorted(report.figures.items())}
    files.update({name: page.encode("utf-8") for name, page in sorted(report.pages.items())})
    files[INDEX] = report.html.encode("utf-8")
    directory = replace_directory(out_dir, files, kind="report", inputs=inputs or [], allowed=REPORT_FILES)
    return directory / INDEX


def check_report_directory(out_dir: str | Path, inputs: Sequence[str | Path] = ()) -> None:
    """Refuse, before any work, an ``out_dir`` that :func:`write_report` would refuse."""
    check_replaceable_directory(out_dir, kind="report", inputs=inputs, allowed=REPORT_FILES)
