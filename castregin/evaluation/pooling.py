"""How many judgments a judging strategy needs: a simulation on a qrels taken as complete.

Per turn, the pool is the runs' top ``depth`` items (all they rank by default); the qrels' labels of
those items are the truth (an item the qrels lack is non-relevant), and the reference ranking of the
runs is by their mean ``measure`` on those labels. Each strategy of :mod:`castregin.track.sampling`
judges the pool in its order; with a budget of b judgments a turn, the judged qrels are the first b
items of each turn's order (unjudged items count as non-relevant, as trec_eval counts them). Per
strategy and budget: the judgments spent (over all turns), the relevant items found, and Kendall's tau
(tau-b, scipy) between the runs' ranking on the judged qrels and the reference ranking. The judgments
a strategy needs for a tau are those from which tau stays at or above it for every larger budget.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from ..data import Qrels, Run
from ..errors import CoverageWarning, InputError, InputWarning
from ..track.sampling import STRATEGIES, judging_order, relevant_in, turn_rankings
from .analysis import _means
from .ranking import DEFAULT_SCORE_PRECISION


@dataclass(frozen=True)
class SimulationPoint:
    """One strategy at one budget (judgments a turn): what it spent, found, and how well it ranks the runs."""

    strategy: str
    budget: int
    judgments: int
    relevant_found: int
    relevant_share: float
    kendall_tau: float


@dataclass(frozen=True)
class PoolingSimulation:
    """:func:`simulate_pooling`'s points and summary.

    ``needed[strategy]`` is the judgments from which Kendall's tau stays at or above ``threshold`` (None
    when it never does within the budgets tried); ``pool`` the pooled (turn, item) pairs, ``relevant`` the
    relevant ones among them. ``largest_budget`` is the largest budget tried and ``largest_pool`` the largest
    turn's pool: below it, "stays" holds within the budgets tried only (a larger one may drop below again).
    """

    points: tuple[SimulationPoint, ...]
    needed: dict[str, int | None]
    threshold: float
    measure: str
    depth: int | None
    runs: int
    turns: int
    pool: int
    relevant: int
    largest_budget: int
    largest_pool: int

    @property
    def within_budgets_tried(self) -> bool:
        """The budgets tried stop short of judging every turn's whole pool: ``needed`` holds within them only."""
        return self.largest_budget < self.largest_pool

    def summary(self) -> dict:
        return {"measure": self.measure, "depth": self.depth, "runs": self.runs, "turns": self.turns,
                "pool": self.pool, "relevant": self.relevant, "threshold": self.threshold,
                "judgments_needed": self.needed, "largest_budget": self.largest_budget,
                "largest_pool": self.largest_pool, "within_budgets_tried": self.within_budgets_tried}


def default_budgets(largest: int) -> list[int]:
    """Every budget from 1 to 20, then about 10% apart, up to ``largest`` (a turn's whole pool)."""
    budgets = set(range(1, min(largest, 20) + 1))
    step = 20.0
    while step < largest:
        step *= 1.1
        budgets.add(min(largest, math.ceil(step)))
    return sorted(budgets)


def _tau(reference: Sequence[float], scores: Sequence[float]) -> float:
    from scipy import stats

    if len(set(reference)) < 2 or len(set(scores)) < 2:
        return math.nan  # tau-b is undefined when every run has the same score
    return float(stats.kendalltau(reference, scores).statistic)


def simulate_pooling(runs: Sequence[Run], qrels: Qrels, strategies: Sequence[str] = STRATEGIES,
                     budgets: Sequence[int] | None = None, measure: str = "AP", rel_level: int = 2,
                     depth: int | None = None, threshold: float = 0.9,
                     score_precision: str = DEFAULT_SCORE_PRECISION) -> PoolingSimulation:
    """Simulate each strategy on ``qrels`` taken as the truth (see the module's docstring)."""
    if len(runs) < 2:
        raise InputError("a ranking of runs needs at least two runs", argument="runs")
    for strategy in strategies:
        if strategy not in STRATEGIES:
            raise InputError(f"unknown strategy {strategy!r}; expected {', '.join(STRATEGIES)}", argument="strategies")
    turns = [turn for turn in qrels.labels if any(turn in run.scores for run in runs)]
    if not turns:
        raise InputError("the runs and the qrels share no turn: nothing to simulate", source=qrels.source)
    rankings = {turn: turn_rankings(runs, turn, depth) for turn in turns}
    truth = {turn: {item: max(qrels.labels[turn].get(item, 0), 0) for ranking in rankings[turn] for item in ranking}
             for turn in turns}
    reference = _means(runs, Qrels(truth, qrels.name, qrels.source), [measure], rel_level, score_precision)[measure]
    if len(set(reference)) < 2:
        raise InputError(f"every run has the same {measure} ({reference[0]:.4f}) on the pool's labels: there is no "
                         "ranking of the runs to approach (Kendall's tau is undefined at every budget); nothing to "
                         "simulate. Check the qrels, -m and --rel-level", source=qrels.source)
    largest = max(len(items) for items in truth.values())
    budgets = sorted(set(budgets)) if budgets else default_budgets(largest)
    if budgets[0] < 1:
        raise InputError("budgets must be at least 1 judgment a turn", argument="budgets")
    points: list[SimulationPoint] = []
    needed: dict[str, int | None] = {}
    total_relevant = sum(label >= rel_level for items in truth.values() for label in items.values())
    if not total_relevant:
        warnings.warn(InputWarning(f"no item of the pool has a label >= {rel_level} (--rel-level) in {qrels.source}: "
                                   "relevant_found is 0 and relevant_share undefined (nan) at every budget"),
                      stacklevel=2)
    for strategy in strategies:
        orders = {turn: judging_order(rankings[turn], strategy, relevant_in(truth[turn], rel_level)) for turn in turns}
        line = []
        for budget in budgets:
            judged = {turn: {item: truth[turn][item] for item in order[:budget]} for turn, order in orders.items()}
            found = sum(label >= rel_level for items in judged.values() for label in items.values())
            with warnings.catch_warnings():
                # A small budget leaves most of a run's items unjudged: that is the point, not a mistake.
                warnings.simplefilter("ignore", CoverageWarning)
                scores = _means(runs, Qrels(judged, qrels.name, qrels.source), [measure], rel_level,
                                score_precision)[measure]
            line.append(SimulationPoint(strategy, budget, sum(len(items) for items in judged.values()), found,
                                        found / total_relevant if total_relevant else math.nan,
                                        _tau(reference, scores)))
        points.extend(line)
        needed[strategy] = None
        for point in reversed(line):
            if not point.kendall_tau >= threshold:  # nan never reaches it
                break
            needed[strategy] = point.judgments
    return PoolingSimulation(tuple(points), needed, threshold, measure, depth, len(runs), len(turns),
                             sum(len(items) for items in truth.values()), total_relevant, budgets[-1], largest)
