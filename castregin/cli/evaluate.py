"""Commands ``evaluate`` and ``qrels`` (subset, filter, combine, stats)."""

from __future__ import annotations

import click

from .. import formats
from ..arrays import choose_allocator
from ..errors import InputError
from ..evaluation.evaluate import NUM_Q, evaluate_file_rows
from ..evaluation.measures import DEFAULT_MEASURES, TREC_SETS, measure_catalogue, parse_measures
from ..formats.common import json_text
from ..limits import MAX_RESAMPLES
from ..render.tables import FORMATS, render_rows
from ..track import qrels as qrels_tools
from . import main, warnings_as_lines
from .options import (
    FiniteFloat,
    InputPath,
    OutputPath,
    format_option,
    measure_option,
    output_option,
    qrels_option,
    rel_level_option,
    runs_argument,
    score_precision_option,
    split_named,
)


@main.command()
@runs_argument()
@qrels_option
@measure_option
@rel_level_option
@score_precision_option
@click.option("--complete", is_flag=True,
              help="Average over every qrels turn, a missing turn scoring 0 (trec_eval -c). "
                   "Default: only turns in both qrels and run.")
@click.option("-q", "--per-turn", is_flag=True, help="Also print each turn's value (trec_eval -q).")
@click.option("--turns", "turns_file", type=InputPath(), metavar="FILE",
              help="Keep only these turns of every qrels: one id a line, a qrels or run, or turn-ids JSON.")
@click.option("--by", type=click.Choice(["turn", "topic"]), default="turn", show_default=True,
              help="Average over turns, or per topic (the id before '_') first and then over topics.")
@click.option("--ci", type=FiniteFloat(0, 100, min_open=True, max_open=True), metavar="LEVEL",
              help="Print a percentile bootstrap interval (e.g. 95) beside every mean; resamples turns, "
                   "or topics with --by topic.")
@click.option("--samples", type=click.IntRange(1, MAX_RESAMPLES), default=10_000, show_default=True,
              help="Bootstrap resamples of --ci.")
@click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True, help="Seed of --ci.")
@format_option(FORMATS)
@output_option()
def evaluate(runs, qrels_specs, measures, rel_level, score_precision, complete, per_turn, turns_file, by, ci,
             samples, seed, fmt, output):
    """Evaluate TREC runs against qrels with trec_eval's numbers.

    Items are ordered by score (ties: item id descending) as trec_eval does; the rank column is
    ignored. Scores are compared as doubles, as trec_eval-9.0.8 compares them; --score-precision
    float compares them as 32-bit floats, as pytrec_eval, ir_measures and trec_eval up to v9.0.8
    (2020) do. Binary measures (P, R, AP, RR) count labels >= --rel-level as relevant; nDCG uses
    the graded labels as gains.

    \b
    Examples:
      castregin evaluate bm25.run --qrels question_relevance_all.qrel
      castregin evaluate runs/*.run --qrels all=question_relevance_all.qrel \\
          --qrels mi=question_relevance_mi_subset.qrel -m P@1 -m nDCG@3 --format markdown
      castregin evaluate bm25.run --qrels all.qrel --per-turn --format json -o scores.json
      castregin evaluate bm25.run --qrels all.qrel -m all_trec -q --format trec   # trec_eval's layout
      castregin evaluate runs/ --qrels all.qrel --by topic --ci 95 --seed 1        # topic means, intervals
    """
    formats.ensure_not_input(output, [*runs, *(split_named(s)[1] for s in qrels_specs)])
    parsed = parse_measures(measures or DEFAULT_MEASURES, rel_level)  # a refused measure before any reading
    turns = formats.read_turn_list(turns_file) if turns_file else None
    choose_allocator()
    with warnings_as_lines():
        rows = evaluate_file_rows(
            runs, [split_named(spec) for spec in qrels_specs],
            measures=parsed, rel_level=rel_level, complete=complete,
            per_turn=per_turn or by == "topic" or ci is not None, turns=turns, score_precision=score_precision,
        )
    _say_what_sets_leave_out(measures, fmt)  # once there is a result to leave it out of
    if by == "topic" or ci is not None:
        from ..evaluation.analysis import topic_means_and_intervals

        rows = topic_means_and_intervals(rows, parsed, per_turn, by, ci / 100 if ci is not None else None, samples,
                                         seed)
    counts = {NUM_Q, "num_topics", *(m.name for m in parsed if m.integer)}
    formats.write_text(output, render_rows(rows, fmt, counts=counts))


