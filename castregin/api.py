"""The public Python API: what ir_measures and ranx users pass, scored with castregin's numbers.

Runs and qrels may be given as

- a file path (``str`` or :class:`os.PathLike`), read by :func:`castregin.formats.read_run` /
  :func:`~castregin.formats.read_qrels`;
- a :class:`~castregin.data.Run` / :class:`~castregin.data.Qrels`;
- a dict ``{turn: {item: score}}`` / ``{turn: {item: label}}`` (ir_measures' and pytrec_eval's shape);
- a pandas DataFrame with ir_measures' columns (``query_id, doc_id, score`` / ``query_id, doc_id,
  relevance``) or ranx's (``q_id, doc_id, score`` for both); other columns are ignored;
- an iterable of ir_measures' ``ScoredDoc`` / ``Qrel`` records (anything with those fields);
- a ranx ``Run`` / ``Qrels`` (anything with a ``to_dict()`` giving the dict shape; its ``name`` is kept).

Turn and item ids are strings (integers are taken as their decimal text); scores are finite
numbers; labels are integers (a whole float such as ``2.0`` is taken as ``2``). Anything else is a
one-line :class:`~castregin.errors.InputError` naming the argument, the turn and the item.

Measures are names (``"P@1"``, ``"ndcg_cut_3"``, ``"all_trec"``, see
:mod:`castregin.evaluation.measures`) or ir_measures measure objects (``ir_measures.P@5``), one or a
list mixing them. An object is read through its name (``str(measure)``) with one exception: a
``rel`` it was given explicitly is kept even where ir_measures' name omits it as its default
(``P(rel=1)@5`` prints as ``P@5``), since castregin's names without ``rel`` take ``rel_level``.

The numbers are those of :func:`castregin.evaluation.evaluate.evaluate`: trec_eval's, averaged over
the turns the run and qrels share unless ``complete`` (trec_eval ``-c``: every qrels turn, a missing
one scoring 0). Note that ir_measures' own ``calc_aggregate`` always averages like ``complete=True``
and takes ``rel=1`` where a measure does not say; castregin takes ``rel_level`` (default 2). And
ir_measures (through pytrec_eval) ranks items on scores rounded to 32-bit floats, as trec_eval up to
v9.0.8 (2020) does, where castregin ranks on doubles, as trec_eval-9.0.8 (2023) does: where two
scores of a turn are equal as floats but not as doubles the numbers differ, and
``score_precision="float"`` gives ir_measures' (:mod:`castregin.evaluation.ranking`).
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from . import formats
from .data import Qrels, Run
from .errors import InputError
from .evaluation.evaluate import evaluate as _evaluate
from .evaluation.evaluate import evaluate_rows, natural_key
from .evaluation.measures import DEFAULT_MEASURES, Measure, parse_measure
from .evaluation.ranking import DEFAULT_SCORE_PRECISION
from .formats.trec import LABEL_RANGE

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Metric", "adaptive_pool", "as_qrels", "as_run", "calc_aggregate", "evaluate", "holes", "iter_calc",
           "label_agreement", "measure_names", "play_privateshared", "ppi", "ranking_agreement", "sample_eval",
           "sample_pool", "simulate_pooling"]


class Metric(NamedTuple):
    """One per-turn value, shaped like ir_measures' ``Metric``: the turn, the measure as passed, its value."""

    query_id: str
    measure: Any
    value: float


# --- runs and qrels ----------------------------------------------------------------------------------------


