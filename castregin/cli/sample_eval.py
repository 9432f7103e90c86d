"""Command ``sample_eval``: the command line and output of NIST's sample_eval.pl (inferred measures), for scripts."""

from __future__ import annotations

import click

from .. import formats
from . import main, warnings_as_lines

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
    from ..evaluation.inferred import SAMPLE_EVAL_BYTE_ORDER_MARK, sample_eval
    from ..formats.common import note_byte_order_mark, read_bytes, stem
    from ..formats.strata import parse_stratified_qrels
    from ..formats.trec import parse_run
    from ..render.sample_eval import sample_eval_text
    from .gdeval import _castregin_options, expect_files  # --output FILE, as gdeval and ndeval take it

    rest, rewrite, output = _castregin_options(args)
    if rewrite:
        raise click.UsageError("--rewrite-ids is gdeval's and ndeval's: sample_eval reads topics as they are")
    per_topic = bool(rest) and rest[0] == "-q"
    if per_topic:
        rest.pop(0)
    expect_files(rest, "-q".__eq__, "sample_eval.pl: [-q] QRELS RUN")
    qrels_file, run_file = rest
    formats.ensure_not_input(output, [qrels_file, run_file])
    with warnings_as_lines():  # each file read once (a pipe too); a byte-order mark said, as the script keeps it
        qrels_data, run_data = read_bytes(qrels_file), read_bytes(run_file)
        for data, path in ((qrels_data, qrels_file), (run_data, run_file)):
            note_byte_order_mark(data, formats.display_name(path), SAMPLE_EVAL_BYTE_ORDER_MARK)
    qrels = parse_stratified_qrels(qrels_data, formats.display_name(qrels_file), stem(qrels_file))
    result = sample_eval(qrels, parse_run(run_data, formats.display_name(run_file)))
    formats.write_text(output, sample_eval_text(result, per_topic))
