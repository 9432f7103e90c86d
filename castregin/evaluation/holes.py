"""Holes: the unjudged items in a run's top k, and each score as the interval they leave open.

A run that did not contribute to the pool is scored mostly on items nobody judged; trec_eval counts
them as non-relevant, and prints one number. :func:`hole_intervals` prints the range instead:

- A **hole** is an item in a turn's top ``depth`` in trec_eval's order (score descending, ties by item
  id descending: the order the measure reads) that the qrels lack or label below 0 (trec_eval's "in
  the pool but unjudged"). ``judged`` is the share of the top ``depth`` (or of the items retrieved,
  when fewer) that is not a hole.
- The interval ``[low, high]`` is the least and the greatest value the measure takes over **every**
  labelling of the turn's holes with labels from 0 to ``hole_label``, everything else as the qrels say;
  judged items keep their labels and unjudged items below the top ``depth`` count as non-relevant, as
  trec_eval counts them. It holds the score the run would get were its holes judged, whatever the
  labels (up to ``hole_label``). It is not "holes as 0" to "holes as ``hole_label``": nDCG and AP are
  not monotone in a hole's label (a relevant item found low raises the ideal DCG, or R, more than the
  run's DCG or precision sum), so either end may lie anywhere between.
- ``score`` is the value trec_eval prints (holes non-relevant); ``low <= score <= high``.

How the extremes are found, exactly and without trying all ``(L+1)^h`` labellings of ``h`` holes:
every supported measure is ``f(run's labels) / g(multiset of the turn's labels)``: nDCG's ideal DCG
and AP's, recall's and R-precision's R depend only on which labels the turn holds, and given those,
the numerator is larger the better the labels at the better ranks (nDCG: the gains times discounts
that do not grow with the rank, the rearrangement inequality; P, recall, success, RR, AP, R-precision
at a fixed R: moving a relevant item up to a non-relevant hole never lowers them). So for each
multiset of hole labels (``C(h+L, L)`` of them; for binary measures only how many holes are
relevant, ``h+1``), the best labels on the best-ranked holes give the greatest value, on the
worst-ranked holes the least; the interval is the least and greatest of those. The tests check this
against all labellings, and the end points against pytrec_eval. Measures for which this does not hold
(bpref and infAP read unjudged items, nDCG with a gain map need not reward higher labels...) are
refused, and so is a turn with more multisets than :data:`castregin.limits.MAX_HOLE_LABELLINGS`.

Means are over the turns ``evaluate`` averages (those in both the run and the qrels); the mean of the
turns' lows is the least mean, the turns' holes being labelled independently. Two runs' intervals are
found independently too: a hole both runs retrieve takes one label in truth, so a flip reported
(:func:`possible_flips`) may be impossible, but no possible flip goes unreported.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..data import Qrels, Run
from ..errors import CoverageWarning, InputError
from ..limits import MAX_HOLE_LABELLINGS, MAX_TREC_LABEL
from .evaluate import run_names, trec_eval_mean
from .measures import Measure, parse_measures
from .ranking import DEFAULT_SCORE_PRECISION, ranked_items, score_bits
from .trec_rules import Settings, rank_topic

#: The measures whose interval is exact (see the module's docstring), by trec_eval name: binary ones
#: read whether a label reaches the relevance level, graded ones (nDCG) the label itself.
BINARY_MEASURES = frozenset({"P", "success", "recall", "recip_rank", "map", "map_cut", "Rprec"})
GRADED_MEASURES = frozenset({"ndcg", "ndcg_cut"})
#: As the refusal lists them.
SUPPORTED_NAMES = "P@k, Success@k, R@k, RR, AP, AP@k, Rprec, nDCG, nDCG@k (or their trec_eval names)"
#: Measures whose parameter is a cutoff (the default --depth).
_WITH_CUTOFF = frozenset({"P", "success", "recall", "map_cut", "ndcg_cut"})


@dataclass(frozen=True)
class TurnHoles:
    """One turn of one run under one measure: its holes and the interval of its value."""

    run: str
    measure: str
    turn: str
    depth: int
    #: The holes in the order of the ranking (the best-ranked first).
    hole_items: tuple[str, ...]
    judged: float
    score: float
    low: float
    high: float
    #: A labelling of the holes that gives ``low`` (``high``): ``{item: label}``.
    low_labels: Mapping[str, int] = field(default_factory=dict)
    high_labels: Mapping[str, int] = field(default_factory=dict)

    @property
    def holes(self) -> int:
        return len(self.hole_items)


@dataclass(frozen=True)
class RunInterval:
    """One run under one measure: the means over the turns averaged, and what was left out."""

    run: str
    measure: str
    depth: int
    turns: int
    holes: int
    turns_with_holes: int
    judged: float
    score: float
    low: float
    high: float
    #: Turns of the run that the qrels lack, and turns of the qrels that the run lacks (not averaged).
    run_turns_not_judged: int
    qrels_turns_not_run: int

    @property
    def width(self) -> float:
        return self.high - self.low


def check_supported(measure: Measure) -> None:
    """Refuse in one line a measure whose interval castregin cannot make exact."""
    definition = measure.definition
    why = None
    if definition.name not in BINARY_MEASURES | GRADED_MEASURES:
        why = "its value is not bounded exactly by this method"
    elif measure.judged_only:
        why = "judged-only evaluation (-J) drops the holes instead of counting them"
    elif measure.gains is not None or (definition.name == "ndcg" and measure.params):
        why = "a gain map need not reward higher labels"
    if why is not None:
        raise InputError(f"measure {measure.name!r}: {why}; analyze holes supports {SUPPORTED_NAMES}",
                         argument="measures")


def default_depth(measure: Measure) -> int | None:
    """The measure's cutoff, where it has one (P@5: 5), else None."""
    param = measure.param
    return int(param) if measure.definition.name in _WITH_CUTOFF and param is not None else None


