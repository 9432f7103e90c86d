"""A run whose items the qrels hardly judge gets a warning, not a table of zeros (README "evaluate").

The share of judged items (any label) among each turn's top 10, averaged over the turns the run and
qrels share, is checked against ir_measures' Judged@10 (scores here are distinct, so its order is
trec_eval's), on every path castregin evaluates by: the line reader and plain Python (small
files), the streaming engine (large files), the engine on runs in memory (the API, compare,
report, analyze), and pytrec_eval's measures.
"""

from __future__ import annotations

import json
import random
import warnings

import ir_measures
import pytest

from castregin import api, formats
from castregin.errors import CoverageWarning
from castregin.evaluation import evaluate as evaluation
from castregin.evaluation import small as small_module
from castregin.evaluation.engine import QrelsIndex, evaluate_run_arrays
from castregin.evaluation.measures import JUDGED_SHARE, Measure, parse_measure
from castregin.formats import columnar

SHARE = Measure("judged share", JUDGED_SHARE, 10)


def make(turns: int, depth: int, judged_per_turn: int, hits: dict[int, int], seed: int = 1, prefix: str = "D",
         label=lambda k: k % 4):
    """A run and qrels: ``hits[t]`` of turn t's top 10 are judged (labels 0-3 by default, zeros among them).

    Returns (run lines, qrels lines). The run's items are ``prefix`` + number; scores are distinct.
    """
    rng = random.Random(seed)
    run, qrels = [], []
    for t in range(turns):
        turn = f"{100 + t // 50}_{t % 50 + 1}-1"
        items = [f"{prefix}{t:05d}{k:04d}" for k in range(depth)]
        top_judged = set(rng.sample(range(10), hits.get(t, 0)))
        for k, item in enumerate(items):
            run.append(f"{turn} Q0 {item} {k + 1} {1000.0 - k - t / 1e4:.6f} r")
        judged = [items[k] for k in top_judged]
        judged += [f"J{t:05d}{k:04d}" for k in range(judged_per_turn - len(judged))]  # judged, not retrieved
        for k, item in enumerate(sorted(judged)):
            qrels.append(f"{turn} 0 {item} {label(k)}")
    return run, qrels


def ir_measures_share(run_lines, qrels_lines) -> float:
    """Mean of ir_measures' per-turn Judged@10 over the turns both hold."""
    qrels = [ir_measures.Qrel(t, d, int(r)) for t, _, d, r in (line.split() for line in qrels_lines)]
    run = [ir_measures.ScoredDoc(t, d, float(s)) for t, _, d, _, s, _ in (line.split() for line in run_lines)]
    values = [m.value for m in ir_measures.iter_calc([ir_measures.Judged @ 10], qrels, run)]
    return sum(values) / len(values)


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def caught(function, *args, **kwargs) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        function(*args, **kwargs)
    return [str(w.message) for w in seen if issubclass(w.category, CoverageWarning)]


# --- the per-turn values, against ir_measures ------------------------------------------------------------


@pytest.mark.parametrize("with_judged_measure", [False, True])
def test_engine_judged_share_equals_ir_measures_judged_at_10(tmp_path, with_judged_measure):
    rng = random.Random(7)
    run_lines, qrels_lines = make(300, 30, 12, {t: rng.randint(0, 10) for t in range(300)})
    expected = ir_measures_share(run_lines, qrels_lines)
    run = columnar.run_from_dict(formats.read_run(write(tmp_path, "r.run", run_lines)))
    index = QrelsIndex(columnar.qrels_from_dict(formats.read_qrels(write(tmp_path, "q.qrel", qrels_lines))))
    # With Judged@10 asked, the engine matches every judged line; without, the positive ones and then
    # the top 10 among the others.
    specs = [*parse_measure("Judged@10"), SHARE] if with_judged_measure else [*parse_measure("P@10", 2), SHARE]
    turns, values = evaluate_run_arrays(run, index, specs)
    assert len(turns) == 300
    assert values[1].mean() == pytest.approx(expected, abs=1e-12)
    assert 0.2 < expected < 0.8


def test_plain_and_streaming_paths_give_the_same_shares(tmp_path):
    rng = random.Random(3)
    run_lines, qrels_lines = make(3000, 40, 12, {t: rng.randint(0, 3) for t in range(3000)})
    run, qrels = write(tmp_path, "big.run", run_lines), write(tmp_path, "q.qrel", qrels_lines)
    assert run.stat().st_size > small_module.SMALL_RUN_BYTES  # the streaming engine
    expected = ir_measures_share(run_lines, qrels_lines)
    measures = evaluation.parse_measures(("P@10",), 2)
    small = evaluation._score_small_files([run], [(None, qrels)], measures, None, evaluation.DEFAULT_BITS)
    assert evaluation._judged_share(small[0][0].scores[0]) == pytest.approx(expected, abs=1e-12)
    # Streamed, the qrels' lines labelled 0 or less are left out: the share of those labelled above 0
    # is a lower bound, enough to see that no warning is due.
    streamed = evaluation._score_files([run], [(None, qrels)], measures, None, evaluation.DEFAULT_BITS)
    positive_only = ir_measures_share(run_lines, [line for line in qrels_lines if not line.endswith(" 0")])
    assert evaluation._judged_share(streamed[0][0].scores[0]) == pytest.approx(positive_only, abs=1e-12)
    assert evaluation.FEW_JUDGED < positive_only < expected


