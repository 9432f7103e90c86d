"""trec_eval 9.0.8's rules in plain Python: the ranking its measures read, and its evaluation loop.

Written from the semantics of trec_eval's C source (usnistgov/trec_eval, tag ``trec_eval-9.0.8``) and
checked against its binary (tests/cli/test_trec_eval*.py): its own test suite and random runs, byte
for byte. No C code runs here, so no input can crash it; where trec_eval itself fails, crashes or
reads memory it does not own, castregin refuses in one line instead (:class:`TrecEvalRefusal`).

What trec_eval does, step by step (``form_res_rels.c``):

- A topic is evaluated when both the run and the qrels have it, in byte order of the ids.
- Its items are ranked by score descending, as 64-bit floats (tag ``trec_eval-9.0.8`` reads them
  as ``double``; ``Settings.score_bits`` 32 ranks them as trec_eval up to v9.0.8 and pytrec_eval do:
  see :mod:`castregin.evaluation.ranking`), ties by item id in descending byte order; then cut to
  the first ``-M`` items.
- Each item gets its label; an item the qrels lack is "not in the pool" (-1), one labelled below 0
  is "in the pool but unjudged" (-2). With ``-J`` both are dropped, the others keep their order.
- Per topic: the number of qrels items at each label from 0 up (negative labels are not counted),
  ``num_rel`` (items labelled at or above the level ``-l``), ``num_rel_ret`` (judged retrieved items
  at or above the level) and the numbers of retrieved items outside the pool and unjudged.

Each measure then reads that ranking exactly as its ``m_<name>.c`` does (its rule, declared with it
in :mod:`castregin.evaluation.measures`), with the same double arithmetic in the same order (0/0
gives trec_eval's ``-nan``, :func:`c_div`), and is averaged over topics by its ``calc_avg`` (means,
sums, geometric means; ``-c`` divides by the qrels' topics). ``-Z`` turns each
topic's values into z-scores from a file of means and deviations first (``convert_zscores.c``,
:mod:`castregin.evaluation.zscores`).

A topic whose labels are all negative cannot be evaluated: trec_eval stops with "Can't calculate
measure" when it comes first, and reuses the previous topic's label counts otherwise. Labels above
:data:`castregin.limits.MAX_TREC_LABEL` are refused (see there why).
"""

from __future__ import annotations

import bisect
import math
from collections import Counter

from ..errors import InputError
from ..limits import MAX_TREC_LABEL
from .ranking import DEFAULT_BITS, ranked_items

TYPE_CHECKING = False  # typing's own is not imported: a ten-line trec_eval runs without the typing module
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

#: trec_eval's relevance values of a retrieved item the qrels lack, and of one labelled below 0.
NONPOOL, UNJUDGED = -1, -2
#: C's ``long`` (64 bits on the systems trec_eval is built on).
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
#: trec_eval's floor for geometric means (``MIN_GEO_MEAN``).
MIN_GEO_MEAN = 0.00001
#: x86's result of 0/0 (its sign bit set: glibc prints ``-nan``).
_C_NAN = -math.nan


class TrecEvalRefusal(InputError):
    """Input on which trec_eval fails, crashes or reads memory it does not own: castregin refuses it."""


# --- C's arithmetic -------------------------------------------------------------------------------------------