def _show(value) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _score(value, where: str, argument: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{where}: score {_show(value)} is not a number", argument=argument)
    score = float(value)
    if not math.isfinite(score):
        raise InputError(f"{where}: score {_show(value)} is not a finite number", argument=argument)
    return score


def _label(value, where: str, argument: str) -> int:
    whole = isinstance(value, numbers.Integral) or (
        isinstance(value, numbers.Real) and float(value).is_integer())
    if isinstance(value, bool) or not whole:
        raise InputError(f"{where}: label {_show(value)} is not an integer", argument=argument)
    label = int(value)
    if not LABEL_RANGE[0] <= label <= LABEL_RANGE[1]:
        # The same bound as every qrels reader: trec_eval reads labels as C long.
        raise InputError(f"{where}: label {label} does not fit in 64 bits", argument=argument)
    return label


@dataclass(frozen=True)
class _Kind:
    """What differs between runs and qrels as inputs."""

    expected: str
    #: What a table holds per item (``score``, ``label``).
    noun: str
    #: Accepted DataFrame columns (turn, item, value): ir_measures' first, then ranx's.
    columns: tuple[tuple[str, str, str], ...]
    #: ir_measures' record type and its value field.
    record: str
    field: str
    value: Callable[[Any, str, str], Any]
    #: The castregin type, its file reader, and how a table, name and source become one.
    container: type
    read: Callable
    build: Callable


RUN = _Kind(
    "a file path, a Run, a dict {turn: {item: score}} or a DataFrame with columns query_id, doc_id, score",
    "score", (("query_id", "doc_id", "score"), ("q_id", "doc_id", "score")),
    "ScoredDoc(query_id, doc_id, score)", "score", _score,
    Run, formats.read_run, lambda table, name, source: Run(tag=name, scores=table, source=source))
QRELS = _Kind(
    "a file path, a Qrels, a dict {turn: {item: label}} or a DataFrame with columns "
    "query_id, doc_id, relevance",
    "label", (("query_id", "doc_id", "relevance"), ("q_id", "doc_id", "score")),
    "Qrel(query_id, doc_id, relevance)", "relevance", _label,
    # A file may be stratified qrels (turn 0 item stratum label): what the inferred measures read.
    Qrels, lambda path: formats.read_qrels(path, stratified=None),
    lambda table, name, source: Qrels(labels=table, name=name, source=source))


def _id(value, what: str, where: str, argument: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, bool) and isinstance(value, numbers.Integral):
        return str(int(value))  # pandas reads numeric ids as integers; trec_eval sees their text
    prefix = f"{where}: " if where else ""
    raise InputError(f"{prefix}{what} id {_show(value)} is not a string", argument=argument)


def _collect(triples: Iterable[tuple], kind: _Kind, argument: str) -> dict[str, dict[str, Any]]:
    """``{turn: {item: value}}`` from ``(turn, item, value)`` triples, every id and value checked."""
    table: dict[str, dict[str, Any]] = {}
    for turn, item, value in triples:
        turn_id = _id(turn, "turn", "", argument)
        item_id = _id(item, "item", f"turn {turn_id!r}", argument)
        where = f"turn {turn_id!r}, item {item_id!r}"
        row = table.setdefault(turn_id, {})
        if item_id in row:
            raise InputError(f"{where}: given twice", argument=argument)
        row[item_id] = kind.value(value, where, argument)
    return table


def _mapping_triples(data: Mapping, kind: _Kind, argument: str) -> Iterator[tuple]:
    for turn, items in data.items():
        if not isinstance(items, Mapping):
            raise InputError(f"turn {_show(turn)}: expected a dict {{item: {kind.noun}}}, "
                             f"got {type(items).__name__}", argument=argument)
        for item, value in items.items():
            yield turn, item, value


def _dataframe_type():
    # Only a caller who built a DataFrame has pandas loaded; `import castregin` must not load it.
    pandas = sys.modules.get("pandas")
    return pandas.DataFrame if pandas is not None else None


def _frame_triples(frame, kind: _Kind, argument: str) -> Iterator[tuple]:
    present = set(frame.columns)
    for columns in kind.columns:
        if present.issuperset(columns):
            return zip(*(frame[column].tolist() for column in columns), strict=True)
    shown = ", ".join(str(c) for c in frame.columns) or "none"
    raise InputError(f"expected {kind.expected}; got a DataFrame with columns {shown}", argument=argument)


def _is_record(value, kind: _Kind) -> bool:
    return all(hasattr(value, name) for name in ("query_id", "doc_id", kind.field))


def _record_triples(records: list, kind: _Kind, argument: str) -> Iterator[tuple]:
    for position, record in enumerate(records):
        if not _is_record(record, kind):
            raise InputError(f"element {position}: expected {kind.record}, got {type(record).__name__}",
                             argument=argument)
        yield record.query_id, record.doc_id, getattr(record, kind.field)


def _has_to_dict(value) -> bool:
    # ranx's Run and Qrels; pandas and numpy objects have a to_dict of another shape.
    module = type(value).__module__.split(".")[0]
    return callable(getattr(value, "to_dict", None)) and module not in ("pandas", "numpy")


def _table(value, kind: _Kind, argument: str) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The ``{turn: {item: value}}`` table of any accepted in-memory input, and its name if it has one."""
    frame = _dataframe_type()
    if frame is not None and isinstance(value, frame):
        return _collect(_frame_triples(value, kind, argument), kind, argument), None
    if isinstance(value, Mapping):
        return _collect(_mapping_triples(value, kind, argument), kind, argument), None
    if _has_to_dict(value):
        data = value.to_dict()
        if isinstance(data, Mapping):
            name = getattr(value, "name", None)
            table = _collect(_mapping_triples(data, kind, argument), kind, argument)
            return table, name if isinstance(name, str) else None
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        records = list(value)
        if not records or _is_record(records[0], kind):
            return _collect(_record_triples(records, kind, argument), kind, argument), None
    raise InputError(f"expected {kind.expected}; got {type(value).__name__}", argument=argument)


def _convert(value, kind: _Kind, argument: str, default_name: str):
    if isinstance(value, kind.container):
        return value
    if isinstance(value, (str, os.PathLike)):
        return kind.read(value)
    table, name = _table(value, kind, argument)
    return kind.build(table, name or default_name, argument)


def as_run(run, argument: str = "run", default_name: str = "run") -> Run:
    """Any accepted run input (see :mod:`castregin.api`) as a :class:`~castregin.data.Run`.

    Parameters
    ----------
    run:
        A file path, a Run, a dict ``{turn: {item: score}}``, a DataFrame with columns ``query_id,
        doc_id, score`` (or ranx's ``q_id, doc_id, score``), ir_measures ``ScoredDoc`` records or a
        ranx ``Run``.
    argument, default_name:
        The argument named in error messages; the tag of a run that brings none (all but files
        and named ranx runs).

    Returns
    -------
    The Run; a Run passed in is returned as it is.
    """
    return _convert(run, RUN, argument, default_name)


def as_qrels(qrels, argument: str = "qrels", default_name: str = "qrels") -> Qrels:
    """Any accepted qrels input (see :mod:`castregin.api`) as a :class:`~castregin.data.Qrels`.

    ``qrels`` is a file path, a Qrels, a dict ``{turn: {item: label}}``, a DataFrame with columns
    ``query_id, doc_id, relevance`` (or ranx's ``q_id, doc_id, score``), ir_measures ``Qrel``
    records or a ranx ``Qrels``; a file's name is its stem, others' ``default_name``. A Qrels
    passed in is returned as it is; errors name ``argument``.
    """
    return _convert(qrels, QRELS, argument, default_name)


def _inputs(value, kind: _Kind, convert: Callable, argument: str) -> list:
    """One input, or each of a list of inputs (named ``argument[i]``), converted."""
    # A list of records is one run; a list of anything else is several.
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields") and (
            not value or not _is_record(value[0], kind)):
        return [convert(item, f"{argument}[{i}]", f"{argument}[{i}]") for i, item in enumerate(value)]
    return [convert(value, argument)]


# --- measures ----------------------------------------------------------------------------------------------

MEASURES_EXPECTED = "a measure name (P@1, ndcg_cut_3, all_trec), an ir_measures measure or a list of them"


def _is_ir_measure(value) -> bool:
    return isinstance(getattr(value, "params", None), dict) and isinstance(getattr(value, "NAME", None), str)


def _ir_measure_name(measure) -> str:
    """The name castregin parses for an ir_measures measure object, keeping a ``rel`` it was given."""
    name = str(measure)
    rel = measure.params.get("rel")
    if rel is None or "rel=" in name:
        return name
    # ir_measures leaves a parameter equal to its default (rel=1) out of the name.
    if "(" in name:
        return name.replace("(", f"(rel={rel!r},", 1)
    base, at, cutoff = name.partition("@")
    return f"{base}(rel={rel!r}){at}{cutoff}"


def measure_names(measures) -> list[tuple[Any, str]]:
    """``(measure as passed, name castregin parses)`` of each measure of ``measures``.

    Parameters
    ----------
    measures:
        A name, an ir_measures measure, a castregin :class:`~castregin.evaluation.measures.Measure`,
        or an iterable of them.

    Returns
    -------
    The pairs in the order given. A wrong type raises :class:`InputError` naming ``measures``.
    """
    if isinstance(measures, (str, Measure)) or _is_ir_measure(measures):
        measures = [measures]
    elif isinstance(measures, Mapping) or not isinstance(measures, Iterable):
        raise InputError(f"expected {MEASURES_EXPECTED}; got {type(measures).__name__}", argument="measures")
    pairs: list[tuple[Any, str]] = []  # (the measure as passed: a name, a Measure, an ir_measures one; its name)
    for position, measure in enumerate(measures):
        if isinstance(measure, str):
            pairs.append((measure, measure))
        elif isinstance(measure, Measure):
            pairs.append((measure, measure.name))
        elif _is_ir_measure(measure):
            pairs.append((measure, _ir_measure_name(measure)))
        else:
            raise InputError("expected a measure name or an ir_measures measure; "
                             f"got {type(measure).__name__}", argument=f"measures[{position}]")
    return pairs


def _plan(measures, rel_level: int) -> tuple[list[Measure], list[tuple[Any, str]]]:
    """The measures to evaluate, and ``(key, castregin name)`` of each value to return, in order.

    A measure that stands for one value is keyed as passed; the measures of a set or family
    (``all_trec``, ``P.1,3``) are keyed by castregin's names (``P_1``).
    """
    parsed: list[Measure] = []
    targets: list[tuple[Any, str]] = []
    seen: dict[Any, str] = {}
    for key, name in measure_names(measures):
        measures_of_name = [key] if isinstance(key, Measure) else parse_measure(name, rel_level)
        parsed.extend(measures_of_name)
        keys = [(key, measures_of_name[0].name)] if len(measures_of_name) == 1 else \
            [(m.name, m.name) for m in measures_of_name]
        for target_key, target_name in keys:
            if seen.setdefault(target_key, target_name) != target_name:
                raise InputError(f"{seen[target_key]} and {target_name} are different measures but one key "
                                 f"({target_key!r}); pass them as strings", argument="measures")
            if (target_key, target_name) not in targets:
                targets.append((target_key, target_name))
    return parsed, targets


def _values(rows: Iterable[tuple]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """``(all value, {turn: value})`` per measure name from one (run, qrels)'s result rows."""
    aggregates: dict[str, float] = {}
    per_turn: dict[str, dict[str, float]] = {}
    for _run, _qrels, measure, turn, value in rows:
        if measure not in aggregates:
            aggregates[measure] = value  # each measure's first row is its "all" value
        else:
            per_turn.setdefault(measure, {})[turn] = value
    return aggregates, per_turn


def _qrels_for(qrels, parsed: Sequence[Measure], argument: str = "qrels", default_name: str = "qrels") -> Qrels:
    """:func:`as_qrels`, except that a file path is read as a diversity qrels (``topic subtopic item
    label``) when one of ``parsed`` is an ndeval measure, which reads each item's label per subtopic."""
    from .formats.diversity import diversity_reader

    read = diversity_reader(parsed)
    if read is not None and isinstance(qrels, (str, os.PathLike)):
        return read(qrels)
    return as_qrels(qrels, argument, default_name)


# --- the functions -----------------------------------------------------------------------------------------


def calc_aggregate(measures, qrels, run, *, rel_level: int = 2, complete: bool = False,
                   score_precision: str = DEFAULT_SCORE_PRECISION) -> dict[Any, float]:
    """The value of each measure over all turns, like ir_measures' ``calc_aggregate``.

    Parameters
    ----------
    measures:
        A name (``"P@1"``, ``"ndcg_cut_3"``, ``"all_trec"``), an ir_measures measure
        (``ir_measures.nDCG@3``), or a list mixing them.
    qrels, run:
        Any accepted input (a file path, a Qrels/Run, a dict, a DataFrame, ir_measures records, a
        ranx object; see :mod:`castregin.api`).
    rel_level:
        Label at or above which an item is relevant for binary measures that do not set ``rel``.
    complete:
        Average over every qrels turn (a missing one scores 0) instead of the turns both share.
    score_precision:
        ``"double"`` (default): rank items on scores compared as doubles, as trec_eval-9.0.8 does;
        ``"float"``: as 32-bit floats, as pytrec_eval, ir_measures and trec_eval up to v9.0.8 do.

    Returns
    -------
    ``{measure: value}`` in the order given. A measure that stands for one value is keyed as passed
    (the string or the ir_measures object); the measures of a set or family (``"all_trec"``,
    ``"P.1,3"``) are keyed by castregin's names (``"P_1"``, ``"num_q"``). Values are floats (counts
    such as ``num_ret`` too).

    >>> calc_aggregate(["P@1", "ndcg_cut_3"], {"t": {"a": 2}}, {"t": {"a": 1.0, "b": 0.5}})
    {'P@1': 1.0, 'ndcg_cut_3': 1.0}
    """
    parsed, targets = _plan(measures, rel_level)
    rows = evaluate_rows(as_run(run), _qrels_for(qrels, parsed), parsed, rel_level, complete,
                         score_precision=score_precision)
    aggregates, _ = _values(rows)
    return {key: aggregates[name] for key, name in targets}


def iter_calc(measures, qrels, run, *, rel_level: int = 2, complete: bool = False,
              score_precision: str = DEFAULT_SCORE_PRECISION) -> Iterator[Metric]:
    """Per-turn values as :class:`Metric` ``(query_id, measure, value)``, like ir_measures' ``iter_calc``.

    Parameters
    ----------
    measures, qrels, run, rel_level, complete, score_precision:
        As in :func:`calc_aggregate`.

    Returns
    -------
    An iterator over the records, turn by turn (turns in natural order: ``132_2-9`` before
    ``132_2-11``), measures in the order given, keyed as in :func:`calc_aggregate`. Measures
    without per-turn values (``num_q``, ``gm_map``, ``gm_bpref``) are left out. The turns are those
    averaged: the shared ones, or with ``complete`` every qrels turn (the run's missing ones at 0).
    Everything is computed, and every error raised, before the iterator is returned.
    """
    parsed, targets = _plan(measures, rel_level)
    rows = evaluate_rows(as_run(run), _qrels_for(qrels, parsed), parsed, rel_level, complete, per_turn=True,
                         score_precision=score_precision)
    _, per_turn = _values(rows)
    turns = sorted({turn for values in per_turn.values() for turn in values}, key=natural_key)
    records = [Metric(turn, key, per_turn[name][turn]) for turn in turns for key, name in targets
               if turn in per_turn.get(name, {})]
    return iter(records)


def evaluate(runs, qrels, measures=DEFAULT_MEASURES, rel_level: int = 2, complete: bool = False,
             per_turn: bool = False, turns: Iterable[str] | None = None, *,
             score_precision: str = DEFAULT_SCORE_PRECISION) -> pd.DataFrame:
    """Evaluate every run against every qrels, as ``trec_eval -l<rel_level> [-c]`` would.

    Parameters
    ----------
    runs:
        One run or a list of runs, each any accepted input (a file path, a Run, a dict
        ``{turn: {item: score}}``, a DataFrame, ir_measures records, a ranx Run).
    qrels:
        One qrels or a list of them, likewise.
    measures:
        A name, an ir_measures measure, or a list mixing them (default: the CAsT set
        ``P@1 P@3 nDCG@3 nDCG@5 AP RR R@10``).
    rel_level, complete, score_precision:
        As in :func:`calc_aggregate`.
    per_turn, turns:
        As in :func:`castregin.evaluation.evaluate.evaluate`: rows per turn too; only these turns.

    Returns
    -------
    The DataFrame of :func:`castregin.evaluation.evaluate.evaluate` (``run, qrels, measure, turn,
    value``); ``measure`` holds the names castregin parsed (an ir_measures measure's name, with a
    ``rel`` it was given). A run is named by its tag (a file's sixth column, a ranx run's name),
    else ``run`` (``runs[i]`` in a list); qrels by their name (a file's stem), else ``qrels``
    (``qrels[i]`` in a list).
    """
    run_list = _inputs(runs, RUN, as_run, "runs")
    parsed, _ = _plan(measures, rel_level)
    qrels_list = _inputs(qrels, QRELS, lambda value, *names: _qrels_for(value, parsed, *names), "qrels")
    return _evaluate(run_list, qrels_list, parsed, rel_level, complete, per_turn, turns, score_precision)


# --- holes ---------------------------------------------------------------------------------------------------


def holes(runs, qrels, measures="nDCG@3", *, depth: int | None = None, hole_label: int | None = None,
          rel_level: int = 2, score_precision: str = DEFAULT_SCORE_PRECISION) -> dict:
    """Each run's score as the interval its holes (unjudged items in its top ``depth``) leave open.

    As ``castregin analyze holes`` (see :mod:`castregin.evaluation.holes` for what the interval is and
    why it is exact): for every labelling of a turn's holes with labels 0 to ``hole_label``, the least
    and the greatest value of the measure.

    Parameters
    ----------
    runs, qrels:
        One run or a list of runs, and one qrels, each any accepted input (see :mod:`castregin.api`).
    measures:
        A name or a list of names: P@k, Success@k, R@k, RR, AP, AP@k, Rprec, nDCG, nDCG@k (or
        trec_eval's names); any other is refused.
    depth:
        The holes are the unjudged items in each turn's top ``depth`` (trec_eval's order). Default:
        the measure's cutoff; required for measures without one.
    hole_label:
        The best label a hole may take. Default: the qrels' largest label.
    rel_level, score_precision:
        As in :func:`calc_aggregate`.

    Returns
    -------
    ``{"settings": {...}, "runs": [...], "flips": [...], "turns": [...]}``: per run and measure the
    means (``score`` as trec_eval prints it, ``low``, ``high``, ``judged``, ``holes``...) over the
    turns in both run and qrels; the pairs of runs whose order the holes could flip; per run, measure
    and turn the holes, ``judged``, ``score``, ``low``, ``high`` and a labelling of the holes that
    gives each end (``low_labels``, ``high_labels``).

    >>> run = holes({"t": {"a": 2.0, "b": 1.0}}, {"t": {"a": 2, "x": 2}}, "P@2")["runs"][0]
    >>> run["score"], run["low"], run["high"]
    (0.5, 0.5, 1.0)
    """
    from .evaluation.holes import hole_intervals

    run_list = _inputs(runs, RUN, as_run, "runs")
    names = [name for _, name in measure_names(measures)]
    result = hole_intervals(run_list, as_qrels(qrels), names, depth, hole_label, rel_level, score_precision)
    return result.records()


# --- ranking agreement ---------------------------------------------------------------------------------------


def ranking_agreement(runs, qrels_a, qrels_b, measure="nDCG@3", *, top_k: int | None = None, rel_level: int = 2,
                      score_precision: str = DEFAULT_SCORE_PRECISION):
    """How far two label sources agree on the ranking of ``runs`` by ``measure``.

    ``runs`` is a list of runs (two at least), ``qrels_a`` and ``qrels_b`` two qrels, each any
    accepted input (see :mod:`castregin.api`); ``measure`` one measure, a name or an ir_measures
    measure; ``top_k`` the k of the top-k overlap (default 5, at most the number of runs).

    Returns a :class:`castregin.evaluation.analysis.RankingAgreement`, plain data: ``statistics``
    (``kendall_tau``, ``tau_ap`` with A the reference, ``tau_ap_reverse`` with B, ``spearman_rho``,
    ``top_k``, ``top_k_overlap``, ``top_k_cut_in_tie``, ``swapped_pairs``, ``runs``), ``runs``
    (each run's ``score_a``, ``score_b``, ``rank_a``, ``rank_b`` and ``change``) and ``movers`` (the
    runs whose rank changes, most first); ``to_dict()`` gives it as dicts and lists. Runs are named
    as in :func:`evaluate`; the qrels by their name, else ``qrels_a`` and ``qrels_b``.
    """
    from .evaluation.analysis import ranking_agreement as _ranking_agreement
    from .evaluation.ranking import DEFAULT_TOP_K

    run_list = _inputs(runs, RUN, as_run, "runs")
    first, second = as_qrels(qrels_a, "qrels_a", "qrels_a"), as_qrels(qrels_b, "qrels_b", "qrels_b")
    _, targets = _plan(measure, rel_level)
    if len(targets) != 1:
        raise InputError(f"give one measure, got {len(targets)}", argument="measure")
    return _ranking_agreement(run_list, first, second, targets[0][1],
                              top_k=DEFAULT_TOP_K if top_k is None else top_k, rel_level=rel_level,
                              score_precision=score_precision)


# --- agreement between judgment sources (castregin agreement) ----------------------------------------------

def label_agreement(a, b, *more, names=None, rel_level: int = 2, samples: int = 1000, seed: int = 0,
                    confidence: float = 0.95, negative_labels: str = "unjudged") -> dict:
    """How far two or more sources of relevance labels agree, as ``castregin agreement`` prints it.

    ``a``, ``b`` and ``more`` are qrels, each any accepted input (a file path, a Qrels, a dict
    ``{turn: {item: label}}``, a DataFrame, ir_measures ``Qrel`` records, a ranx Qrels). ``names``
    names them (default: a file's stem or a Qrels' name; ``a``, ``b``, ``c``... otherwise, and where
    two would be the same). Crowd judgments are aggregated first (``castregin aggregate``) or compared
    on the command line. A label below 0 ("in the pool but unjudged") is no judgment: the pair counts
    as judged by the other source only; ``negative_labels="category"`` makes it a label of its own.

    Returns the plain data of :func:`castregin.judging.label_agreement.label_agreement`: ``settings``;
    ``sources`` (``name``, ``judged``, ``below_zero``); ``pairs``, one dict per pair of sources with the counts
    ``both``, ``only_a``, ``only_b``, ``labels``, ``confusion`` (rows: the first source),
    ``statistics`` (``exact``, ``kappa``, ``kappa_linear``, ``kappa_quadratic``, ``alpha_nominal``,
    ``alpha_ordinal``, ``alpha_interval``, ``binary_agreement``, ``binary_kappa``; NaN where
    undefined), ``intervals`` (``[low, high]`` percentile bootstrap of each, ``samples`` resamples
    seeded with ``seed``; None without samples), ``per_label`` and ``topics``; and ``overall``, the
    alpha of all sources together (three or more; else None).
    """
    from .judging.label_agreement import label_agreement as _label_agreement

    given = [a, b, *more]
    letters = "abcdefghijklmnopqrstuvwxyz"
    default = [letters[i] if i < len(letters) else f"source{i + 1}" for i in range(len(given))]
    argument = ["a", "b", *(f"more[{i}]" for i in range(len(more)))]
    qrels = [as_qrels(value, argument[i], default[i]) for i, value in enumerate(given)]
    if names is None:
        chosen = [q.name for q in qrels]
        if len(set(chosen)) != len(chosen):
            chosen = default
    else:
        chosen = [str(name) for name in names]
        if len(chosen) != len(qrels):
            raise InputError(f"names holds {len(chosen)} names for {len(qrels)} sources", argument="names")
    return _label_agreement(list(zip(chosen, (q.labels for q in qrels), strict=True)), rel_level=rel_level,
                            samples=samples, seed=seed, confidence=confidence, negative_labels=negative_labels)


# --- a model as an assessor (castregin judge) ----------------------------------------------------------------

__all__ += ["JudgeResult", "judge"]


@dataclass(frozen=True)
class JudgeResult:
    """What :func:`judge` gives, as plain data: the files ``castregin judge`` writes, in memory.

    ``judgments``: the crowd long format ``castregin aggregate`` reads (``worker_id, turn_id, item_id``
    and one column per criterion, pandas' nullable ``Int64``: ``<NA>`` where the answer had no label),
    as ``judgments.csv``; ``labels``: each (turn, item, criterion)'s label, spread, samples, parsed and
    answers, as ``labels.csv``; ``qrels``: ``{criterion: Qrels}`` (pairs without a parsed label left
    out), as ``<prefix>_<criterion>.qrel``; ``log``: the run log, as ``run_log.json`` (requests,
    failures by kind, tokens, cost, flagged items; ``this_run`` is what this call did).
    """

    judgments: pd.DataFrame
    labels: pd.DataFrame
    qrels: dict[str, Qrels]
    log: dict


def _paths(value) -> list:
    """One path or a list of them (as a list), else ``[]`` for plain data."""
    if isinstance(value, (str, os.PathLike)):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, os.PathLike)) for v in value):
        return list(value)
    return []


