"""Playing clembench's privateshared game: the game master, with the model behind a plain callable.

The game (Chalamalasetti et al., 2023, *clembench*): the model plays a person who holds private
information (an applicant's CV, a traveller's wishes...), given as ``SLOT: value`` lines in an
initial prompt. A programmatic questioner requests the slots one by one, in the instance's
``request_order``, with the instance's request texts, tagged (``RECRUITER: What is your highest
academic degree?``). Before the first request and after each answer, the game master *probes* the
model on every slot: "does the other party know this yet?" (``ME: ... Please answer yes or no.``).
A probe is asked on its own, after the conversation so far, and never kept in it; an answer that
does not parse is asked again with clembench's reprompt suffixes (``ME: Please answer this question
carefully. ...``), up to one try per suffix (5); a probe still unparsed ends the episode (aborted).
An answer is valid when it starts with its tag (``ANSWER:`` to a request, ``ASIDE:`` to a probe);
a probe's answer is then ``yes`` or ``no`` by its first word. A slot is *filled* when the answer to
its request contains its value (case-insensitive); a value said before its request moves that
slot's truth forward: it counts as shared from the next probing round on.

Two rule sets, selected by ``rules``, reproduce the two game masters clembench has had:

``"1.0"``
    clembench 0.9 and 1.0 (2023), the game of the published leaderboard episodes: the
    conversation starts with the initial prompt alone; the words are built in
    (:data:`~castregin.formats.privateshared.WORDS_1_0`); every probe of a round is asked even after
    one failed; an answer to a request without its tag aborts the episode; records as clemgame
    1.0 wrote them. Replaying the published episodes' answers reproduces their
    ``interactions.json`` (but for timestamps) and scores (``tests/dialogue``).
``"2.0"``
    clembench's current game master (privateshared on clemcore's ``DialogueGameMaster``; clembench
    2.0's instances): the words come from the game folder (``resources/LANG_words.json``); the
    initial prompt is answered by the words' ``Ok.`` as the first exchange; an answer with a line
    break before its end (a continuation) is invalid; a round of probes stops at the first probe that
    fails; an invalid answer to a request counts as a violated request and the game goes on to the
    next request without probing. Checked against clembench's own game master run with scripted
    players (the records kept in ``tests/data/privateshared/oracle-2.0``).

The model is any ``player(messages) -> str`` (or a :class:`Reply`, to record the raw response):
``messages`` is the chat so far as OpenAI-style ``{"role", "content"}`` dicts, the last one the
game master's; the text is stripped as clembench's backends strip it. Requests and probes are asked
one at a time, in order: a replay of the same answers gives the same conversation.

:func:`play_episode` plays one instance and returns its records; the scores are
:func:`castregin.dialogue.scorekeeping.score_episode`'s, the same that score published episodes.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from ..formats.privateshared import WORDS_1_0, Experiment, GameTexts, Instance, Words
from .scorekeeping import score_episode

RULES = ("1.0", "2.0")
DEFAULT_RULES = "2.0"

INVALID = "NA"  # clembench's parse of an answer that is not yes or no
INVALID_LABEL = 2  # and its value in a probe
UPDATE = "Value for {} anticipated; ground truth turn updated from {} to {}."
NOT_SUCCESS = "Answer for {} invalid after max attempts."
SUCCESS = "Answer for {} valid after {} tries."
RESULT = "Answer is {}correct."
ABORT_PROBING = "Abort: invalid format in probing."
ABORT_SLOT = "Abort: invalid format in slot filling."
REQUEST_COUNTS = ("Request Count", "Parsed Request Count", "Violated Request Count")

Message = dict  # {"role": "user" | "assistant", "content": str}


class Reply(NamedTuple):
    """A model's answer with the raw response it came in (written to ``requests.json``)."""

    text: str
    response: Any = None


class Player(Protocol):
    """The model: the chat so far in, the answer out."""

    def __call__(self, messages: list[Message]) -> str | Reply: ...


def now() -> str:
    """clembench's timestamps: local time, ISO 8601 with microseconds."""
    return datetime.datetime.now().isoformat()


@dataclass
class EpisodeRecords:
    """What one episode leaves in clembench's results layout (one file each)."""

    instance: dict
    interactions: dict
    requests: Any
    scores: dict = field(default_factory=dict)


def has_continuation(response: str) -> bool:
    """clembench 2.0: a line break with something after it (trailing line breaks do not count)."""
    return "\n" in response.strip("\n")


def filter_tag(answer: str, tag: str) -> str:
    return answer.replace(tag, "").strip()


