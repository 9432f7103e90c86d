"""Commands of the castregin CLI for the convert stage (registered on `castregin.cli.main`).

``convert questions|responses|passages``, ``pool`` and ``pool stats``. The work is done by
:mod:`castregin.track.convert` and :mod:`castregin.track.pool`; this module parses arguments, opens
outputs and prints warnings. The convert stage (and jsonschema with it) is imported by the commands
that use it, not by ``castregin --help``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from ..errors import InputError
from ..formats.common import without_cyclic_gc
from ..formats.output import OutputSet, check_outputs, write_text
from ..formats.trec import format_pool, read_pool, read_qrels, read_run, read_turn_list
from ..render.tables import RECORD_FORMATS
from ..track.pool import pool_files
from . import CastreginSubgroup, main
from .options import (
    InputPath,
    OutputDirectory,
    OutputPath,
    format_option,
    output_option,
    runs_argument,
    turns_option,
)

if TYPE_CHECKING:
    from ..track.convert import Warnings


def _progress(description: str, unit: str = "turn"):
    """A tqdm wrapper when standard error is a terminal, else nothing (logs stay clean)."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    def wrap(iterable: Iterable) -> Iterable:
        return tqdm(iterable, desc=description, unit=unit, file=sys.stderr, leave=False)

    return wrap


def _targets(runs: tuple[str, ...], output: str | None, out_dir: str | None, other_inputs: list[str],
             bank_out: str | None = None) -> list[str]:
    """Where each run goes; outputs that are inputs, or each other (``--bank-out`` too), are refused here."""
    if (output is None) == (out_dir is None):
        raise click.UsageError("give either -o FILE (or -o - for standard output) or --out-dir DIR")
    if output is not None and len(runs) != 1:
        raise click.UsageError(f"-o takes exactly one input run ({len(runs)} given); use --out-dir DIR")
    from ..track.convert import output_paths

    targets = output_paths(list(runs), output, out_dir)
    check_outputs([*targets, bank_out], [*runs, *other_inputs])
    return targets


#: Warnings of one kind shown per run without --verbose; the others are counted in one line.
SHOWN_PER_KIND = 3


def _report(warnings: Warnings, verbose: bool = False) -> None:
    """Each warning of a run with ``verbose``; else the first :data:`SHOWN_PER_KIND` of each kind and a count
    of the others (a large run has a hundred thousand duplicate questions, which nobody reads)."""
    if verbose:
        lines = warnings.lines()
    else:
        shown: dict[str, int] = {}
        lines = []
        for message, kind in warnings.events():
            shown[kind] = shown.get(kind, 0) + 1
            if shown[kind] <= SHOWN_PER_KIND:
                lines.append(message)
        for kind, messages in warnings.messages.items():
            if len(messages) > SHOWN_PER_KIND:
                more = len(messages) - SHOWN_PER_KIND
                lines.append(f"{more:,} more {kind} warning{'s' if more != 1 else ''} like these; --verbose "
                             "shows every one")
    # A write per thousand lines: click.echo costs microseconds a call, and one string of them all
    # would cost memory.
    for start in range(0, len(lines), 1000):
        click.echo("\n".join(f"castregin: warning: {line}" for line in lines[start:start + 1000]), err=True)


def _finish(total: Warnings, strict: bool) -> None:
    if total:
        click.echo(f"castregin: {total.summary()}", err=True)
        refused = total.strict_count()
        if strict and refused:
            raise InputError(f"{refused} warning{'s' if refused != 1 else ''} and --strict: nothing written")


