"""The ``castregin`` command line: parses arguments, calls the stages, prints.

Every command is one function; the work is done by plain functions in the stage modules
(``evaluate``, ``qrels``, ``convert``, ``pool``, ``aggregate``, ...), which Python users call
directly. Errors a user can cause are :class:`castregin.errors.InputError`: one line on standard
error and exit code 1.
"""

from __future__ import annotations

import sys

import click

from .errors import InputError


class CastreginGroup(click.Group):
    """A click group that turns InputError into one line on standard error and exit code 1."""

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


def _register() -> None:
    # Command modules register themselves on `main`; imported here so `castregin.cli:main` has them all.
    from . import (
        cli_aggregate,  # noqa: F401
        cli_compare,  # noqa: F401
        cli_convert,  # noqa: F401
        cli_dialogue,  # noqa: F401
        cli_evaluate,  # noqa: F401
        cli_ope,  # noqa: F401
    )


_register()
