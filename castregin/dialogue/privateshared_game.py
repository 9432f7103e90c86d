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
    players (the records kept in ``tests/data/privateshared/oracle-2.0.tar.xz``).

The model is any ``player(messages) -> str`` (or a :class:`Reply`, to record the raw response):
``messages`` is the chat so far as OpenAI-style ``{"role", "content"}`` dicts, the last one the
game master's; the text is stripped as clembench's backends strip it. Requests and probes are asked
one at a time, in order: a replay of the same answers gives the same conversation.

:func:`play_episode` plays one instance and returns its records; the scores are
:func:`castregin.dialogue.scorekeeping.score_episode`'s, the same that score published episodes.
:func:`play_episodes` plays many (side by side through a ``parallel`` runner such as the model
client's), writing nothing: a player that cannot answer raises :class:`Unanswered` and its episode is
not played. The player behind a model endpoint is :mod:`castregin.dialogue.privateshared_play`'s.
"""

from __future__ import annotations

import contextvars
import copy
import datetime as dt
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from ..formats.privateshared import GAME, WORDS_1_0, Experiment, GameTexts, Instance, Words
from ..formats.provenance import castregin_version
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
    """clembench's timestamps: local time, ISO 8601 with microseconds; with ``SOURCE_DATE_EPOCH`` set (as in
    reproducible builds), that moment in UTC, the same for every event, so that two runs write the same bytes."""
    configured = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if configured.isascii() and configured.isdigit():
        moment = dt.datetime.fromtimestamp(int(configured), dt.timezone.utc).replace(tzinfo=None)
        return moment.isoformat(timespec="microseconds")
    return dt.datetime.now().isoformat()  # noqa: DTZ005 - clembench's: local time, no zone


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
    """The records of one episode, as the framework of ``rules`` writes them.

    clemgame 1.0 (``"1.0"``): ``interactions = {"players", "turns": [[event...]...], keys...}``; requests one
    list of calls. clemcore (``"2.0"``): ``interactions = {"meta", "player_models", "players", "turns", keys...}``;
    requests one ``{"meta", "calls": [{"round", "call"}...]}`` per player (``player_1``, ``player_2``).
    """

    def __init__(self, rules: str, clock: Callable[[], str]):
        self.rules = rules
        self.clock = clock
        self.interactions: dict = {"players": {}, "turns": []}
        self.requests: dict[str, list] = {"Player 1": [], "Player 2": []}

    def next_round(self) -> None:
        self.interactions["turns"].append([])

    @property
    def round(self) -> int:
        return len(self.interactions["turns"]) - 1

    def event(self, from_: str, to: str, action: dict, call: tuple | None = None) -> None:
        timestamp = self.clock()
        self.interactions["turns"][-1].append({"from": from_, "to": to, "timestamp": timestamp, "action": action})
        if call:
            self.call(from_, call, timestamp)

    def call(self, player: str, call: tuple, timestamp: str | None = None) -> None:
        """A call to a player: the prompt as sent and the raw response (``requests.json``)."""
        record = {"timestamp": timestamp or self.clock(), "manipulated_prompt_obj": copy.deepcopy(call[0]),
                  "raw_response_obj": copy.deepcopy(call[1])}
        self.requests[player].append(record if self.rules == "1.0" else {"round": self.round, "call": record})

    def key(self, name: str, value) -> None:
        self.interactions[name] = value


class _Game:
    """One episode of one instance; :meth:`play` runs it."""

    def __init__(self, experiment: Experiment, instance: Instance, texts: GameTexts, player: Player, model: str,
                 rules: str, clock: Callable[[], str]):
        if rules not in RULES:
            raise ValueError(f"rules must be one of {RULES}, not {rules!r}")
        self.rules = rules
        self.v2 = rules == "2.0"
        self.experiment = experiment
        self.instance = instance
        self.player = player
        self.model = model
        self.words: Words = texts.words[instance.lang or "en"] if self.v2 else WORDS_1_0
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
        self.recorder = _Recorder(rules, clock)

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

    def note(self, type_: str, content: str) -> None:
        """An event of the game master to itself."""
        self.recorder.event("GM", "GM", {"type": type_, "content": content})

    # --- probing ---------------------------------------------------------------------------------------

    def probe_content(self, question: str, tries: int) -> str:
        return question.replace(self.words.me, f"{self.words.me}{self.retries[tries - 1]} ")

    def parse_probe_answer(self, response: str) -> str:
        aside = self.words.aside.strip()
        if not response.startswith(aside) or (self.v2 and has_continuation(response)):
            return INVALID
        clean = filter_tag(response, aside).lower()
        if clean.startswith(self.words.yes):
            return self.words.yes
        if clean.startswith(self.words.no):
            return self.words.no
        return INVALID

    def value_of(self, parsed: str) -> int:
        return 1 if parsed == self.words.yes else 0 if parsed == self.words.no else INVALID_LABEL

    def ask_probe(self, probe: dict, round_number: int) -> bool:
        """One probe, tried until its answer parses or the reprompt suffixes run out."""
        record = self.recorder
        tries, successful = 1, False
        answer, parsed = "", INVALID
        while tries <= len(self.retries):
            question = self.probe_content(probe["question"], tries)
            prompt = [*self.messages, {"role": "user", "content": question}]
            if self.v2:  # clemcore records the call, not the exchange
                answer, response = self.ask(prompt)
                record.call("Player 1", (prompt, response))
            else:
                record.event("GM", "Player 1", {"type": "probe question", "content": question})
                answer, response = self.ask(prompt)
                record.event("Player 1", "GM", {"type": "probe answer", "content": answer}, call=(prompt, response))
            self.count("Request Count", round_number)
            parsed = self.parse_probe_answer(answer)
            self.note("parse", parsed)
            if parsed in (self.words.yes, self.words.no):
                successful = True
                self.count("Parsed Request Count", round_number)
                break
            self.count("Violated Request Count", round_number)
            tries += 1
        probe.update(answer=answer, value=self.value_of(parsed), tries=tries)
        self.note("metadata", SUCCESS.format(probe["target"], tries) if successful
                  else NOT_SUCCESS.format(probe["target"]))
        self.note("check", RESULT.format("" if probe["value"] == probe["gt"] else "in"))
        return successful

    def probe(self, round_number: int) -> bool:
        """One probing round: every slot's probe, in the instance's order; False: aborted."""
        if not self.v2:
            self.note("info", "Begin probing")
        probes = [{"target": slot.upper(),
                   "question": self.words.probe.format(self.probing_questions[slot][index]),
                   "gt": 1 if round_number > self.probe_gt[slot] else 0}
                  for slot, index in self.instance.probes[str(round_number)].items()]
        successes = []
        for probe in probes:
            successes.append(self.ask_probe(probe, round_number))
            if self.v2 and not successes[-1]:  # 2.0 stops at the first probe that fails (the rest stay unasked)
                break
        self.all_probes.append(probes)
        if not self.v2:
            self.note("info", "End probing")
        if all(successes):
            self.played_probing_rounds += 1
            return True
        self.note("invalid format", ABORT_PROBING)
        self.aborted = True
        return False

    # --- requests --------------------------------------------------------------------------------------

    def update_anticipated_slots(self, answer: str, turn: int) -> None:
        for slot, value in self.instance.slots.items():
            if value.lower() in answer.lower() and turn < self.probe_gt[slot]:
                self.note("metadata", UPDATE.format(slot.upper(), self.probe_gt[slot], turn))
                self.probe_gt[slot] = turn

    def questioner(self, round_number: int) -> str:
        """The programmatic questioner's request of round ``round_number`` (1...), logged as clembench logs it."""
        slot = self.instance.request_order[round_number - 1]
        request = self.request_texts[slot][self.instance.requests[slot]]
        if self.v2:
            prompt = {"role": "user", "content": self.words.dummy_prompt}
            self.recorder.event("GM", "Player 2", {"type": "send message", "content": self.words.dummy_prompt,
                                                   "label": "context"})
            self.recorder.event("Player 2", "GM", {"type": "get message", "content": request, "label": "response"})
            self.recorder.call("Player 2", (prompt, {"clem_player": {"response": request,
                                                                     "model_name": "programmatic"}}))
        else:
            tagged = f"{self.questioner_tag}{request}"
            self.recorder.event("GM", "Player 2", {"type": "send message", "content": self.words.dummy_prompt})
            self.recorder.event("Player 2", "GM", {"type": "get message",
                                                   "content": tagged.replace(self.questioner_tag, "").strip()})
        return request

    def answerer(self, round_number: int, request: str) -> bool:
        """The model's answer to the request of round ``round_number``, and (when it is valid) the probing after it;
        False: the episode is aborted."""
        record = self.recorder
        slot = self.instance.request_order[round_number - 1]
        tagged = f"{self.questioner_tag}{request}"
        label = {"label": "context"} if self.v2 else {}
        record.event("GM", "Player 1", {"type": "send message", "content": tagged, **label})
        self.messages.append({"role": "user", "content": tagged})
        answer, response = self.ask(self.messages)
        label = {"label": "response"} if self.v2 else {}
        record.event("Player 1", "GM", {"type": "get message", "content": answer, **label},
                     call=(self.messages, response))
        self.messages.append({"role": "assistant", "content": answer})
        answer_tag = self.words.answer.strip()
        if self.v2:
            if not answer.startswith(answer_tag) or has_continuation(answer):
                # clemcore's DialogueGameMaster: an invalid answer is only counted; the game goes on
                self.count("Violated Request Count", round_number)
                return True
            self.count("Parsed Request Count", round_number)
            parsed = filter_tag(answer, answer_tag)
            filled = self.instance.slots[slot].lower() in parsed.lower()
            self.filled_slots.append(filled)
            self.note("metadata", f"Slot filled: {filled}")
            self.update_anticipated_slots(parsed, round_number - 1)
            self.probe(round_number)
            self.count("Request Count", round_number)  # counted after the probing round, as clembench does
            return not self.aborted
        self.count("Request Count", round_number)
        parsed = filter_tag(answer, answer_tag) if answer.startswith(answer_tag) else INVALID
        self.note("parse", parsed)
        if parsed == INVALID:
            self.count("Violated Request Count", round_number)
            self.note("invalid format", ABORT_SLOT)
            self.aborted = True
            return False
        self.count("Parsed Request Count", round_number)
        filled = self.instance.slots[slot].lower() in answer.lower()
        self.filled_slots.append(filled)
        self.note("metadata", f"Slot filled: {filled}")
        self.update_anticipated_slots(answer, round_number - 1)
        record.event("GM", "Player 2", {"type": "send message", "content": parsed})
        return self.probe(round_number)

    # --- the episode -----------------------------------------------------------------------------------

    def play(self) -> dict:
        record = self.recorder
        if self.v2:
            record.interactions = {
                "meta": {"game_name": GAME, "experiment_name": self.experiment.name,
                         "game_id": self.instance.game_id, "results_folder": None, "clem_version": None,
                         "round_count": None, "completed": None},
                "player_models": {"0": {"model_name": self.model}},
                "players": {"GM": {"game_role": "Game Master", "model_name": "programmatic"},
                            "Player 1": {"game_role": "Answerer", "model_name": self.model},
                            "Player 2": {"game_role": "Questioner", "model_name": "programmatic"}},
                "turns": []}
        else:
            record.key("players", {"GM": "Game master for privateshared", "Player 1": f"Answerer: {self.model}",
                                   "Player 2": "Questioner: Programmatic"})
        record.next_round()
        self.messages.append({"role": "user", "content": self.instance.initial_prompt})
        if self.v2:
            record.event("GM", "Player 1", {"type": "send message", "content": self.instance.initial_prompt,
                                            "label": "pseudo"})
            self.messages.append({"role": "assistant", "content": self.words.ok})
            record.event("Player 1", "GM", {"type": "get message", "content": self.words.ok, "label": "pseudo"})
        else:
            record.event("GM", "Player 1", {"type": "send message", "content": self.instance.initial_prompt})
        go_on = self.probe(0)
        for round_number in range(1, self.rounds):
            if self.v2 and round_number == 1:
                # clemcore's first round: the questioner speaks even when the probing before the game failed
                request = self.questioner(1)
                if not go_on:
                    break
            else:
                if not go_on:
                    break
                record.next_round()
                request = self.questioner(round_number)
            go_on = self.answerer(round_number, request)
        record.key("probes", self.all_probes)
        record.key("realised_slots", self.probe_gt)
        self.note("end", "Game finished.")
        for name in REQUEST_COUNTS:
            record.key(name, self.counts[name])
        record.key("Filled Slots", self.filled_slots)
        record.key("Aborted", self.aborted)
        record.key("Played Probe Rounds", self.played_probing_rounds)
        if self.v2:
            record.interactions["meta"].update(round_count=len(record.interactions["turns"]), completed=True)
        return record.interactions


