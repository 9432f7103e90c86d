"""Commands ``nuggets ...``: nugget evaluation of generated answers (TREC RAG 2024, iKAT 2024)."""

from __future__ import annotations

import click

from .. import formats
from ..errors import InputError
from ..render.tables import FORMATS, render_rows
from . import main, warnings_as_lines
from .options import format_option, output_option, runs_argument


@main.group()
def nuggets():
    """Nugget evaluation of generated answers: nuggetizer's scores, iKAT 2024's nugget recall.

    \b
    Examples:
      castregin nuggets score assignments/*.jsonl
      castregin nuggets score human/ --name human -q --format tsv -o human.tsv
      castregin compare --scores human.tsv --baseline bm25-gpt4o
    """


@nuggets.command("score")
@runs_argument("ASSIGNMENTS...")
@click.option("-q", "--per-turn", is_flag=True, help="Also print each turn's value.")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="Measure, repeatable: strict_vital_score, strict_all_score, vital_score, all_score (nuggetizer's; "
                   "or strict_vital, strict_all, vital, all), nugget_recall (iKAT 2024). Default: all five.")
@click.option("--name", default="nuggets", show_default=True, metavar="NAME",
              help="The name of this assignment source (human, gpt-4o): the column evaluate fills with the "
                   "qrels' name, which compare, analyze and report tell sources apart by.")
@click.option("--no-vital", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
              help="A turn without a vital nugget scores 0 on the vital scores, as nuggetizer scores it, or "
                   "is left out of them (skip). Either way the turns are named on standard error.")
@click.option("--failed", type=click.Choice(["refuse", "not_support"]), default="refuse", show_default=True,
              help="An assignment nuggetizer wrote as \"failed\" (the model's call failed): an error, or "
                   "counted as not_support, as nuggetizer's metrics count it.")
@format_option(FORMATS)
@output_option()
def score_command(runs, per_turn, measures, name, no_vital, failed, fmt, output):
    """Score runs by their nugget assignments: nuggetizer's four scores and iKAT 2024's nugget recall.

    ASSIGNMENTS are nuggetizer's assignment files (JSONL, one query a line: qid, query, run_id,
    answer_text and the nuggets, each with importance vital or okay and assignment support,
    partial_support or not_support); a directory stands for its files; a line without run_id
    belongs to the run named by its file. Per run and turn: strict_vital_score and strict_all_score
    (the share of the vital, or of all, nuggets supported), vital_score and all_score (the same, a
    partial support counting 0.5), exactly as nuggetizer computes them, and nugget_recall, iKAT
    2024's (CONE-RAG's nugget-to-response matching: the share of the nuggets supported, over the
    turns with nuggets and an answer). The all row is the mean over the run's turns, nuggetizer's
    global metric. Rows are evaluate's (run, name, measure, turn, value): compare --scores, analyze
    --scores and report --scores read them.

    \b
    Examples:
      castregin nuggets score assignments/*.jsonl
      castregin nuggets score human/*.jsonl --name human -q --format markdown
      castregin nuggets score gpt4o/ --name gpt-4o -q --format tsv -o gpt4o.tsv
      castregin nuggets score a.jsonl -m vital -m all --no-vital skip --format latex
    """
    from ..formats.nuggets import read_assignment_files
    from ..nuggets.scores import NUM_Q, parse_measure_names, score_assignments

    formats.ensure_not_input(output, runs)
    try:
        chosen = parse_measure_names(measures)
    except InputError as err:
        raise click.BadParameter(err.problem, param_hint="-m") from None
    with warnings_as_lines():
        rows = score_assignments(read_assignment_files(runs, failed), name, chosen, per_turn, no_vital)
    formats.write_text(output, render_rows(rows, fmt, counts={NUM_Q}))
