"""A model as one more assessor: calls to an OpenAI-compatible endpoint, their answers parsed strictly.

The pieces, each plain:

- :func:`parse_label`: the label of an answer, read from its final non-empty line only (``Label: 2``,
  ``2``, with markdown emphasis allowed around it); anything else is unparseable (``None``), never
  guessed from the rest of the text, where an item's own words may be quoted.
- :func:`assessor_instructions`: the phrases of an item text that address the assessor ("rate this 3",
  "ignore the previous instructions"): such items are flagged in the run log, never dropped.
- :func:`mode_label`: several samples of one call to one label (the mode, the lowest on a tie) and
  their spread (highest minus lowest).
- :func:`judge_calls`: every call not yet in the cache, made by ``concurrency`` threads, each answer
  stored (:class:`castregin.formats.llm_cache.AnswerCache`) before it counts; 429 and 5xx answers,
  timeouts, dropped connections and malformed bodies are retried with exponential backoff, or after
  the server's ``Retry-After``; a ``max_requests`` budget stops the run cleanly; SIGTERM or SIGINT
  lets the calls in flight finish and be stored (the next run does not repeat them), starts no new
  one, and re-raises.
- :func:`openai_caller`: one call through the ``openai`` SDK (imported here only), its failures
  sorted into kinds; the API key never appears in a message it raises.
"""

from __future__ import annotations

import concurrent.futures
import email.utils
import math
import numbers
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..formats.llm_cache import AnswerCache, CachedAnswer

SCALE = (0, 1, 2, 3)
_LABEL_LINE = re.compile(r"(?:(?:final\s+)?(?:label|score)\s*[:=]\s*)?([0-3])", re.IGNORECASE)
#: Longest wait a Retry-After header may ask for; a longer one is a server saying "not today".
MAX_RETRY_AFTER = 600.0


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


# --- calling -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Call:
    """One call to make: its cache key, the messages, the sample's index (the request's ``seed`` when > 0)."""

    key: str
    messages: tuple[Mapping[str, str], ...]
    sample: int


@dataclass(frozen=True)
class Reply:
    """What the endpoint answered to one call."""

    content: str | None
    refusal: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int


class Transient(Exception):
    """A failure worth retrying: ``kind`` names it; ``retry_after`` is the server's wish in seconds."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


class Fatal(Exception):
    """A failure no retry mends (wrong key, unknown model, a request the server refuses)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass
class CallStats:
    """What one :func:`judge_calls` did: requests sent, answers stored (``stored``: each as the cache holds
    it, by key), failures by kind, tokens."""

    requests: int = 0
    answers: int = 0
    failed_calls: int = 0
    unsent_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: Counter = field(default_factory=Counter)
    budget_spent: bool = False
    stored: dict[str, CachedAnswer] = field(default_factory=dict)


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header's wait in seconds (a number or an HTTP date), ``None`` when absent or bad."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = moment.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


class _Budget:
    def __init__(self, limit: int | None):
        self.limit = limit
        self.used = 0
        self.lock = threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.limit is not None and self.used >= self.limit:
                return False
            self.used += 1
            return True