def play_episode(experiment: Experiment, instance: Instance, texts: GameTexts, player: Player, *, model: str,
                 rules: str = DEFAULT_RULES, results_folder: str | None = None,
                 clock: Callable[[], str] | None = None) -> EpisodeRecords:
    """Play one instance against ``player``; the records of the episode, scored.

    ``model`` names the answerer in the records, ``results_folder`` the model's results directory (2.0's
    records name it); ``clock`` gives each event's timestamp (default: :func:`now`, looked up when called).
    """
    game = _Game(experiment, instance, texts, player, model, rules, clock or now)
    interactions = game.play()
    if rules == "2.0":
        interactions["meta"].update(results_folder=results_folder, clem_version=f"castregin {castregin_version()}")
    records = EpisodeRecords(instance=copy.deepcopy(instance.raw), interactions=interactions,
                             requests=game.recorder.requests)
    records.scores = score_episode(interactions, source=f"{experiment.name} game {instance.game_id}")
    return records


# --- many episodes ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EpisodePlan:
    """One episode to play, and where its files go below the results directory."""

    experiment: Experiment
    instance: Instance
    directory: str  # MODEL/privateshared/EXPERIMENT/EPISODE


def plan_episodes(experiments: list[Experiment], folder: str, rules: str) -> list[EpisodePlan]:
    """Every instance of ``experiments`` as an episode of the model whose results go to ``folder``, in order."""
    from ..formats.privateshared import episode_directory, experiment_directory

    return [EpisodePlan(experiment, instance, "/".join([folder, GAME, experiment_directory(experiment, rules),
                                                        episode_directory(experiment, position, rules)]))
            for experiment in experiments for position, instance in enumerate(experiment.instances)]


