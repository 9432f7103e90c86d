"""ndeval.c's diversity measures (TREC Web track 2009-2014, version 4.5), operation for operation.

ndeval binarises labels (an item is relevant to a subtopic when its label there is 1 or more) and
ignores the subtopics no item is relevant to. With ``alpha`` its redundancy intolerance and ``beta``
its patience, the item at position i (from 0) gains, for each subtopic j it is relevant to (in
subtopic order), ``(1 - alpha)^(items before it relevant to j)``; every measure is ndeval's:

- alpha-DCG@k: the gains times ``log(2)/log(i + 2)``, summed to k, over the "ideal ideal" (every
  subtopic at every rank) summed alike; alpha-nDCG@k: that over the same of the ideal ranking;
- ERR-IA@k and nERR-IA@k: the same with the discount ``1/(i + 1)``;
- NRBP: the gains times ``beta^i`` over the whole ranking, times ``(1 - (1 - alpha) beta)`` over the
  number of subtopics; nNRBP: over the ideal ranking's;
- P-IA@k: the (item, subtopic) relevances in the top k over k times the subtopics; strec@k: the
  share of the subtopics met in the top k; MAP-IA: each subtopic's average precision, averaged.

The ideal ranking is ndeval's greedy one: at each rank the judged item of largest gain, ties to the
largest item id. ndeval computes the cutoff measures to depth 20 only; here to any depth (the values
to 20 are ndeval's). ndeval leaves alpha-DCG and ERR-IA at rank 1 (its arrays' index 0, which it never
prints) unnormalised; here @1 is normalised as every other cutoff.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from ..errors import InputError
from ..limits import MAX_IDEAL_STEPS
from .gdeval import risk_weighted, topic_key

#: ndeval's depth (its ``DEPTH``): the deepest cutoff it computes, and its columns' last.
NDEVAL_DEPTH = 20
#: The cutoffs of its columns.
NDEVAL_CUTOFFS = (5, 10, 20)
_LOG2 = math.log(2.0)


def discount(i: int) -> float:
    """ndeval's ``discount``: ``log(2)/log(i + 2)``, 1 at position 0."""
    return 1.0 if i <= 0 else _LOG2 / math.log(i + 2.0)


class Judgments(NamedTuple):
    """One topic's judgments as ndeval holds them: subtopics by position, items' relevant subtopics."""

    #: Each judged item's relevant subtopics (positions into the sorted subtopics, ascending).
    relevant: Mapping[str, tuple[int, ...]]
    #: The number of items relevant to each subtopic.
    per_subtopic: tuple[int, ...]

    @property
    def subtopics(self) -> int:
        """Subtopics with a relevant item (ndeval's ``actualSubtopics``)."""
        return sum(1 for count in self.per_subtopic if count)


def judgments(labels: Mapping[str, Mapping[str, int]]) -> Judgments:
    """ndeval's view of ``{item: {subtopic: label}}``: relevant where the label is 1 or more."""
    # Subtopics in ndeval's order, as its topics: numbers by value, other names after them in byte order.
    names = sorted({subtopic for per_item in labels.values() for subtopic in per_item}, key=topic_key)
    position = {name: j for j, name in enumerate(names)}
    counts = [0] * len(names)
    relevant = {}
    for item, per_item in labels.items():
        found = tuple(sorted(position[s] for s, label in per_item.items() if label >= 1))
        relevant[item] = found
        for j in found:
            counts[j] += 1
    return Judgments(relevant, tuple(counts))


def gains(ranking: Sequence[tuple[int, ...] | None], size: int, alpha: float) -> list[float]:
    """Each position's novelty gain: its subtopics' ``(1 - alpha)^seen``, added in subtopic order."""
    left = [1.0] * size
    out = []
    for found in ranking:
        score = 0.0
        for j in found or ():
            score += left[j]
            left[j] *= 1.0 - alpha
        out.append(score)
    return out


