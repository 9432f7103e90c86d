"""Commands of the CLI for the aggregate stage (registered on `castregin.cli.main`).

``castregin aggregate`` turns crowd judgment CSVs into qrels per criterion plus an audit;
``castregin agreement`` prints the agreement part alone. The work is in :mod:`castregin.judging.aggregate`,
:mod:`castregin.judging.agreement` and :mod:`castregin.formats.crowd`, imported where used (they need
pandas, which ``castregin --help`` should not load).
"""

from __future__ import annotations

import re

import click

from ..arrays import choose_allocator
from ..errors import InputError
from ..formats import ensure_not_input, write_text
from ..formats.common import json_text
from ..render.judging import agreement_tables, summary_table, workers_table
from . import main, warnings_as_lines
from .options import InputPath, OutputDirectory, criteria_list, format_option, output_option

_CRITERION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _criteria(ctx, param, value: str) -> list[str]:
    names = criteria_list(ctx, param, value)
    for name in names:
        if not _CRITERION.fullmatch(name):
            raise click.BadParameter(f"{name!r}: use letters, digits, '_', '.' and '-' (it names output files)")
    return names


def _scale(ctx, param, value: str) -> tuple[int, int]:
    from ..formats.crowd import parse_scale

    try:
        return parse_scale(value)
    except InputError as err:
        raise click.BadParameter(err.problem) from None


def _label_map(ctx, param, value) -> dict[str, int]:
    from ..formats.crowd import parse_label_map

    try:
        return parse_label_map(value)
    except InputError as err:
        raise click.BadParameter(err.problem) from None


