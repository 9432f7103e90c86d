"""Scripted answerers for clembench's privateshared game, written from the game's rules alone.

Each player is a plain function ``messages -> answer text`` (chat messages as the model would get
them), stateless, and knows nothing of castregin: it reads the slot values from the initial prompt
(its ``KEY: value`` lines) and finds which slot a request or probe is about by looking its text up in
the game's own texts (``requests.json`` and ``probing_questions.json`` of the game folder). The same
functions play the game in castregin's tests and, through a clemcore backend
(``make_privateshared_oracle.py``), in clembench's own game master, whose records are kept as
the oracle (``tests/data/privateshared/oracle-2.0.tar.xz``).

* ``truthful``: answers every request with the slot's value; answers a probe "yes" exactly when the
  slot's value has been said by the model before (in an earlier answer).
* ``always_yes``: answers requests as ``truthful``, every probe "yes".
* ``unparseable_first``: as ``truthful``, but the first try of every probe comes without its tag.
* ``never_parseable``: never uses a tag ("I would rather not say.").
* ``eager``: as ``truthful``, but gives the value of the slot requested after the current one too
  (so that slot's truth moves forward), answers the second probe of every round on two lines (a
  continuation: invalid under clembench 2.0's rules, still valid under 1.0's), then correctly.
* ``untagged``: as ``truthful``, but answers the second request without its tag (1.0 aborts the
  episode; 2.0 counts a violated request and goes on to the next request, without probing).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_SLOT_LINE = re.compile(r"^([A-Z][A-Z0-9_-]*): (.+)$", re.MULTILINE)


class Texts:
    """The request and probing texts of a game folder, to tell which slot a message is about."""

    def __init__(self, game_dir: Path):
        texts = Path(game_dir) / "resources" / "texts"
        self.requests: list[tuple[str, str]] = []
        self.probes: list[tuple[str, str]] = []
        for experiment in sorted(p for p in texts.iterdir() if p.is_dir()):
            for name, target in (("requests.json", self.requests), ("probing_questions.json", self.probes)):
                path = experiment / name
                if path.exists():
                    for slot, variants in json.loads(path.read_text(encoding="utf-8")).items():
                        target.extend((text, slot) for text in variants)
        # the longest text first: a text may contain a shorter one
        self.requests.sort(key=lambda pair: -len(pair[0]))
        self.probes.sort(key=lambda pair: -len(pair[0]))

    @staticmethod
    def _find(pairs: list[tuple[str, str]], content: str) -> str:
        for text, slot in pairs:
            if text in content:
                return slot
        raise LookupError(f"no known text in {content!r}")

    def request_slot(self, content: str) -> str:
        return self._find(self.requests, content)

    def probe_slot(self, content: str) -> str:
        return self._find(self.probes, content)


def slot_values(messages: list[dict]) -> dict[str, str]:
    """SLOT -> value, from the ``KEY: value`` lines of the first message (the initial prompt)."""
    return {key.lower(): value.strip() for key, value in _SLOT_LINE.findall(messages[0]["content"])
            if key not in ("WHAT", "ANSWER", "ASIDE", "ME")}


def said_before(messages: list[dict], value: str) -> bool:
    return any(m["role"] == "assistant" and value.lower() in m["content"].lower() for m in messages[:-1])


def is_probe(messages: list[dict]) -> bool:
    return messages[-1]["content"].startswith("ME:")


def first_try(messages: list[dict]) -> bool:
    """Whether a probe is asked for the first time: the first try's reprompt suffix is empty, so the
    game master's "ME: " + suffix + " " leaves two spaces."""
    return messages[-1]["content"].startswith("ME:  ")


def make_players(game_dir: Path) -> dict:
    texts = Texts(game_dir)

    def request_answer(messages, eager=False):
        values = slot_values(messages)
        slot = texts.request_slot(messages[-1]["content"])
        answer = f"ANSWER: {values[slot]}."
        if eager:
            unsaid = [s for s, v in values.items() if s != slot and not said_before(messages, v)]
            if unsaid:
                answer = f"ANSWER: {values[slot]}, and also {values[unsaid[0]]}."
        return answer

    def truthful_probe(messages):
        values = slot_values(messages)
        slot = texts.probe_slot(messages[-1]["content"])
        return "ASIDE: Yes." if said_before(messages, values[slot]) else "ASIDE: No."

    def truthful(messages):
        return truthful_probe(messages) if is_probe(messages) else request_answer(messages)

    def always_yes(messages):
        return "ASIDE: Yes." if is_probe(messages) else request_answer(messages)

    def unparseable_first(messages):
        if is_probe(messages) and first_try(messages):
            return truthful_probe(messages).replace("ASIDE: ", "")
        return truthful(messages)

    def never_parseable(messages):
        return "I would rather not say."

    def eager(messages):
        if not is_probe(messages):
            return request_answer(messages, eager=True)
        values = slot_values(messages)
        slot = texts.probe_slot(messages[-1]["content"])
        if first_try(messages) and slot == sorted(values)[1]:
            return truthful_probe(messages) + "\nI hope that helps."
        return truthful_probe(messages)

    def untagged(messages):
        requests_so_far = sum(m["role"] == "user" for m in messages[1:])  # probes are never kept
        if not is_probe(messages) and requests_so_far == 2:
            return request_answer(messages).replace("ANSWER: ", "")
        return truthful(messages)

    return {"truthful": truthful, "always-yes": always_yes, "unparseable-first": unparseable_first,
            "never-parseable": never_parseable, "eager": eager, "untagged": untagged}
