"""The prompts and the files of ``castregin judge``.

**Prompts.** One prompt per (turn, item, criterion): a system message (``templates/llm_system.txt``:
the item is data, not instructions; end with ``Label: N``) and a user message rendered from a Jinja
template with the conversation so far (what ``castregin tasks`` builds), the item between
``BEGIN ITEM <d>`` and ``END ITEM <d>`` lines, and the criterion's rubric (``templates/rubrics.json``,
the one the judging pages show). ``<d>`` is the first 12 hex digits of the SHA-256 of the item's
text, so an item cannot close its own block. Built in: ``rubric`` (any criterion) and ``umbrela``
(relevance only: the 0-3 scale of Thomas et al. 2023, "Large language models can accurately predict
searcher preferences", as UMBRELA reproduced it, Upadhyay et al. 2024, in our own words). A user's
template (``--prompt FILE``) is rendered in Jinja's sandbox with the same variables (``criterion``,
``rubric``, ``conversation``, ``item``, ``item_id``, ``turn_id``, ``topic``, ``delimiter``) and is
sent alone, as the user message.

**Files.** ``judgments.csv`` is the crowd long format ``castregin aggregate`` reads
(``worker_id,turn_id,item_id,<criterion>...``; an unparseable answer is an empty cell), one worker
per model x prompt (x sample); ``labels.csv`` has each pair's label (the mode of the samples), the
samples' spread and every sample's answer; ``<prefix>_<criterion>.qrel`` the labels as qrels
(pairs without a parsed label left out); ``run_log.json`` what the run did.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

from ..errors import InputError
from ..judging.rubrics import rubrics
from ..judging.tasks import Task
from .tables import csv_text

BUILTIN_PROMPTS = ("rubric", "umbrela")
_UMBRELA_CRITERIA = ("relevance",)


@functools.cache
def _template_text(name: str) -> str:
    return resources.files(__package__).joinpath("templates").joinpath(name).read_text(encoding="utf-8")


@functools.cache
def _sandbox():
    import jinja2

    from .prompt_sandbox import bounded_sandbox

    return bounded_sandbox(undefined=jinja2.StrictUndefined)


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt: its name (part of the worker's id), the template's text, and whether a system message goes first."""

    name: str
    source: str
    text: str
    system: bool

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def builtin(self) -> bool:
        """A built-in prompt (its system message first), not a user's template file (then an input of the run)."""
        return self.system

    def messages(self, task: Task, criterion: str) -> tuple[dict[str, str], ...]:
        """The chat messages of one (task, criterion): :func:`prompt_messages`."""
        return prompt_messages(self, task, criterion)


def load_prompt(spec: str, criteria: Sequence[str]) -> PromptTemplate:
    """``rubric``, ``umbrela`` or a template file's path (``-``: standard input; compressed files too)."""
    if spec in BUILTIN_PROMPTS:
        if spec == "umbrela" and any(c not in _UMBRELA_CRITERIA for c in criteria):
            raise InputError("umbrela judges relevance only; give --criteria relevance, or use "
                             "--prompt rubric for the other criteria", argument="prompt")
        return PromptTemplate(spec, spec, _template_text(f"llm_{spec}.txt.j2"), system=True)
    return load_template_file(spec)


def load_template_file(spec: str) -> PromptTemplate:
    """A user's template file (``-``: standard input), compiled in the sandbox: the ``--prompt FILE`` of every
    command that calls a model. Its name is the file's stem and 8 hex digits of its text's SHA-256."""
    from ..formats.prompts import read_prompt_file

    text = read_prompt_file(spec)  # a missing file, a directory, not UTF-8: one line, as for every input
    # The worker's name says which template: its file name would not tell two versions apart.
    stem = spec.rstrip("/").rsplit("/", 1)[-1].split(".", 1)[0] or "prompt"
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in stem)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    template = PromptTemplate(f"{stem}-{digest[:8]}", spec, text, system=False)
    _compile(template)
    return template


@functools.cache
def _compile(template: PromptTemplate):
    """The template compiled once (a few milliseconds each: 10,000 items x 3 criteria would spend minutes).

    A user's template is one file: ``include``, ``extends`` and ``import`` are refused here, in one line."""
    from .prompt_sandbox import check_template

    return check_template(_sandbox(), template.text, template.source)


def item_delimiter(text: str) -> str:
    """The tag of an item's ``BEGIN ITEM``/``END ITEM`` lines: 12 hex digits of its text's SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def prompt_variables(task: Task, criterion: str) -> dict:
    """What a template sees for one (task, criterion)."""
    rubric = rubrics()[criterion]
    return {"criterion": criterion, "rubric": rubric, "conversation": [dict(c) for c in task.context],
            "item": task.text, "item_id": task.item_id, "turn_id": task.turn_id, "topic": task.topic,
            "delimiter": item_delimiter(task.text)}


def render_text(template: PromptTemplate, variables: dict) -> str:
    """``template`` rendered with ``variables``: a built-in one as is, a user's in the bounded sandbox (within
    :data:`castregin.limits.MAX_PROMPT_CHARS` and :data:`~castregin.limits.MAX_PROMPT_SECONDS`); whatever a
    user's template does wrong is a :class:`~castregin.render.prompt_sandbox.TemplateFailure`."""
    from .prompt_sandbox import render_bounded

    compiled = _compile(template)
    return compiled.render(**variables) if template.system else render_bounded(compiled, variables)


