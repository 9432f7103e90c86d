"""``castregin aggregate``: crowd judgment CSVs into qrels per criterion plus an audit (registered on
`castregin.cli.main`). The reading and the rules are the judging stage's
(:func:`castregin.judging.sources.aggregate_stage`); ``castregin agreement`` is in :mod:`castregin.cli.agreement`.
"""

from __future__ import annotations

import click

from ..errors import InputError
from ..render.judging import summary_table, workers_table
from . import main, warnings_as_lines
from .crowd_options import crowd_options, crowd_rules
from .options import InputPath, OutputDirectory


def _prefix(ctx, param, value: str) -> str:
    from ..formats.aggregation import check_file_name_part

    try:
        return check_file_name_part(value)
    except InputError as err:
        raise click.BadParameter(str(err)) from None


@main.command()
@click.argument("judgments", nargs=-1, required=True, type=InputPath(), metavar="JUDGMENTS.csv...")
@crowd_options
@click.option("--min-label", type=int, default=2, show_default=True,
              help="The filtered qrels keep the turns with some label >= this.")
@click.option("--prefix", default="question", show_default=True, callback=_prefix,
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
    from ..formats.aggregation import write_aggregation
    from ..judging.sources import aggregate_stage

    rules = crowd_rules(criteria, gold, input_format, columns, label_map, scale, majority, tie, rounding, method)
    with warnings_as_lines():
        result = aggregate_stage(judgments, rules, min_label=min_label, time_column=time_column or None, prefix=prefix)
    write_aggregation(result, out_dir, prefix=prefix, inputs=[p for p in [*judgments, gold] if p])
    click.echo(summary_table(result), err=True, nl=False)
    if result.suspects.get("workers"):
        click.echo(workers_table(result, only_suspects=True), err=True, nl=False)
