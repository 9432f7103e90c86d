"""A static HTML report of a set of runs: one self-contained ``index.html`` plus the figures as PNGs.

The page embeds its figures as base64 PNG and its style inline, and has no script: it opens from
a file, offline, and prints. Apart from its reproducibility block (the command line, the date and
the inputs' SHA-256: :mod:`castregin.formats.provenance`), the same inputs give the same bytes.

The numbers come computed (:class:`castregin.evaluation.report_data.ReportData`); this module draws
them (:func:`draw`), lays them out (:func:`page_context`) and fills ``templates/report.html.j2``
(Jinja2, autoescaped) with them (:func:`build_report`). ``per_run_files`` adds ``runs/<run>.html``,
one self-contained page per run (``templates/report_run.html.j2``) for its participant.

Contents: the leaderboard sorted by the first measure (means as ``evaluate`` gives them with
bootstrap intervals, best bold, significance marks as in ``compare``) and its figure, the
significance matrix of every pair of runs per qrels and measure, on request the rank correlations
of every (qrels, measure) pair and the leave-one-run-out test, with two qrels or more how far every
two of them agree on the ranking of the runs (statistics, the runs that move, a scatter plot), the
label histogram of each qrels,
for each run (the classic TREC appendix) its scores, judged@k, its per-turn score beside the best,
median and worst of all runs (a plot and a table) and the labels of its top-k items with the
unjudged ones as their own category, and the reproducibility block.
"""

from __future__ import annotations

import base64
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from ..data import Qrels, Run
from ..evaluation.compare import FAMILY_TESTS
from ..evaluation.evaluate import NUM_Q
from ..evaluation.ranking import score_bits
from ..evaluation.report_data import CONFIDENCE, ReportData, ReportSettings
from ..formats.provenance import Provenance
from . import plots
from .analysis import ranking_agreement_plot
from .comparison import DAGGER, correction_words, rounded, run_letters, summary_cells
from .html import environment as html_environment

FIGURES_DIR = "figures"
RUNS_DIR = "runs"
INDEX = "index.html"
#: What a report directory may hold (anything else: it is not a report, and is never replaced).
REPORT_FILES = [INDEX, f"{FIGURES_DIR}/*.png", f"{RUNS_DIR}/*.html"]
#: Run names longer than this are cut in the significance matrix's header (the full name is its tooltip).
HEADER_CHARACTERS = 24


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


def _qrels_figure(data: ReportData, position: int, q: Qrels) -> Figure:
    png = plots.label_histogram_plot(data.label_counts[q.name], f"labels of {q.name}")
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
    tops = {name: data.top_labels[(q.name, name)] for name in data.names}
    # Every run's figure has the same labels, the qrels': the axes and the legend are drawn once.
    if not tops:
        return {}
    canvas = plots.LabelsFigure(tops[data.names[0]].labels, list(range(1, depth + 1)))
    figures = {}
    for name, top in tops.items():
        png = canvas.png(top.shares, f"{name}\nlabels of the top {depth} ({q.name}, {top.turns} turns)")
        figures[("labels", q.name, name)] = Figure(f"{FIGURES_DIR}/{stems[name]}-top{depth}-labels.png", png,
                                                   f"labels of the top {depth} items of {name}")
    return figures


def _agreement_figures(data: ReportData) -> dict[tuple, Figure]:
    figures = {}
    for position, agreement in enumerate(data.agreements, 1):
        name = (f"{FIGURES_DIR}/agreement-{position:02d}-{slug(agreement.qrels_a)}-{slug(agreement.qrels_b)}-"
                f"{slug(agreement.measure)}.png")
        figures[("agreement", agreement.qrels_a, agreement.qrels_b)] = Figure(
            name, ranking_agreement_plot(agreement),
            f"{agreement.measure} of every run on {agreement.qrels_a} against {agreement.qrels_b}")
    return figures


def draw(data: ReportData, progress: bool = False) -> dict[tuple, Figure]:
    """Every figure: ``("qrels", q)``, ``("leaderboard", q)``, ``(kind, q, run)`` for per-turn and labels,
    and ``("agreement", qrels A, qrels B)`` for every two qrels' ranking agreement.

    The per-run figures of one qrels share one matplotlib figure whose axes are drawn once.
    """
    figures = {}
    orders = leaderboard_orders(data)
    jobs = [(kind, i, q) for i, q in enumerate(data.qrels, 1) for kind in ("qrels", "leaderboard", "per-turn",
                                                                            "labels")]
    for kind, position, q in tqdm(jobs, desc="drawing", unit="group", file=sys.stderr, disable=not progress,
                                  leave=False):
        stems = {name: f"run-{i:02d}-{slug(name)}-{slug(q.name)}" for i, name in enumerate(data.names, 1)}
        if kind in ("qrels", "labels") and data.given_scores:
            continue  # scores computed elsewhere: no labels to count
        if kind == "qrels":
            figures[("qrels", q.name)] = _qrels_figure(data, position, q)
        elif kind == "leaderboard":
            figures[("leaderboard", q.name)] = _leaderboard_figure(data, position, q, orders[q.name])
        elif kind == "per-turn":
            figures.update(_per_turn_figures(data, q, stems))
        else:
            figures.update(_labels_figures(data, q, stems))
    figures.update(_agreement_figures(data))
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
    orders: dict[str, list[str]] = {}
    for qrels, run in data.leaderboard.rows:
        orders.setdefault(qrels, []).append(run)
    return orders


