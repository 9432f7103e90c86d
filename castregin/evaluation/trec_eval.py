"""trec_eval's own output, line for line: what ``castregin trec_eval`` prints.

trec_eval 9.0.8 prints, for each query in both the qrels and the run (query ids in byte order) and
only with ``-q``, every requested measure that has a per-query value; then, unless ``-n``, the
``all`` line of every requested measure. Measures come in trec_eval's table order (not the order of
``-m``), each family with its parameters sorted. The numbers are castregin's (the same as
:func:`castregin.evaluation.evaluate.evaluate`: the engine and trec_eval's C code, averaged as
trec_eval's ``calc_avg``); this module only decides which lines there are and in which order.

Two lines are text: ``runid`` (the tag of the run's last line, printed with the summary) and
``relstring`` (per query: one character per retrieved item of the first N, the label digit, ``>``
above 9, ``-`` for an item the qrels do not list).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..data import Qrels, Run
from ..errors import InputError
from .evaluate import evaluate_rows
from .measures import TrecEvalFamily, trec_eval_families

#: trec_eval's relevance values for items outside the pool and pooled but unjudged (``RELVALUE_*``).
_NONPOOL, _UNJUDGED = -1, -2


@dataclass(frozen=True)
class TrecEvalOptions:
    """trec_eval's options: ``-m`` (``measures``), ``-l``, ``-c``, ``-q``, ``-n`` (``summary=False``),
    ``-M`` (``max_per_query``) and ``-J``."""

    measures: tuple[str, ...] = ("official",)
    rel_level: int = 1
    complete: bool = False
    per_query: bool = False
    summary: bool = True
    max_per_query: int | None = None
    judged_only: bool = False


#: One output line: measure name, query id (or ``all``), and an int, a float or a text value.
TrecEvalLine = tuple[str, str, "int | float | str"]


def truncate_run(run: Run, depth: int) -> Run:
    """The run with each turn cut to its first ``depth`` items in trec_eval's order (``-M``)."""
    scores = {}
    for turn in run.scores:
        kept = run.ranked(turn)[:depth]
        scores[turn] = {item: run.scores[turn][item] for item in kept}
    return Run(run.tag, scores, {}, run.source)


def relstring(run: Run, qrels: Qrels, turn: str, depth: int, judged_only: bool = False) -> str:
    """trec_eval's ``relstring`` of one turn: a character per item of the first ``depth``."""
    labels = qrels.labels.get(turn, {})
    ranked = run.ranked(turn)
    if judged_only:
        ranked = [item for item in ranked if item in labels]
    chars = []
    for item in ranked[:depth]:
        label = labels.get(item, _NONPOOL)
        if label > 9:
            chars.append(">")
        elif label >= 0:
            chars.append(str(label))
        else:
            chars.append({_NONPOOL: "-", _UNJUDGED: "."}.get(label, "<"))
    return "'" + "".join(chars) + "'"


def _values(run: Run, qrels: Qrels, families: Sequence[TrecEvalFamily], options: TrecEvalOptions) -> dict:
    """``{(measure name, turn or "all"): value}`` for every numeric measure asked for."""
    measures = [m for f in families for m in f.measures]
    if not measures:
        return {}
    rows = evaluate_rows(run, qrels, measures, options.rel_level, options.complete, per_turn=True)
    return {(measure, turn): value for _, _, measure, turn, value in rows}


def _number(family: TrecEvalFamily, value: float) -> int | float:
    # trec_eval prints counts with %ld of a (long) cast: truncation toward zero.
    return int(value) if family.family.integer else value


