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

import math

from ..errors import InputError
from ..limits import MAX_TREC_LABEL
from . import plain
from .few_judged import warn_few_judged
from .measures import P_PAIR, mark_measures
from .ranking import DEFAULT_SCORE_PRECISION, float32, ranked_items, score_bits
from .trec_rules import LONG_MAX, Settings

TYPE_CHECKING = False  # neither typing nor dataclasses here: a ten-line ``castregin trec_eval`` loads neither
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..data import Qrels, Run
    from .measures import Marked
    from .zscores import ZScores


class TrecEvalOptions:
    """trec_eval's options: ``-m`` (``measures``), ``-l``, ``-c``, ``-q``, ``-n`` (``summary=False``),
    ``-M`` (``max_per_query``), ``-J``, ``-N`` (``num_docs``) and ``-Z`` (``zscores``); and which trec_eval
    9.0.8 ranks the scores: ``"double"`` the tag trec_eval-9.0.8, ``"float"`` the tag v9.0.8 and earlier
    (:mod:`castregin.evaluation.ranking`)."""

    __slots__ = ("complete", "judged_only", "max_per_query", "measures", "num_docs", "per_query", "rel_level",
                 "score_precision", "summary", "zscores")

    def __init__(self, measures: tuple[str, ...] = ("official",), rel_level: int = 1, complete: bool = False,
                 per_query: bool = False, summary: bool = True, max_per_query: int | None = None,
                 judged_only: bool = False, num_docs: int = 0, zscores: ZScores | None = None,
                 score_precision: str = DEFAULT_SCORE_PRECISION):
        self.measures, self.rel_level, self.complete, self.per_query = measures, rel_level, complete, per_query
        self.summary, self.max_per_query, self.judged_only = summary, max_per_query, judged_only
        self.num_docs, self.zscores, self.score_precision = num_docs, zscores, score_precision


#: trec_eval's defaults (``-m official``, ``-l 1``...).
DEFAULT_OPTIONS = TrecEvalOptions()

#: One output line: measure name, query id (or ``all``), and an int, a float or a text value.
TrecEvalLine = tuple[str, str, "int | float | str"]


def trec_eval_lines(qrels: Qrels, run: Run, options: TrecEvalOptions = DEFAULT_OPTIONS,
                    runid: str | None = None) -> list[TrecEvalLine]:
    """The lines ``trec_eval [options] QRELS RUN`` prints, as ``(measure, query, value)``.

    ``runid`` is what trec_eval prints as the run's id: the tag of the file's last line (default:
    ``run.tag``). A run sharing no query with the qrels is an :class:`InputError`, as trec_eval stops
    there too; so is input on which trec_eval fails or crashes (see :mod:`castregin.evaluation.trec_rules`).
    """
    marked = mark_measures(options.measures)
    if options.max_per_query is not None and options.max_per_query < 0:
        raise InputError(f"-M {options.max_per_query}: the number of items per query must be 0 or more "
                         "(trec_eval crashes on a negative one)")
    if not any(turn in qrels.labels for turn in run.scores):
        raise InputError(f"no query has both results ({run.source or 'run'}) and relevance information "
                         f"({qrels.source or 'qrels'}); check the query ids")
    settings = Settings(options.rel_level, options.judged_only,
                        LONG_MAX if options.max_per_query is None else options.max_per_query, options.num_docs,
                        score_bits(options.score_precision))
    evaluation = plain.evaluate(qrels.labels, run.scores, marked, settings, options.complete, options.zscores,
                                qrels.source)
    warn_few_judged(run, qrels, score_precision=options.score_precision)
    as_z = options.zscores is not None
    lines: list[TrecEvalLine] = []
    if options.per_query:
        for topic in evaluation.topics:
            for m, values in zip(marked, topic.values, strict=True):
                if isinstance(values, str):
                    lines.append((m.names[0], topic.topic, f"'{values}'"))
                elif m.definition.per_turn:
                    lines.extend((name, topic.topic, _number(m, value, as_z))
                                 for name, value in zip(m.names, values, strict=True))
    if options.summary:
        for m, values in zip(marked, evaluation.summary, strict=True):
            if m.definition.name == "runid":
                lines.append(("runid", "all", run.tag if runid is None else runid))
            elif m.definition.numeric:
                lines.extend((name, "all", _number(m, value, as_z))
                             for name, value in zip(m.slot_names, values, strict=True))
    return lines


