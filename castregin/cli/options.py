"""Options several commands share, defined once: ``-o``, ``--qrels``, ``-m``, ``--rel-level``,
``--score-precision``, ``--format``, and the ``RUN...`` argument of every command that takes several runs; the
types of parameters that name files (:class:`InputPath`, :class:`OutputPath`, :class:`OutputDirectory`) and
of finite numbers.

Every parameter that names a file has one of the path types: the command line then checks, before the
command runs, that no output is one of its inputs, and every output the command writes is checked against
all of them (:func:`castregin.formats.output.declared_inputs`). A test walks every command so that a new
file option cannot go without.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import click

from ..evaluation.measures import DEFAULT_MEASURES
from ..evaluation.ranking import DEFAULT_SCORE_PRECISION, DEFAULT_TOP_K, SCORE_PRECISIONS
from ..formats.common import expand_run_paths, split_named
from ..formats.trec import LABEL_RANGE, read_qrels, read_run
from ..limits import MAX_CUTOFF
from . import plain
from .plain import OUTPUT_HELP, SCORE_PRECISION_HELP


class InputPath(click.ParamType):
    """A file (or directory) a command reads, ``-`` for standard input; ``named``: ``[NAME=]PATH``.

    The value stays the text given; :meth:`paths` says which files it names.
    """

    name = "input"

    def __init__(self, named: bool = False):
        self.named = named

    def paths(self, value: str) -> list[str]:
        """The files ``value`` names."""
        return [split_named(value)[1] if self.named else value]


class OutputPath(click.ParamType):
    """A file a command writes, ``-`` for standard output."""

    name = "output"


class OutputDirectory(click.ParamType):
    """A directory a command writes files into (or replaces)."""

    name = "directory"


class FiniteFloat(click.FloatRange):
    """A finite number, within bounds if given (as :class:`click.FloatRange`): every float option's type.

    click's float types take ``nan`` (which every bound lets through, no comparison with NaN being true),
    ``inf`` and ``-inf``; a NaN alpha would mark nothing significant, without a word.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.min is None and self.max is None:
            self.name = "float"  # shown as FLOAT, as click's own float type

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()


def command_inputs(command: click.Command, params: dict) -> list[str]:
    """Every file the parameters of ``command`` (as parsed into ``params``) name as inputs."""
    inputs = []
    for param in command.params:
        value = params.get(param.name)
        if isinstance(param.type, InputPath) and value is not None:
            for one in value if isinstance(value, (tuple, list)) else [value]:
                inputs.extend(param.type.paths(one))
    return inputs


def command_outputs(command: click.Command, params: dict) -> list[str]:
    """Every file (not directory) the parameters of ``command`` name as outputs."""
    outputs: list[str] = []
    for param in command.params:
        value = params.get(param.name)
        if isinstance(param.type, OutputPath) and value is not None:
            outputs.extend(value if isinstance(value, (tuple, list)) else [value])
    return outputs


def standard_output_options(command: click.Command, params: dict) -> list[str]:
    """The options of ``command`` whose outputs (as parsed into ``params``) go to standard output (``-``)."""
    return [max(param.opts, key=len) if param.opts else param.name or "" for param in command.params
            if isinstance(param.type, OutputPath) and params.get(param.name) == "-"]


def click_parameter(parameter: plain.Parameter) -> Callable:
    """The click option or argument (a decorator) of a parameter of a plain command (:mod:`castregin.cli.plain`): its
    files typed :class:`InputPath` or :class:`OutputPath`, its choices a :class:`click.Choice`."""
    kind = {plain.INPUT: InputPath(), plain.OUTPUT: OutputPath()}.get(parameter.role or "")
    if parameter.choices is not None:
        kind = click.Choice(list(parameter.choices))
    if not parameter.flags:
        return click.argument(parameter.name, type=kind, metavar=parameter.metavar)
    settings: dict = {"type": kind, "metavar": parameter.metavar, "help": parameter.help, "hidden": parameter.hidden}
    if parameter.default is not None:
        settings["default"] = parameter.default
    if parameter.show_default:
        settings["show_default"] = True
    if parameter.kind == plain.FLAG:
        settings["is_flag"] = True
    elif parameter.kind == plain.MULTIPLE:
        settings["multiple"] = True
    return click.option(*parameter.flags, parameter.name, **settings)


