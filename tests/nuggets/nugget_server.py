"""A chat-completions endpoint on 127.0.0.1 for the tests of ``castregin nuggets create``, ``assign`` and ``cite``:
no model, rules of its own, read off the prompts as nuggetizer writes them.

It is :class:`tests.judging.chat_server.ChatServer` (the protocol, the faults: 429 with Retry-After, 500, a slow
answer, malformed and truncated JSON, a dropped connection, each on the first request of a prompt chosen by its
digest; the counts of what it answered) with another :meth:`reply`. It tells the task by the prompt's words and
takes the prompt apart itself (``Nugget List: [...]`` with :func:`ast.literal_eval`, the ``[i] passage`` lines,
the statement and passage blocks), never with castregin's code:

- **assign** (nuggetizer's assignment prompt): a nugget is ``support`` when every word of four letters or more
  in it is in the passage (the answer), ``partial_support`` when some are, ``not_support`` when none is
  (:func:`support_rule`). The list comes in one of several forms, chosen by the prompt's digest: a JSON list,
  a Python list, a Python list in a ```` ```python ```` fence, labels capitalised, and (unless
  ``nuggetizer_forms``, which keeps to what nuggetizer reads) reasoning lines before the list on the final line.
  An answer holding ``RAMBLE`` gets no list, ``SHORT`` a list one label short, ``REFUSE`` a refusal;
- **create**: the initial list, then each passage's first sentence (up to its first ". ") not yet in it, cut to
  the prompt's "at most N" (:func:`creation_rule`); a Python list;
- **score**: ``vital`` when the nugget shares a word of four letters or more with the query, else ``okay``
  (:func:`importance_rule`); a Python list;
- **cite**: ``Full Support`` when every word of four letters or more of the statement is in the passage,
  ``Partial Support`` when some are, ``No Support`` when none is (:func:`citation_rule`), after a line of
  reasoning; a statement holding ``RAMBLE`` gets no label.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re

from judging.chat_server import ChatServer, serve

WORD = re.compile(r"[a-z]{4,}")
ASSIGN_FORMS = ("json", "python", "fenced", "capitalised", "reasoned")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def support_rule(nugget: str, passage: str) -> str:
    """support, partial_support or not_support: how many of the nugget's words the passage has."""
    mine = words(nugget)
    shared = mine & words(passage)
    if mine and shared == mine:
        return "support"
    return "partial_support" if shared else "not_support"


def importance_rule(nugget: str, query: str) -> str:
    return "vital" if words(nugget) & words(query) else "okay"


def first_sentence(passage: str) -> str:
    return passage.split(". ", 1)[0].strip().rstrip(".")


def creation_rule(initial: list[str], passages: list[str], most: int) -> list[str]:
    found = list(initial)
    for passage in passages:
        sentence = first_sentence(passage)
        if sentence and sentence not in found:
            found.append(sentence)
    return found[:most]


def citation_rule(statement: str, passage: str) -> str:
    return {"support": "Full Support", "partial_support": "Partial Support",
            "not_support": "No Support"}[support_rule(statement, passage)]


def serve_nuggets(**options) -> NuggetServer:
    """A running :class:`NuggetServer` in a daemon thread (``server.shutdown()`` stops it)."""
    return serve(NuggetServer, **options)


def _digest(prompt: str) -> int:
    return int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16)


class NuggetServer(ChatServer):
    """The chat server with the nugget rules (see the module); ``nuggetizer_forms`` keeps its lists to the forms
    nuggetizer reads."""

    def __init__(self, *args, nuggetizer_forms: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.nuggetizer_forms = nuggetizer_forms

    def reply(self, body: dict) -> tuple[str | None, str | None]:
        prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
        if "BEGIN STATEMENT" in prompt:
            return self._cite(prompt), None
        if "Initial Nugget List:" in prompt:
            return self._create(prompt), None
        if "either a vital or okay" in prompt:
            return self._score(prompt), None
        if "Passage: " in prompt and "Nugget List: " in prompt:
            return self._assign(prompt)
        return "I do not know this task.", None

    def _assign(self, prompt: str) -> tuple[str | None, str | None]:
        match = re.search(r"\nPassage: (.*)\nNugget List: (\[.*\])\nOnly return", prompt, re.DOTALL)
        assert match, prompt
        passage, nuggets = match.group(1), ast.literal_eval(match.group(2))
        if "REFUSE" in passage:
            return None, "I can't help with that."
        if "RAMBLE" in passage:
            return "These nuggets are mostly about the topic of the passage.", None
        labels = [support_rule(nugget, passage) for nugget in nuggets]
        if "SHORT" in passage:
            labels = labels[:-1]
        forms = ASSIGN_FORMS[:-1] if self.nuggetizer_forms else ASSIGN_FORMS
        form = forms[_digest(prompt) % len(forms)]
        if form == "json":
            return json.dumps(labels), None
        if form == "python":
            return str(labels), None
        if form == "fenced":
            return f"```python\n{labels}\n```", None
        if form == "capitalised":
            return str([label.capitalize() for label in labels]), None
        return f"I compared each nugget with the passage.\nLabels, in order:\n{json.dumps(labels)}", None

    def _create(self, prompt: str) -> str:
        most = int(re.search(r"has at most (\d+) nuggets", prompt).group(1))
        context = re.search(r"\nContext:\n(.*?)\nSearch Query: ", prompt, re.DOTALL).group(1)
        passages = [re.sub(r"^\[\d+\] ", "", line) for line in context.split("\n")]
        initial = ast.literal_eval(re.search(r"\nInitial Nugget List: (\[.*\])\nInitial Nugget List Length",
                                             prompt, re.DOTALL).group(1))
        return str(creation_rule(initial, passages, most))

    def _score(self, prompt: str) -> str:
        query = re.search(r"\nSearch Query: (.*)\nNugget List: ", prompt, re.DOTALL).group(1)
        nuggets = ast.literal_eval(re.search(r"\nNugget List: (\[.*\])\n", prompt, re.DOTALL).group(1))
        return str([importance_rule(nugget, query) for nugget in nuggets])

    def _cite(self, prompt: str) -> str:
        statement = re.search(r"BEGIN STATEMENT (\w+)\n(.*)\nEND STATEMENT \1", prompt, re.DOTALL).group(2)
        passage = re.search(r"BEGIN PASSAGE (\w+)\n(.*)\nEND PASSAGE \1", prompt, re.DOTALL).group(2)
        if "RAMBLE" in statement:
            return "The passage and the statement are on the same subject."
        return f"I checked every piece of the statement against the passage.\n{citation_rule(statement, passage)}"


if __name__ == "__main__":
    # PYTHONPATH=tests python -m nuggets.nugget_server URL_FILE: a server for trying the nugget commands by hand.
    import sys
    import threading

    running = serve_nuggets(faults=False)
    with open(sys.argv[1], "w") as handle:
        handle.write(running.base_url)
    threading.Event().wait()
