"""Dawid-Skene and GLAD against crowd-kit (Apache-2.0, a test oracle only), and against the truth of
simulated crowds, where Dawid-Skene must do at least as well as the CAsT-ReGIn mode-mean rule."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from castregin.errors import InputError
from castregin.formats.crowd import parse_gold, parse_judgments
from castregin.judging.aggregate import aggregate
from castregin.judging.models import dawid_skene, fit, glad

from .simulated import simulated_crowd

CRITERIA = ["relevance", "novelty", "diversity"]
SEEDS = range(6)


def crowd_kit():
    aggregation = pytest.importorskip("crowdkit.aggregation")
    return aggregation.DawidSkene, aggregation.GLAD


def tasks_frame(frame: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """crowd-kit's layout: task, worker, label; the task is 'turn item'."""
    frame = frame[frame[criterion].astype(str) != ""]
    return pd.DataFrame({"task": frame["turn_id"] + " " + frame["item_id"], "worker": frame["worker_id"],
                         "label": frame[criterion].astype(int)}).reset_index(drop=True)


def fit_frame(data: pd.DataFrame, method: str = "dawid-skene", gold: dict | None = None) -> pd.Series:
    """Our labels of a crowd-kit frame by task, in the order of first appearance (as crowd-kit returns them).

    ``gold`` maps a task to its known label, handed to :func:`fit` as aggregate hands it the gold items.
    """
    task, tasks = pd.factorize(data["task"])
    worker, _ = pd.factorize(data["worker"])
    gold_arrays = None
    if gold:
        position = pd.Index(tasks).get_indexer(list(gold))
        known = position >= 0
        labels = np.array(list(gold.values()))[known]
        gold_arrays = (position[known], labels, labels)
    result = fit(method, task, worker, data["label"].to_numpy(), gold=gold_arrays)
    return pd.Series(result.labels, index=pd.Index(tasks, name="task"), name="agg_label")


def example_frame(crowd_example) -> pd.DataFrame:
    return pd.read_csv(crowd_example / "judgments.csv", dtype=str, keep_default_na=False)


def same_labels(ours: pd.Series, theirs: pd.Series) -> None:
    theirs = theirs.sort_index()
    assert ours.sort_index().index.equals(theirs.index)
    differing = ours.sort_index().to_numpy() != theirs.to_numpy()
    assert not differing.any(), theirs.index[differing][:5].tolist()


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # crowd-kit's pandas calls warn about pandas' future
        return function(*args, **kwargs)


# --- crowd-kit as the oracle -------------------------------------------------------------------

@pytest.mark.parametrize("criterion", CRITERIA)
def test_dawid_skene_equals_crowd_kit_on_the_crowd_example(crowd_example, criterion):
    DawidSkene, _ = crowd_kit()
    data = tasks_frame(example_frame(crowd_example), criterion)
    oracle = DawidSkene(n_iter=100)
    want = quiet(oracle.fit_predict, data)
    same_labels(fit_frame(data, "dawid-skene"), want)
    task, tasks = pd.factorize(data["task"])
    ours = dawid_skene(task, pd.factorize(data["worker"])[0], data["label"])
    assert ours.iterations == len(oracle.loss_history_)   # the same stopping rule
    probas = oracle.probas_.loc[tasks, ours.classes].to_numpy()
    np.testing.assert_allclose(ours.probas, probas, atol=1e-9)


