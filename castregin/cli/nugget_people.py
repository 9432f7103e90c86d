"""Commands ``nuggets tasks ...`` and ``nuggets aggregate``: nugget work done by people, in the judging pages and
crowd files castregin makes for relevance, and its labels aggregated with the crowd rules into nuggetizer's files.
(Added to the ``nuggets`` group by :mod:`castregin.cli.nuggets`.)
"""

from __future__ import annotations

import functools
import os

import click

from . import CastreginCommand, CastreginSubgroup, warnings_as_lines
from .crowd_options import decision_options, gold_option, reading_options
from .options import InputPath, OutputDirectory, option_group, runs_argument

_TASK_FORMATS = ("long", "mturk", "html")


@click.group("tasks", cls=CastreginSubgroup)
def tasks_group():
    """Nugget work for people: pages and crowd files to write nuggets, rate them, assign them, judge citations.

    \b
    Each kind is the people's side of a model command, in the formats of `castregin tasks`
    (long: tasks.csv for any platform; mturk: mturk.csv and hit_template.html; html: offline
    pages, one per topic, that export the judgments CSV). Every directory also holds
    nugget_tasks.json, which `castregin nuggets aggregate` reads back with the crowd's CSVs.
      create      people write each turn's nuggets from its relevant passages (nuggets create)
      importance  people rate each nugget: 0 not a nugget, 1 okay, 2 vital
      assign      people label each nugget of each answer: 0 not_support, 1 partial, 2 support
      cite        people judge each (sentence, cited passage): 0 no, 1 partial, 2 full support

    \b
    Examples:
      castregin nuggets tasks assign nuggets.jsonl answers.jsonl --gold-per-topic 2 \\
          --format html --out-dir pages/
      castregin nuggets aggregate judgments_*.csv --tasks pages/ --gold pages/gold.csv --out-dir people/
      castregin nuggets score people/assignments.jsonl --name people
    """


def _task_options(gold: bool = True):
    """--format, the gold options (unless ``gold`` is False), --seed, --topics, --out-dir."""
    options = [
        click.option("--format", "fmt", type=click.Choice(_TASK_FORMATS), default="html", show_default=True,
                     help="html: offline pages (topic_<id>.html); long: tasks.csv for any platform; mturk: "
                          "mturk.csv and hit_template.html."),
        *([click.option("--gold-per-topic", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
                        help="Plant N off-topic items per topic (a nugget or passage of another topic) whose label "
                             "must be 0; written to gold.csv."),
           click.option("--gold", type=InputPath(), metavar="GOLD.csv",
                        help="Your own gold rows instead (turn_id, item_id, criterion, min_label, max_label); "
                             "written to gold.csv.")] if gold else []),
        click.option("--seed", type=click.IntRange(min=0), default=42, show_default=True, metavar="S",
                     help="Seed of the order and of the gold choice: the same seed gives the same files."),
        click.option("--topics", type=InputPath(), metavar="TOPICS.json",
                     help="CAsT or iKAT topics: each turn's conversation so far is shown (else its query)."),
        click.option("--out-dir", required=True, type=OutputDirectory(), metavar="DIR",
                     help="The directory to fill; it is replaced as a whole, so it holds only these tasks."),
    ]
    return option_group(*options)


def _gold_rows(gold):
    if gold is None:
        return None
    from ..formats.crowd import read_gold

    return read_gold(gold, (0, 2))


def _write_tasks(built, fmt: str, out_dir: str, inputs: list) -> None:
    from ..formats.nugget_tasks import MANIFEST_NAME
    from ..formats.output import check_replaceable_directory, replace_directory
    from ..render.tasks import OUTPUT_NAMES, nugget_task_files

    allowed = [*OUTPUT_NAMES, MANIFEST_NAME]
    check_replaceable_directory(out_dir, kind="nugget tasks", inputs=inputs, allowed=allowed)
    files = nugget_task_files(built, fmt)
    replace_directory(out_dir, files, kind="nugget tasks", inputs=inputs, allowed=allowed)
    if built.task_set is not None:
        tasks = built.task_set.tasks
        click.echo(f"castregin: {len(tasks)} {built.kind} tasks ({sum(t.gold for t in tasks)} gold) over "
                   f"{len(built.task_set.by_topic())} topics written to {out_dir} ({len(files)} files)", err=True)
    else:
        click.echo(f"castregin: {len(built.writing)} turns to write nuggets for, over "
                   f"{len({t.topic for t in built.writing})} topics, written to {out_dir} ({len(files)} files)",
                   err=True)


