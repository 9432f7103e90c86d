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

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..errors import InputError
from ..limits import MAX_IDEAL_STEPS
from .gdeval import risk_weighted, topic_key

if TYPE_CHECKING:
    from ..formats.diversity import DiversityJudgments, DiversityRun

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
    found = _relevant_positions(ranking)
    out = [0.0] * len(ranking)
    for (i, _), score in zip(found, _gains(found, size, alpha), strict=True):
        out[i] = score
    return out


def _relevant_positions(ranking: Sequence[tuple[int, ...] | None]) -> list[tuple[int, tuple[int, ...]]]:
    """``(position, subtopics)`` of the positions relevant to a subtopic, in ranking order: all that gains."""
    return [(i, found) for i, found in enumerate(ranking) if found]


def _gains(found: Sequence[tuple[int, tuple[int, ...]]], size: int, alpha: float) -> list[float]:
    """The gain of each of ``found``'s positions (every other gains 0)."""
    left = [1.0] * size
    out = []
    for _, subtopics in found:
        score = 0.0
        for j in subtopics:
            score += left[j]
            left[j] *= 1.0 - alpha
        out.append(score)
    return out


#: ``beta^i`` by position, each the one before times ``beta`` (NRBP's decay as ndeval multiplies it), per beta.
_DECAYS: dict[float, list[float]] = {}


def _decays(beta: float, length: int) -> list[float]:
    table = _DECAYS.get(beta)
    if table is None or len(table) < length:
        # A new list (never one grown in place: rankings may be scored in threads), twice as long as asked.
        table, decay = [], 1.0
        for _ in range(max(2 * length, 64)):
            table.append(decay)
            decay *= beta
        _DECAYS[beta] = table
    return table


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
    return _values(_relevant_positions(ranking), len(ranking), topic, alpha, beta, depth)


def _values(found: Sequence[tuple[int, tuple[int, ...]]], length: int, topic: Judgments, alpha: float, beta: float,
            depth: int, normaliser: bool = False) -> Values:
    """:func:`values` of a ranking of ``length`` items whose relevant positions are ``found``. A position that
    gains nothing adds nothing (0.0) to any sum, so only ``found`` is visited; NRBP's decay at position i is
    the i-th of ndeval's running products all the same. ``normaliser``: only what normalises a run's values
    (alpha-DCG, ERR-IA, NRBP: the ideal ranking's); the rest is left 0."""
    actual = topic.subtopics
    zeros = [0.0] * depth
    if actual == 0:
        return Values(zeros, list(zeros), 0.0, list(zeros), list(zeros), 0.0)
    scores = _gains(found, len(topic.per_subtopic), alpha)
    top = min(depth, length)
    dcg, err = list(zeros), list(zeros)
    for (i, _), score in zip(found, scores, strict=True):
        if i >= top:
            break
        dcg[i] = score * discount(i)
        err[i] = score / float(i + 1)
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
    nrbp = 0.0
    decays = _decays(beta, length)
    for (i, _), score in zip(found, scores, strict=True):
        nrbp += score * decays[i]
    nrbp *= (1 - (1 - alpha) * beta) / actual
    precision, strec = list(zeros), list(zeros)
    if normaliser:
        return Values(dcg, err, nrbp, precision, strec, 0.0)
    seen: set[int] = set()
    count = 0
    at = {i: subtopics for i, subtopics in found if i < top}
    for i in range(depth):
        if i < top:
            subtopics = at.get(i, ())
            count += len(subtopics)
            seen.update(subtopics)
        precision[i] = float(count) / ((i + 1) * actual)
        strec[i] = float(len(seen)) / float(actual)
    return Values(dcg, err, nrbp, precision, strec, _map_ia(found, topic))


def _map_ia(found: Sequence[tuple[int, tuple[int, ...]]], topic: Judgments) -> float:
    counts = [0] * len(topic.per_subtopic)
    totals = [0.0] * len(topic.per_subtopic)
    for i, subtopics in found:
        for j in subtopics:
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
    return evaluate_ranking([topic.relevant.get(item) for item in ranked_items], topic, alpha, beta, depth, ideal)


