"""``castregin tasks``: the judging tasks of a pool, for any crowd platform, MTurk, or offline pages.

Parses the arguments, reads the pool, banks, topics and gold file (:mod:`castregin.formats`), builds
the tasks (:mod:`castregin.judging.tasks`), renders them (:mod:`castregin.render.tasks`) and writes
the directory as a whole. Everything heavy (jinja2, pandas for a gold file, jsonschema) is imported
inside the command, so ``castregin --help`` stays quick.
"""

from __future__ import annotations

import click

from . import main
from .options import InputPath, OutputDirectory, criteria_list, turns_option

_FORMATS = ("long", "mturk", "html")


@main.command()
@click.argument("pool", type=InputPath(), metavar="POOL")
@click.option("--bank", "banks", multiple=True, required=True, type=InputPath(), metavar="BANK",
              help="Item bank (id -> text, or the official list of {question_id, question}); repeatable, "
                   "the first given wins on an id present in several.")
@click.option("--topics", required=True, type=InputPath(), metavar="TOPICS.json",
              help="The official topics: CAsT 2022's tree (2022_evaluation_topics_tree_v1.0.json) or a "
                   "linear topic list; gives each turn's conversation so far.")
@click.option("--criteria", required=True, callback=criteria_list, metavar="NAME,...",
              help="Criteria to judge, each on a 0-3 scale with a rubric: relevance, novelty, diversity "
                   "(questions); relevance, naturalness, conciseness (responses).")
@click.option("--gold-per-topic", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="Plant N off-topic items per topic (texts from other topics' pools, put at a turn of this "
                   "topic) whose relevance must be 0 or 1; written to gold.csv.")
@click.option("--gold", type=InputPath(), metavar="GOLD.csv",
              help="Your own gold rows instead (the columns turn_id, item_id, criterion, min_label, "
                   "max_label, as aggregate --gold reads them); pairs the pool lacks are added to the tasks; "
                   "its rows go to gold.csv.")
@click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True, metavar="S",
              help="Seed of the item order and the gold choice: the same seed gives the same files.")
@click.option("--format", "fmt", type=click.Choice(_FORMATS), default="long", show_default=True,
              help="long: tasks.csv, a row per (topic, turn, item) with the conversation as JSON; mturk: "
                   "mturk.csv (a row per topic) and hit_template.html; html: topic_<id>.html, offline pages "
                   "that export the judgments CSV.")
@turns_option("Make tasks for these pooled turns only (e.g. 2022_evaluation_topics_turn_ids.json): one id a "
              "line, a qrels or run, or turn-ids JSON; the pool's other turns are left out, with a warning.")
@click.option("--out-dir", required=True, type=OutputDirectory(), metavar="DIR",
              help="The directory to fill; it is replaced as a whole, so it holds only these tasks.")
def tasks(pool, banks, topics, criteria, gold_per_topic, gold, seed, fmt, turns_file, out_dir):
    """Make crowd judging tasks from a pool: every (turn, item) with its conversation so far.

    \b
    Tasks are grouped per topic; turns follow the conversation, and the items of a turn are
    shuffled with --seed. Gold items, planted (--gold-per-topic) or given (--gold), look like
    every other item in every format. Judgments come back as the CSV `castregin aggregate`
    reads, with gold.csv as its --gold.

    \b
    Examples:
      castregin tasks question_pool_depth_1.pool --bank question_bank.json \\
          --bank 2022_mixed_initiative_question_pool.json \\
          --topics 2022_evaluation_topics_tree_v1.0.json \\
          --criteria relevance,novelty,diversity --gold-per-topic 3 --format html --out-dir pages/
      castregin aggregate judgments_*.csv --criteria relevance,novelty,diversity \\
          --gold pages/gold.csv --out-dir qrels/
    """
    from ..formats import read_run
    from ..formats.output import check_replaceable_directory, replace_directory
    from ..formats.topics import read_topics
    from ..judging.rubrics import check_criteria
    from ..judging.tasks import build_tasks
    from ..render.tasks import OUTPUT_NAMES, task_files, tasks_summary
    from ..track.convert import Bank

    if gold is not None and gold_per_topic:
        raise click.UsageError("give --gold-per-topic N or --gold FILE, not both")
    check_criteria(criteria)
    inputs = [pool, *banks, topics, *([gold] if gold else []), *([turns_file] if turns_file else [])]
    check_replaceable_directory(out_dir, kind="judging tasks", inputs=inputs, allowed=list(OUTPUT_NAMES))
    gold_rows = None
    if gold is not None:
        from ..formats.crowd import read_gold

        gold_rows = read_gold(gold)
    pooled = read_run(pool)
    if turns_file is not None:
        from ..formats import read_turn_list
        from ..track.pool import keep_run_turns

        pooled, left_out = keep_run_turns(pooled, read_turn_list(turns_file), f"--turns {turns_file}")
        if left_out:
            click.echo(f"castregin: warning: {left_out}", err=True)
    # The banks merged in the order given: on an id present in several, the first given wins.
    bank = Bank.read(banks).entries
    task_set = build_tasks(pooled, bank, read_topics(topics), criteria,
                           gold_per_topic=gold_per_topic, gold=gold_rows, seed=seed)
    files = task_files(task_set, fmt)
    replace_directory(out_dir, files, kind="judging tasks", inputs=inputs, allowed=list(OUTPUT_NAMES))
    click.echo(tasks_summary(task_set, out_dir, len(files)), err=True)
