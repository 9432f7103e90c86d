"""trec_eval's evaluation loop in plain Python: small inputs, measures without a vectorised form, trec_eval.

Every measure's rule is trec_eval's rule for it on one turn's ranking
(:mod:`castregin.evaluation.measures`), on the ranking :mod:`castregin.evaluation.trec_rules` forms;
:func:`evaluate` runs them as trec_eval's main loop does (``trec_eval.c``: every topic, its values,
``-Z``, then the ``all`` values), and :func:`evaluate_run` groups the measures of one evaluation for it.
``castregin evaluate`` on small files (:func:`castregin.evaluation.small.small_inputs`) reads them
with the line reader and scores them here: importing numpy and pyarrow alone takes a quarter of a
second, more than scoring tens of thousands of lines in Python. The numbers are those of the engine
(:mod:`castregin.evaluation.engine`), rule for rule: the tests check both against trec_eval's C code.

Measures that take any label (:attr:`~castregin.evaluation.measures.Definition.any_label`) score a
turn labelled only below 0 as one without a relevant item; with any other measure, what trec_eval
cannot evaluate is refused in one line (labels above :data:`~castregin.limits.MAX_TREC_LABEL`, a turn
labelled only below 0), as the engine's path refuses it (:func:`castregin.evaluation.trec_rules.refuse_unevaluable`).
"""

from __future__ import annotations

from ..errors import InputError
from .ranking import DEFAULT_BITS
from .trec_rules import Settings, TrecEvalRefusal, check_labels, rank_topic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .measures import Marked, Measure
    from .zscores import ZScores


def evaluate_run(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                 measures: Sequence[Measure], score_bits: int = DEFAULT_BITS,
                 source: str | None = None, ranks: Mapping[str, Mapping[str, float]] | None = None
                 ) -> list[dict[str, float]]:
    """Per-turn values of each measure, ``[{turn: value}]``, for the run's turns that the qrels judge.

    Items are ranked on ``score_bits``-bit scores (see :mod:`castregin.evaluation.ranking`), once per
    relevance level, judged-only flag and gain map among the measures (those the level does not concern
    join any; ndeval's measures with ``order='rank'`` rank by ``ranks``, the run's rank column, instead of
    the scores); those groups with a measure the engine lacks refuse what trec_eval cannot evaluate,
    ``source`` naming the qrels; the inferred measures are refused on ``qrels`` whose turns' labels carry
    no strata (:class:`~castregin.data.StratumLabels`). The same as
    :func:`castregin.evaluation.engine.evaluate_run` on the same run and qrels.
    """
    stratified = [m.name for m in measures if m.definition.stratified]
    if stratified and not all(hasattr(labels, "strata") for labels in qrels.values()):
        from .measures.inferred import missing_strata  # here: that module is loaded for those measures only

        raise InputError(missing_strata(", ".join(stratified)), source=source)
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
        settings = Settings(rel, judged_only, score_bits=score_bits)
        # trec_eval's limits bind its own measures only (gdeval's and ndeval's take a turn labelled only below 0),
        # and not those that take any label (Definition.any_label).
        strict = not all(measures[i].any_label or not measures[i].definition.trec_name for i in members)
        scores = run if order == "score" else _rank_scores(run, ranks)
        evaluation = evaluate(labels, scores, [measures[i].marked() for i in members], settings,
                               source=source, strict=strict)
        for index, position in enumerate(members):
            results[position] = {topic.topic: _number(topic.values[index][0]) for topic in evaluation.topics}
    return results


def _rank_scores(run: Mapping[str, Mapping[str, float]], ranks: Mapping[str, Mapping[str, float]] | None
                 ) -> dict[str, dict[str, float]]:
    """Minus each item's rank, as scores: ndeval's order (rank ascending), where two ranks of a turn must differ."""
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


# --- trec_eval.c's main loop -------------------------------------------------------------------------------------


class TopicValues:
    """One topic's values: per marked measure, its values (a text for relstring)."""

    __slots__ = ("topic", "values")

    def __init__(self, topic: str, values: list[list[float] | str]):
        self.topic, self.values = topic, values


class Evaluation:
    """What trec_eval computes: each evaluated topic's values, and the ``all`` values of every measure."""

    __slots__ = ("marked", "summary", "topics")

    def __init__(self, marked: list[Marked], topics: list[TopicValues], summary: list[list[float]]):
        self.marked, self.topics, self.summary = marked, topics, summary


def evaluate(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], marked: Sequence[Marked],
             settings: Settings, complete: bool = False, zscores: ZScores | None = None,
             source: str | None = None, strict: bool = True) -> Evaluation:
    """Every marked measure on every topic both ``run`` and ``qrels`` have, by its rule, and their ``all`` values.

    ``complete`` is ``-c`` (means over every qrels topic), ``zscores`` is ``-Z``. ``source`` names
    the qrels in refusals. ``strict`` refuses what trec_eval cannot evaluate (labels above
    :data:`~castregin.limits.MAX_TREC_LABEL`, a topic labelled only below 0); without it (the
    measures whose rules, as the engine, take any label) such a topic has nothing relevant.
    """
    topics = sorted(topic for topic in run if topic in qrels)
    if strict:
        check_labels(qrels, topics, source)
    names = [name for m in marked for name in m.slot_names]
    accumulated = [0.0] * len(names)
    out = []
    for topic in topics:
        try:
            ranking = rank_topic(topic, run[topic], qrels[topic], settings, strict)
        except TrecEvalRefusal as refusal:
            raise TrecEvalRefusal(f"{source}: {refusal}" if source else str(refusal)) from None
        values: list[list[float] | str] = []
        slots: list[float] = []
        for m in marked:
            rule = m.definition.rule
            result = rule(ranking, settings, m.params) if rule is not None else []
            values.append(result)
            if isinstance(result, str):  # relstring: a slot of its own, as in trec_eval's -Z search
                slots.append(0.0)
            else:
                slots.extend(result)
        if zscores is not None:
            from .zscores import zscore_values  # here: -Z only

            slots = zscore_values(zscores, topic, names, slots)
            values = _refill(values, slots)
        for index, value in enumerate(slots):
            accumulated[index] += value
        out.append(TopicValues(topic, values))
    averaged = len(qrels) if complete else len(topics)

    def positive_lines() -> int:
        return sum(1 for items in qrels.values() for label in items.values() if label > 0)

    summary = []
    position = 0
    for m in marked:
        count = len(m.slot_names)
        part = accumulated[position:position + count]
        position += count
        summary.append([m.definition.summary(total, averaged, len(topics), complete, positive_lines) for total in part])
    return Evaluation(list(marked), out, summary)


def _refill(values: list, slots: list[float]) -> list:
    out: list[str | list[float]] = []
    position = 0
    for value in values:
        if isinstance(value, str):
            out.append(value)
            position += 1
        else:
            out.append(slots[position:position + len(value)])
            position += len(value)
    return out
