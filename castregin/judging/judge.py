"""The judge pipeline, once: :func:`judge_pool`, called by ``castregin judge`` and :func:`castregin.api.judge`.

The sequence, each step's refusals before the next step's work: the settings, the criteria, the prompt,
the outputs (none an input, the cache among them), the key, the pool, the turns kept, the pairs
already judged left out, the tasks, the cache's directories, the calls (:func:`castregin.judging.llm.
judge_tasks`), and on a failure the directories made for a cache that was removed. The callers only
turn their arguments into :class:`JudgeInputs` and render what comes back.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, InputWarning
from ..llm import Reply
from .llm import JudgeSettings, LLMJudgment, judge_tasks
from .rubrics import check_criteria


def _nothing() -> Iterable:
    return ()


@dataclass
class JudgeInputs:
    """What to judge, each part read when its step comes (so that the command and the API refuse in one order).

    ``pool()`` the pooled run; ``bank()`` ``{item id: text}``; ``topics()`` the topics tree;
    ``only_unjudged()`` the qrels whose pairs are not judged again; ``turns()`` (None: all) the turn ids
    to keep and how to name where they come from; ``paths``: the input files, which no output may be.
    """

    pool: Callable[[], Any]
    bank: Callable[[], Mapping[str, str]]
    topics: Callable[[], Any]
    only_unjudged: Callable[[], Iterable] = _nothing
    turns: Callable[[], tuple[list[str], str]] | None = None
    paths: Sequence[str | os.PathLike] = field(default_factory=list)


def judge_pool(inputs: JudgeInputs, criteria: Sequence[str], load_prompt: Callable[[list[str]], Any],
               settings: JudgeSettings, cache_file: str, *, outputs: Sequence[str] = (), out_dir: str | None = None,
               progress: Callable[[int], Callable[[Reply | None], None]] | None = None,
               kept: Callable[[str, int], None] | None = None) -> LLMJudgment:
    """Judge a pool with a model: every step of ``castregin judge`` but writing its files.

    ``load_prompt(criteria)`` gives the prompt (:func:`castregin.render.llm.load_prompt`; a template file
    is then an input); ``outputs``: the files the caller will write, checked with the cache; ``out_dir``: a
    directory that must not be a file; ``progress`` and ``kept`` as :func:`~castregin.judging.llm.judge_tasks`
    takes them. Warnings (turns the pool lacks) are :class:`InputWarning`.
    """
    from ..formats.output import check_outputs, make_directories, remove_empty
    from ..llm import api_key, check_api_key
    from ..track.pool import keep_run_turns, without_judged
    from .tasks import build_tasks

    settings = settings.check()
    criteria = check_criteria(criteria)
    template = load_prompt(criteria)
    paths = [*inputs.paths, *([template.source] if not template.system else [])]
    # The cache with the outputs, in one check: neither an input nor another output.
    check_outputs([*outputs, cache_file], paths)
    check_api_key(api_key(settings.api_key_env), settings.api_key_env)
    pooled = inputs.pool()
    if inputs.turns is not None:
        listed, turns_source = inputs.turns()
        pooled, left_out = keep_run_turns(pooled, listed, turns_source)
        if left_out:
            warnings.warn(left_out, InputWarning, stacklevel=2)
    pooled, already = without_judged(pooled, inputs.only_unjudged())
    task_set = build_tasks(pooled, inputs.bank(), inputs.topics(), criteria)
    if out_dir is not None and os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError("exists and is not a directory; choose a directory for --out-dir", source=out_dir)
    made = make_directories(Path(os.path.abspath(cache_file)).parent, cache_file)
    try:
        return judge_tasks(task_set.tasks, criteria, template, settings, cache_file, already=already,
                           progress=progress, kept=kept)
    except BaseException:
        # Nothing received, nothing left: the directories made for a cache that was removed go too.
        remove_empty(made)
        raise
