"""Command ``trec_eval``: trec_eval 9.0.8's command line and output, for scripts that call trec_eval."""

from __future__ import annotations

from typing import overload

import click

from .. import formats
from ..errors import InputError
from . import main, warnings_as_lines
from .options import OUTPUT_HELP, InputPath, OutputPath, score_precision_option

#: trec_eval's options that castregin does not take, and why (each is refused in one line).
_REFUSED = {
    "debug_level": ("-D", "debug output is trec_eval's own"),
    "old_format": ("-o", "obsolete in trec_eval itself"),
}
#: -N's bound: trec_eval adds it to counts in a C long.
_MAX_NUM_DOCS = 1 << 62


def _refuse_unsupported(values: dict, rel_info_format: str, results_format: str) -> None:
    for key, (flag, why) in _REFUSED.items():
        if values[key]:
            raise InputError(f"trec_eval's {flag} is not supported: {why}")
    if rel_info_format != "qrels":
        from ..formats import preferences  # here, as below: the other formats and -Z are read only when given

        if rel_info_format not in preferences.FORMATS:
            raise InputError(f"-R {rel_info_format}: not one of trec_eval's relevance formats (qrels, "
                             f"{', '.join(preferences.FORMATS)}); trec_eval: Illegal rel_format")
    if results_format != "trec_results":
        raise InputError(f"-T {results_format}: castregin reads trec_results only")


@overload
def _whole(text: str, flag: str, low: int | None = None, why: str = "") -> int: ...
@overload
def _whole(text: str | None, flag: str, low: int | None = None, why: str = "") -> int | None: ...
def _whole(text: str | None, flag: str, low: int | None = None, why: str = "") -> int | None:
    """An option read as trec_eval reads it (C's atol: saturating at C's long), stricter about what is a number."""
    if text is None:
        return None
    from ..evaluation.trec_rules import c_long

    value = c_long(text, flag)
    if low is not None and value < low:
        raise InputError(f"{flag} {text}: {why}")
    return value


def _read_run(path):
    """The run as trec_eval reads it (columns after the tag ignored), read once; a byte-order mark is a warning."""
    from ..evaluation.trec_eval import trec_eval_input
    from ..formats.trec import parse_run

    return parse_run(trec_eval_input(path), formats.display_name(path), extra_columns=True)


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
@click.option("-l", "--level_for_rel", "rel_level", default="1", show_default=True, metavar="LEVEL",
              help="Label at or above which an item is relevant (any whole number, as trec_eval).")
@click.option("-n", "--nosummary", is_flag=True, help="No summary (the 'all' lines).")
@click.option("-M", "--Max_retrieved_per_topic", "max_per_query", metavar="N",
              help="Use only the first N items of each query (in trec_eval's order; 0: none).")
@click.option("-J", "--Judged_docs_only", "judged_only", is_flag=True,
              help="Drop unjudged items before computing anything (as trec_eval -J).")
@click.option("-R", "--Rel_info_format", "rel_info_format", default="qrels", show_default=True,
              help="Format of QRELS: qrels, or trec_eval's prefs, qrels_prefs (preferences: -m all_prefs) or "
                   "qrels_jg (judgment groups: -m qrels_jg).")
@click.option("-T", "--Results_format", "results_format", default="trec_results", help="Only 'trec_results'.")
@click.option("-D", "--Debug_level", "debug_level", hidden=True)
@click.option("-N", "--Number_docs_in_coll", "num_docs", metavar="N",
              help="Number of items in the collection (only utility's fourth coefficient uses it).")
@click.option("-Z", "--Zscore", "zscore_file", type=InputPath(), metavar="FILE",
              help="Print z-scores: each query's values less the mean, over the deviation, given in FILE "
                   "(lines 'query measure mean deviation').")
