"""The one Cohen's kappa (castregin.statistics) against statsmodels, plain, linear- and quadratic-weighted."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as statsmodels_kappa

from castregin.errors import InputError
from castregin.statistics import cohen_kappa, cohen_kappa_from_confusion, confusion_matrix


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(("weights", "wt"), [("none", None), ("linear", "linear"), ("quadratic", "quadratic")])
def test_kappa_equals_statsmodels(seed, weights, wt):
    rng = np.random.default_rng(seed)
    size = 2 + seed % 4
    a = rng.integers(0, size, 60 + 10 * seed)
    b = np.where(rng.random(len(a)) < 0.6, a, rng.integers(0, size, len(a)))
    table, _ = confusion_matrix(a.tolist(), b.tolist(), range(size))
    want = statsmodels_kappa(table, wt=wt, return_results=False)
    assert cohen_kappa(a.tolist(), b.tolist(), weights, range(size)) == pytest.approx(want, abs=1e-12)
    assert cohen_kappa_from_confusion(table, weights) == pytest.approx(want, abs=1e-12)


def test_batched_matrices_give_each_matrix_its_kappa():
    rng = np.random.default_rng(3)
    tables = rng.integers(0, 9, (5, 4, 4))
    batched = cohen_kappa_from_confusion(tables, "quadratic")
    for k in range(5):
        assert batched[k] == pytest.approx(statsmodels_kappa(tables[k], wt="quadratic", return_results=False),
                                           abs=1e-12)


def test_undefined_kappa_is_nan():
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))  # one label everywhere: 0 / 0
    assert math.isnan(cohen_kappa_from_confusion(np.zeros((3, 3)), "quadratic"))


def test_unknown_weights():
    with pytest.raises(InputError, match="unknown weights"):
        cohen_kappa([1], [1], "cubic")
