"""Commands ``compare`` (paired significance tests) and ``report`` (a static HTML report)."""

from __future__ import annotations

import sys

import click

from .. import formats
from ..errors import InputError
from ..evaluation.compare import (
    CORRECTIONS,
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
    TESTS,
    comparison,
    resolve_baseline,
    same_measure,
)
from ..evaluation.evaluate import evaluate as evaluate_runs
from ..evaluation.measures import DEFAULT_MEASURES, Measure, parse_measures
from ..formats.output import identity
from ..limits import MAX_PERMUTATIONS, MAX_REPORT_DEPTH, MAX_RESAMPLES
from ..render.comparison import COMPARE_FORMATS, render_comparison
from . import main, warnings_as_lines
from .options import (
    FiniteFloat,
    OutputDirectory,
    evaluation_options,
    format_option,
    input_paths,
    output_option,
    read_runs_and_qrels,
    runs_or_scores,
    top_k_option,
)


def _distinct_files(paths) -> int:
    """How many different files ``paths`` name (``a.run`` and ``./a.run`` are one)."""
    # A path naming no file counts as itself: reading it will say what is wrong.
    return len({identity(path) or path for path in paths})


def _check_inputs(run_paths, measures, rel_level, *, command: str, minimum_runs: int) -> list[Measure]:
    """Usage problems before any file is read (too few runs, measures that cannot be tested per turn),
    and the measures parsed: the one parse of ``-m``, which everything after takes."""
    if _distinct_files(run_paths) < minimum_runs:
        raise click.UsageError(f"{command} needs at least {minimum_runs} different runs; "
                               f"{_distinct_files(run_paths)} given")
    shown: list[Measure] = []
    for name in measures or DEFAULT_MEASURES:
        parsed = parse_measures([name], rel_level)
        # A set (all_trec) may hold summaries over turns: their means are shown, only they are not tested.
        if len(parsed) == 1 and not parsed[0].per_turn:
            raise click.BadParameter(f"{name} has no per-turn values to test (it is a summary over turns); "
                                     "use a measure with per-turn values (map instead of gm_map)", param_hint="-m")
        shown.extend(parsed)
    return parse_measures(shown, rel_level)  # each measure once, in the order given


_comparison_options = evaluation_options(
    click.option("--baseline", metavar="RUN",
                 help="One of the RUN files (or its tag): compare every run with it. Default: all pairs."),
    click.option("--test", type=click.Choice(TESTS), default="paired-t", show_default=True,
                 help="Two-sided test on per-turn values (scipy): paired t, Wilcoxon signed-rank, paired "
                      "randomization, or Tukey's HSD over all runs at once (no further correction)."),
    click.option("--correction", type=click.Choice(CORRECTIONS), default="holm", show_default=True,
                 help="Multiple-comparison correction over the comparisons of each measure and qrels."),
    click.option("--alpha", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=0.05,
                 show_default=True, help="Significance level."),
    click.option("--permutations", type=click.IntRange(1, MAX_PERMUTATIONS), default=DEFAULT_PERMUTATIONS,
                 show_default=True, help="Resamples of the randomization test."),
    click.option("--seed", type=click.IntRange(min=0), default=DEFAULT_SEED, show_default=True,
                 help="Seed of the randomization test (same seed, same p-values)."),
    scores=True,
)


def _given_scores(score_files, measures, baseline, sort, *, command: str, minimum_runs: int):
    """``--scores``: the tables read, as evaluate's rows and DataFrame, the baseline and --sort checked against
    them (the measures and runs are the tables')."""
    from ..evaluation.given import resolve_run, results_frame, run_order, select_measures, tested_measures
    from ..formats.scores import read_scores

    rows = select_measures(read_scores(score_files), measures)
    runs = run_order(rows)
    if len(runs) < minimum_runs:
        raise InputError(f"{command} needs at least {minimum_runs} different runs; the score tables hold "
                         f"{len(runs)}", argument="score_files")
    results = results_frame(rows)
    if sort is not None and sort not in tested_measures(rows):
        raise click.BadParameter(f"{sort} is not one of the measures compared ({', '.join(tested_measures(rows))})",
                                 param_hint="--sort")
    return rows, results, resolve_run(baseline, rows)