def _topics(topics):
    if topics is None:
        return None
    from ..formats.topics import read_topics

    return read_topics(topics)


@tasks_group.command("create")
@click.option("--qrels", "qrels_file", required=True, type=InputPath(), metavar="QRELS",
              help="Passage qrels: the passages of grade --min-grade or more are each turn's relevant ones.")
@click.option("--passages", "passages_file", required=True, type=InputPath(), metavar="FILE",
              help="Passage texts (as `nuggets create` reads them: JSONL, TREC RAG segments, iKAT passages, TSV).")
@click.option("--queries", "queries_file", type=InputPath(), metavar="FILE",
              help="Query texts: TSV qid<TAB>query or JSONL {\"qid\", \"query\"}.")
@click.option("--min-grade", default=2, show_default=True, type=click.IntRange(min=0), metavar="GRADE",
              help="The lowest qrels grade of a passage shown.")
@_task_options(gold=False)
def create_tasks(qrels_file, passages_file, queries_file, min_grade, fmt, seed, topics, out_dir):
    """Pages where people write each turn's nuggets from its relevant passages, each vital or okay.

    \b
    As `nuggets create` asks a model: each turn with a passage of grade --min-grade or more
    shows its conversation (--topics) or query (--queries) and its relevant passages, most
    relevant first; people write the facts a good answer holds, one per line, and tick the
    vital ones. The pages (--format html) export worker_id,turn_id,nugget,importance,seconds;
    `castregin nuggets aggregate` merges the exports of all workers into nuggets.jsonl.
    --format long writes tasks.csv (topic,turn_id,query,context,passages) for a platform's own
    form, whose export needs the columns worker_id,turn_id,nugget,importance.

    \b
    Examples:
      castregin nuggets tasks create --qrels qrels.txt --passages segments.jsonl \\
          --queries topics.tsv --out-dir write/
      castregin nuggets aggregate nuggets_topic_*.csv --tasks write/ --min-writers 2 --out-dir drafted/
    """
    from ..formats import read_qrels
    from ..formats.passages import read_passages, read_queries
    from ..judging.nugget_tasks import creation_tasks
    from ..nuggets.create import creation_requests

    if queries_file is None and topics is None:
        raise click.UsageError("give --queries or --topics: the query of each turn")
    inputs = [p for p in (qrels_file, passages_file, queries_file, topics) if p]
    with warnings_as_lines():
        qrels = read_qrels(qrels_file)
        wanted = {d for items in qrels.labels.values() for d, grade in items.items() if grade >= min_grade}
        requests = creation_requests(qrels, read_passages(passages_file, wanted),
                                     read_queries(queries_file) if queries_file else None, _topics(topics), min_grade)
        built = creation_tasks(requests, seed=seed)
    _write_tasks(built, fmt, out_dir, inputs)


@tasks_group.command("importance")
@click.argument("nuggets_file", type=InputPath(), metavar="NUGGETS")
@_task_options()
def importance_tasks(nuggets_file, fmt, gold_per_topic, gold, seed, topics, out_dir):
    """Tasks where people rate each nugget of a nuggets file: 0 not a nugget, 1 okay, 2 vital.

    \b
    For nuggets drafted by people (`nuggets aggregate` of create tasks) or by a model (`nuggets
    create`): each nugget with its turn's conversation is a task of the criterion importance,
    on 0-2. `castregin nuggets aggregate` turns the labels into nuggets.jsonl: 2 vital, 1 okay,
    0 dropped, by the crowd rules (gold, mode and ties, Dawid-Skene, GLAD).

    \b
    Examples:
      castregin nuggets tasks importance drafted/nuggets.jsonl --gold-per-topic 2 --out-dir rate/
      castregin nuggets aggregate judgments_*.csv --tasks rate/ --gold rate/gold.csv --out-dir nuggets/
    """
    from ..formats.nuggets import read_nuggets
    from ..judging.nugget_tasks import importance_tasks as build

    inputs = [p for p in (nuggets_file, gold, topics) if p]
    with warnings_as_lines():
        built = build(read_nuggets(nuggets_file), topics=_topics(topics), gold_per_topic=gold_per_topic,
                      gold=_gold_rows(gold), seed=seed)
    _write_tasks(built, fmt, out_dir, inputs)


