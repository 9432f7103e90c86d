"""What the API accepts, converted: runs, qrels and measures as ir_measures and ranx users pass them
(see :mod:`castregin.api`), each id, score and label checked, errors naming the argument."""

from __future__ import annotations

import math
import numbers
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .. import formats
from ..data import Qrels, Run
from ..errors import InputError
from ..evaluation.measures import Measure
from ..formats.trec import LABEL_RANGE

# --- runs and qrels ----------------------------------------------------------------------------------------


def shown(value) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _score(value, where: str, argument: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{where}: score {shown(value)} is not a number", argument=argument)
    score = float(value)
    if not math.isfinite(score):
        raise InputError(f"{where}: score {shown(value)} is not a finite number", argument=argument)
    return score


def _label(value, where: str, argument: str) -> int:
    whole = isinstance(value, numbers.Integral) or (
        isinstance(value, numbers.Real) and float(value).is_integer())
    if isinstance(value, bool) or not whole:
        raise InputError(f"{where}: label {shown(value)} is not an integer", argument=argument)
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


def check_id(value, what: str, where: str, argument: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, bool) and isinstance(value, numbers.Integral):
        return str(int(value))  # pandas reads numeric ids as integers; trec_eval sees their text
    prefix = f"{where}: " if where else ""
    raise InputError(f"{prefix}{what} id {shown(value)} is not a string", argument=argument)


def collect_table(triples: Iterable[tuple], kind: _Kind, argument: str) -> dict[str, dict[str, Any]]:
    """``{turn: {item: value}}`` from ``(turn, item, value)`` triples, every id and value checked."""
    table: dict[str, dict[str, Any]] = {}
    for turn, item, value in triples:
        turn_id = check_id(turn, "turn", "", argument)
        item_id = check_id(item, "item", f"turn {turn_id!r}", argument)
        where = f"turn {turn_id!r}, item {item_id!r}"
        row = table.setdefault(turn_id, {})
        if item_id in row:
            raise InputError(f"{where}: given twice", argument=argument)
        row[item_id] = kind.value(value, where, argument)
    return table


def _mapping_triples(data: Mapping, kind: _Kind, argument: str) -> Iterator[tuple]:
    for turn, items in data.items():
        if not isinstance(items, Mapping):
            raise InputError(f"turn {shown(turn)}: expected a dict {{item: {kind.noun}}}, "
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
        return collect_table(_frame_triples(value, kind, argument), kind, argument), None
    if isinstance(value, Mapping):
        return collect_table(_mapping_triples(value, kind, argument), kind, argument), None
    if _has_to_dict(value):
        data = value.to_dict()
        if isinstance(data, Mapping):
            name = getattr(value, "name", None)
            table = collect_table(_mapping_triples(data, kind, argument), kind, argument)
            return table, name if isinstance(name, str) else None
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        records = list(value)
        if not records or _is_record(records[0], kind):
            return collect_table(_record_triples(records, kind, argument), kind, argument), None
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


def each_input(value, kind: _Kind, convert: Callable, argument: str) -> list:
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


def cache_path(cache) -> str:
    """The answer cache's file path of a function that calls a model; anything else (``-`` too) is refused."""
    if not isinstance(cache, (str, os.PathLike)) or str(cache) in ("", "-"):
        raise InputError("expected the answer cache's file path", argument="cache")
    return os.fspath(cache)