def _fill_levels(measure: Measure, hole_label: int) -> list[int]:
    """The labels a hole may take that change the measure differently: for a binary measure only
    whether it reaches the level (0 or ``hole_label``), for nDCG every label from 0 to ``hole_label``."""
    if measure.definition.name in GRADED_MEASURES:
        return list(range(hole_label + 1))
    return [0, hole_label] if hole_label >= measure.rel else [0]


def labellings_to_try(holes: int, levels: int) -> int:
    """Multisets of ``holes`` labels from ``levels`` labels: ``C(holes + levels - 1, holes)``."""
    return math.comb(holes + levels - 1, holes)


def turn_holes(run_name: str, turn: str, scores: Mapping[str, float], labels: Mapping[str, int], measure: Measure,
               depth: int, hole_label: int, bits: int, order: Sequence[str] | None = None) -> TurnHoles:
    """The holes of one turn and the exact interval of the measure's value over their labellings (``order``: the
    turn's items as :func:`~castregin.evaluation.ranking.ranked_items` ranks them, when the caller has it)."""
    if order is None:
        order = ranked_items(scores, bits)
    top = order[:depth]
    holes = [item for item in top if labels.get(item, -1) < 0]
    judged = (len(top) - len(holes)) / len(top) if top else 1.0
    settings = Settings(measure.rel, score_bits=bits)
    rule, params = measure.definition.rule, measure.params
    if rule is None:  # every supported measure has one (check_supported)
        raise InputError(f"measure {measure.name!r} has no per-turn rule", argument="measures")

    def value(fill: Mapping[str, int]) -> float:
        filled = {**labels, **fill} if fill else labels
        # Not strict, as evaluate: a turn labelled only below 0 has nothing relevant.
        return rule(rank_topic(turn, scores, filled, settings, strict=False, order=order), settings, params)[0]

    score = value({})
    if not holes:
        return TurnHoles(run_name, measure.name, turn, depth, (), judged, score, score, score)
    levels = _fill_levels(measure, hole_label)
    count = labellings_to_try(len(holes), len(levels))
    if count > MAX_HOLE_LABELLINGS:
        raise InputError(
            f"run {run_name!r}, turn {turn}: {len(holes)} holes in the top {depth} with labels 0..{hole_label} "
            f"make {count:,} label multisets to try for {measure.name}, more than {MAX_HOLE_LABELLINGS:,} "
            "(castregin.limits.MAX_HOLE_LABELLINGS); use a smaller --depth or --hole-label, or a binary measure")
    low, high = score, score
    low_labels: dict[str, int] = {}
    high_labels: dict[str, int] = {}
    for multiset in itertools.combinations_with_replacement(levels, len(holes)):  # ascending labels
        worst_first = dict(zip(holes, multiset, strict=True))  # best labels on the worst-ranked holes
        best_first = dict(zip(holes, reversed(multiset), strict=True))
        least, greatest = value(worst_first), value(best_first)
        if least < low:
            low, low_labels = least, worst_first
        if greatest > high:
            high, high_labels = greatest, best_first
    if not low_labels:
        low_labels = dict.fromkeys(holes, 0)
    if not high_labels:
        high_labels = dict.fromkeys(holes, 0)
    return TurnHoles(run_name, measure.name, turn, depth, tuple(holes), judged, score, low, high, low_labels,
                     high_labels)


def _mean(values: Mapping[str, float]) -> float:
    # evaluate's mean: the turns in byte order, summed left to right.
    return trec_eval_mean([values[turn] for turn in sorted(values)], len(values))


def summarise(rows: Sequence[TurnHoles], run: Run, qrels: Qrels, run_name: str, measure: Measure,
              depth: int) -> RunInterval:
    """The means of one run's per-turn rows under one measure."""
    def of(attribute):
        return _mean({row.turn: getattr(row, attribute) for row in rows})

    return RunInterval(run_name, measure.name, depth, len(rows), sum(row.holes for row in rows),
                       sum(1 for row in rows if row.holes), of("judged"), of("score"), of("low"), of("high"),
                       sum(1 for turn in run.scores if turn not in qrels.labels),
                       sum(1 for turn in qrels.labels if turn not in run.scores))


