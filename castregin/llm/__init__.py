"""The one model client of castregin: every command that calls a model (``judge``, ``nuggets``, ``play``)
calls it through :class:`Client`, over any OpenAI-compatible chat-completions endpoint.

A layer above :mod:`castregin.formats` (the answer cache, :mod:`castregin.formats.llm_cache`) and below
the stages, which build the prompts and read the answers. The ``openai`` SDK is imported when the first
request is made, never on import.

Settings
    :class:`EndpointSettings` ``(model, base_url, api_key_env="OPENAI_API_KEY", temperature=0.0,
    max_tokens=None, concurrency=4, timeout=120.0, max_retries=5, retry_wait=1.0, max_requests=None,
    price_in=0.0, price_out=0.0)``; ``.check()`` refuses a value out of its range
    (:data:`castregin.limits.ENDPOINT_BOUNDS`, the table the command options use too) or a base URL no
    request can go to, in one line naming the argument; ``.cost(prompt_tokens, completion_tokens)``;
    ``.parameters()``. :func:`api_key` reads the key from the environment, :func:`check_api_key` refuses
    one no server takes; :func:`public_url` is the address without credentials, for logs.

The client
    ``Client(settings, cache_path, *, seeds=False, purpose="castregin", caller=None)``, a context manager,
    one per command run:

    - ``client.call(messages, sample=0) -> Call``: a call and its cache key (model, messages, the
      parameters that change an answer, the sample);
    - ``client.cached(calls) -> {key: CachedAnswer}``: what the cache holds, in one lookup;
    - ``client.run(calls, progress=None) -> {key: CachedAnswer}``: **a batch** of independent calls
      (``judge``, ``nuggets assign``): the cached answers and a request for each other call, in
      ``concurrency`` threads, each answer stored before it counts; calls that fail or are not sent
      (budget, stop) are absent from the result;
    - ``client.ask(call) -> Answer``: **one call** (conversations: ``play``, where each call's messages
      hold the previous answers): the cache's answer (``status="cached"``, so a resumed episode replays
      its answers without a request), else a request with retries, budget and deadline, stored before
      it returns (``"answered"``), or no answer and why: ``"failed"`` (``error`` on one line),
      ``"budget"``, ``"stopped"``. Thread-safe; at most ``concurrency`` requests in flight whatever the
      number of calling threads;
    - ``client.parallel(work, items, threads=None) -> [results]``: ``work(item)`` in ``concurrency``
      daemon threads (one episode each, its calls through ``ask``), the results in order; an exception
      in one stops the client and is raised; SIGTERM/SIGINT in the calling thread stop the client, wait
      for the requests in flight (at most :data:`STOP_GRACE` seconds and a poll) and go on;
    - ``client.stop()``: no new request; the requests in flight get :data:`STOP_GRACE` seconds, then
      are abandoned, not cached (the next run asks them again);
    - ``client.stats`` (:class:`ClientStats`: requests, answers, from_cache, failed_calls, unsent_calls,
      prompt/completion tokens, failures by kind, budget_spent, first_error), ``client.cost()``,
      ``client.stored`` (answers this client stored), ``client.path``.

    Leaving the ``with`` block by an exception stops the client and removes a cache file it made and
    stored nothing in (a run refused at once leaves no file behind); otherwise the cache is closed.

What every request gets
    A total deadline (``timeout``, from the request's start to its answer's last byte), a bound on the
    bytes of an answer (:data:`castregin.limits.MAX_ANSWER_BYTES`, after decompression too), retries
    after a 429, a 5xx, a 408/409, a timeout, a dropped connection or a malformed answer (the server's
    ``Retry-After``, else ``retry_wait`` doubled at each retry, at most 60 s), a stop of everything on
    any other 4xx (:class:`Fatal`), the budget (``max_requests``, retries counted), and the key hidden
    (``***``) in everything received before it is stored or shown. An answer is strict JSON
    (:func:`~castregin.llm.calls.parse_completion`): anything else is a malformed answer, never a
    traceback.
"""

from __future__ import annotations

from .calls import Call, Fatal, Reply, Transient, parse_completion, retry_after_seconds
from .client import STOP_GRACE, Answer, Client, ClientStats
from .settings import (
                       EndpointSettings,
                       Redactor,
                       api_key,
                       check_api_key,
                       check_base_url,
                       printable,
                       public_url,
                       server_text,
)
from .transport import Abandoned

__all__ = ["STOP_GRACE", "Abandoned", "Answer", "Call", "Client", "ClientStats", "EndpointSettings", "Fatal",
           "Redactor", "Reply", "Transient", "api_key", "check_api_key", "check_base_url", "parse_completion",
           "printable", "public_url", "retry_after_seconds", "server_text"]
