"""Commands ``analyze loro``, ``analyze correlation`` and ``analyze bootstrap``: evaluating the evaluation."""

from __future__ import annotations

import click

from .. import formats
from ..evaluation.measures import DEFAULT_MEASURES
from ..limits import MAX_CUTOFF, MAX_RESAMPLES, MAX_TREC_LABEL
from ..render.analysis import bootstrap_report, correlation_report, holes_report, loro_report
from ..render.tables import RECORD_FORMATS
from . import main, warnings_as_lines
from .options import (
    FiniteFloat,
    InputPath,
    evaluation_options,
    format_option,
    input_paths,
    option_group,
    output_option,
    read_runs_and_qrels,
    rel_level_option,
    runs_argument,
    runs_or_scores,
    score_precision_option,
    single_measure_option,
    top_k_option,
)

#: What an analysis of runs on one qrels ends with: how they are scored, and where the records go in which format.
_scoring_and_output = option_group(rel_level_option, score_precision_option, format_option(RECORD_FORMATS),
                                   output_option())


@main.group()
def analyze():
    """Analyses of the evaluation itself: pool reusability, holes, ranking stability, confidence intervals.

    \b
    Examples:
      castregin analyze loro runs/*.run --qrels question_relevance_all.qrel --depth 1 -m nDCG@3
      castregin analyze correlation runs/*.run --qrels crowd=all.qrel --qrels nist=nist.qrel -m nDCG@3 -m AP
      castregin analyze bootstrap runs/*.run --qrels all.qrel --samples 10000 --seed 1 --by topic
      castregin analyze holes new.run --qrels question_relevance_all.qrel --depth 3 -m nDCG@3
    """


@analyze.command("loro")
@runs_argument()
@click.option("--qrels", "qrels_spec", required=True, type=InputPath(named=True),
              metavar="[NAME=]QRELS", help="The qrels of the pool.")
@click.option("--depth", type=click.IntRange(1, MAX_CUTOFF), required=True,
              help="The pool depth: each run's unique contributions are its top-k items no other run has.")
@single_measure_option("The measure the runs are scored and ranked by, with and without their contributions.",
                       default="nDCG@3")
@_scoring_and_output
def loro_command(runs, qrels_spec, depth, measure, rel_level, score_precision, fmt, output):
    """Leave-one-run-out reusability (Zobel 1998): each run without the judgments only it brought in.

    For each run, its unique contributions at --depth (items in its top k by the rank column that no
    other run has in its top k) are removed from the qrels; the run is scored again and ranked among
    the other runs' full scores. Unjudged items count as non-relevant, as trec_eval counts them, so a
    pool that is not reusable shows as a drop. judged_without is the run's Judged@k on the reduced qrels.
    Below the table: Kendall's tau between the two rankings and the largest rank drop.

    \b
    Examples:
      castregin analyze loro runs/*.run --qrels question_relevance_all.qrel --depth 1
      castregin analyze loro runs/ --qrels all.qrel --depth 3 -m AP --format json -o loro.json
    """
    from ..evaluation.analysis import leave_one_run_out

    formats.ensure_not_input(output, input_paths(runs, [qrels_spec]))
    run_list, (qrels,) = read_runs_and_qrels(runs, [qrels_spec])
    with warnings_as_lines():
        rows, summary = leave_one_run_out(run_list, qrels, depth, measure, rel_level, score_precision)
    formats.write_text(output, loro_report(rows, summary, fmt))


