"""gdeval.pl's nDCG@k and ERR@k (TREC Web track 2010-2014, version 1.3), operation for operation.

A label g gains ``2^g - 1``; the discount at position i (from 0) is ``log(i + 2)/log(2)`` (Perl's
natural logs, divided as gdeval divides); the run is ranked by score descending, ties by item id
descending (Perl's string order); the ideal ranking is the qrels' positive labels, largest first.
nDCG@k is the DCG of the run's top k over the ideal's; ERR@k is
``sum_i r_i/(i + 1) prod_{j<i} (1 - r_j)`` with ``r = (2^g - 1)/2^max_grade`` (gdeval's maximum grade
is 4, and it refuses labels above it). gdeval leaves a topic without a positive label out (no line,
not in its mean); castregin's measures give such a turn 0, as every castregin measure does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .ranking import DEFAULT_BITS, ranked_items

#: gdeval's ``$MAX_JUDGMENT``.
GDEVAL_MAX_GRADE = 4
#: gdeval's default depth (``-k``).
GDEVAL_DEPTH = 20
_LOG_BASE = math.log(2.0)


def dcg(k: int, grades: Sequence[int]) -> float:
    """gdeval's ``dcg``: ``(2^g - 1)/(log(i + 2)/log 2)`` summed over the first k grades."""
    score = 0.0
    for i, grade in enumerate(grades[:k]):
        score += (2.0 ** grade - 1) / (math.log(i + 2) / _LOG_BASE)
    return score


def err(k: int, grades: Sequence[int], max_grade: int = GDEVAL_MAX_GRADE) -> float:
    """gdeval's ``err`` over the first k grades."""
    score, decay = 0.0, 1.0
    for i, grade in enumerate(grades[:k]):
        r = (2.0 ** grade - 1) / (2.0 ** max_grade)
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


def topic_values(scores: Mapping[str, float], labels: Mapping[str, int], k: int,
                 max_grade: int = GDEVAL_MAX_GRADE, bits: int = DEFAULT_BITS) -> tuple[float, float] | None:
    """(nDCG@k, ERR@k) of one topic, or None where no label is positive (gdeval skips the topic).

    gdeval's order is trec_eval's: score descending, ties by item id descending (``bits``: scores
    compared as doubles, gdeval's, or as 32-bit floats; see :mod:`castregin.evaluation.ranking`)."""
    ideal = sorted((label for label in labels.values() if label > 0), reverse=True)
    if not ideal:
        return None
    grades = [max(labels.get(item, 0), 0) for item in ranked_items(scores, bits)]
    return dcg(k, grades) / dcg(k, ideal), err(k, grades, max_grade)


# --- the drop-in: gdeval.pl's whole output ---------------------------------------------------------------------


def topic_key(topic: str) -> tuple:
    """The originals' topic order (numbers by value); castregin's ids that are not numbers after them, in byte
    order."""
    return (0, int(topic), topic) if topic.isascii() and topic.isdigit() else (1, 0, topic)


def check_numeric_ids(topics, what: str) -> None:
    """With the originals' id rewrite, two ids that are one number are one topic to them: refuse it."""
    by_value: dict[int, str] = {}
    for topic in topics:
        if topic.isdigit():
            other = by_value.setdefault(int(topic), topic)
            if other != topic:
                from ..errors import InputError

                raise InputError(f"{what}: topics {other} and {topic} are one number to the original, which would "
                                 "mix them; write each topic's number one way")


def risk_weighted(value: float, base: float, alpha: float) -> float:
    """gdeval's ``riskWeighted`` and ndeval's ``RiskBased``: the difference from the baseline, losses weighted by
    ``1 + alpha`` (ndeval's test, ``value >= base``: a nan value stays nan either way)."""
    return value - base if value >= base else (alpha + 1) * (value - base)


def gdeval_report(qrels, run, k: int = GDEVAL_DEPTH, complete: bool = False, max_grade: int = GDEVAL_MAX_GRADE,
                  baseline=None, risk_alpha: float = 0.0, risk_alpha_text: str = "0"
                  ) -> tuple[str, list[tuple[str, float, float]], tuple[float, float]]:
    """What gdeval.pl prints: the run id, ``(topic, nDCG@k, ERR@k)`` per topic, and the mean (``amean``).

    ``qrels`` and ``run`` are the lines of :func:`castregin.formats.diversity.gdeval_qrels` and
    :func:`~castregin.formats.diversity.gdeval_run`. A topic is printed when the run ranks it and the qrels
    give it a positive label; the mean is over those topics, or with ``complete`` over every qrels topic
    with a positive label. With ``baseline`` (a run's lines: ``-baseline``), each value is the difference
    from the baseline's (0 where it lacks the topic), losses weighted by ``1 + risk_alpha`` (``-riskAlpha``;
    ``risk_alpha_text`` as given, for the run id), and with ``complete`` the qrels topics the run lacks follow,
    scored 0 less the baseline.
    """
    labels, scores = _gdeval_tables(qrels, run)
    seen = [topic for topic, items in labels.items() if any(label > 0 for label in items.values())]
    rows = _gdeval_rows(labels, scores, k, max_grade)
    runid = run[-1].runid if run else "?????"
    count = len(seen) if complete else len(rows)
    if baseline is not None:
        base = {topic: (ndcg, err) for topic, ndcg, err in _gdeval_rows(labels, _gdeval_tables([], baseline)[1], k,
                                                                         max_grade)}
        done = {topic for topic, _, _ in rows}
        if complete:
            rows += [(topic, 0.0, 0.0) for topic in sorted(set(seen) - done, key=topic_key)]
        rows = [(topic, risk_weighted(ndcg, base.get(topic, (0.0, 0.0))[0], risk_alpha),
                 risk_weighted(err, base.get(topic, (0.0, 0.0))[1], risk_alpha)) for topic, ndcg, err in rows]
        runid = f"{runid} (rel to. {baseline[-1].runid}; rs=1+a; a={risk_alpha_text})"
    ndcg_total = err_total = 0.0
    for _, ndcg_value, err_value in rows:
        ndcg_total += ndcg_value
        err_total += err_value
    mean = (ndcg_total / count, err_total / count) if count else (ndcg_total, err_total)
    return runid, rows, mean


def _gdeval_rows(labels, scores, k: int, max_grade: int) -> list[tuple[str, float, float]]:
    rows = []
    for topic in sorted(scores, key=topic_key):
        values = topic_values(scores[topic], labels.get(topic, {}), k, max_grade)
        if values is not None:
            rows.append((topic, *values))
    return rows


def _gdeval_tables(qrels, run) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    from ..errors import InputError

    labels: dict[str, dict[str, int]] = {}
    for line in qrels:
        items = labels.setdefault(line.topic, {})
        if line.item in items:
            raise InputError(f"gdeval qrels: item {line.item} is judged twice for topic {line.topic} (gdeval would "
                             "count it twice in the ideal ranking)")
        items[line.item] = line.label
    scores: dict[str, dict[str, float]] = {}
    for line in run:
        ranked_items = scores.setdefault(line.topic, {})
        if line.item in ranked_items:
            raise InputError(f"gdeval run: item {line.item} is listed twice for topic {line.topic}")
        ranked_items[line.item] = line.score
    return labels, scores
