"""The ``castregin`` command line: parses arguments, calls the stages, prints.

Every command is one function; the work is done by plain functions in the stage modules
(``evaluate``, ``qrels``, ``convert``, ``pool``, ``aggregate``, ...), which Python users call
directly. Errors a user can cause are :class:`castregin.errors.InputError`: one line on standard
error and exit code 1.

Commands live in the ``cli_*`` modules, which register themselves on :data:`main` when imported.
They are imported on demand (:class:`CastreginGroup`): ``castregin evaluate`` loads the evaluate
command's module only, not the statistics, plotting and JSON-schema code of the other commands.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
import warnings

import click

from ..errors import InputError, InputWarning

#: The module that defines each command, so that running one imports only that module.
COMMAND_MODULES = {
    "aggregate": "castregin.cli.judging",
    "analyze": "castregin.cli.analyze",
    "agreement": "castregin.cli.judging",
    "compare": "castregin.cli.compare",
    "convert": "castregin.cli.convert",
    "evaluate": "castregin.cli.evaluate",
    "measures": "castregin.cli.evaluate",
    "ope": "castregin.cli.ope",
    "paradise": "castregin.cli.dialogue",
    "pool": "castregin.cli.convert",
    "qrels": "castregin.cli.evaluate",
    "report": "castregin.cli.compare",
    "scorekeeping": "castregin.cli.dialogue",
    "tasks": "castregin.cli.tasks",
    "trec_eval": "castregin.cli.trec_eval",
}


@contextlib.contextmanager
def warnings_as_lines():
    """Print the library's :class:`~castregin.errors.InputWarning` warnings as ``castregin: warning:`` lines.

    The stages warn with :func:`warnings.warn` (a Python caller sees them as usual); the command line
    shows each once, in order, on standard error.
    """
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", InputWarning)
            yield
    finally:
        # Outside the recording context: there, showwarning would append to the very list being replayed.
        for warning in caught:
            if issubclass(warning.category, InputWarning):
                click.echo(f"castregin: warning: {warning.message}", err=True)
            else:
                warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)


class CastreginCommand(click.Command):
    """A command whose errors about a Python argument (``max_turns``) name the option (``--max-turns``)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except InputError as err:
            option = next((p for p in self.params if isinstance(p, click.Option) and p.name == err.argument), None)
            if option is None:
                raise
            flag = max(option.opts, key=len)
            raise InputError(err.problem, source=err.source, line=err.line, argument=flag) from None


class CastreginSubgroup(click.Group):
    """A group of commands under the top level (``castregin ope``): its commands name their options in errors."""

    command_class = CastreginCommand
    group_class = type


class CastreginGroup(click.Group):
    """The top-level group: commands imported on first use, InputError as one line and exit code 1."""

    command_class = CastreginCommand
    group_class = CastreginSubgroup

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            module = COMMAND_MODULES.get(cmd_name)
            if module is not None:
                importlib.import_module(module)
            if cmd_name not in self.commands:
                # A name the map does not know may still be defined by some command module.
                self.load_all()
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.load_all()
        return sorted(self.commands)

    def load_all(self) -> None:
        """Import every command module (for the list of commands in ``castregin --help``)."""
        for module in dict.fromkeys(COMMAND_MODULES.values()):
            importlib.import_module(module)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except InputError as err:
            click.echo(f"castregin: error: {err}", err=True)
            ctx.exit(1)
        except BrokenPipeError:
            # `castregin evaluate ... | head`: the reader left; that is not an error.
            sys.stderr.close()
            ctx.exit(0)
        except Stopped as stop:
            # The writers have removed their temporary files on the way out.
            click.echo(f"castregin: stopped by {stop.name}; no output was written", err=True)
            ctx.exit(128 + stop.number)
        except KeyboardInterrupt:
            click.echo("castregin: interrupted; no output was written", err=True)
            ctx.exit(128 + signal.SIGINT)


class Stopped(BaseException):
    """SIGTERM (or SIGHUP) turned into an exception, so that ``finally`` blocks remove temporary files.

    A BaseException, like KeyboardInterrupt: no ``except Exception`` swallows it.
    """

    def __init__(self, number: int):
        super().__init__(number)
        self.number = number
        self.name = signal.Signals(number).name


def _stop(number, _frame):
    raise Stopped(number)


def run() -> None:
    """The ``castregin`` program: :data:`main` with SIGTERM and SIGHUP ending it cleanly, as SIGINT does."""
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, _stop)
    main()


@click.group(cls=CastreginGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
