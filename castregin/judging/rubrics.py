"""The criteria castregin judges and their rubrics: one catalogue for the judging pages, the crowd tasks and the
model's prompts (``rubrics.json`` beside this module, 0-3 scales), and one for the nugget work people do
(``nugget_rubrics.json``: importance, support, citation_support, 0-2 scales)."""

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


@functools.cache
def nugget_rubrics() -> dict[str, dict]:
    """The rubric of each label people give in nugget tasks, as :func:`rubrics` (levels from 0)."""
    return json.loads(resources.files(__package__).joinpath("nugget_rubrics.json").read_text(encoding="utf-8"))


def rubric(name: str) -> dict:
    """The rubric of a criterion of either catalogue."""
    return rubrics().get(name) or nugget_rubrics()[name]


def check_criteria(criteria: Sequence[str]) -> list[str]:
    """The criteria, each one with a rubric, none twice; else an :class:`InputError`."""
    distinct_criteria(criteria)
    known = rubrics()
    for name in criteria:
        if name not in known:
            raise InputError(f"unknown criterion {name!r}; the judging rubrics cover {', '.join(known)}",
                             argument="criteria")
    return list(criteria)
