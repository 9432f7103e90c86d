"""The click side of the command line: the group :data:`main`, its command classes and the table of commands.

Imported on first use of these names from :mod:`castregin.cli` (they are served from there), so that a command
:func:`castregin.cli.run` runs without click does not import it. What is done around each command (the checks of
its files, the report of its errors) is :mod:`castregin.cli`'s, shared with that path.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
from typing import NamedTuple

import click

from . import checking_files, reporting_errors
from .plain import HELP_OPTION_NAMES


class CommandEntry(NamedTuple):
    """Where a command is defined, and the summary ``castregin --help`` lists for it.

    The summary is the command's own (``help``: the first paragraph of its docstring, which click
    shortens as for any command; ``short_help``: given in the decorator, shown whole), kept in
    ``commands.json`` beside this module so that the list of commands needs none of their modules.
    ``make docs-cli`` writes that file from the commands themselves (``docs/gen_cli.py``), and a test
    fails when it differs from them.
    """

    module: str
    help: str | None = None
    short_help: str | None = None


#: The file of every command's module and summary (see :class:`CommandEntry`).
COMMAND_TABLE = os.path.join(os.path.dirname(__file__), "commands.json")


def _read_command_table() -> dict[str, CommandEntry]:
    with open(COMMAND_TABLE, encoding="utf-8") as table:
        return {name: CommandEntry(**fields) for name, fields in json.load(table).items()}


#: Every command: its module, so that running one imports only that module, and its summary.
COMMANDS = _read_command_table()


def _convert_ascii_number(self, value, param, ctx):
    # Python's int() and float(), which click's number types call, read "٢", a full-width 2 and "1_0" (see
    # castregin.formats.common.plain_number_text, the one rule of every reader of numbers).
    if isinstance(value, str) and not (value.isascii() and "_" not in value):
        self.fail(f"{value!r} is not a number written with the ASCII digits 0-9", param, ctx)
    return super(type(self), self).convert(value, param, ctx)


_ASCII_NUMBER_TYPES: dict[type, type] = {}


def ascii_numbers(kind: click.ParamType) -> click.ParamType:
    """``kind`` itself, or for a number type (``int``, ``click.IntRange``, ``FiniteFloat`` ...) a copy that takes the
    ASCII digits only; a subclass of its class, so that ``--help`` still shows its range."""
    if not isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        return kind
    cls = type(kind)
    ascii_cls = _ASCII_NUMBER_TYPES.get(cls)
    if ascii_cls is None:
        ascii_cls = _ASCII_NUMBER_TYPES[cls] = type(cls.__name__, (cls,), {"convert": _convert_ascii_number})
    ascii_kind = copy.copy(kind)
    ascii_kind.__class__ = ascii_cls
    return ascii_kind


class CastreginCommand(click.Command):
    """A command whose errors about a Python argument (``max_turns``) name the option (``--max-turns``), and
    whose number options take the ASCII digits only (:func:`ascii_numbers`).

    Before it runs, no output file may be an input (any parameter typed as one, see
    :mod:`castregin.cli.options`), and while it runs every output it writes is checked against all of them; two
    outputs on standard output (``qrels merge --provenance -``, -o being ``-``) are a usage error.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for param in self.params:
            param.type = ascii_numbers(param.type)

    def invoke(self, ctx: click.Context):
        from .options import command_inputs, command_outputs, standard_output_options

        to_stdout = standard_output_options(self, ctx.params)
        if len(to_stdout) > 1:
            raise click.UsageError(f"{' and '.join(to_stdout)} {'both' if len(to_stdout) == 2 else 'all'} write to "
                                   "standard output ('-'); give all but one of them a file", ctx=ctx)
        flags = {param.name: max(param.opts, key=len) for param in self.params
                 if isinstance(param, click.Option) and param.name is not None}
        return checking_files(lambda: super(CastreginCommand, self).invoke(ctx), command_inputs(self, ctx.params),
                              command_outputs(self, ctx.params), flags)


class CastreginSubgroup(click.Group):
    """A group of commands under the top level (``castregin ope``): its commands name their options in errors."""

    command_class = CastreginCommand
    group_class = type


class CastreginGroup(click.Group):
    """The top-level group: commands imported on first use, InputError as one line and exit code 1."""

    command_class = CastreginCommand
    group_class = CastreginSubgroup

    _listing = False

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if cmd_name not in self.commands and entry is not None and self._listing:
            # `castregin --help` lists the commands from their summaries, importing none of them.
            return click.Command(cmd_name, help=entry.help, short_help=entry.short_help)
        if cmd_name not in self.commands:
            if entry is not None:
                importlib.import_module(entry.module)
            if cmd_name not in self.commands:
                # A name the table does not know may still be defined by some command module.
                self.load_all()
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False

    def load_all(self) -> None:
        """Import every command module."""
        for module in dict.fromkeys(entry.module for entry in COMMANDS.values()):
            importlib.import_module(module)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as err:  # `castregin --bogus`: the subcommands' are met in invoke
            _usage_line(err)
            ctx.exit(2)

    def invoke(self, ctx: click.Context):
        def command():
            try:
                return super(CastreginGroup, self).invoke(ctx)
            except click.UsageError as err:
                _usage_line(err)
                ctx.exit(2)

        return reporting_errors(command, ctx.exit)


def _usage_line(err: click.UsageError) -> None:
    """A usage error as one line naming the command's --help (click's own is four: usage, a hint, a blank line,
    the error); click's "did you mean" kept on it. Help asked for by giving no arguments stays help."""
    if isinstance(err, click.exceptions.NoArgsIsHelpError):
        raise err
    message = err.format_message()
    if isinstance(err, click.NoSuchOption):
        # Spelled here, not taken from click: its wording changed between the versions castregin allows.
        close = [p for p in err.possibilities or () if p not in ("-h", "--help")]
        message = f"No such option {err.option_name!r}" + (
            f" (did you mean {' or '.join(map(repr, close))}?)" if close else "")
    message = " ".join(message.split()).removesuffix(".")
    names: list[str] = []
    context = err.ctx
    while context is not None and context.parent is not None:  # the root is castregin, however it was started
        names.insert(0, context.info_name or "")
        context = context.parent
    command = " ".join(["castregin", *names])
    click.echo(f"castregin: error: {message}; see '{command} --help'", err=True)


@click.group(cls=CastreginGroup,
             context_settings={"help_option_names": list(HELP_OPTION_NAMES), "max_content_width": 100})
@click.version_option(package_name="castregin")
def main():
    """Judge and score conversational search systems the way TREC does.

    \b
    The pipeline of a track:
      castregin convert questions RUN.json --bank BANK -o RUN.run   # JSON submissions to TREC runs
      castregin pool RUN.run... -o POOL                             # what to judge
      castregin aggregate JUDGMENTS.csv --criteria relevance ...     # crowd labels to qrels
      castregin evaluate RUN.run... --qrels QRELS                    # trec_eval's numbers
    """