def ideal_ranking(topic: Judgments, alpha: float) -> list[tuple[int, ...]]:
    """ndeval's greedy ideal ranking, as far as it gains anything (the rest gains 0 and adds nothing).

    At each rank the item of largest gain, ties to the largest item id, as ndeval's quadratic loop
    picks it. Items relevant to the same subtopics always gain alike, so the loop runs over those
    groups (each gain added in subtopic order, as ndeval adds it), each group's items taken from the
    largest id down.
    """
    left = [1.0] * len(topic.per_subtopic)
    groups: dict[tuple[int, ...], list[str]] = {}
    for item, found in sorted(topic.relevant.items()):
        if found:
            groups.setdefault(found, []).append(item)
    relevant = sum(len(items) for items in groups.values())
    if relevant * len(groups) > MAX_IDEAL_STEPS:
        raise InputError(f"{relevant} items relevant to {len(groups)} different sets of subtopics in one topic: "
                         f"ndeval's greedy ideal ranking would take over {MAX_IDEAL_STEPS:,} steps "
                         "(castregin.limits.MAX_IDEAL_STEPS); split the topic or merge subtopics")
    order = []
    while groups:
        best: tuple[int, ...] | None = None
        best_score, best_item = 0.0, ""
        for found, items in groups.items():
            score = 0.0
            for j in found:
                score += left[j]
            if best is None or score > best_score or (score == best_score and items[-1] > best_item):
                best, best_score, best_item = found, score, items[-1]
        if best is None or best_score == 0.0:
            break  # every item left (judged non-relevant ones too) gains 0
        groups[best].pop()
        if not groups[best]:
            del groups[best]
        order.append(best)
        for j in best:
            left[j] *= 1.0 - alpha
    return order


class Values(NamedTuple):
    """One ranking's values as ndeval holds them (``struct rList``), to ``depth``."""

    dcg: list[float]
    err: list[float]
    nrbp: float
    precision: list[float]
    strec: list[float]
    map_ia: float


def values(ranking: Sequence[tuple[int, ...] | None], topic: Judgments, alpha: float, beta: float,
           depth: int = NDEVAL_DEPTH) -> Values:
    """ndeval's values of a ranking (each position's relevant subtopics, None if unjudged)."""
    actual = topic.subtopics
    zeros = [0.0] * depth
    if actual == 0:
        return Values(zeros, list(zeros), 0.0, list(zeros), list(zeros), 0.0)
    scores = gains(ranking, len(topic.per_subtopic), alpha)
    top = min(depth, len(scores))
    dcg, err = list(zeros), list(zeros)
    for i in range(top):
        dcg[i] = scores[i] * discount(i)
        err[i] = scores[i] / float(i + 1)
    ideal_dcg, ideal_err = list(zeros), list(zeros)
    gain = float(actual)
    for i in range(depth):
        ideal_dcg[i] = gain * discount(i)
        ideal_err[i] = gain / float(i + 1)
        gain *= 1.0 - alpha
    for i in range(1, depth):
        dcg[i] += dcg[i - 1]
        ideal_dcg[i] += ideal_dcg[i - 1]
        err[i] += err[i - 1]
        ideal_err[i] += ideal_err[i - 1]
    # From 0: ndeval's loop starts at 1, leaving @1 (which it never prints) unnormalised.
    for i in range(depth):
        dcg[i] /= ideal_dcg[i]
        err[i] /= ideal_err[i]
    nrbp, decay = 0.0, 1.0
    for score in scores:
        nrbp += score * decay
        decay *= beta
    nrbp *= (1 - (1 - alpha) * beta) / actual
    precision, strec = list(zeros), list(zeros)
    seen: set[int] = set()
    count = 0
    for i in range(depth):
        if i < top:
            found = ranking[i] or ()
            count += len(found)
            seen.update(found)
        precision[i] = float(count) / ((i + 1) * actual)
        strec[i] = float(len(seen)) / float(actual)
    return Values(dcg, err, nrbp, precision, strec, _map_ia(ranking, topic))


def _map_ia(ranking, topic: Judgments) -> float:
    counts = [0] * len(topic.per_subtopic)
    totals = [0.0] * len(topic.per_subtopic)
    for i, found in enumerate(ranking):
        for j in found or ():
            counts[j] += 1
            totals[j] += counts[j] / float(i + 1)
    total = 0.0
    for j, relevant in enumerate(topic.per_subtopic):
        if relevant:
            total += totals[j] / relevant
    return total / topic.subtopics


