"""Judging pools (SPEC "Pools"): per turn, the union of every run's top items by the rank column."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..data import Qrels, Run, StratifiedQrels, is_judged, natural_key
from ..errors import InputError
from ..formats.trec import read_run


def add_to_pool(pool: dict[str, set[str]], run: Run, depth: int = 1) -> dict[str, set[str]]:
    """Add ``run``'s top ``depth`` items per turn (lowest rank column first, ties in file order) to ``pool``."""
    if depth < 1:
        raise InputError("the depth must be at least 1", argument="depth")
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


def keep_turns(pool: Mapping[str, Iterable[str]], turns: Iterable[str],
               turns_source: str = "the turn list") -> tuple[dict, str | None]:
    """``pool`` with only the listed ``turns``, and a warning naming the pooled turns left out (or None).

    A run converted without the official turn list may pool a turn that no topic holds, for which
    no judging task can be made: ``pool --turns`` and ``tasks --turns`` keep the listed turns. A
    pool left with no turn is an :class:`InputError`.
    """
    listed = set(turns)
    kept = {turn: items for turn, items in pool.items() if turn in listed}
    left_out = sorted((turn for turn in pool if turn not in listed), key=natural_key)
    if pool and not kept:
        raise InputError(f"none of the {len(pool)} pooled turns is in {turns_source} (the pool's look like "
                         f"{next(iter(pool))!r}); nothing written")
    if not left_out:
        return kept, None
    shown = ", ".join(left_out[:3]) + (", ..." if len(left_out) > 3 else "")
    return kept, (f"{len(left_out)} pooled turn{'s' if len(left_out) != 1 else ''} not in {turns_source} "
                  f"left out: {shown}")


def keep_run_turns(pool: Run, turns: Iterable[str],
                   turns_source: str = "the turn list") -> tuple[Run, str | None]:
    """:func:`keep_turns` on a pool read as a run (its scores and rank column)."""
    kept, left_out = keep_turns(pool.scores, turns, turns_source)
    # A run made in Python may have no rank column.
    return Run(pool.tag, kept, {turn: pool.ranks[turn] for turn in kept if turn in pool.ranks}, pool.source), left_out


def without_judged(pool: Run, qrels: Iterable[Qrels]) -> tuple[Run, int]:
    """``pool`` without the (turn, item) pairs any of ``qrels`` labels, and how many pairs it left out.

    A label >= 0 is a judgment; a label below 0 is "in the pool but unjudged", a hole still to judge (as
    ``qrels merge`` fills it). A turn left with no item is left out; ranks stay the pool's.
    """
    judged: set[tuple[str, str]] = set()
    for one in qrels:
        judged.update((turn, item) for turn, items in one.labels.items() for item, label in items.items()
                      if is_judged(label))
    if not judged:
        return pool, 0
    kept = {turn: {item: score for item, score in items.items() if (turn, item) not in judged}
            for turn, items in pool.scores.items()}
    kept = {turn: items for turn, items in kept.items() if items}
    ranks = {turn: {item: pool.ranks.get(turn, {}).get(item, 0) for item in items} for turn, items in kept.items()}
    left_out = sum(len(items) for items in pool.scores.values()) - sum(len(items) for items in kept.values())
    return Run(pool.tag, kept, ranks, pool.source, pool.last_tag), left_out


