"""Inferred measures of a stratified sample of the pool: xinfAP, infNDCG, iP@k, inum_rel(_ret), interpolated precision.

The estimators of Yilmaz, Kanoulas and Aslam ("A Simple and Efficient Sampling Method for Estimating AP
and NDCG", SIGIR 2008) exactly as NIST's ``sample_eval.pl`` (10 Oct 2011) computes them, which TREC has
used since 2008: the pool of a topic is cut into strata, each judged on a random sample (the items left
out labelled -1); a measure is estimated from the sampled judgments, each stratum weighted by its size
over its sample. The numbers equal sample_eval.pl's to the last bit (the sums run in its order), and
``castregin sample_eval`` prints them as it does (tested against the Perl script).

The functions are plain: :func:`topic_sample` summarises one topic's sample, :func:`estimate_topic`
estimates the measures of one ranking on it, :func:`interpolated_precision` the 11-point curve, and
:func:`sample_eval` does what the script does for a whole run. ``rel_level`` generalises the script's
"label > 0 is relevant" (``rel_level=1``, its only setting) for xinfAP, iP@k and the counts; infNDCG
always takes every positive label as its gain, as trec_eval's nDCG does.

sample_eval.pl's own quirks, kept (the numbers are its numbers):

- an item the run ranks that the pool holds but nobody sampled counts, in each stratum, as
  ``(relevant + 0.00001) / (sampled + 0.00003)`` of an item: a stratum with no sampled item
  makes a third of its retrieved items relevant in inum_rel_ret and iP@k;
- only the first 1000 items of a ranking count (``MAX_RESULT_SIZE``), and the ideal DCG stops at rank
  1000 within each grade only, the next grade going on past it;
- the ideal DCG takes the grades in the order of their text, descending (10 before 2), and each
  grade's estimated count rounded half up;
- strata are summed in the order of their names as text.
"""

from __future__ import annotations

import functools
import math

from ..data import Run, StratifiedQrels
from ..errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Mapping, Sequence

#: Items of a ranking sample_eval.pl reads (its ``$maxResultSize``, TREC's 1000).
MAX_RESULT_SIZE = 1000
#: The cutoffs of iP@k that sample_eval.pl prints.
SAMPLE_EVAL_CUTOFFS = (10, 50, MAX_RESULT_SIZE)
#: The recall levels of the interpolated precision (0.0, 0.1, ..., 1.0), as sample_eval.pl writes them.
RECALL_LEVELS = ("0", ".1", ".2", ".3", ".4", ".5", ".6", ".7", ".8", ".9", "1")
#: sample_eval.pl's smoothing of a stratum's share of relevant items.
_SMOOTH_RELEVANT, _SMOOTH_SAMPLED = 0.00001, 0.00003