class Normalised(NamedTuple):
    """A run's values and those over the ideal ranking's (ndeval's ``renormalize``)."""

    run: Values
    ndcg: list[float]
    nerr: list[float]
    #: nan where the ideal's NRBP is 0 (a topic with no relevant item): ndeval prints -nan.
    nnrbp: float


def normalised(run: Values, ideal: Values) -> Normalised:
    """The run's values and their normalised ones (only where the run's alpha-DCG is not 0, as ndeval)."""
    depth = len(run.dcg)
    ndcg, nerr = [0.0] * depth, [0.0] * depth
    for i in range(depth):
        if run.dcg[i]:
            ndcg[i] = run.dcg[i] / ideal.dcg[i]
            nerr[i] = run.err[i] / ideal.err[i]
    nnrbp = run.nrbp / ideal.nrbp if ideal.nrbp else math.nan
    return Normalised(run, ndcg, nerr, nnrbp)


def evaluate_topic(ranked_items: Sequence[str], topic: Judgments, alpha: float, beta: float,
                   depth: int = NDEVAL_DEPTH, ideal: Sequence[tuple[int, ...]] | None = None) -> Normalised:
    """All of ndeval's values for a ranking of items on one topic (``ideal``: the topic's
    :func:`ideal_ranking` at this alpha, when the caller has it already)."""
    ranking = [topic.relevant.get(item) for item in ranked_items]
    if ideal is None:
        ideal = ideal_ranking(topic, alpha)
    return normalised(values(ranking, topic, alpha, beta, depth), values(ideal, topic, alpha, beta, depth))


#: ndeval's columns: the name, and the value of a :class:`Normalised` at ndeval's cutoffs.
COLUMNS: tuple[tuple[str, Callable[[Normalised], float]], ...] = (
    *((f"ERR-IA@{k}", lambda n, k=k: n.run.err[k - 1]) for k in NDEVAL_CUTOFFS),
    *((f"nERR-IA@{k}", lambda n, k=k: n.nerr[k - 1]) for k in NDEVAL_CUTOFFS),
    *((f"alpha-DCG@{k}", lambda n, k=k: n.run.dcg[k - 1]) for k in NDEVAL_CUTOFFS),
    *((f"alpha-nDCG@{k}", lambda n, k=k: n.ndcg[k - 1]) for k in NDEVAL_CUTOFFS),
    ("NRBP", lambda n: n.run.nrbp),
    ("nNRBP", lambda n: n.nnrbp),
    ("MAP-IA", lambda n: n.run.map_ia),
    *((f"P-IA@{k}", lambda n, k=k: n.run.precision[k - 1]) for k in NDEVAL_CUTOFFS),
    *((f"strec@{k}", lambda n, k=k: n.run.strec[k - 1]) for k in NDEVAL_CUTOFFS),
)


# --- the drop-in: ndeval's whole output ------------------------------------------------------------------------


def ndeval_report(qrels, run, alpha: float = 0.5, beta: float = 0.5, traditional: bool = False,
                  depth: int = 0, complete: bool = False, baseline=None, risk_alpha: float = 0.0,
                  risk_alpha_text: str = "0") -> tuple[str, list[tuple[str, list[float]]], list[float]]:
    """What ndeval prints: the run id, each run topic's values (:data:`COLUMNS`), and their mean (``amean``).

    ``qrels`` and ``run`` are the lines of :func:`castregin.formats.diversity.ndeval_qrels` and
    :func:`~castregin.formats.diversity.ndeval_run`. The run is ordered by its rank column (duplicate
    ranks are an error) or, ``traditional``, by score descending then item id descending; ``depth``
    (``-M``) keeps each topic's first items. Every run topic is printed (0 where the qrels lack it);
    the mean divides by the topics of both (``complete``: of the qrels). A topic without a relevant
    item has nNRBP nan, as ndeval's 0/0, which its mean carries. With ``baseline`` (a run's lines,
    ``-baseline``), each value is the difference from the baseline's, losses weighted by
    ``1 + risk_alpha`` (``-riskAlpha``; ``risk_alpha_text`` as given, for the run id), over the run's topics
    and, with ``complete``, the baseline's too; the mean divides by at least the topics printed.
    """
    labels: dict[str, dict[str, dict[str, int]]] = {}
    for line in qrels:
        per_subtopic = labels.setdefault(line.topic, {}).setdefault(line.item, {})
        if line.subtopic in per_subtopic:
            raise InputError(f"ndeval qrels: item {line.item} is judged twice for subtopic {line.subtopic} of topic "
                             f"{line.topic} (ndeval would count it twice)")
        per_subtopic[line.subtopic] = min(line.label, 1)
    topics: dict[str, tuple[Judgments, list[tuple[int, ...]]]] = {}  # the run's and the baseline's
    rows = _ndeval_rows(labels, run, alpha, beta, traditional, depth, topics)
    count = len(labels) if complete else sum(1 for *_, matched in rows if matched)
    runid = run[0].runid
    printed = [(topic, row) for topic, row, _ in rows]
    if baseline is not None:
        base = [(topic, row) for topic, row, _ in _ndeval_rows(labels, baseline, alpha, beta, traditional, depth,
                                                               topics)]
        printed = _with_baseline(printed, base, risk_alpha, complete)
        count = max(count, len(printed))
        runid = f"{runid} (rel to. {baseline[0].runid}; rs=1+a; a={risk_alpha_text})"
    totals = [0.0] * len(COLUMNS)
    for _, row in printed:
        for index, value in enumerate(row):
            totals[index] += value
    mean = [total / count if count else math.nan for total in totals]
    return runid, printed, mean


