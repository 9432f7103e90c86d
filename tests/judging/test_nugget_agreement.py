"""``castregin agreement`` between nugget assignment sources: iKAT 2024's people (CONE-RAG's matching study,
tests/nuggets/data/cone_rag_human) against a model (``nuggets assign`` on the rule server,
tests/nuggets/data/cone_rag_model; see tests/nuggets/cone_rag_model.py).

The oracles read the labels from the JSONL files themselves: scikit-learn (``cohen_kappa_score``,
``confusion_matrix``), krippendorff (``alpha``), scipy (``kendalltau``, ``spearmanr``) on the same labels, and
tau_AP from Yilmaz, Aslam and Robertson's definition (SIGIR 2008), written out here, averaged over every order of
tied runs.
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
import statistics
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, confusion_matrix

DATA = Path(__file__).resolve().parent.parent / "nuggets" / "data"
HUMAN, MODEL = DATA / "cone_rag_human", DATA / "cone_rag_model"
VALUES = {"not_support": 0, "partial_support": 1, "support": 2}


def records(directory: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(directory.glob("*.jsonl")) for line in path.read_text().splitlines()]


def labels(directory: Path) -> dict[tuple[str, str, int], int]:
    return {(r["qid"], r["run_id"], k): VALUES[n["assignment"]] for r in records(directory)
            for k, n in enumerate(r["nuggets"])}


@pytest.fixture(scope="module")
def paired() -> tuple[list[int], list[int]]:
    human, model = labels(HUMAN), labels(MODEL)
    assert human.keys() == model.keys()
    keys = sorted(human)
    return [human[k] for k in keys], [model[k] for k in keys]


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> dict:
    from click.testing import CliRunner

    from castregin.cli import main

    out = tmp_path_factory.mktemp("agreement") / "a.json"
    run = CliRunner().invoke(main, ["agreement", f"human={HUMAN}", f"model=nuggets:{MODEL}", "--rank-runs",
                                    "--samples", "0", "--format", "json", "-o", str(out)], catch_exceptions=False)
    assert run.exit_code == 0, run.stderr
    return json.loads(out.read_text())


def test_labels_agree_as_sklearn_and_krippendorff_say(result, paired):
    human, model = paired
    pair = result["pairs"][0]
    assert (pair["a"], pair["b"], pair["both"], pair["only_a"], pair["only_b"]) == ("human", "model", 271, 0, 0)
    assert pair["labels"] == [0, 1, 2]
    assert pair["confusion"] == confusion_matrix(human, model, labels=[0, 1, 2]).tolist()
    got = pair["statistics"]
    assert got["exact"] == pytest.approx(np.mean(np.equal(human, model)), abs=1e-12)
    for name, weights in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
        assert got[name] == pytest.approx(cohen_kappa_score(human, model, weights=weights), abs=1e-12), name
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=[human, model], level_of_measurement=level,
                                      value_domain=[0, 1, 2])
        assert got[f"alpha_{level}"] == pytest.approx(expected, abs=1e-12), level
    # Binary at --rel-level 2: support against the rest.
    binary_h, binary_m = [x >= 2 for x in human], [x >= 2 for x in model]
    assert got["binary_agreement"] == pytest.approx(np.mean(np.equal(binary_h, binary_m)), abs=1e-12)
    assert got["binary_kappa"] == pytest.approx(cohen_kappa_score(binary_h, binary_m), abs=1e-12)
    # The items are run#index, the turns the qids: per topic is the part of the qid before "_".
    assert {t["topic"] for t in pair["topics"]} == {"0", "1", "8", "10"}


def all_score(record: dict) -> float:
    """nuggetizer's all_score of one answer, from its definition: support 1, partial support 0.5, over the nuggets."""
    values = [{"support": 1.0, "partial_support": 0.5}.get(n["assignment"], 0.0) for n in record["nuggets"]]
    return sum(values) / len(values)


def run_means(directory: Path) -> dict[str, float]:
    by_run: dict[str, list[float]] = {}
    for record in records(directory):
        by_run.setdefault(record["run_id"], []).append(all_score(record))
    return {run: statistics.mean(values) for run, values in by_run.items()}


def yilmaz_tau_ap(reference: dict[str, float], estimate: dict[str, float]) -> float:
    """tau_AP = 2/(N-1) * sum over i = 2..N of C(i)/(i-1), minus 1: the systems in the estimate's order, C(i) the
    systems above the i-th that the reference ranks above it too. Ties (which the paper has none of) are broken by
    one order of the systems, the same in both rankings; the value is the mean over every such order."""
    systems = sorted(reference)
    values = []
    for order in itertools.permutations(systems):
        position = {s: k for k, s in enumerate(order)}
        ranked_estimate = sorted(systems, key=lambda s: (-estimate[s], position[s]))
        ranked_reference = sorted(systems, key=lambda s: (-reference[s], position[s]))
        above = {s: set(ranked_reference[:ranked_reference.index(s)]) for s in systems}
        total = sum(sum(other in above[s] for other in ranked_estimate[:i]) / i
                    for i, s in enumerate(ranked_estimate) if i > 0)
        values.append(2 * total / (len(systems) - 1) - 1)
    return statistics.mean(values)