class _Record:
    """A frozen record of the fields its class names in ``_FIELDS`` (also its ``__slots__``; in the order of the
    constructor's arguments and the repr), made, compared, hashed and shown as a frozen dataclass is. Not a
    dataclass: dataclasses, with the inspect, ast and dis it loads, would be some 10 ms of a ten-line
    ``castregin sample_eval`` (tests/test_imports_lean.py)."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def __init__(self, *values: object, **named: object):
        fields = self._FIELDS
        if len(values) > len(fields) or set(fields[:len(values)]) & set(named) or (
                set(fields) != set(fields[:len(values)]) | set(named)):
            raise TypeError(f"{type(self).__name__} takes the fields {', '.join(fields)}, each once")
        for name, value in [*zip(fields[:len(values)], values, strict=True), *named.items()]:
            object.__setattr__(self, name, value)

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __reduce__(self) -> tuple:
        return type(self), self._values()  # copied and pickled through the constructor, as frozen

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")  # as dataclasses.FrozenInstanceError

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in self._FIELDS)})"


class TopicSample(_Record):
    """One topic's stratified sample, summarised as the estimators need it.

    ``labels`` and ``strata`` are the stratified qrels of the topic. Per stratum (``strata_names``,
    sorted as text): ``pooled`` items, ``sampled`` ones (label 0 and up), ``sampled_relevant`` ones
    (label >= rel_level). ``num_rel`` is the estimated number of relevant items (inum_rel), ``ideal_dcg``
    the estimated ideal DCG.
    """

    #: The fields, in the order of the constructor's arguments and the repr.
    _FIELDS = ("labels", "strata", "strata_names", "pooled", "sampled", "sampled_relevant", "num_rel", "ideal_dcg",
               "rel_level")
    __slots__ = _FIELDS

    labels: Mapping[str, int]
    strata: Mapping[str, str]
    strata_names: tuple[str, ...]
    pooled: Mapping[str, int]
    sampled: Mapping[str, int]
    sampled_relevant: Mapping[str, int]
    num_rel: float
    ideal_dcg: float
    rel_level: int


def _log2(rank: int) -> float:
    return math.log(rank + 1) / math.log(2)


def topic_sample(labels: Mapping[str, int], strata: Mapping[str, str], rel_level: int = 1,
                 max_result_size: int = MAX_RESULT_SIZE) -> TopicSample:
    """Summarise one topic's stratified qrels (``labels``: item -> label, -1 unsampled; ``strata``: item -> stratum)."""
    if rel_level < 1:
        raise InputError(f"rel_level must be 1 or more (a label below 0 marks an unsampled item), not {rel_level}",
                         argument="rel_level")
    pooled: dict[str, int] = {}
    sampled: dict[str, int] = {}
    relevant: dict[str, int] = {}
    by_grade: dict[str, dict[str, int]] = {}
    for item, label in labels.items():
        stratum = strata.get(item)
        if stratum is None:
            raise InputError(f"item {item} has a label and no stratum: every item of stratified qrels has both",
                             argument="strata")
        pooled[stratum] = pooled.get(stratum, 0) + 1
        if label >= 0:
            sampled[stratum] = sampled.get(stratum, 0) + 1
        if label >= rel_level:
            relevant[stratum] = relevant.get(stratum, 0) + 1
        if label > 0:
            grades = by_grade.setdefault(stratum, {})
            grades[str(label)] = grades.get(str(label), 0) + 1
    names = tuple(sorted(pooled))
    num_rel = 0.0
    for stratum in names:
        if sampled.get(stratum, 0):
            num_rel += relevant.get(stratum, 0) * pooled[stratum] / sampled[stratum]
    per_grade: dict[str, float] = {}
    for stratum in names:
        for grade in sorted(by_grade.get(stratum, {})):
            per_grade[grade] = per_grade.get(grade, 0) + by_grade[stratum][grade] * pooled[stratum] / sampled[stratum]
    ideal = 0.0
    start = 0
    for grade in sorted(per_grade, reverse=True):
        count = int(per_grade[grade] + 0.5)
        for rank in range(start + 1, start + count + 1):
            ideal += int(grade) / _log2(rank)
            if rank >= max_result_size:  # sample_eval.pl leaves this grade's loop only
                break
        start += count
    return TopicSample(dict(labels), dict(strata), names, pooled, {s: sampled.get(s, 0) for s in names},
                       {s: relevant.get(s, 0) for s in names}, num_rel, ideal, rel_level)


class TopicEstimates(_Record):
    """The inferred measures of one ranking on one topic's sample.

    ``precision`` maps each cutoff k to iP@k; ``relevant_at`` holds, for ranks 1, 2, ..., the estimated
    number of relevant items retrieved down to that rank (inum_rel_ret is its last value); ``ranked`` is
    how many items counted (at most the result size).
    """

    #: The fields, in the order of the constructor's arguments and the repr.
    _FIELDS = ("xinf_ap", "inf_ndcg", "precision", "inum_rel_ret", "inum_rel", "relevant_at", "ranked")
    __slots__ = _FIELDS

    xinf_ap: float
    inf_ndcg: float
    precision: Mapping[int, float]
    inum_rel_ret: float
    inum_rel: float
    relevant_at: tuple[float, ...]
    ranked: int