def drop_in_argument(command: plain.DropInCommand) -> Callable:
    """The one argument of a drop-in's click command (:class:`castregin.cli.plain.DropInCommand`): every word, as it
    is, for the drop-in's own reader; its ``metavar`` the original's synopsis."""
    return click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar=command.metavar)


def run_drop_in(command: plain.DropInCommand, args: tuple[str, ...]) -> None:
    """A drop-in's body on the words click gave it (:func:`drop_in_argument`): what the plain path runs, the reader's
    refusals said as click's usage errors."""
    try:
        keywords = command.read(list(args))
    except plain.UsageError as err:
        raise click.UsageError(str(err)) from None
    command.function(**keywords)


def output_option(default: str | None = "-", help: str = OUTPUT_HELP):
    """``-o/--output FILE``; ``-`` is standard output."""
    return click.option("-o", "--output", type=OutputPath(), default=default, show_default=default is not None,
                        metavar="FILE", help=help)


def _expand_runs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(expand_run_paths(value))


def runs_argument(metavar: str = "RUN...", required: bool = True):
    """``RUN...``: one or more runs; a directory stands for the files in it (see :func:`expand_run_paths`)."""
    return click.argument("runs", nargs=-1, required=required, type=InputPath(), metavar=metavar,
                          callback=_expand_runs)


def format_option(choices, default: str = "table"):
    """``--format`` among ``choices``."""
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default=default, show_default=True)


def qrels_option(function, required: bool = True):
    """``--qrels [NAME=]QRELS``, repeatable."""
    return click.option("--qrels", "qrels_specs", multiple=True, required=required, type=InputPath(named=True),
                        metavar="[NAME=]QRELS",
                        help="Qrels to evaluate against; repeat for several, optionally named "
                             "(mi=subset.qrel).")(function)


def scores_option(function):
    """``--scores FILE``, repeatable: per-turn scores computed elsewhere, instead of ``RUN...`` and ``--qrels``."""
    return click.option("--scores", "score_files", multiple=True, type=InputPath(), metavar="FILE",
                        help="Per-turn scores computed elsewhere, instead of RUN... and --qrels: the table of "
                             "evaluate -q or nuggets score -q (--format tsv, csv or json; columns run, qrels, "
                             "measure, turn, value); repeatable. -m then picks measures by the names in the "
                             "table.")(function)


def runs_or_scores(runs, qrels_specs, score_files) -> None:
    """A usage error unless the command got ``RUN...`` with ``--qrels``, or ``--scores`` alone."""
    if score_files and (runs or qrels_specs):
        raise click.UsageError("give RUN... with --qrels, or --scores, not both")
    if not score_files and not runs:
        raise click.UsageError("missing RUN... (or --scores FILE)")
    if not score_files and not qrels_specs:
        raise click.UsageError("missing option '--qrels' (or --scores FILE instead of RUN...)")


def measure_option(function):
    """``-m/--measure``, repeatable."""
    return click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
                        help="Measure, repeatable; ir_measures or trec_eval names, trec_eval's sets (all_trec, "
                             "official) and families (P.1,3,5). `castregin measures` lists them. Default: "
                             f"{' '.join(DEFAULT_MEASURES)}.")(function)


