"""Judging pools (SPEC "Pools"): per turn, the union of every run's top items by the rank column."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from ..data import Run
from ..formats.trec import format_pool, read_run


def add_to_pool(pool: dict[str, set[str]], run: Run, depth: int = 1) -> dict[str, set[str]]:
    """Add ``run``'s top ``depth`` items per turn (lowest rank column first, ties in file order) to ``pool``."""
    if depth < 1:
        raise ValueError("depth must be at least 1")
    for turn in run.turns:
        pool.setdefault(turn, set()).update(run.top_by_rank(turn, depth))
    return pool


def pool_runs(runs: Iterable[Run], depth: int = 1) -> dict[str, set[str]]:
    """The pool of several runs: turn -> the union of each run's top ``depth`` items by rank."""
    pool: dict[str, set[str]] = {}
    for run in runs:
        add_to_pool(pool, run, depth)
    return pool


def pool_files(paths: Iterable[str | os.PathLike], depth: int = 1,
               progress: Callable[[Iterable], Iterable] | None = None) -> dict[str, set[str]]:
    """:func:`pool_runs` over TREC run files, read one at a time (memory of one run plus the pool)."""
    paths = list(paths)
    return pool_runs((read_run(path) for path in (progress or iter)(paths)), depth)


def pool_text(paths: Iterable[str | os.PathLike], depth: int = 1) -> str:
    """The pool of TREC run files in the pool format (rank 1, score 0.0, ``dummytag``), sorted."""
    return format_pool(pool_files(paths, depth))
