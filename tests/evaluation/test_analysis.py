"""Evaluating the evaluation (README "analyze"): LORO, rank correlations, bootstrap intervals."""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest
import pytrec_eval
from reference_runs import read_qrels_plain, read_run_plain
from scipy import stats

from castregin import formats
from castregin.data import Qrels, Run
from castregin.evaluation.analysis import (
    bootstrap_intervals,
    leave_one_run_out,
    percentile_interval,
    ranking_correlations,
    swapped_pairs,
    system_ranks,
    tau_ap,
    unique_contributions,
)


def brute_force_tau_ap(reference, estimate) -> float:
    """tau_AP from its probabilistic reading (Yilmaz et al. 2008): pick a system uniformly among
    positions 2..N of the estimate, then one uniformly above it; p is the chance the reference agrees."""
    n = len(reference)
    order = sorted(range(n), key=lambda i: -estimate[i])
    p = 0.0
    for position in range(1, n):
        below = order[position]
        for above in order[:position]:
            agrees = reference[above] > reference[below]
            p += agrees / ((n - 1) * position)
    return 2 * p - 1


def test_tau_ap_by_hand_from_the_papers_definition():
    # Reference A > B > C > D. A swap at the top costs more than one at the bottom; Kendall's tau
    # cannot tell them apart (2/3 both).
    reference = [4, 3, 2, 1]
    top_swap, bottom_swap = [3, 4, 2, 1], [4, 3, 1, 2]
    # top swap: C(2) = 0/1, C(3) = 2/2, C(4) = 3/3 -> 2/3 * 2 - 1 = 1/3
    assert tau_ap(reference, top_swap) == pytest.approx(1 / 3)
    # bottom swap: 1/1 + 2/2 + 2/3 -> 2/3 * 8/3 - 1 = 7/9
    assert tau_ap(reference, bottom_swap) == pytest.approx(7 / 9)
    assert stats.kendalltau(reference, top_swap).statistic == pytest.approx(2 / 3)
    assert tau_ap(reference, reference) == 1.0 and tau_ap(reference, reference[::-1]) == -1.0


def test_tau_ap_equals_the_brute_force_on_every_permutation_of_six():
    reference = [6, 5, 4, 3, 2, 1]
    for permutation in itertools.permutations(reference):
        assert tau_ap(reference, list(permutation)) == pytest.approx(brute_force_tau_ap(reference, permutation))


def test_kendall_tau_and_swaps_equal_scipy_on_random_scores():
    rng = random.Random(3)
    for _ in range(50):
        a = [rng.random() for _ in range(8)]
        b = [x + rng.gauss(0, 0.3) for x in a]
        concordant = sum(1 for i, j in itertools.combinations(range(8), 2) if (a[i] - a[j]) * (b[i] - b[j]) > 0)
        assert swapped_pairs(a, b) == 28 - concordant
        assert (1 - 2 * swapped_pairs(a, b) / 28) == pytest.approx(stats.kendalltau(a, b).statistic)


def _simulated(tmp_path=None):
    """Three runs over two turns; only run 'c' finds x9 and y9 (both relevant), at rank 1."""
    qrels = Qrels({"1_1": {"x1": 2, "x2": 0, "x9": 3}, "1_2": {"y1": 2, "y9": 2}}, "q")
    a = Run("a", {"1_1": {"x1": 3.0, "x2": 2.0}, "1_2": {"y1": 3.0}}, {"1_1": {"x1": 1, "x2": 2}, "1_2": {"y1": 1}})
    b = Run("b", {"1_1": {"x1": 3.0, "x2": 2.0}, "1_2": {"y1": 3.0}}, {"1_1": {"x1": 1, "x2": 2}, "1_2": {"y1": 1}})
    c = Run("c", {"1_1": {"x9": 3.0, "x1": 2.0}, "1_2": {"y9": 3.0, "y1": 2.0}},
            {"1_1": {"x9": 1, "x1": 2}, "1_2": {"y9": 1, "y1": 2}})
    return [a, b, c], qrels