def pool_statistics(runs: Sequence[Run], names: Sequence[str], depth: int = 1,
                    pool: dict[str, set[str]] | None = None) -> dict:
    """What each run brought into a pool: sizes per turn, contributions, unique ones, overlaps.

    A run contributes the (turn, item) pairs of its top ``depth`` by the rank column that are in the
    pool (``pool``, or else the pool of ``runs`` at ``depth``); a contribution is unique when no other
    run contributes it. Returns ``{"turns": [{"turn", "pool"}], "runs": [{"run", "contributed",
    "unique", "pool_share"}], "overlap": {run: {run: shared pairs}}}``, turns in natural order.
    """
    if depth < 1:
        raise InputError("the depth must be at least 1", argument="depth")
    pool = pool_runs(runs, depth) if pool is None else pool
    tops = [{(turn, item) for turn, items in pool_runs([run], depth).items() for item in items
             if item in pool.get(turn, ())} for run in runs]
    size = sum(len(items) for items in pool.values())
    rows = []
    for index, (name, top) in enumerate(zip(names, tops, strict=True)):
        others = set().union(*(t for j, t in enumerate(tops) if j != index))
        rows.append({"run": name, "contributed": len(top), "unique": len(top - others),
                     "pool_share": len(top) / size if size else 0.0})
    overlap = {a: {b: len(tops[i] & tops[j]) for j, b in enumerate(names)} for i, a in enumerate(names)}
    turns = [{"turn": turn, "pool": len(pool[turn])} for turn in sorted(pool, key=natural_key)]
    return {"turns": turns, "runs": rows, "overlap": overlap, "pool": size, "depth": depth}


@dataclasses.dataclass
class BuiltPool:
    """What ``castregin pool build`` writes and says: ``pool`` (turn -> the items to judge; with a strategy, in the
    order to judge them) of the turns kept, and
    ``left_out``, the warning naming the turns the turn list left out (or None). With a sample: ``stratified``,
    every pooled item of those turns with its stratum, labelled from the judgments given
    (:func:`castregin.formats.strata.stratified`), ``unjudged``, the sampled items they lack, and ``statistics``
    per stratum."""

    pool: dict[str, Iterable[str]]
    left_out: str | None = None
    stratified: StratifiedQrels | None = None
    unjudged: int = 0
    statistics: list[dict] = dataclasses.field(default_factory=list)


def build_pool(runs: Sequence[str | os.PathLike | Run], depth: int | None = 1, *,
               turns: Iterable[str] | None = None, turns_source: str = "the turn list", strata=None, seed: int = 0,
               strategy: str | None = None, budget: int | None = None, judged: Qrels | None = None,
               rel_level: int = 2, progress: Callable[[Iterable], Iterable] | None = None) -> BuiltPool:
    """The judging pool of ``runs`` (run files, or :class:`Run` with a rank column), one of three kinds:

    - the union of each run's top ``depth`` items (files are read one at a time; ``progress`` wraps them);
    - with ``strata`` (:func:`castregin.track.sampling.parse_strata`'s, or its text), a seeded stratified sample
      (:func:`castregin.track.sampling.sample_pool`), and the stratified qrels of the pool labelled from
      ``judged``;
    - with ``strategy`` and ``budget``, the next items to judge in the strategy's order
      (:func:`castregin.track.sampling.adaptive_pool`, within each run's top ``depth``, None: all), ``judged``
      the labels so far.

    ``turns`` keeps the listed turns only (:func:`keep_turns`, ``turns_source`` naming the list).
    """
    from .sampling import adaptive_pool, sample_pool

    def listed(pool: Mapping[str, Iterable[str]]) -> tuple[dict, str | None]:
        return keep_turns(pool, turns, turns_source) if turns is not None else (dict(pool), None)

    def run_list() -> list[Run]:
        return [run if isinstance(run, Run) else read_run(run) for run in runs]

    if strategy is not None:
        if budget is None:
            raise InputError("give the budget of judgments a turn with the strategy", argument="budget")
        chosen = adaptive_pool(run_list(), strategy, budget, judged.labels if judged else None, rel_level, depth)
        return BuiltPool(*listed(chosen))
    if strata is not None:
        from ..formats.strata import stratified

        sample = sample_pool(run_list(), strata, seed)
        kept, left_out = listed(sample.sampled)
        strata_of = {turn: items for turn, items in sample.strata.items() if turn in kept}
        qrels, unjudged = stratified(strata_of, kept, judged)
        # The statistics of what is written: the turns kept.
        statistics = dataclasses.replace(sample, strata=strata_of, sampled=kept).statistics()
        return BuiltPool(kept, left_out, qrels, unjudged, statistics)
    # Files read one at a time: the memory of one run and the pool.
    given = (run if isinstance(run, Run) else read_run(run) for run in (progress or iter)(list(runs)))
    return BuiltPool(*listed(pool_runs(given, depth or 1)))
