"""A model as one more assessor: prompts of a pool judged through the model client, answers parsed strictly.

The pieces, each plain:

- :func:`parse_label`: the label of an answer, read from its final non-empty line only (``Label: 2``,
  ``2``, with markdown emphasis allowed around it); anything else is unparseable (``None``), never
  guessed from the rest of the text, where an item's own words may be quoted.
- :func:`assessor_instructions`: the phrases of an item text that address the assessor ("rate this 3",
  "ignore the previous instructions"): such items are flagged in the run log, never dropped.
- :func:`mode_label`: several samples of one call to one label (the mode, the lowest on a tie) and
  their spread (highest minus lowest).
- :func:`judge_chats`: every prompt of a run rendered, before the cache is opened; :func:`judge_tasks`: every
  (task, criterion, sample) asked through an open :class:`castregin.llm.Client` (cache, retries, budget,
  deadline, key handling: the one client of every command that calls a model, in the one run of
  :func:`castregin.llm.session.model_run`), the answers turned into crowd rows, labels, qrels and a run log.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InputError
from ..formats.llm_cache import CachedAnswer
from ..limits import MAX_JUDGE_SAMPLES
from ..llm import Call, Client, EndpointSettings, Reply, public_url
from ..llm.session import cost_log, nothing_answered, this_run_log
from ..llm.settings import check_number

SCALE = (0, 1, 2, 3)
_LABEL_LINE = re.compile(r"(?:(?:final\s+)?(?:label|score)\s*[:=]\s*)?([0-3])", re.IGNORECASE)


def parse_label(answer: str | None) -> int | None:
    """The 0-3 label on the answer's final non-empty line (``Label: N`` or ``N``), else ``None``."""
    if not answer:
        return None
    lines = [line.strip() for line in answer.strip().splitlines() if line.strip()]
    if not lines:
        return None
    last = lines[-1].strip("*_` \t").rstrip(".").strip("*_` \t")
    match = _LABEL_LINE.fullmatch(last)
    return int(match.group(1)) if match else None


_INSTRUCTIONS = [re.compile(pattern, re.IGNORECASE) for pattern in (
    # An imperative ("rate this 3"), not a report ("users who rated this 3.5 stars"): no suffix, no decimals.
    (r"\b(?:rate|score|label|grade|judge|mark|rank|assess)\s+(?:this|it|me|the\s+\w+)?\s*(?:as\s+|with\s+|a\s+)?"
     r"(?:(?:label|score|grade)\s*)?[:=]?\s*[0-3](?![.,]?\d)\b"),
    r"\b(?:label|score|grade|relevance|rating)\s*(?:is|should\s+be|must\s+be|[:=])\s*[0-3](?![.,]?\d)\b",
    r"\bignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding)\b",
    r"\b(?:dear|attention|note\s+to\s+the|to\s+the)\s+(?:assessor|annotator|judge|evaluator|grader|rater)s?\b",
    r"\b(?:you\s+are\s+an?|as\s+an?)\s+(?:ai|language\s+model|llm|assistant|assessor|evaluator)\b",
    r"\b(?:system\s+prompt|new\s+instructions?)\b",
    r"\bhighly\s+relevant\b.{0,40}\b(?:label|score|rate)\b",
)]


def assessor_instructions(text: str) -> list[str]:
    """The phrases of ``text`` that address an assessor (each match as written, in order of pattern)."""
    found: list[str] = []
    for pattern in _INSTRUCTIONS:
        found.extend(match.group(0) for match in pattern.finditer(text))
    return list(dict.fromkeys(found))


def mode_label(labels: Iterable[int | None]) -> tuple[int | None, int | None]:
    """The mode of the parsed labels (the lowest of tied ones) and their spread; ``(None, None)`` when none."""
    parsed = [label for label in labels if label is not None]
    if not parsed:
        return None, None
    counts = Counter(parsed)
    top = max(counts.values())
    return min(label for label, n in counts.items() if n == top), max(parsed) - min(parsed)


# --- labels from answers ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairLabel:
    """One (turn, item, criterion): its label (the mode of the parsed samples), their spread, how many
    samples were answered and parsed, and each sample's answer (``-`` unparseable, ``?`` not answered yet)."""

    turn_id: str
    item_id: str
    criterion: str
    label: int | None
    spread: int | None
    answered: int
    parsed: int
    answers: str


@dataclass
class Judged:
    """What the answers say: each answered sample's label, each pair's, the qrels, and what went wrong."""

    by_sample: dict[tuple[str, str, str, int], int | None]
    pairs: list[PairLabel]
    qrels: dict[str, dict[str, dict[str, int]]]
    spread_pairs: Counter
    unparseable: Counter
    refusals: int
    examples: list[dict]
    prompt_tokens: int
    completion_tokens: int