def _sort_measure(sort: str | None, shown: list[Measure], rel_level: int) -> str | None:
    """The measure ``--sort`` names, as evaluate names it (``P_1`` is ``P@1``); one of ``-m``."""
    if sort is None:
        return None
    parsed = parse_measures([sort], rel_level)
    # The same measure may be spelled both ways (-m P@1 --sort P_1).
    same = [m.name for m in shown if len(parsed) == 1 and same_measure(m, parsed[0])]
    if not same:
        raise click.BadParameter(f"{sort} is not one of the measures compared "
                                 f"({', '.join(m.name for m in shown)})", param_hint="--sort")
    return same[0]


@main.command()
@_comparison_options
@click.option("--sort", metavar="MEASURE",
              help="Order the leaderboard of table, markdown and latex by this measure's mean, highest first "
                   "(one of -m). Default: the order of the runs given.")
@format_option(COMPARE_FORMATS)
@output_option()
def compare(runs, qrels_specs, score_files, measures, baseline, test, correction, alpha, permutations, seed,
            rel_level, score_precision, sort, fmt, output):
    """Are the differences between runs significant? Paired tests on per-turn values.

    For each qrels and measure, every run is compared with --baseline (or every pair of runs) on the
    turns both runs have (from RUN... and --qrels, or from --scores: per-turn values computed
    elsewhere, such as nuggets score -q's, with the names of their runs and measures): mean
    difference (run - baseline), the test statistic, the p-value and the p-value corrected over the
    comparisons of that measure, Cohen's d of the differences. When every difference is zero the
    p-value is 1 and the statistic 0. The randomization test is reproducible: the same --seed gives
    the same p-values.

    In table, markdown and LaTeX the leaderboard comes first (in the order given, or by --sort):
    the best value of each column in bold, a dagger on significant wins over the baseline (without
    a baseline: the letters of the runs a run is significantly better than), then every comparison
    with its effect size. JSON, TSV and CSV hold every comparison, effect_size included.

    \b
    Examples:
      castregin compare bm25.run miniLM.run T5_raw.run --qrels question_relevance_all.qrel \\
          --baseline bm25.run -m P@1 -m nDCG@3 --format markdown
      castregin compare runs/*.run --qrels all.qrel --test randomization --permutations 100000 --seed 7
      castregin compare a.run b.run --qrels all.qrel --format json -o comparisons.json
      castregin compare runs/ --qrels all.qrel --test tukey-hsd --sort nDCG@3
      castregin compare --scores nuggets.tsv --baseline bm25-gpt4o -m vital_score   # nuggets score -q's table
    """
    runs_or_scores(runs, qrels_specs, score_files)
    formats.ensure_not_input(output, [*input_paths(runs, qrels_specs), *score_files])
    if score_files:
        _, results, base = _given_scores(score_files, measures, baseline, sort, command="compare", minimum_runs=2)
    else:
        shown = _check_inputs(runs, measures, rel_level, command="compare", minimum_runs=2)
        sort = _sort_measure(sort, shown, rel_level)
        run_list, qrels_list = read_runs_and_qrels(runs, qrels_specs, shown)
        base = resolve_baseline(baseline, runs, run_list)
        with warnings_as_lines():
            results = evaluate_runs(run_list, qrels_list, shown, rel_level=rel_level,
                                    per_turn=True, score_precision=score_precision)
    compared = comparison(results, base, test, correction, alpha, permutations, seed, sort,
                          progress=sys.stderr.isatty())
    formats.write_text(output, render_comparison(compared, fmt, base, test, correction, alpha))


@main.command()
@_comparison_options
@click.option("--depth", default=10, show_default=True, type=click.IntRange(1, MAX_REPORT_DEPTH),
              help="k of the top-k label distribution and judged@k.")
@click.option("--plot-measure", default="nDCG@3", show_default=True, metavar="MEASURE",
              help="The measure of the per-turn plots and tables (evaluated even when not among -m).")
@click.option("--ci-samples", default=1000, show_default=True, type=click.IntRange(1, MAX_RESAMPLES),
              help="Bootstrap samples of each mean's 95% interval (seeded with --seed).")
@click.option("--correlation", is_flag=True,
              help="Add the rank correlations (Kendall's tau, tau_AP) of every two (qrels, measure) settings.")
@click.option("--loro-depth", type=click.IntRange(1, MAX_REPORT_DEPTH), metavar="K",
              help="Add the leave-one-run-out test at depth K (first qrels, first measure).")