def test_loro_a_run_whose_relevant_items_nobody_else_finds_loses_exactly_those():
    runs, qrels = _simulated()
    assert unique_contributions(runs, 1) == [{}, {}, {"1_1": {"x9"}, "1_2": {"y9"}}]
    assert unique_contributions(runs, 2) == [{}, {}, {"1_1": {"x9"}, "1_2": {"y9"}}]
    rows, summary = leave_one_run_out(runs, qrels, depth=1, measure="P@1")
    by_run = {row.run: row for row in rows}
    # c had P@1 = 1 on both turns through x9 and y9; without them they are unjudged: 0.
    assert (by_run["c"].score, by_run["c"].score_without, by_run["c"].unique) == (1.0, 0.0, 2)
    assert (by_run["c"].rank, by_run["c"].rank_without) == (1, 3)  # all three tie at 1 on the full qrels
    assert by_run["c"].judged_without == 0.0
    # a and b contributed nothing of their own: unchanged.
    assert by_run["a"].change == 0.0 and by_run["b"].change == 0.0
    assert summary["max_rank_drop"] == 2


def test_loro_on_the_cast_baselines_equals_pytrec_eval_on_independently_reduced_qrels(cast_data):
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    runs = [formats.read_run(p) for p in run_paths]
    rows, summary = leave_one_run_out(runs, formats.read_qrels(qrels_path), depth=1, measure="ndcg_cut_3",
                                      score_precision="float")  # pytrec_eval's rule
    plain_qrels = read_qrels_plain(qrels_path)
    # The top item of each run per turn, by the rank column, read without castregin.
    tops = []
    for path in run_paths:
        best = {}
        for line in path.read_text().splitlines():
            turn, _, item, rank, *_ = line.split()
            if turn not in best or int(rank) < best[turn][0]:
                best[turn] = (int(rank), item)
        tops.append({turn: item for turn, (_, item) in best.items()})
    for index, (path, row) in enumerate(zip(run_paths, rows, strict=True)):
        others = {(t, i) for j, top in enumerate(tops) if j != index for t, i in top.items()}
        mine = {(t, i) for t, i in tops[index].items()} - others
        reduced = {t: {i: label for i, label in items.items() if (t, i) not in mine}
                   for t, items in plain_qrels.items()}
        reduced = {t: items for t, items in reduced.items() if items}
        run = read_run_plain(path)
        per_turn = pytrec_eval.RelevanceEvaluator(reduced, {"ndcg_cut.3"}).evaluate(run)
        expected = sum(v["ndcg_cut_3"] for v in per_turn.values()) / len(per_turn)
        assert row.score_without == pytest.approx(expected, abs=1e-12), row.run
        assert row.unique == len(mine)
    if cast_data.name == "cast2022":
        # A depth-1 pool of four runs is not reusable: every run falls to the bottom without its own items.
        assert [r.rank_without for r in rows] == [4, 4, 4, 4]
        assert summary["max_rank_drop"] == 3


def test_correlations_between_qrels_and_measures(tmp_path):
    runs, qrels = _simulated()
    flipped = Qrels({"1_1": {"x2": 2, "x1": 0}, "1_2": {"y1": 2}}, "flipped")
    rows = ranking_correlations(runs, [(qrels, "P@2"), (flipped, "P@2")], rel_level=1)
    assert len(rows) == 1
    a = [0.5, 0.5, 1.0]  # P@2 of a, b, c on q, by hand
    b = [0.5, 0.5, 0.25]  # on flipped: c's x9 and y9 are unjudged there
    assert rows[0]["kendall_tau"] == pytest.approx(stats.kendalltau(a, b).statistic)
    assert rows[0]["swapped_pairs"] == swapped_pairs(a, b) == 2
    assert rows[0]["tau_ap"] == pytest.approx(tau_ap(a, b))


def test_bootstrap_is_reproducible_and_covers_the_mean_at_about_the_nominal_rate():
    assert percentile_interval(range(30), seed=5, samples=500) == percentile_interval(range(30), seed=5, samples=500)
    assert percentile_interval(range(30), seed=5, samples=500) != percentile_interval(range(30), seed=6, samples=500)
    rng = np.random.default_rng(0)
    covered = 0
    trials = 400
    for trial in range(trials):
        values = rng.normal(0.3, 0.2, size=60)
        low, high = percentile_interval(values, samples=1000, seed=trial)
        covered += low <= 0.3 <= high
    assert 0.91 <= covered / trials <= 0.98  # nominal 0.95; percentile intervals run a little narrow