#: trec_eval's text measures that evaluate, which prints numbers, leaves out of a set (runid is --format trec's).
_TEXT_IN_SETS = ("relstring",)


def _say_what_sets_leave_out(measures, fmt: str) -> None:
    """``-m all_trec`` holds relstring, trec_eval's text: evaluate leaves it out, and says so."""
    where = " of trec_eval's layout" if fmt == "trec" else ""
    for name in measures:
        for text in (t for t in _TEXT_IN_SETS if t in TREC_SETS.get(name, ())):
            click.echo(f"castregin: warning: {name}'s {text} is text, not a number: evaluate leaves it out{where}; "
                       f"`castregin trec_eval -q -m {name}` prints it", err=True)


@main.command("measures")
@format_option(["table", "json"])
@output_option()
def measures_command(fmt, output):
    """Every measure castregin accepts, which backend computes it, and what it refuses.

    castregin reports trec_eval's measures (by its engine where it can, else by trec_eval's rules in
    castregin's Python, both checked against trec_eval's binary) and ir_measures' Judged@k; every other
    ir_measures measure is refused with a line saying why, since castregin cannot check its numbers
    against trec_eval.

    \b
    Names: ir_measures (P@5, nDCG@3, AP, RR, R@10, P(rel=1)@5) or trec_eval (P_5, ndcg_cut_3, map,
    recip_rank, recall_10); trec_eval's sets (all_trec, official, set) and families (P, P.1,3,5).
    Counts are summed over turns as trec_eval does (num_ret, num_rel, num_rel_ret); num_q is the
    number of turns averaged.

    \b
    Examples:
      castregin measures
      castregin evaluate bm25.run --qrels question_relevance_all.qrel -m all_trec --format json
    """
    from ..render.analysis import measures_report

    formats.write_text(output, measures_report(measure_catalogue(), fmt))


@main.group()
def qrels():
    """Qrels tools: subsets, filtered turns, combined criteria, statistics.

    \b
    Examples (the CAsT-ReGIn variants from the `all` qrels):
      castregin qrels filter all.qrel --min-label 2 -o filtered.qrel
      castregin qrels subset question_relevance_all.qrel --turns mi_turns.txt -o mi_subset.qrel
    """


def _write_qrels(output: str, result, inputs, why_empty: str) -> None:
    """Write qrels; qrels without a line are no result: an error saying ``why_empty``, nothing written."""
    formats.ensure_not_input(output, inputs)
    if not len(result):
        raise InputError(f"{why_empty}; nothing written")
    formats.write_text(output, formats.format_qrels(result))


def _first(ids) -> str:
    return repr(min(ids)) if ids else "none"


@qrels.command("subset")
@click.argument("qrels_file", type=InputPath(), metavar="QRELS")
@click.option("--turns", "turns_file", required=True, type=InputPath(), metavar="FILE",
              help="Turns to keep: one id a line, a qrels or run whose turns to keep, or turn-ids JSON.")
@output_option()
def qrels_subset(qrels_file, turns_file, output):
    """Keep only the turns listed in FILE.

    \b
    Examples:
      castregin qrels subset question_relevance_all.qrel --turns mi_turns.txt -o mi_subset.qrel
    """
    qrels, turns = formats.read_qrels(qrels_file), formats.read_turn_list(turns_file)
    result = qrels_tools.subset(qrels, turns)
    _write_qrels(output, result, [qrels_file, turns_file],
                 f"none of the {len(qrels.labels)} turns of {qrels_file} is in --turns {turns_file} (the qrels' look "
                 f"like {_first(qrels.labels)}, the list's like {_first(turns)}); check the turn ids")


