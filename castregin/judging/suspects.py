"""Which crowd workers look like spammers: each worker's evidence and the ``suspect`` flag.

A worker is flagged (never removed: removal stays the gold rule's) for any of these reasons, each
computed on every label the worker gave, before the gold filter, so that it stands beside gold:

- ``below_chance``: on some criterion with at least ``MIN_ITEMS`` items, the worker's
  quadratic-weighted Cohen's kappa with the leave-one-out consensus (the other workers' labels of
  the same item, decided by the aggregation's own majority/tie/rounding rule) is <= 0: they agree
  with the crowd no better than chance.
- ``constant``: one label for at least ``CONSTANT_SHARE`` (90%) of the worker's labels of some
  criterion, over at least ``MIN_ITEMS`` items.
- ``repeated``: over at least ``MIN_ITEMS`` rows in file order, the row's labels (all criteria)
  equal those ``p`` rows before for at least 90% of the rows, for a period ``p`` of 1 to
  ``MAX_PERIOD`` (the same answers, or the same short sequence, over and over).
- ``fast``: the worker's median time per item is below ``FAST_FRACTION`` (a third) of the crowd's
  median time per item (over all rows), when the CSV has a time column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from ..formats.crowd import labelled_rows
from ..statistics import row_sums
from .agreement import label_counts, worker_kappas

MIN_ITEMS = 10
CONSTANT_SHARE = 0.9
REPEAT_SHARE = 0.9
MAX_PERIOD = 5
FAST_FRACTION = 1 / 3
TIME_COLUMNS = ("seconds", "WorkTimeInSeconds")  # the long form's convention, MTurk's batch results


def rule() -> dict:
    """The thresholds, as the audit records them."""
    return {"min_items": MIN_ITEMS, "constant_share": CONSTANT_SHARE, "repeat_share": REPEAT_SHARE,
            "max_period": MAX_PERIOD, "fast_fraction": round(FAST_FRACTION, 6)}


def label_seconds(judgments, column: str | None = "auto") -> tuple[np.ndarray | None, str | None]:
    """(seconds of each row of ``judgments``, NaN where blank, negative or not a number; the column read).

    ``column="auto"`` reads the first of ``TIME_COLUMNS`` that some file has, and nothing when none
    has; a named column missing from a file is an :class:`InputError`. ``None`` reads no time.
    """
    files = judgments.files
    if column is None or not files:
        return None, None
    if column == "auto":
        column = next((name for name in TIME_COLUMNS if any(name in f.header for f in files)), None)
        if column is None:
            return None, None
    else:
        for csv_file in files:
            if column not in csv_file.header:
                raise InputError(f"no time column {column!r}; the header has {', '.join(csv_file.header)}",
                                 source=csv_file.source, line=1, argument="time_column")
    seconds = np.full(len(judgments.record), np.nan)
    for k, csv_file in enumerate(files):
        if column not in csv_file.header:
            continue
        codes, texts = csv_file.codes(column)
        # A column holds few distinct texts: each is read once.
        values = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
        values = np.where(values >= 0, values, np.nan)
        here = judgments.file == k
        seconds[here] = values[codes[judgments.record[here]]]
    return seconds, column


@dataclass
class Labels:
    """Every accepted row (before the gold filter) in file order: its worker, unit and labels.

    ``values[r, c]`` is row ``r``'s label of criterion ``c`` minus the scale's minimum, -1 where
    the cell is empty; ``seconds`` the row's time, when the CSV has a time column.
    """

    worker: np.ndarray
    unit: np.ndarray
    values: np.ndarray
    n_workers: int
    n_units: int
    seconds: np.ndarray | None = None


def _leave_one_out_kappas(worker: np.ndarray, unit: np.ndarray, label: np.ndarray, n_units: int, n_workers: int,
                          domain: np.ndarray, decide_rows: Callable):
    """(kappa, items) per worker: their labels (indices into ``domain``, -1: none) against the other
    workers' consensus, item by item.

    The consensus of an item's other workers depends only on the item's counts and the label left
    out, so it is decided once per (item, label given), not once per label.
    """
    size = len(domain)
    counts = label_counts(unit, label, n_units, size)
    item, given = np.nonzero(counts)
    others = counts[item]
    others[np.arange(len(item)), given] -= 1
    pairable = row_sums(others) > 0  # an item nobody else labelled has no consensus
    # Column 0 stands for "no label", so that every row finds its cell (-1: no consensus).
    consensus = np.full((n_units, size + 1), -1, dtype=np.int16)
    if pairable.any():
        consensus[item[pairable], given[pairable] + 1] = decide_rows(others[pairable]) - domain[0]
    cell = np.array(unit, dtype=np.int64)
    cell *= size + 1
    cell += label
    cell += 1
    reference = consensus.reshape(-1)[cell]
    return worker_kappas(worker, label, reference, n_workers, 0, size - 1)


def _top_shares(worker: np.ndarray, label: np.ndarray, n_workers: int, size: int):
    """(share of the worker's most frequent label, labels) per worker on one criterion (-1: no label)."""
    counts = label_counts(worker, label, n_workers, size)
    total = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts.max(axis=1) / total, total


def _answer_codes(values: np.ndarray) -> np.ndarray:
    """One integer per row for its labels of every criterion: equal rows, equal codes."""
    base = int(values.max()) + 2 if values.size else 2
    if float(base) ** values.shape[1] < 2.0**62:
        code = np.zeros(len(values), dtype=np.int64)
        for c in range(values.shape[1]):  # column by column: millions of rows of three cells
            code *= base
            code += values[:, c] + 1
        return code
    return np.asarray(np.unique(values, axis=0, return_inverse=True)[1]).reshape(-1)


def _repeats(worker: np.ndarray, code: np.ndarray, n_workers: int):
    """(best period, its share of rows equal to the row that many before) per worker."""
    # Rows are in file order; a stable sort keeps it within a worker (a radix sort on 16-bit codes),
    # and each worker's rows become one segment [start, end) of the sorted rows.
    order = np.argsort(worker.astype(np.uint16) if n_workers <= 1 << 16 else worker, kind="stable")
    code = code[order]
    rows = np.bincount(worker, minlength=n_workers)
    ends = np.cumsum(rows)
    starts = ends - rows
    best_share, best_period = np.zeros(n_workers), np.zeros(n_workers, dtype=np.int64)
    for period in range(1, MAX_PERIOD + 1):
        # equal[k]: sorted row k + period repeats row k; within a segment those are the worker's trials.
        seen = np.concatenate([[0], np.cumsum(code[period:] == code[:-period])])
        last = max(len(code) - period, 0)
        trials = np.maximum(rows - period, 0)
        hits = seen[np.clip(np.maximum(ends - period, starts), 0, last)] - seen[np.clip(starts, 0, last)]
        share = np.divide(hits, trials, out=np.zeros(n_workers), where=trials > 0)
        better = share > best_share  # a shorter period wins a tie
        best_share[better], best_period[better] = share[better], period
    return best_period, best_share


def _median_seconds(worker: np.ndarray, seconds: np.ndarray | None, n_workers: int):
    """(median seconds per item of each worker, NaN without time; the crowd's median)."""
    if seconds is None or not np.isfinite(seconds).any():
        return np.full(n_workers, np.nan), None
    timed = np.isfinite(seconds)
    medians = pd.Series(seconds[timed]).groupby(worker[timed]).median()
    per_worker = np.full(n_workers, np.nan)
    per_worker[medians.index.to_numpy()] = medians.to_numpy()
    return per_worker, float(np.median(seconds[timed]))


def _number(value, digits: int = 6):
    return None if value is None or not np.isfinite(value) else round(float(value), digits)


def _per_criterion(labels: Labels, criteria: Sequence[str], domain: np.ndarray, decide_rows: Callable):
    """{criterion: (kappa, kappa items, top share, labels)} of every worker."""
    found = {}
    for c, name in enumerate(criteria):
        label = labels.values[:, c]  # every row, -1 where the cell is empty
        kappa, items = _leave_one_out_kappas(labels.worker, labels.unit, label, labels.n_units, labels.n_workers,
                                             domain, decide_rows)
        share, total = _top_shares(labels.worker, label, labels.n_workers, len(domain))
        found[name] = (kappa, items, share, total)
    return found


def _reasons(w: int, found: dict, period, repeat_share, rows, median, crowd_median) -> list[str]:
    reasons = []
    if any(items[w] >= MIN_ITEMS and kappa[w] <= 0 for kappa, items, _, _ in found.values()):
        reasons.append("below_chance")
    if any(total[w] >= MIN_ITEMS and share[w] >= CONSTANT_SHARE for _, _, share, total in found.values()):
        reasons.append("constant")
    if rows[w] >= MIN_ITEMS and repeat_share[w] >= REPEAT_SHARE:
        reasons.append("repeated")
    if crowd_median is not None and median[w] < FAST_FRACTION * crowd_median:
        reasons.append("fast")
    return reasons


def worker_audit(labels: Labels, criteria: Sequence[str], domain, decide_rows: Callable,
                 accuracy: dict[str, np.ndarray], worker_names: Sequence[str],
                 time_column: str | None = None) -> tuple[list[dict], dict]:
    """(one entry per worker who gave a label, sorted by id; the ``suspects`` summary).

    ``decide_rows(counts)`` turns a units x labels count matrix into labels (the aggregation's rule);
    ``accuracy[criterion][w]`` is the method's estimate of worker ``w``'s accuracy (NaN: none).
    """
    domain = np.asarray(domain)
    found = _per_criterion(labels, criteria, domain, decide_rows)
    labelled = np.flatnonzero(labelled_rows(labels.values))  # rows without a label are no answers
    row_worker = labels.worker[labelled]
    period, repeat_share = _repeats(row_worker, _answer_codes(labels.values[labelled]), labels.n_workers)
    rows = np.bincount(row_worker, minlength=labels.n_workers)
    median, crowd_median = _median_seconds(row_worker, None if labels.seconds is None else labels.seconds[labelled],
                                           labels.n_workers)
    given = sum(found[name][3] for name in criteria)
    entries = []
    for w in np.argsort(np.asarray(worker_names, dtype=object), kind="stable"):
        if given[w] == 0:
            continue
        reasons = _reasons(w, found, period, repeat_share, rows, median, crowd_median)
        entries.append({
            "worker_id": str(worker_names[w]), "labels": int(given[w]), "rows": int(rows[w]),
            "accuracy": {name: _number(accuracy[name][w]) for name in criteria},
            "kappa_others": {name: _number(found[name][0][w]) for name in criteria},
            "kappa_items": {name: int(found[name][1][w]) for name in criteria},
            "top_share": {name: _number(found[name][2][w]) for name in criteria},
            "repeat": {"period": int(period[w]), "share": _number(repeat_share[w])} if rows[w] > 1 else None,
            "median_seconds": _number(median[w]), "suspect": bool(reasons), "reasons": reasons,
        })
    summary = {"rule": rule(), "time_column": time_column if crowd_median is not None else None,
               "crowd_median_seconds": _number(crowd_median),
               "workers": [e["worker_id"] for e in entries if e["suspect"]]}
    return entries, summary
