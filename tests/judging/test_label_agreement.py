"""The agreement between judgment sources against independent oracles: scikit-learn's cohen_kappa_score and
confusion_matrix, the krippendorff package's alpha, scipy's bootstrap; on the LLMJudge labels (SIGIR 2024,
tests/data/llmjudge/README.md) and on random labels with gaps."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from castregin.api import label_agreement as api_label_agreement
from castregin.errors import InputError, InputWarning
from castregin.formats.trec import read_qrels
from castregin.judging.label_agreement import STATISTICS, label_agreement, pair_agreement

sklearn_metrics = pytest.importorskip("sklearn.metrics")
krippendorff = pytest.importorskip("krippendorff")

from pathlib import Path  # noqa: E402

LLMJUDGE = Path(__file__).resolve().parent.parent / "data" / "llmjudge"
LLM_SETS = ("Olz-gpt4o", "willia-umbrela1", "h2oloo-fewself")
LEVELS = ("nominal", "ordinal", "interval")


def labels_of(path: Path) -> dict[str, dict[str, int]]:
    """An oracle's own reading of a 4-column qrels file (not castregin's reader)."""
    table: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        turn, _, item, label = line.split()
        table.setdefault(turn, {})[item] = int(label)
    return table


def shared_vectors(a, b):
    keys = sorted((t, i) for t in a for i in a[t] if i in b.get(t, {}))
    return keys, [a[t][i] for t, i in keys], [b[t][i] for t, i in keys]


def check_pair(pair: dict, a: dict, b: dict, rel_level: int = 2) -> None:
    """Every number of a pair against scikit-learn and krippendorff on the shared (turn, item) pairs."""
    _, x, y = shared_vectors(a, b)
    judged_a = {(t, i) for t in a for i in a[t]}
    judged_b = {(t, i) for t in b for i in b[t]}
    assert (pair["both"], pair["only_a"], pair["only_b"]) == (len(judged_a & judged_b), len(judged_a - judged_b),
                                                             len(judged_b - judged_a))
    stats = pair["statistics"]
    assert stats["exact"] == pytest.approx(sklearn_metrics.accuracy_score(x, y), abs=1e-12)
    for name, weights in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
        assert stats[name] == pytest.approx(sklearn_metrics.cohen_kappa_score(x, y, weights=weights), abs=1e-12)
    for level in LEVELS:
        want = krippendorff.alpha(reliability_data=np.array([x, y], dtype=float), level_of_measurement=level)
        assert stats[f"alpha_{level}"] == pytest.approx(want, abs=1e-12), level
    labels = sorted(set(x) | set(y))
    assert pair["labels"] == labels
    assert np.array_equal(pair["confusion"], sklearn_metrics.confusion_matrix(x, y, labels=labels))
    bx, by = [v >= rel_level for v in x], [v >= rel_level for v in y]
    assert stats["binary_agreement"] == pytest.approx(sklearn_metrics.accuracy_score(bx, by), abs=1e-12)
    assert stats["binary_kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(bx, by), abs=1e-12)
    for row in pair["per_label"]:
        n_a, n_b = x.count(row["label"]), y.count(row["label"])
        agreed = sum(1 for p, q in zip(x, y, strict=True) if p == q == row["label"])
        assert (row["count_a"], row["count_b"], row["agreed"]) == (n_a, n_b, agreed)
        assert row["specific_agreement"] == pytest.approx(2 * agreed / (n_a + n_b))


@pytest.fixture(scope="module")
def llmjudge():
    return {name: labels_of(LLMJUDGE / f"{name}.qrel") for name in ("human", *LLM_SETS)}


def test_llmjudge_files_are_what_the_readme_says(llmjudge):
    human = llmjudge["human"]
    assert sum(len(v) for v in human.values()) == 4423 and len(human) == 25
    assert {label for items in human.values() for label in items.values()} == {0, 1, 2, 3}
    for name in LLM_SETS:
        assert {(t, i) for t in llmjudge[name] for i in llmjudge[name][t]} == {(t, i) for t in human for i in human[t]}
    # castregin reads them as the oracle does
    assert read_qrels(LLMJUDGE / "human.qrel").labels == human


@pytest.mark.parametrize("name", LLM_SETS)
def test_llmjudge_human_against_each_llm_equals_sklearn_and_krippendorff(llmjudge, name):
    pair = pair_agreement(llmjudge["human"], llmjudge[name], names=("human", name), samples=0)
    check_pair(pair, llmjudge["human"], llmjudge[name])
    assert pair["intervals"]["kappa"] == [None, None]


def test_llmjudge_per_topic_equals_sklearn(llmjudge):
    human, llm = llmjudge["human"], llmjudge["Olz-gpt4o"]
    pair = pair_agreement(human, llm, samples=0)
    assert [row["topic"] for row in pair["topics"]] == sorted(human, key=lambda t: int(t[1:]))
    for row in pair["topics"]:
        x = [human[row["topic"]][i] for i in sorted(human[row["topic"]])]
        y = [llm[row["topic"]][i] for i in sorted(human[row["topic"]])]
        assert row["both"] == len(x) and row["only_a"] == row["only_b"] == 0
        want = sklearn_metrics.cohen_kappa_score(x, y, weights="quadratic")
        got = row["kappa_quadratic"]
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want)
        alpha = krippendorff.alpha(reliability_data=np.array([x, y], dtype=float), level_of_measurement="ordinal")
        assert row["alpha_ordinal"] == pytest.approx(alpha, abs=1e-12)


def test_llmjudge_alpha_of_all_sources_equals_krippendorff(llmjudge):
    result = label_agreement([(name, llmjudge[name]) for name in ("human", *LLM_SETS)], samples=0)
    assert len(result["pairs"]) == 6
    keys = sorted((t, i) for t in llmjudge["human"] for i in llmjudge["human"][t])
    data = np.array([[llmjudge[name][t][i] for t, i in keys] for name in ("human", *LLM_SETS)], dtype=float)
    assert result["overall"]["units"] == 4423 and result["overall"]["labels"] == 4 * 4423
    for level in LEVELS:
        want = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert result["overall"][f"alpha_{level}"] == pytest.approx(want, abs=1e-12)


def random_sources(seed: int, n_sources: int = 4, turns: int = 12, items: int = 15):
    """Sources that each judge a random part of the (turn, item) pairs, labels on scales with gaps."""
    rng = np.random.default_rng(seed)
    scales = [[0, 1, 2, 3], [0, 1, 3], [0, 2, 3, 4], [1, 2, 3]]
    truth = rng.integers(0, 4, size=(turns, items))
    sources = []
    for s in range(n_sources):
        scale = scales[s % len(scales)]
        judged = rng.random((turns, items)) < rng.uniform(0.3, 0.9)
        noisy = np.clip(truth + rng.integers(-1, 2, size=truth.shape), 0, 3)
        table: dict[str, dict[str, int]] = {}
        for t, i in zip(*np.nonzero(judged), strict=True):
            label = scale[min(int(noisy[t, i]), len(scale) - 1)]
            table.setdefault(f"{t % 4 + 1}_{t}", {})[f"d{i}"] = label
        sources.append((f"s{s}", table))
    return sources


@pytest.mark.parametrize("seed", range(6))
def test_random_labels_with_gaps_equal_the_oracles(seed):
    sources = random_sources(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        result = label_agreement(sources, samples=0, rel_level=2)
    pairs = {(p["a"], p["b"]): p for p in result["pairs"]}
    assert len(pairs) == 6
    for (a_name, a), (b_name, b) in ((sources[i], sources[j]) for i in range(4) for j in range(i + 1, 4)):
        check_pair(pairs[a_name, b_name], a, b)
    units = sorted({(t, i) for _, table in sources for t in table for i in table[t]})
    data = np.array([[table.get(t, {}).get(i, np.nan) for t, i in units] for _, table in sources], dtype=float)
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    assert result["overall"]["units"] == int(pairable.sum())
    for level in LEVELS:
        want = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert result["overall"][f"alpha_{level}"] == pytest.approx(want, abs=1e-12), level


def test_bootstrap_interval_equals_scipy_within_monte_carlo_error():
    """Multinomial draws of the confusion matrix against scipy's paired percentile bootstrap of the pairs."""
    scipy_stats = pytest.importorskip("scipy.stats")
    sources = random_sources(11, n_sources=2, turns=20, items=20)
    a, b = sources[0][1], sources[1][1]
    _, x, y = shared_vectors(a, b)
    assert len(x) > 100
    pair = pair_agreement(a, b, samples=4000, seed=3, confidence=0.9)
    assert pair["labels"] == [0, 1, 2, 3]  # label values are the categories' positions, as the statistic takes

    def quadratic_kappa(p, q, axis=-1):
        # 1 - n sum (p - q)^2 / sum_i sum_j (p_i - q_j)^2, from the moments (vectorised over resamples).
        p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
        n = p.shape[axis]
        spread = n * (p * p).sum(axis) + n * (q * q).sum(axis) - 2 * p.sum(axis) * q.sum(axis)
        return 1 - n * ((p - q) ** 2).sum(axis) / spread

    def exact(p, q, axis=-1):
        return np.mean(np.asarray(p) == np.asarray(q), axis=axis)

    assert quadratic_kappa(x, y) == pytest.approx(sklearn_metrics.cohen_kappa_score(x, y, weights="quadratic"))
    for name, statistic in (("kappa_quadratic", quadratic_kappa), ("exact", exact)):
        found = scipy_stats.bootstrap((np.array(x), np.array(y)), statistic, paired=True, vectorized=True,
                                      n_resamples=4000, method="percentile", confidence_level=0.9,
                                      rng=np.random.default_rng(5))
        low, high = pair["intervals"][name]
        # Two independent Monte-Carlo estimates of the 5% and 95% quantiles (4000 resamples each): their
        # difference has a standard error near 0.0025 here; the interval is some 0.17 wide.
        assert low == pytest.approx(found.confidence_interval.low, abs=0.01), name
        assert high == pytest.approx(found.confidence_interval.high, abs=0.01), name
        assert low < pair["statistics"][name] < high


