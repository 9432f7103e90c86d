"""Our Krippendorff's alpha against the ``krippendorff`` package (GPL-3.0, a test oracle only) and
each worker's kappa against the one kappa (tests/test_statistics.py checks it against statsmodels)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from castregin.errors import InputError
from castregin.judging.agreement import (
    alpha_from_coincidences,
    coincidence_matrix,
    label_counts,
    worker_kappas,
)
from castregin.statistics import cohen_kappa

krippendorff = pytest.importorskip("krippendorff")

LEVELS = ["nominal", "ordinal", "interval"]


def value_counts(data) -> tuple[np.ndarray, np.ndarray]:
    """A raters x units matrix (NaN: no rating), as the ``krippendorff`` package takes it, as aggregate
    counts it: ``counts[u, v]`` ratings of unit ``u`` with value ``domain[v]``."""
    data = np.asarray(data, dtype=float)
    rater, unit = np.nonzero(~np.isnan(data))
    domain, index = np.unique(data[rater, unit], return_inverse=True)
    return label_counts(unit, index, data.shape[1], len(domain)), domain


def krippendorff_alpha(data, level: str) -> float:
    """Krippendorff's alpha of a raters x units matrix, computed as aggregate computes it."""
    counts, domain = value_counts(data)
    return alpha_from_coincidences(coincidence_matrix(counts), domain, level)


def random_reliability(seed: int, raters=7, units=60, values=4, missing=0.45) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, values, units)
    noise = rng.integers(-1, 2, (raters, units)) * (rng.random((raters, units)) < 0.4)
    data = np.clip(truth + noise, 0, values - 1).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    return data


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("level", LEVELS)
def test_alpha_equals_the_krippendorff_package_with_missing_values(seed, level):
    data = random_reliability(seed)
    assert np.isnan(data).any() and (np.sum(~np.isnan(data), axis=0) < 2).any()  # unpairable units too
    want = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", LEVELS)
def test_alpha_with_uneven_values_and_many_raters(seed, level):
    rng = np.random.default_rng(100 + seed)
    data = rng.choice([0.0, 1.0, 2.0, 5.0, 9.0], size=(25, 200), p=[0.4, 0.3, 0.15, 0.1, 0.05])
    data[rng.random(data.shape) < 0.8] = np.nan
    want = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(want, abs=1e-9)


def test_krippendorffs_worked_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the example with missing data.
    nan = np.nan
    data = [[nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
            [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
            [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4]]
    assert round(krippendorff_alpha(data, "nominal"), 6) == 0.691358
    assert round(krippendorff_alpha(data, "interval"), 6) == 0.810845


def test_count_matrix_with_unused_scale_values_changes_nothing():
    data = random_reliability(5, values=3)
    counts, domain = value_counts(data)
    padded = np.hstack([counts, np.zeros((len(counts), 1), dtype=counts.dtype)])
    for level in LEVELS:
        assert alpha_from_coincidences(coincidence_matrix(padded), [*domain, 3], level) == pytest.approx(
            alpha_from_coincidences(coincidence_matrix(counts), domain, level), abs=1e-12)


def test_undefined_alpha_is_nan():
    assert math.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, 1]], "ordinal"))    # one value only
    assert math.isnan(krippendorff_alpha([[1, np.nan], [np.nan, 2]], "interval"))  # nothing pairable
    with pytest.raises(InputError, match="unknown level 'ratio'"):
        krippendorff_alpha([[1, 2], [2, 1]], "ratio")


def test_perfect_agreement_is_one():
    assert krippendorff_alpha([[0, 1, 2, 3], [0, 1, 2, 3], [0, 1, np.nan, 3]], "ordinal") == pytest.approx(1.0)