def test_bootstrap_by_topic_resamples_whole_topics():
    rows = [("r", "q", "P@1", turn, value) for turn, value in
            [("1_1", 1.0), ("1_2", 1.0), ("2_1", 0.0), ("2_2", 0.0), ("2_3", 0.0)]] + [("r", "q", "P@1", "all", 0.4)]
    (by_topic,) = bootstrap_intervals(rows, by="topic", samples=2000, seed=1)
    # Two topics, means 1 and 0: a resample holds topic 1 twice (mean of topic means 1), topic 2
    # twice (0) or one each (1/2); the mean is that of the topic means, 1/2, not the turns' 2/5.
    assert (by_topic["low"], by_topic["high"]) == (0.0, 1.0)
    assert by_topic["mean"] == 0.5 and by_topic["topics"] == 2 and by_topic["turns"] == 5


def _topic_mean_by_pandas(per_turn: dict[str, float]) -> float:
    """The mean of topic means, by pandas: the turns of each topic averaged, then the topics."""
    import pandas as pd

    frame = pd.DataFrame({"turn": list(per_turn), "value": list(per_turn.values())})
    frame["topic"] = frame["turn"].str.split("_").str[0]
    return float(frame.groupby("topic")["value"].mean().mean())


def _by_topic_everywhere(cli, run, qrels, measure) -> tuple[float, float]:
    """The ``--by topic`` mean of ``evaluate`` and of ``analyze bootstrap`` for one run and measure."""
    evaluated = json.loads(cli("evaluate", run, "--qrels", qrels, "-m", measure, "--by", "topic",
                               "--format", "json").stdout)
    (mean,) = [r["value"] for r in evaluated if r["measure"] == measure and r["turn"] == "all"]
    (interval,) = json.loads(cli("analyze", "bootstrap", run, "--qrels", qrels, "-m", measure, "--by", "topic",
                                 "--samples", "50", "--format", "json").stdout)
    return mean, interval["mean"]


def test_by_topic_is_one_mean_of_topic_means_in_evaluate_and_bootstrap(tmp_path, cli):
    # Topic 1: two turns (P@1 1 and 0: mean 1/2); topic 2: one turn (P@1 1). Topic means: 3/4;
    # turn mean: 2/3.
    run = tmp_path / "r.run"
    run.write_text("1_1 Q0 a 1 2.0 r\n1_2 Q0 b 1 2.0 r\n2_1 Q0 c 1 2.0 r\n")
    qrels = tmp_path / "q.qrel"
    qrels.write_text("1_1 0 a 2\n1_2 0 b 0\n2_1 0 c 3\n")
    per_turn = {"1_1": 1.0, "1_2": 0.0, "2_1": 1.0}
    assert _topic_mean_by_pandas(per_turn) == 0.75
    assert _by_topic_everywhere(cli, run, qrels, "P@1") == (0.75, 0.75)


@pytest.mark.parametrize("measure,request_name,key", [("nDCG@3", "ndcg_cut.3", "ndcg_cut_3"), ("P@1", "P.1", "P_1")])
def test_by_topic_on_cast_equals_pandas_on_pytrec_eval(cast_data, cli, measure, request_name, key):
    qrels = cast_data.qrels("relevance_all")
    for run in cast_data.run_paths[:2]:
        per_turn = pytrec_eval.RelevanceEvaluator(read_qrels_plain(qrels), {request_name}, relevance_level=2).evaluate(
            read_run_plain(run))
        expected = _topic_mean_by_pandas({turn: values[key] for turn, values in per_turn.items()})
        evaluate_mean, bootstrap_mean = _by_topic_everywhere(cli, run, qrels, measure)
        assert evaluate_mean == pytest.approx(expected, abs=1e-12)
        assert bootstrap_mean == pytest.approx(expected, abs=1e-12)


def test_system_ranks_share_ties():
    assert system_ranks([0.5, 0.7, 0.5, 0.1]) == [2, 1, 2, 4]