@tasks_group.command("assign")
@click.argument("nuggets_file", type=InputPath(), metavar="NUGGETS")
@runs_argument("ANSWERS...")
@_task_options()
def assign_tasks(nuggets_file, runs, fmt, gold_per_topic, gold, seed, topics, out_dir):
    """Tasks where people label each nugget of each answer: 0 not_support, 1 partial_support, 2 support.

    \b
    As `nuggets assign` asks a model: each answer (TREC RAG 2024 JSONL, iKAT 2024 runs) to a turn
    with nuggets shows the conversation and the answer; each of the turn's nuggets is a task of
    the criterion support, on 0-2, its item run_id#index. An empty answer is no task (it supports
    nothing). `castregin nuggets aggregate` turns the labels into nuggetizer's assignments.jsonl
    (`nuggets score` scores it; `agreement` compares it with a model's).

    \b
    Examples:
      castregin nuggets tasks assign nuggets.jsonl answers/ --gold-per-topic 2 --out-dir assign/
      castregin nuggets aggregate judgments_*.csv --tasks assign/ --gold assign/gold.csv --out-dir people/
      castregin agreement people=people/assignments.jsonl model=assigned/assignments.jsonl --rank-runs
    """
    from ..formats.nuggets import read_answer_files, read_nuggets
    from ..judging.nugget_tasks import assignment_tasks

    inputs = [p for p in (nuggets_file, *runs, gold, topics) if p]
    with warnings_as_lines():
        built = assignment_tasks(read_nuggets(nuggets_file), read_answer_files(runs), topics=_topics(topics),
                                 gold_per_topic=gold_per_topic, gold=_gold_rows(gold), seed=seed)
    _write_tasks(built, fmt, out_dir, inputs)


@tasks_group.command("cite")
@runs_argument("ANSWERS...")
@click.option("--passages", "passages_file", required=True, type=InputPath(), metavar="FILE",
              help="Texts of the cited passages (as `nuggets cite` reads them).")
@click.option("--max-citations", default=3, show_default=True, metavar="N", type=click.IntRange(1, 1000),
              help="Citations of each sentence judged, the first N distinct ones (TREC RAG 2024 judged 3).")
@_task_options()
def cite_tasks(runs, passages_file, max_citations, fmt, gold_per_topic, gold, seed, topics, out_dir):
    """Tasks where people judge whether each cited passage supports its sentence: 0 no, 1 partial, 2 full.

    \b
    As `nuggets cite` asks a model: each sentence of each answer with each passage it cites (the
    first --max-citations) is a task of the criterion citation_support, on 0-2, showing the
    answer, the sentence and the passage; its item is run_id#sentence#position. `castregin
    nuggets aggregate` turns the labels into citation_support.csv; `nuggets cite --labels`
    scores it (citation precision and recall).

    \b
    Examples:
      castregin nuggets tasks cite answers.jsonl --passages segments.jsonl --out-dir cite/
      castregin nuggets aggregate judgments_*.csv --tasks cite/ --out-dir people/
      castregin nuggets cite answers.jsonl --labels people/citation_support.csv --name people
    """
    from ..formats.nuggets import read_answer_files
    from ..formats.passages import read_passages
    from ..judging.nugget_tasks import citation_tasks
    from ..nuggets.citations import cited_pairs

    inputs = [p for p in (*runs, passages_file, gold, topics) if p]
    with warnings_as_lines():
        answers = read_answer_files(runs)
        wanted = {p for answer in answers for _, p in cited_pairs(answer, max_citations)}
        built = citation_tasks(answers, read_passages(passages_file, wanted), max_citations=max_citations,
                               topics=_topics(topics), gold_per_topic=gold_per_topic, gold=_gold_rows(gold),
                               seed=seed)
    _write_tasks(built, fmt, out_dir, inputs)


@click.command("aggregate", cls=CastreginCommand)
@click.argument("judgments", nargs=-1, required=True, type=InputPath(), metavar="JUDGMENTS.csv...")
@click.option("--tasks", "tasks_path", required=True, type=InputPath(), metavar="DIR|nugget_tasks.json",
              help="The directory `nuggets tasks` wrote (or its nugget_tasks.json): what the labels go back into.")
