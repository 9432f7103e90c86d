"""privateshared against a model: the game master of :mod:`~castregin.dialogue.privateshared_game` with the
player behind :class:`castregin.llm.Client`, the one client of every command that calls a model.

:func:`play_privateshared` is what ``castregin play privateshared`` and :func:`castregin.api.play_privateshared`
both call: it reads the game and plans its episodes (those not yet in the results directory); then
:func:`play_game` opens the client on the answer cache (:func:`castregin.llm.session.model_run`, the one run of
every command that calls a model: the key is checked there, after the game is read and the files to write
checked, as a run with nothing left to play needs none), plays the planned episodes side by side
(``client.parallel``: at most ``concurrency`` episodes, and requests, at once), each call of an episode
through ``client.ask`` after the previous answer, and returns every episode's outcome and the run log.
It writes nothing but the cache; the caller writes each episode as it ends (``on_episode``).

Every call's answer is stored before the game goes on, so an episode the run did not finish (stopped,
the budget spent, a call failed after every retry) is played again from its start by the next run, its
answers so far from the cache: the same conversation, no request sent twice. Such an episode is not
played in this run (:class:`~castregin.dialogue.privateshared_game.EpisodeOutcome`), never written half.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..formats.llm_cache import CachedAnswer
from ..formats.privateshared import GAME, GameTexts
from ..llm import Answer, Call, Client, ClientStats, EndpointSettings, public_url
from ..llm.session import cost_log, model_run, this_run_log
from .privateshared_game import (
    DEFAULT_RULES,
    RULES,
    EpisodeOutcome,
    EpisodePlan,
    EpisodeRecords,
    Player,
    Reply,
    Unanswered,
    plan_episodes,
    play_episodes,
)


def completion_record(answer: CachedAnswer, model: str) -> dict:
    """The raw response ``requests.json`` keeps of one call: the chat completion as the cache holds it (its
    message, finish reason and token counts; the server's id and time are not kept, so that an episode
    replayed from the cache writes the same bytes)."""
    return {"object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": answer.finish_reason,
                         "message": {"role": "assistant", "content": answer.content, "refusal": answer.refusal}}],
            "usage": {"prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
                      "total_tokens": answer.prompt_tokens + answer.completion_tokens}}


def client_player(client: Client) -> Player:
    """The model behind ``client`` as a thread-safe :class:`~castregin.dialogue.privateshared_game.Player`:
    each call through ``client.ask`` (the cache's answer, else a request), the answer's text (a refusal,
    which has none, is the empty answer: invalid, as an answer without its tag is) and its record.

    A call with no answer raises :class:`Unanswered`. The run's first request is sent alone (the other
    episodes wait for it): a key or a model the endpoint refuses ends the run after one request. When a
    call failed after every retry and the endpoint has not answered one call in this run, the client is
    stopped: the other episodes are not sent to an endpoint that does not answer, each after its own
    retries (their outcome: ``"unsent"``).
    """
    model = client.settings.model
    gave_up = threading.Event()
    first_request = threading.Lock()
    first_settled = threading.Event()

    def ask(call: Call) -> Answer:
        if first_settled.is_set():
            return client.ask(call)
        with first_request:  # the run's first request alone: a key or model refused ends the run after one
            answer = client.ask(call)
            if answer.status != "cached":
                first_settled.set()
            return answer

    def player(messages: list[dict]) -> Reply:
        answer = ask(client.call(messages))
        if answer.answer is None:
            if answer.status == "failed" and client.stats.answers == 0:
                gave_up.set()
                client.stop()
            elif answer.status == "stopped" and gave_up.is_set():
                raise Unanswered("unsent", "the endpoint answered no call")
            raise Unanswered(answer.status, answer.error)
        return Reply(answer.answer.content or "", completion_record(answer.answer, model))

    return player


@dataclass
class PlayRun:
    """What a run of the game gives: every planned episode's outcome, in order, and the run log; ``folder``, the
    model's results directory (``MODEL-tT``). ``log`` is None when there was nothing to play (every episode in the
    results directory already)."""

    outcomes: list[EpisodeOutcome]
    log: dict | None
    folder: str = ""

    @property
    def played(self) -> list[EpisodeOutcome]:
        return [outcome for outcome in self.outcomes if outcome.played]


def episode_usage(records: EpisodeRecords) -> tuple[int, int, int]:
    """(calls, prompt tokens, completion tokens) of the model in one episode, from its records."""
    calls = prompt = completion = 0
    for entry in records.requests["Player 1"]:
        response = entry.get("call", entry)["raw_response_obj"]
        usage = response.get("usage", {}) if isinstance(response, dict) else {}
        calls += 1
        prompt += usage.get("prompt_tokens", 0)
        completion += usage.get("completion_tokens", 0)
    return calls, prompt, completion


def play_game(plans: Sequence[EpisodePlan], texts: GameTexts, settings: EndpointSettings, cache_file: str, *,
              rules: str, folder: str, game: dict | None = None, already: int = 0,
              on_episode: Callable[[EpisodePlan, EpisodeRecords], None] | None = None,
              progress: Callable[[int], Callable[[EpisodeOutcome, ClientStats, float], None]] | None = None,
              kept: Callable[[str, int], None] | None = None) -> PlayRun:
    """Play ``plans`` against the model of ``settings``, its answers from and into the cache at ``cache_file``.

    ``rules`` and ``folder`` (the model's results directory) as :func:`play_episodes` takes them; ``game``
    (the game folder and instances file, for the log) and ``already`` (episodes played by earlier runs)
    go into the run log. ``on_episode(plan, records)`` gets every episode played as it ends;
    ``progress(total)`` returns a function told of each outcome with the client's statistics and cost so
    far; ``kept(path, n)`` is told, when the run ends by an exception, how many answers it stored. When
    episodes were to be played and none could be, an :class:`InputError` says why (the first failure);
    a cache file this run made and stored nothing in is then removed.
    """
    def play(client: Client, _prompts: Sequence[Any], _data: Any) -> PlayRun:
        started = time.monotonic()
        tick = None
        if progress is not None:
            told = progress

            def tick(total: int) -> Callable[[EpisodeOutcome], None]:
                update = told(total)
                return lambda outcome: update(outcome, client.stats, client.cost())

        def parallel(work: Callable[[EpisodePlan], EpisodeOutcome], plans: list[EpisodePlan]) -> list[EpisodeOutcome]:
            # An episode not begun when the client stopped (the endpoint answered no call) is not played.
            begun = client.parallel(work, plans)
            status, error = ("stopped", None) if client.stats.answers else ("unsent", "the endpoint answered no call")
            return [outcome if outcome is not None else EpisodeOutcome(plan, None, status, error)
                    for plan, outcome in zip(plans, begun, strict=True)]

        outcomes = play_episodes(list(plans), texts, client_player(client), model=client.settings.model, rules=rules,
                                 folder=folder, on_episode=on_episode, parallel=parallel, progress=tick)
        if plans and not any(outcome.played for outcome in outcomes):
            raise InputError(nothing_played(client, outcomes))
        return PlayRun(outcomes, run_log(outcomes, client, client.settings, rules=rules, folder=folder,
                                         game=game or {}, already=already, seconds=time.monotonic() - started), folder)

    # The game is read and its episodes planned before (play_privateshared): which files the run writes
    # depends on the plan, and those are checked with the cache there.
    return model_run(settings, cache_file, play, purpose="play", kept=kept)


def play_privateshared(game_dir: str | os.PathLike, settings: EndpointSettings, cache_file: str | os.PathLike, *,
                       instances: str | os.PathLike | None = None, experiments: Iterable[str] = (),
                       rules: str = DEFAULT_RULES, results_dir: str | os.PathLike | None = None,
                       on_episode: Callable[[EpisodePlan, EpisodeRecords], None] | None = None,
                       progress: Callable[[int], Callable[[EpisodeOutcome, ClientStats, float], None]] | None = None,
                       kept: Callable[[str, int], None] | None = None) -> PlayRun:
    """``castregin play privateshared`` and :func:`castregin.api.play_privateshared`, but writing: the settings
    checked, the game read and checked (:func:`castregin.formats.privateshared.read_game`), its episodes planned
    in the model's results folder, then played (:func:`play_game`).

    ``results_dir``: the results directory the caller writes each episode to (``on_episode``: its files and its
    experiment's file) and the run log (:func:`castregin.formats.privateshared.run_log_path`): the episodes
    already there are not played again (nothing to play: no call, ``log`` None), and every file to be written
    is checked with the cache before the first call (none an input, nor another output). ``progress`` and
    ``kept`` as :func:`play_game` takes them.
    """
    from ..formats.common import display_name
    from ..formats.output import check_outputs
    from ..formats.privateshared import (
        episode_file_names,
        episodes_to_play,
        experiment_file_name,
        read_game,
        results_folder,
        run_log_path,
    )

    if rules not in RULES:
        raise InputError(f"expected one of {', '.join(RULES)}, got {rules!r}", argument="rules")
    settings = settings.check()
    game = read_game(game_dir, instances, experiments, rules=rules)
    folder = results_folder(settings.model, settings.temperature, rules)
    planned = plan_episodes(game.experiments, folder, rules)
    plans, outputs = planned, []
    if results_dir is not None:
        left = set(episodes_to_play(results_dir, [plan.directory for plan in planned], rules))
        plans = [plan for plan in planned if plan.directory in left]
        experiment_files = {os.path.join(results_dir, os.path.dirname(plan.directory),
                                         experiment_file_name(plan.experiment, rules)) for plan in plans}
        outputs = [*(os.path.join(results_dir, plan.directory, name) for plan in plans
                     for name in episode_file_names(rules)), *sorted(experiment_files),
                   run_log_path(results_dir, folder)]
    check_outputs([*outputs, cache_file], game.paths())
    if results_dir is not None and not plans:
        return PlayRun([], None, folder)
    return play_game(plans, game.texts, settings, os.fspath(cache_file), rules=rules, folder=folder,
                     game={"game_dir": display_name(game_dir), "instances": display_name(game.instances_path)},
                     already=len(planned) - len(plans), on_episode=on_episode, progress=progress, kept=kept)


#: Why an episode was not played, by its outcome's status.
NOT_PLAYED = {"failed": "a call failed after every retry", "budget": "the budget of --max-requests is spent",
              "stopped": "the run was stopped", "unsent": "not sent: the endpoint answered no call"}


def nothing_played(client: Client, outcomes: Sequence[EpisodeOutcome]) -> str:
    """Why a run that had episodes to play played none, in one line."""
    counts = Counter(outcome.status for outcome in outcomes)
    reasons = "; ".join(f"{n} episode(s): {NOT_PLAYED.get(status, status)}" for status, n in counts.items())
    first = f"; the first error: {client.stats.first_error}" if client.stats.first_error else ""
    kept = ": the answers received are kept in the cache for the next run" if client.stored else ""
    return f"no episode could be played ({reasons}){first}; nothing written{kept}"


def run_log(outcomes: Sequence[EpisodeOutcome], client: Client, settings: EndpointSettings, *, rules: str,
            folder: str, game: dict, already: int, seconds: float) -> dict[str, Any]:
    """The run log (``run_log.json``): what was played and what not (and why), the calls, tokens and cost of the
    episodes played, and what this run asked the endpoint. No key: only the variable's name."""
    played = [o for o in outcomes if o.played]
    calls = prompt = completion = 0
    for records in (o.records for o in played if o.records is not None):
        n, p, c = episode_usage(records)
        calls, prompt, completion = calls + n, prompt + p, completion + c
    return {
        "game": GAME,
        "rules": rules,
        **game,
        "model": settings.model,
        "results": folder,
        "endpoint": public_url(settings.base_url),
        "api_key_env": settings.api_key_env,
        "parameters": client.parameters,
        "episodes": len(outcomes) + already,
        "episodes_already_played": already,
        "episodes_played": len(played),
        "complete": len(played) == len(outcomes),
        "not_played": [{"episode": o.plan.directory, "status": o.status, "error": o.error}
                       for o in outcomes if not o.played],
        "aborted": sum(bool(o.records.interactions.get("Aborted")) for o in played if o.records is not None),
        "calls": calls,
        "tokens": {"prompt": prompt, "completion": completion},
        "cost": cost_log(settings, prompt, completion),
        "this_run": this_run_log(client, seconds, cost=True),
    }
