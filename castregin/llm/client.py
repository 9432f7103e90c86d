"""The one client of every command that calls a model: :class:`Client` (see :mod:`castregin.llm`)."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from ..errors import InputError
from ..formats.llm_cache import AnswerCache, CachedAnswer, call_key
from .calls import Call, Fatal, Reply, Transient
from .settings import EndpointSettings, api_key, check_api_key, printable
from .transport import Abandoned, OpenAICaller, _Stopping

Item = TypeVar("Item")
Result = TypeVar("Result")

#: Seconds the requests in flight get to finish once the client is stopped (SIGTERM, SIGINT): what arrives
#: by then is stored (and not asked again); what has not is abandoned.
STOP_GRACE = 2.0
#: The longest backoff wait between two tries of a call (the server's Retry-After may ask for more).
MAX_BACKOFF = 60.0

Status = Literal["answered", "cached", "failed", "budget", "stopped"]


@dataclass(frozen=True)
class Answer:
    """What :meth:`Client.ask` got for one call: ``status`` ``"answered"`` (a request now) or ``"cached"``
    (an earlier run's), with ``answer`` as the cache holds it; else ``answer`` is None and ``status`` says
    why: ``"failed"`` (after every retry; ``error`` is the last failure, on one line), ``"budget"``
    (``max_requests`` spent), ``"stopped"`` (the client was stopped, or the request abandoned)."""

    key: str
    status: Status
    answer: CachedAnswer | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.answer is not None


@dataclass
class ClientStats:
    """What a client did: requests sent (retries count), answers stored, answers found in the cache, calls
    that failed after every retry or were not sent (budget, stop), failures by kind, the tokens of the new
    answers, whether the budget ran out, and the first failure's text (one line, the key hidden)."""

    requests: int = 0
    answers: int = 0
    from_cache: int = 0
    failed_calls: int = 0
    unsent_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: Counter = field(default_factory=Counter)
    budget_spent: bool = False
    first_error: str | None = None


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


class Client:
    """A model endpoint with an answer cache: one per command run. See :mod:`castregin.llm` for the whole API.

    ``settings`` (checked here); ``cache``: the SQLite file's path (made when missing; removed again on
    close when this client made it and stored nothing, so that a run refused at once leaves nothing);
    ``seeds``: send each call's sample index as the request's ``seed`` (then it is part of every key);
    ``purpose`` names the command in the one error a missing ``openai`` package gives; ``caller``
    replaces the openai SDK (tests: a function from :class:`Call` to :class:`Reply`, raising
    :class:`Transient` or :class:`Fatal`). The API key is read from ``settings.api_key_env`` when the
    first request is made, and sent in that request's header only.
    """

    def __init__(self, settings: EndpointSettings, cache: str | os.PathLike, *, seeds: bool = False,
                 purpose: str = "castregin", caller: Callable[[Call], Reply] | None = None):
        self.settings = settings.check()
        self.parameters: dict[str, object] = self.settings.parameters()
        if seeds:
            # Each sample is sent with seed = its index: not the request a single sample is.
            self.parameters["seed"] = "sample index"
        self.seeds = seeds
        self.purpose = purpose
        self.stats = ClientStats()
        self._caller = caller
        self._owned_caller: OpenAICaller | None = None
        self._stopping = _Stopping()
        self._stop = threading.Event()
        self._fatal: InputError | None = None
        self._budget = _Budget(self.settings.max_requests)
        self._slots = threading.BoundedSemaphore(self.settings.concurrency)
        self._lock = threading.Lock()
        self._progress: Callable[[Reply | None], None] | None = None
        self.cache = AnswerCache(cache)

    # --- life --------------------------------------------------------------------------------------------------

    @property
    def path(self) -> str:
        return self.cache.path

    @property
    def stored(self) -> int:
        """Answers this client stored in the cache (others may have stored some too)."""
        return self.cache.stored

    def __enter__(self) -> Client:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is not None:
            self.stop()
        self.close(failed=kind is not None)

    def close(self, *, failed: bool = False) -> None:
        """Close the connections and the cache; after a failure (``failed``), a cache file this client made
        and stored nothing in is removed."""
        if self._owned_caller is not None:
            self._owned_caller.close()
        if failed:
            self.cache.remove_if_unused()
        else:
            self.cache.close()

    def stop(self, grace: float = STOP_GRACE) -> None:
        """No new request from now on; the requests in flight get ``grace`` seconds to finish (their answers are
        stored), then they are abandoned (not stored: the next run asks again). Thread-safe; idempotent."""
        self._stop.set()
        with self._lock:
            if self._stopping.abandon_at is None:
                self._stopping.abandon_at = time.monotonic() + grace

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    # --- calls and the cache -----------------------------------------------------------------------------------

    def call(self, messages: Sequence[Mapping[str, str]], sample: int = 0) -> Call:
        """The :class:`Call` of ``messages`` (and ``sample``), its key computed from this client's model and
        parameters: the same messages give the same key in every run, so the cache answers them."""
        chat = tuple(dict(m) for m in messages)
        return Call(call_key(self.settings.model, chat, self.parameters, sample), chat, sample)

    def cached(self, calls: Iterable[Call]) -> dict[str, CachedAnswer]:
        """The cache's answers to ``calls``, by key (one lookup for all)."""
        return self.cache.lookup(call.key for call in calls)

    # --- a batch of independent calls ---------------------------------------------------------------------------

    def run(self, calls: Sequence[Call],
            progress: Callable[[int], Callable[[Reply | None], None]] | None = None) -> dict[str, CachedAnswer]:
        """Every answer to ``calls``, by key: the cache's, and for the others a request each, in
        ``concurrency`` threads, each answer stored before it counts.

        The first call not cached is sent alone: a key or a model the endpoint refuses (a 4xx) ends the run
        after one request (an :class:`InputError`), and an endpoint that does not answer it after every retry
        is not asked the rest (they count as not sent; ``stats.first_error`` says why). ``progress(n)`` is
        told how many calls will be sent and returns the callback told of each settled one (its
        :class:`Reply`, or None when it failed), never from two threads at once. A call that fails or is
        not sent has no answer in the result. SIGTERM or SIGINT (an exception in the calling thread) stops
        the client (:meth:`stop`), waits for the requests in flight (at most the grace and a poll), and
        goes on.
        """
        unique = {call.key: call for call in calls}
        answers = self.cached(unique.values())
        self.stats.from_cache += len(answers)
        pending = [call for key, call in unique.items() if key not in answers]
        if not pending:
            return answers
        self._progress = progress(len(pending)) if progress is not None else None
        self._ensure_caller()
        try:
            first = self.parallel(self._settle, pending[:1], threads=1)[0]
            outcomes = [first]
            if first.status == "failed" and self.stats.answers == 0:
                # The endpoint answered nothing: the rest would fail alike, each after its own retries.
                self.stats.unsent_calls += len(pending) - 1
            else:
                outcomes += self.parallel(self._settle, pending[1:])
        finally:
            self._progress = None
        for outcome in outcomes:
            if outcome.answer is not None:
                answers[outcome.key] = outcome.answer
        return answers

    def parallel(self, work: Callable[[Item], Result], items: Iterable[Item],
                 threads: int | None = None) -> list[Result]:
        """``work(item)`` for every item, in ``threads`` threads (default: ``concurrency``), the results in the
        items' order. For conversations: ``work`` plays one whole episode, each of its calls through
        :meth:`ask` after the previous answer; episodes run side by side.

        Once the client is stopped (:meth:`stop`, from ``work`` or elsewhere) no thread takes a new item: an
        item not begun has None for its result (a resumed run stopped by SIGTERM does not go on replaying
        cached items). An exception in one ``work`` stops the client (no new request; the others' :meth:`ask`
        return ``"stopped"``) and is raised once every thread has ended. An exception in the calling thread
        (SIGTERM, SIGINT) stops the client too: the threads are waited for as long as the requests in
        flight may take to finish or be abandoned, then the exception goes on.
        """
        queue = list(items)
        results: list = [None] * len(queue)
        errors: list[BaseException] = []
        next_index = iter(range(len(queue)))
        take = threading.Lock()
        count = max(1, min(threads or self.settings.concurrency, len(queue)))
        running = [count]
        # An Event, not Thread.join: a join interrupted by a signal can report a running thread as ended
        # (CPython before 3.13), and the cache would then be closed under it.
        finished = threading.Event()

        def worker() -> None:
            try:
                while True:
                    if self._stop.is_set():
                        return
                    with take:
                        index = next(next_index, None)
                    if index is None or errors:
                        return
                    try:
                        results[index] = work(queue[index])
                    except BaseException as err:  # noqa: BLE001 - raised in the calling thread below
                        with take:
                            errors.append(err)
                        self.stop()
                        return
            finally:
                with take:
                    running[0] -= 1
                    if not running[0]:
                        finished.set()

        # Daemon threads: a request that even abandonment cannot end (a connect under way) does not keep the
        # process from exiting once the caller has given up on it.
        try:
            for n in range(count):
                threading.Thread(target=worker, name=f"castregin-{self.purpose}-{n}", daemon=True).start()
            finished.wait()
        except BaseException:
            self.stop()
            finished.wait(STOP_GRACE + 1.0)
            raise
        if errors:
            raise errors[0]
        return results

    # --- one call -----------------------------------------------------------------------------------------------

    def ask(self, call: Call) -> Answer:
        """The answer to one call: the cache's, else a request (retried, budgeted, bounded in time), stored
        before it returns. Thread-safe: call it from many threads (at most ``concurrency`` requests are in
        flight at once). A request the endpoint refuses (a 4xx: wrong key, unknown model) stops the client and
        raises an :class:`InputError`, as does every later :meth:`ask`."""
        if self._fatal is not None:
            raise self._fatal
        found = self.cache.lookup([call.key]).get(call.key)
        if found is not None:
            with self._lock:
                self.stats.from_cache += 1
            return Answer(call.key, "cached", found)
        return self._settle(call)

    def _settle(self, call: Call) -> Answer:
        """A call not in the cache: its request(s), and the outcome counted."""
        if self._fatal is not None:
            raise self._fatal
        outcome = self._request(call)
        with self._lock:
            if outcome.status == "failed":
                self.stats.failed_calls += 1
                if self._progress is not None:
                    self._progress(None)
            elif outcome.status in ("budget", "stopped"):
                self.stats.unsent_calls += 1
        return outcome

    def _ensure_caller(self) -> Callable[[Call], Reply]:
        with self._lock:
            if self._caller is None:
                key = api_key(self.settings.api_key_env)
                check_api_key(key, self.settings.api_key_env)
                self._owned_caller = OpenAICaller(self.settings, key, send_seed=self.seeds, stopping=self._stopping,
                                                  purpose=self.purpose)
                self._caller = self._owned_caller
            return self._caller

    def _request(self, call: Call) -> Answer:
        caller = self._ensure_caller()
        settings = self.settings
        attempt = 0
        while True:
            if self._stop.is_set():
                return Answer(call.key, "stopped")
            if not self._budget.take():
                with self._lock:
                    self.stats.budget_spent = True
                return Answer(call.key, "budget")
            with self._slots:
                if self._stop.is_set():
                    return Answer(call.key, "stopped")
                with self._lock:
                    self.stats.requests += 1
                try:
                    reply = caller(call)
                except Abandoned:
                    return Answer(call.key, "stopped")
                except Transient as failure:
                    error = printable(str(failure))
                    with self._lock:
                        self.stats.failures[failure.kind] += 1
                        if self.stats.first_error is None:
                            self.stats.first_error = error
                    if attempt >= settings.max_retries:
                        return Answer(call.key, "failed", error=error)
                    wait = failure.retry_after
                except Fatal as failure:
                    with self._lock:
                        self.stats.failures[failure.kind] += 1
                        if self._fatal is None:
                            self._fatal = InputError(
                                f"the endpoint refused a request ({printable(str(failure))}); check --model, "
                                "--base-url and the API key's variable (--api-key-env)")
                    self.stop()
                    raise self._fatal from None
                else:
                    return self._keep(call, reply)
            if wait is None:
                wait = min(MAX_BACKOFF, settings.retry_wait * 2 ** attempt)
            attempt += 1
            if self._stop.wait(wait):
                return Answer(call.key, "stopped")

    def _keep(self, call: Call, reply: Reply) -> Answer:
        kept = self.cache.store(call.key, model=self.settings.model, sample=call.sample, messages=call.messages,
                                parameters=self.parameters, content=reply.content, refusal=reply.refusal,
                                finish_reason=reply.finish_reason, prompt_tokens=reply.prompt_tokens,
                                completion_tokens=reply.completion_tokens)
        if kept is None:  # the cache was closed meanwhile: the run is over
            return Answer(call.key, "stopped")
        with self._lock:
            self.stats.answers += 1
            self.stats.prompt_tokens += reply.prompt_tokens
            self.stats.completion_tokens += reply.completion_tokens
            # Under the lock: the callback keeps running totals and a progress bar.
            if self._progress is not None:
                self._progress(reply)
        return Answer(call.key, "answered", kept)

    def cost(self) -> float:
        """What the tokens of this client's new answers cost (``settings.price_in``/``price_out``)."""
        return self.settings.cost(self.stats.prompt_tokens, self.stats.completion_tokens)
