"""One request through the ``openai`` SDK, bounded in time and size whatever the server does.

The SDK sends the request (its ``base_url``, headers, error types; its own retries off: the client
retries and counts every request). Underneath, in httpx's connection pool, every socket operation of
a request goes through :class:`_BoundedStream`, which enforces what a per-read timeout cannot:

- **a total deadline per request** (``timeout``, from the request's start to the last byte of its answer):
  a server that trickles its headers or body a byte a second is cut off at the deadline, not kept
  forever by reads that each arrive in time;
- **abandonment**: once the client is stopped and its grace is over (SIGTERM, SIGINT), the reads of the
  requests in flight end within :data:`POLL` seconds (they are not cached: the next run asks again);
- **a bound on the bytes of one answer** (:data:`castregin.limits.MAX_ANSWER_BYTES`, headers and body as
  received, and again after decompression: a gzip body is decoded here, within the bound, never by httpx
  at once), so an endless chunked body or a decompression bomb is a malformed answer, not gigabytes.

Redirects are not followed (an endpoint that redirects is named in the error), the body is read by
:func:`castregin.llm.calls.parse_completion`, and every text received is shown with the key hidden.
"""

from __future__ import annotations

import importlib
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import InputError
from ..limits import MAX_ANSWER_BYTES
from .calls import Call, Fatal, Reply, Transient, parse_completion, retry_after_seconds
from .settings import EndpointSettings, Redactor, server_text, shown_url

#: Seconds between two looks at a read or write in progress: how soon an abandoned request ends.
POLL = 0.25


class Abandoned(Exception):
    """A request cut off because its client was stopped: not answered, not failed, not cached."""


class _TooLarge(Exception):
    pass


class Watch:
    """One request's bounds: its deadline, the bytes received so far, and the client's abandonment time."""

    __slots__ = ("client", "deadline", "received")

    def __init__(self, deadline: float, client: _Stopping):
        self.deadline = deadline
        self.received = 0
        self.client = client

    def wait(self, timeout: float | None) -> float:
        """How long the next socket operation may block: up to its own timeout, the deadline, and POLL."""
        now = time.monotonic()
        if self.client.abandon_at is not None and now >= self.client.abandon_at:
            raise Abandoned
        left = self.deadline - now
        wait = min(left, POLL) if timeout is None else min(timeout, left, POLL)
        return max(wait, 0.0)

    def count(self, size: int) -> None:
        self.received += size
        if self.received > MAX_ANSWER_BYTES:
            raise _TooLarge(f"the answer is larger than {MAX_ANSWER_BYTES} bytes")


class _Stopping:
    """What the streams of one client read to know whether its requests are abandoned."""

    abandon_at: float | None = None


_current = threading.local()


def _watch() -> Watch | None:
    return getattr(_current, "watch", None)