def trec_eval_lines(qrels: Qrels, run: Run, options: TrecEvalOptions = TrecEvalOptions(),
                    runid: str | None = None) -> list[TrecEvalLine]:
    """The lines ``trec_eval [options] QRELS RUN`` prints, as ``(measure, query, value)``.

    ``runid`` is what trec_eval prints as the run's id: the tag of the file's last line (default:
    ``run.tag``). A run sharing no query with the qrels is an :class:`InputError`, as trec_eval stops
    there too.
    """
    families = trec_eval_families(options.measures, options.rel_level, options.judged_only)
    if options.max_per_query is not None:
        run = truncate_run(run, options.max_per_query)
    queries = sorted(turn for turn in run.scores if turn in qrels.labels)
    if not queries:
        raise InputError(f"no query has both results ({run.source or 'run'}) and relevance information "
                         f"({qrels.source or 'qrels'}); check the query ids")
    values = _values(run, qrels, families, options)
    lines: list[TrecEvalLine] = []
    if options.per_query:
        for turn in queries:
            for family in families:
                if family.relstring_depth is not None:
                    lines.append((family.relstring_name, turn,
                                  relstring(run, qrels, turn, family.relstring_depth, options.judged_only)))
                elif family.family.per_turn:
                    lines.extend((m.name, turn, _number(family, values[m.name, turn])) for m in family.measures)
    if options.summary:
        for family in families:
            if family.family.name == "runid":
                lines.append(("runid", "all", run.tag if runid is None else runid))
            else:
                lines.extend((m.name, "all", _number(family, values[m.name, "all"])) for m in family.measures)
    return lines



# --- -R prefs, qrels_prefs and qrels_jg ---------------------------------------------------------------------


def trec_eval_judgment_lines(judgments, run: Run, rel_info_format: str, options: TrecEvalOptions = TrecEvalOptions(),
                             runid: str | None = None) -> list[TrecEvalLine]:
    """The lines ``trec_eval -R FORMAT [options] JUDGMENTS RUN`` prints for trec_eval's other relevance
    formats: ``prefs`` and ``qrels_prefs`` (``judgments``: a
    :class:`~castregin.formats.preferences.PreferenceJudgments`) and ``qrels_jg`` (a
    :class:`~castregin.formats.preferences.GroupQrels`); the measures are those of
    :mod:`castregin.evaluation.preferences`, the layout and averaging those of :func:`trec_eval_lines`.

    The judgments are checked whole first (what trec_eval cannot evaluate is an :class:`InputError`,
    in any topic). ``-l`` and ``-J`` change only the qrels_jg measures, as in trec_eval; preferences
    rank ties by document id ascending, qrels_jg by id descending, both before ``-M`` cuts the ranking.
    """
    from . import preferences

    families = preferences.preference_families(options.measures, rel_info_format)
    by_groups = rel_info_format == "qrels_jg"
    (preferences.check_group_qrels if by_groups else preferences.check_preferences)(judgments)
    if options.max_per_query is not None and options.max_per_query < 0:
        raise InputError(f"-M {options.max_per_query}: a number of documents cannot be negative (trec_eval crashes)")
    queries = sorted(turn for turn in run.scores if turn in judgments.topics)
    if not queries:
        raise InputError(f"no query has both results ({run.source or 'run'}) and relevance information "
                         f"({judgments.source or 'judgments'}); check the query ids")
    wanted = {family.name for family in families}
    values: dict[tuple[str, str], float | int] = {}
    for turn in queries:
        scores = run.scores[turn]
        if by_groups:
            ranking = run.ranked(turn)[:options.max_per_query]
            topic = preferences.group_values(judgments.topics[turn], ranking, families, options.rel_level,
                                             options.judged_only)
        else:
            ranking = sorted(scores, key=lambda doc: (-scores[doc], doc))[:options.max_per_query]
            where = f"{judgments.source or 'judgments'}: topic {turn}, "
            topic = preferences.preference_values(
                preferences.topic_preferences(judgments.topics[turn], ranking, where,
                                              columns=bool(wanted & {"prefs_pair", "prefs_pair_ret", "prefs_pair_imp"})),
                wanted, where)
        values.update(((name, turn), value) for name, value in topic.items())
    num_queries = len(judgments.topics) if options.complete else len(queries)
    lines: list[TrecEvalLine] = []
    measured = [f for f in families if f.name not in preferences.COMMON_FAMILIES]
    if options.per_query:
        for turn in queries:
            lines.extend((name, turn, values[name, turn]) for f in measured for name in f.names())
    if options.summary:
        for family in families:
            if family.name == "runid":
                lines.append(("runid", "all", run.tag if runid is None else runid))
            elif family.name == "num_q":
                lines.append(("num_q", "all", num_queries))
            elif family.name in preferences.PREFERENCE_COUNTS:
                lines.append((family.name, "all", sum(values[family.name, turn] for turn in queries)))
            else:
                for name in family.names():
                    total = 0.0
                    for turn in queries:  # in order, as trec_eval adds them
                        total += values[name, turn]
                    lines.append((name, "all", total / num_queries))
    return lines
