"""Command ``sample_eval``: the command line and output of NIST's sample_eval.pl (inferred measures), for scripts.

The command line is read, and the command run, by :mod:`castregin.cli.sample_eval_plain` (without click when
:func:`castregin.cli.run` can); here is its click command, made from the same drop-in, with the help text.
"""

from __future__ import annotations

from . import main
from .options import drop_in_argument, run_drop_in
from .plain import DROP_IN_SETTINGS
from .sample_eval_plain import SAMPLE_EVAL


@main.command("sample_eval", context_settings=DROP_IN_SETTINGS, add_help_option=True)
@drop_in_argument(SAMPLE_EVAL)
def sample_eval_command(args):
    """sample_eval.pl's command line and output: xinfAP, infNDCG, iP@k of a stratified sample of the pool.

    Prints what NIST's `sample_eval.pl [-q] QRELS RUN` (10 Oct 2011) prints, byte for byte (tested
    against the Perl script): infAP (xinfAP), infNDCG, the interpolated precision at recall 0.0-1.0,
    iP10, iP50, iP1000, inum_rel_ret, inum_rel and num_ret over the topics of both files; -q prints a
    block per topic first. QRELS lines are `topic 0 item stratum label`, label -1 for a pooled item
    left out of the sample (`castregin pool --sample --strata-out` writes them); labels above 0 are
    relevant. Its quirks are kept and listed in the documentation (docs/sampling.md): the run's topics
    lose leading zeros, only 1000 items a topic count, inum_rel sums every qrels topic.

    Where the script would misread (a line of the wrong width, an item twice) castregin refuses with
    one line; no shared topic is an error (the script dies dividing by zero). castregin's own option:
    --output FILE (default: standard output).

    \b
    Examples:
      castregin sample_eval stratified.qrel bm25.run
      castregin sample_eval -q stratified.qrel bm25.run --output bm25.sample_eval
    """
    run_drop_in(SAMPLE_EVAL, args)
