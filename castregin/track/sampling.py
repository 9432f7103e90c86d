"""Fewer judgments for a pool: stratified samples (for inferred measures) and adaptive judging orders.

**Sampled pools.** The pool of a turn is cut into strata by the best rank any run gives an item (its
position in the run's order by the rank column): ``1-10:1,11-50:0.5,51-1000:10%`` pools every run's top
1000, judges every item some run ranks in its top 10, half of those first ranked 11-50 and a tenth of
the rest. A stratum's sample is drawn without replacement, seeded per (seed, turn, stratum), of
``ceil(rate x size)`` items (``#N`` instead of a rate: N items, or all when fewer). The strata are
numbered 1, 2, ... in the order given, as the stratified qrels of NIST's sample_eval.pl name them.

**Adaptive judging orders** (Losada, Parapar and Barreiro, "Feeling lucky? Multi-armed bandits for
ordering judgements in pooling-based evaluation", SAC 2016, and "Multi-armed bandits for adjudicating
documents in pooling-based evaluation of information retrieval systems", IP&M 2017): per turn, the runs
are arms and the order in which the pooled items are judged is chosen from the labels seen so far. Each
run is read in its own order (the rank column); an item judged already is passed over at no cost.

- ``depth``: the items of depth 1 of every run (runs in the order given), then of depth 2, and so on:
  a depth-k pool is judged before any item of depth k+1 (Losada et al.'s "Rank" baseline).
- ``mtf``: move-to-front (Cormack, Palmer and Clarke, SIGIR 1998) as Losada et al. state it: every run
  starts with the same priority; the current run is read on while its items are relevant; a
  non-relevant one lowers its priority by one and moves to the other run of highest priority (ties in
  the order the runs are given). The first run given starts.
- ``bandit``: Losada et al.'s Bayesian bandit with the maximum-mean rule (MM, stationary): each run's
  rate of relevant items has a Beta(1, 1) prior, updated with the labels of the items it has passed
  (whoever's turn judged them); the next item comes from the run whose posterior mean
  ``(1 + relevant) / (2 + relevant + non-relevant)`` is highest (ties in run order). Deterministic.
  (The 2017 paper's best method, MM-NS, adds a discount of old rewards; it is not implemented.)
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..data import Run
from ..errors import InputError
from ..limits import MAX_CUTOFF

STRATEGIES = ("depth", "mtf", "bandit")

# re.ASCII: \d is 0-9 only, not every script's digits (castregin.formats.common.plain_number_text's rule).
_STRATUM = re.compile(r"\s*(\d+)\s*-\s*(\d+)\s*:\s*(#\d+|\d+(?:\.\d*)?%|\d*\.?\d+)\s*", re.ASCII)


@dataclass(frozen=True)
class Stratum:
    """Ranks ``first`` to ``last`` (an item's best rank over the runs), sampled at ``rate`` or ``count`` a turn."""

    name: str
    first: int
    last: int
    rate: Fraction | None = None
    count: int | None = None

    def sample_size(self, size: int) -> int:
        """How many of a turn's ``size`` items of this stratum are sampled."""
        if self.count is not None:
            return min(self.count, size)
        return min(size, math.ceil((self.rate or 0) * size))

    def describe(self) -> str:
        """``all``, ``rate 0.5`` or ``20 a turn``."""
        if self.count is not None:
            return f"{self.count} a turn"
        return "all" if self.rate == 1 else f"rate {float(self.rate or 0):g}"


def parse_strata(text: str, argument: str = "sample") -> list[Stratum]:
    """``1-10:1,11-50:0.5,51-1000:10%`` (or ``#N`` items a turn) as strata; contiguous from rank 1."""
    strata: list[Stratum] = []
    parts = [part for part in text.split(",") if part.strip()]
    if not parts:
        raise InputError("expected strata such as 1-10:1,11-50:0.5,51-1000:0.1", argument=argument)
    for part in parts:
        match = _STRATUM.fullmatch(part)
        if match is None:
            raise InputError(f"{part.strip()!r} is not FIRST-LAST:RATE (1-10:1, 11-50:0.5, 51-1000:10%) or "
                             "FIRST-LAST:#COUNT (51-1000:#20)", argument=argument)
        first, last, share = int(match.group(1)), int(match.group(2)), match.group(3)
        expected = strata[-1].last + 1 if strata else 1
        if first != expected or last < first or last > MAX_CUTOFF:
            raise InputError(f"stratum {part.strip()}: strata must follow each other from rank 1 (this one should "
                             f"start at {expected} and end at or after it)", argument=argument)
        name = str(len(strata) + 1)
        if share.startswith("#"):
            count = int(share[1:])
            if count < 1:
                raise InputError(f"stratum {part.strip()}: sample at least one item (#1)", argument=argument)
            strata.append(Stratum(name, first, last, count=count))
            continue
        rate = Fraction(share[:-1]) / 100 if share.endswith("%") else Fraction(share)
        if not 0 < rate <= 1:
            raise InputError(f"stratum {part.strip()}: the rate must be above 0 and at most 1 (or 100%)",
                             argument=argument)
        strata.append(Stratum(name, first, last, rate=rate))
    return strata


def best_ranks(runs: Iterable[Run], depth: int) -> dict[str, dict[str, int]]:
    """Per turn, each item of some run's top ``depth`` (by the rank column) and the best position any run gives it."""
    best: dict[str, dict[str, int]] = {}
    for run in runs:
        for turn in run.turns:
            items = best.setdefault(turn, {})
            for position, item in enumerate(run.top_by_rank(turn, depth), start=1):
                if position < items.get(item, position + 1):
                    items[item] = position
    return best


@dataclass(frozen=True)
class SampledPool:
    """A stratified sample of a pool: each pooled item's stratum, and the items sampled (to be judged)."""

    strata: dict[str, dict[str, str]]
    sampled: dict[str, set[str]]
    spec: tuple[Stratum, ...]
    seed: int

    def statistics(self) -> list[dict]:
        """Per stratum: its ranks, rate, pooled and sampled items over all turns."""
        rows = []
        for stratum in self.spec:
            pooled = sum(1 for items in self.strata.values() for s in items.values() if s == stratum.name)
            sampled = sum(1 for turn, items in self.sampled.items() for item in items
                          if self.strata[turn][item] == stratum.name)
            rows.append({"stratum": stratum.name, "ranks": f"{stratum.first}-{stratum.last}",
                         "sample": stratum.describe(), "pooled": pooled, "sampled": sampled})
        return rows


def sample_pool(runs: Iterable[Run], strata: Sequence[Stratum] | str, seed: int = 0) -> SampledPool:
    """The pool of ``runs`` down to the last stratum's rank, each item in its stratum, and a seeded sample of each."""
    spec = parse_strata(strata) if isinstance(strata, str) else list(strata)
    ranks = best_ranks(runs, spec[-1].last)
    of_item = {turn: {item: next(s.name for s in spec if s.first <= rank <= s.last) for item, rank in items.items()}
               for turn, items in ranks.items()}
    sampled: dict[str, set[str]] = {}
    for turn, items in of_item.items():
        chosen: set[str] = set()
        for stratum in spec:
            members = sorted(item for item, name in items.items() if name == stratum.name)
            rng = random.Random(f"{seed}:{turn}:{stratum.name}")
            chosen.update(rng.sample(members, stratum.sample_size(len(members))))
        sampled[turn] = chosen
    return SampledPool(of_item, sampled, tuple(spec), seed)


# --- adaptive judging orders -------------------------------------------------------------------------------


def judging_order(rankings: Sequence[Sequence[str]], strategy: str, relevant: Callable[[str], bool]) -> list[str]:
    """The order in which ``strategy`` judges every item of ``rankings`` (one turn: each run's items, best first).

    ``relevant(item)`` is the label the strategy sees once it has judged the item.
    """
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}", argument="strategy")
    if strategy == "depth":
        seen: dict[str, None] = {}
        for depth in range(max((len(r) for r in rankings), default=0)):
            for ranking in rankings:
                if depth < len(ranking):
                    seen.setdefault(ranking[depth])
        return list(seen)
    judged: set[str] = set()
    order: list[str] = []
    positions = [0] * len(rankings)
    hits = [0] * len(rankings)
    misses = [0] * len(rankings)
    priority = [0] * len(rankings)
    current = 0

    def advance(arm: int) -> None:
        # Items judged already (through another run) are passed over; the bandit learns from them too.
        while positions[arm] < len(rankings[arm]) and rankings[arm][positions[arm]] in judged:
            if strategy == "bandit":
                if relevant(rankings[arm][positions[arm]]):
                    hits[arm] += 1
                else:
                    misses[arm] += 1
            positions[arm] += 1

    while True:
        for arm in range(len(rankings)):
            advance(arm)
        live = [arm for arm in range(len(rankings)) if positions[arm] < len(rankings[arm])]
        if not live:
            return order
        if strategy == "bandit":
            current = max(live, key=lambda arm: ((1 + hits[arm]) / (2 + hits[arm] + misses[arm]), -arm))
        elif current not in live:
            current = max(live, key=lambda arm: (priority[arm], -arm))
        item = rankings[current][positions[current]]
        order.append(item)
        judged.add(item)
        positions[current] += 1
        good = relevant(item)
        if strategy == "bandit":
            hits[current] += good
            misses[current] += not good
        elif not good:
            priority[current] -= 1
            others = [arm for arm in live if arm != current]
            if others:
                current = max(others, key=lambda arm: (priority[arm], -arm))


