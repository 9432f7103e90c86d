"""Command ``trec_eval``: trec_eval 9.0.8's command line and output, for scripts that call trec_eval.

The command's parameters and body are in :mod:`castregin.cli.trec_eval_plain`, which runs without click when the
command line is one of the forms scripts write (:mod:`castregin.cli.plain`); here is its click command, made from
the same parameters, which reads every other command line (help, errors) and documents the command.
"""

from __future__ import annotations

from . import main
from .options import click_parameter, option_group
from .plain import HELP_OPTION_NAMES
from .trec_eval_plain import PARAMETERS, trec_eval


@main.command("trec_eval", context_settings={"help_option_names": list(HELP_OPTION_NAMES)})
@option_group(*map(click_parameter, PARAMETERS))
def trec_eval_command(**params):
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
    trec_eval(**params)