def test_a_second_pass_where_the_bound_is_under_the_threshold(tmp_path, cli):
    # Every judged item of the top 10s is labelled 0: nothing above 0, yet 20% judged. The first pass
    # sees 0%; a second one, with every qrels line, finds the 20% and no warning is due.
    run_lines, qrels_lines = make(3000, 40, 4, dict.fromkeys(range(3000), 2), label=lambda k: 0)
    run, qrels = write(tmp_path, "zeros.run", run_lines), write(tmp_path, "q.qrel", qrels_lines)
    assert run.stat().st_size > small_module.SMALL_RUN_BYTES
    expected = ir_measures_share(run_lines, qrels_lines)
    assert expected == pytest.approx(0.2)
    streamed = evaluation._score_files([run], [(None, qrels)], evaluation.parse_measures(("P@10",), 2), None,
                                     evaluation.DEFAULT_BITS)
    assert evaluation._judged_share(streamed[0][0].scores[0]) == pytest.approx(expected, abs=1e-12)
    quiet = cli("evaluate", run, "--qrels", qrels, "-m", "P@10")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    # A run on standard input cannot be read twice: the qrels keep every line from the start.
    piped = cli("evaluate", "-", "--qrels", qrels, "-m", "P@10", input=run.read_text())
    assert piped.exit_code == 0 and piped.stderr == "" and piped.stdout == quiet.stdout
    other = "".join(line.replace(" D", " R", 1) + "\n" for line in run_lines)
    warned = cli("evaluate", "-", "--qrels", qrels, "-m", "P@10", input=other)
    assert "castregin: warning: run 'r': 0.0% of its top 10 items are judged in qrels 'q'" in warned.stderr


# --- the warning -------------------------------------------------------------------------------------------


def test_a_run_matching_nothing_is_named_with_its_qrels_on_the_streaming_path(tmp_path, cli):
    run_lines, qrels_lines = make(3000, 40, 12, dict.fromkeys(range(3000), 2))
    qrels = write(tmp_path, "questions.qrel", qrels_lines)
    good = write(tmp_path, "good.run", run_lines)
    # The same run with other ids (responses against question qrels): every value 0.
    other = write(tmp_path, "responses.run", [line.replace(" D", " R", 1) for line in run_lines])
    result = cli("evaluate", good, other, "--qrels", qrels, "-m", "P@10")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "castregin: warning: run 'r (" + str(other) + ")': 0.0% of its top 10 items are judged in qrels "
        "'questions' (mean over its 3000 turns there, under 1%): its values are about 0 whatever it ranks; "
        "check that the run ranks the items the qrels judge (not response ids against question qrels, say)"]


def test_the_threshold_by_construction(tmp_path):
    # One judged item in the top 10 of one turn in twenty: 0.5%, warned; of one in five: 2%, not.
    for every, warned in ((20, True), (5, False)):
        run_lines, qrels_lines = make(400, 20, 5, dict.fromkeys(range(0, 400, every), 1))
        assert ir_measures_share(run_lines, qrels_lines) == pytest.approx(0.1 / every)
        run, qrels = write(tmp_path, f"r{every}.run", run_lines), write(tmp_path, f"q{every}.qrel", qrels_lines)
        messages = [m for m in caught(evaluation.evaluate_files, [run], [(None, qrels)], measures=["P@10"])
                    if "judged" in m]
        if warned:
            assert messages == [(f"run 'r': 0.5% of its top 10 items are judged in qrels 'q{every}' (mean over its "
                                 "400 turns there, under 1%): its values are about 0 whatever it ranks; check that "
                                 "the run ranks the items the qrels judge (not response ids against question "
                                 "qrels, say)")]
        else:
            assert messages == []


def test_every_way_to_evaluate_warns(tmp_path, cli):
    run_lines, qrels_lines = make(40, 12, 4, dict.fromkeys(range(40), 3))
    qrels = write(tmp_path, "q.qrel", qrels_lines)
    good = write(tmp_path, "good.run", run_lines)
    bad = write(tmp_path, "bad.run", [line.replace(" D", " X", 1).replace(" r", " bad") for line in run_lines])
    expected = "run 'bad': 0.0% of its top 10 items are judged in qrels 'q'"
    # The API, in memory (engine), and with a measure only pytrec_eval computes.
    for measures in (["P@10"], ["bpref"]):
        messages = caught(api.evaluate, [formats.read_run(good), formats.read_run(bad)], formats.read_qrels(qrels),
                          measures)
        assert [m for m in messages if "judged" in m] == [messages[0]] and messages[0].startswith(expected)
    for command in (["evaluate"], ["compare"], ["analyze", "bootstrap", "--samples", "20"]):
        result = cli(*command, good, bad, "--qrels", qrels, "-m", "P@10")
        assert result.exit_code == 0, result.stderr
        assert f"castregin: warning: {expected}" in result.stderr
        assert "run 'r'" not in result.stderr  # the good run is not warned about
    report = cli("report", good, bad, "--qrels", qrels, "--out", tmp_path / "report")
    assert report.exit_code == 0 and f"castregin: warning: {expected}" in report.stderr
    trec_eval = cli("trec_eval", qrels, bad)
    assert f"castregin: warning: {expected}" in trec_eval.stderr


def test_the_cast_response_run_against_question_qrels(cast2022, cli, tmp_path):
    # The tester's case: the sample main-task run converted to responses, evaluated against the question
    # qrels. Every turn is shared, so the turn coverage says nothing; the judged share does.
    run = tmp_path / "responses.run"
    converted = cli("convert", "responses", cast2022 / "runs/main/sample_run.json", "--bank",
                    cast2022 / "regin/response_bank.json", "-o", run)
    assert converted.exit_code == 0
    result = cli("evaluate", run, "--qrels", cast2022 / "regin/qrels/question_relevance_all.qrel", "--format", "json")
    assert {row["value"] for row in json.loads(result.stdout) if row["measure"] != "num_q"} == {0.0}
    assert ("castregin: warning: run 'sample_run': 0.0% of its top 10 items are judged in qrels "
            "'question_relevance_all' (mean over its 205 turns there") in result.stderr
