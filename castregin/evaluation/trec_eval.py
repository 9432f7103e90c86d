"""trec_eval's own output, line for line: what ``castregin trec_eval`` prints.

trec_eval 9.0.8 prints, for each query in both the qrels and the run (query ids in byte order) and
only with ``-q``, every requested measure that has a per-query value; then, unless ``-n``, the
``all`` line of every requested measure. Measures come in trec_eval's table order (not the order of
``-m``), each family with its parameters as trec_eval reads and names them. The numbers come from
:mod:`castregin.evaluation.trec_rules` (trec_eval's rules in Python, no C code); this module only
decides which lines there are and in which order.

Two lines are text: ``runid`` (the tag of the run's last line, printed with the summary) and
``relstring`` (per query: one character per retrieved item of the first N, the label digit, ``>``
above 9, ``-`` for an item the qrels do not list, ``.`` for one labelled below 0). With ``-Z``,
every numeric line is a z-score, printed with four decimals and a ``Z`` before its name.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..data import Qrels, Run
from ..errors import InputError
from . import trec_rules
from .trec_rules import LONG_MAX, Settings, ZScores


@dataclass(frozen=True)
class TrecEvalOptions:
    """trec_eval's options: ``-m`` (``measures``), ``-l``, ``-c``, ``-q``, ``-n`` (``summary=False``),
    ``-M`` (``max_per_query``), ``-J``, ``-N`` (``num_docs``) and ``-Z`` (``zscores``)."""

    measures: tuple[str, ...] = ("official",)
    rel_level: int = 1
    complete: bool = False
    per_query: bool = False
    summary: bool = True
    max_per_query: int | None = None
    judged_only: bool = False
    num_docs: int = 0
    zscores: ZScores | None = None


#: One output line: measure name, query id (or ``all``), and an int, a float or a text value.
TrecEvalLine = tuple[str, str, "int | float | str"]


def trec_eval_lines(qrels: Qrels, run: Run, options: TrecEvalOptions = TrecEvalOptions(),
                    runid: str | None = None) -> list[TrecEvalLine]:
    """The lines ``trec_eval [options] QRELS RUN`` prints, as ``(measure, query, value)``.

    ``runid`` is what trec_eval prints as the run's id: the tag of the file's last line (default:
    ``run.tag``). A run sharing no query with the qrels is an :class:`InputError`, as trec_eval stops
    there too; so is input on which trec_eval fails or crashes (see :mod:`castregin.evaluation.trec_rules`).
    """
    marked = trec_rules.mark_measures(options.measures)
    if options.max_per_query is not None and options.max_per_query < 0:
        raise InputError(f"-M {options.max_per_query}: the number of items per query must be 0 or more "
                         "(trec_eval crashes on a negative one)")
    if not any(turn in qrels.labels for turn in run.scores):
        raise InputError(f"no query has both results ({run.source or 'run'}) and relevance information "
                         f"({qrels.source or 'qrels'}); check the query ids")
    settings = Settings(options.rel_level, options.judged_only,
                        LONG_MAX if options.max_per_query is None else options.max_per_query, options.num_docs)
    evaluation = trec_rules.evaluate(qrels.labels, run.scores, marked, settings, options.complete, options.zscores,
                                     qrels.source)
    as_z = options.zscores is not None
    lines: list[TrecEvalLine] = []
    if options.per_query:
        for topic in evaluation.topics:
            for m, values in zip(marked, topic.values):
                if isinstance(values, str):
                    lines.append((m.names[0], topic.topic, f"'{values}'"))
                elif m.measure.per_topic:
                    lines.extend((name, topic.topic, _number(m, value, as_z)) for name, value in zip(m.names, values))
    if options.summary:
        for m, values in zip(marked, evaluation.summary):
            if m.measure.name == "runid":
                lines.append(("runid", "all", run.tag if runid is None else runid))
            elif m.measure.name != "relstring":
                lines.extend((name, "all", _number(m, value, as_z)) for name, value in zip(_names(m), values))
    return lines


def _names(m: trec_rules.Marked) -> tuple[str, ...]:
    return m.names or (m.measure.name,)


def _number(m: trec_rules.Marked, value: float, as_z: bool) -> int | float:
    # trec_eval prints counts with %ld of a (long) cast, truncating toward zero; z-scores with %6.4f.
    return int(value) if m.measure.integer and not as_z else value