def collect_labels(calls: Mapping[tuple[str, str, str, int], Call], answers: Mapping[str, CachedAnswer],
                   pairs: Sequence[tuple[str, str]], criteria: Sequence[str], samples: int,
                   examples: int = 20) -> Judged:
    """The labels of ``answers`` to ``calls`` (keyed ``(turn, item, criterion, sample)``), over ``pairs`` in order.

    Calls without an answer are left out (a pair none of whose samples is answered has no
    :class:`PairLabel`); unparseable answers are counted per criterion, the first ``examples`` kept
    with their last line. Tokens are counted once per distinct call key.
    """
    by_sample: dict[tuple[str, str, str, int], int | None] = {}
    unparseable: Counter = Counter()
    refusals = 0
    shown: list[dict] = []
    for (turn, item, criterion, sample), call in calls.items():
        answer = answers.get(call.key)
        if answer is None:
            continue
        label = parse_label(answer.content)
        by_sample[turn, item, criterion, sample] = label
        if label is None:
            unparseable[criterion] += 1
            refusals += answer.refusal is not None
            if len(shown) < examples:
                lines = (answer.content or "").strip().splitlines()
                last_line = lines[-1] if lines else (answer.refusal or "")
                shown.append({"turn_id": turn, "item_id": item, "criterion": criterion, "sample": sample,
                              "refusal": answer.refusal is not None, "last_line": last_line[:200]})
    counted = [answers[key] for key in {call.key for call in calls.values()} if key in answers]
    pair_labels = []
    qrels: dict[str, dict[str, dict[str, int]]] = {c: {} for c in criteria}
    spread_pairs: Counter = Counter()
    for turn, item in pairs:
        for criterion in criteria:
            keys = [(turn, item, criterion, s) for s in range(samples)]
            if not any(k in by_sample for k in keys):
                continue
            got = [by_sample.get(k) for k in keys]
            label, spread = mode_label(got)
            text = " ".join("?" if k not in by_sample else ("-" if v is None else str(v))
                            for k, v in zip(keys, got, strict=True))
            pair_labels.append(PairLabel(turn, item, criterion, label, spread, sum(k in by_sample for k in keys),
                                         sum(v is not None for v in got), text))
            if label is not None:
                qrels[criterion].setdefault(turn, {})[item] = label
            if spread:
                spread_pairs[criterion] += 1
    return Judged(by_sample, pair_labels, qrels, spread_pairs, unparseable, refusals, shown,
                  sum(a.prompt_tokens for a in counted), sum(a.completion_tokens for a in counted))


# --- a pool judged: the one implementation of `castregin judge` and `castregin.api.judge` ----------------------

#: The unparseable answers a run log shows (the count is always whole).
EXAMPLES_SHOWN = 20


def worker_id(model: str, prompt: str, sample: int, samples: int) -> str:
    """``llm:<model>:<prompt>``, with ``:s<k>`` when several samples are asked; spaces become ``_``."""
    name = f"llm:{'_'.join(model.split())}:{prompt}"
    return f"{name}:s{sample}" if samples > 1 else name


@dataclass(frozen=True)
class JudgeSettings(EndpointSettings):
    """What ``castregin judge`` takes besides its inputs, with the command's defaults: the endpoint's
    settings (:class:`castregin.llm.EndpointSettings`) and ``samples``, the calls of every pair."""

    samples: int = 1

    def check(self) -> JudgeSettings:
        """The endpoint's checks, the range of ``samples``, and several samples only with a temperature above 0
        (at 0 they would be the same answer); an :class:`InputError` naming the argument."""
        samples = check_number(self.samples, "samples", 1, MAX_JUDGE_SAMPLES, True)
        checked = super().check()
        if samples > 1 and checked.temperature <= 0:
            raise InputError("several samples of one prompt need --temperature > 0 (at 0 they would be the same "
                             "answer)", argument="temperature")
        return replace(checked, samples=int(samples))


@dataclass
class LLMJudgment:
    """What one judging run gives: the crowd rows ``(worker, turn, item, {criterion: label or None})``,
    the per-pair label rows (``labels.csv``'s columns; label and spread None where there is none), the qrels per
    criterion, and the run log."""

    rows: list[tuple[str, str, str, dict[str, int | None]]]
    label_rows: list[tuple]
    qrels: dict[str, dict[str, dict[str, int]]]
    log: dict


