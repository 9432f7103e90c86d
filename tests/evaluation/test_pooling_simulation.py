"""``pool simulate``: judgments spent vs relevant found and vs Kendall's tau, per judging strategy.

Oracles: pytrec_eval (trec_eval's C code) scores the runs on each budget's judged qrels and on the full
pool's, scipy's kendalltau ranks them; the relevant found are counted from the qrels. The judging orders
themselves are worked by hand in tests/track/test_sampling.py. castregin ranks on 32-bit scores here
(``score_precision="float"``), as pytrec_eval does.
"""

from __future__ import annotations

import itertools
import json
import math

import pytest
import pytrec_eval
from scipy import stats

from castregin.data import Qrels, Run
from castregin.errors import InputError
from castregin.evaluation.pooling import default_budgets, simulate_pooling
from castregin.formats import read_qrels, read_run
from castregin.track.sampling import judging_order, turn_rankings


def _oracle_tau(runs, qrels, strategy, budget, measure, depth):
    """tau-b between pytrec_eval's means on the first ``budget`` judgments and on the whole pool, and relevant found."""
    turns = [t for t in qrels.labels if any(t in run.scores for run in runs)]
    truth, judged, found = {}, {}, 0
    for turn in turns:
        rankings = turn_rankings(runs, turn, depth)
        labels = {item: max(qrels.labels[turn].get(item, 0), 0) for ranking in rankings for item in ranking}
        truth[turn] = labels
        order = judging_order(rankings, strategy, lambda item, labels=labels: labels[item] >= 2)
        judged[turn] = {item: labels[item] for item in order[:budget]}
        found += sum(labels[item] >= 2 for item in order[:budget])

    def means(judgments):
        evaluator = pytrec_eval.RelevanceEvaluator(judgments, {measure}, relevance_level=2)
        out = []
        for run in runs:
            per_turn = evaluator.evaluate({t: s for t, s in run.scores.items() if t in judgments})
            out.append(sum(v[measure] for v in per_turn.values()) / len(per_turn))
        return out

    reference, scores = means(truth), means(judged)
    tau = stats.kendalltau(reference, scores).statistic if len(set(scores)) > 1 else math.nan
    return tau, found, sum(len(items) for items in judged.values())


@pytest.fixture(scope="module")
def cast_runs(run_paths, cast2022):
    return [read_run(path) for path in run_paths], read_qrels(cast2022 / "regin/qrels/question_relevance_all.qrel")


def test_cast2022_simulation_equals_pytrec_eval_and_scipy(cast_runs):
    runs, qrels = cast_runs
    simulation = simulate_pooling(runs, qrels, budgets=[1, 2, 3, 4, 5, 6, 8, 10], measure="nDCG@3", depth=10,
                                  score_precision="float")
    assert simulation.pool == 3993 and simulation.turns == 205 and simulation.runs == 4
    for point in simulation.points:
        tau, found, spent = _oracle_tau(runs, qrels, point.strategy, point.budget, "ndcg_cut_3", 10)
        assert point.judgments == spent and point.relevant_found == found
        assert point.kendall_tau == pytest.approx(tau, abs=1e-12) or (math.isnan(tau) and math.isnan(point.kendall_tau))
    # The README's numbers: judgments from which tau stays >= 0.9 (here within budgets up to 10 a turn).
    assert simulation.needed == {"depth": 820, "mtf": 1025, "bandit": 1230}


def _toy():
    truth = {"t1": {"a": 3, "b": 0, "c": 2, "d": 0, "e": 2}, "t2": {"a": 0, "b": 2, "c": 0, "f": 3}}
    runs = [Run("good", {"t1": {"a": 3, "c": 2, "e": 1, "b": 0}, "t2": {"f": 2, "b": 1, "a": 0}}),
            Run("mid", {"t1": {"b": 3, "a": 2, "d": 1}, "t2": {"b": 2, "a": 1, "c": 0}}),
            Run("bad", {"t1": {"d": 3, "b": 2, "c": 1}, "t2": {"a": 2, "c": 1, "f": 0}})]
    for run in runs:
        run.ranks = {turn: {item: rank for rank, item in enumerate(sorted(items, key=items.get, reverse=True), 1)}
                     for turn, items in run.scores.items()}
    return runs, Qrels(truth, "truth")


