"""A model's answers about nuggets, read strictly, and the one way the nugget commands call a model.

**Reading an answer.** The model answers with a list: nuggetizer's prompts ask for "a Pythonic list"
(``['support', 'not_support']``), castregin's contract is a JSON list on the answer's final line
(``["support", "not_support"]``). :func:`parse_list` reads the answer as nuggetizer does first (the whole
answer, ```` ```python ```` fences removed, as a Python literal: every answer nuggetizer reads, castregin reads
alike), else its final non-empty line (a JSON list or a Python literal): reasoning may come before the list.
Anything else is unparseable, never guessed. :func:`parse_labels` adds what a list of labels must be: one
string per nugget of the prompt, each one of the allowed labels (case and surrounding spaces aside, as
nuggetizer lowercases them). A list of the wrong length is unparseable, as nuggetizer 0.0.6 has it
(``zip(..., strict=True)``; 0.0.5 silently dropped the nuggets past a short list's end).

**Calling the model.** Every nugget command (through the stage function of each:
:func:`castregin.nuggets.create.create_stage`, :func:`~castregin.nuggets.assign.assign_stage`,
:func:`~castregin.nuggets.citations.cite_stage`) runs the model as every command does,
:func:`castregin.llm.session.model_run`: each step's refusals before the next step's work, the endpoint's
settings, the prompts (a user's template file is an input), the outputs (none an input, the answer cache among
them), the API key, the inputs, then the work through one :class:`castregin.llm.Client` (cache, retries,
budget, deadline, key handling): a run stopped by an exception says how many answers it stored (``kept``), and
a failure leaves no directory it made. :func:`call_log` is what every run log says about the endpoint and the
calls.
"""

from __future__ import annotations

import ast
import json
import threading
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..formats.llm_cache import CachedAnswer
from ..llm import Client, public_url
from ..llm.session import cost_log, nothing_answered, this_run_log

#: Unparseable answers a run log shows (the count is always whole).
EXAMPLES_SHOWN = 20
_FENCES = ("```python", "```")
# ast.literal_eval warns (SyntaxWarning) about an escape such as "\d" in a model's text; the warnings filter is
# process-wide, so the parse that silences it holds a lock.
_LITERAL_LOCK = threading.Lock()


def _literal(text: str) -> Any:
    """``text`` as JSON, else as a Python literal; None when it is neither."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    with _LITERAL_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None


def parse_list(content: str | None) -> list | None:
    """The list an answer gives: the whole answer (fences removed) as nuggetizer reads it, else its final
    non-empty line; None when neither is a list."""
    if not content:
        return None
    cleaned = content
    for fence in _FENCES:
        cleaned = cleaned.replace(fence, "")
    cleaned = cleaned.strip()
    lines = [line.strip() for line in cleaned.splitlines() if line.strip()]
    for text in dict.fromkeys([cleaned, *lines[-1:]]):
        value = _literal(text)
        if isinstance(value, list):
            return value
    return None


def parse_labels(content: str | None, count: int, allowed: Sequence[str]) -> list[str] | None:
    """``count`` labels from an answer, each one of ``allowed`` (lowercased, spaces around removed); None when
    the answer holds no such list (of another length, or with another label)."""
    found = parse_list(content)
    if found is None or len(found) != count or not all(isinstance(label, str) for label in found):
        return None
    labels = [label.strip().lower() for label in found]
    return labels if all(label in allowed for label in labels) else None


def parse_texts(content: str | None) -> list[str] | None:
    """The nugget texts of an answer: a list of non-empty strings, as given; None otherwise."""
    found = parse_list(content)
    if found is None or not all(isinstance(text, str) and text.strip() for text in found):
        return None
    return found


def last_line(answer: CachedAnswer) -> str:
    """What a run log shows of an unparseable answer: its last line (or the refusal), at most 200 characters."""
    lines = (answer.content or "").strip().splitlines()
    return (lines[-1] if lines else (answer.refusal or ""))[:200]


# --- calling the model -----------------------------------------------------------------------------------------


def nothing_complete(client: Client, answered: int, what: str) -> str:
    """Why a run whose calls were partly answered has nothing complete to write, in one line."""
    if not answered:
        return nothing_answered(client)
    stats = client.stats
    reason = ("the budget of --max-requests is spent" if stats.budget_spent else
              f"{stats.failed_calls} call(s) failed after every retry" if stats.failed_calls else
              "calls were not answered")
    first = f"; the first error: {stats.first_error}" if stats.first_error and not stats.budget_spent else ""
    return (f"no {what} is complete yet ({answered} call(s) answered and kept in the cache; {reason}{first}); "
            "run the same command again to go on; nothing written")


def answer_tokens(answers: Iterable[CachedAnswer]) -> tuple[int, int]:
    """The prompt and completion tokens of the answers used (each distinct answer once)."""
    distinct = {answer.key: answer for answer in answers}.values()
    return sum(a.prompt_tokens for a in distinct), sum(a.completion_tokens for a in distinct)


def call_log(client: Client, prompts: Mapping[str, Any], calls: int, answered: int, tokens: tuple[int, int],
             started: float) -> tuple[dict, dict]:
    """What every nugget run log says about the endpoint (first part) and about the calls (second part, to go
    after the command's own numbers): the model, the endpoint without credentials, the key's variable (never
    the key), the prompts (``describe()``), the parameters; the calls and answers, tokens and cost of every
    answer used, and what this invocation did (requests, cache hits, failures by kind, budget)."""
    settings = client.settings
    head = {"model": settings.model, "endpoint": public_url(settings.base_url), "api_key_env": settings.api_key_env,
            "prompt": {task: prompt.describe() for task, prompt in prompts.items()},
            "parameters": client.parameters}
    tail = {
        "calls": calls,
        "answered": answered,
        "complete": answered == calls,
        "tokens": {"prompt": tokens[0], "completion": tokens[1]},
        "cost": cost_log(settings, *tokens),
        "this_run": this_run_log(client, time.monotonic() - started),
    }
    return head, tail