def estimate_topic(ranking: Sequence[str], sample: TopicSample, cutoffs: Sequence[int] = SAMPLE_EVAL_CUTOFFS,
                   max_result_size: int = MAX_RESULT_SIZE) -> TopicEstimates:
    """xinfAP, infNDCG, iP@k and inum_rel(_ret) of ``ranking`` (items, best first) on ``sample``."""
    names = sample.strata_names
    labels, strata, rel_level = sample.labels, sample.strata, sample.rel_level
    seen_sampled = dict.fromkeys(names, 0)
    seen_relevant = dict.fromkeys(names, 0)
    seen_pooled = dict.fromkeys(names, 0)
    gain = dict.fromkeys(names, 0.0)
    precision_sum = dict.fromkeys(names, 0.0)
    pooled_above = 0
    relevant_at: list[float] = []
    for rank, item in enumerate(ranking[:max_result_size], start=1):
        label = labels.get(item, -1)
        stratum = strata.get(item)
        if label > 0 and stratum is not None:
            if label >= rel_level:
                above = 0.0
                if pooled_above != 0:
                    for name in names:
                        share = seen_pooled[name] / pooled_above
                        if share != 0:
                            above += share * (seen_relevant[name] + _SMOOTH_RELEVANT) / (
                                seen_sampled[name] + _SMOOTH_SAMPLED)
                precision_sum[stratum] += 1 / rank + (pooled_above / rank) * above
                seen_relevant[stratum] += 1
            gain[stratum] += label / _log2(rank)
        if stratum is not None:
            pooled_above += 1
            seen_pooled[stratum] += 1
            if label >= 0:
                seen_sampled[stratum] += 1
        retrieved = 0.0
        for name in names:
            retrieved += seen_pooled[name] * (seen_relevant[name] + _SMOOTH_RELEVANT) / (
                seen_sampled[name] + _SMOOTH_SAMPLED)
        relevant_at.append(retrieved)
    relevant_retrieved = relevant_at[-1] if relevant_at else 0.0
    average_precision = 0.0
    for name in names:
        if sample.sampled[name] != 0 and sample.num_rel != 0:
            estimated = sample.sampled_relevant[name] * sample.pooled[name] / sample.sampled[name]
            share = estimated / sample.num_rel
            within = precision_sum[name] / sample.sampled_relevant[name] if sample.sampled_relevant[name] else 0
            average_precision += share * within
    dcg = 0.0
    for name in names:
        if pooled_above != 0 and seen_sampled[name] != 0:
            dcg += (seen_pooled[name] / pooled_above) * gain[name] / seen_sampled[name]
    ndcg = pooled_above * dcg / sample.ideal_dcg if sample.ideal_dcg != 0 else 0.0
    return TopicEstimates(average_precision, ndcg, {k: _precision_at(relevant_at, k) for k in cutoffs},
                          relevant_retrieved, sample.num_rel, tuple(relevant_at), len(relevant_at))


def _precision_at(relevant_at: Sequence[float], cutoff: int) -> float:
    # Past the ranking (or the result size), the relevant retrieved at its end over the cutoff.
    return (relevant_at[cutoff - 1] if cutoff <= len(relevant_at) else relevant_at[-1] if relevant_at else 0.0) / cutoff


def inferred_precision(estimates: TopicEstimates, cutoff: int) -> float:
    """iP@cutoff: the estimated relevant items among the first ``cutoff`` (all those ranked, when fewer) over
    ``cutoff``; ``estimate_topic(..., cutoffs=[cutoff])``'s value."""
    return _precision_at(estimates.relevant_at, cutoff)


def interpolated_precision(estimates: TopicEstimates) -> list[float]:
    """The interpolated precision at recall 0.0, 0.1, ..., 1.0, as sample_eval.pl computes it.

    Recall levels are the estimated numbers of relevant items ``level * inum_rel``. Walking the ranks
    from the deepest up, the running maximum of the estimated precision is credited to the highest level
    not yet credited that exceeds the estimated relevant retrieved at that rank, one level per rank; the
    levels left get the maximum over the whole ranking. (A level above inum_rel_ret is skipped first.)
    """
    levels = [float(level) * estimates.inum_rel for level in RECALL_LEVELS]
    values = [0.0] * len(levels)
    current = len(levels) - 1
    while current >= 0 and levels[current] > estimates.inum_rel_ret:
        current -= 1
    best = 0.0
    for rank in range(len(estimates.relevant_at), 0, -1):
        retrieved = estimates.relevant_at[rank - 1]
        best = max(best, retrieved / rank)
        if current >= 0 and levels[current] > retrieved:
            values[current] += best
            current -= 1
    while current >= 0:
        values[current] += best
        current -= 1
    return values


#: What sample_eval.pl does with a byte-order mark (castregin skips it, and says so: docs/sampling.md).
SAMPLE_EVAL_BYTE_ORDER_MARK = ("sample_eval.pl reads as part of the first line's topic id, a topic of its own there, "
                               "so that topic's numbers differ")


@functools.cache
def _perl_number() -> re.Pattern:
    import re  # here: re (and its enum) is not imported with the module

    return re.compile(r"\s*([+-]?)(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?"
                      r"|(?i:inf(?:inity)?)|(?i:nan))", re.ASCII)  # Perl reads the ASCII digits only


def perl_number(text: str) -> float:
    """The number Perl reads a string as (``"132_1-1"`` is 132, ``"x"`` 0): how sample_eval.pl orders topics."""
    match = _perl_number().match(text)
    if match is None:
        return 0.0
    value = float(match.group(2))
    return -value if match.group(1) == "-" else value


