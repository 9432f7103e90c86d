"""Per-turn values by each measure's rule, in plain Python: small inputs, and the measures the engine lacks.

Every measure's rule is trec_eval's rule for it on one turn's ranking
(:mod:`castregin.evaluation.measures`); this runs them through trec_eval's evaluation loop
(:func:`castregin.evaluation.trec_rules.evaluate`). ``castregin evaluate`` on small files
(:func:`castregin.evaluation.small.small_inputs`) reads them with the line reader and scores
them here: importing numpy and pyarrow alone takes a quarter of a second, more than scoring tens of
thousands of lines in Python. The numbers are those of the engine (:mod:`castregin.evaluation.engine`),
rule for rule: the tests check both against trec_eval's C code.

Measures the engine computes take any label, and score a turn labelled only below 0 as one without
a relevant item; with any other measure, what trec_eval cannot evaluate is refused in one line
(labels above :data:`~castregin.limits.MAX_TREC_LABEL`, a turn labelled only below 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from . import trec_rules
from .measures import Measure
from .ranking import DEFAULT_BITS


def evaluate_run(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                 measures: Sequence[Measure], score_bits: int = DEFAULT_BITS,
                 source: str | None = None) -> list[dict[str, float]]:
    """Per-turn values of each measure, ``[{turn: value}]``, for the run's turns that the qrels judge.

    Items are ranked on ``score_bits``-bit scores (see :mod:`castregin.evaluation.ranking`), once per
    relevance level, judged-only flag and gain map among the measures (those the level does not concern
    join any); those groups with a measure the engine lacks refuse what trec_eval cannot evaluate,
    ``source`` naming the qrels. The same as :func:`castregin.evaluation.engine.evaluate_run` on the same
    run and qrels.
    """
    results: list[dict[str, float]] = [{} for _ in measures]
    groups: dict[tuple, list[int]] = {}
    for position, measure in enumerate(measures):
        if measure.definition.uses_level:
            groups.setdefault((measure.rel, measure.judged_only, measure.gains), []).append(position)
    for position, measure in enumerate(measures):
        if not measure.definition.uses_level:
            # Any level will do: the turn is ranked once for it and the others alike.
            key = next((key for key in groups if key[1:] == (measure.judged_only, measure.gains)),
                       (measure.rel, measure.judged_only, measure.gains))
            groups.setdefault(key, []).append(position)
    for (rel, judged_only, gains), members in groups.items():
        labels = qrels
        if gains is not None:
            mapping = dict(gains)
            labels = {t: {i: mapping.get(label, label) for i, label in items.items()} for t, items in qrels.items()}
        settings = trec_rules.Settings(rel, judged_only, score_bits=score_bits)
        strict = not all(measures[i].in_engine for i in members)
        evaluation = trec_rules.evaluate(labels, run, [measures[i].marked() for i in members], settings,
                                         source=source, strict=strict)
        for index, position in enumerate(members):
            results[position] = {topic.topic: _number(topic.values[index][0]) for topic in evaluation.topics}
    return results


def _number(value: float | str) -> float:
    """A measure's value, which only ``runid`` (never asked for here) gives as text."""
    if isinstance(value, str):
        raise ValueError(f"a text value ({value!r}) where a measure's number is expected")
    return value
