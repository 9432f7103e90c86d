"""Ranking agreement between two label sources (docs/analyze.md "Ranking agreement").

The oracles: scipy's ``kendalltau`` / ``spearmanr`` / ``rankdata``, pytrec_eval's means, and a
brute-force tau_AP and top-k overlap written here from their definitions (Yilmaz et al. 2008's
probabilistic reading of tau_AP), averaged over every way of breaking the ties by enumeration.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
from pathlib import Path
from statistics import fmean

import numpy as np
import pytest
import pytrec_eval
from scipy import stats

from castregin import formats
from castregin.data import Qrels, Run
from castregin.evaluation.analysis import (
    agreement_statistics,
    rank_changes,
    ranking_agreement,
    ranking_agreements,
    tau_ap,
    top_k_overlap,
)
from castregin.render.analysis import ranking_agreement_plot, ranking_agreement_report


def _order(scores, tie_order) -> list[int]:
    """The systems best first, equal scores in ``tie_order`` (a permutation of the systems)."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], tie_order[i]))


def _tie_orders(n: int):
    """Every order of n systems, each the order of equal scores in both rankings (as names would be)."""
    return itertools.permutations(range(n))


def paper_tau_ap(reference_order, estimate_order) -> float:
    """tau_AP of two orders without ties, from the paper's probabilistic reading: pick a system uniformly
    among positions 2..N of the estimate, then one uniformly above it; p is the chance that the
    reference agrees; tau_AP = 2p - 1."""
    n = len(estimate_order)
    place = {system: position for position, system in enumerate(reference_order)}
    p = 0.0
    for position in range(1, n):
        below = estimate_order[position]
        for above in estimate_order[:position]:
            p += (place[above] < place[below]) / ((n - 1) * position)
    return 2 * p - 1


def brute_force_tau_ap(reference, estimate) -> float:
    """The mean of the paper's tau_AP over every order of the tied systems (one for both lists)."""
    return fmean(paper_tau_ap(_order(reference, key), _order(estimate, key)) for key in _tie_orders(len(reference)))


def brute_force_overlap(first, second, k) -> float:
    return fmean(len(set(_order(first, key)[:k]) & set(_order(second, key)[:k])) / k
                 for key in _tie_orders(len(first)))


def test_tau_ap_without_ties_is_the_papers_on_random_scores():
    rng = random.Random(11)
    for _ in range(200):
        n = rng.randint(2, 9)
        a = [rng.random() for _ in range(n)]
        b = [x + rng.gauss(0, 0.3) for x in a]
        order_a, order_b = _order(a, range(n)), _order(b, range(n))
        assert tau_ap(a, b) == pytest.approx(paper_tau_ap(order_a, order_b), abs=1e-12)
        assert tau_ap(b, a) == pytest.approx(paper_tau_ap(order_b, order_a), abs=1e-12)


def test_tau_ap_with_ties_is_the_mean_over_every_order_of_the_ties():
    rng = random.Random(5)
    tied = 0
    for _ in range(150):
        n = rng.randint(2, 6)
        a = [rng.randint(0, 3) for _ in range(n)]
        b = [rng.randint(0, 3) for _ in range(n)]
        tied += len(set(a)) < n or len(set(b)) < n
        assert tau_ap(a, b) == pytest.approx(brute_force_tau_ap(a, b), abs=1e-12), (a, b)
    assert tied > 100  # the case is ties, not luck


def test_tau_ap_of_one_tie_at_the_top_by_hand():
    # A: x > y > z > w. B ties x and y: in half the orders of the tie B is A's order (tau_AP 1), in
    # half it swaps the top pair (C(2) = 0, C(3) = 2/2, C(4) = 3/3: 2/3 * 2 - 1 = 1/3): the mean is
    # 2/3. Ordering the tie by name would give 1 or 1/3 depending on what the runs are called.
    a, b = [4, 3, 2, 1], [3, 3, 2, 1]
    assert tau_ap(a, b) == pytest.approx(2 / 3)
    assert tau_ap(a, [3, 4, 2, 1]) == pytest.approx(1 / 3)
    # The same tie in both: one order for both, so they always agree.
    assert tau_ap(b, b) == 1.0 and tau_ap([1, 1, 1], [1, 1, 1]) == pytest.approx(1.0)