@without_cyclic_gc
def _convert_all(runs, targets, reader, convert, strict: bool, inputs, bank=None, bank_out=None,
                 verbose: bool = False) -> None:
    """Convert each run into its target, one at a time; the outputs (and ``--bank-out``) are committed
    together, and only if every run converts (and, with ``--strict``, without a warning)."""
    from ..track.convert import Warnings, write_ranked

    total = Warnings()
    with OutputSet(inputs) as outputs:
        for path, target in zip(runs, targets, strict=True):
            warnings = Warnings()
            # Streamed and spooled: memory stays flat, whatever the run's size.
            with reader(path) as submission:
                written = write_ranked(outputs.open(target), convert(submission, warnings), submission.tag)
            _report(warnings, verbose)
            total.extend(warnings)
            if not written:
                # An empty run evaluates to zeros everywhere without a word: nothing is written instead.
                raise InputError(f"no line is left to write ({warnings.summary() if warnings else 'no turn'}); "
                                 "nothing written", source=str(path))
        _finish(total, strict)
        if bank_out is not None:
            outputs.write_text(bank_out, bank.text())


_OUTPUT_OPTIONS = [
    output_option(None, help="Write the run here (`-`: standard output); one input only."),
    click.option("--out-dir", type=OutputDirectory(), metavar="DIR", help="Write DIR/<input stem>.run for each input."),
]


def _output_options(function):
    for option in reversed(_OUTPUT_OPTIONS):
        function = option(function)
    return function


def _turns_option(function):
    return click.option("--turns", "turns_file", type=InputPath(), metavar="TURN_IDS.json",
                        help="Official turn list (e.g. 2022_evaluation_topics_turn_ids.json); other turns are "
                             "kept with a warning.")(function)


def _strict_option(function):
    function = click.option("-v", "--verbose", is_flag=True,
                            help=f"Print every warning (default: the first {SHOWN_PER_KIND} of each kind per run, "
                                 "and how many more).")(function)
    return click.option("--strict", is_flag=True,
                        help="Treat every warning as an error: exit 1 and write nothing.")(function)


@main.group()
def convert():
    """Turn JSON submissions (CAsT 2022 formats) into TREC runs.

    \b
    Examples (CAsT 2022's questions: the ReGIn bank, then the official pool, which holds Q2173):
      castregin convert questions runs/*.json --bank question_bank.json \\
          --bank 2022_mixed_initiative_question_pool.json --out-dir question_runs/
      castregin convert responses runs/*.json --bank response_bank.json --out-dir response_runs/
      castregin convert passages runs/*.json --out-dir passage_runs/
    """


@convert.command("questions")
@runs_argument("RUN.json...")
@click.option("--bank", "banks", multiple=True, required=True, type=InputPath(), metavar="BANK",
              help="Question bank (id -> text, or the official list of {question_id, question}); repeatable, "
                   "the first given wins on an id present in several.")
@click.option("--bank-out", type=OutputPath(), metavar="FILE",
              help="Write the merged bank with the new questions here.")
@_turns_option
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Keep the top N per turn (default: all).")
@_strict_option
@_output_options
def convert_questions_command(runs, banks, bank_out, turns_file, depth, strict, verbose, output, out_dir):
    """Mixed-initiative runs to TREC runs over a question bank.

    A `question` that is a bank id is kept; an id absent from the banks is dropped (warning). Free
    text is matched to the bank exactly, then after Unicode NFC and whitespace folding (letter case
    matters; several matches: the lowest id); otherwise it gets a new id, one above the highest,
    in order of first appearance. Several runs share one growing bank. A question repeated in a turn
    keeps its highest score; ranking is by score, ties in input order.

    \b
    Examples (CAsT 2022: the ReGIn bank, then the official pool, which holds Q2173):
      castregin convert questions runs/*.json --bank question_bank.json \\
        --bank 2022_mixed_initiative_question_pool.json --out-dir converted/
    """
    inputs = [*banks, *([turns_file] if turns_file else [])]
    targets = _targets(runs, output, out_dir, inputs, bank_out)
    from ..formats.submissions import read_mi_run
    from ..track.convert import Bank, iter_questions

    bank = Bank.read(banks, "Q")
    official = read_turn_list(turns_file) if turns_file else None

    def convert_one(submission, warnings):
        return iter_questions(submission, bank, official_turns=official, depth=depth, warnings=warnings,
                              progress=_progress(submission.source))

    _convert_all(runs, targets, read_mi_run, convert_one, strict, [*runs, *inputs], bank, bank_out, verbose)


