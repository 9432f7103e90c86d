"""What a model endpoint is, checked once: :class:`EndpointSettings`, the API key, and the texts of a server.

Nothing here imports the ``openai`` SDK or httpx: the commands check their settings, the base URL and the
key before they read an input, and ``castregin --help`` loads none of it.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import unicodedata
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from ..errors import InputError
from ..limits import ENDPOINT_BOUNDS, MIN_REDACTED_KEY

Settings = TypeVar("Settings", bound="EndpointSettings")


@dataclass(frozen=True)
class EndpointSettings:
    """A model behind an OpenAI-compatible endpoint, and how to call it (the commands' defaults).

    ``model`` as the endpoint knows it; ``base_url`` (``http://localhost:11434/v1``); ``api_key_env``, the
    environment variable holding the key (unset: no key); ``temperature`` and ``max_tokens`` (None: the
    endpoint's limit) are sent with every call and are part of its cache key; ``concurrency``: requests in
    flight at once; ``timeout``: the longest one request may take, from its start to the last byte of its
    answer (then it is retried); ``max_retries`` after a transient failure, the first wait ``retry_wait``
    seconds, doubled at each retry; ``max_requests``: a budget of requests (retries count; None: no
    budget); ``price_in``/``price_out``: US dollars per million prompt/completion tokens, for the cost.
    Every range is :data:`castregin.limits.ENDPOINT_BOUNDS`.
    """

    model: str
    base_url: str
    api_key_env: str = "OPENAI_API_KEY"
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

    def check(self: Settings) -> Settings:
        """Refuse, as the commands' options do, a value out of its range (an :class:`InputError` naming it),
        and a base URL no request can go to.

        Returns the settings with plain ``int`` and ``float`` numbers (a ``numpy.int64`` is taken, but JSON,
        the cache's keys, has no such type).
        """
        plain: dict[str, Any] = {}
        for name, (low, high, whole) in ENDPOINT_BOUNDS.items():
            value = getattr(self, name)
            if value is None and name in ("max_tokens", "max_requests"):
                continue
            plain[name] = check_number(value, name, low, high, whole)
        for name in ("model", "base_url", "api_key_env"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise InputError(f"expected a non-empty string, got {value!r}", argument=name)
        if not self.model.strip() or any(ch < " " or ch == "\x7f" for ch in self.model):
            # A model's name names the results (play's MODEL-tT directory) and the tables: a newline or an
            # escape code there is a pasted mistake, never a model.
            raise InputError(f"expected a model's name without control characters (newline, tab, escape), got "
                             f"{self.model!r}", argument="model")
        check_base_url(self.base_url)
        return replace(self, **plain)

    def parameters(self) -> dict[str, object]:
        """What is sent with every call beside the messages, and changes an answer: part of each cache key."""
        parameters: dict[str, object] = {"temperature": self.temperature}
        if self.max_tokens is not None:
            parameters["max_tokens"] = self.max_tokens
        return parameters

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


def check_number(value: Any, name: str, low: float, high: float | None, whole: bool) -> int | float:
    """``value`` as a plain int (``whole``) or finite float within ``low`` .. ``high``; else an InputError."""
    kind = numbers.Integral if whole else numbers.Real
    # The bounds are compared before float(): a huge int overflows it (10**400).
    ok = (not isinstance(value, bool) and isinstance(value, kind) and _within(value, low, high)
          and (whole or _finite(value)))
    if not ok:
        span = f"{low} to {high}" if high is not None else f">= {low}"
        raise InputError(f"expected {'an integer' if whole else 'a finite number'} {span}, got {value!r}",
                         argument=name)
    return int(value) if whole else float(value)


def _within(value: Any, low: float, high: float | None) -> bool:
    return bool(low <= value and (high is None or value <= high))


def _finite(value: numbers.Real) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def check_base_url(url: str) -> None:
    """Refuse, in one line, a base URL no request can go to: not http(s), no host, a space or a control
    character in it, a port out of range, a bracket left open."""
    from urllib.parse import urlsplit

    def refuse(problem: str) -> InputError:
        return InputError(f"{problem}; give the endpoint's address, e.g. http://localhost:11434/v1",
                          argument="base_url")

    if any(character.isspace() or unicodedata.category(character) == "Cc" for character in url):
        raise refuse(f"{shown_url(url)!r} holds a space or a control character")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:  # "Invalid IPv6 URL", "Port out of range 0-65535"
        raise refuse(f"{shown_url(url)!r} is no URL ({err})") from None
    if parts.scheme.lower() not in ("http", "https"):
        said = f"the scheme {parts.scheme}://" if parts.scheme else "no scheme"
        raise refuse(f"{shown_url(url)!r} has {said}, not http:// or https://")
    if not parts.hostname:
        raise refuse(f"{shown_url(url)!r} names no host")
    if port == 0:
        raise refuse(f"{shown_url(url)!r}: port 0 is no port a server listens on")


def key_sent_in_clear(url: str) -> str | None:
    """The host of ``url`` when a key sent to it would cross a network unencrypted (plain ``http://`` to a
    host that is not this machine), else None."""
    import ipaddress
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".").lower()
    if parts.scheme.lower() != "http" or host == "localhost" or host.endswith(".localhost"):
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:  # a name, not an address
        pass
    return host


def shown_url(url: str) -> str:
    """``url`` as an error message may show it, whatever it holds: its credentials (``user:password@``) and
    its query and fragment (``?api-key=...``) as ``***``, on one line. Unlike :func:`public_url` it never
    fails, so that it can show the URL that :func:`check_base_url` refuses."""
    cut = re.search(r"[?#]", url)
    head, tail = (url[:cut.start()], url[cut.start()] + "***") if cut else (url, "")
    start = head.find("//")
    start = start + 2 if start >= 0 else 0
    end = head.find("/", start)
    at = head.rfind("@", start, end if end >= 0 else len(head))
    if at >= 0:
        head = head[:start] + "***" + head[at:]
    return printable(head + tail)


def public_url(url: str) -> str:
    """The endpoint's address without credentials, query or fragment (a key can hide there)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


# --- the API key -----------------------------------------------------------------------------------------------

def api_key(variable: str) -> str | None:
    """The key in the environment variable ``variable`` (None when unset or empty: no key)."""
    return os.environ.get(variable) or None


def check_api_key(key: str | None, variable: str) -> None:
    """Refuse, in one line that never shows it, a key no server takes: a character an HTTP header cannot
    carry (httpx takes printable ASCII only; anything else would fail every request as if the answers were
    malformed), or spaces around it or only spaces (a value pasted with its line's end)."""
    if key is None:
        return
    for position, character in enumerate(key, 1):
        if not " " <= character <= "~":
            raise InputError(f"the API key in {variable} holds a character an HTTP header cannot carry (character "
                             f"{position}: not printable ASCII); check the variable's value",
                             argument="api_key_env")
    if not key.strip():
        raise InputError(f"the API key in {variable} is only spaces; set the key, or unset the variable for an "
                         "endpoint that needs none", argument="api_key_env")
    if key != key.strip():
        where = "begins" if key[0] == " " else "ends"
        raise InputError(f"the API key in {variable} {where} with a space; check the variable's value",
                         argument="api_key_env")


class Redactor:
    """Hides a secret in every text received: ``***`` for the key (its ``Bearer`` form included).
    Called on error and diagnostic texts, it hides a key of any length; :meth:`answer`, for a model's
    answer, only a key of :data:`~castregin.limits.MIN_REDACTED_KEY` characters or more (a dummy key
    such as ``1`` would otherwise rewrite the answer itself)."""

    def __init__(self, secret: str | None):
        self.secret = secret or None

    def __call__(self, text: str) -> str:
        if self.secret is None or self.secret not in text:
            return text
        return text.replace(self.secret, "***")

    def answer(self, text: str) -> str:
        """``text``, a model's answer, with the key hidden when it is long enough to be a secret."""
        if self.secret is None or len(self.secret) < MIN_REDACTED_KEY:
            return text
        return self(text)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` on one line with nothing a terminal acts on: line breaks and tabs become spaces, other
    control characters (escape sequences, bidirectional overrides) their ``\\x..``/``\\u....`` escapes."""
    def escape(match: re.Match) -> str:
        character = match.group(0)
        if character in "\n\r\t\x0b\x0c\u2028\u2029\x85":
            return " "
        code = ord(character)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROL.sub(escape, text)


def server_text(text: str, redact: Redactor, limit: int = 200) -> str:
    """A server's text as castregin shows it: the key hidden (before the cut, so that no part of it shows),
    one line, escapes neutralised, at most ``limit`` characters."""
    shown = printable(redact(text))
    return shown if len(shown) <= limit else shown[:limit] + "..."