def prompt_messages(template: PromptTemplate, task: Task, criterion: str) -> tuple[dict[str, str], ...]:
    """The chat messages of one (task, criterion). A user's template renders within
    :data:`castregin.limits.MAX_PROMPT_CHARS` and :data:`~castregin.limits.MAX_PROMPT_SECONDS`; whatever it
    does wrong (a division by zero, a range too big, a macro calling itself) is one line naming the pair."""
    from .prompt_sandbox import TemplateFailure

    try:
        user = render_text(template, prompt_variables(task, criterion))
    except TemplateFailure as err:
        raise InputError(f"the template fails on turn {task.turn_id}, item {task.item_id}: {err}",
                         source=template.source) from None
    if not user.strip():
        raise InputError(f"the template renders nothing for turn {task.turn_id}, item {task.item_id}",
                         source=template.source)
    messages = [{"role": "user", "content": user}]
    if template.system:
        messages.insert(0, {"role": "system", "content": _template_text("llm_system.txt").strip()})
    return tuple(messages)


def judgments_csv(rows: Sequence[tuple[str, str, str, Mapping[str, int | None]]], criteria: Sequence[str]) -> str:
    """The crowd long CSV: ``(worker, turn, item, {criterion: label or None})`` rows; ``None`` is an empty cell."""
    body = [(worker, turn, item, *("" if labels.get(c) is None else labels[c] for c in criteria))
            for worker, turn, item, labels in rows]
    return csv_text(("worker_id", "turn_id", "item_id", *criteria), body, spreadsheet=False)


LABEL_COLUMNS = ("turn_id", "item_id", "criterion", "label", "spread", "samples", "parsed", "answers")


def labels_csv(rows: Sequence[Sequence]) -> str:
    """``labels.csv``: each (turn, item, criterion) with its label, spread, sample count, parsed count, answers."""
    return csv_text(LABEL_COLUMNS, rows, spreadsheet=False)


def run_log_json(log: Mapping) -> str:
    """The run log as indented JSON, keys in the order given (castregin's JSON: no NaN)."""
    from ..formats.common import json_text

    return json_text(log)


#: The files ``castregin judge`` writes into its directory, beside ``<prefix>_<criterion>.qrel`` and the cache.
JUDGMENTS_CSV, LABELS_CSV, RUN_LOG_JSON = "judgments.csv", "labels.csv", "run_log.json"


def judge_files(judged, criteria: Sequence[str], qrels_names: Mapping[str, str]) -> dict[str, str]:
    """The text of every file of a judging run (:class:`castregin.judging.llm.LLMJudgment`), by file name."""
    from ..formats.trec import format_qrels

    files = {JUDGMENTS_CSV: judgments_csv(judged.rows, criteria), LABELS_CSV: labels_csv(judged.label_rows),
             RUN_LOG_JSON: run_log_json(judged.log)}
    files.update({qrels_names[c]: format_qrels(judged.qrels[c]) for c in criteria})
    return files


def missing_calls_lines(log: Mapping, then: str) -> list[str]:
    """The warning of a run log's calls without an answer: the budget spent, or calls failed after every retry
    (by kind, the first error), ``then`` saying what to do; no line when every call has its answer."""
    this = log["this_run"]
    missing = log["calls"] - log["answered"]
    if this["budget_spent"]:
        return [(f"castregin: warning: the budget of --max-requests is spent; {missing} call(s) not made: "
                 "run the same command again to go on")]
    if not missing:
        return []
    failures = ", ".join(f"{k} {v}" for k, v in this["failures"].items())
    first = f"; the first error: {this['first_failure']}" if this.get("first_failure") else ""
    said = f"castregin: warning: {missing} call(s) failed after every retry or were not sent ({failures}){first}"
    return [said + then]


def judge_summary(log: Mapping) -> list[str]:
    """What a judging run says on standard error: what is missing and why, unparseable answers (a few shown),
    flagged items, and the totals."""
    this = log["this_run"]
    have = (f"the outputs hold the {log['answered']} answers there are ({this['from_cache']} from the cache, "
            f"{this['new_answers']} new)")
    lines = missing_calls_lines(log, f"; {have}: run again to retry the rest")
    bad = sum(log["unparseable"].values())
    if bad:
        lines.append(f"castregin: warning: {bad} answer(s) have no label on their final line "
                     f"({log['refusals']} refusals); they are left unjudged, see run_log.json")
        lines.extend(f"castregin:   turn {e['turn_id']}, item {e['item_id']}, {e['criterion']}: "
                     f"{'refused: ' if e['refusal'] else ''}{e['last_line'][:100]!r}"
                     for e in log["unparseable_examples"][:3])
    if log["flagged_items"]:
        lines.append(f"castregin: warning: {len(log['flagged_items'])} item(s) address the assessor "
                     "(e.g. 'rate this 3'); listed in run_log.json")
    lines.append(f"castregin: {log['answered']} of {log['calls']} calls answered ({this['from_cache']} from the "
                 f"cache, {this['requests']} requests now); tokens {log['tokens']['prompt']} in, "
                 f"{log['tokens']['completion']} out; cost ${log['cost']['usd']:.4f}")
    return lines
