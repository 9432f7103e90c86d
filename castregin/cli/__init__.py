"""The ``castregin`` command line: parses arguments, calls the stages, prints.

Every command is one function; the work is done by plain functions in the stage modules
(``evaluate``, ``qrels``, ``convert``, ``pool``, ``aggregate``, ...), which Python users call
directly. Errors a user can cause are :class:`castregin.errors.InputError`: one line on standard
error and exit code 1.

This module imports no click: :func:`run` (the ``castregin`` program) runs ``castregin trec_eval`` without it
when its command line is one of the forms scripts write (:mod:`castregin.cli.plain`), and everything else
through :data:`main`, the click group (:mod:`castregin.cli.group`, imported on first use of ``main``,
:class:`CastreginCommand` and the other names it defines). What is done around every command, whichever path
runs it, is here, once: the checks of its files (:func:`checking_files`), the one-line report of errors and
signals (:func:`reporting_errors`) and of warnings (:func:`warnings_as_lines`).

Commands live in the ``cli_*`` modules, which register themselves on :data:`main` when imported.
They are imported on demand (:class:`CastreginGroup`): ``castregin evaluate`` loads the evaluate
command's module only, not the statistics, plotting and JSON-schema code of the other commands.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import warnings

from ..errors import InputError, InputWarning

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import NoReturn, TypeVar

    from .group import (
        COMMAND_TABLE,
        COMMANDS,
        CastreginCommand,
        CastreginGroup,
        CastreginSubgroup,
        CommandEntry,
        ascii_numbers,
        main,
    )

    T = TypeVar("T")

#: The commands :func:`run` runs without click when it can: ``module:NAME``, a
#: :class:`castregin.cli.plain.PlainCommand` or :class:`~castregin.cli.plain.DropInCommand` (its ``parse``, ``files``
#: and ``function``). (A test empties it to run the same command lines through click.)
PLAIN_COMMANDS = {"trec_eval": "castregin.cli.trec_eval_plain:COMMAND", "gdeval": "castregin.cli.gdeval_plain:GDEVAL",
                  "ndeval": "castregin.cli.gdeval_plain:NDEVAL",
                  "sample_eval": "castregin.cli.sample_eval_plain:SAMPLE_EVAL"}

#: The names :mod:`castregin.cli.group` defines, served from here (see :func:`__getattr__`).
_GROUP_NAMES = {"main", "CastreginCommand", "CastreginGroup", "CastreginSubgroup", "ascii_numbers", "COMMANDS",
                "COMMAND_TABLE", "CommandEntry"}


def __getattr__(name: str):
    """:data:`main`, the click classes and the table of commands, from :mod:`castregin.cli.group` (which imports
    click) on first use: ``from castregin.cli import main`` reads as it always has."""
    if name not in _GROUP_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import group

    value = globals()[name] = getattr(group, name)
    return value


def say(line: str) -> None:
    """``line`` on standard error, as ``click.echo(line, err=True)`` writes it, without importing click.

    As click does: ANSI escape sequences are dropped unless standard error is a terminal (a file name holding
    one cannot colour a log), and a standard error set to ASCII (``PYTHONIOENCODING=ascii``) is written in
    UTF-8 (a lone surrogate, from a file name that is not UTF-8, as '?'), where Python would write escapes.
    """
    stream = sys.stderr
    if stream is None:
        return
    text = line + "\n"
    if "\x1b" in text and not _isatty(stream):
        import re

        text = re.sub(r"\033\[[;?0-9]*[a-zA-Z]", "", text)  # click's _compat._ansi_re
    buffer = getattr(stream, "buffer", None)
    if buffer is not None and _is_ascii(getattr(stream, "encoding", None) or "ascii"):
        stream.flush()
        buffer.write(text.encode("utf-8", "replace"))
        buffer.flush()
        return
    stream.write(text)
    stream.flush()


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except Exception:  # noqa: BLE001 - click's isatty: a stream that cannot say is no terminal
        return False


def _is_ascii(encoding: str) -> bool:
    import codecs

    try:
        return codecs.lookup(encoding).name == "ascii"
    except LookupError:
        return False


@contextlib.contextmanager
def warnings_as_lines() -> Iterator[None]:
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
                say(f"castregin: warning: {warning.message}")
            else:
                warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)


def checking_files(call: Callable[[], T], inputs: list[str], outputs: list[str], flags: dict[str, str]) -> T:
    """``call()``, a command's body, with what every command gets around it: no output may be an input (``inputs``,
    every file its parameters name as one, are declared: every output it writes is checked against them), and an
    :class:`~castregin.errors.InputError` about a Python argument (``max_turns``) names the option instead
    (``flags``: ``{"max_turns": "--max-turns"}``)."""
    from ..formats.common import stream_digests
    from ..formats.output import check_outputs, declared_inputs

    try:
        with declared_inputs(inputs), stream_digests():
            check_outputs(outputs, inputs)
            return call()
    except InputError as err:
        flag = flags.get(err.argument) if err.argument is not None else None
        if flag is None:
            raise
        raise InputError(err.problem, source=err.source, line=err.line, argument=flag) from None


def reporting_errors(call: Callable[[], T], exit: Callable[[int], NoReturn]) -> T:  # noqa: A002 - click's word
    """``call()``, a command, its errors each told in one line on standard error and ended with ``exit(code)``:
    an :class:`~castregin.errors.InputError` (1), a reader that has gone (141, silently), a signal (:class:`Stopped`,
    128 + its number), Ctrl-C (130), no memory left (1)."""
    try:
        return call()
    except InputError as err:
        say(f"castregin: error: {err}")
        exit(1)
    except BrokenPipeError:
        # `castregin evaluate ... | head -1`: the reader has had enough. Unix tools end quietly, killed by
        # SIGPIPE (the shell's 141): the same exit status, and nothing said.
        _silence_stdout()
        exit(128 + signal.SIGPIPE)
    except Stopped as stop:
        # The writers have removed their temporary files on the way out.
        say(f"castregin: stopped by {stop.name}; no output was written")
        exit(128 + stop.number)
    except KeyboardInterrupt:
        say("castregin: interrupted; no output was written")
        exit(128 + signal.SIGINT)
    except MemoryError:
        pass  # said below, once the except block has let go of the traceback and the memory its frames hold
    say("castregin: error: out of memory; no output was written. Free memory, or give smaller inputs")
    exit(1)


def _silence_stdout() -> None:
    """Point standard output at /dev/null: the interpreter's last flush at exit would meet the closed pipe
    again and print "Exception ignored ... BrokenPipeError"."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # a stream without a descriptor (a test runner's capture): nothing is flushed to a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


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
    """The ``castregin`` program: :data:`main` with SIGTERM, SIGHUP and SIGINT ending it cleanly.

    SIGINT is handled even where the parent left it ignored (``castregin ... &`` in a script starts
    with SIGINT ignored, and Python then leaves it so): ``kill -INT`` ends castregin, exit code 130, as
    anywhere else. A SIGHUP that ``nohup`` ignored stays ignored: that is what nohup is for.

    A command of :data:`PLAIN_COMMANDS` whose command line its plain reader takes runs without click.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _stop)
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        signal.signal(signal.SIGHUP, _stop)
    args = sys.argv[1:]
    if args and args[0] in PLAIN_COMMANDS and _plain_run_allowed():
        _run_plain(PLAIN_COMMANDS[args[0]], args[1:])
    from .group import main

    main()


def _plain_run_allowed() -> bool:
    """Whether click would run a command with no more than its arguments: not asked for shell completions (an
    environment variable ``_CASTREGIN_COMPLETE``; any ``_..._COMPLETE`` is taken as one), not on Windows (where click
    expands wildcards in the arguments)."""
    return os.name != "nt" and not any(name.startswith("_") and name.endswith("_COMPLETE") and value
                                       for name, value in os.environ.items())


def _run_plain(where: str, args: list[str]) -> None:
    """Run the plain command ``where`` (``module:NAME``) on ``args`` and exit, or return at once where its reader
    declines them."""

    def parse_and_call() -> bool:
        module, _, name = where.partition(":")
        command = getattr(importlib.import_module(module), name)
        keywords = command.parse(args)
        if keywords is None:
            return False
        checking_files(lambda: command.function(**keywords), *command.files(keywords))
        return True

    if reporting_errors(parse_and_call, sys.exit):
        sys.exit(0)
