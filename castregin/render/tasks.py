"""The files of ``castregin tasks``: judging tasks for any platform, for MTurk, or as offline pages.

Three formats of one :class:`~castregin.judging.tasks.TaskSet`, plus ``gold.csv`` (the rows
``castregin aggregate --gold`` reads) whenever gold is planted:

- ``long``: ``tasks.csv``, one row per (topic, turn, item): ``topic,turn_id,item_id,item_text,context``,
  where ``context`` is the conversation so far as a JSON list of ``{"speaker": "user"|"system",
  "text"}`` (JSON, not prose: a platform's template can lay it out, and the speakers stay apart).
- ``mturk``: ``mturk.csv``, one row per topic, ``topic,items`` (``items``: JSON ``[{"turn_id",
  "context", "items": [{"item_id", "text"}]}]``), and ``hit_template.html``, the HIT's layout with
  crowd-html-elements, which reads ``${items}`` and returns ``Answer.judgments``: a JSON list of
  ``{"turn_id", "item_id", <criterion>: label}``.
- ``html``: ``topic_<id>.html``, one self-contained page per topic (no network, no library): the
  conversation, the item, one 0-3 scale per criterion with its rubric, keyboard shortcuts, progress,
  and an export of the judgments as the long CSV ``worker_id,turn_id,item_id,<criterion>...,seconds``.

Pages are Jinja2 templates (``templates/judging_page.html.j2``, ``hit_template.html.j2``),
autoescaped; the data goes into them as JSON whose ``<``, ``>`` and ``&`` are ``\\u`` escapes, so a
text holding ``</script>`` or ``</textarea>`` cannot end the element that carries it. The rubric
texts of every criterion castregin knows are the judging stage's (:mod:`castregin.judging.rubrics`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence

from ..errors import InputError
from ..judging.rubrics import check_criteria, rubric
from ..judging.tasks import GOLD_COLUMNS, Task, TaskSet
from .html import environment
from .tables import csv_text

FORMATS = ("long", "mturk", "html")
SCALE = (0, 1, 2, 3)
LONG_COLUMNS = ("topic", "turn_id", "item_id", "item_text", "context")
MTURK_COLUMNS = ("topic", "items")
TASKS_CSV, MTURK_CSV, HIT_TEMPLATE, GOLD_CSV = "tasks.csv", "mturk.csv", "hit_template.html", "gold.csv"
#: Every file ``castregin tasks`` may write into its directory (the directory is replaced as a whole).
OUTPUT_NAMES = (TASKS_CSV, MTURK_CSV, HIT_TEMPLATE, GOLD_CSV, "topic_*.html")


def compact_json(value) -> str:
    """JSON on one line, UTF-8, safe inside any HTML element: ``<``, ``>``, ``&`` as ``\\u`` escapes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def topic_turns(tasks: Sequence[Task]) -> list[dict]:
    """The tasks of one topic as turns: ``[{"turn_id", "context", "items": [{"item_id", "text"}]}]``; tasks of one
    turn in several groups (the answers of several runs) are a "turn" each."""
    turns: dict[str, dict] = {}
    for task in tasks:
        turn = turns.setdefault(task.group or task.turn_id, {"turn_id": task.turn_id, "items": [],
                                                             "context": [dict(c) for c in task.context]})
        turn["items"].append({"item_id": task.item_id, "text": task.text})
    return list(turns.values())


def long_csv(task_set: TaskSet) -> str:
    """``tasks.csv``: one row per task, the conversation as JSON."""
    rows = [(t.topic, t.turn_id, t.item_id, t.text, compact_json([dict(c) for c in t.context]))
            for t in task_set.tasks]
    return csv_text(LONG_COLUMNS, rows)


def mturk_csv(task_set: TaskSet) -> str:
    """``mturk.csv``: one row per topic for a batch upload, its turns and items as JSON in ``items``."""
    return csv_text(MTURK_COLUMNS, [(topic, compact_json(topic_turns(tasks)))
                                    for topic, tasks in task_set.by_topic().items()])


def gold_csv(rows: Sequence[dict]) -> str:
    """``gold.csv`` in the format ``castregin aggregate --gold`` reads (as it is: castregin reads it back)."""
    return csv_text(GOLD_COLUMNS, [[row[column] for column in GOLD_COLUMNS] for row in rows], spreadsheet=False)


@functools.cache
def page_words() -> dict[str, dict[str, str]]:
    """What the pages call the conversation panel and the item, and what a HIT asks, by kind of task
    (``templates/page_words.json``)."""
    from importlib import resources

    return json.loads(resources.files(__package__).joinpath("templates/page_words.json").read_text(encoding="utf-8"))


def _criteria_context(criteria: Sequence[str], kind: str = "relevance") -> list[dict]:
    names = check_criteria(criteria) if kind == "relevance" else list(criteria)
    return [{"name": name, **rubric(name)} for name in names]


def _scale(criteria: Sequence[dict]) -> tuple[int, ...]:
    """The labels of the pages' scales: 0-3 for the relevance rubrics, 0-2 for the nugget ones."""
    return tuple(range(max(len(c["levels"]) for c in criteria)))


def hit_template(criteria: Sequence[str], kind: str = "relevance") -> str:
    """``hit_template.html``: the MTurk layout of one topic's HIT (crowd-html-elements, ``${items}``)."""
    return environment().get_template("hit_template.html.j2").render(criteria=_criteria_context(criteria, kind),
                                                                      words=page_words()[kind])


