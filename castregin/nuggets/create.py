"""Nuggets drafted by a model from a turn's relevant passages, then scored vital or okay
(``castregin nuggets create``), as castorini/nuggetizer 0.0.5's ``Nuggetizer.create`` does it (the
AutoNuggetizer of TREC RAG 2024):

1. **the passages**: those the qrels judge relevant to the turn (grade at least ``min_grade``; nuggetizer's
   ``min_judgment`` is 2), most relevant first (grade descending, then passage id), with their texts;
2. **creation, iteratively**: the passages in windows of ``window`` (10); each window's prompt holds the
   nugget list so far and asks for the updated list of at most ``max_nuggets`` (30); the answer's list,
   cut to ``max_nuggets``, is the list the next window starts from. An answer that cannot be read leaves the
   list as it was (what nuggetizer does once its 500 tries at temperature 0.2 are spent; castregin asks
   once, and counts it);
3. **scoring**: the nuggets in windows of ``window``, each window's answer one label per nugget, ``vital`` or
   ``okay``; a window whose answer cannot be read is ``okay`` throughout (nuggetizer 0.0.6's default; 0.0.5
   wrote ``failed``, which no nugget file takes), and counted;
4. **the list**: vital nuggets first, each group in creation order, cut to ``max_nuggets`` (nuggetizer 0.0.5's
   last step; 0.0.6 keeps creation order uncut).

The calls of one turn are made one after another (each creation prompt holds the previous answer); turns
run side by side. A turn some of whose calls have no answer yet (budget, failures, a stop) is left out and
counted: the next run replays the cached answers and asks only for the rest. A complete turn left without any
nugget (no creation answer could be read, or the model listed none) is written so, and said in a warning.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data import Qrels, natural_key
from ..errors import InputError, InputWarning
from ..formats.llm_cache import CachedAnswer
from ..formats.nuggets import OKAY, VITAL, Nugget, TurnNuggets
from ..formats.passages import Passage
from ..limits import MAX_NUGGETS_BOUNDS, NUGGET_WINDOW_BOUNDS
from ..llm import Client, EndpointSettings
from ..llm.session import model_run
from ..llm.settings import check_number
from .assign import DEFAULT_WINDOW, windows
from .llm import (
    EXAMPLES_SHOWN,
    answer_tokens,
    call_log,
    last_line,
    nothing_complete,
    parse_labels,
    parse_texts,
)

DEFAULT_MAX_NUGGETS = 30
#: nuggetizer's ``min_judgment``: the lowest grade of a passage nuggets are drafted from.
DEFAULT_MIN_GRADE = 2
_NAMED = 10


@dataclass(frozen=True)
class CreationRequest:
    """One turn to draft nuggets for: its query, its conversation (may be empty), its relevant passages
    ``(docid, text)`` most relevant first."""

    qid: str
    query: str
    conversation: tuple[Mapping[str, str], ...]
    passages: tuple[tuple[str, str], ...]


def creation_requests(qrels: Qrels, passages: Mapping[str, Passage], queries: Mapping[str, str] | None = None,
                      topics=None, min_grade: int = DEFAULT_MIN_GRADE) -> list[CreationRequest]:
    """The turns of ``qrels`` with a passage of grade ``min_grade`` or more, in natural order, each with its
    query (``queries``, else the turn's utterance in ``topics``), conversation (``topics``) and relevant
    passages that ``passages`` has a text for. Turns without a query, relevant passages without a text and
    turns left without any are said (:class:`InputWarning`); no turn left is an error."""
    import warnings

    requests, no_query, no_passage = [], [], []
    missing_texts = 0
    for qid in sorted(qrels.labels, key=natural_key):
        relevant = sorted(((grade, docid) for docid, grade in qrels.labels[qid].items() if grade >= min_grade),
                          key=lambda pair: (-pair[0], natural_key(pair[1])))
        if not relevant:
            continue
        conversation: tuple = ()
        if topics is not None and qid in topics:
            conversation = tuple(topics.conversation(qid))
        query = (queries or {}).get(qid)
        if query is None and conversation:
            query = conversation[-1]["text"]
        if query is None:
            no_query.append(qid)
            continue
        texts = tuple((docid, passages[docid].text) for _, docid in relevant if docid in passages)
        missing_texts += len(relevant) - len(texts)
        if not texts:
            no_passage.append(qid)
            continue
        requests.append(CreationRequest(qid, query, conversation, texts))
    if no_query:
        warnings.warn(InputWarning(f"{len(no_query)} turn(s) with relevant passages have no query in --queries or "
                                   f"--topics and are left out: {_named(no_query)}"), stacklevel=2)
    if missing_texts:
        warnings.warn(InputWarning(f"{missing_texts} relevant passage(s) have no text among the passages and are left "
                                   "out" + (f"; so are the turns left without any: {_named(no_passage)}"
                                            if no_passage else "")), stacklevel=2)
    if not requests:
        raise InputError(f"no turn has a passage of grade {min_grade} or more with a text and a query; check "
                         "--qrels, --passages, --queries or --topics, and --min-grade", argument="qrels")
    return requests


def _named(turns: Sequence[str]) -> str:
    return ", ".join(turns[:_NAMED]) + (f" and {len(turns) - _NAMED} more" if len(turns) > _NAMED else "")


@dataclass
class _Turn:
    """What one turn's calls gave: its nuggets (None when a call has no answer yet) and what went wrong."""

    nuggets: tuple[Nugget, ...] | None = None
    answers: list[CachedAnswer] = field(default_factory=list)
    calls: int = 0
    creation_unparseable: int = 0
    scoring_unparseable: int = 0
    examples: list[dict] = field(default_factory=list)


@dataclass
class NuggetCreation:
    """What a creation run gives: the turns' nuggets (in the requests' order, complete turns only) and the log."""

    turns: list[TurnNuggets]
    log: dict


def _ask(client: Client, messages, outcome: _Turn) -> CachedAnswer | None:
    outcome.calls += 1
    answer = client.ask(client.call(messages))
    if answer.answer is None:
        return None
    outcome.answers.append(answer.answer)
    return answer.answer


def _unreadable(outcome: _Turn, step: str, qid: str, window: tuple[int, int], answer: CachedAnswer) -> None:
    if len(outcome.examples) < EXAMPLES_SHOWN:
        outcome.examples.append({"qid": qid, "step": step, "window": list(window),
                                 "refusal": answer.refusal is not None, "last_line": last_line(answer)})


def _create_turn(client: Client, request: CreationRequest, create_prompt, score_prompt, window: int,
                 max_nuggets: int) -> _Turn:
    outcome = _Turn()
    texts: list[str] = []
    for start, end in windows(len(request.passages), window):
        messages = create_prompt.create(request.qid, request.query, request.conversation,
                                        request.passages[start:end], texts, max_nuggets)
        answer = _ask(client, messages, outcome)
        if answer is None:
            return outcome
        parsed = parse_texts(answer.content)
        if parsed is None:
            outcome.creation_unparseable += 1
            _unreadable(outcome, "create", request.qid, (start, end), answer)
        else:
            texts = parsed[:max_nuggets]
    importances: list[str] = []
    for start, end in windows(len(texts), window):
        answer = _ask(client, score_prompt.score(request.qid, request.query, request.conversation, texts[start:end]),
                      outcome)
        if answer is None:
            return outcome
        labels = parse_labels(answer.content, end - start, (VITAL, OKAY))
        if labels is None:
            labels = [OKAY] * (end - start)
            outcome.scoring_unparseable += 1
            _unreadable(outcome, "score", request.qid, (start, end), answer)
        importances += labels
    # Vital first, each group in creation order (a stable sort), then cut: nuggetizer 0.0.5's last step.
    ordered = sorted(range(len(texts)), key=lambda i: importances[i] != VITAL)[:max_nuggets]
    outcome.nuggets = tuple(Nugget(texts[i], importances[i]) for i in ordered)
    return outcome


def create_nuggets(client: Client, requests: Sequence[CreationRequest], create_prompt, score_prompt, *,
                   window: int = DEFAULT_WINDOW, max_nuggets: int = DEFAULT_MAX_NUGGETS,
                   progress: Callable[[int], Callable[[str], None]] | None = None) -> NuggetCreation:
    """Draft and score the nuggets of every request with ``client``'s model (see the module).

    ``create_prompt`` and ``score_prompt`` are :class:`castregin.render.nugget_prompts.NuggetPrompt` of the
    create and score tasks. ``progress(n)`` is told how many turns there are and returns the callback told
    of each turn done (its qid). When no turn got every answer it needs, an :class:`InputError` says why.
    """
    started = time.monotonic()
    tell = progress(len(requests)) if progress is not None else None
    lock = threading.Lock()

    def work(request: CreationRequest) -> _Turn:
        outcome = _create_turn(client, request, create_prompt, score_prompt, window, max_nuggets)
        if tell is not None:
            with lock:
                tell(request.qid)
        return outcome

    # A turn not begun when the client stopped has no nuggets (its calls are asked again by the next run).
    outcomes = [outcome if outcome is not None else _Turn() for outcome in client.parallel(work, requests)]
    done = [(request, outcome) for request, outcome in zip(requests, outcomes, strict=True)
            if outcome.nuggets is not None]
    if not done:
        raise InputError(nothing_complete(client, sum(len(o.answers) for o in outcomes), "turn"))
    turns = [TurnNuggets(request.qid, request.query, outcome.nuggets) for request, outcome in done
             if outcome.nuggets is not None]
    empty = [turn.qid for turn in turns if not turn.nuggets]
    if empty:
        import warnings

        # Written all the same (a model may find nothing to list), but never in silence: they score 0 everywhere.
        warnings.warn(InputWarning(
            f"{len(empty)} turn(s) got no nugget (no creation answer could be read, or the model listed none): "
            f"{_named(empty)}; they are written without nuggets and score 0 (see the run log's "
            "unparseable_examples; a new --cache, or another --prompt, asks again)"), stacklevel=2)
    used = [answer for outcome in outcomes for answer in outcome.answers]
    calls = sum(outcome.calls for outcome in outcomes)
    head, tail = call_log(client, {"create": create_prompt, "score": score_prompt}, calls, len(used),
                          answer_tokens(used), started)
    log = {**head, "window": window, "max_nuggets": max_nuggets,
           "turns": len(requests),
           "turns_written": len(turns),
           "turns_incomplete": len(requests) - len(turns),
           "turns_without_nuggets": len(empty),
           "passages": sum(len(request.passages) for request in requests),
           "nuggets": sum(len(turn.nuggets) for turn in turns),
           "vital": sum(n.importance == VITAL for turn in turns for n in turn.nuggets),
           "unparseable": {"create": sum(o.creation_unparseable for o in outcomes),
                           "score": sum(o.scoring_unparseable for o in outcomes)},
           "unparseable_examples": [e for o in outcomes for e in o.examples][:EXAMPLES_SHOWN],
           **tail}
    return NuggetCreation(turns, log)


def create_stage(settings: EndpointSettings, cache_file: str | os.PathLike,
                 load_prompts: Callable[[], tuple[Any, Any]], qrels: Callable[[], Qrels],
                 passages: Callable[[set[str]], Mapping[str, Passage]],
                 queries: Callable[[], Mapping[str, str] | None], topics: Callable[[], Any] | None = None, *,
                 min_grade: int = 2, window: int = DEFAULT_WINDOW, max_nuggets: int = DEFAULT_MAX_NUGGETS,
                 inputs: Iterable[str | os.PathLike] = (), outputs: Sequence[str | os.PathLike] = (),
                 out_dir: str | None = None, progress: Callable[[int], Callable[[str], None]] | None = None,
                 kept: Callable[[str, int], None] | None = None) -> NuggetCreation:
    """``castregin nuggets create`` and :func:`castregin.api.nuggets_create`, but writing: the creation and scoring
    prompts (``load_prompts()``), the qrels, the texts of the passages of grade ``min_grade`` or more
    (``passages(wanted ids)``), the queries and topics, the requests (:func:`creation_requests`), then
    :func:`create_nuggets` through :func:`castregin.llm.session.model_run` (``inputs``, ``outputs``,
    ``out_dir`` and ``kept`` as it takes them)."""
    # The same bounds as the command's options, so that the API refuses what the command does.
    min_grade = int(check_number(min_grade, "min_grade", 0, None, True))
    window = int(check_number(window, "window", *NUGGET_WINDOW_BOUNDS, True))
    max_nuggets = int(check_number(max_nuggets, "max_nuggets", *MAX_NUGGETS_BOUNDS, True))

    def read():
        judged = qrels()
        wanted = {docid for items in judged.labels.values() for docid, grade in items.items() if grade >= min_grade}
        texts = passages(wanted)
        return creation_requests(judged, texts, queries(), topics() if topics is not None else None, min_grade)

    def work(client, prompts, requests):
        create_prompt, score_prompt = prompts
        return create_nuggets(client, requests, create_prompt, score_prompt, window=window, max_nuggets=max_nuggets,
                              progress=progress)

    return model_run(settings, cache_file, work, prompts=load_prompts, read=read, inputs=inputs, outputs=outputs,
                     out_dir=out_dir, purpose="nuggets-create", kept=kept)