@top_k_option
@click.option("--per-run-files", is_flag=True,
              help="Also write DIR/runs/<run>.html: one self-contained page per run, for its participant.")
@click.option("--out", "out_dir", required=True, type=OutputDirectory(), metavar="DIR",
              help="Directory for index.html, figures/*.png and runs/*.html (replaced as a whole).")
def report(runs, qrels_specs, score_files, measures, baseline, test, correction, alpha, permutations, seed, rel_level,
           score_precision, depth, plot_measure, ci_samples, correlation, loro_depth, top_k, per_run_files, out_dir):
    """A static HTML report: DIR/index.html, one self-contained file, and DIR/figures/*.png.

    For the set of runs: the leaderboard sorted by the first measure, with each mean's bootstrap
    interval (and a figure of them), the significance matrix of every pair of runs for each
    measure, the label histogram of each qrels, with two qrels or more how far every two agree on the
    ranking of the runs by --plot-measure (Kendall's tau, tau_AP, Spearman's rho, the --top-k overlap,
    the runs that move, a scatter plot), and on request the rank correlations between (qrels,
    measure) settings and the leave-one-run-out test. For each run (a TREC overview's
    appendix): its scores, judged@k, its --plot-measure per turn beside the best, median and worst
    of all runs (a plot and a table), and the labels of its top-k items (unjudged ones in grey).
    Last, the reproducibility block: castregin's version, the command line, the date (UTC) and the
    SHA-256 of every input. Plots are embedded as PNG, so the page needs no network; the same PNGs
    are in DIR/figures for papers.

    \b
    Examples:
      castregin report bm25.run miniLM.run T5_raw.run --qrels question_relevance_all.qrel --out report
      castregin report runs/*.run --qrels all=all.qrel --qrels mi=mi_subset.qrel --baseline bm25.run \\
          -m nDCG@3 -m P@1 --out report
      castregin report runs/ --qrels all.qrel --plot-measure P@1 --correlation --loro-depth 5 \\
          --per-run-files --out report
      castregin report --scores human.tsv --scores gpt4o.tsv --plot-measure vital_score --out report

    With --scores (per-turn tables computed elsewhere, such as nuggets score -q's), the report holds
    what the tables allow: no judged@k, label histograms, top-k labels or leave-one-run-out test; the
    qrels are the tables' sources, the plotted measure --plot-measure if they hold it, else their
    first.
    """
    # matplotlib is slow to import; only this command needs it
    from ..evaluation.report_data import ReportSettings, report_data
    from ..formats.output import check_replaceable_directory, replace_directory
    from ..formats.provenance import provenance
    from ..render.report import INDEX, REPORT_FILES, build_report, report_files

    runs_or_scores(runs, qrels_specs, score_files)
    inputs = [*input_paths(runs, qrels_specs), *score_files]
    check_replaceable_directory(out_dir, kind="report", inputs=inputs, allowed=REPORT_FILES)
    rows: list[tuple] = []
    run_list: list = []
    qrels_list: list = []
    if score_files:
        rows, _, base = _given_scores(score_files, measures, baseline, None, command="report", minimum_runs=1)
        shown = []
    else:
        shown = _check_inputs(runs, measures, rel_level, command="report", minimum_runs=1)
        run_list, qrels_list = read_runs_and_qrels(runs, qrels_specs, shown)
        base = resolve_baseline(baseline, runs, run_list)
    settings = ReportSettings(measures=tuple(shown), baseline=base, rel_level=rel_level,
                              score_precision=score_precision, depth=depth, test=test, correction=correction,
                              alpha=alpha, permutations=permutations, seed=seed,
                              plot_measure=plot_measure, ci_samples=ci_samples, correlation=correlation,
                              loro_depth=loro_depth, top_k=top_k)
    progress = sys.stderr.isatty()
    with warnings_as_lines():
        record = provenance(inputs)
        if score_files:
            from ..evaluation.report_data import report_data_from_scores

            data = report_data_from_scores(rows, settings, progress)
        else:
            data = report_data(run_list, qrels_list, settings, progress)
        report_pages = build_report(data, record, per_run_files=per_run_files, progress=progress)
        directory = replace_directory(out_dir, report_files(report_pages), kind="report", inputs=inputs,
                                      allowed=REPORT_FILES)
    click.echo(f"castregin: report written to {directory / INDEX}", err=True)