@convert.command("responses")
@runs_argument("RUN.json...")
@click.option("--bank", "banks", multiple=True, required=True, type=InputPath(), metavar="RESPONSE_BANK",
              help="Response bank (id -> text); repeatable, the first given wins.")
@click.option("--passage-qrels", type=InputPath(), metavar="QRELS",
              help="NIST passage qrels: keep a response only if a provenance passage is graded >= the level.")
@click.option("--passage-rel-level", type=int, default=2, show_default=True, metavar="L",
              help="Passage grade that counts as relevant. The CAsT-ReGIn README does not give the "
                   "threshold; 2 is the one TREC CAsT 2022 uses for relevant passages (trec_eval -l2 on "
                   "the 0-4 NIST grades).")
@click.option("--depth", type=click.IntRange(min=1), default=3, show_default=True,
              help="Responses taken per turn, by rank, before the passage filter.")
@click.option("--bank-out", type=OutputPath(), metavar="FILE",
              help="Write the merged bank with the new responses here.")
@_turns_option
@_strict_option
@_output_options
def convert_responses_command(runs, banks, passage_qrels, passage_rel_level, depth, bank_out, turns_file, strict,
                              verbose, output, out_dir):
    """Main-task runs to the response runs CAsT-ReGIn judged.

    Per turn: the first --depth responses by rank (ties in input order); with --passage-qrels only
    those with a provenance passage graded >= --passage-rel-level; re-ranked 1.. with score 1/rank;
    texts mapped to response-bank ids like question texts (new ids only for kept responses).
    The responses the filter drops are counted by reason (turn not in the qrels, no provenance,
    no provenance passage judged, graded below the level), one warning line each with the first
    example; --strict does not refuse those, since the filter drops them as asked. A run left
    with no response at all is an error: nothing is written.

    The default level is 2: the CAsT-ReGIn README does not state the threshold, and 2 is TREC CAsT
    2022's threshold for a relevant passage (its evaluation uses trec_eval -l2 on the NIST grades 0-4).

    \b
    Examples:
      castregin convert responses runs/*.json --bank response_bank.json \\
          --passage-qrels 2022_passage_qrels.txt --bank-out new_response_bank.json --out-dir response_runs/
      castregin convert responses run.json --bank response_bank.json --depth 5 -o run.responses.run
    """
    given = click.get_current_context().get_parameter_source("passage_rel_level") is not ParameterSource.DEFAULT
    if given and passage_qrels is None:
        raise click.UsageError("--passage-rel-level needs --passage-qrels")
    level = passage_rel_level
    inputs = [*banks, *([turns_file] if turns_file else []), *([passage_qrels] if passage_qrels else [])]
    targets = _targets(runs, output, out_dir, inputs, bank_out)
    from ..formats.submissions import read_main_run
    from ..track.convert import Bank, iter_responses

    bank = Bank.read(banks, "R")
    qrels = read_qrels(passage_qrels) if passage_qrels else None
    official = read_turn_list(turns_file) if turns_file else None

    def convert_one(submission, warnings):
        return iter_responses(submission, bank, depth=depth, passage_qrels=qrels, rel_level=level,
                              official_turns=official, warnings=warnings, progress=_progress(submission.source))

    _convert_all(runs, targets, read_main_run, convert_one, strict, [*runs, *inputs], bank, bank_out, verbose)


@convert.command("passages")
@runs_argument("RUN.json...")
@_turns_option
@_strict_option
@_output_options
def convert_passages_command(runs, turns_file, strict, verbose, output, out_dir):
    """Main-task runs to the passage rankings NIST judged.

    Per turn, as the official CAsT tools did: the provenance passages of the responses in rank order,
    each in provenance order, each passage once (first occurrence); scores 100, 99, 98, ...; ranks 1..

    \b
    Examples:
      castregin convert passages runs/*.json --out-dir passage_runs/
      castregin convert passages run.json --turns 2022_turn_ids.json -o run.passages.run
    """
    inputs = [turns_file] if turns_file else []
    targets = _targets(runs, output, out_dir, inputs)
    official = read_turn_list(turns_file) if turns_file else None
    from ..formats.submissions import read_main_run
    from ..track.convert import iter_passages

    def convert_one(submission, warnings):
        return iter_passages(submission, official_turns=official, warnings=warnings,
                             progress=_progress(submission.source))

    _convert_all(runs, targets, read_main_run, convert_one, strict, [*runs, *inputs], verbose=verbose)