def test_tau_and_rho_equal_scipy_with_and_without_ties():
    rng = np.random.default_rng(3)
    for trial in range(60):
        n = int(rng.integers(3, 15))
        if trial % 2:
            a, b = rng.integers(0, 4, n).astype(float), rng.integers(0, 4, n).astype(float)
        else:
            a = rng.random(n)
            b = a + rng.normal(0, 0.3, n)
        if len(set(a)) < 2 or len(set(b)) < 2:
            continue
        row = agreement_statistics(list(a), list(b), 3)
        assert row["kendall_tau"] == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
        assert row["spearman_rho"] == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)
        if n <= 6:  # the brute force enumerates up to 6! orders (one for both)
            assert row["tau_ap"] == pytest.approx(brute_force_tau_ap(a, b))


def test_tau_and_rho_are_nan_when_a_ranking_is_one_tie(recwarn):
    row = agreement_statistics([0.5, 0.5, 0.5], [0.1, 0.2, 0.3], 2)
    assert np.isnan(row["kendall_tau"]) and np.isnan(row["spearman_rho"])
    assert not [w for w in recwarn.list if "constant" in str(w.message).lower()]


def test_top_k_overlap_by_hand():
    # Runs 0..4. A: 0 > 1 > 2 > 3 > 4; B: 4 > 0 > 2 > 1 > 3.
    a, b = [5, 4, 3, 2, 1], [4, 2, 3, 1, 5]
    assert top_k_overlap(a, b, 1) == 0.0  # {0} vs {4}
    assert top_k_overlap(a, b, 2) == 0.5  # {0, 1} vs {4, 0}
    assert top_k_overlap(a, b, 3) == pytest.approx(2 / 3)  # {0, 1, 2} vs {4, 0, 2}
    assert top_k_overlap(a, b, 5) == 1.0
    # A ties runs 1 and 2 across the cut at k = 2: top 2 is {0, 1} or {0, 2}; B's is {0, 1}:
    # overlap 2/2 or 1/2, mean 3/4.
    tied = [3, 2, 2, 1]
    assert top_k_overlap(tied, [3, 2, 1, 0], 2) == 0.75
    # The same tie in both rankings is ordered the same way in both: the top 2 always agree.
    assert top_k_overlap(tied, tied, 2) == 1.0
    # A ties 1, 2 and 3 across the cut at k = 2, B ties 0 and 1 across the cut at k = 1... at k = 2,
    # B = {0, 1} surely; A = {0} + the first of 1, 2, 3 in the tie order: 1 with chance 1/3.
    assert top_k_overlap([3, 2, 2, 2], [2, 2, 1, 0], 2) == pytest.approx((1 + 1 / 3) / 2)
    row = agreement_statistics(tied, [3, 2, 1, 0], 2)
    assert row["top_k_overlap"] == 0.75 and row["top_k_cut_in_tie"] is True
    assert agreement_statistics(tied, [3, 2, 1, 0], 3)["top_k_cut_in_tie"] is False
    # k above the number of runs: the k used is the number of runs.
    assert agreement_statistics(tied, [3, 2, 1, 0], 9)["top_k"] == 4


def test_top_k_overlap_with_ties_is_the_mean_over_every_order_of_the_ties():
    rng = random.Random(8)
    for _ in range(150):
        n = rng.randint(2, 6)
        a = [rng.randint(0, 2) for _ in range(n)]
        b = [rng.randint(0, 2) for _ in range(n)]
        k = rng.randint(1, n)
        assert top_k_overlap(a, b, k) == top_k_overlap(b, a, k)
        assert top_k_overlap(a, b, k) == pytest.approx(brute_force_overlap(a, b, k), abs=1e-12), (a, b, k)