def evaluate_ranking(ranking: Sequence[tuple[int, ...] | None], topic: Judgments, alpha: float, beta: float,
                     depth: int = NDEVAL_DEPTH, ideal: Sequence[tuple[int, ...]] | None = None) -> Normalised:
    """:func:`evaluate_topic` of a ranking given as each position's relevant subtopics (None if unjudged)."""
    return _evaluate(_relevant_positions(ranking), len(ranking), topic, alpha, beta, depth, ideal)


def _evaluate(found: Sequence[tuple[int, tuple[int, ...]]], length: int, topic: Judgments, alpha: float, beta: float,
              depth: int = NDEVAL_DEPTH, ideal: Sequence[tuple[int, ...]] | None = None) -> Normalised:
    """:func:`evaluate_ranking` of a ranking of ``length`` items whose relevant positions are ``found``."""
    if ideal is None:
        ideal = ideal_ranking(topic, alpha)
    return normalised(_values(found, length, topic, alpha, beta, depth),
                      _values(list(enumerate(ideal)), len(ideal), topic, alpha, beta, depth, normaliser=True))


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


def ndeval_report(qrels: DiversityJudgments, run: DiversityRun, alpha: float = 0.5, beta: float = 0.5,
                  traditional: bool = False, depth: int = 0, complete: bool = False,
                  baseline: DiversityRun | None = None, risk_alpha: float = 0.0, risk_alpha_text: str = "0"
                  ) -> tuple[str, list[tuple[str, list[float]]], list[float]]:
    """What ndeval prints: the run id, each run topic's values (:data:`COLUMNS`), and their mean (``amean``).

    ``qrels`` and ``run`` are read by :func:`castregin.formats.diversity.ndeval_qrels` and
    :func:`~castregin.formats.diversity.ndeval_run`. The run is ordered by its rank column (duplicate
    ranks are an error) or, ``traditional``, by score descending then item id descending; ``depth``
    (``-M``) keeps each topic's first items. Every run topic is printed (0 where the qrels lack it);
    the mean divides by the topics of both (``complete``: of the qrels). A topic without a relevant
    item has nNRBP nan, as ndeval's 0/0, which its mean carries. With ``baseline`` (a run's lines,
    ``-baseline``), each value is the difference from the baseline's, losses weighted by
    ``1 + risk_alpha`` (``-riskAlpha``; ``risk_alpha_text`` as given, for the run id), over the run's topics
    and, with ``complete``, the baseline's too; the mean divides by at least the topics printed.
    """
    relevance = _Relevance(qrels)
    topics: dict[str, tuple[Judgments, list[tuple[int, ...]]]] = {}  # the run's and the baseline's
    rows = _ndeval_rows(relevance, run, alpha, beta, traditional, depth, topics)
    count = len(qrels.topics) if complete else sum(1 for *_, matched in rows if matched)
    runid = str(run.first_runid)
    printed = [(topic, row) for topic, row, _ in rows]
    if baseline is not None:
        base = [(topic, row) for topic, row, _ in _ndeval_rows(relevance, baseline, alpha, beta, traditional, depth,
                                                               topics)]
        printed = _with_baseline(printed, base, risk_alpha, complete)
        count = max(count, len(printed))
        runid = f"{runid} (rel to. {baseline.first_runid}; rs=1+a; a={risk_alpha_text})"
    totals = [0.0] * len(COLUMNS)
    for _, row in printed:
        for index, value in enumerate(row):
            totals[index] += value
    mean = [total / count if count else math.nan for total in totals]
    return runid, printed, mean