def c_div(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as C computes it in doubles: x/0 is an infinity, 0/0 a NaN (``-nan``)."""
    if denominator:
        return float(numerator) / float(denominator)
    numerator = float(numerator)
    if math.isnan(numerator):
        return numerator
    if numerator == 0:
        return _C_NAN
    return math.copysign(math.inf, numerator) * math.copysign(1.0, float(denominator))


def c_log2(value: float) -> float:
    """C's ``log2``: -inf at 0 and ``-nan`` below, where Python's raises ValueError."""
    if value > 0 or math.isnan(value):
        return math.log2(value)
    return -math.inf if value == 0 else _C_NAN


def c_exp(value: float) -> float:
    """C's ``exp``: an infinity where Python's raises OverflowError."""
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


# A pattern, not a compiled regex: compiled on first use (by a decimal parameter), then cached by re. Whole numbers
# are read without re, which a ten-line trec_eval (its -l, -M and -N are whole numbers) does not load at all.
_DECIMAL = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"


def c_long(text: str, what: str) -> int:
    """A whole number as trec_eval reads it with C's ``atol`` (beyond C's ``long``: its bound, as glibc).

    Stricter than ``atol``, which reads "abc" as 0 and "5x" as 5: anything but a whole number is an
    error naming ``what``.
    """
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):  # [+-]?[0-9]+, the whole text
        raise InputError(f"{what} must be a whole number, not {text!r}")
    return min(max(int(text), LONG_MIN), LONG_MAX)


def c_double(text: str, what: str) -> float:
    """A decimal number as C's ``atof`` reads it (stricter: anything else is an error naming ``what``)."""
    import re

    if not re.fullmatch(_DECIMAL, text):
        raise InputError(f"{what}: {text!r} is not a decimal number")
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"{what}: {text!r} is too large")
    return value


# --- one topic's ranking (form_res_rels.c) -----------------------------------------------------------------------


class Settings:
    """trec_eval's options that change a topic's values: ``-l``, ``-J``, ``-M``, ``-N``."""

    __slots__ = ("judged_only", "level", "max_docs", "num_docs_in_coll", "score_bits")
    level: int
    judged_only: bool
    max_docs: int
    num_docs_in_coll: int
    #: Bits of the scores compared when ranking: 64 as trec_eval-9.0.8, 32 as pytrec_eval and trec_eval
    #: up to v9.0.8 (see :mod:`castregin.evaluation.ranking`).
    score_bits: int

    def __init__(self, level: int = 1, judged_only: bool = False, max_docs: int = LONG_MAX, num_docs_in_coll: int = 0,
                 score_bits: int = DEFAULT_BITS):
        self.level, self.judged_only, self.max_docs = level, judged_only, max_docs
        self.num_docs_in_coll, self.score_bits = num_docs_in_coll, score_bits


class Ranking:
    """trec_eval's ``RES_RELS`` of one topic: labels in ranking order and the counts measures read."""

    __slots__ = ("cache", "labels", "num_nonpool", "num_rel", "num_rel_levels", "num_rel_ret", "num_unjudged_in_pool",
                 "rel_levels", "relevant", "rels", "scores", "topic")
    topic: str
    #: Each retrieved item's label in ranking order; NONPOOL and UNJUDGED for the items outside the
    #: qrels and labelled below 0 (without ``-J``, which drops them).
    rels: list[int]
    num_rel: int
    num_rel_ret: int
    num_nonpool: int
    num_unjudged_in_pool: int
    #: How many qrels items carry each label of 0 or more.
    rel_levels: Mapping[int, int]
    #: The largest label of 0 or more, plus one (0 for a topic labelled only below 0).
    num_rel_levels: int
    #: The positions (from 0) whose label is at or above the level, ascending.
    relevant: list[int]
    #: The topic's scores and labels as given (for measures ranked otherwise: Judged@k).
    scores: Mapping[str, float]
    labels: Mapping[str, int]
    #: What several measures derive from the ranking alike (the nDCG family's gains).
    cache: dict

    def __init__(self, topic: str, rels: list[int], num_rel: int, num_rel_ret: int, num_nonpool: int,
                 num_unjudged_in_pool: int, rel_levels: Mapping[int, int], num_rel_levels: int, relevant: list[int],
                 scores: Mapping[str, float], labels: Mapping[str, int], cache: dict):
        self.topic, self.rels, self.num_rel, self.num_rel_ret = topic, rels, num_rel, num_rel_ret
        self.num_nonpool, self.num_unjudged_in_pool, self.rel_levels = num_nonpool, num_unjudged_in_pool, rel_levels
        self.num_rel_levels, self.relevant, self.scores, self.labels = num_rel_levels, relevant, scores, labels
        self.cache = cache

    @property
    def num_ret(self) -> int:
        return len(self.rels)

    @property
    def pooled(self) -> list[tuple[int, int]]:
        """``(position, label)`` of the retrieved items in the qrels (the others only take up ranks)."""
        if "pooled" not in self.cache:
            self.cache["pooled"] = [(i, rel) for i, rel in enumerate(self.rels) if rel != NONPOOL]
        return self.cache["pooled"]

    def relevant_before(self, cutoffs: Sequence[int]) -> list[int]:
        """For each cutoff, the number of relevant items among the first ``cutoff`` (as the cutoff loops count)."""
        return [bisect.bisect_left(self.relevant, cutoff) for cutoff in cutoffs]