@gold_option
@reading_options
@functools.partial(decision_options, scale=False)
@click.option("--min-writers", default=1, show_default=True, type=click.IntRange(min=1), metavar="N",
              help="create tasks: keep a nugget written by N workers or more.")
@click.option("--out-dir", required=True, type=OutputDirectory(), metavar="DIR",
              help="Where the outputs and audit.json go (all or nothing).")
def aggregate_command(judgments, tasks_path, gold, input_format, columns, label_map, majority, tie, rounding, method,
                      min_writers, out_dir):
    """People's nugget labels into nuggetizer's files, by the crowd rules of `castregin aggregate`.

    \b
    JUDGMENTS are the crowd's CSVs for the tasks in --tasks (the pages' exports, MTurk batch
    results, any platform's long CSV), read and decided as `castregin aggregate` does: a worker
    failing a --gold item loses the topic, then the mode with --tie, or --method dawid-skene or
    glad. By the tasks' kind, --out-dir gets
      assign      assignments.jsonl (2 support, 1 partial_support, 0 not_support)
      importance  nuggets.jsonl (2 vital, 1 okay, 0 dropped; vital first)
      cite        citation_support.csv (2 full, 1 partial, 0 no support)
      create      nuggets.jsonl: the written nuggets merged per turn (equal but for case and
                  spacing: one), vital or okay by the --majority and --tie of their writers'
                  votes, those written by fewer than --min-writers workers left out
    and audit.json (removed workers, decisions, agreement, workers, suspects, what was left
    out). An answer with a nugget nobody labelled is left out of assignments.jsonl, and said.

    \b
    Examples:
      castregin nuggets aggregate judgments_*.csv --tasks assign/ --gold assign/gold.csv --out-dir people/
      castregin nuggets aggregate judgments.csv --tasks rate/ --method dawid-skene --out-dir nuggets/
      castregin nuggets aggregate nuggets_topic_*.csv --tasks write/ --min-writers 2 --out-dir drafted/
    """
    from ..errors import InputError
    from ..formats.citations import format_citation_labels
    from ..formats.common import json_text
    from ..formats.nugget_tasks import read_manifest, read_written_nuggets
    from ..formats.nuggets import format_assignments, format_nuggets
    from ..formats.output import OutputSet
    from ..judging.nugget_labels import aggregate_nugget_labels, merge_written
    from ..render.judging import summary_table
    from .crowd_options import crowd_rules

    manifest = read_manifest(tasks_path)
    kind = manifest["kind"]
    if kind == "create":
        if gold or method != "mode-mean":
            raise InputError("written nuggets are merged by their writers' votes: --gold and --method are for "
                             "labels", argument="--gold" if gold else "--method")
        with warnings_as_lines():
            merged = merge_written(manifest, read_written_nuggets(judgments), min_writers=min_writers,
                                   majority=majority, tie=tie, rounding=rounding)
        outputs = {"nuggets.jsonl": format_nuggets(merged.turns)}
    else:
        rules = crowd_rules([manifest["criterion"]], gold, input_format, columns, label_map, (0, 2), majority, tie,
                            rounding, method)
        with warnings_as_lines():
            merged = aggregate_nugget_labels(manifest, judgments, rules)
        outputs = {"assign": lambda: {"assignments.jsonl": format_assignments(merged.assignments)},
                   "importance": lambda: {"nuggets.jsonl": format_nuggets(merged.turns)},
                   "cite": lambda: {"citation_support.csv": format_citation_labels(merged.citations)}}[kind]()
    outputs["audit.json"] = json_text(merged.audit())
    inputs = [*judgments, tasks_path, *([gold] if gold else [])]
    with OutputSet(inputs) as written:
        for name, text in outputs.items():
            written.write_text(os.path.join(out_dir, name), text)
    if merged.aggregation is not None:
        click.echo(summary_table(merged.aggregation), err=True, nl=False)
    done = {"assign": f"{len(merged.assignments)} answers assigned", "importance": f"{len(merged.turns)} turns rated",
            "cite": f"{len(merged.citations)} cited pairs labelled",
            "create": f"{merged.merge.get('nuggets', 0)} nuggets ({merged.merge.get('vital', 0)} vital) for "
                      f"{len(merged.turns)} turns"}[kind]
    click.echo(f"castregin: {done}; written to {out_dir}", err=True)