class _Relevance:
    """A qrels as ndeval reads it: each topic's subtopics in its order, and the subtopics each item is relevant to
    (labels binarised: 1 or more). Only the relevant items are kept: one judged non-relevant gains as little as
    one not judged."""

    def __init__(self, qrels: DiversityJudgments):
        import numpy as np

        from ..arrays import arrow_indices
        from ..formats.diversity import first_repeat, item_codes

        _, items = item_codes(qrels.items)
        repeat = first_repeat(qrels.topic_codes, items, qrels.subtopics)
        if repeat is not None:
            raise InputError(f"ndeval qrels: item {qrels.items[repeat].as_py()} is judged twice for subtopic "
                             f"{qrels.subtopics[repeat]} of topic {qrels.topics[qrels.topic_codes[repeat]]} (ndeval "
                             "would count it twice)")
        # Each topic's subtopics in ndeval's order (numbers by value): the sorted (topic, subtopic) pairs.
        width = int(qrels.subtopics.max(initial=0)) + 1
        keys = qrels.topic_codes.astype(np.int64) * width + qrels.subtopics
        pairs = np.unique(keys)
        first_pair = np.searchsorted(pairs // width, np.arange(len(qrels.topics) + 1))
        relevant = np.flatnonzero(qrels.labels >= 1)
        pair = np.searchsorted(pairs, keys[relevant])
        counts = np.bincount(pair, minlength=len(pairs)).tolist()
        self.judged = {topic: code for code, topic in enumerate(qrels.topics)}
        self.per_subtopic = [tuple(counts[first_pair[code]:first_pair[code + 1]]) for code in range(len(qrels.topics))]
        topic_of = qrels.topic_codes[relevant]
        position = pair - first_pair[topic_of]
        order = np.lexsort((position, items[relevant], topic_of))
        #: The relevant (item, subtopic) pairs' items, topic by topic (those of topic code c from
        #: ``name_starts[c]``): what a run's lines are matched with.
        self.names = qrels.items.take(arrow_indices(relevant[order]))
        self.name_starts = np.searchsorted(topic_of[order], np.arange(len(qrels.topics) + 1))
        names = self.names.to_pylist()
        self.relevant: dict[int, dict[str, tuple[int, ...]]] = {}
        for code, name, at in zip(topic_of[order].tolist(), names, position[order].tolist(), strict=True):
            per_item = self.relevant.setdefault(code, {})
            per_item[name] = (*per_item.get(name, ()), at)

    def judgments(self, topic: str) -> Judgments:
        code = self.judged[topic]
        return Judgments(self.relevant.get(code, {}), self.per_subtopic[code])


def _ranking_order(run: DiversityRun, traditional: bool):
    """The run's lines topic by topic, each topic's in ndeval's order: by rank, or (``traditional``) by score then
    item id, both descending (equal keys in the file's order, as a stable sort leaves them)."""
    import numpy as np

    from ..arrays import byte_order_ranks
    from ..formats.diversity import item_codes

    if not traditional:
        return np.lexsort((run.ranks, run.topic_codes))
    distinct, items = item_codes(run.items)
    item_rank = byte_order_ranks(distinct)[items]  # equal ids, equal ranks
    return np.lexsort((-item_rank, -(run.scores + 0.0), run.topic_codes))  # + 0.0: -0.0 is 0.0, as in Python


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


def _ndeval_rows(relevance: _Relevance, run: DiversityRun, alpha: float, beta: float, traditional: bool, depth: int,
                 topics: dict) -> list:
    """Each run topic's values, ``(topic, values, whether the qrels hold it)``, in topic order. ``topics`` keeps
    each topic's judgments and ideal ranking, made on first use, for the next call (the baseline's)."""
    import numpy as np

    from ..arrays import arrow_indices

    order = _ranking_order(run, traditional)
    codes = run.topic_codes[order]
    starts = np.searchsorted(codes, np.arange(len(run.topics) + 1))
    # Each line's position in its topic's ranking (int32 as the codes: a run of millions of lines is held once).
    position = np.arange(len(order), dtype=np.int32)
    position -= np.repeat(starts[:-1].astype(np.int32), np.diff(starts))
    kept = position < depth if depth > 0 else np.ones(len(order), dtype=bool)
    # What ndeval stops at: a rank given twice in a topic (before -M cuts it), an item listed twice in what is kept.
    twice_ranked = np.zeros(len(order), dtype=bool)
    if not traditional:
        ranks = run.ranks[order]
        twice_ranked[1:] = (codes[1:] == codes[:-1]) & (ranks[1:] == ranks[:-1])
        del ranks
    del codes
    lines, twice = _relevant_lines(run, relevance)
    twice_listed = _listed_twice(run, order, kept) if twice else None
    # Where each line is in its topic's ranking (-1: cut).
    at = np.empty(len(order), dtype=np.int32)
    at[order] = np.where(kept, position, -1)
    del position
    found: dict[int, list[tuple[int, str]]] = {}
    names = run.items.take(arrow_indices(lines)).to_pylist()
    for code, place, name in zip(run.topic_codes[lines].tolist(), at[lines].tolist(), names, strict=True):
        if place >= 0:
            found.setdefault(code, []).append((place, name))
    rows = []
    index = {topic: code for code, topic in enumerate(run.topics)}
    for topic in sorted(run.topics, key=topic_key):
        code = index[topic]
        begin, end = int(starts[code]), int(starts[code + 1])
        if twice_ranked[begin:end].any():
            repeated = begin + int(np.argmax(twice_ranked[begin:end]))
            raise InputError(f"ndeval run: duplicate rank ({int(run.ranks[order[repeated]])}) for topic {topic}")
        if twice_listed is not None and twice_listed[code]:
            raise InputError(f"ndeval run: duplicate docno for topic {topic}")
        if topic not in relevance.judged:
            rows.append((topic, [0.0] * len(COLUMNS), False))
            continue
        if topic not in topics:
            judged = relevance.judgments(topic)
            topics[topic] = (judged, ideal_ranking(judged, alpha))
        judged, ideal = topics[topic]
        relevant = sorted((place, subtopics) for place, name in found.get(code, ())
                          if (subtopics := judged.relevant.get(name)))
        length = min(end - begin, depth) if depth > 0 else end - begin
        normal = _evaluate(relevant, length, judged, alpha, beta, ideal=ideal)
        rows.append((topic, [value(normal) for _, value in COLUMNS], True))
    return rows


def _relevant_lines(run: DiversityRun, relevance: _Relevance):
    """The lines whose item the qrels hold relevant in their topic or another (all that may gain), and whether a
    topic lists an item twice; batch by batch of whole topics, each batch's items matched with its topics'."""
    import numpy as np

    from ..arrays import arrow, arrow_indices, to_numpy
    from ..formats.turn_batches import by_batches_of_turns

    pa, pc, _ = arrow()
    qrels_topic = np.array([relevance.judged.get(topic, -1) for topic in run.topics], dtype=np.int64)
    starts = relevance.name_starts

    def visit(begin: int, end: int, distinct, codes: np.ndarray, twice: bool):
        topics = qrels_topic[np.unique(run.topic_codes[begin:end])]
        topics = topics[topics >= 0]
        rows = np.concatenate([np.arange(starts[topic], starts[topic + 1]) for topic in topics.tolist()]
                              or [np.zeros(0, dtype=np.int64)])
        found = pc.is_in(distinct, value_set=relevance.names.take(arrow_indices(rows)))
        matched = to_numpy(pc.cast(found, pa.int8()), np.int8).astype(bool)
        return begin + np.flatnonzero(matched[codes]), twice

    parts = by_batches_of_turns(run.items, run.topic_codes, len(run.topics), visit)
    lines = np.concatenate([found for found, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
    return lines, any(twice for _, twice in parts)


def _listed_twice(run: DiversityRun, order, kept):
    """Per topic, whether an item is listed twice among its lines ``kept`` (ndeval's "duplicate docno")."""
    import numpy as np

    from ..formats.diversity import item_codes

    _, items = item_codes(run.items)
    kept_lines = order[kept]
    topic_codes, kept_items = run.topic_codes[kept_lines], items[kept_lines]
    twice = np.zeros(len(run.topics), dtype=bool)
    by_pair = np.lexsort((kept_items, topic_codes))
    topic_codes, kept_items = topic_codes[by_pair], kept_items[by_pair]
    same = (topic_codes[1:] == topic_codes[:-1]) & (kept_items[1:] == kept_items[:-1])
    twice[topic_codes[1:][same]] = True
    return twice
