"""Options several commands share, defined once: ``-o``, ``--qrels``, ``-m``, ``--rel-level``, ``--format``,
and the ``RUN...`` argument of every command that takes several runs."""

from __future__ import annotations

import os

import click

from ..evaluation.measures import DEFAULT_MEASURES
from ..formats.common import expand_run_paths
from ..formats.trec import LABEL_RANGE

#: Every option that writes a file says the same.
OUTPUT_HELP = "Where to write (`-`: standard output). Written atomically, never over an input."


def output_option(default: str | None = "-", help: str = OUTPUT_HELP):
    """``-o/--output FILE``; ``-`` is standard output."""
    return click.option("-o", "--output", default=default, show_default=default is not None, metavar="FILE",
                        help=help)


def _expand_runs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(expand_run_paths(value))


def runs_argument(metavar: str = "RUN..."):
    """``RUN...``: one or more runs; a directory stands for the files in it (see :func:`expand_run_paths`)."""
    return click.argument("runs", nargs=-1, required=True, metavar=metavar, callback=_expand_runs)


def format_option(choices, default: str = "table"):
    """``--format`` among ``choices``."""
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default=default, show_default=True)


def qrels_option(function):
    """``--qrels [NAME=]QRELS``, repeatable."""
    return click.option("--qrels", "qrels_specs", multiple=True, required=True, metavar="[NAME=]QRELS",
                        help="Qrels to evaluate against; repeat for several, optionally named "
                             "(mi=subset.qrel).")(function)


def measure_option(function):
    """``-m/--measure``, repeatable."""
    return click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
                        help="Measure, repeatable; ir_measures or trec_eval names, trec_eval's sets (all_trec, "
                             "official) and families (P.1,3,5). `castregin measures` lists them. Default: "
                             f"{' '.join(DEFAULT_MEASURES)}.")(function)


def rel_level_option(function):
    """``--rel-level``: trec_eval's ``-l``."""
    return click.option("--rel-level", default=2, show_default=True, type=click.IntRange(1, LABEL_RANGE[1]),
                        help="Label at or above which an item is relevant for binary measures "
                             "(trec_eval -l).")(function)


def turns_option(help: str):
    """``--turns FILE``: a turn list (one id a line, a qrels or run, or turn-ids JSON), read by
    :func:`castregin.formats.trec.read_turn_list`; an input, so never an output."""
    return click.option("--turns", "turns_file", metavar="FILE", help=help)


def split_named(value: str) -> tuple[str | None, str]:
    """``NAME=PATH`` -> (NAME, PATH); a plain path (even one holding ``=``) -> (None, PATH)."""
    if "=" in value and not os.path.exists(value):
        name, path = value.split("=", 1)
        if name:
            return name, path
    return None, value
