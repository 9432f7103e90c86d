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
from ..formats.common import plain_number_text, without_cyclic_gc
from ..formats.output import OutputSet, check_outputs, write_text
from ..formats.trec import format_pool, read_pool, read_qrels, read_run, read_turn_list
from ..render.tables import RECORD_FORMATS
from . import CastreginSubgroup, main
from .options import (
    FiniteFloat,
    InputPath,
    OutputDirectory,
    OutputPath,
    format_option,
    option_group,
    output_option,
    rel_level_option,
    runs_argument,
    turns_option,
    usage_error_of,
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


_output_options = option_group(
    output_option(None, help="Write the run here (`-`: standard output); one input only."),
    click.option("--out-dir", type=OutputDirectory(), metavar="DIR", help="Write DIR/<input stem>.run for each input."),
)


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
              help="Items taken from each run per turn, by the rank column (with --strategy: the items the "
                   "strategy may judge; default then: all).")
@turns_option("Pool only these turns (e.g. 2022_evaluation_topics_turn_ids.json): one id a line, a qrels or "
              "run, or turn-ids JSON; the runs' other turns are left out, with a warning.")
@click.option("--sample", "strata", metavar="STRATA", callback=lambda ctx, param, value: _strata(value),
              help="A stratified sample of the pool, strata by the best rank any run gives an item: "
                   "1-10:1,11-50:0.5,51-1000:10% (or FIRST-LAST:#N, N items a turn). The pool is then the "
                   "sampled items; see --strata-out.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of --sample: the same seed, runs and strata give the same sample.")
@click.option("--strata-out", type=OutputPath(), metavar="FILE",
              help="With --sample: every pooled item with its stratum (turn 0 item stratum label), as "
                   "sample_eval reads it; -1 for the items not sampled, and for sampled ones --qrels lacks.")
@click.option("--strategy", type=click.Choice(["depth", "mtf", "bandit"]),
              help="Adaptive judging: the items the strategy judges next within --budget (docs/sampling.md).")
@click.option("--budget", type=click.IntRange(min=1), metavar="N",
              help="With --strategy: judgments per turn, those in --qrels included.")
@click.option("--qrels", "qrels_file", type=InputPath(), metavar="QRELS",
              help="The judgments so far: labels of --sample's items for --strata-out, and what --strategy "
                   "has seen (an item it has not seen judged counts as non-relevant).")
@rel_level_option
@output_option()
def pool_command(runs, depth, turns_file, strata, seed, strata_out, strategy, budget, qrels_file, rel_level, output):
    """The judging pool: per turn, the union of each run's top --depth items (by the rank column).

    Written as a TREC run with rank 1, score 0.0 and tag `dummytag`, sorted by turn and item (with
    --strategy: each turn's items in the order to judge them, ranked 1, 2, ...).
    `castregin pool RUN...` is this command.

    --sample pools down to the last stratum's rank and writes the seeded sample of each stratum as the
    pool (what to judge); --strata-out the stratified qrels for `castregin sample_eval` (run again with
    --qrels once judged). --strategy depth|mtf|bandit with --budget N writes the next items to judge
    per turn (Losada et al.'s adaptive judging; give the judgments so far with --qrels and run again).

    \b
    Examples:
      castregin pool build runs/*.run --depth 1 -o question_pool_depth_1.pool
      castregin pool build runs/ --depth 3 --turns mi_turns.txt -o mi_pool_depth_3.pool
      castregin pool runs/ --sample 1-10:1,11-50:0.5,51-1000:10% --seed 7 -o sample.pool \\
          --strata-out strata.qrel
      castregin pool runs/ --sample 1-10:1,11-50:0.5,51-1000:10% --seed 7 -o sample.pool \\
          --strata-out stratified.qrel --qrels judged.qrel
      castregin pool runs/ --strategy mtf --budget 20 --qrels judged.qrel -o next.pool
    """
    inputs = [*runs, *([turns_file] if turns_file else []), *([qrels_file] if qrels_file else [])]
    check_outputs([output, strata_out], inputs)
    ctx = click.get_current_context()
    depth_given = ctx.get_parameter_source("depth") is not ParameterSource.DEFAULT
    if strata is not None and (strategy is not None or depth_given):
        raise click.UsageError("--sample takes its depth from its strata: give neither --depth nor --strategy")
    if (strategy is None) != (budget is None):
        raise click.UsageError("--strategy and --budget go together")
    if strata_out is not None and strata is None:
        raise click.UsageError("--strata-out needs --sample")
    if qrels_file is not None and strategy is None and strata_out is None:
        raise click.UsageError("--qrels goes with --strategy, or with --sample and --strata-out (which it labels)")
    from ..formats.strata import format_stratified_qrels
    from ..track.pool import build_pool

    built = build_pool(runs, depth if strategy is None or depth_given else None,
                       turns=read_turn_list(turns_file) if turns_file else None, turns_source=f"--turns {turns_file}",
                       strata=strata, seed=seed, strategy=strategy,
                       budget=budget, judged=read_qrels(qrels_file) if qrels_file else None, rel_level=rel_level,
                       progress=_progress("pool", unit="run"))
    if built.left_out:
        click.echo(f"castregin: warning: {built.left_out}", err=True)
    if strategy is not None and not built.pool:
        click.echo(f"castregin: warning: every turn has spent its budget of {budget} judgments or judged all "
                   "its pool: nothing left to judge", err=True)
    with OutputSet(inputs) as outputs:
        outputs.write_text(output, format_pool(built.pool, ordered=strategy is not None))
        if strata_out is not None and built.stratified is not None:
            if built.unjudged and qrels_file is not None:
                click.echo(f"castregin: warning: {built.unjudged} sampled items have no judgment in {qrels_file}; "
                           "written as -1 (not sampled)", err=True)
            outputs.write_text(strata_out, format_stratified_qrels(built.stratified))
    for row in built.statistics:
        click.echo(f"castregin: stratum {row['stratum']} (ranks {row['ranks']}, {row['sample']}): "
                   f"{row['sampled']} of {row['pooled']} pooled items sampled", err=True)