@dataclass
class JudgeChats:
    """Every prompt of a judging run, rendered before the cache is opened: the tasks in order (by turn, then
    item), the chat messages of each (turn, item, criterion), and the items whose text addresses the assessor
    (:func:`assessor_instructions`; flagged in the run log, never dropped); the criteria and the prompt they were
    rendered with, which the labels and the log are then read with."""

    tasks: list
    chats: dict[tuple[str, str, str], tuple[dict[str, str], ...]]
    flagged: list[dict]
    criteria: tuple[str, ...]
    prompt: Any


def judge_chats(tasks: Sequence, criteria: Sequence[str], prompt) -> JudgeChats:
    """The chats of every (task, criterion): ``tasks`` are :class:`castregin.judging.tasks.Task`; ``prompt`` has a
    ``name`` (the worker's), ``source`` and ``digest`` (the log's) and ``messages(task, criterion)``, the chat
    messages of one prompt (:class:`castregin.render.llm.PromptTemplate`), whose refusal (a template failing on a
    task) comes before the first request."""
    from ..data import natural_key

    ordered = sorted(tasks, key=lambda t: (natural_key(t.turn_id), t.item_id))
    chats = {(task.turn_id, task.item_id, criterion): prompt.messages(task, criterion)
             for task in ordered for criterion in criteria}
    flagged = []
    for task in ordered:
        phrases = assessor_instructions(task.text)
        if phrases:
            flagged.append({"turn_id": task.turn_id, "item_id": task.item_id, "phrases": phrases})
    return JudgeChats(ordered, chats, flagged, tuple(criteria), prompt)


def judge_tasks(client: Client, chats: JudgeChats, *, already: int = 0,
                progress: Callable[[int], Callable[[Reply | None], None]] | None = None) -> LLMJudgment:
    """Judge every (task, criterion, sample) of ``chats`` (:func:`judge_chats`: its criteria and prompt) through
    ``client``, open on the answer cache (:func:`castregin.llm.session.model_run`: the one
    run of every command that calls a model, with ``seeds`` when there are several samples).

    The samples are the client's settings' (:class:`JudgeSettings`; 1 for plain endpoint settings); ``already``
    (the pairs judged before, left out) goes into the log; ``progress(n)`` is told how many calls will be sent
    and returns the callback told of each settled call. Every number comes from the cache: a resumed run gives
    what an undisturbed one does. When calls were to be made and not one has an answer (every request failed,
    or none could be sent), an :class:`InputError` says why (the first failure).
    """
    settings = client.settings
    model = settings.model
    samples = settings.samples if isinstance(settings, JudgeSettings) else 1
    ordered, flagged, criteria, prompt = chats.tasks, chats.flagged, chats.criteria, chats.prompt
    started = time.monotonic()
    calls = {(*pair, sample): client.call(chat, sample) for pair, chat in chats.chats.items()
             for sample in range(samples)}
    answers = client.run(list(calls.values()), progress)
    if calls and not answers:
        raise InputError(nothing_answered(client))

    pairs = [(task.turn_id, task.item_id) for task in ordered]
    judged = collect_labels(calls, answers, pairs, criteria, samples, examples=EXAMPLES_SHOWN)
    rows = []
    for turn, item in pairs:
        for sample in range(samples):
            labels = {c: judged.by_sample.get((turn, item, c, sample)) for c in criteria}
            if any(v is not None for v in labels.values()):
                rows.append((worker_id(model, prompt.name, sample, samples), turn, item, labels))
    label_rows = [(p.turn_id, p.item_id, p.criterion, p.label, p.spread, p.answered, p.parsed, p.answers)
                  for p in judged.pairs]
    answered_calls = len(judged.by_sample)
    log = {
        "model": model,
        "endpoint": public_url(settings.base_url),
        "api_key_env": settings.api_key_env,
        "prompt": {"name": prompt.name, "source": prompt.source, "sha256": prompt.digest},
        "criteria": list(criteria),
        "samples": samples,
        "parameters": client.parameters,
        "pairs": len(ordered),
        "pairs_already_judged": already,
        "calls": len(calls),
        "answered": answered_calls,
        "complete": answered_calls == len(calls),
        "unparseable": {c: judged.unparseable[c] for c in criteria},
        "refusals": judged.refusals,
        "unparseable_examples": judged.examples,
        "pairs_with_spread": {c: judged.spread_pairs[c] for c in criteria} if samples > 1 else None,
        "tokens": {"prompt": judged.prompt_tokens, "completion": judged.completion_tokens},
        "cost": cost_log(settings, judged.prompt_tokens, judged.completion_tokens),
        "flagged_items": flagged,
        "this_run": this_run_log(client, time.monotonic() - started),
    }
    return LLMJudgment(rows, label_rows, judged.qrels, log)