def test_toy_collection_against_pytrec_eval():
    runs, qrels = _toy()
    simulation = simulate_pooling(runs, qrels, measure="AP", score_precision="float")
    assert simulation.pool == 9 and simulation.relevant == 5
    budgets = sorted({p.budget for p in simulation.points})
    assert budgets == [1, 2, 3, 4, 5]
    for point in simulation.points:
        tau, found, spent = _oracle_tau(runs, qrels, point.strategy, point.budget, "map", None)
        assert (point.judgments, point.relevant_found) == (spent, found)
        assert point.kendall_tau == pytest.approx(tau, abs=1e-12) or (math.isnan(tau) and math.isnan(point.kendall_tau))
    last = [p for p in simulation.points if p.budget == 5]
    assert all(p.kendall_tau == pytest.approx(1.0) and p.relevant_share == 1.0 for p in last)


def test_default_budgets_and_bad_input():
    assert default_budgets(5) == [1, 2, 3, 4, 5]
    grid = default_budgets(1000)
    assert grid[:20] == list(range(1, 21)) and grid[-1] == 1000 and len(grid) < 70
    assert all(b / a < 1.15 for a, b in itertools.pairwise(grid[20:]))
    runs, qrels = _toy()
    with pytest.raises(InputError, match="at least two runs"):
        simulate_pooling(runs[:1], qrels)
    with pytest.raises(InputError, match="share no turn"):
        simulate_pooling(runs, Qrels({"zz": {"a": 1}}, "q"))
    with pytest.raises(InputError, match="unknown strategy"):
        simulate_pooling(runs, qrels, strategies=["random"])


def _cli_args(tmp_path, runs, qrels):
    from castregin.formats import format_qrels, format_run

    paths = []
    for run in runs:
        paths.append(tmp_path / f"{run.tag}.run")
        paths[-1].write_text(format_run(run))
    (tmp_path / "q.qrel").write_text(format_qrels(qrels))
    return ["pool", "simulate", *paths, "--qrels", tmp_path / "q.qrel"]


def test_cli_table_json_and_plot(cli, tmp_path):
    runs, qrels = _toy()
    args = _cli_args(tmp_path, runs, qrels)
    table = cli(*args, "--plot", tmp_path / "s.png")
    assert table.exit_code == 0, table.stderr
    assert "judgments from which Kendall's tau on AP stays >= 0.9: depth" in table.stdout
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(cli(*args, "--format", "json", "--strategy", "mtf", "--budgets", "1,3").stdout)
    assert [(p["strategy"], p["budget"]) for p in data["points"]] == [("mtf", 1), ("mtf", 3)]
    assert set(data["summary"]["judgments_needed"]) == {"mtf"}
    bad = cli(*args, "--budgets", "0,2")
    assert bad.exit_code == 2


def test_the_summary_says_when_it_holds_within_the_budgets_tried_only(cli, tmp_path):
    """"stays >= 0.9" was said of budgets below a turn's pool as if no larger budget could drop below it again."""
    runs, qrels = _toy()
    args = _cli_args(tmp_path, runs, qrels)
    # The toy's largest turn pools 5 items (test_toy_collection_against_pytrec_eval: budgets 1 to 5).
    largest_pool = max(len({item for run in runs for item in run.scores.get(turn, {})}) for turn in qrels.labels)
    assert largest_pool == 5
    short = cli(*args, "--budgets", "1,2")
    assert short.exit_code == 0, short.stderr
    assert "stays >= 0.9 within the budgets tried (up to 2 a turn; the largest turn's pool is 5):" in short.stdout
    whole = cli(*args, "--budgets", "1,5")
    assert whole.exit_code == 0 and "within the budgets tried" not in whole.stdout
    data = json.loads(cli(*args, "--budgets", "1,2", "--format", "json").stdout)["summary"]
    assert (data["within_budgets_tried"], data["largest_budget"], data["largest_pool"]) == (True, 2, 5)
