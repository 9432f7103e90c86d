"""The engine's measures in plain Python, for runs too small to pay for numpy and pyarrow.

``castregin evaluate`` on small files (:data:`castregin.evaluation.evaluate.SMALL_INPUT_BYTES`)
reads them with the line reader and scores them here: importing numpy and pyarrow alone takes a
quarter of a second, more than scoring tens of thousands of lines in Python. The numbers are
those of :mod:`castregin.evaluation.engine`, rule for rule (tests check both against trec_eval's
C code): items ranked by score compared as doubles (or 32-bit floats: see
:mod:`castregin.evaluation.ranking`), ties by item id in descending byte order (Judged@k: 64-bit
scores, ties ascending, as ir_measures; labelled below 0 is unjudged, as trec_eval has it);
relevant means judged with a label >= ``rel``; gains are the positive labels over
``log2(rank + 1)`` from the C library; sums added left to right in ranking order, as trec_eval's
loops add them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .measures import EngineSpec
from .ranking import DEFAULT_BITS, ranked_items


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else 0.0


def _ndcg(labels: list[int | None], ideal: list[int], cutoff: int | None) -> float:
    dcg = 0.0
    for position, label in enumerate(labels[:cutoff]):
        if label is not None and label > 0:
            dcg += label / math.log2(position + 2)
    best = 0.0
    for position, label in enumerate(ideal[:cutoff]):
        best += label / math.log2(position + 2)
    return dcg / best if best > 0 else dcg


def _binary(spec: EngineSpec, labels: list[int | None], judged: Mapping[str, int]) -> float:
    """P@k, R@k, Success@k, Rprec, RR or AP of one turn; ``labels`` in ranking order (None: unjudged)."""
    relevant = [label is not None and label >= spec.rel for label in labels]
    num_rel = sum(1 for label in judged.values() if label >= spec.rel)
    if spec.kind in ("P", "R", "Success"):
        found = sum(relevant[:spec.cutoff])
        if spec.kind == "P":
            return found / float(spec.cutoff)
        return float(found > 0) if spec.kind == "Success" else _ratio(found, num_rel)
    if spec.kind == "Rprec":
        return _ratio(sum(relevant[:num_rel]), num_rel)
    if spec.kind == "RR":
        return next((1.0 / (position + 1) for position, hit in enumerate(relevant) if hit), 0.0)
    if spec.kind == "AP":
        total, found = 0.0, 0
        for position, hit in enumerate(relevant):
            if hit:
                found += 1
                total += found / (position + 1)
        return _ratio(total, num_rel)
    raise ValueError(f"the engine does not compute {spec.kind}")


def turn_values(scores: Mapping[str, float], judged: Mapping[str, int], specs: Sequence[EngineSpec],
                score_bits: int = DEFAULT_BITS) -> list[float]:
    """The value of each spec on one turn: ``scores`` the run's items, ``judged`` the qrels' labels;
    scores compared as ``score_bits``-bit floats (see :mod:`castregin.evaluation.ranking`)."""
    trec_order = ranked_items(scores, score_bits)
    labels = [judged.get(item) for item in trec_order]
    ideal = sorted((label for label in judged.values() if label > 0), reverse=True)
    values = []
    for spec in specs:
        if spec.kind == "JudgedShare":  # engine.JUDGED_SHARE: any label, trec_eval's order
            top = trec_order[:spec.cutoff]
            values.append(sum(1 for item in top if item in judged) / len(top))
        elif spec.kind == "Judged":
            order = sorted(scores, key=lambda item: (-scores[item], item))[:spec.cutoff]
            values.append(sum(1 for item in order if judged.get(item, -1) >= 0) / len(order))
        elif spec.kind == "nDCG":
            values.append(_ndcg(labels, ideal, spec.cutoff))
        else:
            values.append(_binary(spec, labels, judged))
    return values


def evaluate_run(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                 specs: Sequence[EngineSpec], score_bits: int = DEFAULT_BITS) -> list[dict[str, float]]:
    """Per-turn values of each spec, ``[{turn: value}]``, for the run's turns that the qrels judge.

    The same as :func:`castregin.evaluation.engine.evaluate_run` on the same run and qrels.
    """
    results: list[dict[str, float]] = [{} for _ in specs]
    for turn, scores in run.items():
        if turn in qrels:
            for result, value in zip(results, turn_values(scores, qrels[turn], specs, score_bits)):
                result[turn] = value
    return results
