"""Crowd labels to qrels: gold filtering, majority vote with a tie rule, audit and agreement.

The rules (SPEC "Aggregating crowd judgments"):

1. A worker who gives any label outside ``[min_label, max_label]`` on a gold (turn, item,
   criterion) loses all of their labels, every criterion, for that whole topic.
2. Per (turn, item, criterion) the label is the mode of the remaining labels when exactly one
   label is most frequent (``majority="absolute"``: and it holds more than half of them).
   Otherwise the ``tie`` rule decides: ``mean`` of all remaining labels, ``median`` of all
   remaining labels (for an even count, the two middle labels' mean), or the ``max``/``min`` of the
   most frequent labels. Means are rounded with ``rounding`` in integer arithmetic
   (half-up is ``(2*sum + n) // (2*n)``), never with floats or Python's ``round``.
3. An item left without labels is dropped and listed in the audit.

That is ``method="mode-mean"``, the CAsT-ReGIn rule. ``dawid-skene`` and ``glad``
(:mod:`castregin.judging.models`) replace step 2 by a model of each worker's reliability, fitted per
criterion over the units left after the gold filter. Every method's audit also holds each worker's
estimated accuracy and the ``suspect`` flags of :mod:`castregin.judging.suspects`.

Everything is vectorised over integer codes (a unit, a worker, a label: small integers that
bincount and index arrays), so five million judgments take seconds.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice, pairwise

import numpy as np
import pandas as pd

from ..data import topic_of
from ..errors import InputError, InputWarning
from ..formats.common import without_cyclic_gc
from ..formats.crowd import Judgments, labelled_rows
from ..labels import ROUNDINGS, divide_rounded, turns_with_label
from ..statistics import fleiss_kappa, row_sums
from .agreement import alpha_from_coincidences, coincidence_matrix, label_counts, worker_kappas
from .models import METHODS as MODEL_METHODS
from .models import fit as fit_model
from .suspects import Labels, label_seconds, worker_audit

MAJORITIES = ("plurality", "absolute")
TIES = ("mean", "median", "max", "min")
METHODS = ("mode-mean", *MODEL_METHODS)
ALPHA_LEVELS = ("nominal", "ordinal", "interval")
#: Below this many rows, :func:`decide` decides every row rather than each distinct one.
_FEW_ROWS = 1024


def _check_rules(majority: str, tie: str, rounding: str, method: str = "mode-mean") -> None:
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}",
                         argument="method")
    if majority not in MAJORITIES:
        raise InputError(f"unknown majority {majority!r}; expected one of {', '.join(MAJORITIES)}",
                         argument="majority")
    if tie not in TIES:
        raise InputError(f"unknown tie rule {tie!r}; expected one of {', '.join(TIES)}", argument="tie")
    if rounding not in ROUNDINGS:
        raise InputError(f"unknown rounding {rounding!r}; expected one of {', '.join(ROUNDINGS)}",
                         argument="rounding")


def decide(counts: np.ndarray, domain: Sequence[int] | np.ndarray, *, majority: str = "plurality", tie: str = "mean",
           rounding: str = "half-up") -> tuple[np.ndarray, np.ndarray]:
    """(label, decided by the mode?) of each row of a units x labels count matrix.

    ``counts[u, k]`` is how many workers gave unit ``u`` the label ``domain[k]`` (``domain``
    increasing integers); every row must hold at least one label.
    """
    _check_rules(majority, tie, rounding)
    counts = np.asarray(counts, dtype=np.int64)
    domain = np.asarray(domain, dtype=np.int64)
    rules = {"majority": majority, "tie": tie, "rounding": rounding}
    base = int(counts.max()) + 1 if counts.size else 1
    if len(counts) < _FEW_ROWS or float(base) ** counts.shape[1] >= 2.0**62:
        return _decide_rows(counts, domain, **rules)
    # A crowd's units share few distinct rows (7 labels on a 0-3 scale make at most 120): each is
    # decided once, found by its row read as one base-``base`` number.
    inverse, distinct = pd.factorize(counts @ base ** np.arange(counts.shape[1], dtype=np.int64))
    representative = np.empty(len(distinct), dtype=np.int64)
    representative[inverse] = np.arange(len(counts))
    labels, by_mode = _decide_rows(counts[representative], domain, **rules)
    return labels[inverse], by_mode[inverse]


def _decide_rows(counts: np.ndarray, domain: np.ndarray, *, majority: str, tie: str, rounding: str):
    """:func:`decide` computed on every row."""
    n = counts.sum(axis=1)
    top = counts.max(axis=1)
    is_top = counts == top[:, None]
    by_mode = is_top.sum(axis=1) == 1
    if majority == "absolute":
        by_mode &= 2 * top > n
    labels = domain[counts.argmax(axis=1)]
    if tie == "mean":
        fallback = divide_rounded(counts @ domain, n, rounding)
    elif tie == "median":
        cumulative = counts.cumsum(axis=1)
        lower = domain[(cumulative > ((n - 1) // 2)[:, None]).argmax(axis=1)]
        upper = domain[(cumulative > (n // 2)[:, None]).argmax(axis=1)]
        fallback = divide_rounded(lower + upper, 2, rounding)
    elif tie == "max":
        fallback = domain[len(domain) - 1 - is_top[:, ::-1].argmax(axis=1)]
    else:
        fallback = domain[is_top.argmax(axis=1)]
    return np.where(by_mode, labels, fallback), by_mode


@dataclass
class Aggregation:
    """The result of :func:`aggregate`: qrels per criterion and the audit.

    ``qrels[criterion][turn][item]`` holds every aggregated label; ``filtered`` only the turns
    with a label >= ``min_label``. ``removed``, ``dropped_items``, ``decisions`` and
    ``agreement`` are the audit's parts (see :meth:`audit`).
    """

    criteria: list[str]
    qrels: dict[str, dict[str, dict[str, int]]]
    filtered: dict[str, dict[str, dict[str, int]]]
    removed: list[dict]
    dropped_items: list[dict]
    decisions: dict[str, dict[str, int]]
    agreement: dict = field(default_factory=dict)
    labels: dict[str, int] = field(default_factory=dict)
    method: str = "mode-mean"
    workers: list[dict] = field(default_factory=list)
    suspects: dict = field(default_factory=dict)

    def audit(self) -> dict:
        """The ``audit.json`` content: ``removed``, ``dropped_items``, ``decisions``, ``agreement``,
        ``method``, ``workers`` (each worker's accuracy and suspect flags) and ``suspects``."""
        return {"removed": self.removed, "dropped_items": self.dropped_items, "decisions": self.decisions,
                "agreement": self.agreement, "method": self.method, "workers": self.workers,
                "suspects": self.suspects}


@dataclass
class _Coded:
    """The judgments (:class:`~castregin.formats.crowd.Judgments`: codes per row) with each unit's topic."""

    judgments: Judgments
    topic_names: np.ndarray
    topic_of_unit: np.ndarray

    @property
    def n_units(self) -> int:
        """How many (turn, item) units there are."""
        return len(self.judgments.unit_turn)

    @property
    def n_workers(self) -> int:
        """How many workers there are."""
        return len(self.judgments.worker_names)

    def unit_names(self, units: np.ndarray) -> tuple[list[str], list[str]]:
        """Turn ids and item ids of ``units``."""
        j = self.judgments
        return j.turn_names[j.unit_turn[units]].tolist(), j.item_names[j.unit_item[units]].tolist()

    @cached_property
    def _indexes(self) -> tuple[pd.Index, pd.Index, np.ndarray]:
        j = self.judgments
        keys = j.unit_turn.astype(np.int64) * max(len(j.item_names), 1) + j.unit_item  # sorted, as units are
        return pd.Index(j.turn_names, dtype=object), pd.Index(j.item_names, dtype=object), keys

    def unit_index(self, turn_ids, item_ids) -> np.ndarray:
        """The unit of each (turn id, item id), -1 for a pair no accepted row has."""
        turns, items, keys = self._indexes
        turn, item = turns.get_indexer(pd.Index(list(turn_ids))), items.get_indexer(pd.Index(list(item_ids)))
        key = turn.astype(np.int64) * max(len(items), 1) + item
        if not len(keys):
            return np.full(len(key), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
        # A code -1 can make another pair's key: only pairs of known ids count.
        return np.where((turn >= 0) & (item >= 0) & (keys[at] == key), at, -1)


def _code(judgments: Judgments) -> _Coded:
    if not (judgments.values >= 0).any():
        raise InputError("no judgments: every row is rejected or every label cell is empty",
                         source=judgments.files[0].source if judgments.files else None)
    turn_topics = np.asarray([topic_of(t) for t in judgments.turn_names], dtype=object)
    topic_names, topic_of_turn = np.unique(turn_topics, return_inverse=True)
    return _Coded(judgments, topic_names, topic_of_turn.astype(np.int32)[judgments.unit_turn])


def _warn_about_gold(gold: pd.DataFrame, criteria: Sequence[str], coded: _Coded) -> None:
    """Say (as :class:`~castregin.errors.InputWarning`) what in a gold file can filter nobody.

    Rows of criteria not aggregated are ignored; gold items of topics with no judgment at all, or
    never judged, test no worker: a typo in a criterion or a turn id would otherwise pass in silence.
    """
    source = gold.attrs.get("source", "gold")

    def first_line(rows: pd.DataFrame) -> str:
        return f"{source}:{int(rows['line'].min())}"

    other = gold[~gold["criterion"].isin(list(criteria))]
    if len(other):
        names = ", ".join(sorted(set(other["criterion"])))
        warnings.warn(InputWarning(f"{first_line(other)}: {len(other)} gold row(s) name criteria that are not "
                                   f"aggregated ({names}); they are ignored"), stacklevel=3)
    gold = gold[gold["criterion"].isin(list(criteria))]
    j = coded.judgments
    judged = np.bincount(j.unit[labelled_rows(j.values)], minlength=coded.n_units) > 0
    topics = set(coded.topic_names[np.unique(coded.topic_of_unit[judged])].tolist())
    gold_topics = gold["turn_id"].str.split("_", n=1).str[0]
    absent = gold[~gold_topics.isin(topics)]
    if len(absent):
        names = ", ".join(sorted(set(gold_topics[absent.index])))
        warnings.warn(InputWarning(f"{first_line(absent)}: gold names topic(s) with no judgment ({names}); "
                                   "check the turn ids"), stacklevel=3)
    present = gold[gold_topics.isin(topics)]
    unit = coded.unit_index(present["turn_id"], present["item_id"])
    unjudged = present[(unit < 0) | ~judged[np.maximum(unit, 0)]]
    if len(unjudged):
        first = unjudged.loc[unjudged["line"].idxmin()]
        warnings.warn(InputWarning(f"{first_line(unjudged)}: {len(unjudged)} gold item(s) were never judged "
                                   f"(first: {first['turn_id']} {first['item_id']}); they test no worker"),
                      stacklevel=3)


def _gold_failures(gold: pd.DataFrame, coded: _Coded, criteria: list[str]):
    """(row, criterion index, gold row) of every label on a gold unit outside its range; gold restricted
    to ``criteria`` and to units that exist."""
    j = coded.judgments
    gold = gold[gold["criterion"].isin(criteria)]
    g_unit = coded.unit_index(gold["turn_id"], gold["item_id"])
    gold = gold[g_unit >= 0]
    g_key = g_unit[g_unit >= 0].astype(np.int64) * len(criteria) + pd.Index(criteria).get_indexer(gold["criterion"])
    on_gold = np.zeros(coded.n_units, dtype=bool)
    on_gold[g_unit[g_unit >= 0]] = True
    rows = np.flatnonzero(on_gold[j.unit])  # the few rows on a gold unit
    row, criterion = np.nonzero(j.values[rows] >= 0)
    row = rows[row]
    at = pd.Index(g_key).get_indexer(j.unit[row].astype(np.int64) * len(criteria) + criterion)
    label = j.values[row, criterion].astype(np.int64) + j.scale[0]
    low, high = gold["min_label"].to_numpy(), gold["max_label"].to_numpy()
    failed = (at >= 0) & ((label < low[at]) | (label > high[at]))
    return row[failed], criterion[failed], gold.iloc[at[failed]]


def _gold_filter(gold: pd.DataFrame | None, coded: _Coded, criteria: list[str]) -> tuple[np.ndarray, list]:
    """(rows kept, the removed (worker, topic) pairs with the gold items each failed)."""
    j = coded.judgments
    keep = np.ones(len(j.worker), dtype=bool)
    if gold is None or not len(gold):
        return keep, []
    _warn_about_gold(gold, criteria, coded)
    rows, criterion, failed = _gold_failures(gold, coded, criteria)
    n_topics = len(coded.topic_names)
    bad_pairs = np.unique(j.worker[rows].astype(np.int64) * n_topics + coded.topic_of_unit[j.unit[rows]])
    # Only the rows of a worker who failed somewhere can go: the test runs on those alone.
    suspect = np.zeros(coded.n_workers, dtype=bool)
    suspect[j.worker[rows]] = True
    candidates = np.flatnonzero(suspect[j.worker])
    pair = j.worker[candidates].astype(np.int64) * n_topics + coded.topic_of_unit[j.unit[candidates]]
    keep[candidates[np.isin(pair, bad_pairs)]] = False
    by_pair: dict[tuple[str, str], list[dict]] = {}
    for row, c, (_, g) in zip(rows.tolist(), criterion.tolist(), failed.iterrows(), strict=True):
        key = (str(j.worker_names[j.worker[row]]), str(coded.topic_names[coded.topic_of_unit[j.unit[row]]]))
        by_pair.setdefault(key, []).append({
            "turn_id": g["turn_id"], "item_id": g["item_id"], "criterion": criteria[c],
            "label": int(j.values[row, c]) + j.scale[0], "min_label": int(g["min_label"]),
            "max_label": int(g["max_label"]),
        })
    removed: list[dict[str, object]] = [{"worker_id": w, "topic": t, "gold": sorted(by_pair[w, t], key=_gold_order)}
                                        for w, t in sorted(by_pair)]
    return keep, removed


def _alpha_block(counts: np.ndarray, domain: np.ndarray) -> dict:
    m = row_sums(counts)
    # Converted once for both statistics; one coincidence matrix serves both levels.
    pairable = counts[m >= 2].astype(np.float64)
    coincidences = coincidence_matrix(pairable)
    block = {f"alpha_{level}": alpha_from_coincidences(coincidences, domain, level) for level in ALPHA_LEVELS}
    block["fleiss"] = fleiss_kappa(pairable)
    block["units"] = len(pairable)
    block["labels"] = int(m[m >= 2].sum())
    return block


def _alpha_summary(counts: np.ndarray, domain: np.ndarray, unit_topics: np.ndarray, topic_names) -> dict:
    """Alpha overall and per topic of the units in ``counts`` (``unit_topics`` are topic codes)."""
    summary = _alpha_block(counts, domain)
    order = np.argsort(unit_topics, kind="stable")
    topics, starts = np.unique(unit_topics[order], return_index=True)
    summary["topics"] = {
        str(topic_names[t]): _alpha_block(counts[order[s:e]], domain)
        for t, (s, e) in zip(topics, pairwise([*starts, len(order)]), strict=True)
    }
    return summary


def _gold_order(gold: dict) -> tuple:
    return gold["turn_id"], gold["item_id"], gold["criterion"]


def _dropped(coded: _Coded, criteria: list[str], judged: list[np.ndarray], kept: list[np.ndarray]) -> list[dict]:
    """The audit's dropped items: per criterion, units judged but left without labels by the gold filter
    (``gold``) and units never judged (``empty``); sorted by turn, item and criterion name."""
    unit_parts: list[np.ndarray] = []
    name_parts: list[np.ndarray] = []
    reasons: list[str] = []
    rank = {name: k for k, name in enumerate(sorted(criteria))}
    for c, name in enumerate(criteria):
        for reason, lost in (("gold", judged[c] & ~kept[c]), ("empty", ~judged[c])):
            here = np.flatnonzero(lost)
            unit_parts.append(here)
            name_parts.append(np.full(len(here), rank[name], dtype=np.int64))
            reasons.extend([reason] * len(here))
    units, names = np.concatenate(unit_parts), np.concatenate(name_parts)
    order = np.lexsort((names, units))
    by_rank = sorted(criteria)
    turns, items = coded.unit_names(units[order])
    return [{"turn_id": t, "item_id": i, "criterion": by_rank[k], "reason": reasons[o]}
            for t, i, k, o in zip(turns, items, names[order].tolist(), order.tolist(), strict=True)]


def _agreement_of(coded: _Coded, label: np.ndarray, before: np.ndarray, after, decided, domain) -> dict:
    """Alpha before and after the gold filter, and each worker's kappa with the aggregated labels.

    ``label`` is each row's label index on the criterion (-1: none), ``before`` the unit x label
    counts of all of them, ``after`` (units, counts) of those the gold filter kept.
    """
    j = coded.judgments
    after_units, after_counts = after
    reference = np.full(coded.n_units, -1, dtype=np.int16)
    reference[after_units] = np.asarray(decided) - domain[0]
    kappas, items_per_worker = worker_kappas(j.worker, label, reference[j.unit], coded.n_workers, 0, len(domain) - 1)
    before_units = np.flatnonzero(row_sums(before))
    return {
        "before_gold": _alpha_summary(before[before_units], domain, coded.topic_of_unit[before_units],
                                      coded.topic_names),
        "after_gold": _alpha_summary(after_counts, domain, coded.topic_of_unit[after_units], coded.topic_names),
        "workers": [{"worker_id": str(j.worker_names[w]), "items": int(items_per_worker[w]),
                     "kappa_quadratic": float(kappas[w])}
                    for w in range(coded.n_workers) if items_per_worker[w] > 0],  # names are sorted
    }


def _gold_ranges(gold: pd.DataFrame | None, coded: _Coded, name: str, units: np.ndarray):
    """(position in ``units``, min, max) of the gold items of criterion ``name`` among ``units``."""
    if gold is None or not len(gold):
        return None
    rows = gold[gold["criterion"] == name]
    unit = coded.unit_index(rows["turn_id"], rows["item_id"])
    position = np.minimum(np.searchsorted(units, unit), max(len(units) - 1, 0))
    hit = (unit >= 0) & (units[position] == unit) if len(units) else np.zeros(len(unit), dtype=bool)
    return position[hit], rows["min_label"].to_numpy()[hit], rows["max_label"].to_numpy()[hit]


def _decide_units(coded: _Coded, label: np.ndarray, domain: np.ndarray, rules: dict, method: str,
                  gold: pd.DataFrame | None, name: str):
    """(units, counts, label of each unit, decisions, each worker's accuracy) of one criterion.

    ``label`` is each row's label index on the criterion, -1 where the cell is empty or the gold
    filter removed it. ``decisions`` counts how the mode-mean rule decides (``mode``/``tie``)
    whatever the method; a model adds how many labels it ``changed`` from that rule's, its EM
    ``iterations`` and the ``gold`` items it took as (ranges of) known labels. Accuracy: the
    model's estimate, or for mode-mean the share of the worker's kept labels equal to the unit's label.
    """
    j = coded.judgments
    every = label_counts(j.unit, label, coded.n_units, len(domain))
    units = np.flatnonzero(row_sums(every))
    counts = every[units]
    decided, by_mode = decide(counts, domain, **rules)
    decisions = {"mode": int(by_mode.sum()), "tie": int((~by_mode).sum())}
    if method == "mode-mean":
        target = np.full(coded.n_units, -2, dtype=np.int16)  # -2: never a row's label, not even "none"
        target[units] = decided - domain[0]
        # Per worker, one bincount: state 0 no label, 1 a label unlike the unit's, 2 the unit's label.
        state = np.array(j.worker, dtype=np.int64)
        state *= 3
        state += label >= 0
        state += label == target[j.unit]
        tally = np.bincount(state, minlength=3 * coded.n_workers).reshape(coded.n_workers, 3)
        with np.errstate(invalid="ignore", divide="ignore"):
            accuracy = tally[:, 2] / (tally[:, 1] + tally[:, 2])
        return units, counts, decided, decisions, accuracy
    rows = np.flatnonzero(label >= 0)
    task = np.full(coded.n_units, -1, dtype=np.int64)
    task[units] = np.arange(len(units))
    ranges = _gold_ranges(gold, coded, name, units)
    model = fit_model(method, task[j.unit[rows]], j.worker[rows], label[rows].astype(np.int64) + domain[0],
                      n_tasks=len(units), n_workers=coded.n_workers, gold=ranges)
    labels = model.labels.astype(np.int64)
    decisions.update(changed=int((labels != decided).sum()), iterations=int(model.iterations),
                     gold=0 if ranges is None else len(ranges[0]))
    return units, counts, labels, decisions, model.worker_accuracy


def _qrels_table(coded: _Coded, units: np.ndarray, labels: np.ndarray) -> dict[str, dict[str, int]]:
    """``{turn: {item: label}}``; units are sorted by turn then item, so each turn is one slice."""
    j = coded.judgments
    turns = j.unit_turn[units]
    starts = np.flatnonzero(np.diff(turns, prepend=-1)).tolist()
    pairs = zip(j.item_names[j.unit_item[units]].tolist(), np.asarray(labels).tolist(), strict=True)
    return {str(j.turn_names[turns[s]]): dict(islice(pairs, e - s))
            for s, e in pairwise([*starts, len(units)])}


@without_cyclic_gc
def aggregate(judgments, gold: pd.DataFrame | None = None, *, majority: str = "plurality", tie: str = "mean",
              rounding: str = "half-up", min_label: int = 2, agreement: bool = True, method: str = "mode-mean",
              time_column: str | None = "auto") -> Aggregation:
    """Aggregate :class:`~castregin.formats.crowd.Judgments` into qrels per criterion.

    ``gold`` is a frame as :func:`~castregin.formats.crowd.read_gold` returns (rows for criteria
    not in ``judgments.criteria`` are ignored). Raises :class:`InputError` when there is no label.
    ``method`` is ``mode-mean`` (the rules above), ``dawid-skene`` or ``glad``.

    ``agreement`` (skipped with ``agreement=False``) holds per criterion ``before_gold`` and
    ``after_gold``: Krippendorff's alpha ``alpha_nominal``, ``alpha_ordinal``, ``alpha_interval`` and Fleiss' kappa
    (``fleiss``) over the pairable units (``units``, ``labels``) and the same per topic
    (``topics``); and ``workers``: each worker's quadratic-weighted Cohen's kappa with the
    aggregated labels and the number of ``items`` it rests on. The kappa uses every label the
    worker gave, including those the gold filter removed, so that a removed spammer's low
    agreement shows; undefined values are NaN. ``workers`` and ``suspects`` of the result are
    :func:`~castregin.judging.suspects.worker_audit`'s, the time per item read from
    ``time_column`` (``auto``: ``seconds`` or ``WorkTimeInSeconds`` when present; ``None``: none).
    """
    _check_rules(majority, tie, rounding, method)
    rules = {"majority": majority, "tie": tie, "rounding": rounding}
    criteria = list(judgments.criteria)
    domain = np.arange(judgments.scale[0], judgments.scale[1] + 1)
    coded = _code(judgments)
    seconds, time_name = label_seconds(judgments, time_column)
    keep, removed = _gold_filter(gold, coded, criteria)
    qrels, filtered, decisions, agreement_part, counted, accuracy = {}, {}, {}, {}, {}, {}
    judged_units, kept_units = [], []
    for c, name in enumerate(criteria):
        # Every row takes part, -1 standing for no label: bincounts skip those, and no row is gathered.
        label = judgments.values[:, c]
        kept = label if keep.all() else np.where(keep, label, np.int16(-1))
        after_units, after_counts, decided, decisions[name], accuracy[name] = _decide_units(
            coded, kept, domain, rules, method, gold, name)
        counted[name] = int(after_counts.sum())
        qrels[name] = _qrels_table(coded, after_units, decided)
        filtered[name] = {turn: qrels[name][turn] for turn in turns_with_label(qrels[name], min_label)}
        before = label_counts(judgments.unit, label, coded.n_units, len(domain))
        judged_units.append(row_sums(before) > 0)
        kept_units.append(np.zeros(coded.n_units, dtype=bool))
        kept_units[-1][after_units] = True
        if agreement:
            agreement_part[name] = _agreement_of(coded, label, before, (after_units, after_counts), decided, domain)
    dropped = _dropped(coded, criteria, judged_units, kept_units)
    labels = Labels(judgments.worker, judgments.unit, judgments.values, coded.n_workers, coded.n_units, seconds)
    workers, suspects = worker_audit(labels, criteria, domain, lambda counts: decide(counts, domain, **rules)[0],
                                     accuracy, list(judgments.worker_names), time_name)
    return Aggregation(criteria, qrels, filtered, removed, dropped, decisions, agreement_part, counted, method,
                       workers, suspects)


def worker_labels(judgments: Judgments, gold: pd.DataFrame | None = None,
                  criterion: str | None = None) -> dict[str, dict[str, dict[str, int]]]:
    """Each worker's own labels of one criterion, ``{worker: {turn: {item: label}}}``, as qrels.

    The labels the ``gold`` filter keeps (a worker failing a gold item loses the topic, as in
    :func:`aggregate`). ``criterion`` defaults to the only one. (A worker labels a (turn, item) once:
    the reader refuses a repeat.)
    """
    criteria = list(judgments.criteria)
    if criterion is None:
        if len(criteria) != 1:
            raise InputError(f"name one criterion of {', '.join(criteria)}", argument="criterion")
        criterion = criteria[0]
    if criterion not in criteria:
        raise InputError(f"no criterion {criterion!r}; the judgments have {', '.join(criteria)}",
                         argument="criterion")
    coded = _code(judgments)
    keep, _ = _gold_filter(gold, coded, criteria)
    values = judgments.values[:, criteria.index(criterion)]
    rows = np.flatnonzero(keep & (values >= 0))
    j = judgments
    out: dict[str, dict[str, dict[str, int]]] = {}
    for worker, turn, item, label in zip(j.worker_names[j.worker[rows]].tolist(),
                                         j.turn_names[j.unit_turn[j.unit[rows]]].tolist(),
                                         j.item_names[j.unit_item[j.unit[rows]]].tolist(),
                                         (values[rows].astype(np.int64) + j.scale[0]).tolist(), strict=True):
        out.setdefault(str(worker), {}).setdefault(str(turn), {})[str(item)] = int(label)
    return out
