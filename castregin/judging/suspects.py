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
from .agreement import worker_kappas

MIN_ITEMS = 10
CONSTANT_SHARE = 0.9
REPEAT_SHARE = 0.9
MAX_PERIOD = 5
FAST_FRACTION = 1 / 3
TIME_COLUMNS = ("seconds", "WorkTimeInSeconds")  # the long form's convention, MTurk's batch results
REASONS = ("below_chance", "constant", "repeated", "fast")


def rule() -> dict:
    """The thresholds, as the audit records them."""
    return {"min_items": MIN_ITEMS, "constant_share": CONSTANT_SHARE, "repeat_share": REPEAT_SHARE,
            "max_period": MAX_PERIOD, "fast_fraction": round(FAST_FRACTION, 6)}


def label_seconds(judgments, column: str | None = "auto") -> tuple[np.ndarray | None, str | None]:
    """(seconds of each label's row, NaN where blank, negative or not a number; the column read).

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
    per_file = []
    for csv_file in files:
        values = (pd.to_numeric(csv_file.frame[column], errors="coerce").to_numpy(dtype=np.float64)
                  if column in csv_file.header else np.full(len(csv_file.frame), np.nan))
        per_file.append(np.where(values >= 0, values, np.nan))
    file_index = judgments.labels["file"].to_numpy()
    record = judgments.labels["record"].to_numpy()
    seconds = np.full(len(record), np.nan)
    for k, values in enumerate(per_file):
        here = file_index == k
        seconds[here] = values[record[here]]
    return seconds, column


@dataclass
class Labels:
    """Every label (before the gold filter) as codes, with the row of the CSV it came from."""

    worker: np.ndarray
    criterion: np.ndarray
    unit: np.ndarray
    label: np.ndarray
    row: np.ndarray  # increasing in file order
    n_workers: int
    seconds: np.ndarray | None = None


def _leave_one_out_kappas(labels: Labels, unit: tuple[np.ndarray, int], mask: np.ndarray, domain: np.ndarray,
                          decide_rows: Callable):
    """(kappa, items) per worker: their labels against the other workers' consensus, item by item.

    ``unit`` is (each label's unit index, the number of units).
    """
    low, size = int(domain[0]), len(domain)
    label, index = labels.label[mask], unit[0][mask]
    counts = np.bincount(index * size + (label - low), minlength=unit[1] * size)
    others = counts.reshape(-1, size)[index] - np.eye(size, dtype=np.int64)[label - low]
    alone = others.sum(axis=1) == 0
    consensus = decide_rows(others[~alone]) if (~alone).any() else np.zeros(0, dtype=np.int64)
    return worker_kappas(labels.worker[mask][~alone], label[~alone], consensus, labels.n_workers, low,
                         int(domain[-1]))


def _top_shares(labels: Labels, mask: np.ndarray, domain: np.ndarray):
    """(share of the worker's most frequent label, labels) per worker on one criterion."""
    size = len(domain)
    counts = np.bincount(labels.worker[mask] * size + (labels.label[mask] - domain[0]),
                         minlength=labels.n_workers * size).reshape(labels.n_workers, size)
    total = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts.max(axis=1) / total, total


def _answer_codes(labels: Labels, row_of: np.ndarray, n_rows: int, n_criteria: int, low: int) -> np.ndarray:
    """One integer per row for its labels of every criterion (0 for not judged): equal rows, equal codes."""
    base = int(labels.label.max()) - low + 2 if len(labels.label) else 2
    if float(base) ** n_criteria < 2.0**52:  # exact in float64, so one bincount does it
        digits = (labels.label - low + 1) * np.power(float(base), labels.criterion)
        return np.bincount(row_of, weights=digits, minlength=n_rows).astype(np.int64)
    answers = np.full((n_rows, n_criteria), low - 1, dtype=np.int64)
    answers[row_of, labels.criterion] = labels.label
    return np.asarray(np.unique(answers, axis=0, return_inverse=True)[1]).reshape(-1)


def _rows(labels: Labels, n_criteria: int, low: int):
    """(worker, answer pattern code, seconds) of each CSV row, rows in file order."""
    row_of, row_ids = pd.factorize(labels.row, sort=True)
    code = _answer_codes(labels, row_of, len(row_ids), n_criteria, low)
    worker = np.zeros(len(row_ids), dtype=np.int64)
    worker[row_of] = labels.worker
    seconds = None
    if labels.seconds is not None:
        seconds = np.full(len(row_ids), np.nan)
        seconds[row_of] = labels.seconds
    return worker, code, seconds


def _repeats(worker: np.ndarray, code: np.ndarray, n_workers: int):
    """(best period, its share of rows equal to the row that many before) per worker."""
    order = np.argsort(worker, kind="stable")  # rows already in file order
    worker, code = worker[order], code[order]
    best_share, best_period = np.zeros(n_workers), np.zeros(n_workers, dtype=np.int64)
    for period in range(1, MAX_PERIOD + 1):
        same_worker = worker[period:] == worker[:-period]
        equal = same_worker & (code[period:] == code[:-period])
        trials = np.bincount(worker[period:][same_worker], minlength=n_workers)
        hits = np.bincount(worker[period:][equal], minlength=n_workers)
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
    unit_index, units = pd.factorize(labels.unit)  # a hash, not a sort: a million items take 0.1 s
    for c, name in enumerate(criteria):
        mask = labels.criterion == c
        kappa, items = _leave_one_out_kappas(labels, (unit_index, len(units)), mask, domain, decide_rows)
        share, total = _top_shares(labels, mask, domain)
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
    row_worker, code, row_seconds = _rows(labels, len(criteria), int(domain[0]))
    period, repeat_share = _repeats(row_worker, code, labels.n_workers)
    rows = np.bincount(row_worker, minlength=labels.n_workers)
    median, crowd_median = _median_seconds(row_worker, row_seconds, labels.n_workers)
    given = np.bincount(labels.worker, minlength=labels.n_workers)
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
