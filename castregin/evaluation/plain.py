"""Per-turn values by each measure's rule, in plain Python: small inputs (and any measure without a vectorised form).

Every measure's rule is trec_eval's rule for it on one turn's ranking
(:mod:`castregin.evaluation.measures`); this runs them through trec_eval's evaluation loop
(:func:`castregin.evaluation.trec_rules.evaluate`). ``castregin evaluate`` on small files
(:func:`castregin.evaluation.small.small_inputs`) reads them with the line reader and scores
them here: importing numpy and pyarrow alone takes a quarter of a second, more than scoring tens of
thousands of lines in Python. The numbers are those of the engine (:mod:`castregin.evaluation.engine`),
rule for rule: the tests check both against trec_eval's C code.

Measures that take any label (:attr:`~castregin.evaluation.measures.Definition.any_label`) score a
turn labelled only below 0 as one without a relevant item; with any other measure, what trec_eval
cannot evaluate is refused in one line (labels above :data:`~castregin.limits.MAX_TREC_LABEL`, a turn
labelled only below 0), as the engine's path refuses it (:func:`castregin.evaluation.trec_rules.refuse_unevaluable`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from . import trec_rules
from .measures import Measure
from .ranking import DEFAULT_BITS


def evaluate_run(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                 measures: Sequence[Measure], score_bits: int = DEFAULT_BITS,
                 source: str | None = None, ranks: Mapping[str, Mapping[str, float]] | None = None
                 ) -> list[dict[str, float]]:
    """Per-turn values of each measure, ``[{turn: value}]``, for the run's turns that the qrels judge.

    Items are ranked on ``score_bits``-bit scores (see :mod:`castregin.evaluation.ranking`), once per
    relevance level, judged-only flag and gain map among the measures (those the level does not concern
    join any; ndeval's measures with ``order='rank'`` rank by ``ranks``, the run's rank column, instead of
    the scores); those groups with a measure the engine lacks refuse what trec_eval cannot evaluate,
    ``source`` naming the qrels. The same as :func:`castregin.evaluation.engine.evaluate_run` on the same
    run and qrels.
    """
    results: list[dict[str, float]] = [{} for _ in measures]
    groups: dict[tuple, list[int]] = {}
    for position, measure in enumerate(measures):
        if measure.definition.uses_level:
            groups.setdefault((measure.rel, measure.judged_only, measure.gains, measure.option("order", "score")),
                              []).append(position)
    for position, measure in enumerate(measures):
        if not measure.definition.uses_level:
            # Any level will do: the turn is ranked once for it and the others alike.
            rest = (measure.judged_only, measure.gains, measure.option("order", "score"))
            key = next((key for key in groups if key[1:] == rest), (measure.rel, *rest))
            groups.setdefault(key, []).append(position)
    for (rel, judged_only, gains, order), members in groups.items():
        labels = qrels
        if gains is not None:
            mapping = dict(gains)
            labels = {t: {i: mapping.get(label, label) for i, label in items.items()} for t, items in qrels.items()}
        settings = trec_rules.Settings(rel, judged_only, score_bits=score_bits)
        # trec_eval's limits bind its own measures only (gdeval's and ndeval's take a turn labelled only below 0),
        # and not those that take any label (Definition.any_label).
        strict = not all(measures[i].any_label or not measures[i].definition.trec_name for i in members)
        scores = run if order == "score" else _rank_scores(run, ranks)
        evaluation = trec_rules.evaluate(labels, scores, [measures[i].marked() for i in members], settings,
                                         source=source, strict=strict)
        for index, position in enumerate(members):
            results[position] = {topic.topic: _number(topic.values[index][0]) for topic in evaluation.topics}
    return results


def _rank_scores(run: Mapping[str, Mapping[str, float]], ranks: Mapping[str, Mapping[str, float]] | None
                 ) -> dict[str, dict[str, float]]:
    """Minus each item's rank, as scores: ndeval's order (rank ascending), where two ranks of a turn must differ."""
    from ..errors import InputError

    scores = {}
    for turn in run:
        given = (ranks or {}).get(turn)
        if given is None or set(given) != set(run[turn]):
            raise InputError(f"turn {turn}: order='rank' needs the run's rank column (a run read from a file)")
        if len(set(given.values())) != len(given):
            raise InputError(f"turn {turn}: two items share a rank, which order='rank' cannot order (ndeval refuses "
                             "duplicate ranks too); use order='score'")
        scores[turn] = {item: -float(rank) for item, rank in given.items()}
    return scores


def _number(value: float | str) -> float:
    """A measure's value, which only ``runid`` (never asked for here) gives as text."""
    if isinstance(value, str):
        raise ValueError(f"a text value ({value!r}) where a measure's number is expected")
    return value