def test_bootstrap_is_seeded_and_each_pair_alone():
    sources = random_sources(2, n_sources=3)
    first = label_agreement(sources, samples=300, seed=7)
    again = label_agreement(sources, samples=300, seed=7)
    other = label_agreement(sources, samples=300, seed=8)
    alone = label_agreement(sources[:2], samples=300, seed=7)
    assert first["pairs"][0]["intervals"] == again["pairs"][0]["intervals"] == alone["pairs"][0]["intervals"]
    assert first["pairs"][0]["intervals"] != other["pairs"][0]["intervals"]
    assert set(first["pairs"][0]["intervals"]) == set(STATISTICS)


def test_pairs_judged_by_one_source_are_counted_and_no_overlap_refused():
    a = {"1_1": {"x": 1, "y": 2}, "1_2": {"z": 0}}
    b = {"1_1": {"x": 1, "w": 3}, "2_1": {"v": 2}}
    pair = pair_agreement(a, b, samples=0)
    assert (pair["both"], pair["only_a"], pair["only_b"]) == (1, 2, 2)
    assert [(r["topic"], r["both"], r["only_a"], r["only_b"]) for r in pair["topics"]] == [("1", 1, 2, 1),
                                                                                           ("2", 0, 0, 1)]
    with pytest.raises(InputError, match="no \\(turn, item\\) pair is judged by two sources"):
        label_agreement([("a", {"1_1": {"x": 1}}), ("b", {"1_1": {"y": 1}})])
    with pytest.warns(InputWarning, match="b and c judged no \\(turn, item\\) pair in common"):
        result = label_agreement([("a", {"1_1": {"x": 1, "y": 2}}), ("b", {"1_1": {"x": 1}}), ("c", {"1_1": {"y": 0}})],
                                 samples=0)
    assert math.isnan(result["pairs"][2]["statistics"]["kappa"])


