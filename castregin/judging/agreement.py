"""Agreement between crowd workers: Krippendorff's alpha and weighted Cohen's kappa.

Krippendorff's alpha is computed here from the coincidence matrix (Krippendorff 2011, "Computing
Krippendorff's alpha-reliability"), vectorised with numpy. It handles missing ratings and a varying
number of raters per unit; units with fewer than two ratings are not pairable and do not count.
The ``krippendorff`` package is GPL-3.0, so castregin never imports it; the tests use it as an oracle.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..statistics import cohen_kappa_from_confusion

LEVELS = ("nominal", "ordinal", "interval")


def value_counts(units: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(counts, domain): ``counts[u, v]`` is how many ratings unit ``u`` got of value ``domain[v]``.

    ``units`` are integer unit codes ``0..U-1``, ``values`` the ratings, one per rating.
    """
    units = np.asarray(units, dtype=np.int64)
    domain, index = np.unique(np.asarray(values), return_inverse=True)
    n_units = int(units.max()) + 1 if len(units) else 0
    counts = np.bincount(units * len(domain) + index, minlength=n_units * len(domain))
    return counts.reshape(n_units, len(domain)), domain


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """The V x V coincidence matrix of a U x V value-count matrix (unpairable units contribute 0)."""
    counts = np.asarray(counts, dtype=np.float64)
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts, m = counts[pairable], m[pairable]
    weights = 1.0 / (m - 1.0)
    return (counts * weights[:, None]).T @ counts - np.diag(weights @ counts)


def _distances(domain: np.ndarray, n_v: np.ndarray, level: str) -> np.ndarray:
    if level == "nominal":
        return 1.0 - np.eye(len(domain))
    if level == "interval":
        values = np.asarray(domain, dtype=np.float64)
        return (values[:, None] - values[None, :]) ** 2
    if level == "ordinal":
        # delta(c, k) = (sum of n_g for g from c to k, minus (n_c + n_k) / 2) squared.
        cumulative = np.concatenate([[0.0], np.cumsum(n_v)])
        low = np.minimum.outer(np.arange(len(domain)), np.arange(len(domain)))
        high = np.maximum.outer(np.arange(len(domain)), np.arange(len(domain)))
        between = cumulative[high + 1] - cumulative[low]
        return (between - (n_v[:, None] + n_v[None, :]) / 2.0) ** 2
    raise ValueError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")


def alpha_from_counts(counts: np.ndarray, domain: Sequence[float] | np.ndarray | None = None,
                      level: str = "interval") -> float:
    """Krippendorff's alpha from a units x values count matrix; ``nan`` when undefined.

    ``domain`` gives the (ordered) value of each column, default ``0..V-1``. Alpha is undefined
    (``nan``) without a pairable unit or when all pairable ratings have one value.
    """
    counts = np.asarray(counts)
    domain = np.arange(counts.shape[1]) if domain is None else np.asarray(domain)
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    if counts.size == 0:
        return float("nan")
    o = _coincidences(counts)
    n_v = o.sum(axis=0)
    n = n_v.sum()
    if n <= 1:
        return float("nan")
    d = _distances(domain, n_v, level)
    expected = (np.outer(n_v, n_v) * d).sum()
    if expected <= 0:
        return float("nan")
    return float(1.0 - (n - 1.0) * (o * d).sum() / expected)


def krippendorff_alpha(reliability_data, level: str = "interval") -> float:
    """Krippendorff's alpha of a raters x units matrix with ``nan`` for a missing rating.

    The same layout as the ``krippendorff`` package's ``reliability_data``; ``level`` is
    ``nominal``, ``ordinal`` or ``interval``. Returns ``nan`` when alpha is undefined.
    """
    data = np.asarray(reliability_data, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError("reliability_data must be a raters x units matrix")
    rater, unit = np.nonzero(~np.isnan(data))
    if len(unit) == 0:
        return float("nan")
    counts, domain = value_counts(unit, data[rater, unit])
    return alpha_from_counts(counts, domain, level)


def alpha_from_ratings(units, values, level: str = "interval") -> float:
    """Krippendorff's alpha of long-form ratings: one (unit, value) pair per rating.

    ``units`` can be any hashable labels or integer codes; raters need not be identified
    because alpha depends only on the values each unit received.
    """
    units = np.asarray(units)
    if len(units) == 0:
        return float("nan")
    if not np.issubdtype(units.dtype, np.integer):
        _, units = np.unique(units, return_inverse=True)
    counts, domain = value_counts(units, np.asarray(values))
    return alpha_from_counts(counts, domain, level)






def worker_kappas(workers: np.ndarray, labels: np.ndarray, reference: np.ndarray, n_workers: int,
                  low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """(kappa, items) of each worker code ``0..n_workers-1``: their labels against ``reference``.

    One confusion matrix per worker, built with a single ``bincount``.
    """
    size = high - low + 1
    workers = np.asarray(workers, dtype=np.int64)
    flat = (workers * size + (np.asarray(labels) - low)) * size + (np.asarray(reference) - low)
    confusion = np.bincount(flat, minlength=n_workers * size * size).reshape(n_workers, size, size)
    return cohen_kappa_from_confusion(confusion, "quadratic"), confusion.sum(axis=(1, 2))