class Unanswered(Exception):
    """A call of the player that got no answer: the episode cannot go on and is not played (a later run plays it
    from its start). ``status`` says why: ``"failed"`` (after every retry; ``error`` the last failure),
    ``"budget"`` (the budget of requests is spent), ``"stopped"`` (the run was stopped)."""

    def __init__(self, status: str, error: str | None = None):
        super().__init__(f"{status}: {error}" if error else status)
        self.status = status
        self.error = error


@dataclass(frozen=True)
class EpisodeOutcome:
    """What became of one planned episode: its records when it was played, else why not (an
    :class:`Unanswered`'s ``status`` and ``error``)."""

    plan: EpisodePlan
    records: EpisodeRecords | None
    status: str = "played"
    error: str | None = None

    @property
    def played(self) -> bool:
        return self.records is not None


def play_episodes(plans: list[EpisodePlan], texts: GameTexts, player: Player, *, model: str, rules: str,
                  folder: str, on_episode: Callable[[EpisodePlan, EpisodeRecords], None] | None = None,
                  parallel: Callable[[Callable[[EpisodePlan], EpisodeOutcome], list[EpisodePlan]],
                                     list[EpisodeOutcome]] | None = None,
                  progress: Callable[[int], Callable[[EpisodeOutcome], None]] | None = None,
                  clock: Callable[[], str] | None = None) -> list[EpisodeOutcome]:
    """Play ``plans`` against ``player``: every episode's outcome, in the plans' order. Writes nothing.

    ``parallel(work, plans)`` runs ``work`` on every plan and returns the results in order (default: one
    after the other; :meth:`castregin.llm.Client.parallel` plays episodes side by side, ``player`` then
    being called from several threads, the calls of one episode always one after the other). An episode
    whose player raises :class:`Unanswered` is not played (its outcome says why) and the others go on;
    any other exception ends the run. ``on_episode(plan, records)`` gets each episode played as soon as
    it ends, one at a time, in the calling thread's context (its context variables), so that it can be
    written while the others are played; ``progress(total)`` returns a function told of every outcome.
    """
    tick = progress(len(plans)) if progress else None
    lock = threading.Lock()
    caller = contextvars.copy_context()

    def play(plan: EpisodePlan) -> EpisodeOutcome:
        try:
            records = play_episode(plan.experiment, plan.instance, texts, player, model=model, rules=rules,
                                   results_folder=folder, clock=clock)
        except Unanswered as missing:
            outcome = EpisodeOutcome(plan, None, missing.status, missing.error)
        else:
            outcome = EpisodeOutcome(plan, records)
        with lock:  # one at a time: the context is entered by one thread only, the experiment file written once
            if outcome.records is not None and on_episode is not None:
                caller.run(on_episode, plan, outcome.records)
            if tick is not None:
                tick(outcome)
        return outcome

    if parallel is None:
        return [play(plan) for plan in plans]
    return parallel(play, list(plans))