def test_workers_of_one_crowd_are_not_compared():
    sources = random_sources(4, n_sources=3)
    result = label_agreement(sources, groups=["crowd", "crowd", None], samples=0)
    assert [(p["a"], p["b"]) for p in result["pairs"]] == [("s0", "s2"), ("s1", "s2")]


def test_settings_are_checked():
    sources = random_sources(0, n_sources=2)
    for kwargs, message in (({"confidence": 1.0}, "confidence"), ({"samples": -1}, "negative"),
                            ({"rel_level": 1.5}, "integer")):
        with pytest.raises(InputError, match=message):
            label_agreement(sources, **kwargs)
    with pytest.raises(InputError, match="two sources are named"):
        label_agreement([sources[0], sources[0]])


def test_api_takes_paths_qrels_and_dicts(llmjudge):
    human = read_qrels(LLMJUDGE / "human.qrel")
    result = api_label_agreement(human, LLMJUDGE / "Olz-gpt4o.qrel", llmjudge["willia-umbrela1"], samples=0)
    assert [s["name"] for s in result["sources"]] == ["human", "Olz-gpt4o", "c"]
    check_pair(result["pairs"][0], llmjudge["human"], llmjudge["Olz-gpt4o"])
    named = api_label_agreement(llmjudge["human"], llmjudge["Olz-gpt4o"], names=["nist", "gpt4o"], samples=0)
    assert (named["pairs"][0]["a"], named["pairs"][0]["b"]) == ("nist", "gpt4o") and named["overall"] is None
    with pytest.raises(InputError, match="names holds 1 names for 2 sources"):
        api_label_agreement(human, human, names=["x"])


