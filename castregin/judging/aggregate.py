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

Everything is vectorised over integer codes, so a million labels take seconds.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import topic_of
from ..errors import InputError, InputWarning
from ..formats.common import json_text
from ..formats.output import OutputSet, check_outputs
from ..formats.trec import format_qrels
from ..labels import ROUNDINGS, divide_rounded, turns_with_label
from ..statistics import fleiss_kappa
from .agreement import alpha_from_counts, worker_kappas
from .models import METHODS as MODEL_METHODS
from .models import fit as fit_model
from .suspects import Labels, label_seconds, worker_audit

MAJORITIES = ("plurality", "absolute")
TIES = ("mean", "median", "max", "min")
METHODS = ("mode-mean", *MODEL_METHODS)
ALPHA_LEVELS = ("ordinal", "interval")




def _check_rules(majority: str, tie: str, rounding: str, method: str = "mode-mean") -> None:
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if majority not in MAJORITIES:
        raise ValueError(f"unknown majority {majority!r}; expected one of {', '.join(MAJORITIES)}")
    if tie not in TIES:
        raise ValueError(f"unknown tie rule {tie!r}; expected one of {', '.join(TIES)}")
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}; expected one of {', '.join(ROUNDINGS)}")


def decide(counts: np.ndarray, domain: Sequence[int], *, majority: str = "plurality", tie: str = "mean",
           rounding: str = "half-up") -> tuple[np.ndarray, np.ndarray]:
    """(label, decided by the mode?) of each row of a units x labels count matrix.

    ``counts[u, k]`` is how many workers gave unit ``u`` the label ``domain[k]`` (``domain``
    increasing integers); every row must hold at least one label.
    """
    _check_rules(majority, tie, rounding)
    counts = np.asarray(counts, dtype=np.int64)
    domain = np.asarray(domain, dtype=np.int64)
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


def aggregate_labels(labels: Iterable[int], *, majority: str = "plurality", tie: str = "mean",
                     rounding: str = "half-up") -> tuple[int, str]:
    """The aggregated label of one unit's labels and how it was decided (``"mode"`` or ``"tie"``).

    >>> aggregate_labels([1, 2])
    (2, 'tie')
    """
    labels = [int(v) for v in labels]
    if not labels:
        raise ValueError("no labels to aggregate")
    domain = np.arange(min(labels), max(labels) + 1)
    counts = np.bincount(np.asarray(labels) - domain[0], minlength=len(domain))[None, :]
    label, by_mode = decide(counts, domain, majority=majority, tie=tie, rounding=rounding)
    return int(label[0]), "mode" if by_mode[0] else "tie"




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

    def outputs(self, prefix: str = "question") -> dict[str, str]:
        """File name -> content of every output (``<prefix>_<criterion>.qrel``, ``..._filtered.qrel``,
        ``audit.json``); an empty ``prefix`` gives ``<criterion>.qrel``."""
        files = {}
        for criterion in self.criteria:
            stem = f"{prefix}_{criterion}" if prefix else criterion
            files[f"{stem}.qrel"] = format_qrels(self.qrels[criterion])
            files[f"{stem}_filtered.qrel"] = format_qrels(self.filtered[criterion])
        files["audit.json"] = json_text(self.audit(), sort_keys=True)
        return files


def _codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    return column.cat.codes.to_numpy().astype(np.int64), pd.Index(column.cat.categories.astype(str))