def test_glad_equals_crowd_kit_on_the_crowd_example(crowd_example):
    _, GLAD = crowd_kit()
    data = tasks_frame(example_frame(crowd_example), "relevance")
    oracle = GLAD()
    want = quiet(oracle.fit_predict, data)
    same_labels(fit_frame(data, "glad"), want)
    task, tasks = pd.factorize(data["task"])
    ours = glad(task, pd.factorize(data["worker"])[0], data["label"])
    assert ours.iterations == len(oracle.loss_history_)
    np.testing.assert_allclose(ours.probas, oracle.probas_.loc[tasks, ours.classes].to_numpy(), atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("per_item", [3, 5])
def test_dawid_skene_equals_crowd_kit_on_simulated_crowds(seed, per_item):
    DawidSkene, _ = crowd_kit()
    data = tasks_frame(simulated_crowd(seed, per_item=per_item)[0], "relevance")
    same_labels(fit_frame(data, "dawid-skene"), quiet(DawidSkene(n_iter=100).fit_predict, data))


@pytest.mark.parametrize("seed", [0, 1])
def test_dawid_skene_with_known_labels_equals_crowd_kits_true_labels(seed):
    DawidSkene, _ = crowd_kit()
    frame, truth = simulated_crowd(seed, per_item=3)
    data = tasks_frame(frame, "relevance")
    known = pd.Series(truth.to_numpy(), index=[f"{t} {i}" for t, i in truth.index]).iloc[::7]
    ours = fit_frame(data, "dawid-skene", gold=known.to_dict())
    same_labels(ours, quiet(DawidSkene(n_iter=100).fit_predict, data, known))
    assert (ours[known.index] == known).all()


def test_glad_equals_crowd_kit_on_a_simulated_crowd():
    # Small, since each of crowd-kit's GLAD rounds takes a tenth of a second whatever the size; these 20 items
    # need 13 EM rounds (as 80 items of seed 1 did, in 2.5 times the time), the example two.
    _, GLAD = crowd_kit()
    data = tasks_frame(simulated_crowd(2, items=20, per_item=4)[0], "relevance")
    oracle = GLAD()
    same_labels(fit_frame(data, "glad"), quiet(oracle.fit_predict, data))
    ours = glad(pd.factorize(data["task"])[0], pd.factorize(data["worker"])[0], data["label"])
    # Rounding apart (per-label sums vs per-class sums), a Q gain can fall either side of tol.
    assert abs(ours.iterations - len(oracle.loss_history_)) <= 1


# --- against the truth ------------------------------------------------------------------------

def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def agreement_with_truth(result, truth: pd.Series) -> float:
    labels = pd.Series({(t, i): v for t, items in result.qrels["relevance"].items() for i, v in items.items()})
    return float((labels.sort_index().to_numpy() == truth.sort_index().to_numpy()).mean())


def test_dawid_skene_finds_the_truth_at_least_as_often_as_mode_mean():
    scores = {"mode-mean": [], "dawid-skene": [], "glad": []}
    for seed in SEEDS:
        frame, truth = simulated_crowd(seed)
        judgments = parse_judgments([(csv_bytes(frame), "sim.csv")], ["relevance"])
        for method, found in scores.items():
            found.append(agreement_with_truth(aggregate(judgments, method=method), truth))
    mode_mean, ds = np.array(scores["mode-mean"]), np.array(scores["dawid-skene"])
    assert (ds >= mode_mean).all(), scores
    # The README's numbers (seeds 0-5): mode-mean 0.781, Dawid-Skene 0.908, GLAD 0.871.
    assert ds.mean() - mode_mean.mean() > 0.08
    assert np.array(scores["glad"]).mean() > mode_mean.mean()


def test_models_learn_which_workers_to_trust():
    frame, _ = simulated_crowd(0)
    judgments = parse_judgments([(csv_bytes(frame), "sim.csv")], ["relevance"])
    for method in ("mode-mean", "dawid-skene", "glad"):
        accuracy = {w["worker_id"]: w["accuracy"]["relevance"] for w in aggregate(judgments, method=method).workers}
        honest = np.mean([a for w, a in accuracy.items() if w.endswith("h")])
        spammers = np.mean([a for w, a in accuracy.items() if w.endswith("s")])
        assert honest > spammers + 0.3, (method, honest, spammers)


# --- gold, ties and small crowds ----------------------------------------------------------------

def test_a_gold_range_bounds_the_posterior():
    # Three workers say 0 for task 0; gold says 1-2: the label is the likelier of 1 and 2.
    task, worker = [0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2]
    label = [0, 0, 2, 1, 1, 1]
    free = dawid_skene(task, worker, label)
    bounded = dawid_skene(task, worker, label, gold=([0], [1], [2]))
    assert free.labels.tolist() == [0, 1]
    assert bounded.labels.tolist() == [2, 1]
    assert bounded.probas[0, free.classes.tolist().index(0)] == 0.0
    assert glad(task, worker, label, gold=([0], [1], [2])).labels[0] == 2


def test_a_known_label_no_worker_gave_becomes_a_class():
    fit = dawid_skene([0, 0, 1], [0, 1, 0], [1, 1, 2], gold=([0], [3], [3]))
    assert fit.classes.tolist() == [1, 2, 3]
    assert fit.labels[0] == 3


def test_a_gold_range_without_a_class_in_use_is_refused():
    with pytest.raises(InputError, match="holds no label in use"):
        dawid_skene([0, 0], [0, 1], [0, 1], gold=([0], [2], [3]))


def test_a_tie_goes_to_the_lowest_label():
    # Two workers, one item each way: the posterior of an item labelled 0 and 1 once each is even.
    fit = dawid_skene([0, 0], [0, 1], [0, 1])
    assert fit.probas[0, 0] == pytest.approx(fit.probas[0, 1])
    assert fit.labels.tolist() == [0]


def test_one_label_value_needs_no_model():
    for model in (dawid_skene, glad):
        fit = model([0, 0, 1], [0, 1, 1], [2, 2, 2])
        assert fit.labels.tolist() == [2, 2] and fit.iterations == 0
        assert fit.worker_accuracy.tolist() == [1.0, 1.0]


def test_gold_in_aggregate_is_passed_to_the_model():
    rows = "worker_id,turn_id,item_id,relevance\n" + "".join(
        f"W{w},1_1,Q{i},{label}\n" for i, labels in enumerate([[1, 2, 2], [0, 0, 1], [3, 3, 2], [1, 1, 1]])
        for w, label in enumerate(labels))
    judgments = parse_judgments([(rows.encode(), "j.csv")], ["relevance"])
    gold = parse_gold(b"turn_id,item_id,criterion,min_label,max_label\n1_1,Q0,relevance,1,2\n", "g.csv")
    result = aggregate(judgments, gold, method="dawid-skene")
    assert result.decisions["relevance"]["gold"] == 1
    assert result.removed == []
    assert 1 <= result.qrels["relevance"]["1_1"]["Q0"] <= 2


def test_an_unknown_method_is_refused():
    judgments = parse_judgments([(b"worker_id,turn_id,item_id,relevance\nA,1_1,Q1,1\n", "j.csv")], ["relevance"])
    with pytest.raises(InputError, match="unknown method 'em'"):
        aggregate(judgments, method="em")


# --- the command --------------------------------------------------------------------------------

def test_cli_method_dawid_skene_writes_crowd_kits_labels(crowd_example, tmp_path, cli):
    DawidSkene, _ = crowd_kit()
    out = tmp_path / "ds"
    result = cli("aggregate", crowd_example / "judgments.csv", "--criteria", ",".join(CRITERIA), "--prefix", "",
                 "--method", "dawid-skene", "--out-dir", out)
    assert result.exit_code == 0, result.stderr
    audit = json.loads((out / "audit.json").read_text())
    assert audit["method"] == "dawid-skene"
    frame = example_frame(crowd_example)
    for criterion in CRITERIA:
        want = quiet(DawidSkene(n_iter=100).fit_predict, tasks_frame(frame, criterion))
        lines = (out / f"{criterion}.qrel").read_text().splitlines()
        ours = pd.Series({f"{t} {i}": int(v) for t, _, i, v in (line.split() for line in lines)})
        same_labels(ours, want)
        expected = (crowd_example / "expected" / f"{criterion}.qrel").read_text().splitlines()
        decisions = audit["decisions"][criterion]
        # Without --gold the model sees every label; mode-mean's expected qrels had the gold filter.
        assert set(decisions) == {"mode", "tie", "changed", "iterations", "gold"} and decisions["gold"] == 0
        assert len(lines) == len(expected) == 391
    assert "changed" in result.stderr


def test_cli_method_with_gold_is_deterministic_and_keeps_mode_mean_apart(crowd_example, tmp_path, cli):
    outputs = {}
    for name, method in (("a", "glad"), ("b", "glad"), ("m", "mode-mean")):
        out = tmp_path / name
        result = cli("aggregate", crowd_example / "judgments.csv", "--criteria", ",".join(CRITERIA), "--prefix", "",
                     "--gold", crowd_example / "gold.csv", "--method", method, "--out-dir", out)
        assert result.exit_code == 0, result.stderr
        outputs[name] = {p.name: p.read_bytes() for p in out.iterdir()}
    assert outputs["a"] == outputs["b"]
    for expected in sorted((crowd_example / "expected").glob("*.qrel")):
        assert outputs["m"][expected.name] == expected.read_bytes()
    assert outputs["a"]["relevance.qrel"] != outputs["m"]["relevance.qrel"]
    audit = json.loads(outputs["a"]["audit.json"])
    assert audit["method"] == "glad" and audit["decisions"]["relevance"]["gold"] > 0
    assert audit["removed"] == json.loads(outputs["m"]["audit.json"])["removed"]   # the gold filter comes first


def test_cli_agreement_takes_the_method(crowd_example, cli):
    kappas = {}
    for method in ("mode-mean", "dawid-skene"):
        result = cli("agreement", crowd_example / "judgments.csv", "--criteria", "diversity", "--method", method,
                     "--format", "json")
        assert result.exit_code == 0, result.stderr
        workers = json.loads(result.stdout)["diversity"]["workers"]
        kappas[method] = {w["worker_id"]: w["kappa_quadratic"] for w in workers}
    assert kappas["mode-mean"] != kappas["dawid-skene"]   # against each method's labels


def test_cli_unknown_method_is_a_usage_error(tmp_path, cli):
    judgments = tmp_path / "j.csv"
    judgments.write_text("worker_id,turn_id,item_id,relevance\nA,1_1,Q1,1\n")
    result = cli("aggregate", judgments, "--criteria", "relevance", "--method", "em", "--out-dir", tmp_path / "o")
    assert result.exit_code == 2 and "--method" in result.stderr