def judge_calls(calls: Sequence[Call], cache: AnswerCache, caller: Callable[[Call], Reply], *, model: str,
                parameters: Mapping[str, object], concurrency: int = 4, max_retries: int = 5,
                max_requests: int | None = None, backoff: float = 1.0, max_backoff: float = 60.0,
                progress: Callable[[Reply | None], None] | None = None) -> CallStats:
    """Make every call of ``calls`` (none of them cached yet), storing each answer before it counts.

    ``caller`` sends one call and returns its :class:`Reply`, or raises :class:`Transient` (retried up
    to ``max_retries`` times, after ``Retry-After`` when the server gave one, else ``backoff * 2**n``
    seconds, at most ``max_backoff``) or :class:`Fatal` (ends the run: an :class:`InputError`).
    ``max_requests`` bounds the requests sent, retries included; when it is spent the calls left are
    not made (``budget_spent``). ``progress`` is told of every call settled (its reply, or ``None``).
    """
    stats = CallStats()
    budget = _Budget(max_requests)
    stop = threading.Event()
    lock = threading.Lock()

    def settle(reply: Reply | None) -> None:
        # Under the lock: the callback keeps running totals and a progress bar, and calls settle from the
        # worker threads (answers) and from this one (failed calls).
        if progress is not None:
            with lock:
                progress(reply)

    def one(call: Call) -> str:
        attempt = 0
        while True:
            if stop.is_set():
                return "unsent"
            if not budget.take():
                with lock:
                    stats.budget_spent = True
                return "unsent"
            with lock:
                stats.requests += 1
            try:
                reply = caller(call)
            except Transient as failure:
                with lock:
                    stats.failures[failure.kind] += 1
                if attempt >= max_retries:
                    return "failed"
                wait = failure.retry_after if failure.retry_after is not None else min(max_backoff,
                                                                                       backoff * 2 ** attempt)
                attempt += 1
                if stop.wait(wait):
                    return "unsent"
                continue
            except Fatal as failure:
                with lock:
                    stats.failures[failure.kind] += 1
                stop.set()
                raise
            kept = cache.store(call.key, model=model, sample=call.sample, messages=call.messages,
                               parameters=parameters, content=reply.content, refusal=reply.refusal,
                               finish_reason=reply.finish_reason, prompt_tokens=reply.prompt_tokens,
                               completion_tokens=reply.completion_tokens)
            with lock:
                stats.stored[call.key] = kept
                stats.answers += 1
                stats.prompt_tokens += reply.prompt_tokens
                stats.completion_tokens += reply.completion_tokens
            settle(reply)
            return "answered"

    executor = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, concurrency),
                                                     thread_name_prefix="castregin-judge")
    try:
        futures = [executor.submit(one, call) for call in calls]
        for future in concurrent.futures.as_completed(futures):
            try:
                outcome = future.result()
            except Fatal as failure:
                raise InputError(f"the endpoint refused a request ({failure}); check --model, --base-url and "
                                 "the API key's variable (--api-key-env)") from None
            if outcome == "failed":
                stats.failed_calls += 1
                settle(None)
            elif outcome == "unsent":
                stats.unsent_calls += 1
    except BaseException:
        # SIGTERM, SIGINT, a fatal answer, a full disk: no new request; the ones in flight end (within the
        # timeout) and their answers are stored, so that the next run does not ask again.
        stop.set()
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
    return stats


# --- the openai SDK -----------------------------------------------------------------------------------------------

def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by ``***``."""
    return text.replace(secret, "***") if secret else text


def _status_message(err, secret: str | None) -> str:
    status = getattr(err, "status_code", None)
    # Redacted before it is cut: a cut through the key would leave its first part in clear.
    return f"HTTP {status}: {redact(str(err), secret)[:200]}"


def check_api_key(api_key: str | None, variable: str) -> None:
    """Refuse, in one line that never shows it, a key an HTTP header cannot carry (httpx takes printable
    ASCII only; anything else would fail every request as if the answers were malformed)."""
    if api_key is None:
        return
    for position, character in enumerate(api_key, 1):
        if not " " <= character <= "~":
            raise InputError(f"the API key in {variable} holds a character an HTTP header cannot carry (character "
                             f"{position}: not printable ASCII); check the variable's value",
                             argument="api_key_env")


def openai_caller(model: str, base_url: str, api_key: str | None, *, timeout: float, temperature: float,
                  max_tokens: int | None, send_seed: bool) -> Callable[[Call], Reply]:
    """A function that sends one :class:`Call` to ``base_url``'s chat completions through the ``openai`` SDK.

    The SDK's own retries are off (:func:`judge_calls` retries, and counts every request). Failures
    become :class:`Transient` (``rate_limited``, ``server_error``, ``timeout``, ``connection``,
    ``malformed_response``) or :class:`Fatal` (``refused_request``: any other 4xx); the key is never
    in their messages.
    """
    try:
        import openai
    except ImportError:
        raise InputError("judge needs the openai package: pip install 'castregin[llm]'") from None
    client = openai.OpenAI(api_key=api_key or "no-key", base_url=base_url, max_retries=0, timeout=timeout)

    def call(one: Call) -> Reply:
        options: dict = {"model": model, "messages": [dict(m) for m in one.messages], "temperature": temperature}
        if max_tokens is not None:
            options["max_tokens"] = max_tokens
        if send_seed:
            options["seed"] = one.sample
        try:
            response = client.chat.completions.create(**options)
        except openai.APITimeoutError:
            raise Transient("timeout", f"no answer within {timeout:g} s") from None
        except openai.APIConnectionError as err:
            raise Transient("connection", redact(f"connection failed: {err}", api_key)) from None
        except openai.APIStatusError as err:
            status = err.status_code
            if status == 429:
                raise Transient("rate_limited", _status_message(err, api_key),
                                retry_after_seconds(err.response.headers.get("retry-after"))) from None
            if status >= 500:
                raise Transient("server_error", _status_message(err, api_key),
                                retry_after_seconds(err.response.headers.get("retry-after"))) from None
            if status in {408, 409}:
                raise Transient("server_error", _status_message(err, api_key)) from None
            raise Fatal("refused_request", _status_message(err, api_key)) from None
        except (ValueError, openai.APIResponseValidationError) as err:
            # A body that is no JSON, or JSON cut short: a proxy's error page, a dropped connection.
            raise Transient("malformed_response", f"malformed answer: {redact(str(err), api_key)[:120]}") from None
        return _reply(response)

    return call


def _reply(response) -> Reply:
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices or getattr(choices[0], "message", None) is None:
        raise Transient("malformed_response", "the answer has no choices[0].message")
    message = choices[0].message
    content = message.content if isinstance(message.content, str) else None
    refusal = getattr(message, "refusal", None)
    usage = getattr(response, "usage", None)
    prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
    completion_tokens = getattr(usage, "completion_tokens", 0) or 0
    return Reply(content, refusal if isinstance(refusal, str) else None, choices[0].finish_reason,
                 int(prompt_tokens), int(completion_tokens))


# --- a pool judged: the one implementation of `castregin judge` and `castregin.api.judge` ----------------------

#: The unparseable answers a run log shows (the count is always whole).
EXAMPLES_SHOWN = 20


def worker_id(model: str, prompt: str, sample: int, samples: int) -> str:
    """``llm:<model>:<prompt>``, with ``:s<k>`` when several samples are asked; spaces become ``_``."""
    name = f"llm:{'_'.join(model.split())}:{prompt}"
    return f"{name}:s{sample}" if samples > 1 else name


def public_url(url: str) -> str:
    """The endpoint's address without credentials, query or fragment (a key can hide there)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def api_key(variable: str) -> str | None:
    """The key in the environment variable ``variable`` (None when unset or empty: no key)."""
    import os

    return os.environ.get(variable) or None