def with_unjudged(seed: int):
    """Two sources like a track's qrels: some pooled pairs left unjudged (-1, or -2: any label below 0)."""
    (a_name, a), (b_name, b) = random_sources(seed, n_sources=2, turns=10, items=12)
    rng = np.random.default_rng(100 + seed)
    for table in (a, b):
        for items in table.values():
            for item in items:
                if rng.random() < 0.2:
                    items[item] = int(rng.choice([-1, -2]))
    return (a_name, a), (b_name, b)


def judged_only(table: dict) -> dict:
    return {t: {i: v for i, v in items.items() if v >= 0} for t, items in table.items()}


@pytest.mark.parametrize("seed", range(3))
def test_labels_below_0_are_not_judged(seed):
    """A label below 0 is "in the pool but unjudged" (README, as `qrels merge` and `judge --only-unjudged` take
    it): a pair one source left unjudged counts as judged by the other only; the statistics are sklearn's and
    krippendorff's on the labels >= 0."""
    (a_name, a), (b_name, b) = with_unjudged(seed)
    assert any(v < 0 for items in a.values() for v in items.values())
    result = label_agreement([(a_name, a), (b_name, b)], samples=0)
    (pair,) = result["pairs"]
    check_pair(pair, judged_only(a), judged_only(b))
    assert min(pair["labels"]) >= 0
    below = [sum(v < 0 for items in t.values() for v in items.values()) for t in (a, b)]
    assert [(s["name"], s["judged"], s["below_zero"]) for s in result["sources"]] == [
        (name, sum(len(items) for items in t.values()) - n, n) for name, t, n in ((a_name, a, below[0]),
                                                                                  (b_name, b, below[1]))]
    assert result["settings"]["negative_labels"] == "unjudged"


def test_labels_below_0_as_a_category_on_request():
    (a_name, a), (b_name, b) = with_unjudged(0)
    result = label_agreement([(a_name, a), (b_name, b)], samples=0, negative_labels="category")
    (pair,) = result["pairs"]
    check_pair(pair, a, b)
    assert pair["labels"][:2] == [-2, -1]
    assert [s["judged"] for s in result["sources"]] == [sum(len(items) for items in t.values()) for t in (a, b)]
    with pytest.raises(InputError, match="negative_labels"):
        label_agreement([(a_name, a), (b_name, b)], negative_labels="hole")


def test_alpha_of_all_leaves_labels_below_0_out():
    sources = random_sources(5, n_sources=3)
    sources[0][1]["1_0"] = dict.fromkeys(sources[0][1].get("1_0", {"d0": 0}), -1)
    result = label_agreement(sources, samples=0)
    units = sorted({(t, i) for _, table in sources for t in table for i in table[t]})
    data = np.array([[table.get(t, {}).get(i, np.nan) for t, i in units] for _, table in sources], dtype=float)
    data[data < 0] = np.nan
    for level in LEVELS:
        want = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert result["overall"][f"alpha_{level}"] == pytest.approx(want, abs=1e-12), level


def test_more_distinct_labels_than_a_scale_are_refused_before_any_matrix():
    """K distinct labels make a K x K confusion matrix per topic (2,000 took 1 GB): more than
    limits.MAX_SCALE_LABELS are refused in one line, through the API too; as many are compared."""
    from castregin.limits import MAX_SCALE_LABELS

    def sources(distinct: int):
        a = {"1_1": {f"d{k}": k for k in range(distinct)}}
        b = {"1_1": {f"d{k}": k for k in range(distinct)}}
        return a, b

    a, b = sources(MAX_SCALE_LABELS + 1)
    message = f"the sources hold {MAX_SCALE_LABELS + 1} distinct labels; agreement takes at most {MAX_SCALE_LABELS}"
    with pytest.raises(InputError, match=message):
        label_agreement([("a", a), ("b", b)], samples=0)
    with pytest.raises(InputError, match=message):
        api_label_agreement(a, b, samples=0)
    a, b = sources(MAX_SCALE_LABELS)
    (pair,) = label_agreement([("a", a), ("b", b)], samples=0)["pairs"]
    assert pair["both"] == MAX_SCALE_LABELS and pair["statistics"]["exact"] == 1.0
