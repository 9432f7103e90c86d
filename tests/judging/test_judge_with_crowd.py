"""A model worker beside a simulated crowd: ``judge`` then ``aggregate --method dawid-skene`` over both.

The oracle is crowd-kit's DawidSkene on the crowd's rows and the model's rows together (as
tests/judging/test_models.py uses it), never castregin's own output.
"""

from __future__ import annotations

import csv
import json
import warnings

import pandas as pd
import pytest

from .chat_server import serve


def judge_topic(cli, cast2022, crowd: pd.DataFrame, topic: str, out_dir) -> tuple[pd.DataFrame, int]:
    """The model (the test server's word-overlap rule) judges the crowd's pairs of one topic into
    ``out_dir``; (those pairs, the requests the server answered)."""
    pairs = crowd[["turn_id", "item_id"]].drop_duplicates()
    pairs = pairs[pairs["turn_id"].str.startswith(f"{topic}_")]
    pool = out_dir.parent / f"pool-{topic}.txt"
    pool.write_text("".join(f"{t} Q0 {i} 1 0 crowd\n" for t, i in pairs.itertuples(index=False)))
    server = serve(faults=False)
    try:
        judged = cli("judge", pool, "--bank", cast2022 / "regin/question_bank.json",
                     "--bank", cast2022 / "topics/2022_mixed_initiative_question_pool.json",
                     "--topics", cast2022 / "topics/2022_evaluation_topics_tree_v1.0.json", "--criteria", "relevance",
                     "--model", "rule-1", "--base-url", server.base_url, "--out-dir", out_dir,
                     "--concurrency", "8")
    finally:
        server.shutdown()
    assert judged.exit_code == 0, judged.stderr
    return pairs, server.requests


def test_dawid_skene_over_the_crowd_and_the_model(cli, cast2022, crowd_example, tmp_path):
    aggregation = pytest.importorskip("crowdkit.aggregation")
    crowd = pd.read_csv(crowd_example / "judgments.csv", dtype=str, keep_default_na=False)
    # The model judges topic 138's pairs (61 of 391, to keep the test quick); the crowd judged them all.
    pairs, requests = judge_topic(cli, cast2022, crowd, "138", tmp_path / "llm")
    model = pd.read_csv(tmp_path / "llm" / "judgments.csv", dtype=str, keep_default_na=False)
    assert len(model) == len(pairs) == requests
    result = cli("aggregate", crowd_example / "judgments.csv", tmp_path / "llm" / "judgments.csv",
                 "--criteria", "relevance", "--method", "dawid-skene", "--prefix", "", "--out-dir", tmp_path / "qrels")
    assert result.exit_code == 0, result.stderr
    ours = {}
    with open(tmp_path / "qrels" / "relevance.qrel") as handle:
        for turn, _, item, label in csv.reader(handle, delimiter=" "):
            ours[f"{turn} {item}"] = int(label)
    both = pd.concat([crowd[["worker_id", "turn_id", "item_id", "relevance"]], model], ignore_index=True)
    both = both[both["relevance"] != ""]
    data = pd.DataFrame({"task": both["turn_id"] + " " + both["item_id"], "worker": both["worker_id"],
                         "label": both["relevance"].astype(int)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = aggregation.DawidSkene(n_iter=100).fit_predict(data)
    assert ours == {task: int(label) for task, label in want.items()}
    audit = json.loads((tmp_path / "qrels" / "audit.json").read_text())
    workers = {w["worker_id"]: w["labels"] for w in audit["workers"]}
    assert workers["llm:rule-1:rubric"] == len(pairs)
    assert len(workers) == crowd["worker_id"].nunique() + 1


def test_agreement_of_the_model_with_the_crowd(cli, cast2022, crowd_example, tmp_path):
    """The model's qrels against the crowd's (aggregated by `agreement` with the gold filter): the crowd's
    labels are the SPEC's expected qrels of the example, the kappas scikit-learn's on the pairs both judged."""
    metrics = pytest.importorskip("sklearn.metrics")
    crowd = pd.read_csv(crowd_example / "judgments.csv", dtype=str, keep_default_na=False)
    judge_topic(cli, cast2022, crowd, "140", tmp_path / "llm")
    out = tmp_path / "agreement.json"
    model_qrels = tmp_path / "llm" / "llm_relevance.qrel"
    result = cli("agreement", f"crowd=crowd:{crowd_example / 'judgments.csv'}", f"model={model_qrels}",
                 "--criteria", "relevance", "--gold", crowd_example / "gold.csv", "--samples", "0",
                 "--format", "json", "-o", out)
    assert result.exit_code == 0, result.stderr

    def labels(path):
        with open(path) as handle:
            return {(t, i): int(label) for t, _, i, label in (line.split() for line in handle)}

    expected, model = labels(crowd_example / "expected" / "relevance.qrel"), labels(model_qrels)
    shared = sorted(expected.keys() & model.keys())
    (pair,) = json.loads(out.read_text())["pairs"]
    assert (pair["both"], pair["only_a"], pair["only_b"]) == (len(shared), len(expected.keys() - model.keys()),
                                                              len(model.keys() - expected.keys()))
    assert pair["both"] > 20
    x, y = [expected[k] for k in shared], [model[k] for k in shared]
    for name, weights in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
        assert pair["statistics"][name] == pytest.approx(metrics.cohen_kappa_score(x, y, weights=weights), abs=1e-12)