def test_analyze_commands(cast2022, run_paths, cli):
    qrels = cast2022 / "regin/qrels/question_relevance_all.qrel"
    out = json.loads(cli("analyze", "loro", *run_paths, "--qrels", qrels, "--depth", "1", "--format", "json").stdout)
    assert [r["run"] for r in out["runs"]] == ["bm25_baseline_mi_run", "miniLM_bert_sample_mi_run", "T5_raw",
                                               "T5_rewrite"]
    table = cli("analyze", "correlation", *run_paths, "--qrels", qrels, "--qrels",
                cast2022 / "regin/qrels/question_novelty.qrel", "-m", "nDCG@3", "-m", "AP").stdout
    assert table.splitlines()[0].split()[:5] == ["qrels_a", "measure_a", "qrels_b", "measure_b", "kendall_tau"]
    assert len(table.splitlines()) == 2 + 6
    csv_text = cli("analyze", "bootstrap", *run_paths[:1], "--qrels", qrels, "-m", "P@1", "--samples", "200",
                   "--format", "csv").stdout
    header, row = csv_text.splitlines()
    assert header == "run,qrels,measure,mean,low,high,turns"
    assert row.startswith("bm25_baseline_mi_run,question_relevance_all,P@1,0.326829")


def test_evaluate_by_topic_is_the_mean_of_topic_means(cast_data, cli):
    run_paths, qrels = cast_data.run_paths, cast_data.qrels("relevance_all")
    per_turn = pytrec_eval.RelevanceEvaluator(read_qrels_plain(qrels), {"P.1"}, relevance_level=2).evaluate(
        read_run_plain(run_paths[0]))
    topics: dict[str, list[float]] = {}
    for turn, values in per_turn.items():
        topics.setdefault(turn.split("_")[0], []).append(values["P_1"])
    topic_means = {topic: sum(v) / len(v) for topic, v in topics.items()}
    expected = sum(topic_means.values()) / len(topic_means)
    rows = json.loads(cli("evaluate", run_paths[0], "--qrels", qrels, "-m", "P@1", "--by", "topic", "-q", "--ci", "95",
                          "--samples", "500", "--seed", "3", "--format", "json").stdout)
    values = {(r["measure"], r["turn"]): r["value"] for r in rows}
    assert values["P@1", "all"] == pytest.approx(expected, abs=1e-12)
    assert values["num_topics", "all"] == len(topic_means) == (18 if cast_data.name == "cast2022" else 4)
    assert all(values["P@1", topic] == pytest.approx(mean, abs=1e-12) for topic, mean in topic_means.items())
    ordered = [topic_means[t] for t in sorted(topic_means)]
    assert (values["P@1:ci_low", "all"], values["P@1:ci_high", "all"]) == pytest.approx(
        percentile_interval(ordered, samples=500, seed=3))


def test_evaluate_ci_beside_the_means(cast2022, run_paths, cli):
    qrels = cast2022 / "regin/qrels/question_relevance_all.qrel"
    table = cli("evaluate", run_paths[0], "--qrels", qrels, "-m", "P@1", "--ci", "95", "--samples", "300").stdout
    header, _, row = table.splitlines()
    assert header.split() == ["run", "num_q", "P@1"]
    mean, low, high = row.split()[2], row.split()[3].strip("[,"), row.split()[4].strip("]")
    assert mean == "0.3268" and float(low) < 0.3268 < float(high)


def test_bootstrap_by_topic_counts_the_topics_it_resamples(cli, tmp_path):
    # Its table showed a `turns` column though the units resampled are the topic means.
    turns = ("1_1", "1_2", "2_1", "2_2", "2_3")
    (tmp_path / "q.qrel").write_text("".join(f"{t} 0 Q1 {2 if t.startswith('1_') else 0}\n" for t in turns))
    (tmp_path / "a.run").write_text("".join(f"{t} Q0 Q1 1 1.0 a\n" for t in turns))
    args = ["analyze", "bootstrap", tmp_path / "a.run", "--qrels", tmp_path / "q.qrel", "-m", "P@1", "--samples",
            "100"]
    by_topic = cli(*args, "--by", "topic").stdout.splitlines()
    assert by_topic[0].split() == ["run", "qrels", "measure", "mean", "low", "high", "topics"]
    assert by_topic[2].split()[-1] == "2" and by_topic[2].split()[3] == "0.5000"
    by_turn = cli(*args).stdout.splitlines()
    assert by_turn[0].split()[-1] == "turns" and by_turn[2].split()[-1] == "5"
