"""The judge pipeline, once: :func:`judge_pool`, called by ``castregin judge`` and :func:`castregin.api.judge`.

The sequence is the one run of every command that calls a model (:func:`castregin.llm.session.model_run`), each
step's refusals before the next step's work: the settings, the criteria, the prompt (a template file is an
input), the outputs (none an input, the cache among them), the key, the pool, the turns kept, the pairs
already judged left out, the tasks, their prompts rendered (:func:`castregin.judging.llm.judge_chats`), the
output directory, then the calls (:func:`castregin.judging.llm.judge_tasks`) with the client on the cache (its
directories made, and on a failure those still empty removed). The callers only turn their arguments into
:class:`JudgeInputs` and render what comes back.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputWarning
from ..llm import Reply
from .llm import JudgeSettings, LLMJudgment, judge_chats, judge_tasks
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
    directory that must not be a file; ``progress`` as :func:`~castregin.judging.llm.judge_tasks` and ``kept`` as
    :func:`~castregin.llm.session.model_run` take them. Warnings (turns the pool lacks) are :class:`InputWarning`.
    """
    from ..llm.session import model_run
    from ..track.pool import keep_run_turns, without_judged
    from .tasks import build_tasks

    settings = settings.check()  # its samples say whether the calls send seeds
    template: Any = None

    def prompts():
        nonlocal criteria, template
        criteria = check_criteria(criteria)
        template = load_prompt(criteria)
        return [template]

    def read():
        pooled = inputs.pool()
        if inputs.turns is not None:
            listed, turns_source = inputs.turns()
            pooled, left_out = keep_run_turns(pooled, listed, turns_source)
            if left_out:
                warnings.warn(left_out, InputWarning, stacklevel=4)
        pooled, already = without_judged(pooled, inputs.only_unjudged())
        if already and not pooled.scores:
            # Legitimate (a rerun after the last labels came in), but empty outputs should not pass unnoticed.
            warnings.warn(f"nothing left to judge: the {already} pooled pairs are all judged in the --only-unjudged "
                          "qrels; the outputs are empty", InputWarning, stacklevel=4)
        task_set = build_tasks(pooled, inputs.bank(), inputs.topics(), criteria)
        return already, judge_chats(task_set.tasks, criteria, template)

    def work(client, _prompts, data):
        already, chats = data
        return judge_tasks(client, chats, already=already, progress=progress)

    return model_run(settings, cache_file, work, prompts=prompts, read=read, outputs=outputs, inputs=inputs.paths,
                     out_dir=out_dir, purpose="judge", seeds=settings.samples > 1, kept=kept)