def rank_topic(topic: str, scores: Mapping[str, float], labels: Mapping[str, int], settings: Settings,
               strict: bool = True, order: Sequence[str] | None = None) -> Ranking:
    """One topic as trec_eval's measures see it (``te_form_res_rels``).

    A topic labelled only below 0 is a :class:`TrecEvalRefusal` when ``strict``, as trec_eval cannot
    evaluate it; otherwise nothing in it is relevant. ``order`` is ``ranked_items(scores,
    settings.score_bits)`` when the caller has it already (the same ranking under many labellings).
    """
    if order is None:
        order = ranked_items(scores, settings.score_bits)
    if settings.max_docs < len(order):
        order = order[:settings.max_docs]
    get = labels.get
    rels = [NONPOOL if (label := get(item)) is None else (UNJUDGED if label < 0 else label) for item in order]
    level = settings.level
    if settings.judged_only:
        rels = [rel for rel in rels if rel >= 0]
        nonpool = unjudged = 0
    else:
        nonpool, unjudged = rels.count(NONPOOL), rels.count(UNJUDGED)
    num_rel_ret = sum(1 for rel in rels if rel >= 0 and rel >= level)
    counts = Counter(label for label in labels.values() if label >= 0)
    if not counts and strict:
        raise TrecEvalRefusal(
            f"topic {topic}: every label is negative (trec_eval: in the pool but unjudged), so trec_eval "
            "cannot evaluate it (it stops with \"Can't calculate measure\" when the topic comes first, and "
            "reuses the previous topic's label counts otherwise); give one of its items a label of 0 or more, "
            "or leave the topic out")
    num_rel = sum(count for label, count in counts.items() if label >= level)
    return Ranking(topic, rels, num_rel, num_rel_ret, nonpool, unjudged, counts, max(counts, default=-1) + 1,
                   [i for i, rel in enumerate(rels) if rel >= level], scores, labels, {})


# --- what trec_eval cannot evaluate ---------------------------------------------------------------------------


def check_labels(qrels: Mapping[str, Mapping[str, int]], topics: Sequence[str], source: str | None) -> None:
    """Refuse a label above :data:`~castregin.limits.MAX_TREC_LABEL` in the topics to be evaluated."""
    for topic in topics:
        items = qrels[topic]
        largest = max(items.values())
        if largest > MAX_TREC_LABEL:
            item = next(item for item, label in items.items() if label == largest)
            where = f"{source}: " if source else ""
            raise TrecEvalRefusal(
                f"{where}topic {topic}, item {item}: label {largest} is above {MAX_TREC_LABEL}, the largest castregin "
                f"evaluates with trec_eval's rules (trec_eval's time and memory per topic grow with its largest label: "
                f"a label of 100,000 takes it seconds a topic, 2^30 crashes it); map the labels to a smaller scale")


def refuse_unevaluable(qrels: Mapping[str, Mapping[str, int]], topics: Sequence[str], source: str | None) -> None:
    """Refuse, as :func:`evaluate` does with ``strict``, what trec_eval cannot evaluate among ``topics``: labels above
    :data:`~castregin.limits.MAX_TREC_LABEL`, then (in byte order) a topic labelled only below 0."""
    topics = sorted(topics)
    check_labels(qrels, topics, source)
    for topic in topics:
        if not any(label >= 0 for label in qrels[topic].values()):
            try:
                rank_topic(topic, {}, qrels[topic], Settings())
            except TrecEvalRefusal as refusal:
                raise TrecEvalRefusal(f"{source}: {refusal}" if source else str(refusal)) from None
