"""Errors a user can cause, reported as one line and exit code 1 by the CLI."""

from __future__ import annotations


class InputError(Exception):
    """Bad input: a file, line or JSON path, what is wrong, and what to do.

    The CLI prints ``castregin: error: <message>`` and exits with code 1; the Python API
    lets it propagate so that callers can catch it.
    """

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 argument: str | None = None):
        self.source = source
        self.line = line
        self.problem = message
        #: The Python argument at fault (``max_turns``); the command line names its option instead.
        self.argument = argument
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(where + (f"{argument}: " if argument else "") + message)


class InputWarning(Warning):
    """A problem in the input that castregin can work around (reported on standard error)."""


class CoverageWarning(InputWarning):
    """A run and a qrels share no turn, or few: means over them may look like results and are not.

    Raised with :func:`warnings.warn` by the evaluation functions; the command line prints each
    as one ``castregin: warning:`` line.
    """
