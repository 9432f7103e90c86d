"""``castregin agreement``: how far sources of labels agree (registered on `castregin.cli.main`).

Parses the options, calls the judging stage's :func:`castregin.judging.sources.agreement_stage` (which
:func:`castregin.api.agreement` calls too) and renders (:mod:`castregin.render.agreement`), writing every output
together.
"""

from __future__ import annotations

import click

from ..errors import InputError
from ..formats import ensure_not_input, write_text
from ..formats.common import json_text
from ..formats.output import OutputSet
from ..limits import MAX_AGREEMENT_SAMPLES
from ..render.tables import RECORD_FORMATS
from . import main, warnings_as_lines
from .crowd_options import crowd_options_optional, crowd_rules
from .options import (
    FiniteFloat,
    InputPath,
    OutputPath,
    format_option,
    output_option,
    score_precision_option,
    single_measure_option,
    top_k_option,
)


class SourcePath(InputPath):
    """A source of labels, ``[NAME=][KIND:]PATH``."""

    def paths(self, value: str) -> list[str]:
        from ..judging.sources import split_source

        return [split_source(value)[2]]


def _sections(ctx, param, value: str | None) -> tuple[str, ...] | None:
    from ..render.agreement import SECTIONS

    if value is None:
        return None
    names = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [n for n in names if n not in SECTIONS]
    if unknown or not names:
        raise click.BadParameter(f"{unknown[0] if unknown else value!r} is no section; choose among "
                                 f"{', '.join(SECTIONS)} (comma-separated)")
    return names


#: Options of the comparison between sources, and how they are spelled.
_BETWEEN_OPTIONS = {"rel_level": "--rel-level", "negative_labels": "--negative-labels", "samples": "--samples",
                    "seed": "--seed", "confidence": "--confidence", "sections": "--show", "plot": "--plot",
                    "run_paths": "--runs", "rank_runs": "--rank-runs", "measure": "--measure", "top_k": "--top-k",
                    "score_precision": "--score-precision", "scatter": "--scatter"}


def _within_check(fmt: str):
    """What the agreement inside one crowd refuses: an option given for comparing sources (it would do nothing),
    a format it is not written in."""
    from click.core import ParameterSource

    context = click.get_current_context()
    given = [spelled for name, spelled in _BETWEEN_OPTIONS.items()
             if context.get_parameter_source(name) is ParameterSource.COMMANDLINE]

    def check() -> None:
        if given:
            raise InputError("only for comparing sources of labels; the agreement inside one crowd (one crowd "
                             "source, or --within) has no use for it", argument=given[0])
        if fmt not in ("table", "json"):
            raise InputError(f"the agreement inside a crowd is written as table or json, not {fmt}",
                             argument="--format")

    return check


