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
from ..judging.tasks import Task
from .tables import csv_text
from .tasks import rubrics

BUILTIN_PROMPTS = ("rubric", "umbrela")
_UMBRELA_CRITERIA = ("relevance",)


@functools.cache
def _template_text(name: str) -> str:
    return resources.files(__package__).joinpath("templates").joinpath(name).read_text(encoding="utf-8")


@functools.cache
def _sandbox():
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(autoescape=False, keep_trailing_newline=False,
                                undefined=jinja2.StrictUndefined)


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
    from ..formats import read_bytes

    data = read_bytes(spec)  # a missing file, a directory: one line, as for every input
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text; a prompt template is a Jinja text file", source=spec) from None
    # The worker's name says which template: its file name would not tell two versions apart.
    stem = spec.rstrip("/").rsplit("/", 1)[-1].split(".", 1)[0] or "prompt"
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in stem)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    template = PromptTemplate(f"{stem}-{digest[:8]}", spec, text, system=False)
    _compile(template)
    return template


@functools.cache
def _compile(template: PromptTemplate):
    """The template compiled once (a few milliseconds each: 10,000 items x 3 criteria would spend minutes)."""
    import jinja2

    try:
        return _sandbox().from_string(template.text)
    except jinja2.TemplateSyntaxError as err:
        raise InputError(f"the template does not parse: {err.message}", source=template.source,
                         line=err.lineno) from None


def item_delimiter(text: str) -> str:
    """The tag of an item's ``BEGIN ITEM``/``END ITEM`` lines: 12 hex digits of its text's SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def prompt_variables(task: Task, criterion: str) -> dict:
    """What a template sees for one (task, criterion)."""
    rubric = rubrics()[criterion]
    return {"criterion": criterion, "rubric": rubric, "conversation": [dict(c) for c in task.context],
            "item": task.text, "item_id": task.item_id, "turn_id": task.turn_id, "topic": task.topic,
            "delimiter": item_delimiter(task.text)}


def prompt_messages(template: PromptTemplate, task: Task, criterion: str) -> tuple[dict[str, str], ...]:
    """The chat messages of one (task, criterion)."""
    import jinja2

    try:
        user = _compile(template).render(**prompt_variables(task, criterion))
    except jinja2.TemplateError as err:
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