def _with_baseline(run_rows, base_rows, alpha: float, complete: bool) -> list[tuple[str, list[float]]]:
    """ndeval's walk over the run's and the baseline's topics side by side (``outputMeasures``)."""
    zeros = [0.0] * len(COLUMNS)
    out = []
    i = j = 0
    while i < len(run_rows) or (j < len(base_rows) and complete):
        if i < len(run_rows) and j < len(base_rows):
            run_key, base_key = topic_key(run_rows[i][0]), topic_key(base_rows[j][0])
            if run_key == base_key:
                topic, mine, theirs = run_rows[i][0], run_rows[i][1], base_rows[j][1]
                i, j = i + 1, j + 1
            elif run_key > base_key:
                topic, mine, theirs = base_rows[j][0], zeros, base_rows[j][1]
                j += 1
                if not complete:
                    continue
            else:
                topic, mine, theirs = run_rows[i][0], run_rows[i][1], zeros
                i += 1
        elif i >= len(run_rows):
            topic, mine, theirs = base_rows[j][0], zeros, base_rows[j][1]
            j += 1
        else:
            topic, mine, theirs = run_rows[i][0], run_rows[i][1], zeros
            i += 1
        out.append((topic, [risk_weighted(value, base, alpha) for value, base in zip(mine, theirs, strict=True)]))
    return out


def _ndeval_rows(labels, run, alpha: float, beta: float, traditional: bool, depth: int, topics: dict) -> list:
    """Each run topic's values, ``(topic, values, whether the qrels hold it)``, in topic order. ``topics`` keeps
    each topic's judgments and ideal ranking, made on first use, for the next call (the baseline's)."""
    lines: dict[str, list] = {}
    for line in run:
        lines.setdefault(line.topic, []).append(line)
    rows = []
    for topic in sorted(lines, key=topic_key):
        entries = lines[topic]
        if traditional:
            entries = sorted(entries, key=lambda line: (line.score, line.item), reverse=True)
        else:
            entries = sorted(entries, key=lambda line: line.rank)
            for before, after in itertools.pairwise(entries):
                if before.rank == after.rank:
                    raise InputError(f"ndeval run: duplicate rank ({after.rank}) for topic {topic}")
        if depth > 0:
            entries = entries[:depth]
        items = [line.item for line in entries]
        if len(set(items)) != len(items):
            raise InputError(f"ndeval run: duplicate docno for topic {topic}")
        if topic in labels:
            if topic not in topics:
                judged = judgments(labels[topic])
                topics[topic] = (judged, ideal_ranking(judged, alpha))
            judged, ideal = topics[topic]
            normal = evaluate_topic(items, judged, alpha, beta, ideal=ideal)
            rows.append((topic, [value(normal) for _, value in COLUMNS], True))
        else:
            rows.append((topic, [0.0] * len(COLUMNS), False))
    return rows