def _number(m: Marked, value: float, as_z: bool) -> int | float:
    # trec_eval prints counts with %ld of a (long) cast, truncating toward zero; z-scores with %6.4f.
    return int(value) if m.definition.integer and not as_z else value


# --- large inputs: streamed through the engine ----------------------------------------------------------------

# Which inputs are large is decided in one place for every command, castregin.evaluation.small.small_inputs
# (runs above 1 MiB or qrels above 4 MiB, compressed files by what they decompress to). Measured with
# -m all_trec (benchmarks/generate.py's data): at 2 MB the rules take 0.19 s and 37 MB, streaming 0.24 s
# and 152 MB; at 8 MB the rules 0.51 s and 90 MB, streaming 0.28 s and 189 MB.


def stream_refusal(options: TrecEvalOptions, marked: list[Marked]) -> str | None:
    """Why the streaming path leaves these options or measures to the rules (None: it computes them all).

    The engine computes every measure of ``all_trec`` as ``-m`` names it; what it leaves to the
    rules: ``-Z``, ``-J``, ``-l`` below 1 (unjudged and unpooled items become "relevant" in trec_eval's
    comparisons) or above 1,001, ``-M 0``, gain pairs (``ndcg.1=3,2=9``), 11pt_avg's levels out of
    order and set_F with a beta of 0 or less.
    """
    if options.zscores is not None:
        return "-Z"
    if options.judged_only:
        return "-J"
    if not 1 <= options.rel_level <= MAX_TREC_LABEL + 1:
        return f"-l {options.rel_level}"
    if options.max_per_query == 0:
        return "-M 0"
    for m in marked:
        definition = m.definition
        if definition.vectorised is None and definition.name != "runid":
            return definition.name
        if definition.kind == P_PAIR and m.params:
            return f"{definition.name}'s gain pairs"
        if definition.name == "11pt_avg" and list(m.params) != sorted(m.params):
            return "11pt_avg's levels out of order"
        if definition.name == "set_F" and not (m.params and 0 < m.params[0] < math.inf):
            return "set_F's beta"
    return None


def trec_eval_file_lines(qrels_path, run_path,
                         options: TrecEvalOptions = DEFAULT_OPTIONS) -> Iterable[TrecEvalLine]:
    """:func:`trec_eval_lines` of two files: large inputs streamed through the engine where
    :func:`stream_refusal` allows (large: :func:`castregin.evaluation.small.small_inputs`), else both read whole
    and evaluated by the rules. Streamed lines are an iterator, made as they are read: read them once."""
    from ..formats.common import BYTE_ORDER_MARK, display_name, note_byte_order_mark, open_input, stem
    from ..formats.trec import parse_qrels, parse_run

    large = _large(qrels_path, run_path)
    try:
        marked = mark_measures(options.measures)
    except InputError:
        if large:
            raise  # rather than after reading gigabytes
        marked = None  # said by the rules' path, after the files' own errors, as before
    noted = False
    if marked is not None and large and stream_refusal(options, marked) is None:
        from .trec_eval_stream import Unstreamed, stream_lines

        for path in (qrels_path, run_path):  # regular files (see _large): their first bytes read again below
            with open_input(path) as opened:
                note_byte_order_mark(opened.read(len(BYTE_ORDER_MARK)), display_name(path), TREC_EVAL_BYTE_ORDER_MARK)
        noted = True
        try:
            return stream_lines(qrels_path, run_path, marked, options)
        except Unstreamed:
            pass  # read whole below: the rules give the lines, or the refusal in their words
    qrels = parse_qrels(trec_eval_input(qrels_path, noted), display_name(qrels_path), stem(qrels_path))
    run = parse_run(trec_eval_input(run_path, noted), display_name(run_path), extra_columns=True)
    return trec_eval_lines(qrels, run, options, runid=run.last_tag)