@qrels.command("filter")
@click.argument("qrels_file", type=InputPath(), metavar="QRELS")
@click.option("--min-label", default=2, show_default=True, type=int,
              help="Keep turns where some item has a label at or above this.")
@output_option()
def qrels_filter(qrels_file, min_label, output):
    """Keep the turns that have at least one item labelled >= --min-label.

    \b
    Examples:
      castregin qrels filter all.qrel --min-label 2 -o filtered.qrel
      castregin qrels filter novelty.qrel --min-label 1
    """
    qrels = formats.read_qrels(qrels_file)
    result = qrels_tools.filter_turns(qrels, min_label)
    highest = max((label for items in qrels.labels.values() for label in items.values()), default=None)
    _write_qrels(output, result, [qrels_file],
                 f"no turn of {qrels_file} has a label >= {min_label} (its highest is {highest}); lower --min-label")


@qrels.command("combine")
@click.argument("qrels_files", nargs=-1, required=True, type=InputPath(), metavar="QRELS...")
@click.option("--how", type=click.Choice(qrels_tools.COMBINE_METHODS), default="min", show_default=True,
              help="min, max, or mean rounded half up.")
@output_option()
def qrels_combine(qrels_files, how, output):
    """One label per (turn, item) from several criteria (e.g. relevance and novelty).

    Only pairs judged in every QRELS are kept; the number left out is reported on standard error.

    \b
    Examples:
      castregin qrels combine question_relevance_all.qrel question_novelty.qrel --how min
    """
    combined, left_out = qrels_tools.combine([formats.read_qrels(p) for p in qrels_files], how)
    if left_out and len(combined):
        click.echo(f"castregin: warning: {left_out} (turn, item) pairs are not judged in every qrels; left out",
                   err=True)
    _write_qrels(output, combined, qrels_files,
                 f"no (turn, item) pair is judged in every qrels ({left_out} pairs in some only); check the ids")


@qrels.command("merge")
@click.argument("qrels_files", nargs=-1, required=True, type=InputPath(), metavar="QRELS...")
@output_option()
@click.option("--provenance", "provenance_output", required=True, type=OutputPath(), metavar="FILE.json",
              help="Where to write which QRELS each label came from (with each file's SHA-256).")
def qrels_merge(qrels_files, output, provenance_output):
    """Fill the holes of the first QRELS from the next ones (e.g. a model's labels of a new run's top k).

    A (turn, item) takes its label from the first QRELS that labels it (a label below 0, in the pool but
    unjudged, is a hole); --provenance says, for every label, which file it came from.

    \b
    Examples:
      castregin judge pool_new.txt --only-unjudged question_relevance.qrel ... --out-dir llm/
      castregin qrels merge question_relevance.qrel llm/llm_relevance.qrel -o filled.qrel \\
          --provenance filled.provenance.json
    """
    from ..formats.output import OutputSet

    merged, record, counts = qrels_tools.merge_files(qrels_files)
    with OutputSet(qrels_files) as outputs:
        outputs.write_text(output, formats.format_qrels(merged))
        outputs.write_text(provenance_output, json_text(record))
    click.echo(f"castregin: {len(merged)} labels: " + ", ".join(
        f"{n} from {path}" for path, n in counts.items()), err=True)


@qrels.command("stats")
@click.argument("qrels_files", nargs=-1, required=True, type=InputPath(), metavar="QRELS...")
@click.option("--rel-level", default=2, show_default=True, type=int,
              help="The label the 'turns with label>=' column counts turns from.")
@format_option(["table", "json"])
def qrels_stats(qrels_files, rel_level, fmt):
    """Turns, items and the label histogram of each QRELS.

    \b
    Examples:
      castregin qrels stats question_relevance_all.qrel question_novelty.qrel
      castregin qrels stats question_relevance_all.qrel --rel-level 1 --format json
    """
    from ..render.analysis import qrels_stats_report

    all_stats = [qrels_tools.stats(formats.read_qrels(p), rel_level) for p in qrels_files]
    formats.write_text("-", qrels_stats_report(all_stats, fmt, rel_level))