class _BoundedStream:
    """An httpcore network stream whose reads and writes keep to the current request's :class:`Watch`."""

    def __init__(self, inner: Any, core: Any):
        self._inner = inner
        self._core = core

    def _op(self, operation: Callable[[float | None], Any], timeout: float | None,
            timed_out: type[BaseException]) -> Any:
        watch = _watch()
        if watch is None:
            return operation(timeout)
        started = time.monotonic()
        while True:
            wait = watch.wait(timeout)
            if wait <= 0:
                raise timed_out("the request's deadline passed")
            try:
                return operation(wait)
            except timed_out:
                now = time.monotonic()
                if now >= watch.deadline or (timeout is not None and now - started >= timeout):
                    raise

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = self._op(lambda wait: self._inner.read(max_bytes, wait), timeout, self._core.ReadTimeout)
        watch = _watch()
        if watch is not None:
            watch.count(len(data))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        view = memoryview(buffer)
        # In pieces, so that a server reading slowly meets the deadline between them.
        for start in range(0, len(view), 65536):
            piece = bytes(view[start:start + 65536])

            def send(wait: float | None, piece: bytes = piece) -> None:
                self._inner.write(piece, wait)

            self._op(send, timeout, self._core.WriteTimeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        watch = _watch()
        if watch is not None:
            left = watch.deadline - time.monotonic()
            timeout = max(0.0, left if timeout is None else min(timeout, left))
        return _BoundedStream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._core)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend:
    """httpcore's network backend with every stream it opens bounded (:class:`_BoundedStream`)."""

    def __init__(self, inner: Any, core: Any):
        self._inner = inner
        self._core = core

    def _connect_timeout(self, timeout: float | None) -> float | None:
        watch = _watch()
        if watch is None:
            return timeout
        left = max(0.0, watch.deadline - time.monotonic())
        return left if timeout is None else min(timeout, left)

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> Any:
        stream = self._inner.connect_tcp(host, port, self._connect_timeout(timeout), local_address, socket_options)
        return _BoundedStream(stream, self._core)

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        return _BoundedStream(self._inner.connect_unix_socket(path, self._connect_timeout(timeout), socket_options),
                              self._core)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _bound_transports(http_client: Any) -> int:
    """Put :class:`_BoundedBackend` under every connection pool of an httpx client (its transport and the
    proxies' mounts); how many were bounded."""
    transports = [getattr(http_client, "_transport", None), *getattr(http_client, "_mounts", {}).values()]
    bounded = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if pool is None or backend is None:
            continue
        core = importlib.import_module(type(pool).__module__.split(".")[0])
        pool._network_backend = _BoundedBackend(backend, core)
        bounded += 1
    return bounded


def _decoding_hook(http: Any) -> Callable[[Any], None]:
    """An httpx response hook that decodes a gzip or deflate body itself, within MAX_ANSWER_BYTES."""

    class Decoded(http.SyncByteStream):
        def __init__(self, raw: Any, wbits: int):
            self._raw = raw
            self._wbits = wbits

        def __iter__(self) -> Iterator[bytes]:
            decoder = zlib.decompressobj(self._wbits)
            produced = 0
            try:
                for chunk in self._raw:
                    data = chunk
                    while data:
                        out = decoder.decompress(data, MAX_ANSWER_BYTES - produced + 1)
                        produced += len(out)
                        if produced > MAX_ANSWER_BYTES:
                            raise _TooLarge(f"the answer decompresses to more than {MAX_ANSWER_BYTES} bytes")
                        if out:
                            yield out
                        data = decoder.unconsumed_tail
            except zlib.error as err:
                raise _TooLarge(f"the compressed body does not decompress ({err})") from None

        def close(self) -> None:
            close = getattr(self._raw, "close", None)
            if close is not None:
                close()

    def hook(response: Any) -> None:
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding in ("", "identity"):
            return
        if encoding not in ("gzip", "x-gzip", "deflate"):
            raise _TooLarge(f"the answer's Content-Encoding {encoding[:40]!r} was not asked for")
        del response.headers["content-encoding"]
        response.stream = Decoded(response.stream, 31 if "gzip" in encoding else 47)

    return hook


def _error_text(err: Any) -> str:
    """The server's own words in an error answer (``{"error": {"message": ...}}``), else the SDK's text (which
    differs between its versions)."""
    body = getattr(err, "body", None)
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
        return error["message"]
    if isinstance(error, str) and error:
        return error
    return str(err)