def _judge_bank(bank) -> dict[str, str]:
    from .formats.submissions import parse_bank
    from .track.convert import Bank

    if isinstance(bank, Bank):
        return bank.entries
    paths = _paths(bank)
    if paths:
        return Bank.read(paths).entries
    if isinstance(bank, Mapping):
        # The checks of a bank file (ids without spaces, texts strings), with the same messages.
        return parse_bank(dict(bank), "bank").entries
    raise InputError(f"expected a bank file path, a list of them, or a dict {{item id: text}}; got "
                     f"{type(bank).__name__}", argument="bank")


def _judge_topics(topics):
    from .formats.topics import TopicsTree, parse_topics, read_topics

    if isinstance(topics, TopicsTree):
        return topics
    if isinstance(topics, (str, os.PathLike)):
        return read_topics(topics)
    if isinstance(topics, list):
        return parse_topics(topics, "topics")
    raise InputError(f"expected a topics file path, a TopicsTree or the topics' JSON list; got "
                     f"{type(topics).__name__}", argument="topics")


def _judge_pool(pool) -> Run:
    if isinstance(pool, Mapping) and not any(isinstance(items, Mapping) for items in pool.values()):
        # turn -> items, as pools are kept: a run whose scores nothing reads (the tasks are sorted by id).
        for turn, items in pool.items():
            if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
                raise InputError(f"turn {_show(turn)}: expected a list of item ids, got {type(items).__name__}",
                                 argument="pool")
        table = _collect(((turn, item, 0.0) for turn, items in pool.items() for item in items), RUN, "pool")
        return Run("pool", table, source="pool")
    return as_run(pool, "pool", "pool")