@analyze.command("correlation")
@evaluation_options(top_k_option, scores=True)
@format_option(RECORD_FORMATS)
@output_option()
def correlation_command(runs, qrels_specs, score_files, measures, top_k, rel_level, score_precision, fmt, output):
    """Kendall's tau, tau_AP, Spearman's rho and the top-k overlap between the system rankings under
    every pair of (qrels, measure).

    Crowd vs NIST qrels, all vs filtered vs mi_subset, relevance vs novelty vs diversity: each
    --qrels with each -m is one ranking of the runs by their mean; every pair of rankings (A, B) is a
    row with Kendall's tau (tau-b, scipy), tau_AP (Yilmaz et al. 2008) with A the reference (tau_ap)
    and with B the reference (tau_ap_reverse), Spearman's rho (scipy, average ranks), the share of
    the --top-k best runs under A that are among the k best under B (top_k_overlap; top_k_cut_in_tie
    says when equal scores straddle the k-th place) and the number of swapped pairs of runs. Where
    runs tie, tau_AP and the top-k overlap are their means over every order of the tied runs (one
    order for both rankings: the same ranking, ties included, agrees fully); tau and rho are nan
    (null in JSON) when every run has the same score under A or B.

    \b
    Examples:
      castregin analyze correlation runs/*.run --qrels crowd=all.qrel --qrels nist=nist.qrel -m nDCG@3 -m AP
      castregin analyze correlation runs/ --qrels all=all.qrel --qrels filtered=filtered.qrel --top-k 3 \\
          --format csv
      castregin analyze correlation --scores human.tsv --scores gpt4o.tsv -m vital_score  # nuggets score's

    With --scores, the settings are the (qrels, measure) pairs of the tables (the qrels column names
    the source of the labels: nuggets score --name), the runs ranked by their means there.
    """
    from ..evaluation.analysis import ranking_correlations

    runs_or_scores(runs, qrels_specs, score_files)
    formats.ensure_not_input(output, [*input_paths(runs, qrels_specs), *score_files])
    if score_files:
        from ..evaluation.given import ranking_correlations_of, select_measures
        from ..formats.scores import read_scores

        rows = ranking_correlations_of(select_measures(read_scores(score_files), measures), top_k)
        formats.write_text(output, correlation_report(rows, fmt))
        return
    run_list, qrels_list = read_runs_and_qrels(runs, qrels_specs)
    settings = [(q, m) for q in qrels_list for m in (measures or DEFAULT_MEASURES[:1])]
    with warnings_as_lines():
        rows = ranking_correlations(run_list, settings, rel_level, score_precision, top_k)
    formats.write_text(output, correlation_report(rows, fmt))


@analyze.command("bootstrap")
@evaluation_options(scores=True)
@click.option("--samples", type=click.IntRange(1, MAX_RESAMPLES), default=10_000, show_default=True,
              help="How many times the turns (or topics) are resampled.")
@click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True,
              help="Seed of the resampling: the same seed gives the same intervals.")
@click.option("--confidence", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="The share of the resampled means the interval holds (0.95: 95%).")
@click.option("--by", type=click.Choice(["turn", "topic"]), default="turn", show_default=True,
              help="Resample turns, or topics (the turn id before '_'): the mean is then the mean of topic "
                   "means, as evaluate --by topic gives it, and the topic means are resampled.")
@format_option(RECORD_FORMATS)
@output_option()
def bootstrap_command(runs, qrels_specs, score_files, measures, rel_level, score_precision, samples, seed, confidence,
                      by, fmt, output):
    """Percentile bootstrap confidence intervals of every mean.

    The turns averaged (or, with --by topic, the topic means: each topic's turns averaged first) are
    resampled with replacement --samples times; the interval holds the middle --confidence of the
    resampled means. Reproducible with --seed.

    \b
    Examples:
      castregin analyze bootstrap runs/*.run --qrels question_relevance_all.qrel -m nDCG@3 --seed 1
      castregin analyze bootstrap runs/ --qrels all.qrel --by topic --confidence 0.9 --format markdown
      castregin analyze bootstrap --scores nuggets.tsv --seed 1   # nuggets score -q's table
    """
    from ..evaluation.analysis import bootstrap_intervals
    from ..evaluation.evaluate import evaluate_rows

    runs_or_scores(runs, qrels_specs, score_files)
    formats.ensure_not_input(output, [*input_paths(runs, qrels_specs), *score_files])
    if score_files:
        from ..evaluation.given import select_measures, with_means
        from ..formats.scores import read_scores

        rows = with_means(select_measures(read_scores(score_files), measures))
    else:
        run_list, qrels_list = read_runs_and_qrels(runs, qrels_specs)
        with warnings_as_lines():
            rows = evaluate_rows(run_list, qrels_list, measures or DEFAULT_MEASURES, rel_level, per_turn=True,
                                 score_precision=score_precision)
    # Only means with per-turn values get an interval (num_q has none).
    intervals = bootstrap_intervals(rows, by, samples, confidence, seed)
    formats.write_text(output, bootstrap_report(intervals, fmt))


@analyze.command("holes")
@runs_argument()
@click.option("--qrels", "qrels_spec", required=True, type=InputPath(named=True), metavar="[NAME=]QRELS",
              help="The qrels the runs are scored on.")
@click.option("--depth", type=click.IntRange(1, MAX_CUTOFF),
              help="The holes are the unjudged items in each turn's top k. Default: the measure's cutoff "
                   "(nDCG@3: 3); required for measures without one (AP, RR, Rprec, nDCG).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="Measure, repeatable (default nDCG@3): P@k, Success@k, R@k, RR, AP, AP@k, Rprec, nDCG, nDCG@k "
                   "or their trec_eval names.")