def _leaderboards(data: ReportData, figures: dict) -> list[dict]:
    board = data.leaderboard
    measures, keys, cells = board.measures, board.rows, summary_cells(board, data.baseline)
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
            rows.append([*row, *_judged_cells(data, qrels_name, run)])
        header = ["run", *measures, *_judged_header(data)]
        boards.append({"qrels": qrels_name, "header": header, "rows": rows, "numeric": set(range(1, len(header))),
                       "figure": figures[("leaderboard", qrels_name)]})
    return boards


def _judged_header(data: ReportData) -> list[str]:
    return [] if data.given_scores else [f"judged@{data.depth}"]


def _judged_cells(data: ReportData, qrels: str, run: str) -> list[dict]:
    return [] if data.given_scores else [_cell(rounded(data.judged[(qrels, run)]))]


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
            if (row_run, column_run) not in found:
                # No turn has a value for both (a qrels sharing no turn with the runs: warned about): no test.
                row.append(_cell("—", title=f"{row_run} and {column_run} have no turn on {qrels} in common: "
                                            "nothing to compare"))
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
        rows.append([*row, *_judged_cells(data, q.name, name)])
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
    header = ["qrels", "turns", *data.measures, *_judged_header(data)]
    images = [figures[(kind, q.name, name)] for q in data.qrels for kind in ("per-turn", "labels")
              if (kind, q.name, name) in figures]
    return {"name": name, "anchor": f"run-{position}", "tag": run.tag, "turns": len(run.scores),
            "ranked": None if data.given_scores else len(run),
            "header": header, "rows": _summary_rows(data, name), "numeric": set(range(1, len(header))),
            "figures": images, "is_baseline": name == data.baseline, "plot_measure": data.plot_measure,
            "turn_tables": _turn_tables(data, name), "runs": len(data.runs)}


def _correlation_table(data: ReportData) -> dict | None:
    if data.correlations is None:
        return None
    header = ["qrels A", "measure A", "qrels B", "measure B", *_STATISTICS_HEADER]
    rows = [[_cell(r["qrels_a"]), _cell(r["measure_a"]), _cell(r["qrels_b"]), _cell(r["measure_b"]),
             *_statistics_cells(r)] for r in data.correlations]
    return {"header": header, "rows": rows, "numeric": set(range(4, len(header)))}


# The Greek letters are the statistics' names (rho is meant, not the Latin p).
_STATISTICS_HEADER = ["Kendall's τ", "τ_AP (A ref.)", "τ_AP (B ref.)", "Spearman's ρ",  # noqa: RUF001
                      "top-k overlap", "swapped pairs"]


def _statistics_cells(statistics: dict) -> list[dict]:
    """The cells of :func:`castregin.evaluation.analysis.agreement_statistics` (``_STATISTICS_HEADER``)."""
    k = statistics["top_k"]
    overlap = _cell(rounded(statistics["top_k_overlap"], 3),
                    small=[f"k = {k}" + (", cut in a tie" if statistics["top_k_cut_in_tie"] else "")])
    return [_cell(rounded(statistics["kendall_tau"], 3)), _cell(rounded(statistics["tau_ap"], 3)),
            _cell(rounded(statistics["tau_ap_reverse"], 3)), _cell(rounded(statistics["spearman_rho"], 3)), overlap,
            _cell(str(statistics["swapped_pairs"]))]


def _agreement_sections(data: ReportData, figures: dict) -> list[dict]:
    sections = []
    for agreement in data.agreements:
        movers = [[_cell(r.run), _cell(str(r.rank_a)), _cell(str(r.rank_b)), _cell(f"{r.change:+d}"),
                   _cell(rounded(r.score_a)), _cell(rounded(r.score_b))] for r in agreement.movers]
        sections.append({
            "qrels_a": agreement.qrels_a, "qrels_b": agreement.qrels_b, "measure": agreement.measure,
            "header": _STATISTICS_HEADER, "rows": [_statistics_cells(agreement.statistics)],
            "numeric": set(range(len(_STATISTICS_HEADER))),
            "movers_header": ["run", f"rank on {agreement.qrels_a}", f"rank on {agreement.qrels_b}", "change",
                              f"{agreement.measure} on {agreement.qrels_a}",
                              f"{agreement.measure} on {agreement.qrels_b}"],
            "movers": movers, "movers_numeric": {1, 2, 3, 4, 5},
            "figure": figures[("agreement", agreement.qrels_a, agreement.qrels_b)]})
    return sections


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