def test_runs_rank_alike_as_scipy_and_yilmaz_say(result):
    human, model = run_means(HUMAN), run_means(MODEL)
    runs = list(human)
    (ranking,) = result["ranking"]
    assert (ranking["qrels_a"], ranking["qrels_b"], ranking["measure"]) == ("human", "model", "all_score")
    for row in ranking["runs"]:
        assert (row["score_a"], row["score_b"]) == pytest.approx((human[row["run"]], model[row["run"]]), abs=1e-15)
    assert {row["run"] for row in ranking["runs"]} == set(runs)
    a, b = [human[r] for r in runs], [model[r] for r in runs]
    assert len(set(b)) < len(b)  # the model ties two runs: tau-b and tau_AP take the tie as they define it
    got = ranking["statistics"]
    assert got["kendall_tau"] == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
    assert got["spearman_rho"] == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)
    assert got["tau_ap"] == pytest.approx(yilmaz_tau_ap(human, model), abs=1e-12)
    assert got["tau_ap_reverse"] == pytest.approx(yilmaz_tau_ap(model, human), abs=1e-12)
    assert got["runs"] == 6 and not math.isnan(got["kendall_tau"])


def test_the_python_api_is_the_same_stage(result):
    from castregin.api import agreement

    got = agreement(f"human={HUMAN}", f"model=nuggets:{MODEL}", rank_runs=True, samples=0)
    assert got["pairs"][0]["statistics"] == result["pairs"][0]["statistics"]
    assert got["ranking"][0]["statistics"] == result["ranking"][0]["statistics"]


def test_sources_assigning_other_nuggets_are_refused_in_one_line(cli, tmp_path):
    changed = tmp_path / "model"
    shutil.copytree(MODEL, changed)
    path = changed / "rali-3.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[2])
    record["nuggets"][1]["importance"] = "vital" if record["nuggets"][1]["importance"] == "okay" else "okay"
    lines[2] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    result = cli("agreement", f"human={HUMAN}", f"model={changed}", "--samples", "0")
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert (f"human and model assign different nuggets: qid {record['qid']}, run rali-3, nugget 1 is "
            in result.stderr)
    assert f"in model ({path}:3); compare assignments of the same nuggets" in result.stderr


def test_ranking_options_are_refused_where_they_cannot_work(cli):
    both = (f"human={HUMAN}", f"model={MODEL}", "--samples", "0")
    result = cli("agreement", *both, "--rank-runs", "--runs", str(MODEL / "uva-3.jsonl"))
    assert result.exit_code == 1 and "--rank-runs: --runs scores run files" in result.stderr
    result = cli("agreement", *both, "-m", "vital")
    assert result.exit_code == 1 and "--measure: scores runs: give them with --runs (or --rank-runs" in result.stderr
    result = cli("agreement", *both, "--rank-runs", "-m", "nDCG@3")
    assert result.exit_code == 1 and "unknown nugget measure 'nDCG@3'" in result.stderr
    qrels = DATA.parent.parent.parent / "data" / "crowd"
    result = cli("agreement", f"human={HUMAN}", f"crowd={qrels / 'judgments.csv'}", "--criteria", "relevance",
                 "--rank-runs", "--samples", "0")
    assert result.exit_code == 1 and "needs two nugget sources or more" in result.stderr


def test_a_crowd_of_people_compares_with_a_model_label_by_label(cli, tmp_path, paired):
    # People's labels as crowd judgments (the export of the nugget assignment pages): the turn is the qid, the item
    # the run and the nugget's index, support on 0-2. Two workers copy the human labels, a third the model's: the
    # aggregate is the people's.
    rows = ["worker_id,turn_id,item_id,support"]
    human, model = labels(HUMAN), labels(MODEL)
    for worker, source in (("p1", human), ("p2", human), ("bot", model)):
        rows += [f"{worker},{qid},{run}#{k},{label}" for (qid, run, k), label in sorted(source.items())]
    crowd = tmp_path / "people.csv"
    crowd.write_text("\n".join(rows) + "\n")
    result = cli("agreement", f"people={crowd}", f"model={MODEL}", "--criteria", "support", "--scale", "0-2",
                 "--samples", "0", "--format", "json")
    assert result.exit_code == 0, result.stderr
    pair = json.loads(result.stdout)["pairs"][0]
    assert pair["confusion"] == confusion_matrix(*paired, labels=[0, 1, 2]).tolist()
    per_worker = cli("agreement", f"people={crowd}", f"model={MODEL}", "--criteria", "support", "--scale", "0-2",
                     "--per-worker", "--samples", "0", "--format", "json")
    exact = {(p["a"], p["b"]): p["statistics"]["exact"] for p in json.loads(per_worker.stdout)["pairs"]}
    assert exact["people:bot", "model"] == 1.0
    assert exact["people:p1", "model"] == pytest.approx(np.mean(np.equal(*paired)), abs=1e-12)


def test_the_python_api_takes_crowds_as_the_command_does(cli):
    """castregin.api.agreement runs the command's stage: the same numbers for a crowd inside itself and for crowds
    compared worker by worker (the gold filter and the crowd rules applied as the command applies them)."""
    from castregin.api import agreement
    from castregin.formats.common import json_text

    crowd = DATA.parent.parent.parent / "data" / "crowd"
    judgments, gold = crowd / "judgments.csv", crowd / "gold.csv"
    within = cli("agreement", judgments, "--criteria", "relevance", "--gold", gold, "--format", "json")
    assert within.exit_code == 0, within.stderr
    assert json.loads(within.stdout) == json.loads(json_text(agreement(judgments, criteria="relevance", gold=gold),
                                                             sort_keys=True))
    # Two crowd sources (the same CSV twice), each worker of one against the workers of the other.
    sources = [f"crowd={judgments}", f"again=crowd:{judgments}"]
    between = cli("agreement", *sources, "--criteria", "relevance", "--gold", gold, "--per-worker", "--samples", "50",
                  "--format", "json")
    assert between.exit_code == 0, between.stderr
    got = agreement(*sources, criteria="relevance", gold=gold, per_worker=True, samples=50)
    assert json.loads(between.stdout) == json.loads(json_text(got))
