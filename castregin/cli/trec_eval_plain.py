"""``castregin trec_eval`` without click: its parameters and its body (see :mod:`castregin.cli.plain`).

The click command (:mod:`castregin.cli.trec_eval`, with the help text) is made from :data:`PARAMETERS` and
calls :func:`trec_eval`; :func:`castregin.cli.run` calls it too, without importing click, when
:meth:`~castregin.cli.plain.PlainCommand.parse` reads the command line as click would.
"""

from __future__ import annotations

from .. import formats
from ..errors import InputError
from ..evaluation.ranking import DEFAULT_SCORE_PRECISION, SCORE_PRECISIONS
from . import warnings_as_lines
from .plain import FLAG, INPUT, MULTIPLE, OUTPUT, OUTPUT_HELP, SCORE_PRECISION_HELP, Parameter, PlainCommand

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


def _whole(text: str, flag: str, low: int | None = None, why: str = "") -> int:
    """An option read as trec_eval reads it (C's atol: saturating at C's long), stricter about what is a number."""
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


#: trec_eval's positional arguments and options, in the order of its --help.
PARAMETERS = (
    Parameter("qrels_file", role=INPUT, metavar="QRELS"),
    Parameter("run_file", role=INPUT, metavar="RUN"),
    Parameter("per_query", "-q", "--query_eval_wanted", kind=FLAG,
              help="Also print each query's values (before the summary)."),
    Parameter("measures", "-m", "--measure", kind=MULTIPLE, metavar="MEASURE[.PARAMS]",
              help="Measure, family with parameters (P.5,10) or set (official, all_trec, set); repeatable. "
                   "Default: official."),
    Parameter("complete", "-c", "--complete_rel_info_wanted", kind=FLAG,
              help="Average over every query of the qrels (a missing one scores 0)."),
    Parameter("rel_level", "-l", "--level_for_rel", default="1", show_default=True, metavar="LEVEL",
              help="Label at or above which an item is relevant (any whole number, as trec_eval)."),
    Parameter("nosummary", "-n", "--nosummary", kind=FLAG, help="No summary (the 'all' lines)."),
    Parameter("max_per_query", "-M", "--Max_retrieved_per_topic", metavar="N",
              help="Use only the first N items of each query (in trec_eval's order; 0: none)."),
    Parameter("judged_only", "-J", "--Judged_docs_only", kind=FLAG,
              help="Drop unjudged items before computing anything (as trec_eval -J)."),
    Parameter("rel_info_format", "-R", "--Rel_info_format", default="qrels", show_default=True,
              help="Format of QRELS: qrels, or trec_eval's prefs, qrels_prefs (preferences: -m all_prefs) or "
                   "qrels_jg (judgment groups: -m qrels_jg)."),
    Parameter("results_format", "-T", "--Results_format", default="trec_results", help="Only 'trec_results'."),
    Parameter("debug_level", "-D", "--Debug_level", hidden=True),
    Parameter("num_docs", "-N", "--Number_docs_in_coll", metavar="N",
              help="Number of items in the collection (only utility's fourth coefficient uses it)."),
    Parameter("zscore_file", "-Z", "--Zscore", role=INPUT, metavar="FILE",
              help="Print z-scores: each query's values less the mean, over the deviation, given in FILE "
                   "(lines 'query measure mean deviation')."),
    Parameter("old_format", "-o", "--Output_old_results_format", kind=FLAG, hidden=True),
    Parameter("output", "--output", role=OUTPUT, default="-", show_default=True, metavar="FILE", help=OUTPUT_HELP),
    Parameter("score_precision", "--score-precision", choices=list(SCORE_PRECISIONS), default=DEFAULT_SCORE_PRECISION,
              show_default=True, help=SCORE_PRECISION_HELP),
)


def trec_eval(qrels_file, run_file, per_query, measures, complete, rel_level, nosummary, max_per_query, judged_only,
              rel_info_format, results_format, num_docs, zscore_file, output, score_precision, **refused):
    """trec_eval's command line (the keyword arguments of :data:`PARAMETERS`): the body of ``castregin trec_eval``."""
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
    depth = None if max_per_query is None else _whole(
        max_per_query, "-M", 0, "the number of items per query must be 0 or more (trec_eval crashes on a negative one)")
    collection = 0 if num_docs is None else _whole(num_docs, "-N")
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


#: The command :func:`castregin.cli.run` runs without click.
COMMAND = PlainCommand(PARAMETERS, trec_eval)