def _settings_text(options: ReportSettings, given_scores: bool = False) -> str:
    family = "" if options.test in FAMILY_TESTS else " over the comparisons of each measure"
    text = f"{options.test} test, {correction_words(options.test, options.correction)}{family}, alpha {options.alpha}"
    if options.test == "randomization":
        text += f", {options.permutations} permutations, seed {options.seed}"
    if given_scores:
        return (text + f"; intervals: {CONFIDENCE:.0%} percentile bootstrap over the turns, {options.ci_samples} "
                f"samples, seed {options.seed}")
    compared = "doubles" if score_bits(options.score_precision) == 64 else "32-bit floats (pytrec_eval's ranking)"
    return (text + f"; items ranked on scores compared as {compared}"
            f"; binary measures count labels ≥ {options.rel_level} as relevant; intervals: "
            f"{CONFIDENCE:.0%} percentile bootstrap over the turns, {options.ci_samples} samples, seed {options.seed}")


def _provenance_context(record: Provenance) -> dict:
    return {"version": record.version, "command": record.command, "date": record.date,
            "inputs": [{"path": path, "sha256": digest} for path, digest in record.inputs]}


def page_context(data: ReportData, figures: dict, record: Provenance, per_run_files: bool = False) -> dict:
    """The template's data: plain dicts, lists and strings (the runs' own pages use ``runs``' entries)."""
    legend = (f"{DAGGER}: significantly better than {data.baseline}" if data.baseline is not None
              else "superscript letters: significantly better than the run with that letter")
    orders = leaderboard_orders(data)
    matrices = ([[_matrix(data, q.name, m, orders[q.name]) for m in data.tested] for q in data.qrels]
                if len(data.runs) > 1 else [])
    files = run_file_names(data.names) if per_run_files else {}
    runs = [{**_run_section(data, i, run, name, figures), "file": files.get(name)}
            for i, (run, name) in enumerate(zip(data.runs, data.names, strict=True), 1)]
    return {
        "run_names": data.names, "measures": data.measures,
        "settings": _settings_text(data.settings, data.given_scores), "legend": legend, "depth": data.depth,
        "primary": data.primary,
        "test": data.settings.test, "correction": correction_words(data.settings.test, data.settings.correction),
        "alpha": data.settings.alpha,
        "leaderboards": _leaderboards(data, figures), "matrices": matrices, "runs": runs,
        "qrels": [{"name": q.name, "turns": len(q.labels), "judgments": len(q), "figure": figures[("qrels", q.name)]}
                  for q in data.qrels if ("qrels", q.name) in figures],
        "given_scores": data.given_scores, "sources": [q.name for q in data.qrels],
        "correlation": _correlation_table(data), "correlation_asked": data.settings.correlation,
        "loro": _loro_table(data), "loro_asked": bool(data.settings.loro_depth),
        "agreements": _agreement_sections(data, figures),
        "provenance": _provenance_context(record),
    }


@dataclass
class Report:
    """The report in memory: the pages (``index.html``, ``runs/*.html``) and figures, by file name."""

    html: str
    figures: dict[str, bytes] = field(default_factory=dict)
    pages: dict[str, str] = field(default_factory=dict)


def build_report(data: ReportData, record: Provenance, *, per_run_files: bool = False,
                 progress: bool = False) -> Report:
    """The report pages and figures of ``data`` (:func:`castregin.evaluation.report_data.report_data`), in memory.

    ``record`` is the reproducibility block (:func:`castregin.formats.provenance.provenance`);
    ``per_run_files`` adds ``runs/<run>.html``; ``progress`` shows the drawing's progress bar on standard error.
    """
    figures = draw(data, progress)
    context = page_context(data, figures, record, per_run_files)
    environment = html_environment()
    pages = {}
    if per_run_files:
        template = environment.get_template("report_run.html.j2")
        for run in context["runs"]:
            pages[run["file"]] = template.render({**context, "run": {**run, "file": None}})
    html = environment.get_template("report.html.j2").render(context)
    return Report(html, {figure.name: figure.png for figure in figures.values()}, pages)


def report_files(report: Report) -> dict[str, bytes]:
    """The report directory's files by name: ``figures/*.png``, ``runs/*.html`` and ``index.html`` (last).

    Written as a whole with :func:`castregin.formats.output.replace_directory` (``allowed=REPORT_FILES``).
    """
    files = dict(sorted(report.figures.items()))
    files.update({name: page.encode("utf-8") for name, page in sorted(report.pages.items())})
    files[INDEX] = report.html.encode("utf-8")
    return files