def warn_about_gold(gold: pd.DataFrame, criteria: Sequence[str], judged_pairs: pd.MultiIndex) -> None:
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
    topics = {topic_of(turn) for turn in judged_pairs.get_level_values(0)}
    gold_topics = gold["turn_id"].str.split("_", n=1).str[0]
    absent = gold[~gold_topics.isin(topics)]
    if len(absent):
        names = ", ".join(sorted(set(gold_topics[absent.index])))
        warnings.warn(InputWarning(f"{first_line(absent)}: gold names topic(s) with no judgment ({names}); "
                                   "check the turn ids"), stacklevel=3)
    present = gold[gold_topics.isin(topics)]
    unjudged = present[~pd.MultiIndex.from_arrays([present["turn_id"], present["item_id"]]).isin(judged_pairs)]
    if len(unjudged):
        first = unjudged.loc[unjudged["line"].idxmin()]
        warnings.warn(InputWarning(f"{first_line(unjudged)}: {len(unjudged)} gold item(s) were never judged "
                                   f"(first: {first['turn_id']} {first['item_id']}); they test no worker"),
                      stacklevel=3)


def _gold_failures(judgments, gold: pd.DataFrame, codes: dict, criteria: list[str]):
    """(mask of labels on a gold unit outside its range, its min, its max) for every label."""
    turn, item, criterion, label = (codes[k] for k in ("turn", "item", "criterion", "label"))
    n_items, n_criteria = len(codes["item_names"]), len(criteria)
    gold = gold[gold["criterion"].isin(criteria)]
    g_turn = codes["turn_names"].get_indexer(gold["turn_id"])
    g_item = codes["item_names"].get_indexer(gold["item_id"])
    g_criterion = pd.Index(criteria).get_indexer(gold["criterion"])
    known = (g_turn >= 0) & (g_item >= 0)
    g_key = (g_turn[known].astype(np.int64) * n_items + g_item[known]) * n_criteria + g_criterion[known]
    low = gold["min_label"].to_numpy()[known]
    high = gold["max_label"].to_numpy()[known]
    position = pd.Index(g_key).get_indexer((turn * n_items + item) * n_criteria + criterion)
    on_gold = position >= 0
    failed = np.zeros(len(label), dtype=bool)
    failed[on_gold] = (label[on_gold] < low[position[on_gold]]) | (label[on_gold] > high[position[on_gold]])
    return failed, low, high, position


def _alpha_block(counts: np.ndarray, domain: np.ndarray) -> dict:
    m = counts.sum(axis=1)
    pairable = m >= 2
    block = {level: alpha_from_counts(counts[pairable], domain, level) for level in ALPHA_LEVELS}
    block["fleiss"] = fleiss_kappa(counts[pairable])
    block["units"] = int(pairable.sum())
    block["labels"] = int(m[pairable].sum())
    return block


def _alpha_summary(counts: np.ndarray, domain: np.ndarray, unit_topics: np.ndarray, topic_names) -> dict:
    """Alpha overall and per topic of the units in ``counts`` (``unit_topics`` are topic codes)."""
    summary = _alpha_block(counts, domain)
    order = np.argsort(unit_topics, kind="stable")
    topics, starts = np.unique(unit_topics[order], return_index=True)
    bounds = list(starts[1:]) + [len(order)]
    summary["topics"] = {
        str(topic_names[t]): _alpha_block(counts[order[s:e]], domain) for t, s, e in zip(topics, starts, bounds)
    }
    return summary