def test_movers_by_hand():
    names = ["d", "b", "a", "c", "e"]
    a = [0.5, 0.4, 0.3, 0.2, 0.2]  # ranks 1, 2, 3, 4, 4 (ties share the best)
    b = [0.1, 0.4, 0.5, 0.2, 0.3]  # ranks 5, 2, 1, 4, 3
    rows, movers = rank_changes(names, a, b)
    assert [(r.run, r.rank_a, r.rank_b) for r in rows] == [("d", 1, 5), ("b", 2, 2), ("a", 3, 1), ("c", 4, 4),
                                                           ("e", 4, 3)]
    # |change| 4, 2, 1; b and c do not move.
    assert [(m.run, m.rank_a, m.rank_b, m.change) for m in movers] == [("d", 1, 5, 4), ("a", 3, 1, -2),
                                                                       ("e", 4, 3, -1)]
    # Equal changes: by name.
    _, movers = rank_changes(["z", "y", "x"], [3, 2, 1], [2, 3, 1])
    assert [m.run for m in movers] == ["y", "z"]


def _toy():
    """Five runs over three turns and two label sources; the means come from pytrec_eval below."""
    rng = np.random.default_rng(4)
    turns = ["1_1", "1_2", "2_1"]
    items = [f"d{i}" for i in range(8)]
    labels_a = {t: {d: int(rng.integers(0, 4)) for d in items} for t in turns}
    labels_b = {t: {d: int(max(0, min(3, v + rng.integers(-2, 3)))) for d, v in labels_a[t].items()} for t in turns}
    runs = [Run(f"run{i}", {t: {d: float(rng.random()) for d in items} for t in turns}) for i in range(5)]
    return runs, Qrels(labels_a, "human"), Qrels(labels_b, "llm")


def _pytrec_means(runs, qrels, key="ndcg_cut_3"):
    """Each run's mean of trec_eval measure ``key`` over the turns it shares with ``qrels`` (trec_eval -l2)."""
    measure = key if "_" not in key else ".".join(key.rsplit("_", 1))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels.labels, {measure}, relevance_level=2)
    return [fmean(v[key] for v in evaluator.evaluate({t: s for t, s in run.scores.items() if t in qrels.labels})
                  .values()) for run in runs]


def test_ranking_agreement_of_two_sources_equals_the_oracles():
    runs, human, llm = _toy()
    agreement = ranking_agreement(runs, human, llm, "nDCG@3", top_k=2)
    a, b = _pytrec_means(runs, human), _pytrec_means(runs, llm)
    assert [r.score_a for r in agreement.runs] == pytest.approx(a, abs=1e-12)
    assert [r.score_b for r in agreement.runs] == pytest.approx(b, abs=1e-12)
    assert [r.rank_a for r in agreement.runs] == list(stats.rankdata(-np.array(a), method="min"))
    assert [r.rank_b for r in agreement.runs] == list(stats.rankdata(-np.array(b), method="min"))
    statistics = agreement.statistics
    assert statistics["kendall_tau"] == pytest.approx(stats.kendalltau(a, b).statistic)
    assert statistics["spearman_rho"] == pytest.approx(stats.spearmanr(a, b).statistic)
    assert statistics["tau_ap"] == pytest.approx(brute_force_tau_ap(a, b))
    assert statistics["tau_ap_reverse"] == pytest.approx(brute_force_tau_ap(b, a))
    assert statistics["top_k_overlap"] == pytest.approx(brute_force_overlap(a, b, 2))
    assert (agreement.qrels_a, agreement.qrels_b, agreement.measure) == ("human", "llm", "nDCG@3")
    # Three sources: every pair, in order.
    third = Qrels(dict(llm.labels), "nist")
    pairs = ranking_agreements(runs, [human, llm, third], "nDCG@3")
    assert [(p.qrels_a, p.qrels_b) for p in pairs] == [("human", "llm"), ("human", "nist"), ("llm", "nist")]
    assert pairs[2].statistics["kendall_tau"] == pytest.approx(1.0) and not pairs[2].movers


