"""No command ends with exit 0 and an empty result in silence (docs/inputs.md, "Empty results").

`aggregate` exited 0 with two empty qrels when the gold filter removed every label, and a script fed them to
`evaluate`. The rule, for every command (castregin/cli/commands.json lists them; this test walks them all):

- a file of records that would hold nothing (qrels, runs, a pool, tasks, aggregate's qrels) is an error, one
  line, exit 1, nothing written;
- a table over runs and qrels that share no turn (every value 0, or no row) is printed with a warning line per
  run naming the qrels; one that shares nothing to compare (agreement between sources that judge no common pair)
  is an error;
- a command that calls a model (judge, nuggets assign/create/cite, play) and has nothing answered (every call
  failing, against the test servers of tests/judging, tests/nuggets and tests/dialogue answering 500) or nothing
  to ask is an error, nothing written; `play` with every episode already played says so and prints the table of
  those (a note, not an error: running it again for the table is legitimate);
- a mean over no turn (nugget_recall when no turn has nuggets and an answer) is nan with a warning naming why;
- an input without a record is an error of its reader; a command with no input (measures, ope simulate) has
  nothing to be empty.

Every case's standard error is castregin's lines only: no traceback, no Python warning (numpy's).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

from castregin.cli import main

from .command_tree import every_command

ERROR, WARNING, NOTE, NOT_APPLICABLE = "error", "warning", "note", "n/a"
NO_SHARED_TURN = "shares no turn with qrels 'x'"
NOTHING_ANSWERED = ("no call was answered (1 call(s) failed after every retry); the first error: HTTP 500: overloaded; "
                    "nothing written")
#: The commands that call a model: every request to the test server ({chat}, {nuggets}, {game}) is answered 500.
MODEL_SETTINGS = ["--api-key-env", "CASTREGIN_WALKER_KEY", "--max-retries", "0", "--retry-wait", "0.01", "--timeout",
                  "20", "--concurrency", "1"]


def MODEL_AT(url: str) -> list[str]:  # read as a constant in the table
    return ["--model", "m", "--base-url", url, *MODEL_SETTINGS]

#: Every command: (arguments, the rule, what its one line says).
CASES: dict[tuple[str, ...], tuple[list[str], str, str]] = {
    ("aggregate",): (["aggregate", "j.csv", "--criteria", "relevance", "--gold", "g.csv", "--out-dir", "agg"], ERROR,
                     ("no label is left to write: the gold filter removed every label (2 worker(s) in 2 (worker, "
                      "topic) pair(s)); check the ranges of --gold; nothing written")),
    ("agreement",): (["agreement", "j.csv", "--criteria", "relevance", "--gold", "g.csv"], WARNING,
                     ("the gold filter removed every label (2 worker(s) in 2 (worker, topic) pair(s)): the agreement "
                      "after it is of nothing")),
    ("analyze", "ppi"): (["analyze", "ppi", "a.run", "b.run", "--qrels", "x=sample.qrel", "--model-qrels",
                          "model=every.qrel"], WARNING, NO_SHARED_TURN),
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
    ("judge",): (["judge", "jpool.txt", "--bank", "bank.json", "--topics", "topics.json", "--criteria", "relevance",
                  *MODEL_AT("{chat}"), "--out-dir", "judged"], ERROR,
                 NOTHING_ANSWERED),
    ("measures",): ([], NOT_APPLICABLE, "no input: the catalogue of every measure"),
    ("nuggets", "assign"): (["nuggets", "assign", "nuggets.jsonl", "answers.jsonl", *MODEL_AT("{nuggets}"),
                             "--out-dir", "assigned"], ERROR, NOTHING_ANSWERED),
    ("nuggets", "cite"): (["nuggets", "cite", "answers.jsonl", "--passages", "passages.jsonl", *MODEL_AT("{nuggets}"),
                           "--out-dir", "cited"], ERROR, NOTHING_ANSWERED),
    ("nuggets", "create"): (["nuggets", "create", "--qrels", "passages.qrel", "--passages", "passages.jsonl",
                             "--queries", "queries.tsv", *MODEL_AT("{nuggets}"), "--out-dir", "created"], ERROR,
                            NOTHING_ANSWERED),
    ("nuggets", "aggregate"): (["nuggets", "aggregate", "other_tasks.csv", "--tasks", "assign_tasks", "--out-dir",
                                "people"], ERROR,
                               ("no answer has a label for each of its nuggets; check that the judgments are of these "
                                "tasks (their turn and item ids); nothing written")),
    ("nuggets", "tasks", "assign"): (["nuggets", "tasks", "assign", "nuggets.jsonl", "answers_t9.jsonl", "--out-dir",
                                      "tasks"], ERROR,
                                     "there is nothing to label: no answer with a text is to a turn with nuggets"),
    ("nuggets", "tasks", "cite"): (["nuggets", "tasks", "cite", "uncited.jsonl", "--passages", "passages.jsonl",
                                    "--out-dir", "tasks"], ERROR,
                                   "there is nothing to label: no answer cites a passage with a text; nothing written"),
    ("nuggets", "tasks", "create"): (["nuggets", "tasks", "create", "--qrels", "passages.qrel", "--min-grade", "3",
                                      "--passages", "passages.jsonl", "--queries", "queries.tsv", "--out-dir",
                                      "tasks"],
                                     ERROR, "no turn has a passage of grade 3 or more"),
    ("nuggets", "tasks", "importance"): (["nuggets", "tasks", "importance", "empty_nuggets.jsonl", "--out-dir",
                                          "tasks"], ERROR,
                                         "there is nothing to label: the nuggets file holds no nugget"),
    ("nuggets", "score"): (["nuggets", "score", "no_nuggets.jsonl"], WARNING,
                           "1 turn(s) have no nugget: t1; they score 0 on nuggetizer's four scores"),
    ("ndeval",): (["ndeval", "nq.txt", "gr.txt"], WARNING,
                  "no topic of gr.txt (they look like '1') is in nq.txt: every value is 0"),
    ("ope", "estimate"): (["ope", "estimate", "empty.jsonl"], ERROR, "the file has no dialogues"),
    ("ope", "simulate"): ([], NOT_APPLICABLE, "no input: --dialogues is 1 or more"),
    ("paradise", "fit"): (["paradise", "fit", "header.csv", "--satisfaction", "US", "--success", "k", "--cost", "t"],
                          ERROR, "the file has a header but no dialogues"),
    ("paradise", "kappa"): (["paradise", "kappa", "matrix.csv"], ERROR, "a confusion matrix must be square"),
    ("paradise", "predict"): (["paradise", "predict", "function.json", "header.csv"], ERROR,
                              "the file has a header but no dialogues"),
    ("play", "privateshared"): (["play", "privateshared", "--game-dir", "{game_dir}", "--model", "truthful",
                                 "--base-url", "{game}", *MODEL_SETTINGS, "--out-dir", "played"], ERROR,
                                ("no episode could be played (1 episode(s): a call failed after every retry; 3 "
                                 "episode(s): not sent: the endpoint answered no call); the first error: HTTP 500: "
                                 "overloaded; nothing written")),
    ("pool", "build"): (["pool", "a.run", "--turns", "turns.txt", "-o", "pool.txt"], ERROR,
                        "none of the 1 pooled turns is in --turns turns.txt"),
    ("pool", "simulate"): (["pool", "simulate", "a.run", "b.run", "--qrels", "x.qrel"], ERROR,
                           "x.qrel: the runs and the qrels share no turn: nothing to simulate"),
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
    ("sample_eval",): (["sample_eval", "strata.qrel", "a.run"], ERROR,
                       "a.run: the run and the qrels share no topic"),
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
#: Where a command's result is empty for another reason than the one above: (command, what) -> the case.
MORE_CASES: dict[tuple[tuple[str, ...], str], tuple[list[str], str, str]] = {
    (("judge",), "no turn to judge"): (
        ["judge", "jpool.txt", "--bank", "bank.json", "--topics", "topics.json", "--criteria", "relevance",
         "--turns", "turns.txt", *MODEL_AT("{chat}"), "--out-dir", "judged"], ERROR,
        "none of the 1 pooled turns is in --turns turns.txt (the pool's look like '1_1-1'); nothing written"),
    (("nuggets", "assign"), "no answer to a turn with nuggets"): (
        ["nuggets", "assign", "nuggets.jsonl", "answers_t9.jsonl", *MODEL_AT("{nuggets}"), "--out-dir", "assigned"],
        ERROR, "no answer is to a turn the nuggets have"),
    (("nuggets", "cite"), "no citation"): (
        ["nuggets", "cite", "uncited.jsonl", "--passages", "passages.jsonl", *MODEL_AT("{nuggets}"), "--out-dir",
         "cited"], ERROR, "no answer cites a passage with a text: there is no pair to judge"),
    (("nuggets", "create"), "no relevant passage"): (
        ["nuggets", "create", "--qrels", "passages.qrel", "--min-grade", "3", "--passages", "passages.jsonl",
         "--queries", "queries.tsv", *MODEL_AT("{nuggets}"), "--out-dir", "created"], ERROR,
        "no turn has a passage of grade 3 or more"),
    (("nuggets", "score"), "no turn to average nugget_recall over"): (
        ["nuggets", "score", "no_nuggets.jsonl", "-m", "nugget_recall"], WARNING,
        "run 'r': no turn to average nugget_recall over (a turn counts with nuggets and an answer); its value is nan"),
    (("nuggets", "score"), "no vital nugget, skipped"): (
        ["nuggets", "score", "no_vital.jsonl", "-m", "vital", "--no-vital", "skip"], WARNING,
        ("run 'r': no turn to average vital_score over (--no-vital skip leaves out the turns without a vital "
         "nugget); its value is nan")),
    (("play", "privateshared"), "every episode played before"): (
        ["play", "privateshared", "--game-dir", "{game_dir}", "--model", "truthful", "--base-url", "{game}",
         *MODEL_SETTINGS, "--out-dir", "played", "--experiment", "job-interview"], NOTE,
        "castregin: every episode to play is in played already: none was played in this run"),
    (("pool", "build"), "adaptive judging done"): (
        ["pool", "a.run", "--strategy", "depth", "--budget", "1", "--qrels", "q.qrel", "-o", "pool.txt"], WARNING,
        "every turn has spent its budget of 1 judgments or judged all its pool: nothing left to judge"),
    (("pool", "simulate"), "no relevant item"): (
        ["pool", "simulate", "a.run", "b.run", "--qrels", "q.qrel", "--rel-level", "3"], ERROR,
        "q.qrel: every run has the same AP (0.0000) on the pool's labels: there is no ranking of the runs to approach"),
}
#: What each command that writes files must leave absent when it refuses.
NOT_WRITTEN = {("nuggets", "aggregate"): "people", ("nuggets", "tasks", "assign"): "tasks",
               ("nuggets", "tasks", "cite"): "tasks", ("nuggets", "tasks", "create"): "tasks",
               ("nuggets", "tasks", "importance"): "tasks", ("judge",): "judged", ("nuggets", "assign"): "assigned",
               ("nuggets", "cite"): "cited",
               ("nuggets", "create"): "created", ("play", "privateshared"): "played",
               ("aggregate",): "agg", ("convert", "passages"): "out.run", ("convert", "questions"): "out.run",
               ("convert", "responses"): "out.run", ("pool", "build"): "pool.txt", ("qrels", "combine"): "out.qrel",
               ("qrels", "filter"): "out.qrel", ("qrels", "subset"): "out.qrel", ("qrels", "merge"): "p.json",
               ("tasks",): "tasks"}


#: Run first, against a test server that answers (``{game_ok}``): what makes the case's result empty.
BEFORE = {(("play", "privateshared"), "every episode played before"): [
    "play", "privateshared", "--game-dir", "{game_dir}", "--model", "truthful", "--base-url", "{game_ok}",
    *MODEL_SETTINGS, "--out-dir", "played", "--experiment", "job-interview"]}
GAME_DIR = Path(__file__).resolve().parents[1] / "data" / "privateshared" / "clembench"
KEY = "sk-walker-0123456789-SECRET"


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


def _jsonl(*records) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def _assignment(importance: str | None) -> dict:
    nuggets = [] if importance is None else [{"text": "Chlorophyll absorbs sunlight", "importance": importance,
                                              "assignment": "support"}]
    return {"qid": "t1", "query": "How does photosynthesis work?", "run_id": "r", "answer_text": "Chlorophyll "
            "absorbs sunlight.", "nuggets": nuggets}


def _answer(topic: str, citations: list[int]) -> dict:
    return {"run_id": "alpha", "topic_id": topic, "topic": "", "references": ["d1"],
            "answer": [{"text": "Chlorophyll absorbs sunlight.", "citations": citations}]}


@pytest.fixture(scope="module")
def servers():
    """The test servers of the commands that call a model, every request answered 500 (``{game_ok}`` answers)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from dialogue.game_server import serve_game
    from judging.chat_server import serve
    from nuggets.nugget_server import serve_nuggets

    chat, nuggets = serve(faults=False), serve_nuggets(faults=False)
    for server in (chat, nuggets):
        server.fault_for = lambda key, attempt: "server_error"
    running = {"chat": chat, "nuggets": nuggets, "game": serve_game(GAME_DIR, broken=[""]),
               "game_ok": serve_game(GAME_DIR)}
    yield running
    for server in running.values():
        server.shutdown()


