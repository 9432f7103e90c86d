"""A measure registered in one place is usable everywhere: ``castregin evaluate``, the Python API, ``castregin
measures`` and ``castregin report``.

The toy measure, ``toy@k``, is 1 when the item at rank k of a turn (trec_eval's order: score descending,
ties by item id descending) is relevant, else 0. Its oracle is computed here from the run and qrels
themselves. It is registered by one fixture, once with a vectorised computation (the streaming engine
runs it) and once with its rule alone (the plain path, as a measure the engine lacks).
"""

from __future__ import annotations

import json
import re

import pytest

import castregin
from castregin.evaluation import small as small_module
from castregin.evaluation.measures import Definition, IrName, cutoff, parse_measure, register, unregister

QRELS = {f"t{t}": {f"d{i}": (i * 7 + t) % 4 for i in range(12)} for t in range(9)}
RUNS = {name: {f"t{t}": {f"d{i}": float((i * step + t) % 5) for i in range(10)} for t in range(10)}
        for name, step in (("alpha", 3), ("beta", 7), ("gamma", 11))}


def toy_oracle(run: dict, qrels: dict, k: int, rel: int) -> dict[str, float]:
    """Per shared turn: is the item at rank k (score descending, then item id descending) labelled rel or more?"""
    out = {}
    for turn, scores in run.items():
        if turn in qrels:
            ranked = sorted(scores, key=lambda item: (scores[item], item), reverse=True)
            out[turn] = float(len(ranked) >= k and qrels[turn].get(ranked[k - 1], -1) >= rel)
    return out


def _toy_rule(rr, s, cutoffs):
    relevant = set(rr.relevant)
    return [1.0 if cutoff - 1 in relevant else 0.0 for cutoff in cutoffs]


def _toy_arrays(ranked, measure):
    return ranked.count(ranked.relevant(measure.rel) & (ranked.position == measure.param - 1)).astype(float)


@pytest.fixture(params=["vectorised", "rule only"])
def toy(request):
    """The toy measure, registered in this one place for the test and forgotten after it."""
    definition = register(Definition(
        "toy", _toy_rule, cutoff((1, 3)), trec_name=False, ir_measures=(IrName("toy", "toy@k", cutoff=True),),
        vectorised=_toy_arrays if request.param == "vectorised" else None, note="a test's own measure"))
    yield definition
    unregister("toy")


def _write(tmp_path):
    qrels = tmp_path / "toy.qrel"
    qrels.write_text("".join(f"{t} 0 {i} {label}\n" for t, items in QRELS.items() for i, label in items.items()))
    runs = []
    for name, run in RUNS.items():
        path = tmp_path / f"{name}.run"
        path.write_text("".join(f"{t} Q0 {i} {rank} {score} {name}\n" for t, scores in run.items()
                                for rank, (i, score) in enumerate(scores.items(), start=1)))
        runs.append(path)
    return qrels, runs


@pytest.mark.parametrize("streamed", [False, True])
def test_evaluate_command(toy, cli, tmp_path, monkeypatch, streamed):
    qrels, runs = _write(tmp_path)
    if streamed:
        monkeypatch.setattr(small_module, "SMALL_RUN_BYTES", 0)  # the streaming engine, or the dict path
    result = cli("evaluate", *runs, "--qrels", qrels, "-m", "toy@3", "-m", "P@3", "--rel-level", "2", "-q",
                 "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    for name, run in RUNS.items():
        expected = toy_oracle(run, QRELS, 3, 2)
        got = {row["turn"]: row["value"] for row in rows if row["run"] == name and row["measure"] == "toy@3"}
        assert got.pop("all") == pytest.approx(sum(expected.values()) / len(expected), abs=1e-15)
        assert got == expected
    assert 0 < sum(row["value"] for row in rows if row["measure"] == "toy@3" and row["turn"] != "all") < 27


def test_python_api(toy):
    run = RUNS["beta"]
    expected = toy_oracle(run, QRELS, 1, 1)
    values = castregin.calc_aggregate(["toy@1", "P@1"], QRELS, run, rel_level=1)
    assert values["toy@1"] == pytest.approx(sum(expected.values()) / len(expected), abs=1e-15)
    assert {m.query_id: m.value for m in castregin.iter_calc("toy@1", QRELS, run, rel_level=1)} == expected
    frame = castregin.evaluate([RUNS["alpha"], run], QRELS, ["toy@1", *parse_measure("toy@3")], rel_level=1,
                               per_turn=True)
    assert set(frame["measure"]) == {"num_q", "toy@1", "toy@3"}
    beta = frame[(frame["run"] == "runs[1]") & (frame["measure"] == "toy@1") & (frame["turn"] != "all")]
    assert dict(zip(beta["turn"], beta["value"], strict=True)) == expected


def test_measures_command_lists_it(toy, cli):
    rows = json.loads(cli("measures", "--format", "json").stdout)
    assert {"trec_eval": None, "ir_measures": "toy@k", "backend": "engine" if toy.vectorised else "trec_eval",
            "aggregate": "mean", "note": "a test's own measure; k: a cutoff, a whole number from 1 to 1,000,000,000; "
                                         "relevance level applies"} in rows


def test_report_shows_it(toy, cli, tmp_path):
    qrels, runs = _write(tmp_path)
    out = tmp_path / "report"
    result = cli("report", *runs, "--qrels", qrels, "--out", out, "-m", "toy@3", "-m", "P@1", "--plot-measure", "toy@3",
                 "--ci-samples", "10", "--permutations", "100")
    assert result.exit_code == 0, result.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    board = page[page.index('id="leaderboard"'):page.index('id="significance"')]
    assert "Sorted by toy@3" in board
    for name, run in RUNS.items():
        expected = toy_oracle(run, QRELS, 3, 2)
        row = re.search(rf"<tr><td[^>]*>{name}(?: \([a-z]\))?</td>(.*?)</tr>", board)[1]
        num_q, shown = map(float, re.findall(r"<td class=\"num\">(?:<strong>)?([0-9.]+)", row)[:2])  # num_q, toy@3
        assert num_q == len(expected)
        assert shown == pytest.approx(sum(expected.values()) / len(expected), abs=5e-4), name
    assert "toy@3 per turn" in page
