"""Command ``sample_eval``: the command line and output of NIST's sample_eval.pl (inferred measures), for scripts."""

from __future__ import annotations

import click

from .. import formats
from . import main

_DROP_IN = {"help_option_names": ["--help"], "ignore_unknown_options": True, "allow_interspersed_args": False}


@main.command("sample_eval", context_settings=_DROP_IN, add_help_option=True)
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="[-q] QRELS RUN")
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
    from ..evaluation.inferred import sample_eval
    from ..formats.strata import read_stratified_qrels
    from ..render.sample_eval import sample_eval_text
    from .gdeval import _castregin_options  # --output FILE, as gdeval and ndeval take it

    rest, rewrite, output = _castregin_options(args)
    if rewrite:
        raise click.UsageError("--rewrite-ids is gdeval's and ndeval's: sample_eval reads topics as they are")
    per_topic = bool(rest) and rest[0] == "-q"
    if per_topic:
        rest.pop(0)
    unknown = next((arg for arg in rest if arg.startswith("-") and arg != "-"), None)
    if unknown is not None:
        raise click.UsageError(f"No such option '{unknown}' (sample_eval.pl's only option is -q)")
    if len(rest) != 2:
        raise click.UsageError("expected [-q] QRELS RUN (sample_eval.pl's arguments)")
    qrels_file, run_file = rest
    formats.ensure_not_input(output, [qrels_file, run_file])
    result = sample_eval(read_stratified_qrels(qrels_file), formats.read_run(run_file))
    formats.write_text(output, sample_eval_text(result, per_topic))