class SampleEvalTopic(_Record):
    """One topic of :func:`sample_eval`: its estimates and the run's lines for it (num_ret)."""

    _FIELDS = ("topic", "estimates", "num_ret")
    __slots__ = _FIELDS

    topic: str
    estimates: TopicEstimates
    num_ret: int


class SampleEvalResult(_Record):
    """What sample_eval.pl prints: per topic, then the means (and sums) over the topics of both files.

    ``interpolated`` is the 11-point interpolated precision averaged over the topics; ``num_rel`` sums
    inum_rel over every qrels topic (the run's or not, as sample_eval.pl sums it) and ``num_ret`` the
    items ranked of the topics evaluated (at most the result size each).
    """

    #: The fields, in the order of the constructor's arguments and the repr.
    _FIELDS = ("topics", "xinf_ap", "inf_ndcg", "interpolated", "precision", "inum_rel_ret", "inum_rel", "num_ret")
    __slots__ = _FIELDS

    topics: tuple[SampleEvalTopic, ...]
    xinf_ap: float
    inf_ndcg: float
    interpolated: tuple[float, ...]
    precision: Mapping[int, float]
    inum_rel_ret: float
    inum_rel: float
    num_ret: int


def run_topic(turn: str) -> str:
    """A run's topic as sample_eval.pl reads it: leading zeros stripped (``007`` is ``7``, ``0`` is empty)."""
    return turn.lstrip("0")


def sample_eval(qrels: StratifiedQrels, run: Run, rel_level: int = 1) -> SampleEvalResult:
    """Everything sample_eval.pl computes for ``run`` on ``qrels``, in its order, with its quirks.

    The run's topics lose their leading zeros, the qrels' keep them; topics are evaluated in the order of
    the number Perl reads each as (ties, such as CAsT's ``132_1-1`` and ``132_1-2``, in text order where
    Perl takes its hash's order). A run topic the qrels lack is skipped; no shared topic is an error
    (sample_eval.pl dies dividing by zero). Two spellings of one run topic (``01`` and ``1``) that rank
    the same item are an error: the script would keep the last line's score.
    """
    samples = {turn: topic_sample(labels, qrels.strata[turn], rel_level) for turn, labels in qrels.labels.items()}
    merged: dict[str, dict[str, float]] = {}
    for turn, scores in run.scores.items():
        topic = run_topic(turn)
        into = merged.setdefault(topic, {})
        twice = next((item for item in scores if item in into), None)
        if twice is not None:
            raise InputError(f"item {twice} is ranked for turn {turn} and for another spelling of {topic or '0'} "
                             "(sample_eval strips leading zeros from run topics); keep one",
                             source=run.source)
        into.update(scores)
    evaluated = sorted((t for t in merged if t in samples), key=lambda t: (perl_number(t), t))
    if not evaluated:
        raise InputError("the run and the qrels share no topic (sample_eval.pl strips the leading zeros of the run's "
                         "topics, not of the qrels'): nothing to average", source=run.source)
    topics = []
    for topic in evaluated:
        scores = merged[topic]
        ranking = sorted(scores, key=lambda item: (scores[item], item), reverse=True)
        topics.append(SampleEvalTopic(topic, estimate_topic(ranking, samples[topic]), len(scores)))
    count = len(topics)
    sums = {"ap": 0.0, "ndcg": 0.0, "rel_ret": 0.0}
    precision_sums = dict.fromkeys(SAMPLE_EVAL_CUTOFFS, 0.0)
    for one in topics:
        sums["ap"] += one.estimates.xinf_ap
        sums["ndcg"] += one.estimates.inf_ndcg
        sums["rel_ret"] += one.estimates.inum_rel_ret
        for cutoff in SAMPLE_EVAL_CUTOFFS:
            precision_sums[cutoff] += one.estimates.precision[cutoff]
    interpolated = [0.0] * len(RECALL_LEVELS)
    for one in sorted(topics, key=lambda t: t.topic):  # sample_eval.pl: `sort keys`, as text
        for index, value in enumerate(interpolated_precision(one.estimates)):
            interpolated[index] += value
    num_rel = 0.0
    for turn in sorted(samples):
        num_rel += samples[turn].num_rel
    return SampleEvalResult(
        tuple(topics), sums["ap"] / count, sums["ndcg"] / count, tuple(value / count for value in interpolated),
        {cutoff: total / count for cutoff, total in precision_sums.items()}, sums["rel_ret"], num_rel,
        sum(one.estimates.ranked for one in topics))
