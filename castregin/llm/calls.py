"""One call to a model and what comes back: :class:`Call`, :class:`Reply`, the two kinds of failure, and
the strict reading of a chat completion's JSON (:func:`parse_completion`), where nothing a server sends
can become a traceback."""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

from ..limits import MAX_REPORTED_TOKENS
from .settings import Redactor

#: Longest wait a Retry-After header may ask for; a longer one is a server saying "not today".
MAX_RETRY_AFTER = 600.0


@dataclass(frozen=True)
class Call:
    """One call to make: its cache key, the chat messages, the sample's index (the request's ``seed`` when
    the client sends seeds). Made by :meth:`castregin.llm.Client.call`, which computes the key."""

    key: str
    messages: tuple[Mapping[str, str], ...]
    sample: int = 0


@dataclass(frozen=True)
class Reply:
    """What the endpoint answered to one call (every text with the key hidden)."""

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


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header's wait in seconds (a number or an HTTP date), ``None`` when absent or bad."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        seconds = moment.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def _malformed(problem: str) -> Transient:
    return Transient("malformed_response", f"malformed answer: {problem}")


def _text(value: object, where: str, redact: Redactor) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _malformed(f"{where} is {type(value).__name__}, not a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _malformed(f"{where} holds a lone surrogate (\\ud800-\\udfff), which is no Unicode text") from None
    return redact.answer(value)


def _tokens(usage: Mapping, name: str) -> int:
    value = usage.get(name)
    if value is None:
        return 0
    if type(value) is not int or not 0 <= value <= MAX_REPORTED_TOKENS:
        raise _malformed(f"usage.{name} is {json.dumps(value)[:40] if _jsonable(value) else type(value).__name__}, "
                         f"not a count of tokens (0 to {MAX_REPORTED_TOKENS:.0e})")
    return value


def _jsonable(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def parse_completion(body: bytes, redact: Redactor) -> Reply:
    """The :class:`Reply` in a chat completion's JSON body: ``choices[0].message`` (``content`` and
    ``refusal`` strings or null), ``choices[0].finish_reason`` and ``usage``'s token counts (0 when absent),
    each text with the key hidden (:meth:`Redactor.answer`). Anything else (no JSON, JSON nested past Python's
    limit, a message that is no object, a count that is no whole number from 0 to
    :data:`~castregin.limits.MAX_REPORTED_TOKENS`, text that is no Unicode) is a ``malformed_response``:
    retried, never a traceback."""
    try:
        data = json.loads(body)
    except RecursionError:
        raise _malformed("JSON nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise _malformed(f"not JSON ({redact(str(err))[:80]})") from None
    if not isinstance(data, dict):
        raise _malformed(f"the body is {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _malformed("the answer has no choices[0]")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _malformed(f"choices[0].message is {type(message).__name__}, not an object")
    content = _text(message.get("content"), "choices[0].message.content", redact)
    refusal = _text(message.get("refusal"), "choices[0].message.refusal", redact)
    finish_reason = _text(choices[0].get("finish_reason"), "choices[0].finish_reason", redact)
    usage = data.get("usage")
    if usage is None:
        usage = {}
    if not isinstance(usage, dict):
        raise _malformed(f"usage is {type(usage).__name__}, not an object")
    return Reply(content, refusal, finish_reason, _tokens(usage, "prompt_tokens"), _tokens(usage, "completion_tokens"))