def test_worker_kappas_match_one_at_a_time():
    rng = np.random.default_rng(11)
    workers = rng.integers(0, 5, 400)
    reference = rng.integers(1, 4, 400)
    labels = np.clip(reference + rng.integers(-1, 2, 400) * (workers % 2), 1, 3)
    kappas, items = worker_kappas(workers, labels, reference, 6, 1, 3)
    for w in range(5):
        mine = workers == w
        assert items[w] == mine.sum()
        assert kappas[w] == pytest.approx(cohen_kappa(labels[mine], reference[mine], "quadratic", [1, 2, 3]), abs=1e-12)
    assert items[5] == 0 and math.isnan(kappas[5])
    assert kappas[0] == pytest.approx(1.0)   # even workers copy the reference


# --- Fleiss' kappa: statsmodels is the oracle where every unit has the same number of ratings ------

def fleiss_by_hand(counts) -> float:
    """Fleiss' kappa, each unit over its own number of ratings (units with fewer than two left out)."""
    units = [np.asarray(row, dtype=float) for row in counts if sum(row) >= 2]
    observed = np.mean([(row @ row - row.sum()) / (row.sum() * (row.sum() - 1)) for row in units])
    shares = np.sum(units, axis=0) / np.sum(units)
    chance = shares @ shares
    return (observed - chance) / (1 - chance)


@pytest.mark.parametrize("seed", range(6))
def test_fleiss_kappa_equals_statsmodels(seed):
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    from castregin.statistics import fleiss_kappa

    rng = np.random.default_rng(seed)
    raters, categories = 3 + seed, 2 + seed % 4
    truth = rng.integers(0, categories, 80)
    labels = np.where(rng.random((80, raters)) < 0.6, truth[:, None], rng.integers(0, categories, (80, raters)))
    table = np.stack([np.bincount(row, minlength=categories) for row in labels])
    assert fleiss_kappa(table) == pytest.approx(statsmodels_fleiss(table), abs=1e-12)


def test_fleiss_kappa_with_uneven_ratings_per_unit(crowd_example):
    import pandas as pd
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    from castregin.statistics import fleiss_kappa

    frame = pd.read_csv(crowd_example / "judgments.csv", dtype=str, keep_default_na=False)
    frame = frame[frame["relevance"] != ""]
    table = pd.crosstab([frame["turn_id"], frame["item_id"]], frame["relevance"].astype(int)).to_numpy()
    raters = table.sum(axis=1)
    assert len(set(raters)) > 1                               # 6 to 9 labels per item
    assert fleiss_kappa(table) == pytest.approx(fleiss_by_hand(table), abs=1e-12)
    for n in set(raters.tolist()):
        assert fleiss_kappa(table[raters == n]) == pytest.approx(statsmodels_fleiss(table[raters == n]), abs=1e-12)


def test_fleiss_kappa_leaves_out_single_ratings_and_is_nan_when_undefined():
    from castregin.statistics import fleiss_kappa

    table = [[2, 0, 1], [0, 3, 0], [1, 1, 1], [0, 0, 1]]
    assert fleiss_kappa(table) == pytest.approx(fleiss_by_hand(table[:3]), abs=1e-12)
    assert math.isnan(fleiss_kappa([[3, 0], [2, 0]]))          # one category only
    assert math.isnan(fleiss_kappa([[1, 0], [0, 1]]))          # nothing pairable
    assert math.isnan(fleiss_kappa(np.zeros((0, 4))))
    assert fleiss_kappa([[3, 0], [0, 3]]) == pytest.approx(1.0)


def test_agreement_reports_fleiss_before_and_after_gold(crowd_example, cli):
    import json

    result = cli("agreement", crowd_example / "judgments.csv", "--criteria", "relevance",
                 "--gold", crowd_example / "gold.csv", "--format", "json")
    assert result.exit_code == 0, result.stderr
    part = json.loads(result.stdout)["relevance"]
    assert 0 < part["before_gold"]["fleiss"] < part["after_gold"]["fleiss"] < 1
    assert set(part["after_gold"]["topics"]["138"]) == {"alpha_nominal", "alpha_ordinal", "alpha_interval",
                                                        "fleiss", "units", "labels"}
    table = cli("agreement", crowd_example / "judgments.csv", "--criteria", "relevance")
    assert "fleiss_before" in table.stdout and "fleiss_after" in table.stdout