def _within(value: Any, low: float, high: float | None) -> bool:
    return low <= value and (high is None or value <= high)


def _finite(value: numbers.Real) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


@dataclass(frozen=True)
class JudgeSettings:
    """What ``castregin judge`` takes besides its inputs, with the command's defaults."""

    model: str
    base_url: str
    api_key_env: str = "OPENAI_API_KEY"
    samples: int = 1
    temperature: float = 0.0
    max_tokens: int | None = None
    concurrency: int = 4
    timeout: float = 120.0
    max_retries: int = 5
    retry_wait: float = 1.0
    max_requests: int | None = None
    price_in: float = 0.0
    price_out: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What so many tokens cost in US dollars, at ``price_in`` and ``price_out`` per million tokens."""
        return (prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1e6

    def check(self) -> JudgeSettings:
        """Refuse, as the command's options do, a value out of its range (an :class:`InputError` naming it).

        Returns the settings with plain ``int`` and ``float`` numbers (a ``numpy.int64`` is taken, but JSON,
        the cache's keys, has no such type).
        """
        from dataclasses import replace

        from ..limits import MAX_JUDGE_TIMEOUT

        bounds = {"samples": (1, 100), "concurrency": (1, 256), "max_retries": (0, 100), "max_tokens": (1, None),
                  "max_requests": (0, None), "temperature": (0, 2), "timeout": (0.001, MAX_JUDGE_TIMEOUT),
                  "retry_wait": (0, None), "price_in": (0, None), "price_out": (0, None)}
        whole = {"samples", "concurrency", "max_retries", "max_tokens", "max_requests"}
        for name, (low, high) in bounds.items():
            value = getattr(self, name)
            if value is None and name in ("max_tokens", "max_requests"):
                continue
            kind = numbers.Integral if name in whole else numbers.Real
            # The bounds are compared before float(): a huge int overflows it (10**400).
            ok = (not isinstance(value, bool) and isinstance(value, kind) and _within(value, low, high)
                  and (name in whole or _finite(value)))
            if not ok:
                span = f"{low} to {high}" if high is not None else f">= {low}"
                described = "an integer" if name in whole else "a finite number"
                raise InputError(f"expected {described} {span}, got {value!r}", argument=name)
        for name in ("model", "base_url", "api_key_env"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise InputError(f"expected a non-empty string, got {getattr(self, name)!r}", argument=name)
        if self.samples > 1 and self.temperature <= 0:
            raise InputError("several samples of one prompt need --temperature > 0 (at 0 they would be the same "
                             "answer)", argument="temperature")
        return replace(self, samples=int(self.samples), temperature=float(self.temperature),
                       max_tokens=None if self.max_tokens is None else int(self.max_tokens),
                       concurrency=int(self.concurrency), timeout=float(self.timeout),
                       max_retries=int(self.max_retries), retry_wait=float(self.retry_wait),
                       max_requests=None if self.max_requests is None else int(self.max_requests),
                       price_in=float(self.price_in), price_out=float(self.price_out))


@dataclass
class LLMJudgment:
    """What one judging run gives: the crowd rows ``(worker, turn, item, {criterion: label or None})``,
    the per-pair label rows (``labels.csv``'s columns; label and spread None where there is none), the qrels per
    criterion, and the run log."""

    rows: list[tuple[str, str, str, dict[str, int | None]]]
    label_rows: list[tuple]
    qrels: dict[str, dict[str, dict[str, int]]]
    log: dict


def judge_tasks(tasks: Sequence, criteria: Sequence[str], prompt, settings: JudgeSettings, cache_file: str, *,
                already: int = 0,
                progress: Callable[[int], Callable[[Reply | None], None]] | None = None,
                kept: Callable[[str, int], None] | None = None) -> LLMJudgment:
    """Judge every (task, criterion, sample) with the endpoint, answers from/into the cache at ``cache_file``.

    ``tasks`` are :class:`castregin.judging.tasks.Task`; ``prompt`` has a ``name`` (the worker's),
    ``source`` and ``digest`` (the log's) and ``messages(task, criterion)``, the chat messages of one
    prompt (:class:`castregin.render.llm.PromptTemplate`).
    The key is read from the environment variable ``settings.api_key_env`` only. ``progress(n)`` is told
    how many calls will be sent and returns the callback told of each settled call; ``kept(path, n)``
    is told, when the run stops by an exception, how many answers it stored. Every number comes
    from the cache: a resumed run gives what an undisturbed one does.
    """
    from ..data import natural_key
    from ..formats.llm_cache import call_key

    model, samples = settings.model, settings.samples
    parameters: dict[str, object] = {"temperature": settings.temperature}
    if settings.max_tokens is not None:
        parameters["max_tokens"] = settings.max_tokens
    if samples > 1:
        # Each sample is sent with seed = its index: not the request a single sample is.
        parameters["seed"] = "sample index"
    ordered = sorted(tasks, key=lambda t: (natural_key(t.turn_id), t.item_id))
    calls: dict[tuple[str, str, str, int], Call] = {}
    for task in ordered:
        for criterion in criteria:
            chat = prompt.messages(task, criterion)
            for sample in range(samples):
                key = call_key(model, chat, parameters, sample)
                calls[task.turn_id, task.item_id, criterion, sample] = Call(key, chat, sample)
    flagged = []
    for task in ordered:
        phrases = assessor_instructions(task.text)
        if phrases:
            flagged.append({"turn_id": task.turn_id, "item_id": task.item_id, "phrases": phrases})

    started = time.monotonic()
    cache = AnswerCache(cache_file)
    try:
        unique = {call.key: call for call in calls.values()}
        cached = cache.lookup(unique)
        pending = [call for key, call in unique.items() if key not in cached]
        stats = None
        answers = dict(cached)
        if pending:
            stats = _send(pending, cache, settings, parameters, progress)
            # Each answer as the cache holds it (the first stored, should another run share the cache).
            answers.update(stats.stored)
    except BaseException:
        if kept is not None and cache.stored:
            kept(cache.path, cache.stored)
        cache.remove_if_unused()
        raise
    cache.close()

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
    cost = settings.cost(judged.prompt_tokens, judged.completion_tokens)
    log = {
        "model": model,
        "endpoint": public_url(settings.base_url),
        "api_key_env": settings.api_key_env,
        "prompt": {"name": prompt.name, "source": prompt.source, "sha256": prompt.digest},
        "criteria": list(criteria),
        "samples": samples,
        "parameters": parameters,
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
        "cost": {"usd": round(cost, 6), "price_in_per_million": settings.price_in,
                 "price_out_per_million": settings.price_out},
        "flagged_items": flagged,
        "this_run": {
            "requests": stats.requests if stats else 0,
            "new_answers": stats.answers if stats else 0,
            "from_cache": len(unique) - len(pending),
            "failures": dict(sorted(stats.failures.items())) if stats else {},
            "calls_failed": stats.failed_calls if stats else 0,
            "calls_not_sent": stats.unsent_calls if stats else 0,
            "budget_spent": stats.budget_spent if stats else False,
            "tokens": {"prompt": stats.prompt_tokens if stats else 0,
                       "completion": stats.completion_tokens if stats else 0},
            "seconds": round(time.monotonic() - started, 3),
        },
    }
    return LLMJudgment(rows, label_rows, judged.qrels, log)


def _send(pending: Sequence[Call], cache: AnswerCache, settings: JudgeSettings, parameters: Mapping[str, object],
          progress: Callable[[int], Callable[[Reply | None], None]] | None) -> CallStats:
    caller = openai_caller(settings.model, settings.base_url, api_key(settings.api_key_env), timeout=settings.timeout,
                           temperature=settings.temperature, max_tokens=settings.max_tokens,
                           send_seed=settings.samples > 1)
    return judge_calls(pending, cache, caller, model=settings.model, parameters=parameters,
                       concurrency=settings.concurrency, max_retries=settings.max_retries,
                       max_requests=settings.max_requests, backoff=settings.retry_wait,
                       progress=progress(len(pending)) if progress is not None else None)
