"""A command's run with a model, the same for every command that calls one (``judge``, ``nuggets``, ``play``).

:func:`model_run` is that run, once: every check in its order, then the work with the client. Its steps, each
step's refusals before the next step's work: the endpoint's settings, the prompts, :func:`check_run` (what is
refused before any input is read: the outputs, none an input, the answer cache among them, and the key), the
inputs, the output directory, then :func:`model_session`, which opens the one :class:`Client` on the answer
cache, its directories made first; leaving it by an exception says how many answers the run stored (``kept``)
and removes the directories it made that are still empty. The run log's blocks that every command
writes alike are :func:`cost_log` (the tokens of the answers used, priced) and :func:`this_run_log` (what this
invocation asked the endpoint); :func:`nothing_answered` is the one line of a run that had calls to make and
got no answer at all.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..errors import InputError, InputWarning
from .client import Client
from .settings import EndpointSettings, api_key, check_api_key, key_sent_in_clear

Settings = TypeVar("Settings", bound=EndpointSettings)
Data = TypeVar("Data")
Result = TypeVar("Result")


class Prompt(Protocol):
    """What a run needs to know of a prompt: a user's template file (not ``builtin``) is an input, at ``source``."""

    @property
    def source(self) -> str: ...

    @property
    def builtin(self) -> bool: ...


def _nothing() -> Any:
    return ()


def model_run(settings: EndpointSettings, cache_file: str | os.PathLike,
              work: Callable[[Client, Sequence[Any], Data], Result], *,
              prompts: Callable[[], Sequence[Prompt]] = _nothing, read: Callable[[], Data] = _nothing,
              outputs: Iterable[str | os.PathLike] = (), inputs: Iterable[str | os.PathLike] = (),
              out_dir: str | None = None, purpose: str, seeds: bool = False,
              kept: Callable[[str, int], None] | None = None) -> Result:
    """``work(client, prompts(), read())`` with the client of one run on ``cache_file``, after every check (see
    the module), in this order: the settings, ``prompts()`` (each a :class:`Prompt`: a user's template file is
    an input too), the outputs and the key (:func:`check_run`: ``outputs`` the files the caller will write,
    ``inputs`` the files it reads), ``read()`` (the inputs, and whatever must be refused before the cache is
    opened), ``out_dir`` (a directory that must not be a file), then :func:`model_session` (``purpose``,
    ``seeds`` and ``kept`` as it takes them).
    """
    settings = settings.check()
    loaded = prompts()
    templates = [prompt.source for prompt in loaded if not prompt.builtin]
    settings = check_run(settings, cache_file, outputs=outputs, inputs=[*inputs, *templates])
    data = read()
    # For a caller whose outputs are not all in out_dir: one in a directory that is a file is refused above.
    _check_out_dir(out_dir)
    with model_session(settings, cache_file, purpose=purpose, seeds=seeds, kept=kept) as client:
        return work(client, loaded, data)


def check_run(settings: Settings, cache_file: str | os.PathLike, *, outputs: Iterable[str | os.PathLike] = (),
              inputs: Iterable[str | os.PathLike] = ()) -> Settings:
    """The checked settings, after refusing outputs that are inputs or each other (the cache with them) and a key
    no server takes."""
    from ..formats.output import check_outputs

    settings = settings.check()
    check_outputs([*outputs, cache_file], list(inputs))
    key = api_key(settings.api_key_env)
    check_api_key(key, settings.api_key_env)
    host = key_sent_in_clear(settings.base_url) if key is not None else None
    if host is not None:
        # --api-key-env defaults to OPENAI_API_KEY, often set for another purpose than this endpoint.
        warnings.warn(f"the API key in {settings.api_key_env} is sent to {host} over plain http://, readable on the "
                      "way; use https://, or name an unset variable in --api-key-env if the endpoint needs no key",
                      InputWarning, stacklevel=2)
    return settings


def _check_out_dir(out_dir: str | None) -> None:
    """Refuse an output directory that is a file."""
    if out_dir is not None and os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError("exists and is not a directory; choose a directory for --out-dir", source=out_dir)


@contextmanager
def model_session(settings: EndpointSettings, cache_file: str | os.PathLike, *, purpose: str, seeds: bool = False,
                  kept: Callable[[str, int], None] | None = None) -> Iterator[Client]:
    """The client of one run, on the answer cache at ``cache_file`` (its missing directories made).

    Leaving the block by an exception tells ``kept(path, n)`` the answers the run stored (when it stored any),
    then removes the directories made for a cache that was removed: nothing received, nothing left.
    """
    from ..formats.output import make_directories, remove_empty

    made = make_directories(Path(os.path.abspath(cache_file)).parent, str(cache_file))
    try:
        client = Client(settings, cache_file, seeds=seeds, purpose=purpose)
        try:
            with client:
                yield client
        except BaseException:
            if kept is not None and client.stored:
                kept(client.path, client.stored)
            raise
    except BaseException:
        remove_empty(made)
        raise


def cost_log(settings: EndpointSettings, prompt_tokens: int, completion_tokens: int) -> dict:
    """The run log's ``cost``: what the tokens cost, and the prices per million tokens."""
    return {"usd": round(settings.cost(prompt_tokens, completion_tokens), 6),
            "price_in_per_million": settings.price_in, "price_out_per_million": settings.price_out}


def this_run_log(client: Client, seconds: float, *, cost: bool = False) -> dict:
    """The run log's ``this_run``: the requests this invocation sent, its new answers and those from the cache,
    failures by kind and the first one, the calls failed and not sent, the budget, the new answers' tokens (and
    with ``cost``, what they cost), and the seconds it took."""
    stats = client.stats
    log = {
        "requests": stats.requests,
        "new_answers": stats.answers,
        "from_cache": stats.from_cache,
        "failures": dict(sorted(stats.failures.items())),
        "first_failure": stats.first_error,
        "calls_failed": stats.failed_calls,
        "calls_not_sent": stats.unsent_calls,
        "budget_spent": stats.budget_spent,
        "tokens": {"prompt": stats.prompt_tokens, "completion": stats.completion_tokens},
    }
    if cost:
        log["cost_usd"] = round(client.cost(), 6)
    log["seconds"] = round(seconds, 3)
    return log


def nothing_answered(client: Client) -> str:
    """Why a run that had calls to make has no answer at all, in one line."""
    stats = client.stats
    parts = []
    if stats.failed_calls:
        parts.append(f"{stats.failed_calls} call(s) failed after every retry")
    if stats.unsent_calls:
        reason = "the budget of --max-requests is spent" if stats.budget_spent else "the endpoint answered none"
        parts.append(f"{stats.unsent_calls} not sent ({reason})")
    said = "; ".join(parts) or "no request was sent"
    first = f"; the first error: {stats.first_error}" if stats.first_error else ""
    return f"no call was answered ({said}){first}; nothing written"
