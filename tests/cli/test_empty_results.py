"""No command ends with exit 0 and an empty result in silence (docs/inputs.md, "Empty results").

`aggregate` exited 0 with two empty qrels when the gold filter removed every label, and a script fed them to
`evaluate`. The rule, for every command (castregin/cli/commands.json lists them; this test walks them all):

- a file of records that would hold nothing (qrels, runs, a pool, tasks, aggregate's qrels) is an error, one
  line, exit 1, nothing written;
- a table over runs and qrels that share no turn (every value 0, or no row) is printed with a warning line per
  run naming the qrels; one that shares nothing to compare (agreement between sources that judge no common pair)
  is an error;
- an input without a record is an error of its reader; a command with no input (measures, ope simulate) has
  nothing to be empty.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from castregin.cli import main

from .command_tree import every_command

ERROR, WARNING, NOT_APPLICABLE, SLOT = "error", "warning", "n/a", "slot"
NO_SHARED_TURN = "shares no turn with qrels 'x'"

#: Every command: (arguments, the rule, what its one line says).
CASES: dict[tuple[str, ...], tuple[list[str], str, str]] = {
    ("aggregate",): (["aggregate", "j.csv", "--criteria", "relevance", "--gold", "g.csv", "--out-dir", "agg"], ERROR,
                     ("no label is left to write: the gold filter removed every label (2 worker(s) in 2 (worker, "
                      "topic) pair(s)); check the ranges of --gold; nothing written")),
    ("agreement",): (["agreement", "j.csv", "--criteria", "relevance", "--gold", "g.csv"], WARNING,
                     ("the gold filter removed every label (2 worker(s) in 2 (worker, topic) pair(s)): the agreement "
                      "after it is of nothing")),
    ("analyze", "bootstrap"): (["analyze", "bootstrap", "a.run", "b.run", "--qrels", "x.qrel"], WARNING,
                               NO_SHARED_TURN),
    ("analyze", "correlation"): (["analyze", "correlation", "a.run", "b.run", "--qrels", "q.qrel", "--qrels",
                                  "x.qrel"], WARNING, NO_SHARED_TURN),
    ("analyze", "holes"): (["analyze", "holes", "a.run", "b.run", "--qrels", "x.qrel", "--depth", "2"], WARNING,
                           NO_SHARED_TURN),
    ("analyze", "loro"): (["analyze", "loro", "a.run", "b.run", "--qrels", "x.qrel", "--depth", "1"], WARNING,
                          NO_SHARED_TURN),
    ("compare",): (["compare", "a.run", "b.run", "--qrels", "x.qrel"], WARNING, NO_SHARED_TURN),
    ("convert", "passages"): (["convert", "passages", "main.json", "-o", "out.run"], ERROR,
                              "no line is left to write (1 warning: 1 turn without passages); nothing written"),
    ("convert", "questions"): (["convert", "questions", "mi.json", "--bank", "bank.json", "-o", "out.run"], ERROR,
                               "no line is left to write"),
    ("convert", "responses"): (["convert", "responses", "main.json", "--bank", "bank.json", "--passage-qrels",
                                "x.qrel", "-o", "out.run"], ERROR, "no line is left to write"),
    ("evaluate",): (["evaluate", "a.run", "b.run", "--qrels", "x.qrel"], WARNING, NO_SHARED_TURN),
    ("gdeval",): (["gdeval", "gq.txt", "gr.txt"], WARNING,
                  ("no topic of gr.txt (they look like '1') is in gq.txt with a positive label: every value is "
                   "0")),
    ("judge",): ([], SLOT, ("H1 (issue 34): judge's empty result (no call succeeded) is its own refusal; the case "
                            "needs the LLM test server of tests/judging, and belongs to the judge helper's tests")),
    ("measures",): ([], NOT_APPLICABLE, "no input: the catalogue of every measure"),
    ("ndeval",): (["ndeval", "nq.txt", "gr.txt"], WARNING,
                  "no topic of gr.txt (they look like '1') is in nq.txt: every value is 0"),
    ("ope", "estimate"): (["ope", "estimate", "empty.jsonl"], ERROR, "the file has no dialogues"),
    ("ope", "simulate"): ([], NOT_APPLICABLE, "no input: --dialogues is 1 or more"),
    ("paradise", "fit"): (["paradise", "fit", "header.csv", "--satisfaction", "US", "--success", "k", "--cost", "t"],
                          ERROR, "the file has a header but no dialogues"),
    ("paradise", "kappa"): (["paradise", "kappa", "matrix.csv"], ERROR, "a confusion matrix must be square"),
    ("paradise", "predict"): (["paradise", "predict", "function.json", "header.csv"], ERROR,
                              "the file has a header but no dialogues"),
    ("pool", "build"): (["pool", "a.run", "--turns", "turns.txt", "-o", "pool.txt"], ERROR,
                        "none of the 1 pooled turns is in --turns turns.txt"),
    ("pool", "stats"): (["pool", "stats", "a.run", "b.run", "--pool", "x.pool"], WARNING,
                        ("x.pool shares no turn with the runs (the pool's look like 'x1', the runs' like 't1'): every "
                         "contribution is 0")),
    ("qrels", "combine"): (["qrels", "combine", "q.qrel", "x.qrel", "-o", "out.qrel"], ERROR,
                           ("no (turn, item) pair is judged in every qrels (4 pairs in some only); check the ids; "
                            "nothing written")),
    ("qrels", "filter"): (["qrels", "filter", "q.qrel", "--min-label", "3", "-o", "out.qrel"], ERROR,
                          "no turn of q.qrel has a label >= 3 (its highest is 2); lower --min-label; nothing written"),
    ("qrels", "merge"): (["qrels", "merge", "empty.qrel", "q.qrel", "--provenance", "p.json", "-o", "out.qrel"],
                         ERROR, "empty.qrel: the file is empty, expected a qrels file"),
    ("qrels", "stats"): (["qrels", "stats", "empty.qrel"], ERROR, "the file is empty, expected a qrels file"),
    ("qrels", "subset"): (["qrels", "subset", "q.qrel", "--turns", "turns.txt", "-o", "out.qrel"], ERROR,
                          ("none of the 1 turns of q.qrel is in --turns turns.txt (the qrels' look like 't1', the "
                           "list's like 'x9'); check the turn ids; nothing written")),
    ("report",): (["report", "a.run", "b.run", "--qrels", "x.qrel", "--ci-samples", "10", "--out", "rep"], WARNING,
                  NO_SHARED_TURN),
    ("scorekeeping", "score"): (["scorekeeping", "score", "episode"], ERROR,
                                "a game that was not aborted must have played a probing round"),
    ("scorekeeping", "summary"): (["scorekeeping", "summary", "results"], ERROR,
                                  "no interactions.json or scores.json below this directory"),
    ("tasks",): (["tasks", "a.run", "--bank", "bank.json", "--topics", "bank.json", "--criteria", "relevance",
                  "--turns", "turns.txt", "--out-dir", "tasks"], ERROR,
                 "none of the 1 pooled turns is in --turns turns.txt"),
    ("trec_eval",): (["trec_eval", "x.qrel", "a.run"], ERROR,
                    "no query has both results (a.run) and relevance information (x.qrel)"),
}
#: What each command that writes files must leave absent when it refuses.
NOT_WRITTEN = {("aggregate",): "agg", ("convert", "passages"): "out.run", ("convert", "questions"): "out.run",
               ("convert", "responses"): "out.run", ("pool", "build"): "pool.txt", ("qrels", "combine"): "out.qrel",
               ("qrels", "filter"): "out.qrel", ("qrels", "subset"): "out.qrel", ("qrels", "merge"): "p.json",
               ("tasks",): "tasks"}


def test_every_command_is_walked():
    assert set(CASES) == set(every_command())
    listed = json.loads((Path(main.callback.__code__.co_filename).parent / "commands.json").read_text())
    assert {path[0] for path in CASES} == set(listed)


def _interactions() -> dict:
    """An episode of clembench's privateshared game that played no probing round without being aborted."""
    return {"players": {"GM": "Game master for privateshared", "Player 1": "Answerer: m",
                        "Player 2": "Questioner: Programmatic"},
            "turns": [], "probes": [], "realised_slots": {"availability": 0}, "Request Count": [],
            "Parsed Request Count": [], "Violated Request Count": [], "Filled Slots": [], "Aborted": False,
            "Played Probe Rounds": 0}