def _strata(text: str | None):
    """--sample's strata, read before any file (a usage error)."""
    if text is None:
        return None
    from ..track.sampling import parse_strata

    return usage_error_of(parse_strata, text, "--sample")


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


def _budgets(ctx: click.Context, param: click.Parameter, value: str | None) -> list[int] | None:
    if value is None:
        return None
    parts = [part for part in value.split(",") if part.strip()]
    try:
        if not all(plain_number_text(part) for part in parts):  # int() reads every script's digits and 1_0
            raise ValueError(value)
        budgets = [int(part) for part in parts]
    except ValueError:
        raise click.BadParameter(f"{value!r}: expected judgments a turn, such as 1,2,5,10,20") from None
    if not budgets or min(budgets) < 1:
        raise click.BadParameter("expected judgments a turn of 1 or more, such as 1,2,5,10,20")
    return budgets


@pool_group.command("simulate")
@runs_argument("RUN...")
@click.option("--qrels", "qrels_file", required=True, type=InputPath(), metavar="QRELS",
              help="The judgments taken as complete (an item they lack is non-relevant).")
@click.option("--depth", type=click.IntRange(min=1), metavar="K",
              help="The pool: each run's top K items by the rank column (default: all it ranks).")
@click.option("--strategy", "strategies", multiple=True, type=click.Choice(["depth", "mtf", "bandit"]),
              help="A judging strategy, repeatable (default: all three).")
@click.option("--budgets", callback=_budgets, metavar="N,...",
              help="Judgments a turn to try (default: 1 to 20, then about 10% apart, up to the largest pool).")
@click.option("-m", "--measure", default="AP", show_default=True, metavar="MEASURE",
              help="The measure the runs are ranked by.")
@click.option("--threshold", type=FiniteFloat(-1, 1), default=0.9, show_default=True,
              help="The Kendall's tau whose judgments the summary gives.")
@rel_level_option
@click.option("--plot", type=OutputPath(), metavar="FILE.png",
              help="Relevant items found and Kendall's tau against judgments, a line per strategy.")
@format_option(RECORD_FORMATS)
@output_option()
def pool_simulate_command(runs, qrels_file, depth, strategies, budgets, measure, threshold, rel_level, plot, fmt,
                          output):
    """Simulate adaptive judging on a complete qrels: judgments vs relevant found and vs Kendall's tau.

    Per turn the pool is the runs' top --depth; each strategy (depth, mtf, bandit: docs/sampling.md)
    judges it in its order, seeing the labels of --qrels. At each budget (judgments a turn) the runs
    are ranked by their mean --measure on what was judged (the rest non-relevant) and compared with
    their ranking on all of the pool's labels (Kendall's tau-b). The summary gives, per strategy, the
    judgments from which tau stays at or above --threshold ("within the budgets tried" when --budgets
    stops short of the largest turn's pool).

    \b
    Examples:
      castregin pool simulate runs/*.run --qrels question_relevance_all.qrel --plot simulation.png
      castregin pool simulate runs/ --qrels all.qrel --depth 10 -m nDCG@3 --strategy mtf --format csv
    """
    from ..evaluation.pooling import simulate_pooling
    from ..render.sampling import simulation_report

    inputs = [*runs, qrels_file]
    check_outputs([output, plot], inputs)
    run_list = [read_run(path) for path in runs]
    qrels = read_qrels(qrels_file)
    from . import warnings_as_lines

    with warnings_as_lines():
        simulation = simulate_pooling(run_list, qrels, list(strategies) or ["depth", "mtf", "bandit"], budgets,
                                      measure, rel_level, depth, threshold)
    with OutputSet(inputs) as outputs:
        outputs.write_text(output, simulation_report(simulation, fmt))
        if plot is not None:
            from ..render.plots import pooling_simulation_plot

            title = (f"{len(run_list)} runs, {simulation.turns} turns, pool of {simulation.pool} "
                     f"({'all ranked' if depth is None else f'depth {depth}'}), {measure}")
            outputs.write_bytes(plot, pooling_simulation_plot(simulation.points, threshold, title))
