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
from typing import TYPE_CHECKING

from ..errors import InputError
from .ranking import DEFAULT_BITS, ranked_items

if TYPE_CHECKING:
    from ..formats.diversity import DiversityJudgments, DiversityRun

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
    return ranked_values([max(labels.get(item, 0), 0) for item in ranked_items(scores, bits)], ideal, k, max_grade)


def ranked_values(grades: Sequence[int], ideal: Sequence[int], k: int, max_grade: int = GDEVAL_MAX_GRADE
                  ) -> tuple[float, float]:
    """(nDCG@k, ERR@k) of a ranking's grades (its first k suffice) over the ideal ranking's (the positive labels,
    largest first)."""
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
                raise InputError(f"{what}: topics {other} and {topic} are one number to the original, which would "
                                 "mix them; write each topic's number one way")


def risk_weighted(value: float, base: float, alpha: float) -> float:
    """gdeval's ``riskWeighted`` and ndeval's ``RiskBased``: the difference from the baseline, losses weighted by
    ``1 + alpha`` (ndeval's test, ``value >= base``: a nan value stays nan either way)."""
    return value - base if value >= base else (alpha + 1) * (value - base)


def gdeval_report(qrels: DiversityJudgments, run: DiversityRun, k: int = GDEVAL_DEPTH, complete: bool = False,
                  max_grade: int = GDEVAL_MAX_GRADE, baseline: DiversityRun | None = None, risk_alpha: float = 0.0,
                  risk_alpha_text: str = "0") -> tuple[str, list[tuple[str, float, float]], tuple[float, float]]:
    """What gdeval.pl prints: the run id, ``(topic, nDCG@k, ERR@k)`` per topic, and the mean (``amean``).

    ``qrels`` and ``run`` are read by :func:`castregin.formats.diversity.gdeval_qrels` and
    :func:`~castregin.formats.diversity.gdeval_run`. A topic is printed when the run ranks it and the qrels
    give it a positive label; the mean is over those topics, or with ``complete`` over every qrels topic
    with a positive label. With ``baseline`` (a run's lines: ``-baseline``), each value is the difference
    from the baseline's (0 where it lacks the topic), losses weighted by ``1 + risk_alpha`` (``-riskAlpha``;
    ``risk_alpha_text`` as given, for the run id), and with ``complete`` the qrels topics the run lacks follow,
    scored 0 less the baseline.
    """
    positive = _positive_labels(qrels)
    _refuse_repeats(run)
    seen = list(positive)
    rows = _gdeval_rows(positive, run, k, max_grade)
    runid = run.last_runid or "?????"
    count = len(seen) if complete else len(rows)
    if baseline is not None:
        _refuse_repeats(baseline)
        base = {topic: (ndcg, err) for topic, ndcg, err in _gdeval_rows(positive, baseline, k, max_grade)}
        done = {topic for topic, _, _ in rows}
        if complete:
            rows += [(topic, 0.0, 0.0) for topic in sorted(set(seen) - done, key=topic_key)]
        rows = [(topic, risk_weighted(ndcg, base.get(topic, (0.0, 0.0))[0], risk_alpha),
                 risk_weighted(err, base.get(topic, (0.0, 0.0))[1], risk_alpha)) for topic, ndcg, err in rows]
        runid = f"{runid} (rel to. {baseline.last_runid}; rs=1+a; a={risk_alpha_text})"
    ndcg_total = err_total = 0.0
    for _, ndcg_value, err_value in rows:
        ndcg_total += ndcg_value
        err_total += err_value
    mean = (ndcg_total / count, err_total / count) if count else (ndcg_total, err_total)
    return runid, rows, mean


def _gdeval_rows(positive: dict[str, dict[str, int]], run: DiversityRun, k: int, max_grade: int
                 ) -> list[tuple[str, float, float]]:
    """``(topic, nDCG@k, ERR@k)`` of each run topic with a positive label, in topic order."""
    import numpy as np

    from ..arrays import arrow_indices

    # Topic by topic, scores descending (-0.0 is 0.0, as in Python); ties by item id are sorted below.
    order = np.lexsort((-(run.scores + 0.0), run.topic_codes))
    starts = np.searchsorted(run.topic_codes[order], np.arange(len(run.topics) + 1))
    scores = run.scores[order]
    # A topic's first k in gdeval's order are among its lines scored at least its k-th score.
    chosen = []
    for code, topic in enumerate(run.topics):
        begin, end = int(starts[code]), int(starts[code + 1])
        if topic in positive:
            if end - begin > k:
                end = begin + int(np.count_nonzero(scores[begin:end] >= scores[begin + k - 1]))
            chosen.append((topic, begin, end))
    lines = np.concatenate([order[begin:end] for _, begin, end in chosen]) if chosen else np.zeros(0, dtype=np.int64)
    names = run.items.take(arrow_indices(lines)).to_pylist()
    values = run.scores[lines].tolist()
    by_topic = {}
    offset = 0
    for topic, begin, end in chosen:
        labels = positive[topic]
        top = sorted(zip(values[offset:offset + end - begin], names[offset:offset + end - begin], strict=True),
                     reverse=True)[:k]
        offset += end - begin
        ideal = sorted(labels.values(), reverse=True)
        by_topic[topic] = ranked_values([labels.get(item, 0) for _, item in top], ideal, k, max_grade)
    return [(topic, *by_topic[topic]) for topic in sorted(by_topic, key=topic_key)]


def _positive_labels(qrels: DiversityJudgments) -> dict[str, dict[str, int]]:
    """Each topic's positive labels, ``{topic: {item: label}}`` (topics without one left out), in the order of the
    topics' first lines; an item judged twice in a topic is an error, as gdeval would count it twice."""
    import numpy as np

    from ..arrays import arrow_indices
    from ..formats.diversity import first_repeat, item_codes

    _, items = item_codes(qrels.items)
    repeat = first_repeat(qrels.topic_codes, items)
    if repeat is not None:
        topic = qrels.topics[qrels.topic_codes[repeat]]
        raise InputError(f"gdeval qrels: item {qrels.items[repeat].as_py()} is judged twice for topic {topic} (gdeval "
                         "would count it twice in the ideal ranking)")
    lines = np.flatnonzero(qrels.labels > 0)
    names = qrels.items.take(arrow_indices(lines)).to_pylist()
    found: dict[int, dict[str, int]] = {}
    for code, name, label in zip(qrels.topic_codes[lines].tolist(), names, qrels.labels[lines].tolist(), strict=True):
        found.setdefault(code, {})[name] = label
    return {qrels.topics[code]: found[code] for code in sorted(found)}


def _refuse_repeats(run: DiversityRun) -> None:
    from ..formats.diversity import first_repeat, item_codes
    from ..formats.turn_batches import by_batches_of_turns

    if not any(by_batches_of_turns(run.items, run.topic_codes, len(run.topics), lambda *batch: batch[-1])):
        return  # the usual case, found hashing a batch of topics at a time
    _, items = item_codes(run.items)
    repeat = first_repeat(run.topic_codes, items)
    if repeat is not None:
        raise InputError(f"gdeval run: item {run.items[repeat].as_py()} is listed twice for topic "
                         f"{run.topics[run.topic_codes[repeat]]}")
