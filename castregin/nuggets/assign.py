"""Nuggets assigned to answers by a model, as castorini/nuggetizer's ``assign`` does it (``castregin nuggets assign``).

For every answer (a run's answer to a turn) whose turn has nuggets, the nuggets are put to the model in
windows of ``window`` (nuggetizer's default: 10), in file order, with the turn's query and the answer's
text (its sentences joined by a space, as nuggetizer joins them); the model answers with one label per
nugget of the window (:func:`castregin.nuggets.llm.parse_labels`). As in nuggetizer:

- an empty answer supports nothing: its nuggets are ``not_support`` with no call;
- a window whose answer cannot be read is ``failed`` for each of its nuggets (nuggetizer's word after it gave
  up; ``nuggets score`` refuses it, or counts it as not_support with ``--failed not_support``). nuggetizer
  asks again up to 500 times at temperature 0.2; castregin asks once, at the temperature given, so that a run
  is reproducible from its cache, and counts the unparseable answers in the run log;
- answers to turns without nuggets are left out (named in the log).

An answer some of whose windows have no answer yet (the budget spent, a call failed after every retry, the
run stopped) is left out of the output and counted: the next run, asking only what the cache lacks, adds it.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..data import natural_key
from ..errors import InputError, InputWarning
from ..formats.nuggets import FAILED, LABELS, NOT_SUPPORT, SUPPORT, Answer, Assignment, TurnNuggets
from ..limits import NUGGET_WINDOW_BOUNDS
from ..llm import Call, Client, EndpointSettings, Reply
from ..llm.session import model_run
from ..llm.settings import check_number
from .llm import (
    EXAMPLES_SHOWN,
    answer_tokens,
    call_log,
    last_line,
    nothing_complete,
    parse_labels,
)

#: nuggetizer's window of nuggets per call.
DEFAULT_WINDOW = 10
#: What each grading asks for.
GRADES = {3: LABELS, 2: (SUPPORT, NOT_SUPPORT)}


@dataclass
class NuggetAssignment:
    """What an assignment run gives: the complete assignments (in the answers' order) and the run log."""

    assignments: list[Assignment]
    log: dict


def windows(count: int, window: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` windows of ``count`` items, ``window`` at a time (nuggetizer's stride)."""
    return [(start, min(start + window, count)) for start in range(0, count, window)]


def assign_nuggets(client: Client, turns: Sequence[TurnNuggets], answers: Sequence[Answer], prompt, *,
                   window: int = DEFAULT_WINDOW, grades: int = 3, topics=None,
                   progress: Callable[[int], Callable[[Reply | None], None]] | None = None) -> NuggetAssignment:
    """Assign every turn's nuggets to every run's answer with ``client``'s model.

    ``prompt`` has ``assign(qid, run_id, query, conversation, answer, nuggets)``, the chat messages of one
    window, and ``describe()`` (:class:`castregin.render.nugget_prompts.NuggetPrompt`); every prompt is made
    before the first request. ``grades``: 3 (support, partial_support, not_support) or 2 (no partial
    support); ``topics`` (a :class:`~castregin.formats.topics.TopicsTree`, optional) gives each turn's
    conversation (turns it lacks are said, an :class:`InputWarning`, and get the nuggets' query alone).
    ``progress`` as :meth:`castregin.llm.Client.run` takes it. When no answer's assignment is complete, an
    :class:`InputError` says why.
    """
    started = time.monotonic()
    allowed = GRADES[grades]
    by_qid = {turn.qid: turn for turn in turns}
    plans: list[tuple[Answer, TurnNuggets, list[tuple[int, int, Call]]]] = []
    without_nuggets: list[str] = []
    not_in_topics: set[str] = set()
    empty = 0
    for answer in answers:
        turn = by_qid.get(answer.qid)
        if turn is None:
            without_nuggets.append(f"{answer.run_id}:{answer.qid}")
            continue
        if not answer.text.strip() or not turn.nuggets:
            empty += bool(turn.nuggets)
            plans.append((answer, turn, []))
            continue
        query = turn.query or answer.query or ""
        conversation = topics.conversation(answer.qid) if topics is not None and answer.qid in topics else []
        if topics is not None and not conversation:
            not_in_topics.add(answer.qid)
        texts = [nugget.text for nugget in turn.nuggets]
        plans.append((answer, turn, [
            (start, end, client.call(prompt.assign(answer.qid, answer.run_id, query, conversation, answer.text,
                                                   texts[start:end])))
            for start, end in windows(len(texts), window)]))
    if not_in_topics:
        named = sorted(not_in_topics, key=natural_key)
        warnings.warn(InputWarning(f"{len(named)} turn(s) are not in the topics; their prompts hold the nuggets' query "
                                   f"alone: {', '.join(named[:10])}" + (f" and {len(named) - 10} more"
                                                                        if len(named) > 10 else "")), stacklevel=2)
    if not plans:
        raise InputError("no answer is to a turn the nuggets have; check that the answers' topic ids are the "
                         "nuggets' qids", argument="answers")
    calls = [call for _, _, planned in plans for _, _, call in planned]
    got = client.run(calls, progress)

    assignments: list[Assignment] = []
    examples: list[dict] = []
    incomplete, unparseable, failed_nuggets, refusals = 0, 0, 0, 0
    for answer, turn, planned in plans:
        if any(call.key not in got for _, _, call in planned):
            incomplete += 1
            continue
        labels: list[str] = [NOT_SUPPORT] * len(turn.nuggets)
        for start, end, call in planned:
            reply = got[call.key]
            parsed = parse_labels(reply.content, end - start, allowed)
            if parsed is None:
                parsed = [FAILED] * (end - start)
                unparseable += 1
                failed_nuggets += end - start
                refusals += reply.refusal is not None
                if len(examples) < EXAMPLES_SHOWN:
                    examples.append({"run_id": answer.run_id, "qid": answer.qid, "nuggets": [start, end],
                                     "refusal": reply.refusal is not None, "last_line": last_line(reply)})
            labels[start:end] = parsed
        assignments.append(Assignment(answer.run_id, answer.qid, turn.query or answer.query or "", turn.nuggets,
                                      tuple(labels), answer.text))
    answered = sum(call.key in got for call in calls)
    if not assignments:
        raise InputError(nothing_complete(client, answered, "answer's assignment"))
    head, tail = call_log(client, {"assign": prompt}, len(calls), answered,
                          answer_tokens(got[call.key] for call in calls if call.key in got), started)
    log = {**head, "window": window, "grades": grades,
           "answers": len(answers),
           "answers_without_nuggets": {"count": len(without_nuggets),
                                       "first": sorted(without_nuggets, key=natural_key)[:EXAMPLES_SHOWN]},
           "empty_answers": empty,
           "assignments": len(assignments),
           "assignments_incomplete": incomplete,
           "unparseable": unparseable,
           "nuggets_failed": failed_nuggets,
           "refusals": refusals,
           "unparseable_examples": examples,
           **tail}
    return NuggetAssignment(assignments, log)


def assign_stage(settings: EndpointSettings, cache_file: str | os.PathLike, load_prompt: Callable[[], Any],
                 nuggets: Callable[[], Sequence[TurnNuggets]], answers: Callable[[], Sequence[Answer]],
                 topics: Callable[[], Any] | None = None, *, window: int = DEFAULT_WINDOW,
                 inputs: Iterable[str | os.PathLike] = (), outputs: Sequence[str | os.PathLike] = (),
                 out_dir: str | None = None, progress: Callable[[int], Callable[[Reply | None], None]] | None = None,
                 kept: Callable[[str, int], None] | None = None) -> NuggetAssignment:
    """``castregin nuggets assign`` and :func:`castregin.api.nuggets_assign`, but writing: the prompt
    (``load_prompt()``; its ``grades``), the nuggets, answers and topics (each read when its step comes), then
    :func:`assign_nuggets` through :func:`castregin.llm.session.model_run` (``inputs``, ``outputs``,
    ``out_dir`` and ``kept`` as it takes them)."""
    # The same bounds as the command's options, so that the API refuses what the command does.
    window = int(check_number(window, "window", *NUGGET_WINDOW_BOUNDS, True))

    def read():
        return nuggets(), answers(), topics() if topics is not None else None

    def work(client, prompts, data):
        (prompt,), (turns, given, tree) = prompts, data
        return assign_nuggets(client, turns, given, prompt, window=window, topics=tree, grades=prompt.grades,
                              progress=progress)

    return model_run(settings, cache_file, work, prompts=lambda: [load_prompt()], read=read, inputs=inputs,
                     outputs=outputs, out_dir=out_dir, purpose="nuggets-assign", kept=kept)