def judge(pool, bank, topics, criteria, *, model: str, base_url: str, cache, prompt: str = "rubric",
          api_key_env: str = "OPENAI_API_KEY", samples: int = 1, temperature: float = 0.0,
          max_tokens: int | None = None, concurrency: int = 4, timeout: float = 120.0, max_retries: int = 5,
          retry_wait: float = 1.0, max_requests: int | None = None, price_in: float = 0.0, price_out: float = 0.0,
          only_unjudged=None, turns=None) -> JudgeResult:
    """Judge a pool with a model behind an OpenAI-compatible endpoint, as ``castregin judge`` does.

    One implementation with the command (:func:`castregin.judging.llm.judge_tasks`): the same prompts,
    cache, retries, budget and labels, the same defaults and refusals; nothing is written but the cache.
    Needs the ``openai`` extra (``pip install 'castregin[llm]'``) when a call is to be made.

    Parameters
    ----------
    pool:
        A pool file path, a Run, a dict ``{turn: {item: score}}`` or ``{turn: [item, ...]}``, or any
        accepted run input (see :mod:`castregin.api`).
    bank:
        A bank file path or a list of them (the first wins on an id), or a dict ``{item id: text}``.
    topics:
        A topics file path, the topics' JSON list (CAsT 2022's tree or a linear list) or a TopicsTree.
    criteria:
        A name or a list of names: relevance, novelty, diversity (questions); relevance, naturalness,
        conciseness (responses).
    model, base_url:
        The model's name as the endpoint knows it, and the endpoint (``http://localhost:11434/v1``...).
    cache:
        The SQLite answer cache's path (the command's default is ``DIR/cache.sqlite``); a second call
        with the same inputs asks nothing again.
    prompt:
        ``"rubric"``, ``"umbrela"`` (relevance only) or a Jinja template file's path.
    api_key_env:
        The environment variable holding the API key; the key is taken from there only, never as an
        argument, and is written nowhere. Unset: no key (local servers need none).
    samples, temperature, max_tokens, concurrency, timeout, max_retries, retry_wait, max_requests, price_in, price_out:
        As the command's options of those names (``samples > 1`` needs ``temperature > 0``).
    only_unjudged:
        Qrels (any accepted input, or a list of them) whose pairs are not judged again.
    turns:
        Judge these pooled turns only: a list of turn ids or a turn-list file's path.

    Returns
    -------
    A :class:`JudgeResult`: ``judgments`` and ``labels`` (DataFrames), ``qrels`` per criterion and
    ``log``. Errors a user can cause are :class:`InputError` naming the argument; a budget spent or
    calls failed after every retry are no error: ``log["complete"]`` is False and a later call goes on. When
    calls were to be made and not one has an answer, that is an :class:`InputError` naming the first failure.

    >>> result = judge("pool.txt", ["question_bank.json", "mixed_initiative_question_pool.json"],  # doctest: +SKIP
    ...                "topics.json", "relevance",
    ...                model="llama3.1:8b", base_url="http://localhost:11434/v1", cache="llm/cache.sqlite")
    >>> result.qrels["relevance"].labels["132_1-1"]  # doctest: +SKIP
    {'Q0001': 2, 'Q0003': 0}
    """
    from functools import partial

    import pandas as pd

    from .judging.judge import JudgeInputs, judge_pool
    from .judging.llm import JudgeSettings
    from .render.llm import LABEL_COLUMNS, load_prompt

    criteria = [criteria] if isinstance(criteria, str) else criteria
    if not isinstance(criteria, (list, tuple)) or not criteria or not all(isinstance(c, str) for c in criteria):
        raise InputError("expected a criterion name or a list of them", argument="criteria")
    settings = JudgeSettings(model=model, base_url=base_url, api_key_env=api_key_env, samples=samples,
                             temperature=temperature, max_tokens=max_tokens, concurrency=concurrency, timeout=timeout,
                             max_retries=max_retries, retry_wait=retry_wait, max_requests=max_requests,
                             price_in=price_in, price_out=price_out)
    if not isinstance(prompt, (str, os.PathLike)):
        raise InputError(f"expected rubric, umbrela or a template file's path; got {type(prompt).__name__}",
                         argument="prompt")
    if not isinstance(cache, (str, os.PathLike)) or str(cache) in ("", "-"):
        raise InputError("expected the answer cache's file path", argument="cache")

    def turns_given() -> tuple[list[str], str]:
        if isinstance(turns, (str, os.PathLike)):
            return formats.read_turn_list(turns), f"turns {os.fspath(turns)}"
        return [_id(t, "turn", "", "turns") for t in turns], "turns"

    inputs = JudgeInputs(
        pool=partial(_judge_pool, pool), bank=partial(_judge_bank, bank), topics=partial(_judge_topics, topics),
        only_unjudged=lambda: [] if only_unjudged is None else _inputs(only_unjudged, QRELS, as_qrels, "only_unjudged"),
        turns=turns_given if turns is not None else None,
        paths=[*_paths(pool), *_paths(bank), *_paths(topics), *_paths(only_unjudged),
               *([turns] if isinstance(turns, (str, os.PathLike)) else [])])
    judged = judge_pool(inputs, criteria, partial(load_prompt, os.fspath(prompt)), settings, os.fspath(cache))
    columns = ["worker_id", "turn_id", "item_id", *criteria]
    judgments = pd.DataFrame([(worker, turn, item, *(labels[c] for c in criteria))
                              for worker, turn, item, labels in judged.rows], columns=columns)
    judgments = judgments.astype({**dict.fromkeys(columns[:3], "string"), **dict.fromkeys(criteria, "Int64")})
    labels = pd.DataFrame(judged.label_rows, columns=list(LABEL_COLUMNS))
    labels = labels.astype({"turn_id": "string", "item_id": "string", "criterion": "string",
                                              "label": "Int64", "spread": "Int64", "samples": "int64",
                                              "parsed": "int64", "answers": "string"})
    qrels = {c: Qrels(labels=judged.qrels[c], name=f"llm_{c}", source=None) for c in criteria}
    return JudgeResult(judgments, labels, qrels, judged.log)


