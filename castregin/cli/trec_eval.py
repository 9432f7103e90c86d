"""Command ``trec_eval``: trec_eval 9.0.8's command line and output, for scripts that call trec_eval."""

from __future__ import annotations

import click

from .. import formats
from ..errors import InputError
from ..evaluation.trec_eval import TrecEvalOptions, trec_eval_lines
from ..render.trec import trec_eval_text
from . import main, warnings_as_lines
from .options import OUTPUT_HELP, InputPath, OutputPath

#: trec_eval's options that castregin does not take, and why (each is refused in one line).
_REFUSED = {
    "debug_level": ("-D", "debug output is trec_eval's own"),
    "num_docs": ("-N", "only utility's fourth parameter uses it, and castregin refuses utility's parameters"),
    "zscore": ("-Z", "Z scores need trec_eval's Zmean file, which castregin does not read"),
    "old_format": ("-o", "obsolete in trec_eval itself"),
}


def _refuse_unsupported(values: dict, rel_info_format: str, results_format: str) -> None:
    for key, (flag, why) in _REFUSED.items():
        if values[key]:
            raise InputError(f"trec_eval's {flag} is not supported: {why}")
    if rel_info_format != "qrels":
        raise InputError(f"-R {rel_info_format}: castregin reads qrels only (trec_eval's prefs and "
                         "qrels_prefs formats are not supported)")
    if results_format != "trec_results":
        raise InputError(f"-T {results_format}: castregin reads trec_results only")


@main.command("trec_eval", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels_file", type=InputPath(), metavar="QRELS")
@click.argument("run_file", type=InputPath(), metavar="RUN")
@click.option("-q", "--query_eval_wanted", "per_query", is_flag=True,
              help="Also print each query's values (before the summary).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE[.PARAMS]",
              help="Measure, family with parameters (P.5,10) or set (official, all_trec, set); repeatable. "
                   "Default: official.")
@click.option("-c", "--complete_rel_info_wanted", "complete", is_flag=True,
              help="Average over every query of the qrels (a missing one scores 0).")
@click.option("-l", "--level_for_rel", "rel_level", type=click.IntRange(1, None), default=1, show_default=True,
              help="Label at or above which an item is relevant.")
@click.option("-n", "--nosummary", is_flag=True, help="No summary (the 'all' lines).")
@click.option("-M", "--Max_retrieved_per_topic", "max_per_query", type=click.IntRange(1, None),
              help="Use only the first N items of each query (in trec_eval's order).")
@click.option("-J", "--Judged_docs_only", "judged_only", is_flag=True,
              help="Drop unjudged items before computing anything (as trec_eval -J).")
@click.option("-R", "--Rel_info_format", "rel_info_format", default="qrels", help="Only 'qrels'.")
@click.option("-T", "--Results_format", "results_format", default="trec_results", help="Only 'trec_results'.")
@click.option("-D", "--Debug_level", "debug_level", hidden=True)
@click.option("-N", "--Number_docs_in_coll", "num_docs", hidden=True)
@click.option("-Z", "--Zscore", "zscore", type=InputPath(), hidden=True)
@click.option("-o", "--Output_old_results_format", "old_format", is_flag=True, hidden=True)
@click.option("--output", type=OutputPath(), default="-", show_default=True, metavar="FILE", help=OUTPUT_HELP)
def trec_eval_command(qrels_file, run_file, per_query, measures, complete, rel_level, nosummary, max_per_query,
                      judged_only, rel_info_format, results_format, output, **refused):
    """trec_eval's command line and output: a drop-in for scripts that call trec_eval 9.0.8.

    Prints what `trec_eval [options] QRELS RUN` prints, byte for byte (tested against the trec_eval
    binary): `measure<pad>\\tquery\\tvalue`, measures in trec_eval's order, counts as integers, four
    decimals, per-query lines with -q, the 'all' lines last. Averages over the queries in both QRELS
    and RUN unless -c, as trec_eval 9.0.x. The relevance level defaults to 1, as in trec_eval
    (castregin evaluate's is 2). Compressed inputs are read too.

    castregin's stricter checks stay: a malformed line, a duplicate item in a query or a non-numeric
    score is a one-line error where trec_eval may carry on. -D, -N, -Z, -o and the preference
    formats (-R prefs) are refused in one line.

    \b
    Examples:
      castregin trec_eval -m all_trec question_relevance_all.qrel bm25.run
      castregin trec_eval -q -c -l2 -m P.1,3,5 -m ndcg_cut.3 question_relevance_all.qrel bm25.run
    """
    _refuse_unsupported(refused, rel_info_format, results_format)
    options = TrecEvalOptions(tuple(measures) or ("official",), rel_level, complete, per_query, not nosummary,
                              max_per_query, judged_only)
    formats.ensure_not_input(output, [qrels_file, run_file])
    qrels = formats.read_qrels(qrels_file)
    run = formats.read_run(run_file)
    with warnings_as_lines():
        lines = trec_eval_lines(qrels, run, options, runid=run.last_tag)
    formats.write_text(output, trec_eval_text(lines))