def _input_options(function):
    """Options shared by ``aggregate`` and ``agreement``: what to read and how to decide labels."""
    options = [
        click.argument("judgments", nargs=-1, required=True, type=InputPath(), metavar="JUDGMENTS.csv..."),
        click.option("--criteria", required=True, callback=_criteria, metavar="NAME,...",
                     help="The judged criteria, comma-separated (relevance,novelty,diversity)."),
        click.option("--gold", type=InputPath(), metavar="GOLD.csv",
                     help="Gold CSV with the columns turn_id, item_id, criterion, min_label, max_label: a "
                          "worker with a label outside the range loses all their labels for that topic. Rows "
                          "of other criteria are ignored, with a warning, as are gold items nobody judged."),
        click.option("--input-format", type=click.Choice(["auto", "long", "mturk"]), default="auto",
                     show_default=True,
                     help="long: worker_id,turn_id,item_id,<criterion>...; mturk: batch results (WorkerId, "
                          "AssignmentStatus, Input.turn_id, Input.item_id, Answer.<criterion>); auto: mturk "
                          "when the header has WorkerId or AssignmentStatus."),
        click.option("--column", "columns", multiple=True, metavar="ROLE=NAME",
                     help="Read a role from another column (repeatable); roles: worker_id, turn_id, item_id, "
                          "status (rows 'Rejected' are ignored) and each criterion. Figure Eight: "
                          "--column worker_id=_worker_id --column item_id=_unit_id."),
        click.option("--label-map", "label_map", multiple=True, callback=_label_map, metavar="TEXT=N,...",
                     help="Map textual labels to integers: TEXT=N pairs, comma-separated or repeated "
                          "(e.g. no=0,yes=1)."),
        click.option("--scale", default="0-3", show_default=True, callback=_scale, metavar="MIN-MAX",
                     help="The label scale; a label outside it is an error."),
        click.option("--majority", type=click.Choice(["plurality", "absolute"]), default="plurality",
                     show_default=True,
                     help="plurality: the mode wins when it is the only most frequent label; absolute: "
                          "it must also hold more than half of the labels."),
        click.option("--tie", type=click.Choice(["mean", "median", "max", "min"]), default="mean",
                     show_default=True,
                     help="Without a winning mode: the mean of all labels, their median (an even count "
                          "takes the mean of the two middle labels, rounded with --rounding), or the "
                          "highest / lowest of the most frequent labels."),
        click.option("--rounding", type=click.Choice(["half-up", "half-even", "floor", "ceil"]),
                     default="half-up", show_default=True,
                     help="How a mean (or an even-count median) becomes an integer, computed exactly: "
                          "half-up 2.5->3, half-even 2.5->2, floor, ceil."),
        click.option("--method", type=click.Choice(["mode-mean", "dawid-skene", "glad"]), default="mode-mean",
                     show_default=True,
                     help="mode-mean: the rules above (CAsT-ReGIn's); dawid-skene: EM over each worker's "
                          "confusion matrix; glad: worker ability x item difficulty. The models run per "
                          "criterion after the gold filter, gold items as known labels (a range bounds "
                          "the posterior); the label is the posterior's argmax, the lowest on a tie."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _read(judgments, criteria, gold, input_format, columns, label_map, scale):
    from ..formats.crowd import parse_columns, read_gold, read_judgments

    try:
        roles = parse_columns(columns, criteria)
    except InputError as err:
        raise click.BadParameter(err.problem, param_hint="--column") from None
    # pyarrow parses the judgments: jemalloc holds its blocks in a third less memory than mimalloc here.
    choose_allocator()
    # The gold file is read first: it is small, and a bad one should not wait for a million rows.
    gold_frame = read_gold(gold, scale) if gold else None
    data = read_judgments(judgments, criteria, input_format=input_format, columns=roles,
                          label_map=label_map, scale=scale)
    return data, gold_frame






@main.command()
@_input_options
@click.option("--min-label", type=int, default=2, show_default=True,
              help="The filtered qrels keep the turns with some label >= this.")
@click.option("--prefix", default="question", show_default=True,
              help="Output names are <prefix>_<criterion>.qrel; --prefix '' gives <criterion>.qrel.")
@click.option("--out-dir", required=True, type=OutputDirectory(), metavar="DIR",
              help="Where to write the qrels and audit.json.")
@click.option("--time-column", default="auto", show_default=True, metavar="NAME",
              help="The column of seconds spent per row, for the 'fast' suspect rule; auto: 'seconds' or "
                   "MTurk's 'WorkTimeInSeconds' when there; '' reads none.")
def aggregate(judgments, criteria, gold, input_format, columns, label_map, scale, majority, tie, rounding,
              method, min_label, prefix, out_dir, time_column):
    """Aggregate crowd judgments into qrels, one per criterion.

    \b
    Several CSVs are concatenated. Per (turn, item, criterion):
      1. a worker failing a --gold item loses all their labels, every criterion, for that topic;
      2. the label is the mode when it is the only most frequent label (see --majority),
         otherwise the --tie rule decides, rounded with --rounding;
      3. an item left without labels is dropped and listed in audit.json.
    --method dawid-skene or glad replaces step 2 by a model of each worker's reliability.
    Writes <prefix>_<criterion>.qrel (all turns), <prefix>_<criterion>_filtered.qrel (turns
    with a label >= --min-label) and audit.json {removed, dropped_items, decisions, agreement,
    method, workers, suspects} into --out-dir, all or nothing. A summary and the suspect
    workers go to standard error.

    \b
    Suspects are flagged in audit.json, never removed (removal is the gold rule's):
      below_chance  kappa with the other workers' consensus <= 0 (a criterion, >= 10 items)
      constant      one label for >= 90% of >= 10 items of a criterion
      repeated      the same answers, or a sequence of up to 5 rows, repeated on >= 90% of rows
      fast          median seconds per item < 1/3 of the crowd's (with a time column)

    \b
    Examples:
      castregin aggregate judgments.csv --criteria relevance,novelty,diversity \\
          --gold gold.csv --prefix '' --out-dir qrels/
      castregin aggregate judgments.csv --criteria relevance --method dawid-skene --out-dir ds/
    """
    from ..formats.aggregation import check_file_name_part, write_aggregation
    from ..judging.aggregate import aggregate as run_aggregate

    try:
        check_file_name_part(prefix)
    except InputError as err:
        raise click.BadParameter(str(err), param_hint="--prefix") from None
    data, gold_frame = _read(judgments, criteria, gold, input_format, columns, label_map, scale)
    with warnings_as_lines():
        result = run_aggregate(data, gold_frame, majority=majority, tie=tie, rounding=rounding, min_label=min_label,
                               method=method, time_column=time_column or None)
    inputs = [p for p in [*judgments, gold] if p]
    write_aggregation(result, out_dir, prefix=prefix, inputs=inputs)
    click.echo(summary_table(result), err=True, nl=False)
    if result.suspects.get("workers"):
        click.echo(workers_table(result, only_suspects=True), err=True, nl=False)




@main.command()
@_input_options
@format_option(["table", "json"])
@output_option()
def agreement(judgments, criteria, gold, input_format, columns, label_map, scale, majority, tie, rounding,
              method, fmt, output):
    """Inter-annotator agreement of crowd judgments.

    Krippendorff's alpha (ordinal and interval) and Fleiss' kappa (each unit over its own
    number of labels) per criterion, overall and per topic, before and after the --gold
    filter, and each worker's quadratic-weighted Cohen's kappa with the
    aggregated labels (the labels `castregin aggregate` writes with the same options), computed
    on all of the worker's labels, including those the gold filter removed. Undefined values
    (a single label value, no unit with two labels) are shown as '-' (null in JSON).

    \b
      castregin agreement judgments.csv --criteria relevance,novelty,diversity --gold gold.csv
      castregin agreement judgments.csv --criteria relevance --format json -o agreement.json

    \b
    Examples:
      castregin agreement judgments.csv --criteria relevance,novelty
      castregin agreement judgments_*.csv --criteria relevance --gold gold.csv --format json -o agreement.json
    """
    from ..judging.aggregate import aggregate as run_aggregate

    ensure_not_input(output, [*judgments, *([gold] if gold else [])])
    data, gold_frame = _read(judgments, criteria, gold, input_format, columns, label_map, scale)
    with warnings_as_lines():
        result = run_aggregate(data, gold_frame, majority=majority, tie=tie, rounding=rounding, method=method)
    text = json_text(result.agreement, sort_keys=True) if fmt == "json" else agreement_tables(result.agreement)
    write_text(output, text)