# --- nuggets -------------------------------------------------------------------------------------------------


def nugget_scores(assignments, source: str = "nuggets", measures: Sequence[str] | None = None,
                  per_turn: bool = False, no_vital: str = "zero", failed: str = "refuse") -> pd.DataFrame:
    """``castregin nuggets score``: nuggetizer's four scores and iKAT 2024's nugget recall of every run.

    ``assignments``: nuggetizer assignment files (a path, a directory standing for its files, or a list of them),
    or :class:`castregin.formats.nuggets.Assignment` objects. ``source`` names the assignment source in the
    ``qrels`` column; ``measures``, ``no_vital`` and ``failed`` as the command's ``-m``, ``--no-vital`` and
    ``--failed`` (:mod:`castregin.nuggets.scores`). Returns evaluate's columns ``run, qrels, measure, turn,
    value``; turns without a (vital) nugget are said as :class:`~castregin.errors.InputWarning` warnings.

    >>> nugget_scores("assignments/", source="human", per_turn=True)  # doctest: +SKIP
    """
    import pandas as pd

    from .evaluation.evaluate import RESULT_COLUMNS
    from .formats.nuggets import Assignment, read_assignment_files
    from .nuggets.scores import score_assignments

    given = [assignments] if isinstance(assignments, (str, os.PathLike, Assignment)) else list(assignments)
    objects = [a for a in given if isinstance(a, Assignment)]
    paths = [a for a in given if isinstance(a, (str, os.PathLike))]
    if not given or (objects and paths) or len(objects) + len(paths) != len(given):
        raise InputError("expected assignment files (paths) or Assignment objects", argument="assignments")
    read = objects or read_assignment_files(formats.expand_run_paths(paths), failed)
    rows = score_assignments(read, source, measures, per_turn, no_vital)
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
# --- fewer judgments: sampled pools, inferred measures, adaptive judging, PPI (issue 33) ----------------------