def turn_rankings(runs: Sequence[Run], turn: str, depth: int | None = None) -> list[list[str]]:
    """Each run's items of ``turn`` in its own order (the rank column), its top ``depth`` (None: all)."""
    return [run.top_by_rank(turn, depth if depth is not None else len(run.scores.get(turn, {}))) for run in runs]


def relevant_in(labels: Mapping[str, int], rel_level: int) -> Callable[[str], bool]:
    """Whether an item is relevant by ``labels`` (an item they lack is not)."""
    return lambda item: labels.get(item, 0) >= rel_level


def adaptive_pool(runs: Sequence[Run], strategy: str, budget: int,
                  judged: Mapping[str, Mapping[str, int]] | None = None, rel_level: int = 2,
                  depth: int | None = None) -> dict[str, list[str]]:
    """The next items to judge per turn: ``strategy``'s order over the runs, within ``budget`` judgments a turn.

    ``judged`` holds the labels known so far (turn -> item -> label; below 0 is not a judgment): the
    strategy sees them, and an item it has not seen judged counts as non-relevant for choosing the next
    ones (judge the output, add the labels and run again to go on with them). A turn's judged items
    among the pooled ones count against its budget; the rest of the budget is the next items in the
    strategy's order not judged yet, in that order.
    """
    if budget < 1:
        raise InputError("the budget must be at least 1 judgment a turn", argument="budget")
    judged = judged or {}
    out: dict[str, list[str]] = {}
    turns = dict.fromkeys(turn for run in runs for turn in run.turns)
    for turn in turns:
        labels = {item: label for item, label in judged.get(turn, {}).items() if label >= 0}
        order = judging_order(turn_rankings(runs, turn, depth), strategy, relevant_in(labels, rel_level))
        spent = sum(1 for item in order if item in labels)
        fresh = [item for item in order if item not in labels][:max(0, budget - spent)]
        if fresh:
            out[turn] = fresh
    return out