@click.option("--hole-label", type=click.IntRange(0, MAX_TREC_LABEL),
              help="The best label a hole may take. Default: the qrels' largest label.")
@click.option("--per-turn", is_flag=True, help="A row per run, measure and turn too (csv: only those rows).")
@_scoring_and_output
def holes_command(runs, qrels_spec, depth, measures, hole_label, per_turn, rel_level, score_precision, fmt, output):
    """Each run's score as the interval its holes (unjudged items in its top k) leave open.

    Per run and turn: the holes in the top --depth (trec_eval's order), judged@k, the score trec_eval
    prints (holes non-relevant), and [low, high], the least and greatest value of the measure over
    every labelling of the holes with labels 0 to --hole-label (exact: not "all 0" and "all L", since
    nDCG and AP can fall when a hole is relevant). Unjudged items below the depth count as non-relevant.
    Per run: the means over the turns in both the run and the qrels, as evaluate averages. Then the
    pairs of runs whose order the holes could flip (each run's holes labelled on its own).

    \b
    Examples:
      castregin analyze holes runs/*.run --qrels question_relevance_all.qrel --depth 3
      castregin analyze holes new.run old/*.run --qrels all.qrel -m nDCG@3 -m AP --depth 3 --per-turn --format json
    """
    from ..evaluation.holes import hole_intervals

    formats.ensure_not_input(output, input_paths(runs, [qrels_spec]))
    run_list, (qrels,) = read_runs_and_qrels(runs, [qrels_spec], columns_first=True)
    with warnings_as_lines():
        result = hole_intervals(run_list, qrels, list(measures) or ["nDCG@3"], depth, hole_label, rel_level,
                                score_precision)
    formats.write_text(output, holes_report(result, fmt, per_turn))


@analyze.command("ppi")
@runs_argument()
@click.option("--qrels", "human_spec", required=True, type=InputPath(named=True), metavar="[NAME=]HUMAN",
              help="People's judgments of a random sample of the turns.")
@click.option("--model-qrels", "model_spec", required=True, type=InputPath(named=True), metavar="[NAME=]MODEL",
              help="A model's judgments of every turn (castregin judge's qrels, say).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="Measure whose per-turn mean is estimated, repeatable (default nDCG@3).")
@click.option("--confidence", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="The coverage of the intervals (0.95: 95%).")
@click.option("--plan-width", type=FiniteFloat(0, min_open=True), metavar="WIDTH",
              help="Plan: the turns people must judge for intervals this wide, from the agreement observed.")
@click.option("--no-pairs", is_flag=True, help="Leave out the differences between runs.")
@rel_level_option
@format_option(RECORD_FORMATS)
@output_option()
def ppi_command(runs, human_spec, model_spec, measures, confidence, plan_width, no_pairs, rel_level, fmt, output):
    """Prediction-powered means: people judge a random sample of turns, a model every turn (PPI++).

    Per run: the PPI++ estimate of its mean per-turn score (power-tuned lambda) and its interval,
    beside the classical estimate from people's labels alone and the model's labels alone (biased);
    effective_n is the human-judged turns the classical estimate would need for the PPI++ precision,
    gained the turns the model's labels are worth. Then each pair of runs' difference with its
    interval (significant: the interval leaves out 0). --plan-width W: how many turns people must judge
    for intervals W wide, from the agreement of the two sources so far. A turn a run lacks scores 0.
    --format csv is one table, the runs' (no differences, no plan: it refuses --plan-width); table,
    markdown, latex and json show all three.

    \b
    Examples:
      castregin analyze ppi runs/*.run --qrels human_sample.qrel --model-qrels llm_relevance.qrel -m nDCG@3
      castregin analyze ppi runs/ --qrels human.qrel --model-qrels llm.qrel --plan-width 0.05 --format json
    """
    from ..evaluation.ppi import ppi_estimates
    from ..render.sampling import ppi_report

    if fmt == "csv" and plan_width is not None:
        raise click.UsageError("--format csv holds the runs' table only, not --plan-width's plan: give --format "
                               "table, markdown, latex or json, which show the estimates and the plan")
    formats.ensure_not_input(output, input_paths(runs, [human_spec, model_spec]))
    run_list, (human, model) = read_runs_and_qrels(runs, [human_spec, model_spec])
    with warnings_as_lines():
        result = ppi_estimates(run_list, human, model, list(measures) or ["nDCG@3"], rel_level, confidence,
                               plan_width, pairs=not no_pairs)
    formats.write_text(output, ppi_report(result, fmt))