def _one_measure(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
    if len(value) > 1:
        raise click.BadParameter(f"the runs are ranked by one measure, {len(value)} given ({', '.join(value)}): give "
                                 "one (castregin analyze correlation compares the rankings under several)")
    return value[0] if value else None


def single_measure_option(help: str, default: str | None = None):
    """``-m/--measure``, once: a command that ranks runs by one measure refuses a second ``-m`` (click would keep the
    last one given, in silence, where every other command's ``-m`` is repeatable)."""
    return click.option("-m", "--measure", multiple=True, default=(default,) if default else (), metavar="MEASURE",
                        callback=_one_measure, help=help + (f" Default: {default}." if default else ""))


def rel_level_option(function):
    """``--rel-level``: trec_eval's ``-l``."""
    return click.option("--rel-level", default=2, show_default=True, type=click.IntRange(1, LABEL_RANGE[1]),
                        help="Label at or above which an item is relevant for binary measures "
                             "(trec_eval -l).")(function)


def turns_option(help: str):
    """``--turns FILE``: a turn list (one id a line, a qrels or run, or turn-ids JSON), read by
    :func:`castregin.formats.trec.read_turn_list`; an input, so never an output."""
    return click.option("--turns", "turns_file", type=InputPath(), metavar="FILE", help=help)


def score_precision_option(function):
    """``--score-precision double|float``: how scores compare when items are ranked (each command that evaluates)."""
    return click.option("--score-precision", type=click.Choice(list(SCORE_PRECISIONS)),
                        default=DEFAULT_SCORE_PRECISION, show_default=True, help=SCORE_PRECISION_HELP)(function)


def top_k_option(function):
    """``--top-k K``: k of the overlap of two rankings of the runs' top k."""
    return click.option("--top-k", "top_k", default=DEFAULT_TOP_K, show_default=True,
                        type=click.IntRange(1, MAX_CUTOFF), metavar="K",
                        help="k of the top-k overlap: the share of the k best runs under A that are among the "
                             "k best under B (k at most the number of runs; where equal scores straddle the "
                             "k-th place, the mean over every order of the tied runs).")(function)


def evaluation_options(*between, scores: bool = False):
    """What every command that evaluates runs takes: ``RUN...``, ``--qrels``, ``-m``, the options ``between``
    (click decorators, in the order ``--help`` lists them), ``--rel-level`` and ``--score-precision``; with
    ``scores``, ``--scores`` too, ``RUN...`` and ``--qrels`` then being optional (:func:`runs_or_scores`)."""
    return option_group(runs_argument(required=not scores), lambda f: qrels_option(f, required=not scores),
                        *([scores_option] if scores else []), measure_option, *between, rel_level_option,
                        score_precision_option)


def usage_error_of(parse: Callable, value, param_hint: str | None = None):
    """``parse(value)``, its :class:`~castregin.errors.InputError` a usage error of the option (exit 2): for an
    option's value that a stage's parser checks (strata, measure names, criteria)."""
    from ..errors import InputError

    try:
        return parse(value)
    except InputError as err:
        raise click.BadParameter(err.problem, param_hint=param_hint) from None


def check_prefix_option(prefix: str) -> None:
    """``--prefix`` names files (``<prefix>_<criterion>.qrel``): one that cannot is a usage error."""
    from ..errors import InputError
    from ..formats.aggregation import check_file_name_part

    try:
        check_file_name_part(prefix)
    except InputError as err:
        raise click.BadParameter(str(err), param_hint="--prefix") from None


def option_group(*options: Callable) -> Callable:
    """One decorator for several click decorators (options, arguments), given in the order ``--help`` lists them."""

    def decorate(function):
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def input_paths(run_paths, qrels_specs) -> list[str]:
    """The files of a command's ``RUN...`` and ``--qrels [NAME=]QRELS``, in that order."""
    return [*run_paths, *(split_named(spec)[1] for spec in qrels_specs)]


def read_runs_and_qrels(run_paths, qrels_specs, measures=(), columns_first: bool = False) -> tuple[list, list]:
    """A command's ``RUN...`` and ``--qrels [NAME=]QRELS``, read: the runs, then the qrels (named); as diversity
    qrels (``topic subtopic item label``) when one of the parsed ``measures`` is ndeval's, else as qrels or
    stratified qrels (``turn 0 item stratum label``), as their first line says. ``columns_first``: runs that are
    not small (:func:`castregin.evaluation.small.small_inputs`) are parsed into columns, then made the same dicts
    (a third of the line reader's time on large runs; the rank column is not kept)."""
    from ..formats.diversity import diversity_reader

    diversity = diversity_reader(measures)
    runs = _runs_through_columns(run_paths) if columns_first else None
    if runs is None:
        runs = [read_run(path) for path in run_paths]
    # Stratified qrels (five columns) too: the inferred measures read their strata, the others their labels.
    return runs, [diversity(path, name) if diversity else read_qrels(path, name, stratified=None)
                  for name, path in map(split_named, qrels_specs)]


def _runs_through_columns(run_paths) -> list | None:
    """The runs parsed into columns and made dicts, or None where they are small (the line reader is as quick)."""
    from ..evaluation.small import small_inputs

    if small_inputs(run_paths, []):
        return None
    from ..arrays import choose_allocator
    from ..formats import columnar

    choose_allocator()
    return [columnar.run_to_dict(columnar.read_run(path)) for path in run_paths]


def criteria_list(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    """``--criteria NAME,...`` (a click callback): the names, at least one, none twice."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise click.BadParameter("give at least one criterion, e.g. relevance,novelty,diversity")
    from ..labels import distinct_criteria

    return usage_error_of(distinct_criteria, names)