@click.option("-o", "--Output_old_results_format", "old_format", is_flag=True, hidden=True)
@click.option("--output", type=OutputPath(), default="-", show_default=True, metavar="FILE", help=OUTPUT_HELP)
@score_precision_option
def trec_eval_command(qrels_file, run_file, per_query, measures, complete, rel_level, nosummary, max_per_query,
                      judged_only, rel_info_format, results_format, num_docs, zscore_file, output, score_precision,
                      **refused):
    """trec_eval's command line and output: a drop-in for scripts that call trec_eval 9.0.8.

    Prints what `trec_eval [options] QRELS RUN` prints, byte for byte (tested against the trec_eval
    binary): `measure<pad>\\tquery\\tvalue`, measures in trec_eval's order, counts as integers, four
    decimals, per-query lines with -q, the 'all' lines last. Averages over the queries in both QRELS
    and RUN unless -c, as trec_eval 9.0.x. The relevance level defaults to 1, as in trec_eval
    (castregin evaluate's is 2). Compressed inputs are read too.

    "trec_eval 9.0.8" is two programs: the tag trec_eval-9.0.8 (2023), which castregin reproduces by
    default, ranks on scores read as doubles; the tag v9.0.8 (2020), every earlier release and
    pytrec_eval rank on 32-bit floats: --score-precision float prints what they print. The two differ
    where two scores of a query are equal as floats and not as doubles.

    The numbers are computed with trec_eval's own rules, measure by measure, in castregin's code (no
    C code runs); inputs above 1 MiB of run or 4 MiB of qrels are streamed, every measure computed
    on arrays of the run's pieces (the same numbers, in a third of trec_eval's time, in memory that
    does not grow with the run), except with -Z, -J, -l below 1, -M 0 or gain pairs (ndcg.1=3), and
    for a run whose queries come back after others: then both files are read whole into Python, at
    about twice trec_eval's time and four times its memory. Measure parameters are read as trec_eval
    reads them (P.5,7,3, iprec_at_recall..1,.25,
    utility.2,-1,0,0, ndcg.1=3,2=9, ndcg_cut.23.4 read as 23); relstring shows an item labelled below 0
    as '.'; -l 0 and below, -M 0, -N and -Z are taken. Results lines may carry columns after the run tag,
    ignored as trec_eval ignores them.

    castregin's stricter checks stay: a malformed line, a duplicate item in a query or a non-numeric
    score is a one-line error where trec_eval may carry on; so is input on which trec_eval fails,
    crashes or hangs (a query whose labels are all negative, labels above 1,000, -M below 0, -l
    above 1,001 with bpref). -D and -o are refused in one line.

    -R prefs, -R qrels_prefs (preferences: -m all_prefs, -m prefs) and -R qrels_jg (judgment groups:
    -m qrels_jg) read trec_eval's other relevance formats, as trec_eval does; judgments trec_eval
    stops or aborts on (a cycle of preferences in a group, a document at level 0 and above 0) are
    refused in one line. -Z and -N apply to -R qrels only.

    \b
    Examples:
      castregin trec_eval -m all_trec question_relevance_all.qrel bm25.run
      castregin trec_eval -q -c -l2 -m P.1,3,5 -m ndcg_cut.3 question_relevance_all.qrel bm25.run
      castregin trec_eval -q -R prefs -m all_prefs judgments.prefs bm25.run
    """
    # The evaluation's modules are imported here, not with the command: `castregin trec_eval --help` needs none.
    from ..evaluation.trec_eval import (
        TrecEvalOptions,
        trec_eval_file_lines,
        trec_eval_input,
        trec_eval_judgment_lines,
        trec_eval_lines,
    )
    from ..formats.output import open_output
    from ..formats.trec import parse_qrels
    from ..render.trec import trec_eval_chunks, trec_eval_text

    _refuse_unsupported(refused, rel_info_format, results_format)
    level = _whole(rel_level, "-l")
    depth = _whole(max_per_query, "-M", 0, "the number of items per query must be 0 or more (trec_eval crashes "
                                           "on a negative one)")
    collection = _whole(num_docs, "-N") or 0
    if abs(collection) > _MAX_NUM_DOCS:
        raise InputError(f"-N {num_docs}: too large (at most {_MAX_NUM_DOCS})")
    formats.ensure_not_input(output, [qrels_file, run_file, *([zscore_file] if zscore_file else [])])
    if rel_info_format != "qrels":
        from ..formats import preferences

        if zscore_file or collection:
            raise InputError(f"-Z and -N apply to -R qrels only, not to -R {rel_info_format}")
        parse = {"prefs": preferences.parse_prefs, "qrels_prefs": preferences.parse_qrels_prefs,
                 "qrels_jg": preferences.parse_qrels_jg}[rel_info_format]
        with warnings_as_lines():
            judgments = parse(trec_eval_input(qrels_file), formats.display_name(qrels_file))
            run = _read_run(run_file)
        options = TrecEvalOptions(tuple(measures) or ("official",), level, complete, per_query, not nosummary,
                                  depth, judged_only, score_precision=score_precision)
        lines = trec_eval_judgment_lines(judgments, run, rel_info_format, options, runid=run.last_tag)
        formats.write_text(output, trec_eval_text(lines))
        return
    if not zscore_file:
        options = TrecEvalOptions(tuple(measures) or ("official",), level, complete, per_query, not nosummary,
                                  depth, judged_only, collection, None, score_precision)
        with warnings_as_lines():
            file_lines = trec_eval_file_lines(qrels_file, run_file, options)
        # Written a block of lines at a time: a streamed evaluation's -q lines are made as they are read.
        with open_output(output) as handle:
            for chunk in trec_eval_chunks(file_lines):
                handle.write(chunk)
        return
    from ..evaluation.zscores import ZScores  # here: -Z only
    from ..formats.zscores import parse_zscores

    with warnings_as_lines():
        qrels = parse_qrels(trec_eval_input(qrels_file), formats.display_name(qrels_file), formats.stem(qrels_file))
        run = _read_run(run_file)
        source = formats.display_name(zscore_file)
        zscores = ZScores.of(parse_zscores(trec_eval_input(zscore_file), source), source)
    options = TrecEvalOptions(tuple(measures) or ("official",), level, complete, per_query, not nosummary,
                              depth, judged_only, collection, zscores, score_precision)
    with warnings_as_lines():
        lines = trec_eval_lines(qrels, run, options, runid=run.last_tag)
    formats.write_text(output, trec_eval_text(lines, zscores=zscores is not None))