@dataclass
class _Coded:
    """The judgments as integer codes: one entry per label, with the names behind the codes."""

    worker: np.ndarray
    turn: np.ndarray
    item: np.ndarray
    criterion: np.ndarray
    label: np.ndarray
    worker_names: pd.Index
    turn_names: pd.Index
    item_names: pd.Index
    topic: np.ndarray  # per label
    topic_of_turn: np.ndarray  # per turn code
    topic_names: np.ndarray

    @property
    def unit(self) -> np.ndarray:
        """(turn, item) of each label as one integer."""
        return self.turn * len(self.item_names) + self.item

    def unit_names(self, units: np.ndarray) -> tuple[list[str], list[str]]:
        """Turn ids and item ids of ``units`` (codes as :attr:`unit` makes them)."""
        n_items = len(self.item_names)
        return self.turn_names[units // n_items].tolist(), self.item_names[units % n_items].tolist()


def _code(judgments) -> _Coded:
    frame = judgments.labels
    if frame.empty:
        raise InputError("no judgments: every row is rejected or every label cell is empty",
                         source=judgments.files[0].source if judgments.files else None)
    worker, worker_names = _codes(frame["worker_id"])
    turn, turn_names = _codes(frame["turn_id"])
    item, item_names = _codes(frame["item_id"])
    turn_topics = np.asarray([topic_of(t) for t in turn_names], dtype=object)
    topic_names, topic_of_turn = np.unique(turn_topics, return_inverse=True) if len(turn_topics) else ([], [])
    return _Coded(worker, turn, item, frame["criterion"].cat.codes.to_numpy().astype(np.int64),
                  frame["label"].to_numpy().astype(np.int64), worker_names, turn_names, item_names,
                  topic_of_turn[turn], topic_of_turn, topic_names)


def _gold_filter(judgments, gold: pd.DataFrame | None, coded: _Coded, criteria: list[str]) -> tuple[np.ndarray, list]:
    """(labels kept, the removed (worker, topic) pairs with the gold items each failed)."""
    if gold is None or not len(gold):
        return np.ones(len(coded.label), dtype=bool), []
    frame = judgments.labels
    warn_about_gold(gold, criteria, pd.MultiIndex.from_arrays([frame["turn_id"], frame["item_id"]]).unique())
    codes = {"turn": coded.turn, "item": coded.item, "criterion": coded.criterion, "label": coded.label,
             "turn_names": coded.turn_names, "item_names": coded.item_names}
    failed, g_low, g_high, position = _gold_failures(judgments, gold, codes, criteria)
    pair = coded.worker * len(coded.topic_names) + coded.topic
    keep = ~np.isin(pair, np.unique(pair[failed]))
    by_pair: dict[tuple[str, str], list[dict]] = {}
    for row in np.flatnonzero(failed):
        key = (str(coded.worker_names[coded.worker[row]]), str(coded.topic_names[coded.topic[row]]))
        by_pair.setdefault(key, []).append({
            "turn_id": str(coded.turn_names[coded.turn[row]]), "item_id": str(coded.item_names[coded.item[row]]),
            "criterion": criteria[coded.criterion[row]], "label": int(coded.label[row]),
            "min_label": int(g_low[position[row]]), "max_label": int(g_high[position[row]]),
        })
    removed = [{"worker_id": w, "topic": t, "gold": sorted(items, key=lambda g: (g["turn_id"], g["item_id"],
                                                                                  g["criterion"]))}
               for (w, t), items in sorted(by_pair.items())]
    return keep, removed


def _unit_counts(coded: _Coded, mask: np.ndarray, low: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct units, each label's unit index, units x labels counts) of the labels in ``mask``."""
    units, index = np.unique(coded.unit[mask], return_inverse=True)
    counts = np.bincount(index * size + (coded.label[mask] - low), minlength=len(units) * size)
    return units, index, counts.reshape(len(units), size)


def _dropped(coded: _Coded, name: str, before_units, after_units, universe: set) -> list[dict]:
    kept = set(zip(*coded.unit_names(after_units)))
    judged = set(zip(*coded.unit_names(before_units)))
    return ([{"turn_id": t, "item_id": i, "criterion": name, "reason": "gold"} for t, i in sorted(judged - kept)]
            + [{"turn_id": t, "item_id": i, "criterion": name, "reason": "empty"} for t, i in sorted(universe - judged)])


def _agreement_of(coded: _Coded, chosen: np.ndarray, before, after, decided, domain) -> dict:
    """Alpha before and after the gold filter, and each worker's kappa with the aggregated labels."""
    (before_units, before_counts), (after_units, after_counts) = before, after
    low, high = int(domain[0]), int(domain[-1])
    unit = coded.unit[chosen]
    reference_at = np.minimum(np.searchsorted(after_units, unit), max(len(after_units) - 1, 0))
    has_reference = (after_units[reference_at] == unit) if len(after_units) else np.zeros(len(unit), dtype=bool)
    kappas, items_per_worker = worker_kappas(coded.worker[chosen][has_reference], coded.label[chosen][has_reference],
                                             decided[reference_at[has_reference]], len(coded.worker_names), low, high)
    n_items = len(coded.item_names)
    return {
        "before_gold": _alpha_summary(before_counts, domain, coded.topic_of_turn[before_units // n_items],
                                      coded.topic_names),
        "after_gold": _alpha_summary(after_counts, domain, coded.topic_of_turn[after_units // n_items],
                                     coded.topic_names),
        "workers": [{"worker_id": str(coded.worker_names[w]), "items": int(items_per_worker[w]),
                     "kappa": float(kappas[w])}
                    for w in np.argsort(np.asarray(coded.worker_names, dtype=object), kind="stable")
                    if items_per_worker[w] > 0],
    }


def _share(worker: np.ndarray, hit: np.ndarray, n_workers: int) -> np.ndarray:
    """Each worker's share of ``hit`` labels; NaN for a worker without labels."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(worker, weights=hit, minlength=n_workers) / np.bincount(worker, minlength=n_workers)


def _gold_ranges(gold: pd.DataFrame | None, coded: _Coded, name: str, units: np.ndarray):
    """(position in ``units``, min, max) of the gold items of criterion ``name`` among ``units``."""
    if gold is None or not len(gold):
        return None
    rows = gold[gold["criterion"] == name]
    turn = coded.turn_names.get_indexer(rows["turn_id"])
    item = coded.item_names.get_indexer(rows["item_id"])
    code = np.where((turn >= 0) & (item >= 0), turn.astype(np.int64) * len(coded.item_names) + item, -1)
    position = pd.Index(units).get_indexer(code)
    hit = position >= 0
    return position[hit], rows["min_label"].to_numpy()[hit], rows["max_label"].to_numpy()[hit]


def _decide_units(coded: _Coded, kept: np.ndarray, domain: np.ndarray, rules: dict, method: str,
                  gold: pd.DataFrame | None, name: str):
    """(units, counts, label of each unit, decisions, each worker's accuracy) of one criterion.

    ``decisions`` counts how the mode-mean rule decides (``mode``/``tie``) whatever the method; a
    model adds how many labels it ``changed`` from that rule's, its EM ``iterations`` and the
    ``gold`` items it took as (ranges of) known labels. Accuracy: the model's estimate, or for
    mode-mean the share of the worker's kept labels equal to the unit's label.
    """
    units, index, counts = _unit_counts(coded, kept, int(domain[0]), len(domain))
    decided, by_mode = decide(counts, domain, **rules)
    decisions = {"mode": int(by_mode.sum()), "tie": int((~by_mode).sum())}
    worker, n_workers = coded.worker[kept], len(coded.worker_names)
    if method == "mode-mean":
        return units, counts, decided, decisions, _share(worker, coded.label[kept] == decided[index], n_workers)
    ranges = _gold_ranges(gold, coded, name, units)
    model = fit_model(method, index, worker, coded.label[kept], n_tasks=len(units), n_workers=n_workers,
                      gold=ranges)
    labels = model.labels.astype(np.int64)
    decisions.update(changed=int((labels != decided).sum()), iterations=int(model.iterations),
                     gold=0 if ranges is None else len(ranges[0]))
    return units, counts, labels, decisions, model.worker_accuracy


def _qrels_table(coded: _Coded, units: np.ndarray, labels: np.ndarray) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for t, i, v in zip(*coded.unit_names(units), labels.tolist()):
        table.setdefault(t, {})[i] = v
    return {t: table[t] for t in sorted(table)}


def _all_labels(judgments, coded: _Coded, seconds: np.ndarray | None) -> Labels:
    """Every label with its CSV row (numbered in file order) for the suspect rules."""
    record = judgments.labels["record"].to_numpy().astype(np.int64)
    row = judgments.labels["file"].to_numpy().astype(np.int64) * (int(record.max()) + 1) + record
    return Labels(coded.worker, coded.criterion, coded.unit, coded.label, row, len(coded.worker_names), seconds)


def aggregate(judgments, gold: pd.DataFrame | None = None, *, majority: str = "plurality", tie: str = "mean",
              rounding: str = "half-up", min_label: int = 2, agreement: bool = True, method: str = "mode-mean",
              time_column: str | None = "auto") -> Aggregation:
    """Aggregate :class:`~castregin.formats.crowd.Judgments` into qrels per criterion.

    ``gold`` is a frame as :func:`~castregin.formats.crowd.read_gold` returns (rows for criteria
    not in ``judgments.criteria`` are ignored). Raises :class:`InputError` when there is no label.
    ``method`` is ``mode-mean`` (the rules above), ``dawid-skene`` or ``glad``.

    ``agreement`` (skipped with ``agreement=False``) holds per criterion ``before_gold`` and
    ``after_gold``: Krippendorff's alpha ``ordinal`` and ``interval`` and Fleiss' kappa
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
    keep, removed = _gold_filter(judgments, gold, coded, criteria)
    qrels, filtered, decisions, agreement_part, counted, accuracy = {}, {}, {}, {}, {}, {}
    dropped: list[dict] = []
    universe = set(zip(judgments.items["turn_id"].tolist(), judgments.items["item_id"].tolist()))
    for c, name in enumerate(criteria):
        chosen = coded.criterion == c
        before_units, _, before_counts = _unit_counts(coded, chosen, int(domain[0]), len(domain))
        after_units, after_counts, decided, decisions[name], accuracy[name] = _decide_units(
            coded, chosen & keep, domain, rules, method, gold, name)
        counted[name] = int((chosen & keep).sum())
        qrels[name] = _qrels_table(coded, after_units, decided)
        filtered[name] = {turn: qrels[name][turn] for turn in turns_with_label(qrels[name], min_label)}
        dropped.extend(_dropped(coded, name, before_units, after_units, universe))
        if agreement:
            agreement_part[name] = _agreement_of(coded, chosen, (before_units, before_counts),
                                                 (after_units, after_counts), decided, domain)
    dropped.sort(key=lambda d: (d["turn_id"], d["item_id"], d["criterion"]))
    workers, suspects = worker_audit(_all_labels(judgments, coded, seconds), criteria, domain,
                                     lambda counts: decide(counts, domain, **rules)[0], accuracy,
                                     list(coded.worker_names), time_name)
    return Aggregation(criteria, qrels, filtered, removed, dropped, decisions, agreement_part, counted, method,
                       workers, suspects)


def check_file_name_part(value: str, what: str = "prefix") -> str:
    """A part of an output file name (the prefix, a criterion) is a name, not a path."""
    if value and (any(c in value for c in "/\\") or value.startswith(".")
                  or any(ord(c) < 32 or ord(c) == 127 for c in value)):
        raise InputError(f"the {what} {value!r} is not a plain name (no /, \\, leading dot or control "
                         "characters): outputs stay inside the output directory")
    return value


def write_aggregation(aggregation: Aggregation, out_dir: str | os.PathLike, prefix: str = "question",
                      inputs: Sequence[str | os.PathLike] = ()) -> list[Path]:
    """Write every output of ``aggregation`` into ``out_dir``, all of them or none.

    One :class:`~castregin.formats.output.OutputSet`: on an error the old files stay as they were
    and a directory this call created is removed. ``inputs`` are never overwritten.
    """
    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise InputError("exists and is not a directory; choose another output directory", source=str(target),
                         argument="out_dir")
    check_file_name_part(prefix)
    for criterion in aggregation.criteria:
        check_file_name_part(criterion, "criterion")
    files = aggregation.outputs(prefix)
    check_outputs([target / name for name in files], inputs)
    with OutputSet(inputs) as outputs:
        for name, text in files.items():
            outputs.write_text(target / name, text)
    return [target / name for name in files]