def test_ranking_agreement_refuses_one_run():
    from castregin.errors import InputError

    runs, human, llm = _toy()
    with pytest.raises(InputError, match="at least two runs"):
        ranking_agreement(runs[:1], human, llm, "nDCG@3")


def test_every_record_format_holds_the_numbers():
    runs, human, llm = _toy()
    agreement = ranking_agreement(runs, human, llm, "nDCG@3", top_k=2)
    a = _pytrec_means(runs, human)
    loaded = json.loads(ranking_agreement_report(agreement, "json"))
    assert loaded[0]["statistics"]["spearman_rho"] == pytest.approx(stats.spearmanr(a, _pytrec_means(runs, llm))
                                                                    .statistic)
    assert [r["score_a"] for r in loaded[0]["runs"]] == pytest.approx(a)
    rows = list(csv.DictReader(io.StringIO(ranking_agreement_report(agreement, "csv"))))
    assert [r["run"] for r in rows] == [run.tag for run in runs]
    assert [float(r["score_a"]) for r in rows] == pytest.approx(a, abs=1e-12)
    assert {r["top_k_overlap"] for r in rows} == {repr(agreement.statistics["top_k_overlap"])}
    moving = [m.run for m in agreement.movers]
    for fmt in ("table", "markdown", "latex"):
        text = ranking_agreement_report(agreement, fmt)
        assert f"{agreement.statistics['kendall_tau']:.4f}" in text
        assert all(name in text for name in moving)
    best = max(range(len(a)), key=lambda i: a[i])
    assert ranking_agreement_report(agreement, "table").split("Every run")[1].splitlines()[3].split()[0] \
        == runs[best].tag  # the runs by their rank under A


def test_scatter_plot_is_a_png_written_and_decoded(tmp_path):
    from PIL import Image

    runs, human, llm = _toy()
    agreement = ranking_agreement(runs, human, llm, "nDCG@3")
    path = tmp_path / "agreement.png"
    path.write_bytes(ranking_agreement_plot(agreement))
    with Image.open(path) as image:
        image.load()
        assert image.format == "PNG" and image.width > 300 and image.height > 300
        # Not blank: dots and a line were drawn.
        assert len(image.convert("RGB").getcolors(maxcolors=1 << 20)) > 10
    assert ranking_agreement_plot(agreement) == path.read_bytes()  # deterministic


