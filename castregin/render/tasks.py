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

import hashlib
import json
from collections.abc import Sequence

from ..errors import InputError
from ..judging.rubrics import check_criteria, rubrics
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
    """The tasks of one topic as turns: ``[{"turn_id", "context", "items": [{"item_id", "text"}]}]``."""
    turns: dict[str, dict] = {}
    for task in tasks:
        turn = turns.setdefault(task.turn_id, {"turn_id": task.turn_id, "items": [],
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


def _criteria_context(criteria: Sequence[str]) -> list[dict]:
    known = rubrics()
    return [{"name": name, **known[name]} for name in check_criteria(criteria)]


def hit_template(criteria: Sequence[str]) -> str:
    """``hit_template.html``: the MTurk layout of one topic's HIT (crowd-html-elements, ``${items}``)."""
    return environment().get_template("hit_template.html.j2").render(criteria=_criteria_context(criteria))


def judging_page(topic: str, tasks: Sequence[Task], criteria: Sequence[str], seed: int) -> str:
    """The offline judging page of one topic (see the module's docstring)."""
    from markupsafe import Markup

    turns = topic_turns(tasks)
    payload = {"topic": topic, "seed": seed, "criteria": list(criteria), "scale": list(SCALE), "turns": turns}
    # Saved answers are kept under this digest: a page of other tasks does not pick them up.
    payload["digest"] = hashlib.sha256(compact_json(payload).encode("utf-8")).hexdigest()[:16]
    return environment().get_template("judging_page.html.j2").render(
        topic=topic, criteria=_criteria_context(criteria), scale=SCALE, n_items=len(tasks),
        n_turns=len(turns),
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
        files = {MTURK_CSV: mturk_csv(task_set), HIT_TEMPLATE: hit_template(task_set.criteria)}
    elif fmt == "html":
        files = {page_name(topic): judging_page(topic, tasks, task_set.criteria, task_set.seed)
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