#: What trec_eval 9.0.8 does with a byte-order mark (castregin skips it: see docs/trec-eval.md).
TREC_EVAL_BYTE_ORDER_MARK = ("trec_eval 9.0.8 reads as part of the first line's query id, a query of its own there, so "
                             "that query's numbers differ")


def trec_eval_input(path, noted: bool = False) -> bytes:
    """The bytes of one of trec_eval's inputs, read once (standard input and pipes too); a byte-order mark at their
    start is a warning (:data:`TREC_EVAL_BYTE_ORDER_MARK`) unless ``noted`` already."""
    from ..formats.common import display_name, note_byte_order_mark, read_bytes

    data = read_bytes(path)
    if not noted:
        note_byte_order_mark(data, display_name(path), TREC_EVAL_BYTE_ORDER_MARK)
    return data


def _large(qrels_path, run_path) -> bool:
    """Whether to stream: both are regular files (a pipe or standard input is read once, whole, as
    trec_eval reads it: the streaming path may hand a run back to the rules, which read it again) and
    they are not small (:func:`castregin.evaluation.small.small_inputs`)."""
    import os

    from .small import small_inputs

    if not all(os.path.isfile(path) for path in (qrels_path, run_path)):
        return False
    return not small_inputs([run_path], [qrels_path])


# --- -R prefs, qrels_prefs and qrels_jg ---------------------------------------------------------------------


def trec_eval_judgment_lines(judgments, run: Run, rel_info_format: str, options: TrecEvalOptions = DEFAULT_OPTIONS,
                             runid: str | None = None) -> list[TrecEvalLine]:
    """The lines ``trec_eval -R FORMAT [options] JUDGMENTS RUN`` prints for trec_eval's other relevance
    formats: ``prefs`` and ``qrels_prefs`` (``judgments``: a
    :class:`~castregin.formats.preferences.PreferenceJudgments`) and ``qrels_jg`` (a
    :class:`~castregin.formats.preferences.GroupQrels`); the measures are those of
    :mod:`castregin.evaluation.preferences`, the layout and averaging those of :func:`trec_eval_lines`.

    The judgments are checked whole first (what trec_eval cannot evaluate is an :class:`InputError`,
    in any topic). ``-l`` and ``-J`` change only the qrels_jg measures, as in trec_eval; preferences
    rank ties by document id ascending, qrels_jg by id descending, both before ``-M`` cuts the ranking.
    With ``score_precision="float"`` scores, and preference levels, are compared as 32-bit floats, as
    trec_eval up to v9.0.8 reads both.
    """
    from . import preferences

    families = preferences.preference_families(options.measures, rel_info_format)
    bits = score_bits(options.score_precision)
    if bits == 32 and rel_info_format != "qrels_jg":
        import dataclasses  # here: the judgments are dataclasses (formats.preferences), qrels and runs are not

        # trec_eval up to v9.0.8 reads preference levels as floats too (qrels_jg's labels are whole numbers).
        judgments = dataclasses.replace(judgments, topics={
            topic: {group: {subgroup: {doc: float32(level) for doc, level in levels.items()}
                            for subgroup, levels in subgroups.items()} for group, subgroups in groups.items()}
            for topic, groups in judgments.topics.items()})
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
            ranking = ranked_items(scores, bits)[:options.max_per_query]
            topic = preferences.group_values(judgments.topics[turn], ranking, families, options.rel_level,
                                             options.judged_only)
        else:
            compared = scores if bits == 64 else {doc: float32(score) for doc, score in scores.items()}
            ranking = sorted(scores, key=lambda doc: (-compared[doc], doc))[:options.max_per_query]
            where = f"{judgments.source or 'judgments'}: topic {turn}, "
            topic = preferences.preference_values(
                preferences.topic_preferences(
                    judgments.topics[turn], ranking, where,
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
