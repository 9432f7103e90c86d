"""The options of every command that calls a model (``judge``, ``nuggets``, ``play``), defined once, their
ranges from :data:`castregin.limits.ENDPOINT_BOUNDS` (the table :meth:`castregin.llm.EndpointSettings.check`
reads), and the progress bars of their calls, turns and episodes.

    @main.command()
    @endpoint_options
    def nuggets_assign(..., **endpoint):
        settings = EndpointSettings(**endpoint_settings(endpoint))

:func:`endpoint_option` gives one of them (a command that orders its options itself, or words one
option's help its own way).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..limits import ENDPOINT_BOUNDS
from .options import FiniteFloat, OutputPath, option_group

#: The endpoint options in the order ``--help`` lists them: (flags, click's keywords).
_OPTIONS: dict[str, dict[str, Any]] = {
    "model": {"required": True, "metavar": "NAME", "help": "The model's name as the endpoint knows it."},
    "base_url": {"required": True, "metavar": "URL",
                 "help": "The OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama), "
                         "http://localhost:8000/v1 (vLLM), https://api.openai.com/v1."},
    "api_key_env": {"default": "OPENAI_API_KEY", "show_default": True, "metavar": "VAR",
                    "help": "The environment variable holding the API key (never written anywhere); unset: no key, "
                            "as local servers need none."},
    "temperature": {"default": 0.0, "show_default": True, "metavar": "T",
                    "help": "Sampling temperature sent with every call (0: the model's most likely answer)."},
    "max_tokens": {"default": None, "metavar": "N",
                   "help": "Longest answer asked for (default: the endpoint's own limit)."},
    "concurrency": {"default": 4, "show_default": True, "metavar": "N", "help": "Calls in flight at once."},
    "timeout": {"default": 120.0, "show_default": True, "metavar": "SECONDS",
                "help": "Longest one request may take, to the last byte of its answer; then it is retried."},
    "max_retries": {"default": 5, "show_default": True, "metavar": "N",
                    "help": "Retries of a call after a 429, a 5xx, a timeout or a malformed answer; waits as the "
                            "server's Retry-After says, else 1, 2, 4... seconds (--retry-wait)."},
    "retry_wait": {"default": 1.0, "show_default": True, "metavar": "SECONDS",
                   "help": "The first backoff wait, doubled at each retry (at most 60 s)."},
    "max_requests": {"default": None, "metavar": "N",
                     "help": "Send at most N requests (retries count); what was answered is written and a later "
                             "run goes on from there."},
    "price_in": {"default": 0.0, "show_default": True, "metavar": "USD",
                 "help": "Price of a million prompt tokens, for the cost estimate."},
    "price_out": {"default": 0.0, "show_default": True, "metavar": "USD",
                  "help": "Price of a million completion tokens, for the cost estimate."},
}


def bounded_type(name: str) -> click.ParamType:
    """The click type of an endpoint setting, its range from :data:`castregin.limits.ENDPOINT_BOUNDS`."""
    low, high, whole = ENDPOINT_BOUNDS[name]
    if whole:
        return click.IntRange(min=int(low), max=None if high is None else int(high))
    return FiniteFloat(min=low, max=high)


def endpoint_option(name: str, **overrides: Any) -> Callable:
    """The option of the endpoint setting ``name`` (``"concurrency"``...), ``overrides`` replacing click's
    keywords (a command's own ``help``)."""
    keywords = {**_OPTIONS[name], **overrides}
    if name in ENDPOINT_BOUNDS:
        keywords.setdefault("type", bounded_type(name))
    return click.option("--" + name.replace("_", "-"), name, **keywords)


def endpoint_options(function: Callable) -> Callable:
    """Every endpoint option, in :data:`_OPTIONS`' order; the command receives them as keyword arguments."""
    return option_group(*(endpoint_option(name) for name in _OPTIONS))(function)


def endpoint_settings(params: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :class:`castregin.llm.EndpointSettings` among a command's parameters."""
    return {name: params[name] for name in _OPTIONS if name in params}


def progress_bars(description: str, unit: str, postfix: Callable[[], Callable[..., str | None]] | None = None,
                  ) -> tuple[Callable, Callable[[], None]]:
    """Progress bars on standard error (when it is a terminal): ``(factory, close)``. ``factory(total)`` starts a
    bar of ``total`` units and returns the callback told of each one done (with whatever the caller passes:
    a reply, an outcome...); ``postfix()``, once per bar, gives what turns those arguments into the text after
    the bar (None: leave it as it is). ``close()`` closes every bar started."""
    from tqdm import tqdm

    bars: list = []

    def factory(total: int) -> Callable:
        bar = tqdm(total=total, unit=unit, desc=description, disable=None, dynamic_ncols=True)
        bars.append(bar)
        text_of = postfix() if postfix is not None else None

        def done(*settled: Any) -> None:
            text = text_of(*settled) if text_of is not None else None
            if text is not None:
                bar.set_postfix_str(text, refresh=False)
            bar.update(1)

        return done

    def close() -> None:
        for bar in bars:
            bar.close()

    return factory, close


def call_progress(description: str, cost: Callable[[int, int], float]) -> tuple[Callable, Callable[[], None]]:
    """A progress bar of calls showing tokens and the running cost (:func:`progress_bars`), its factory as
    :meth:`castregin.llm.Client.run` takes it."""

    def tokens_and_cost() -> Callable[[Any], str | None]:
        tokens = {"in": 0, "out": 0}

        def text(reply: Any) -> str | None:
            if reply is None:
                return None
            tokens["in"] += reply.prompt_tokens
            tokens["out"] += reply.completion_tokens
            return f"tokens {tokens['in']}+{tokens['out']}, ${cost(tokens['in'], tokens['out']):.4f}"

        return text

    return progress_bars(description, "call", tokens_and_cost)


def check_cache_option(cache_path: str | None) -> None:
    """``--cache -`` is a usage error: the answer cache is a file, never standard output."""
    if cache_path == "-":
        raise click.BadParameter("the cache is a file, not standard output", param_hint="--cache")


def kept_saying(close_bars: Callable[[], None]) -> Callable[[str, int], None]:
    """The ``kept`` callback of a model run: closes the progress bars, then says how many answers the stopped run
    kept in its cache and that running the command again goes on."""
    def kept(path: str, stored: int) -> None:
        close_bars()
        click.echo(f"castregin: the answers received so far are kept in {path} ({stored} in this "
                   "run); run the same command again to go on", err=True)

    return kept


#: The endpoint options a nugget command takes after its own: the key's variable, sampling, calls, budget,
#: price, and the answer cache.
model_options = option_group(
    endpoint_option("api_key_env"), endpoint_option("temperature"), endpoint_option("max_tokens"),
    endpoint_option("concurrency"), endpoint_option("timeout"), endpoint_option("max_retries"),
    endpoint_option("retry_wait"),
    endpoint_option("max_requests", help="Send at most N requests (retries count); what is complete is "
                                         "written and a later run goes on from there."),
    endpoint_option("price_in"), endpoint_option("price_out"),
    click.option("--cache", "cache_path", type=OutputPath(), metavar="FILE",
                 help="The SQLite answer cache (default DIR/cache.sqlite); share it between runs and directories."))