def _filled(args: list[str], servers) -> list[str]:
    places = {name: server.base_url for name, server in servers.items()} | {"game_dir": str(GAME_DIR)}
    return [arg.format(**places) if "{" in arg else arg for arg in args]


@pytest.fixture
def files(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CASTREGIN_WALKER_KEY", KEY)
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
        "strata.qrel": "x1 0 Q1 1 1\n",  # sample_eval's: turn 0 item stratum label
        "sample.qrel": "x1 0 Q1 2\nx2 0 Q1 0\n",  # people's sample of the model's turns, none the runs'
        "every.qrel": "x1 0 Q1 2\nx2 0 Q1 1\nx3 0 Q1 2\n",
        "topics.json": json.dumps([{"number": 1, "turn": [{"number": "1-1", "participant": "User",
                                                           "utterance": "How do I bake bread?"}]}]),
        "jpool.txt": "1_1-1 Q0 Q1 1 0 pool\n",
        "nuggets.jsonl": _jsonl({"qid": "t1", "query": "How does photosynthesis work?",
                                 "nuggets": [{"text": "Chlorophyll absorbs sunlight", "importance": "vital"}]}),
        "answers.jsonl": _jsonl(_answer("t1", [0])),
        "answers_t9.jsonl": _jsonl(_answer("t9", [0])),
        "uncited.jsonl": _jsonl(_answer("t1", [])),
        "passages.jsonl": _jsonl({"docid": "d1", "text": "Chlorophyll absorbs sunlight in the leaves."}),
        "passages.qrel": "t1 0 d1 2\n",
        "queries.tsv": "t1\tHow does photosynthesis work?\n",
        "no_nuggets.jsonl": _jsonl(_assignment(None)),
        "no_vital.jsonl": _jsonl(_assignment("okay")),
        "empty_nuggets.jsonl": _jsonl({"qid": "t1", "query": "How does photosynthesis work?", "nuggets": []}),
        "other_tasks.csv": "worker_id,turn_id,item_id,support\nw1,zz,alpha#0,2\n",  # labels of no task here
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "episode").mkdir()
    (tmp_path / "episode" / "interactions.json").write_text(json.dumps(_interactions()))
    (tmp_path / "results").mkdir()
    made = cli("nuggets", "tasks", "assign", "nuggets.jsonl", "answers.jsonl", "--out-dir", "assign_tasks")
    assert made.exit_code == 0, made.stderr
    fitted = cli("paradise", "fit", "dialogues.csv", "--satisfaction", "US", "--success", "k", "--cost", "t",
                 "--alpha-level", "0.99", "--save", "function.json")
    assert fitted.exit_code == 0, fitted.stderr
    return tmp_path