def test_analyze_correlation_prints_rho_and_the_top_k_overlap(tmp_path, cli):
    runs, human, llm = _toy()
    run_paths = []
    for run in runs:
        path = tmp_path / f"{run.tag}.run"
        path.write_text("".join(f"{t} Q0 {d} 0 {s!r} {run.tag}\n" for t, items in run.scores.items()
                                for d, s in items.items()))
        run_paths.append(path)
    qrels_paths = []
    for qrels in (human, llm):
        path = tmp_path / f"{qrels.name}.qrel"
        path.write_text("".join(f"{t} 0 {d} {v}\n" for t, items in qrels.labels.items() for d, v in items.items()))
        qrels_paths.append(path)
    result = cli("analyze", "correlation", *run_paths, "--qrels", qrels_paths[0], "--qrels", qrels_paths[1],
                 "-m", "nDCG@3", "--top-k", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    a, b = _pytrec_means(runs, human), _pytrec_means(runs, llm)
    assert row["spearman_rho"] == pytest.approx(stats.spearmanr(a, b).statistic)
    assert row["top_k_overlap"] == pytest.approx(brute_force_overlap(a, b, 2)) and row["top_k"] == 2
    assert row["tau_ap_reverse"] == pytest.approx(brute_force_tau_ap(b, a))
    refused = cli("analyze", "correlation", *run_paths, "--qrels", qrels_paths[0], "--top-k", "0")
    assert refused.exit_code == 2 and "--top-k" in refused.stderr


def test_api_ranking_agreement_takes_dicts_and_names():
    from castregin import api

    runs, human, llm = _toy()
    agreement = api.ranking_agreement([r.scores for r in runs], human.labels, llm.labels, measure="nDCG@3",
                                      top_k=2)
    a, b = _pytrec_means(runs, human), _pytrec_means(runs, llm)
    assert [r.run for r in agreement.runs] == [f"runs[{i}]" for i in range(len(runs))]
    assert agreement.statistics["kendall_tau"] == pytest.approx(stats.kendalltau(a, b).statistic)
    assert agreement.to_dict()["statistics"]["top_k"] == 2


def test_the_cast_example_of_the_docs(cast2022, run_paths, cli):
    """docs/analyze.md's rows are what castregin prints on the CAsT 2022 MI baselines, and scipy agrees."""
    qrels = {name: cast2022 / f"regin/qrels/question_relevance_{name}.qrel" for name in ("all", "mi_subset")}
    page = (Path(__file__).resolve().parents[2] / "docs" / "analyze.md").read_text(encoding="utf-8")
    result = cli("analyze", "correlation", *run_paths, "--qrels", f"all={qrels['all']}", "--qrels",
                 f"mi={qrels['mi_subset']}", "-m", "AP", "--top-k", "2")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[2] in page
    runs = [formats.read_run(path) for path in run_paths]
    for measure, key, tau, tau_ap_value in (("AP", "map", 2 / 3, 1 / 3), ("P@1", "P_1", 0.9129, 2 / 3)):
        a, b = (_pytrec_means(runs, formats.read_qrels(qrels[name]), key) for name in ("all", "mi_subset"))
        statistics = ranking_agreement(runs, formats.read_qrels(qrels["all"]), formats.read_qrels(qrels["mi_subset"]),
                                       measure, top_k=2).statistics
        assert statistics["kendall_tau"] == pytest.approx(stats.kendalltau(a, b).statistic) == pytest.approx(tau,
                                                                                                           abs=1e-4)
        assert statistics["tau_ap"] == pytest.approx(brute_force_tau_ap(a, b)) == pytest.approx(tau_ap_value)
        assert statistics["top_k_overlap"] == 1.0


def test_correlations_take_a_measure_family():
    # Before the fix, -m P.1,3 ended in a KeyError: the means were looked up under "P.1,3".
    from castregin.evaluation.analysis import ranking_correlations

    runs, human, llm = _toy()
    rows = ranking_correlations(runs, [(human, "P.1,3"), (llm, "P.1,3")], top_k=2)
    assert [(r["qrels_a"], r["measure_a"], r["qrels_b"], r["measure_b"]) for r in rows] == [
        ("human", "P_1", "human", "P_3"), ("human", "P_1", "llm", "P_1"), ("human", "P_1", "llm", "P_3"),
        ("human", "P_3", "llm", "P_1"), ("human", "P_3", "llm", "P_3"), ("llm", "P_1", "llm", "P_3")]
    a, b = _pytrec_means(runs, human, "P_3"), _pytrec_means(runs, llm, "P_3")
    assert rows[4]["spearman_rho"] == pytest.approx(stats.spearmanr(a, b).statistic)


def test_record_tables_never_print_negative_zero():
    # tau_AP of a ranking against one tie is 0 up to a rounding error of -1.1e-16: it read -0.0000.
    from castregin.evaluation.analysis import agreement_of_scores

    agreement = agreement_of_scores(["x", "y", "z"], "A", [0.5, 0.5, 0.5], "B", [0.1, 0.2, 0.3], "P@1", 2)
    assert agreement.statistics["tau_ap_reverse"] == pytest.approx(0.0, abs=1e-12)
    for fmt in ("table", "markdown", "latex"):
        text = ranking_agreement_report(agreement, fmt)
        assert "-0.0000" not in text and "0.0000" in text
