"""Agreement statistics several stages share: Cohen's kappa (plain, linear- and quadratic-weighted), Fleiss' kappa.

One implementation, checked against statsmodels (``tests/test_statistics.py``). The judging stage
uses the weighted kappa for each worker against the aggregated labels; scorekeeping uses the plain
one, as clembench (scikit-learn) computes it; the agreement between judgment sources
(:mod:`castregin.judging.label_agreement`) all three. Fleiss' kappa (the crowd's agreement in the judging
stage) is checked against statsmodels' ``fleiss_kappa`` in ``tests/judging/test_agreement.py``.
PARADISE's task-success kappa is not Cohen's: its
chance agreement comes from the key's distribution alone (Walker et al. 1997), so it stays in
:mod:`castregin.dialogue.paradise`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import InputError

WEIGHTS = ("none", "linear", "quadratic")


def cohen_kappa_from_confusion(confusion, weights: str = "none") -> np.ndarray | float:
    """Cohen's kappa of each ``... x K x K`` confusion matrix (rows: first rater), NaN where undefined.

    ``1 - sum(W * C) / sum(W * E)``, ``E = outer(column sums, row sums) / total``, ``W`` one off the
    diagonal (``none``), ``|i - j|`` (``linear``) or ``(i - j)**2`` (``quadratic``): ``i``, ``j`` are the
    categories' positions, so weighted kappas take them as equally spaced (as scikit-learn does). The operations are
    scikit-learn's ``cohen_kappa_score``'s, in its order, so the last bits agree with what clembench
    published.
    """
    if weights not in WEIGHTS:
        raise InputError(f"unknown weights {weights!r}; expected one of {', '.join(WEIGHTS)}",
                         argument="weights")
    confusion = np.asarray(confusion)
    size = confusion.shape[-1]
    if weights == "none":
        w = np.ones((size, size), dtype=int)
        w.flat[:: size + 1] = 0
    elif weights == "linear":
        w = np.abs(np.arange(size)[:, None] - np.arange(size)[None, :])
    else:
        w = (np.arange(size)[:, None] - np.arange(size)[None, :]) ** 2
    columns = confusion.sum(axis=-2)
    rows = confusion.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = columns[..., :, None] * rows[..., None, :] / columns.sum(axis=-1)[..., None, None]
        denominator = np.sum(w * expected, axis=(-2, -1))
        kappa = 1 - np.sum(w * confusion, axis=(-2, -1)) / denominator
    kappa = np.where(denominator > 0, kappa, np.nan)
    return float(kappa) if kappa.ndim == 0 else kappa


def confusion_matrix(first: Sequence, second: Sequence, categories: Sequence | None = None) -> tuple[np.ndarray, list]:
    """The confusion matrix of two raters' labels of the same items, and its categories.

    ``categories`` gives the (ordered) scale; by default the sorted union of the labels.
    """
    a, b = list(first), list(second)
    if len(a) != len(b):
        raise InputError("the two raters must label the same items (sequences of one length)",
                         argument="second")
    categories = sorted(set(a) | set(b)) if categories is None else list(categories)
    index = {c: i for i, c in enumerate(categories)}
    size = len(categories)
    codes = np.array([index[x] * size + index[y] for x, y in zip(a, b, strict=True)], dtype=np.int64)
    return np.bincount(codes, minlength=size * size).reshape(size, size), categories


def cohen_kappa(first: Sequence, second: Sequence, weights: str = "none", categories: Sequence | None = None) -> float:
    """Cohen's kappa of two raters' labels of the same items (see :func:`cohen_kappa_from_confusion`)."""
    confusion, _ = confusion_matrix(first, second, categories)
    return float(cohen_kappa_from_confusion(confusion, weights))  # one matrix: one kappa


def row_sums(matrix: np.ndarray) -> np.ndarray:
    """The sum of each row of a matrix of few columns (counts per label), as a product with ones.

    Several times faster than ``sum(axis=1)`` on millions of short rows, and the same numbers for
    integers and for integer-valued floats (below 2**53 every order of adding is exact).
    """
    return matrix @ np.ones(matrix.shape[1], dtype=matrix.dtype)


def fleiss_kappa(counts) -> float:
    """Fleiss' kappa of a units x categories count matrix (``counts[u, k]``: raters giving ``u`` label ``k``).

    Crowds rarely give every unit the same number of ratings, so each unit's agreement is over its own
    ``n_u`` ratings, ``(sum_k n_uk**2 - n_u) / (n_u * (n_u - 1))``, averaged over the units with at least
    two; chance is ``sum_k p_k**2`` from those units' pooled ratings. With one ``n`` for all units this
    is Fleiss (1971), step for step as statsmodels computes it. NaN without a pairable unit or when
    every rating falls in one category.
    """
    table = np.asarray(counts, dtype=np.float64)
    if table.ndim != 2:
        raise InputError("counts must be a units x categories matrix", argument="counts")
    raters = row_sums(table)
    if not (raters >= 2).all():
        table, raters = table[raters >= 2], raters[raters >= 2]
    if not len(table):
        return float("nan")
    shares = table.sum(axis=0) / table.sum()
    # Counts are integers: the row sums of squares are exact in any order, so the fast product serves.
    observed = ((np.einsum("ij,ij->i", table, table) - raters) / (raters * (raters - 1.0))).mean()
    chance = (shares * shares).sum()
    if chance >= 1.0:
        return float("nan")
    return float((observed - chance) / (1 - chance))