class _PoolGroup(CastreginSubgroup):
    """``pool``: ``pool RUN...`` builds the pool (the ``build`` command), ``pool stats RUN...`` describes it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["build", *args]  # `castregin pool RUN...` as before pool had subcommands
        return super().parse_args(ctx, args)


@main.group("pool", cls=_PoolGroup)
def pool_group():
    """Judging pools: build one from runs, or see what each run brought into it.

    `castregin pool RUN...` is `castregin pool build RUN...`; a run file named `build` or `stats`
    is then given as ./build or ./stats.

    \b
    Examples:
      castregin pool runs/*.run --depth 1 -o question_pool_depth_1.pool
      castregin pool stats runs/*.run --pool question_pool_depth_1.pool
    """


@pool_group.command("build")
@runs_argument("RUN...")
@click.option("--depth", type=click.IntRange(min=1), default=1, show_default=True,
              help="Items taken from each run per turn, by the rank column.")
@turns_option("Pool only these turns (e.g. 2022_evaluation_topics_turn_ids.json): one id a line, a qrels or "
              "run, or turn-ids JSON; the runs' other turns are left out, with a warning.")
@output_option()
def pool_command(runs, depth, turns_file, output):
    """The judging pool: per turn, the union of each run's top --depth items (by the rank column).

    Written as a TREC run with rank 1, score 0.0 and tag `dummytag`, sorted by turn and item.
    `castregin pool RUN...` is this command.

    \b
    Examples:
      castregin pool build runs/*.run --depth 1 -o question_pool_depth_1.pool
      castregin pool build runs/ --depth 3 --turns mi_turns.txt -o mi_pool_depth_3.pool
    """
    inputs = [*runs, *([turns_file] if turns_file else [])]
    check_outputs([output], inputs)
    turns = read_turn_list(turns_file) if turns_file else None
    pool = pool_files(runs, depth, progress=_progress("pool", unit="run"))
    if turns is not None:
        from ..track.pool import keep_turns

        pool, left_out = keep_turns(pool, turns, f"--turns {turns_file}")
        if left_out:
            click.echo(f"castregin: warning: {left_out}", err=True)
    write_text(output, format_pool(pool), inputs)


@pool_group.command("stats")
@runs_argument("RUN...")
@click.option("--pool", "pool_file", type=InputPath(), metavar="POOL",
              help="The pool (default: the runs' own pool at --depth).")
@click.option("--depth", type=click.IntRange(min=1), default=1, show_default=True,
              help="What a run contributes: its top --depth items by the rank column.")
@format_option(RECORD_FORMATS)
@output_option()
def pool_stats_command(runs, pool_file, depth, fmt, output):
    """Pool size per turn, each run's contributions (and those only it brought in), overlaps of runs.

    \b
    Examples:
      castregin pool stats runs/*.run --depth 1
      castregin pool stats runs/ --pool question_pool_depth_1.pool --format json -o pool_stats.json
    """
    from ..evaluation.evaluate import run_names
    from ..render.analysis import pool_stats_report
    from ..track.pool import pool_statistics

    check_outputs([output], [*runs, *([pool_file] if pool_file else [])])
    run_list = [read_run(path) for path in runs]
    pool = read_pool(pool_file) if pool_file else None
    if pool is not None and not any(turn in pool for run in run_list for turn in run.scores):
        click.echo(f"castregin: warning: {pool_file} shares no turn with the runs (the pool's look like "
                   f"{min(pool)!r}, the runs' like {min(run_list[0].scores)!r}): every contribution is 0; check the "
                   "turn ids", err=True)
    stats = pool_statistics(run_list, run_names(run_list), depth, pool)
    write_text(output, pool_stats_report(stats, fmt))