def _stratified(qrels, argument: str = "qrels"):
    """Stratified qrels from a path or a :class:`~castregin.formats.strata.StratifiedQrels`."""
    from .formats.strata import StratifiedQrels, read_stratified_qrels

    if isinstance(qrels, StratifiedQrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return read_stratified_qrels(qrels)
    raise InputError(f"expected stratified qrels (a file's path or StratifiedQrels), got {type(qrels).__name__}",
                     argument=argument)


def sample_pool(runs, strata: str, *, seed: int = 0, judged=None):
    """A stratified sample of the runs' pool, as ``castregin pool --sample STRATA --strata-out``.

    ``strata`` is ``"1-10:1,11-50:0.5,51-1000:10%"`` (strata by the best rank any run gives an item;
    ``FIRST-LAST:#N`` for N items a turn); ``judged`` the judgments so far (any qrels input). Returns
    ``(pool, stratified)``: the sampled items per turn (``{turn: set of items}``, what to judge) and
    the :class:`~castregin.formats.strata.StratifiedQrels` of every pooled item (-1 where not sampled or
    not judged yet), which :func:`sample_eval` reads.

    >>> pool, strata = sample_pool([{"t": {"a": 3.0, "b": 2.0, "c": 1.0}}], "1-1:1,2-3:#1", seed=1)
    >>> sorted(strata.strata["t"].items())
    [('a', '1'), ('b', '2'), ('c', '2')]
    """
    from .formats.strata import stratified
    from .track.sampling import sample_pool as _sample_pool

    run_list = [_ranked(run) for run in _inputs(runs, RUN, as_run, "runs")]
    sample = _sample_pool(run_list, strata, seed)
    qrels = as_qrels(judged, "judged") if judged is not None else None
    return sample.sampled, stratified(sample.strata, sample.sampled, qrels)[0]


def _ranked(run: Run) -> Run:
    """``run`` with a rank column (a run made in Python may have none): its order by score, as trec_eval's."""
    if run.ranks:
        return run
    ranks = {turn: {item: float(rank) for rank, item in enumerate(run.ranked(turn), start=1)} for turn in run.scores}
    return Run(run.tag, run.scores, ranks, run.source)


def sample_eval(qrels, run, *, rel_level: int = 1):
    """The inferred measures of ``run`` on stratified ``qrels``, as NIST's sample_eval.pl computes them.

    ``qrels`` is a path or :class:`~castregin.formats.strata.StratifiedQrels` (``turn 0 item stratum
    label``, -1 for a pooled item not sampled); ``run`` any run input. ``rel_level`` 1 is the script's
    "label above 0 is relevant". Returns a :class:`castregin.evaluation.inferred.SampleEvalResult`: per
    topic (``topics``, each with ``estimates.xinf_ap``, ``inf_ndcg``, ``precision[k]``, ``inum_rel_ret``,
    ``inum_rel``) and the means (``xinf_ap``, ``inf_ndcg``, ``interpolated``, ``precision``...); see
    :mod:`castregin.evaluation.inferred` for the quirks it keeps.
    """
    from .evaluation.inferred import sample_eval as _sample_eval

    return _sample_eval(_stratified(qrels), as_run(run), rel_level)


def adaptive_pool(runs, strategy: str, budget: int, *, judged=None, rel_level: int = 2,
                  depth: int | None = None) -> dict[str, list[str]]:
    """The next items to judge per turn, as ``castregin pool --strategy STRATEGY --budget N``.

    ``strategy`` is ``depth``, ``mtf`` or ``bandit`` (:mod:`castregin.track.sampling`); ``budget`` the
    judgments a turn, ``judged`` (any qrels input) included; ``depth`` the items of each run the
    strategy may judge (None: all). Returns ``{turn: [items in the order to judge them]}``.
    """
    from .track.sampling import adaptive_pool as _adaptive_pool

    run_list = [_ranked(run) for run in _inputs(runs, RUN, as_run, "runs")]
    labels = as_qrels(judged, "judged").labels if judged is not None else None
    return _adaptive_pool(run_list, strategy, budget, labels, rel_level, depth)


def simulate_pooling(runs, qrels, *, strategies=("depth", "mtf", "bandit"), budgets=None, measure: str = "AP",
                     rel_level: int = 2, depth: int | None = None, threshold: float = 0.9,
                     score_precision: str = DEFAULT_SCORE_PRECISION):
    """Judgments vs relevant found and vs Kendall's tau per judging strategy, as ``castregin pool simulate``.

    ``qrels`` (any qrels input) is taken as complete. Returns a
    :class:`castregin.evaluation.pooling.PoolingSimulation`: ``points`` (strategy, budget, judgments,
    relevant_found, relevant_share, kendall_tau) and ``needed`` (per strategy, the judgments from which
    tau stays at or above ``threshold``).
    """
    from .evaluation.pooling import simulate_pooling as _simulate

    run_list = [_ranked(run) for run in _inputs(runs, RUN, as_run, "runs")]
    return _simulate(run_list, as_qrels(qrels), list(strategies), budgets, measure, rel_level, depth, threshold,
                     score_precision)


def ppi(runs, human, model, measures="nDCG@3", *, rel_level: int = 2, confidence: float = 0.95,
        plan_width: float | None = None, pairs: bool = True):
    """Prediction-powered (PPI++) means of each run, as ``castregin analyze ppi``.

    ``human`` holds people's judgments of a random sample of turns, ``model`` a model's of every turn
    (each any qrels input). Returns a :class:`castregin.evaluation.ppi.PpiResult`: ``runs`` (per run and
    measure the PPI++ interval ``ppi``, ``lam``, the ``classical`` interval, ``model_mean``,
    ``effective_n``), ``differences`` (per pair of runs) and ``plans`` (with ``plan_width``).

    >>> human = {"t1": {"a": 2}, "t2": {"b": 2}}
    >>> model = {"t1": {"a": 2}, "t2": {"b": 2}, "t3": {"a": 2}}
    >>> result = ppi({"t1": {"a": 1.0}, "t2": {"a": 1.0}, "t3": {"a": 1.0}}, human, model, "P@1")
    >>> round(result.runs[0].ppi.estimate, 4), result.runs[0].n, result.runs[0].N
    (0.625, 2, 1)
    """
    from .evaluation.ppi import ppi_estimates

    run_list = _inputs(runs, RUN, as_run, "runs")
    names = [name for _, name in measure_names(measures)]
    return ppi_estimates(run_list, as_qrels(human, "human", "human"), as_qrels(model, "model", "model"), names,
                         rel_level, confidence, plan_width, pairs)


# --- playing clembench's privateshared game -----------------------------------------------------------------------


def play_privateshared(game_dir, *, model: str, base_url: str, cache, instances=None, experiments=(),
                       rules: str = "2.0", api_key_env: str = "OPENAI_API_KEY", temperature: float = 0.0,
                       max_tokens: int | None = None, concurrency: int = 4, timeout: float = 120.0,
                       max_retries: int = 5, retry_wait: float = 1.0, max_requests: int | None = None,
                       price_in: float = 0.0, price_out: float = 0.0):
    """Play clembench's privateshared game against a model, as ``castregin play privateshared`` does.

    One implementation with the command (:func:`castregin.dialogue.privateshared_play.play_game`): the same
    game master, prompts, cache, retries, budget and scores; nothing is written but the cache, and every
    instance is played (a second call asks nothing again: the answers come from the cache).

    ``game_dir``: clembench's ``privateshared/`` folder or one ``--generate`` wrote; ``instances`` (default
    ``DIR/in/instances.json``), ``experiments`` (names; default all) and ``rules`` (``"2.0"``, ``"1.0"``)
    as the command's ``--instances``, ``--experiment``, ``--rules``; ``cache`` the SQLite answer cache's
    path; the endpoint's settings as the options of those names (the key only from ``api_key_env``).

    Returns a :class:`castregin.dialogue.privateshared_play.PlayRun`: ``outcomes`` (per instance, its
    ``plan.directory`` in clembench's results layout and its ``records``, or its ``status`` and ``error``
    when it could not be played) and ``log``. An episode's files are
    ``castregin.formats.privateshared.episode_files(records, rules)``, its scores
    ``records.scores["episode scores"]``. Errors a user can cause are :class:`InputError`.

    >>> run = play_privateshared("clembench/privateshared", model="llama3.1:8b",  # doctest: +SKIP
    ...                          base_url="http://localhost:11434/v1", cache="play-cache.sqlite")
    >>> run.played[0].records.scores["episode scores"]["Main Score"]  # doctest: +SKIP
    100.0
    """
    from .dialogue.privateshared_game import RULES, plan_episodes
    from .dialogue.privateshared_play import play_game
    from .formats.privateshared import read_game, results_folder
    from .llm import EndpointSettings

    if rules not in RULES:
        raise InputError(f"expected one of {', '.join(RULES)}, got {rules!r}", argument="rules")
    if not isinstance(cache, (str, os.PathLike)) or str(cache) in ("", "-"):
        raise InputError("expected the answer cache's file path", argument="cache")
    names = [experiments] if isinstance(experiments, str) else list(experiments)
    settings = EndpointSettings(model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                                max_tokens=max_tokens, concurrency=concurrency, timeout=timeout,
                                max_retries=max_retries, retry_wait=retry_wait, max_requests=max_requests,
                                price_in=price_in, price_out=price_out).check()
    game = read_game(game_dir, instances, names, rules=rules)
    folder = results_folder(settings.model, settings.temperature, rules)
    return play_game(plan_episodes(game.experiments, folder, rules), game.texts, settings, os.fspath(cache),
                     rules=rules, folder=folder,
                     game={"game_dir": os.fspath(game_dir), "instances": game.instances_path})
# --- nuggets by a model: create, assign, cite (issue 31) ------------------------------------------------------

__all__ += ["CitationResult", "citation_scores", "nuggets_assign", "nuggets_cite", "nuggets_create"]


def _nugget_endpoint(model: str, base_url: str, cache, endpoint: Mapping[str, Any]):
    """The endpoint settings of a nugget function and its cache path, checked as the commands check them."""
    from .llm import EndpointSettings

    unknown = sorted(set(endpoint) - set(EndpointSettings.field_names()))
    if unknown:
        raise InputError(f"unknown endpoint setting(s) {', '.join(unknown)}; see castregin.llm.EndpointSettings",
                         argument=unknown[0])
    if not isinstance(cache, (str, os.PathLike)) or str(cache) in ("", "-"):
        raise InputError("expected the answer cache's file path", argument="cache")
    return EndpointSettings(model=model, base_url=base_url, **endpoint), os.fspath(cache)


def _file_paths(value) -> list:
    """The file paths among a value that may be a path, a list of paths, or objects."""
    given = [value] if isinstance(value, (str, os.PathLike)) else (value if isinstance(value, (list, tuple)) else [])
    return [os.fspath(v) for v in given if isinstance(v, (str, os.PathLike))]


def _answers_of(answers) -> list:
    from .formats.nuggets import Answer, read_answer_files

    given = [answers] if isinstance(answers, (str, os.PathLike, Answer)) else list(answers)
    objects = [a for a in given if isinstance(a, Answer)]
    paths = [a for a in given if isinstance(a, (str, os.PathLike))]
    if not given or (objects and paths) or len(objects) + len(paths) != len(given):
        raise InputError("expected answer files (TREC RAG 2024 JSONL, iKAT 2024 runs) or Answer objects",
                         argument="answers")
    return objects or read_answer_files(formats.expand_run_paths(paths))


def _topics_of(topics):
    from .formats.topics import TopicsTree, read_topics

    if topics is None or isinstance(topics, TopicsTree):
        return topics
    if isinstance(topics, (str, os.PathLike)):
        return read_topics(topics)
    raise InputError(f"expected a topics file's path or a TopicsTree, got {type(topics).__name__}", argument="topics")


def nuggets_assign(nuggets, answers, *, model: str, base_url: str, cache, prompt: str = "nuggetizer", window: int = 10,
                   topics=None, **endpoint):
    """Assign nuggets to answers with a model, as ``castregin nuggets assign`` does (one implementation:
    :func:`castregin.nuggets.assign.assign_nuggets`, the same prompts, cache, retries and budget); nothing is
    written but the cache. Needs the ``openai`` extra when a call is to be made.

    ``nuggets``: a nuggetizer nuggets file or :class:`castregin.formats.nuggets.TurnNuggets` objects;
    ``answers``: answer files (TREC RAG 2024 JSONL, iKAT 2024 runs; a path or a list) or
    :class:`~castregin.formats.nuggets.Answer` objects; ``prompt``: ``nuggetizer``, ``nuggetizer-2grade`` or a
    Jinja template file; ``topics``: a topics file or :class:`~castregin.formats.topics.TopicsTree` (the
    conversation goes into the prompt's query); ``endpoint``: the other settings of
    :class:`castregin.llm.EndpointSettings` (``api_key_env``, ``temperature``, ``max_requests``...).

    Returns a :class:`castregin.nuggets.assign.NuggetAssignment`: ``assignments`` (complete answers,
    :class:`~castregin.formats.nuggets.Assignment`, which :func:`nugget_scores` takes) and ``log``.

    >>> assigned = nuggets_assign("nuggets.jsonl", "answers.jsonl", model="llama3.1:8b",  # doctest: +SKIP
    ...                           base_url="http://localhost:11434/v1", cache="llm/cache.sqlite")
    >>> nugget_scores(assigned.assignments, source="llama3.1")  # doctest: +SKIP
    """
    from .formats.nuggets import TurnNuggets, read_nuggets
    from .nuggets.assign import assign_nuggets
    from .nuggets.llm import model_stage
    from .render.nugget_prompts import load_nugget_prompt

    settings, cache_path = _nugget_endpoint(model, base_url, cache, endpoint)

    def read():
        turns = read_nuggets(nuggets) if isinstance(nuggets, (str, os.PathLike)) else list(nuggets)
        if not all(isinstance(t, TurnNuggets) for t in turns):
            raise InputError("expected a nuggets file or TurnNuggets objects", argument="nuggets")
        return load_nugget_prompt("assign", os.fspath(prompt)), turns, _answers_of(answers), _topics_of(topics)

    def work(client, data):
        loaded, turns, read_answers, tree = data
        return assign_nuggets(client, turns, read_answers, loaded, window=window, topics=tree,
                              grades=2 if prompt == "nuggetizer-2grade" else 3)

    return model_stage(settings, cache_path, read, work, inputs=[*_file_paths(nuggets), *_file_paths(answers),
                                                                 *_file_paths(topics)])


def nuggets_create(qrels, passages, *, model: str, base_url: str, cache, queries=None, topics=None,
                   min_grade: int = 2, window: int = 10, max_nuggets: int = 30, prompt: str = "nuggetizer",
                   score_prompt: str = "nuggetizer", **endpoint):
    """Draft nuggets from each turn's relevant passages with a model and label them vital or okay, as
    ``castregin nuggets create`` does (:func:`castregin.nuggets.create.create_nuggets`); nothing is written but
    the cache.

    ``qrels``: any qrels input (the passages of grade ``min_grade`` or more are a turn's relevant ones);
    ``passages``: a passages file (JSONL ``{"docid", "text"}``, TREC RAG segments, iKAT passages, or TSV) or a
    dict ``{docid: text}``; ``queries``: a queries file or a dict ``{qid: text}``; ``topics``: a topics file or
    TopicsTree (one of the two is needed); ``endpoint`` as :func:`nuggets_assign` takes it.

    Returns a :class:`castregin.nuggets.create.NuggetCreation`: ``turns``
    (:class:`~castregin.formats.nuggets.TurnNuggets`, which :func:`nuggets_assign` takes) and ``log``.
    """
    from .formats.passages import Passage, read_passages, read_queries
    from .nuggets.create import create_nuggets, creation_requests
    from .nuggets.llm import model_stage
    from .render.nugget_prompts import load_nugget_prompt

    settings, cache_path = _nugget_endpoint(model, base_url, cache, endpoint)
    if queries is None and topics is None:
        raise InputError("give queries or topics: the query of each turn", argument="queries")

    def read():
        prompts = (load_nugget_prompt("create", os.fspath(prompt)),
                   load_nugget_prompt("score", os.fspath(score_prompt)))
        judged = as_qrels(qrels)
        wanted = {d for items in judged.labels.values() for d, grade in items.items() if grade >= min_grade}
        if isinstance(passages, Mapping):
            texts = {str(d): Passage(str(t)) for d, t in passages.items()}
        else:
            texts = read_passages(passages, wanted)
        asked = read_queries(queries) if isinstance(queries, (str, os.PathLike)) else queries
        return prompts, creation_requests(judged, texts, asked, _topics_of(topics), min_grade)

    def work(client, data):
        (create_prompt, scoring), requests = data
        return create_nuggets(client, requests, create_prompt, scoring, window=window, max_nuggets=max_nuggets)

    return model_stage(settings, cache_path, read, work, inputs=[*_file_paths(qrels), *_file_paths(passages),
                                                                 *_file_paths(queries), *_file_paths(topics)])


@dataclass
class CitationResult:
    """What :func:`nuggets_cite` gives: ``labels`` ``{(run, qid, sentence, passage_id): support}``, ``scores``
    (evaluate's columns: citation_precision and citation_recall per run, and per turn) and ``log``."""

    labels: dict
    scores: pd.DataFrame
    log: dict


def nuggets_cite(answers, passages, *, model: str, base_url: str, cache, max_citations: int = 3,
                 prompt: str = "support", source: str = "citations", **endpoint) -> CitationResult:
    """Judge whether cited passages support the answers' sentences with a model, and score citation precision and
    recall, as ``castregin nuggets cite`` does (:func:`castregin.nuggets.citations.judge_citations`); nothing is
    written but the cache.

    ``answers`` as :func:`nuggets_assign` takes them; ``passages`` as :func:`nuggets_create` takes them;
    ``source`` names the label source in the scores' ``qrels`` column; ``endpoint`` as :func:`nuggets_assign`.
    """
    import pandas as pd

    from .evaluation.evaluate import RESULT_COLUMNS
    from .formats.passages import Passage, read_passages
    from .nuggets.citations import citation_scores as _scores
    from .nuggets.citations import cited_pairs, judge_citations
    from .nuggets.llm import model_stage
    from .render.nugget_prompts import load_nugget_prompt

    settings, cache_path = _nugget_endpoint(model, base_url, cache, endpoint)

    def read():
        given = _answers_of(answers)
        wanted = {p for answer in given for _, p in cited_pairs(answer, max_citations)}
        if isinstance(passages, Mapping):
            texts = {str(d): Passage(str(t)) for d, t in passages.items()}
        else:
            texts = read_passages(passages, wanted)
        return load_nugget_prompt("cite", os.fspath(prompt)), given, texts

    def work(client, data):
        loaded, given, texts = data
        return given, judge_citations(client, given, texts, loaded, max_citations=max_citations)

    given, judged = model_stage(settings, cache_path, read, work,
                                inputs=[*_file_paths(answers), *_file_paths(passages)])
    rows = _scores(given, judged.labels, source, True, max_citations)
    return CitationResult(judged.labels, pd.DataFrame(rows, columns=RESULT_COLUMNS), judged.log)


def citation_scores(answers, labels, source: str = "citations", per_turn: bool = False,
                    max_citations: int = 3) -> pd.DataFrame:
    """Citation precision and recall of every run (TREC RAG 2024's weighted precision and recall) from support
    labels given by anyone: a citation support CSV (``run_id,qid,sentence,passage_id,support``, which
    ``nuggets cite`` writes and people's aggregated labels can be written as) or a dict ``{(run, qid, sentence,
    passage_id): support}``. ``answers`` as :func:`nuggets_assign` takes them. Returns evaluate's columns.

    >>> from castregin.formats.nuggets import Answer, AnswerSentence
    >>> answer = Answer("run", "q1", None, (AnswerSentence("Bees make honey.", ("p1", "p2")),
    ...                                     AnswerSentence("Honey keeps.", ())))
    >>> scores = citation_scores([answer], {("run", "q1", 0, "p1"): "full_support",
    ...                                     ("run", "q1", 0, "p2"): "partial_support"})
    >>> scores.set_index("measure")["value"].round(4).to_dict()
    {'num_q': 1.0, 'citation_precision': 0.75, 'citation_recall': 0.5}
    """
    import pandas as pd

    from .evaluation.evaluate import RESULT_COLUMNS
    from .formats.citations import read_citation_labels
    from .nuggets.citations import citation_scores as _scores

    read = read_citation_labels(labels) if isinstance(labels, (str, os.PathLike)) else dict(labels)
    return pd.DataFrame(_scores(_answers_of(answers), read, source, per_turn, max_citations), columns=RESULT_COLUMNS)


# --- agreement between sources of labels, crowd judgments and nugget assignments included (castregin agreement) --

__all__ += ["agreement"]


def agreement(*sources, criteria: Sequence[str] | str | None = None, gold=None, input_format: str = "auto",
              columns: Mapping[str, str] | Sequence[str] = (), label_map: Mapping[str, int] | str | None = None,
              scale: tuple[int, int] | str = (0, 3), majority: str = "plurality", tie: str = "mean",
              rounding: str = "half-up", method: str = "mode-mean", within: bool = False, per_worker: bool = False,
              rel_level: int = 2, negative_labels: str = "unjudged", samples: int = 1000, seed: int = 0,
              confidence: float = 0.95, runs=(), rank_runs: bool = False, measure: str | None = None,
              top_k: int | None = None, score_precision: str = DEFAULT_SCORE_PRECISION) -> dict:
    """``castregin agreement``, the same stage (:func:`castregin.judging.sources.agreement_stage`): how far sources
    of labels agree, each a file named ``[NAME=][KIND:]PATH`` as on the command line: qrels, crowd judgments
    (aggregated with the crowd rules: ``criteria`` (one, to compare), ``gold``, ``majority``, ``tie``,
    ``rounding``, ``method``; read with ``input_format``, ``columns`` (``ROLE=NAME`` strings or a mapping),
    ``label_map``, ``scale``), or nugget assignments (nuggetizer's JSONL, a file or a directory: one label per
    (qid, run, nugget), item ``run_id#index``, support 2, partial_support 1, not_support 0).

    Returns the data ``--format json`` writes (NaN where JSON has null): inside one crowd (``within``, or one crowd
    source alone), per criterion the agreement before and after the gold filter and per worker; between sources,
    :func:`label_agreement`'s dict (``settings``, ``sources``, ``pairs``, ``overall``) with ``ranking`` (each
    pair's ranking agreement) when ``runs`` (run files scored by ``measure``, default nDCG@3) or ``rank_runs`` (the
    runs nugget sources hold, ranked by a nugget score, default all_score) are given. ``per_worker`` makes each
    worker of a crowd a source.
    Qrels already in memory go to :func:`label_agreement`.

    >>> agreement("human=tests/nuggets/data/cone_rag_human", "model=tests/nuggets/data/cone_rag_model",
    ...           rank_runs=True, samples=0)["ranking"][0]["statistics"]["kendall_tau"]  # doctest: +SKIP
    """
    from .evaluation.ranking import DEFAULT_TOP_K
    from .formats.crowd import parse_columns, parse_label_map, parse_scale
    from .judging.sources import CrowdRules, agreement_stage

    if not sources:
        raise InputError("agreement needs sources of labels: paths [NAME=][KIND:]PATH", argument="sources")
    names = [criteria] if isinstance(criteria, str) else list(criteria) if criteria is not None else None
    if names is not None and len(names) == 1 and "," in names[0]:
        names = [part.strip() for part in names[0].split(",") if part.strip()]
    roles = dict(columns) if isinstance(columns, Mapping) else parse_columns(list(columns), names or [])
    labels = (parse_label_map(label_map) if isinstance(label_map, str) else dict(label_map or {}))
    bounds = parse_scale(scale) if isinstance(scale, str) else (int(scale[0]), int(scale[1]))
    rules = CrowdRules(criteria=names, gold=gold, input_format=input_format, columns=roles, label_map=labels,
                       scale=bounds, majority=majority, tie=tie, rounding=rounding, method=method)
    run_paths = formats.expand_run_paths([runs] if isinstance(runs, (str, os.PathLike)) else list(runs))
    outcome = agreement_stage([os.fspath(s) for s in sources], rules, within=within, per_worker=per_worker,
                              rel_level=rel_level, negative_labels=negative_labels, samples=samples, seed=seed,
                              confidence=confidence, run_paths=run_paths, rank_runs=rank_runs, measure=measure,
                              top_k=DEFAULT_TOP_K if top_k is None else top_k, score_precision=score_precision)
    return outcome.within if outcome.within is not None else (outcome.between or {})