def possible_flips(intervals: Sequence[RunInterval]) -> list[dict]:
    """The pairs of runs (under the same measure) whose order labelling the holes could reverse.

    For two runs ``a`` ahead of ``b`` on trec_eval's score (on a tie, ``a`` first by name), ``b`` could
    end strictly above ``a`` when ``b.high > a.low``; on a tie, either could end above the other unless
    both intervals are that one point. Each run's interval is found on its own (conservative: a hole
    both runs retrieve takes one label in truth).
    """
    out = []
    by_measure: dict[str, list[RunInterval]] = {}
    for interval in intervals:
        by_measure.setdefault(interval.measure, []).append(interval)
    for measure, group in by_measure.items():
        ordered = sorted(group, key=lambda r: (-r.score, r.run))
        for a, b in itertools.combinations(ordered, 2):
            tie = a.score == b.score
            if b.high > a.low or (tie and a.high > b.low):
                out.append({"measure": measure, "run_a": a.run, "run_b": b.run, "score_a": a.score,
                            "score_b": b.score, "low_a": a.low, "high_a": a.high, "low_b": b.low,
                            "high_b": b.high, "tie": tie})
    return out


@dataclass
class HolesResult:
    """What :func:`hole_intervals` finds: per-turn rows, per-run means, possible flips, and its settings."""

    turns: list[TurnHoles]
    runs: list[RunInterval]
    flips: list[dict]
    settings: dict

    def records(self) -> dict:
        """As plain data (what ``--format json`` and :func:`castregin.api.holes` give):
        ``{"settings", "runs", "flips", "turns"}``, each turn with its holes and the labellings of its ends."""
        turns = [{"run": t.run, "measure": t.measure, "turn": t.turn, "depth": t.depth, "holes": t.holes,
                  "judged": t.judged, "score": t.score, "low": t.low, "high": t.high,
                  "hole_items": list(t.hole_items), "low_labels": dict(t.low_labels),
                  "high_labels": dict(t.high_labels)} for t in self.turns]
        runs = [{**vars(r), "width": r.width} for r in self.runs]
        return {"settings": self.settings, "runs": runs, "flips": self.flips, "turns": turns}


def hole_intervals(runs: Sequence[Run], qrels: Qrels, measures: Sequence[str | Measure] = ("nDCG@3",),
                   depth: int | None = None, hole_label: int | None = None, rel_level: int = 2,
                   score_precision: str = DEFAULT_SCORE_PRECISION) -> HolesResult:
    """Each run's holes at ``depth`` and its score under each measure as an exact interval.

    ``depth`` defaults to each measure's cutoff (nDCG@3: 3) and must be given for measures without
    one (AP, RR, Rprec, nDCG). ``hole_label`` (the best label a hole may have) defaults to the qrels'
    largest label. See the module's docstring for what the interval means and how it is found.
    """
    if not runs:
        raise InputError("give at least one run", argument="runs")
    bits = score_bits(score_precision)
    parsed = parse_measures(list(measures), rel_level)
    if not parsed:
        raise InputError("give at least one measure", argument="measures")
    for measure in parsed:
        check_supported(measure)
    depths = {}
    for measure in parsed:
        chosen = depth if depth is not None else default_depth(measure)
        if chosen is None:
            raise InputError(f"measure {measure.name} has no cutoff: give the depth of the holes (--depth)",
                             argument="depth")
        if chosen < 1:
            raise InputError(f"the depth must be 1 or more, not {chosen}", argument="depth")
        depths[measure.name] = chosen
    largest = max((label for items in qrels.labels.values() for label in items.values()), default=0)
    if hole_label is None:
        hole_label = max(largest, 0)
    if isinstance(hole_label, bool) or not isinstance(hole_label, int) or not 0 <= hole_label <= MAX_TREC_LABEL:
        raise InputError(f"the hole label (the best label a hole may take; default: the qrels' largest) must be a "
                         f"whole number from 0 to {MAX_TREC_LABEL}, not {hole_label!r}", argument="hole_label")
    names = run_names(list(runs))
    turns, summaries = [], []
    for run, name in zip(runs, names, strict=True):
        shared = sorted(turn for turn in run.scores if turn in qrels.labels)
        if not shared:
            warnings.warn(CoverageWarning(f"run {name!r} shares no turn with qrels {qrels.name!r}: its means are 0 "
                                          "over no turn; check the turn ids"), stacklevel=2)
        orders = {turn: ranked_items(run.scores[turn], bits) for turn in shared}  # once per turn, not per measure
        for measure in parsed:
            rows = [turn_holes(name, turn, run.scores[turn], qrels.labels[turn], measure, depths[measure.name],
                               hole_label, bits, orders[turn]) for turn in shared]
            turns.extend(rows)
            summaries.append(summarise(rows, run, qrels, name, measure, depths[measure.name]))
    settings = {"qrels": qrels.name, "measures": [m.name for m in parsed], "depths": depths,
                "hole_label": hole_label, "qrels_largest_label": largest, "rel_level": rel_level,
                "score_precision": score_precision}
    return HolesResult(turns, summaries, possible_flips(summaries), settings)