class OpenAICaller:
    """Sends one :class:`Call` to ``settings.base_url``'s chat completions and returns its :class:`Reply`.

    Failures become :class:`Transient` (``rate_limited``, ``server_error``, ``timeout``, ``connection``,
    ``malformed_response``) or :class:`Fatal` (``refused_request``: any other 4xx, or a redirect), with
    messages on one line and the key as ``***``; a request cut off by the client's stop raises
    :class:`Abandoned`.
    """

    def __init__(self, settings: EndpointSettings, api_key: str | None, *, send_seed: bool, stopping: _Stopping,
                 purpose: str = "castregin"):
        try:
            import openai
        except ImportError:
            raise InputError(f"{purpose} needs the openai package: pip install 'castregin[llm]'") from None
        self._openai = openai
        self._settings = settings
        self._send_seed = send_seed
        self._stopping = stopping
        self._redact = Redactor(api_key)
        # The httpx the SDK uses (httpx, or httpx2 for openai 3), found from its own client class.
        base = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client"
                    and c.__module__.split(".")[0].startswith("httpx"))
        http = importlib.import_module(base.__module__.split(".")[0])
        self._http_errors = http
        try:
            self._http_client = openai.DefaultHttpxClient(
                timeout=http.Timeout(settings.timeout), follow_redirects=False,
                limits=http.Limits(max_connections=max(settings.concurrency, 10),
                                   max_keepalive_connections=max(settings.concurrency, 10)),
                headers={"Accept-Encoding": "gzip, deflate"}, event_hooks={"response": [_decoding_hook(http)]})
            self._client = openai.OpenAI(api_key=api_key or "no-key", base_url=settings.base_url, max_retries=0,
                                         timeout=settings.timeout, http_client=self._http_client)
        except (ValueError, TypeError, http.InvalidURL) as err:
            raise InputError(f"{shown_url(settings.base_url)!r} is no URL a request can go to ({err})",
                             argument="base_url") from None
        #: Whether every connection pool is bounded (a test fails when an httpx release moves them).
        self.bounded = _bound_transports(self._http_client) > 0

    def close(self) -> None:
        self._client.close()

    def __call__(self, call: Call) -> Reply:
        openai = self._openai
        settings = self._settings
        options: dict = {"model": settings.model, "messages": [dict(m) for m in call.messages],
                         "temperature": settings.temperature}
        if settings.max_tokens is not None:
            options["max_tokens"] = settings.max_tokens
        if self._send_seed:
            options["seed"] = call.sample
        _current.watch = Watch(time.monotonic() + settings.timeout, self._stopping)
        try:
            raw = self._client.chat.completions.with_raw_response.create(**options)
            body = raw.http_response.content
        except openai.APITimeoutError:
            raise Transient("timeout", f"no answer within {settings.timeout:g} s") from None
        except openai.APIConnectionError as err:
            raise self._failure(err.__cause__ or err) from None
        except openai.APIStatusError as err:
            raise self._status_failure(err) from None
        except (Abandoned, _TooLarge, RecursionError, ValueError, TypeError, UnicodeError) as err:
            raise self._failure(err) from None
        finally:
            _current.watch = None
        return parse_completion(body, self._redact)

    def _failure(self, err: BaseException) -> Exception:
        if isinstance(err, Abandoned):
            return err
        if isinstance(err, _TooLarge):
            return Transient("malformed_response", f"malformed answer: {err}")
        if isinstance(err, self._http_errors.TimeoutException):
            return Transient("timeout", f"no answer within {self._settings.timeout:g} s")
        if isinstance(err, (RecursionError, ValueError, TypeError, UnicodeError)):
            # A body the SDK could not take apart (JSON nested past Python's limit, a proxy's error page).
            said = server_text(str(err) or type(err).__name__, self._redact, 120)
            return Transient("malformed_response", f"malformed answer: {said}")
        detail = str(err) or type(err).__name__
        return Transient("connection", f"connection failed: {server_text(detail, self._redact)}")

    def _status_failure(self, err: Any) -> Exception:
        status = err.status_code
        message = f"HTTP {status}: {server_text(_error_text(err), self._redact)}"
        headers = err.response.headers
        if status == 429:
            return Transient("rate_limited", message, retry_after_seconds(headers.get("retry-after")))
        if status >= 500:
            return Transient("server_error", message, retry_after_seconds(headers.get("retry-after")))
        if status in (408, 409):
            return Transient("server_error", message)
        return Fatal("refused_request", message)
