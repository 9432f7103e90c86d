"""Agreement between crowd workers: Krippendorff's alpha and weighted Cohen's kappa.

Krippendorff's alpha is computed here from the coincidence matrix (Krippendorff 2011, "Computing
Krippendorff's alpha-reliability"), vectorised with numpy. It handles missing ratings and a varying
number of raters per unit; units with fewer than two ratings are not pairable and do not count.
The ``krippendorff`` package is GPL-3.0, so castregin never imports it; the tests use it as an oracle.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..statistics import cohen_kappa_from_confusion, row_sums

LEVELS = ("nominal", "ordinal", "interval")


def label_counts(units: np.ndarray, labels: np.ndarray, n_units: int, size: int) -> np.ndarray:
    """``counts[u, k]``: how many of the ratings give unit ``u`` the label index ``k`` (an n_units x size matrix).

    ``units`` are integer codes ``0..n_units-1`` and ``labels`` indices ``0..size-1``, one pair per
    rating; a label -1 (no rating, such as an empty cell) is not counted, so callers need not
    select rows first. One ``bincount`` does it.
    """
    # In place: on millions of ratings every temporary array is tens of megabytes of fresh pages.
    flat = np.array(units, dtype=np.int64)
    flat *= size + 1
    flat += labels
    flat += 1
    return np.bincount(flat, minlength=n_units * (size + 1)).reshape(n_units, size + 1)[:, 1:]


def coincidence_matrix(counts: np.ndarray) -> np.ndarray:
    """The V x V coincidence matrix of a U x V value-count matrix (unpairable units contribute 0)."""
    counts = np.asarray(counts, dtype=np.float64)
    m = row_sums(counts)
    pairable = m >= 2
    if not pairable.all():
        counts, m = counts[pairable], m[pairable]
    weights = 1.0 / (m - 1.0)
    return (counts * weights[:, None]).T @ counts - np.diag(weights @ counts)


def _distances(domain: np.ndarray, n_v: np.ndarray, level: str) -> np.ndarray:
    """The squared distances between labels, ``... x V x V`` (ordinal ones depend on ``n_v``, ``... x V``)."""
    if level == "nominal":
        return 1.0 - np.eye(len(domain))
    if level == "interval":
        values = np.asarray(domain, dtype=np.float64)
        return (values[:, None] - values[None, :]) ** 2
    if level == "ordinal":
        # delta(c, k) = (sum of n_g for g from c to k, minus (n_c + n_k) / 2) squared.
        zeros = np.zeros((*n_v.shape[:-1], 1))
        cumulative = np.concatenate([zeros, np.cumsum(n_v, axis=-1)], axis=-1)
        low = np.minimum.outer(np.arange(len(domain)), np.arange(len(domain)))
        high = np.maximum.outer(np.arange(len(domain)), np.arange(len(domain)))
        between = cumulative[..., high + 1] - cumulative[..., low]
        return (between - (n_v[..., :, None] + n_v[..., None, :]) / 2.0) ** 2
    raise InputError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}", argument="level")


def alpha_from_coincidences(coincidences: np.ndarray, domain: Sequence[float] | np.ndarray,
                            level: str = "interval") -> np.ndarray | float:
    """Krippendorff's alpha from a V x V coincidence matrix (:func:`coincidence_matrix`); ``nan`` when undefined.

    A stack of matrices (``... x V x V``) gives an array of alphas, one per matrix.
    """
    if level not in LEVELS:
        raise InputError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}", argument="level")
    o = np.asarray(coincidences, dtype=np.float64)
    n_v = o.sum(axis=-2)
    n = n_v.sum(axis=-1)
    d = _distances(np.asarray(domain), n_v, level)
    expected = (n_v[..., :, None] * n_v[..., None, :] * d).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1.0) * (o * d).sum(axis=(-2, -1)) / expected
    alpha = np.where((n > 1) & (expected > 0), alpha, np.nan)
    return float(alpha) if alpha.ndim == 0 else alpha


def worker_kappas(workers: np.ndarray, labels: np.ndarray, reference: np.ndarray, n_workers: int,
                  low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """(kappa, items) of each worker code ``0..n_workers-1``: their labels against ``reference``.

    One confusion matrix per worker, built with a single ``bincount``. A label or reference below
    ``low`` (with ``low=0``: -1, no label) is left out, so callers need not select rows first.
    """
    size = high - low + 1
    # Index 0 of each axis collects what is left out (max(value, low - 1) - (low - 1)); it is cut off
    # before the kappa. In place, as in label_counts.
    flat = np.array(workers, dtype=np.int64)
    for values in (labels, reference):
        flat *= size + 1
        flat += np.maximum(values, low - 1)
        flat -= low - 1
    confusion = np.bincount(flat, minlength=n_workers * (size + 1) ** 2).reshape(n_workers, size + 1, size + 1)
    confusion = np.ascontiguousarray(confusion[:, 1:, 1:])
    return np.asarray(cohen_kappa_from_confusion(confusion, "quadratic")), confusion.sum(axis=(1, 2))