def judging_page(topic: str, tasks: Sequence[Task], criteria: Sequence[str], seed: int, kind: str = "relevance") -> str:
    """The offline judging page of one topic (see the module's docstring)."""
    from markupsafe import Markup

    context = _criteria_context(criteria, kind)
    scale = _scale(context)
    turns = topic_turns(tasks)
    payload = {"topic": topic, "seed": seed, "criteria": list(criteria), "scale": list(scale), "turns": turns}
    # Saved answers are kept under this digest: a page of other tasks does not pick them up.
    payload["digest"] = hashlib.sha256(compact_json(payload).encode("utf-8")).hexdigest()[:16]
    return environment().get_template("judging_page.html.j2").render(
        topic=topic, criteria=context, scale=scale, n_items=len(tasks), n_turns=len(turns), words=page_words()[kind],
        payload=Markup(compact_json(payload)))  # noqa: S704 - compact_json escapes <, > and & (safe in <script>)


def page_name(topic: str) -> str:
    """``topic_<id>.html``; topic ids are plain names (the topics schema allows letters, digits, '.', '-')."""
    if not topic or topic.startswith(".") or any(not (c.isalnum() or c in ".-") for c in topic):
        raise InputError(f"topic {topic!r} cannot name a file; topic ids are letters, digits, '.' and '-'")
    return f"topic_{topic}.html"


def task_files(task_set: TaskSet, fmt: str) -> dict[str, bytes]:
    """The files of ``fmt`` (``long``, ``mturk`` or ``html``), name -> bytes; ``gold.csv`` if gold exists."""
    if fmt == "long":
        files = {TASKS_CSV: long_csv(task_set)}
    elif fmt == "mturk":
        files = {MTURK_CSV: mturk_csv(task_set), HIT_TEMPLATE: hit_template(task_set.criteria, task_set.kind)}
    elif fmt == "html":
        files = {page_name(topic): judging_page(topic, tasks, task_set.criteria, task_set.seed, task_set.kind)
                 for topic, tasks in task_set.by_topic().items()}
    else:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}", argument="fmt")
    if task_set.gold:
        files[GOLD_CSV] = gold_csv(task_set.gold)
    return {name: text.encode("utf-8") for name, text in files.items()}


def tasks_summary(task_set: TaskSet, out_dir: str, files: int) -> str:
    """The line ``tasks`` ends with: how many tasks (gold among them) over how many topics went where."""
    planted = sum(task.gold for task in task_set.tasks)
    return (f"castregin: {len(task_set.tasks)} tasks ({planted} gold) over {len(task_set.by_topic())} topics "
            f"written to {out_dir} ({files} files)")


# --- nugget work for people (castregin nuggets tasks) -------------------------------------------------------------

WRITING_COLUMNS = ("topic", "turn_id", "query", "context", "passages")


def writing_page(topic: str, turns: Sequence) -> str:
    """The offline nugget writing page of one topic: each turn's conversation and relevant passages, a list of
    nuggets to write (each vital or okay), the export of ``worker_id,turn_id,nugget,importance,seconds``."""
    from markupsafe import Markup

    payload: dict = {"topic": topic,
                     "turns": [{"turn_id": t.turn_id, "query": t.query, "context": [dict(c) for c in t.context],
                                "passages": [{"docid": d, "text": text} for d, text in t.passages]} for t in turns]}
    payload["digest"] = hashlib.sha256(compact_json(payload).encode("utf-8")).hexdigest()[:16]
    return environment().get_template("nugget_writing_page.html.j2").render(
        topic=topic, n_turns=len(turns),
        payload=Markup(compact_json(payload)))  # noqa: S704 - compact_json escapes <, > and & (safe in <script>)


def nugget_task_files(nugget_tasks, fmt: str) -> dict[str, bytes]:
    """The files of ``castregin nuggets tasks`` (:class:`castregin.judging.nugget_tasks.NuggetTasks`): those of
    :func:`task_files` for the labelling kinds; for ``create``, one writing page per topic (``html``) or
    ``tasks.csv`` (``long``: ``topic,turn_id,query,context,passages``, the last two as JSON); and always
    ``nugget_tasks.json``, which ``nuggets aggregate`` reads back."""
    from ..formats.nugget_tasks import MANIFEST_NAME, format_manifest

    if nugget_tasks.task_set is not None:
        files = task_files(nugget_tasks.task_set, fmt)
    elif fmt == "html":
        by_topic: dict[str, list] = {}
        for turn in nugget_tasks.writing:
            by_topic.setdefault(turn.topic, []).append(turn)
        files = {page_name(topic): writing_page(topic, turns).encode("utf-8") for topic, turns in by_topic.items()}
    elif fmt == "long":
        rows = [(t.topic, t.turn_id, t.query, compact_json([dict(c) for c in t.context]),
                 compact_json([{"docid": d, "text": text} for d, text in t.passages])) for t in nugget_tasks.writing]
        files = {TASKS_CSV: csv_text(WRITING_COLUMNS, rows).encode("utf-8")}
    else:
        raise InputError(f"nuggets are written in pages (html) or any platform's form (long), not {fmt}: MTurk's "
                         "layout here is for labels", argument="fmt")
    files[MANIFEST_NAME] = format_manifest(nugget_tasks.manifest).encode("utf-8")
    return files