class _Recorder:
    """clemgame 1.0's records: ``{"players", "turns": [[event...]...], keys...}`` and a list of calls."""

    def __init__(self, clock: Callable[[], str]):
        self.clock = clock
        self.interactions: dict = {"players": {}, "turns": []}
        self.requests: list = []

    def next_round(self) -> None:
        self.interactions["turns"].append([])

    def event(self, from_: str, to: str, action: dict, call: tuple | None = None) -> None:
        timestamp = self.clock()
        self.interactions["turns"][-1].append({"from": from_, "to": to, "timestamp": timestamp, "action": action})
        if call:
            self.requests.append({"timestamp": timestamp, "manipulated_prompt_obj": copy.deepcopy(call[0]),
                                  "raw_response_obj": copy.deepcopy(call[1])})

    def key(self, name: str, value) -> None:
        self.interactions[name] = value


class _Game:
    """One episode of one instance; :meth:`play` runs it."""

    def __init__(self, experiment: Experiment, instance: Instance, texts: GameTexts, player: Player, model: str,
                 rules: str, clock: Callable[[], str]):
        if rules not in RULES:
            raise ValueError(f"rules must be one of {RULES}, not {rules!r}")
        self.rules = rules
        self.instance = instance
        self.player = player
        self.model = model
        self.words: Words = WORDS_1_0 if rules == "1.0" else texts.words[instance.lang or "en"]
        self.probing_questions = texts.probing_questions[experiment.name]
        self.request_texts = texts.requests[experiment.name]
        self.retries = list(texts.reprompts)
        self.questioner_tag = f"{instance.tag}: "
        self.probe_gt = {slot: i for i, slot in enumerate(instance.request_order)}
        self.rounds = len(instance.request_order) + 1  # one probing round before the first request, one after each
        self.counts = {name: [0] * self.rounds for name in REQUEST_COUNTS}
        self.filled_slots: list[bool] = []
        self.all_probes: list[list[dict]] = []
        self.played_probing_rounds = 0
        self.aborted = False
        self.messages: list[Message] = []
        self.recorder = _Recorder(clock)

    # --- the model -------------------------------------------------------------------------------------

    def ask(self, messages: list[Message]) -> tuple[str, Any]:
        """The model's answer (stripped, as clembench's backends strip it) and the raw response."""
        reply = self.player(copy.deepcopy(messages))
        if isinstance(reply, Reply):
            return reply.text.strip(), reply.response
        if not isinstance(reply, str):
            raise TypeError(f"a player must return a str or a Reply, not {type(reply).__name__}")
        return reply.strip(), None

    def count(self, name: str, round_number: int) -> None:
        self.counts[name][round_number] += 1

    # --- probing ---------------------------------------------------------------------------------------

    def probe_content(self, question: str, tries: int) -> str:
        return question.replace(self.words.me, f"{self.words.me}{self.retries[tries - 1]} ")

    def parse_probe_answer(self, response: str) -> str:
        aside = self.words.aside.strip()
        if not response.startswith(aside) or (self.rules == "2.0" and has_continuation(response)):
            return INVALID
        clean = filter_tag(response, aside).lower()
        if clean.startswith(self.words.yes):
            return self.words.yes
        if clean.startswith(self.words.no):
            return self.words.no
        return INVALID

    def value_of(self, parsed: str) -> int:
        return 1 if parsed == self.words.yes else 0 if parsed == self.words.no else INVALID_LABEL

    def probe(self, round_number: int) -> bool:
        """One probing round: every slot's probe (in the instance's order), each tried until it parses."""
        record = self.recorder
        if self.rules == "1.0":
            record.event("GM", "GM", {"type": "info", "content": "Begin probing"})
        probes = [{"target": slot.upper(),
                   "question": self.words.probe.format(self.probing_questions[slot][index]),
                   "gt": 1 if round_number > self.probe_gt[slot] else 0}
                  for slot, index in self.instance.probes[str(round_number)].items()]
        successes = []
        for probe in probes:
            tries, successful = 1, False
            answer, parsed = "", INVALID
            while tries <= len(self.retries):
                question = self.probe_content(probe["question"], tries)
                prompt = [*self.messages, {"role": "user", "content": question}]
                record.event("GM", "Player 1", {"type": "probe question", "content": question})
                answer, response = self.ask(prompt)
                record.event("Player 1", "GM", {"type": "probe answer", "content": answer}, call=(prompt, response))
                self.count("Request Count", round_number)
                parsed = self.parse_probe_answer(answer)
                record.event("GM", "GM", {"type": "parse", "content": parsed})
                if parsed in (self.words.yes, self.words.no):
                    successful = True
                    self.count("Parsed Request Count", round_number)
                    break
                self.count("Violated Request Count", round_number)
                tries += 1
            probe.update(answer=answer, value=self.value_of(parsed), tries=tries)
            content = SUCCESS.format(probe["target"], tries) if successful else NOT_SUCCESS.format(probe["target"])
            record.event("GM", "GM", {"type": "metadata", "content": content})
            record.event("GM", "GM", {"type": "check",
                                      "content": RESULT.format("" if probe["value"] == probe["gt"] else "in")})
            successes.append(successful)
            if not successful and self.rules == "2.0":
                break
        self.all_probes.append(probes)
        if self.rules == "1.0":
            record.event("GM", "GM", {"type": "info", "content": "End probing"})
        if all(successes):
            self.played_probing_rounds += 1
            return True
        record.event("GM", "GM", {"type": "invalid format", "content": ABORT_PROBING})
        self.aborted = True
        return False

    # --- requests --------------------------------------------------------------------------------------

    def update_anticipated_slots(self, answer: str, turn: int) -> None:
        for slot, value in self.instance.slots.items():
            if value.lower() in answer.lower() and turn < self.probe_gt[slot]:
                self.recorder.event("GM", "GM", {"type": "metadata",
                                                 "content": UPDATE.format(slot.upper(), self.probe_gt[slot], turn)})
                self.probe_gt[slot] = turn

    def request(self, round_number: int) -> bool:
        """Round ``round_number`` (1...): the questioner's request and the model's answer; False: aborted."""
        record = self.recorder
        slot = self.instance.request_order[round_number - 1]
        value = self.instance.slots[slot]
        request = self.request_texts[slot][self.instance.requests[slot]]
        tagged = f"{self.questioner_tag}{request}"
        record.event("GM", "Player 2", {"type": "send message", "content": self.words.dummy_prompt})
        record.event("Player 2", "GM", {"type": "get message", "content": tagged.replace(self.questioner_tag, "").strip()})
        record.event("GM", "Player 1", {"type": "send message", "content": tagged})
        self.messages.append({"role": "user", "content": tagged})
        answer, response = self.ask(self.messages)
        record.event("Player 1", "GM", {"type": "get message", "content": answer}, call=(self.messages, response))
        self.messages.append({"role": "assistant", "content": answer})
        self.count("Request Count", round_number)
        answer_tag = self.words.answer.strip()
        parsed = filter_tag(answer, answer_tag) if answer.startswith(answer_tag) else INVALID
        record.event("GM", "GM", {"type": "parse", "content": parsed})
        if parsed == INVALID:
            self.count("Violated Request Count", round_number)
            record.event("GM", "GM", {"type": "invalid format", "content": ABORT_SLOT})
            self.aborted = True
            return False
        self.count("Parsed Request Count", round_number)
        filled = value.lower() in answer.lower()
        self.filled_slots.append(filled)
        record.event("GM", "GM", {"type": "metadata", "content": f"Slot filled: {filled}"})
        self.update_anticipated_slots(answer, round_number - 1)
        record.event("GM", "Player 2", {"type": "send message", "content": parsed})
        return True

    # --- the episode -----------------------------------------------------------------------------------

    def play(self) -> dict:
        record = self.recorder
        record.key("players", {"GM": "Game master for privateshared", "Player 1": f"Answerer: {self.model}",
                               "Player 2": "Questioner: Programmatic"})
        record.next_round()
        self.messages.append({"role": "user", "content": self.instance.initial_prompt})
        record.event("GM", "Player 1", {"type": "send message", "content": self.instance.initial_prompt})
        if self.probe(0):
            for round_number in range(1, self.rounds):
                record.next_round()
                if not self.request(round_number) or not self.probe(round_number):
                    break
        record.key("probes", self.all_probes)
        record.key("realised_slots", self.probe_gt)
        record.event("GM", "GM", {"type": "end", "content": "Game finished."})
        for name in REQUEST_COUNTS:
            record.key(name, self.counts[name])
        record.key("Filled Slots", self.filled_slots)
        record.key("Aborted", self.aborted)
        record.key("Played Probe Rounds", self.played_probing_rounds)
        return record.interactions


def play_episode(experiment: Experiment, instance: Instance, texts: GameTexts, player: Player, *, model: str,
                 rules: str = DEFAULT_RULES, clock: Callable[[], str] = now) -> EpisodeRecords:
    """Play one instance against ``player``; the records of the episode, scored.

    ``model`` names the answerer in the records; ``clock`` gives each event's timestamp.
    """
    game = _Game(experiment, instance, texts, player, model, rules, clock)
    interactions = game.play()
    records = EpisodeRecords(instance=copy.deepcopy(instance.raw), interactions=interactions,
                             requests=game.recorder.requests)
    records.scores = score_episode(interactions, source=f"{experiment.name} game {instance.game_id}")
    return records
