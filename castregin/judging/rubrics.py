"""The criteria castregin judges and their 0-3 rubrics: one catalogue for the judging pages, the crowd tasks
and the model's prompts (``rubrics.json`` beside this module)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from importlib import resources

from ..errors import InputError
from ..labels import distinct_criteria


@functools.cache
def rubrics() -> dict[str, dict]:
    """The rubric of every known criterion: ``{name: {"title", "question", "levels": [4 texts]}}``."""
    return json.loads(resources.files(__package__).joinpath("rubrics.json").read_text(encoding="utf-8"))


def check_criteria(criteria: Sequence[str]) -> list[str]:
    """The criteria, each one with a rubric, none twice; else an :class:`InputError`."""
    distinct_criteria(criteria)
    known = rubrics()
    for name in criteria:
        if name not in known:
            raise InputError(f"unknown criterion {name!r}; the judging rubrics cover {', '.join(known)}",
                             argument="criteria")
    return list(criteria)