def _expand_run_option(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    from .options import expand_run_paths

    return tuple(expand_run_paths(value)) if value else ()


def _check_output_options(within, sections, fmt, run_paths, rank_runs, scatter) -> None:
    """Refusals of what is to be written, before any source is read."""
    ranked = bool(run_paths or rank_runs)
    if scatter is not None and not ranked:
        raise InputError("scores runs: give them with --runs (or --rank-runs, for nugget sources)",
                         argument="--scatter")
    if within:
        return
    if sections and "ranking" in sections and not ranked:
        raise InputError("the section 'ranking' needs runs to rank: give them with --runs (or --rank-runs, for "
                         "nugget sources)", argument="--show")
    if fmt == "csv" and sections is not None and len(sections) != 1:
        raise InputError("csv holds one table: name one section with --show (pairs, overall, labels, "
                         "topics, confusion, ranking)", argument="--show")


@main.command()
@click.argument("sources", nargs=-1, required=True, type=SourcePath(), metavar="[NAME=][KIND:]SOURCE...")
@click.option("--within", is_flag=True,
              help="The agreement inside one crowd (every SOURCE a crowd CSV, concatenated): alpha and Fleiss' "
                   "kappa before and after --gold, each worker's kappa with the aggregated labels. The default "
                   "when the only SOURCE is crowd judgments.")
@click.option("--per-worker", is_flag=True,
              help="Each worker of a crowd source is a source of its own (SOURCE:worker); two workers of one "
                   "crowd are not compared (that is --within).")
@crowd_options_optional
@click.option("--rel-level", default=2, show_default=True, type=int,
              help="binary_agreement and binary_kappa: a label >= this is relevant (nugget sources: 2, support).")
@click.option("--negative-labels", type=click.Choice(["unjudged", "category"]), default="unjudged",
              show_default=True,
              help="A label below 0 (qrels' -1: in the pool but unjudged): not judged, so that the pair counts in "
                   "only_a or only_b; or category: a label like any other.")
@click.option("--samples", default=1000, show_default=True, type=click.IntRange(0, MAX_AGREEMENT_SAMPLES),
              help="Bootstrap resamples of the (turn, item) pairs both judged (0: no interval).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2**63 - 1),
              help="Seed of the bootstrap: the same seed, the same intervals.")
@click.option("--confidence", default=0.95, show_default=True,
              type=FiniteFloat(0, 1, min_open=True, max_open=True), help="Level of the bootstrap intervals.")
@click.option("--show", "sections", callback=_sections, metavar="SECTION,...",
              help="Sections to write: pairs, overall (alpha of 3+ sources), labels, topics, confusion, ranking "
                   "(with --runs or --rank-runs). Default for table, markdown and latex: all but topics; csv holds "
                   "one (default pairs); json holds all.")
@format_option(RECORD_FORMATS)
@output_option()
@click.option("--plot", type=OutputPath(), metavar="FILE.png",
              help="A heatmap of each pair's confusion matrix (PNG).")
@click.option("--runs", "run_paths", multiple=True, type=InputPath(), metavar="RUN", callback=_expand_run_option,
              help="Runs scored under every source (repeatable; a directory stands for its files): how far the "
                   "sources agree on the ranking of the runs, the section 'ranking' (Kendall's tau, tau_AP, "
                   "Spearman's rho, top-k overlap, the runs that move most).")
@click.option("--rank-runs", is_flag=True,
              help="Nugget sources: rank the runs their assignments hold by a nugget score (-m; default all_score) "
                   "under each source, on the answers every source assigns: the section 'ranking', as --runs.")
@single_measure_option("With --runs: the measure the runs are ranked by (one; default nDCG@3); with --rank-runs: "
                       "a nugget score (strict_vital_score, strict_all_score, vital_score, all_score, nugget_recall).")
@top_k_option
@score_precision_option
@click.option("--scatter", type=OutputPath(), metavar="FILE.png",
              help="With --runs or --rank-runs: each run's score under A against B, a PNG per pair of sources "
                   "(FILE.png for one pair; FILE-A-B.png for each of several).")
def agreement(sources, within, per_worker, criteria, gold, input_format, columns, label_map, scale, majority, tie,
              rounding, method, rel_level, negative_labels, samples, seed, confidence, sections, fmt, output, plot,
              run_paths, rank_runs, measure, top_k, score_precision, scatter):
    """How far sources of labels agree: qrels, crowd judgments, LLM labels, nugget assignments.

    \b
    Each SOURCE is [NAME=][KIND:]PATH: a TREC qrels file (turn 0 item label), crowd
    judgments (a CSV, what `castregin aggregate` reads) or nugget assignments (nuggetizer's
    JSONL, a file or a directory of them), told apart by the first line: four fields apart by
    spaces, the last an integer, is qrels; a JSON object is nugget assignments; a line with a
    comma is a CSV header. KIND (qrels:, crowd: or nuggets:) says it where that fails. NAME
    defaults to the file's stem. A crowd source is aggregated first with the options of
    `castregin aggregate` (--criteria with one criterion, --gold, --majority, --tie,
    --rounding, --method...), or split into its workers with --per-worker. A nugget source
    gives one label per (qid, run, nugget): turn qid, item run_id#index, support 2,
    partial_support 1, not_support 0; two nugget sources must assign the same nuggets.

    \b
    For each pair of sources, on the (turn, item) pairs both judged (pairs judged by one
    only are counted: only_a, only_b; a label below 0, "in the pool but unjudged", is no
    judgment unless --negative-labels category): exact agreement; Cohen's kappa unweighted,
    linear and quadratic (kappa, kappa_linear, kappa_quadratic); Krippendorff's alpha nominal, ordinal
    and interval; agreement and kappa with labels >= --rel-level as relevant; percentile
    bootstrap intervals (--samples, --seed, --confidence); per label (specific agreement),
    per topic and the confusion matrix. With 3 sources or more, alpha of all together.
    --runs, or --rank-runs for nugget sources, adds the ranking of runs under each source.

    \b
    One crowd alone (or --within): the agreement inside it, as before: alpha_nominal,
    alpha_ordinal, alpha_interval and fleiss per criterion and topic, before and after --gold,
    and each worker's kappa_quadratic with the aggregated labels.

    \b
    Examples:
      castregin agreement nist=human.qrel gpt4o=llm.qrel
      castregin agreement human.qrel llm1.qrel llm2.qrel --show pairs,topics --format markdown
      castregin agreement nist.qrel crowd=judgments.csv --criteria relevance --gold gold.csv --plot cm.png
      castregin agreement nist.qrel judgments.csv --criteria relevance --per-worker --format csv
      castregin agreement judgments.csv --criteria relevance,novelty --gold gold.csv
      castregin agreement judgments_*.csv --within --criteria relevance --format json -o agreement.json
      castregin agreement nist=human.qrel gpt4o=llm.qrel --runs runs/ -m nDCG@10 --scatter scores.png
      castregin agreement human=people/assignments.jsonl gpt4o=assigned/assignments.jsonl --rank-runs -m vital
    """
    from ..judging.sources import agreement_stage, check_plot_pairs, split_source
    from ..render.agreement import agreement_output, scatter_files
    from ..render.judging import agreement_tables

    rules = crowd_rules(criteria, gold, input_format, columns, label_map, scale, majority, tie, rounding, method)
    inputs = [*(split_source(s)[2] for s in sources), *([gold] if gold else []), *run_paths]
    for path in (output, plot, scatter):
        ensure_not_input(path, inputs)
    _check_output_options(within, sections, fmt, run_paths, rank_runs, scatter)
    with warnings_as_lines():
        outcome = agreement_stage(sources, rules, within=within, per_worker=per_worker, rel_level=rel_level,
                                  negative_labels=negative_labels, samples=samples, seed=seed, confidence=confidence,
                                  run_paths=run_paths, rank_runs=rank_runs, measure=measure, top_k=top_k,
                                  score_precision=score_precision, within_check=_within_check(fmt))
    if outcome.within is not None:
        write_text(output, json_text(outcome.within, sort_keys=True) if fmt == "json"
                   else agreement_tables(outcome.within))
        return
    result = outcome.between or {}
    text = agreement_output(result, fmt, sections, outcome.ranking)
    figures = {}
    if scatter:
        check_plot_pairs(len(outcome.ranking), "--scatter")
        figures = scatter_files(scatter, outcome.ranking)
    if plot:
        from ..render.plots import confusion_plot

        check_plot_pairs(len(result["pairs"]), "--plot")
        figures[plot] = confusion_plot(result["pairs"])
    with OutputSet(inputs) as outputs:
        outputs.write_text(output, text)
        for path, png in figures.items():
            outputs.write_bytes(path, png)
