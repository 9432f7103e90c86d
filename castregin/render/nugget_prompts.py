"""The prompts of ``castregin nuggets create``, ``assign`` and ``cite``: castorini/nuggetizer's, or a user's template.

**Built in.** ``nuggetizer``: the prompts of castorini/nuggetizer 0.0.5 (``src/nuggetizer/models/nuggetizer.py``,
the TREC RAG 2024 AutoNuggetizer), as its system and user messages, word for word
(``templates/nuggetizer_prompts.json``; Apache License 2.0, ``templates/nuggetizer_prompts.LICENSE``):
creation (update a list of at most N nuggets from a window of passages), importance scoring (vital or okay)
and assignment (support, partial_support, not_support; ``nuggetizer-2grade``: support or not_support). The
nuggets appear in them as nuggetizer writes them, a Python list (``['a', 'b']``: a text holding a quote of
both kinds, a backslash or a line break is escaped there as Python escapes it); the answer and the passages
appear verbatim. For citation support, ``support``: our words for the three levels of TREC RAG 2024's support
evaluation (Thakur et al., 2025: full, partial, no support), the sentence and the passage between delimiter lines.

**A user's template** (``--prompt FILE``): Jinja, rendered in the bounded sandbox judge's templates use
(:func:`castregin.render.llm.load_template_file`), sent alone as the user message. Its variables:

- create: ``query``, ``conversation`` (``[{"speaker", "text"}]``, with ``--topics``), ``passages``
  (``[{"docid", "text"}]`` of the window), ``context`` (nuggetizer's ``[1] text`` lines), ``nuggets`` (the
  list so far), ``nugget_list`` (it as a Python list), ``num_nuggets``, ``max_nuggets``, ``qid``;
- score: ``query``, ``conversation``, ``nuggets``, ``nugget_list``, ``num_nuggets``, ``qid``;
- assign: ``query``, ``conversation``, ``answer`` (the answer's text), ``nuggets``, ``nugget_list``,
  ``num_nuggets``, ``qid``, ``run_id``;
- cite: ``statement`` (the sentence), ``passage`` (the cited passage's text, after its title), ``passage_id``,
  ``sentence`` (its position from 0), ``query``, ``qid``, ``run_id``, ``delimiter``.

With a conversation (``--topics``), a built-in prompt's ``query`` is the conversation so far, one
``user: ...``/``system: ...`` line a turn, ending with the turn's own utterance.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

from ..errors import InputError
from .llm import PromptTemplate, load_template_file, render_text

#: The built-in prompts of each task: the name a user gives and the entry of nuggetizer_prompts.json.
BUILTIN = {"create": {"nuggetizer": "create"}, "score": {"nuggetizer": "score"},
           "assign": {"nuggetizer": "assign", "nuggetizer-2grade": "assign-2grade"}, "cite": {"support": "support"}}


@functools.cache
def _nuggetizer_prompts() -> dict:
    text = resources.files(__package__).joinpath("templates").joinpath("nuggetizer_prompts.json").read_text("utf-8")
    return json.loads(text)


@functools.cache
def _template_text(name: str) -> str:
    return resources.files(__package__).joinpath("templates").joinpath(name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class NuggetPrompt:
    """One task's prompt: its template, the system message of a built-in one, and what it is for."""

    task: str
    template: PromptTemplate
    system_text: str | None = None

    @property
    def name(self) -> str:
        return self.template.name

    @property
    def source(self) -> str:
        return self.template.source

    @property
    def digest(self) -> str:
        return hashlib.sha256(((self.system_text or "") + "\0" + self.template.text).encode("utf-8")).hexdigest()

    @property
    def builtin(self) -> bool:
        return self.template.builtin

    @property
    def grades(self) -> int:
        """The support levels an assignment prompt asks for: 2 (nuggetizer-2grade: support, not_support), else 3."""
        return 2 if self.builtin and self.name == "nuggetizer-2grade" else 3

    def describe(self) -> dict:
        """The run log's record of the prompt."""
        return {"name": self.name, "source": self.source, "sha256": self.digest}

    def _messages(self, variables: dict, where: str) -> tuple[dict[str, str], ...]:
        from .prompt_sandbox import TemplateFailure

        try:
            user = render_text(self.template, variables)
        except TemplateFailure as err:
            raise InputError(f"the template fails on {where}: {err}", source=self.source) from None
        if not user.strip():
            raise InputError(f"the template renders nothing for {where}", source=self.source)
        messages = [{"role": "user", "content": user}]
        if self.system_text is not None:
            messages.insert(0, {"role": "system", "content": self.system_text})
        return tuple(messages)

    def _query(self, query: str, conversation: Sequence[Mapping[str, str]]) -> str:
        if self.builtin and len(conversation) > 1:
            return "\n".join(f"{turn['speaker']}: {turn['text']}" for turn in conversation)
        return query

    # --- the four tasks ----------------------------------------------------------------------------------------

    def create(self, qid: str, query: str, conversation: Sequence[Mapping[str, str]],
               passages: Sequence[tuple[str, str]], nuggets: Sequence[str], max_nuggets: int) -> tuple[dict, ...]:
        """The messages that ask to update ``nuggets`` from a window of ``passages`` (``(docid, text)``)."""
        return self._messages({
            "query": self._query(query, conversation), "conversation": [dict(t) for t in conversation],
            "passages": [{"docid": docid, "text": text} for docid, text in passages],
            "context": "\n".join(f"[{i + 1}] {text}" for i, (_, text) in enumerate(passages)),
            "nuggets": list(nuggets), "nugget_list": str(list(nuggets)), "num_nuggets": len(nuggets),
            "max_nuggets": max_nuggets, "qid": qid}, f"turn {qid}")

    def score(self, qid: str, query: str, conversation: Sequence[Mapping[str, str]],
              nuggets: Sequence[str]) -> tuple[dict, ...]:
        """The messages that ask whether each of ``nuggets`` is vital or okay."""
        return self._messages({
            "query": self._query(query, conversation), "conversation": [dict(t) for t in conversation],
            "nuggets": list(nuggets), "nugget_list": str(list(nuggets)), "num_nuggets": len(nuggets), "qid": qid},
            f"turn {qid}")

    def assign(self, qid: str, run_id: str, query: str, conversation: Sequence[Mapping[str, str]], answer: str,
               nuggets: Sequence[str]) -> tuple[dict, ...]:
        """The messages that ask which of ``nuggets`` the answer supports."""
        return self._messages({
            "query": self._query(query, conversation), "conversation": [dict(t) for t in conversation],
            "answer": answer, "nuggets": list(nuggets), "nugget_list": str(list(nuggets)),
            "num_nuggets": len(nuggets), "qid": qid, "run_id": run_id}, f"run {run_id}, turn {qid}")

    def cite(self, run_id: str, qid: str, query: str, sentence: int, statement: str, passage_id: str,
             passage: str) -> tuple[dict, ...]:
        """The messages that ask whether ``passage`` supports ``statement``."""
        delimiter = hashlib.sha256((statement + "\0" + passage).encode("utf-8")).hexdigest()[:12]
        return self._messages({
            "statement": statement, "passage": passage, "passage_id": passage_id, "sentence": sentence,
            "query": query, "qid": qid, "run_id": run_id, "delimiter": delimiter},
            f"run {run_id}, turn {qid}, sentence {sentence}, passage {passage_id}")


def builtin_names(task: str) -> tuple[str, ...]:
    return tuple(BUILTIN[task])


def load_nugget_prompt(task: str, spec: str) -> NuggetPrompt:
    """The prompt of ``task`` (create, score, assign, cite): a built-in name (:data:`BUILTIN`) or a Jinja
    template file's path (``-``: standard input)."""
    entry = BUILTIN[task].get(spec)
    if entry is None:
        return NuggetPrompt(task, load_template_file(spec))
    if task == "cite":
        return NuggetPrompt(task, PromptTemplate(spec, spec, _template_text("citation_support.txt.j2"), system=True),
                            _template_text("citation_support_system.txt").strip())
    prompt = _nuggetizer_prompts()[entry]
    return NuggetPrompt(task, PromptTemplate(spec, spec, prompt["user"], system=True), prompt["system"])