@pytest.fixture
def files(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    texts = {
        "q.qrel": "t1 0 Q1 2\nt1 0 Q2 0\n",
        "x.qrel": "x1 0 Q1 2\nx1 0 Q2 1\n",  # no turn of the runs
        "empty.qrel": "",
        "x.pool": "x1 Q0 Q1 1 0.0 dummytag\n",
        "a.run": "t1 Q0 Q1 1 2 a\nt1 Q0 Q2 2 1 a\n",
        "b.run": "t1 Q0 Q2 1 2 b\nt1 Q0 Q1 2 1 b\n",
        "turns.txt": "x9\n",
        "j.csv": "worker_id,turn_id,item_id,relevance\nW1,1_1,Q1,0\nW2,1_1,Q1,1\n",
        "g.csv": "turn_id,item_id,criterion,min_label,max_label\n1_1,Q1,relevance,3,3\n",  # both workers fail it
        "empty.jsonl": "",
        "matrix.csv": ",a\n",
        "header.csv": "US,k,t\n",
        "dialogues.csv": "US,k,t\n3,0.5,10\n2,0.2,12\n4,0.9,8\n1,0.1,20\n",
        "bank.json": '{"Q1": "Is it a cat?"}',
        "mi.json": '{"run_name": "m", "turns": [{"turn_id": "t1", "questions": [{"question": "Q9", "score": 1}]}]}',
        "main.json": json.dumps({"run_name": "m", "run_type": "automatic", "turns": [{"turn_id": "1_1-1", "responses": [
            {"text": "an answer", "rank": 1, "provenance": []}]}]}),
        "gq.txt": "5 0 d1 1\n",
        "nq.txt": "5 1 d1 1\n",
        "gr.txt": "1 Q0 d1 1 1 r\n",
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "episode").mkdir()
    (tmp_path / "episode" / "interactions.json").write_text(json.dumps(_interactions()))
    (tmp_path / "results").mkdir()
    fitted = cli("paradise", "fit", "dialogues.csv", "--satisfaction", "US", "--success", "k", "--cost", "t",
                 "--alpha-level", "0.99", "--save", "function.json")
    assert fitted.exit_code == 0, fitted.stderr
    return tmp_path


@pytest.mark.parametrize("path", sorted(CASES), ids=" ".join)
def test_an_empty_result_is_never_silent(cli, files, path):
    args, rule, said = CASES[path]
    if rule == SLOT:
        pytest.skip(said)
    if rule == NOT_APPLICABLE:
        return
    result = cli(*args)
    assert "Traceback" not in result.stderr
    if rule == ERROR:
        assert result.exit_code == 1, (path, result.stderr)
        *before, last = result.stderr.splitlines()
        assert last.startswith("castregin: error: ") and said in last, result.stderr
        assert all(line.startswith("castregin: warning: ") for line in before), result.stderr  # convert's
        assert result.stdout == ""
        if path in NOT_WRITTEN:
            assert not (files / NOT_WRITTEN[path]).exists()
    else:
        assert result.exit_code == 0, (path, result.stderr)
        warnings = [line for line in result.stderr.splitlines() if line.startswith("castregin: warning: ")]
        assert any(said in line for line in warnings), result.stderr


def test_aggregate_says_which_output_is_empty_when_others_are_not(cli, files):
    # One criterion without a label, and the filtered qrels of the other without a turn: written, each named.
    (files / "two.csv").write_text("worker_id,turn_id,item_id,relevance,novelty\nW1,1_1,Q1,1,\nW2,1_1,Q1,1,\n")
    result = cli("aggregate", "two.csv", "--criteria", "relevance,novelty", "--prefix", "", "--out-dir", "agg")
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("castregin: warning: ")]
    assert warnings == [
        ("castregin: warning: criterion relevance: no turn has a label >= 2 (--min-label); relevance_filtered.qrel "
         "is empty"),
        ("castregin: warning: criterion novelty: no label is left (its cells are empty, or the gold filter removed "
         "them); novelty.qrel is empty")]
    assert (files / "agg" / "relevance.qrel").read_text() == "1_1 0 Q1 1\n"
    assert (files / "agg" / "novelty.qrel").read_text() == ""