@pytest.mark.parametrize("path", sorted(CASES), ids=" ".join)
def test_an_empty_result_is_never_silent(cli, files, servers, path):
    args, rule, said = CASES[path]
    if rule == NOT_APPLICABLE:
        return
    _check(cli, files, path, _filled(args, servers), rule, said)


@pytest.mark.parametrize("key", sorted(MORE_CASES), ids=lambda key: f"{' '.join(key[0])}: {key[1]}")
def test_every_other_empty_result_is_never_silent(cli, files, servers, key):
    if key in BEFORE:
        before = cli(*_filled(BEFORE[key], servers))
        assert before.exit_code == 0, before.stderr
    args, rule, said = MORE_CASES[key]
    _check(cli, files, key[0], _filled(args, servers), rule, said, written_before=key in BEFORE)


def test_every_command_that_calls_a_model_is_walked_with_nothing_to_do():
    calling = {path for path, (args, _, _) in CASES.items() if "--base-url" in args}
    assert calling == {("judge",), ("nuggets", "assign"), ("nuggets", "cite"), ("nuggets", "create"),
                       ("play", "privateshared")}
    assert calling <= {path for path, _ in MORE_CASES}


def shown_python_warnings(call):
    """``call()``'s result, and the Python warnings it let out that a user would see on standard error (Python's
    default filters hide deprecations and resource warnings; castregin's own are its ``castregin: warning:``
    lines, printed by the command, never let out)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for hidden in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.filterwarnings("ignore", category=hidden)
        result = call()
    return result, [f"{w.category.__name__}: {w.message}" for w in caught]


def _check(cli, files, path, args, rule, said, written_before=False):
    result, leaked = shown_python_warnings(lambda: cli(*args))
    # One line each, said by castregin: no traceback, and no Python warning (numpy's "invalid value") either.
    assert all(line.startswith("castregin: ") for line in result.stderr.splitlines()), result.stderr
    assert leaked == [], leaked
    assert KEY not in result.stderr + result.stdout
    if rule == ERROR:
        assert result.exit_code == 1, (path, result.stderr)
        *before, last = result.stderr.splitlines()
        assert last.startswith("castregin: error: ") and said in last, result.stderr
        assert all(line.startswith("castregin: warning: ") for line in before), result.stderr  # convert's
        assert result.stdout == ""
        if path in NOT_WRITTEN and not written_before:
            assert not (files / NOT_WRITTEN[path]).exists()
    elif rule == WARNING:
        assert result.exit_code == 0, (path, result.stderr)
        shown = [line for line in result.stderr.splitlines() if line.startswith("castregin: warning: ")]
        assert any(said in line for line in shown), result.stderr
    else:
        assert rule == NOTE and result.exit_code == 0, (path, result.stderr)
        assert any(line.startswith(said) for line in result.stderr.splitlines()), result.stderr


def test_aggregate_says_which_output_is_empty_when_others_are_not(cli, files):
    # One criterion without a label, and the filtered qrels of the other without a turn: written, each named.
    (files / "two.csv").write_text("worker_id,turn_id,item_id,relevance,novelty\nW1,1_1,Q1,1,\nW2,1_1,Q1,1,\n")
    result = cli("aggregate", "two.csv", "--criteria", "relevance,novelty", "--prefix", "", "--out-dir", "agg")
    assert result.exit_code == 0, result.stderr
    shown = [line for line in result.stderr.splitlines() if line.startswith("castregin: warning: ")]
    assert shown == [
        ("castregin: warning: criterion relevance: no turn has a label >= 2 (--min-label); relevance_filtered.qrel "
         "is empty"),
        ("castregin: warning: criterion novelty: no label is left (its cells are empty, or the gold filter removed "
         "them); novelty.qrel is empty")]
    assert (files / "agg" / "relevance.qrel").read_text() == "1_1 0 Q1 1\n"
    assert (files / "agg" / "novelty.qrel").read_text() == ""
