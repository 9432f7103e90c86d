"""``castregin nuggets create`` against a local chat-completions server with its own rules (nugget_server.py), and
against castorini/nuggetizer 0.0.5's own ``create`` on the same server.

The expected nuggets are the server's rules applied here to the passages themselves (each passage's first
sentence joins the list, cut to "at most N"; a nugget sharing a word with the query is vital), in nuggetizer's
procedure (windows of passages, then windows of nuggets, vital first, cut); nuggetizer run on the same requests
makes the same calls, byte for byte, and writes the same nuggets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from model_outputs import only_the_cache, outputs, stopped_by_sigterm

from castregin.data import Qrels
from castregin.formats.passages import Passage
from castregin.nuggets.create import creation_requests

from .nugget_server import NuggetServer, creation_rule, importance_rule, serve_nuggets

KEY = "sk-test-create-SECRET"
QUERIES = {"r1": "How is honey made?", "r2": "What causes ocean tides on Earth?"}
PASSAGES = {
    **{f"b{k}": text for k, text in enumerate([
        "Bees collect nectar from flowers. They store it in a honey stomach",
        "Enzymes in the bee break nectar sugars down. This starts the change",
        "Bees deposit nectar into wax cells. The comb is built from wax",
        "Fanning wings evaporate water from the nectar. Honey thickens",
        "Honey is capped with wax when ready. Capped honey keeps for years",
        "A colony can make many kilograms of honey a year. Most is eaten in winter",
        "Beekeepers harvest surplus honey. They leave some for the bees",
        "Worker bees live about six weeks in summer. Winter bees live longer",
        "The queen lays up to two thousand eggs a day. Drones mate with queens",
        "Honey never spoils if sealed. Jars from ancient tombs were edible",
        "Flower nectar is mostly sucrose and water. Its sweetness attracts bees",
        "Bees dance to tell others where flowers are. The waggle dance encodes distance",
    ], start=1)},
    "o1": "The Moon's gravity pulls on the oceans. This makes a bulge of water",
    "o2": "The Sun also raises tides, about half as strongly. Spring tides come when they align",
    "o3": "Earth rotates under the bulges. So most coasts have two tides a day",
    "x1": "A passage about football that nobody judged relevant. Goals were scored",
}
# Grades: r1's twelve bee passages at 3, 2 and 1 (grade 1 is below nuggetizer's min_judgment of 2), r2's three;
# b13 is judged relevant but has no text.
QRELS = {"r1": {**{f"b{k}": 3 if k <= 4 else (2 if k <= 10 else 1) for k in range(1, 13)}, "b13": 2},
         "r2": {"o1": 2, "o2": 3, "o3": 2, "x1": 0}}
TOPICS = [{"number": 0, "title": "Bees", "turns": [
    {"turn_id": 1, "utterance": "Tell me about bees.", "response": "Bees live in colonies with a queen."},
    {"turn_id": 2, "utterance": "How do they make honey from nectar?"}]}]


def relevant(qid: str, min_grade: int = 2) -> list[str]:
    pairs = [(grade, docid) for docid, grade in QRELS[qid].items() if grade >= min_grade and docid in PASSAGES]
    # Most relevant first, then by id (b2 before b10).
    return [docid for grade, docid in sorted(pairs, key=lambda p: (-p[0], len(p[1]), p[1]))]


def expected_nuggets(query: str, docids: list[str], window: int = 5, most: int = 8,
                     scoring_query: str | None = None) -> list[dict]:
    """nuggetizer's procedure with the server's rules, from the passages themselves."""
    texts: list[str] = []
    for start in range(0, len(docids), window):
        texts = creation_rule(texts, [PASSAGES[d] for d in docids[start:start + window]], most)
    importances = [importance_rule(text, scoring_query or query) for text in texts]
    order = [i for i in range(len(texts)) if importances[i] == "vital"] + \
            [i for i in range(len(texts)) if importances[i] != "vital"]
    return [{"text": texts[i], "importance": importances[i]} for i in order[:most]]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    tmp_path = tmp_path_factory.mktemp("inputs")
    (tmp_path / "qrels.txt").write_text("".join(f"{qid} 0 {docid} {grade}\n" for qid, items in QRELS.items()
                                                for docid, grade in items.items()))
    (tmp_path / "passages.jsonl").write_text("".join(json.dumps({"docid": d, "title": "T", "segment": t}) + "\n"
                                                     for d, t in PASSAGES.items()))
    (tmp_path / "queries.tsv").write_text("".join(f"{qid}\t{text}\n" for qid, text in QUERIES.items()))
    (tmp_path / "topics.json").write_text(json.dumps(TOPICS))
    return {name: tmp_path / file for name, file in (("qrels", "qrels.txt"), ("passages", "passages.jsonl"),
                                                      ("queries", "queries.tsv"), ("topics", "topics.json"))}


def create_args(inputs, server, out, *extra) -> list[str]:
    return ["nuggets", "create", "--qrels", str(inputs["qrels"]), "--passages", str(inputs["passages"]),
            "--queries", str(inputs["queries"]), "--model", "rule-1", "--base-url", server.base_url, "--out-dir",
            str(out), "--api-key-env", "CASTREGIN_TEST_KEY", "--retry-wait", "0.01", "--timeout", "5",
            "--window", "5", "--max-nuggets", "8", *extra]


def created(out: Path) -> dict[str, dict]:
    return {r["qid"]: r for r in map(json.loads, (out / "nuggets.jsonl").read_text().splitlines())}



@pytest.fixture(scope="module")
def reference(inputs, tmp_path_factory) -> dict[str, str]:
    from click.testing import CliRunner

    from castregin.cli import main

    running = serve_nuggets(faults=False)
    out = tmp_path_factory.mktemp("reference") / "out"
    result = CliRunner().invoke(main, create_args(inputs, running, out), env={"CASTREGIN_TEST_KEY": KEY},
                                catch_exceptions=False)
    running.shutdown()
    assert result.exit_code == 0, result.stderr
    got = created(out)
    assert {qid: r["nuggets"] for qid, r in got.items()} == {
        qid: expected_nuggets(QUERIES[qid], relevant(qid)) for qid in QUERIES}
    return outputs(out)


def test_nuggets_follow_the_servers_rules_in_nuggetizers_procedure(cli, inputs, tmp_path, monkeypatch):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", KEY)
    server = serve_nuggets(faults=False)
    try:
        result = cli(*create_args(inputs, server, tmp_path / "out"))
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.stderr
    got = created(tmp_path / "out")
    assert list(got) == ["r1", "r2"]
    assert got["r1"] == {"query": QUERIES["r1"], "qid": "r1",
                         "nuggets": expected_nuggets(QUERIES["r1"], relevant("r1"))}
    # r1: ten passages of grade 2 or more (b11, b12 are below, b13 has no text) in two windows of five: the list
    # reaches the cut of 8 in the second; eight nuggets in two scoring windows. r2: one window each.
    assert relevant("r1") == ["b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10"]
    assert len(got["r1"]["nuggets"]) == 8 and {n["importance"] for n in got["r1"]["nuggets"]} == {"vital", "okay"}
    assert [n["importance"] for n in got["r1"]["nuggets"]] == sorted(
        (n["importance"] for n in got["r1"]["nuggets"]), key=lambda i: i != "vital")
    log = json.loads((tmp_path / "out" / "run_log.json").read_text())
    assert log["calls"] == log["answered"] == 2 + 2 + 1 + 1 and log["complete"]
    assert log["turns_written"] == 2 and log["passages"] == 13 and log["nuggets"] == 8 + 3
    assert "1 relevant passage(s) have no text among the passages and are left out" in result.stderr
    # The passages are in the prompt as nuggetizer numbers them, their text alone (no title).
    first = next(b for b in server.bodies if PASSAGES["b1"] in b["messages"][1]["content"])["messages"]
    assert first[0]["content"].startswith("You are NuggetizeLLM")
    assert f"Context:\n[1] {PASSAGES['b1']}\n[2] {PASSAGES['b2']}\n" in first[1]["content"]
    assert "Initial Nugget List: []\nInitial Nugget List Length: 0" in first[1]["content"]
    # The output is a nuggets file nuggets assign reads.
    from castregin.formats.nuggets import read_nuggets

    assert [t.qid for t in read_nuggets(tmp_path / "out" / "nuggets.jsonl")] == ["r1", "r2"]


def test_nuggetizer_creates_the_same_nuggets_from_the_same_calls(cli, inputs, tmp_path, monkeypatch):
    import tiktoken
    from judging.chat_server import prompt_key
    from nuggetizer.core.types import Document, Query, Request
    from nuggetizer.models.nuggetizer import Nuggetizer

    class Words:
        def encode(self, text):
            return text.split()

    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: Words())
    monkeypatch.setenv("CASTREGIN_TEST_KEY", KEY)
    server = serve_nuggets(faults=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-nuggetizer")
    try:
        result = cli(*create_args(inputs, server, tmp_path / "out"))
        assert result.exit_code == 0, result.stderr
        ours = [prompt_key(body) for body in server.bodies]
        server.bodies.clear()
        oracle = Nuggetizer(model="rule-1", window_size=5, max_nuggets=8)
        theirs = {}
        for qid, query in QUERIES.items():
            request = Request(Query(qid, query), [Document(d, PASSAGES[d]) for d in relevant(qid)])
            theirs[qid] = [{"text": n.text, "importance": n.importance} for n in oracle.create(request)]
        asked = [prompt_key(body) for body in server.bodies]
    finally:
        server.shutdown()
    assert {qid: r["nuggets"] for qid, r in created(tmp_path / "out").items()} == theirs
    # The same requests, byte for byte; castregin's turns run side by side, so compare them as sets.
    assert sorted(asked) == sorted(ours) and len(ours) == 6


def test_topics_give_the_query_and_the_conversation(cli, inputs, tmp_path, monkeypatch):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", KEY)
    qrels = tmp_path / "ikat.qrels"
    qrels.write_text("0_2 0 b1 3\n0_2 0 b4 2\n0_2 0 b10 2\n")
    server = serve_nuggets(faults=False)
    try:
        result = cli("nuggets", "create", "--qrels", qrels, "--passages", inputs["passages"], "--topics",
                     inputs["topics"], "--model", "rule-1", "--base-url", server.base_url, "--out-dir", tmp_path / "o")
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.stderr
    conversation = ("user: Tell me about bees.\nsystem: Bees live in colonies with a queen.\n"
                    "user: How do they make honey from nectar?")
    got = created(tmp_path / "o")["0_2"]
    assert got["query"] == "How do they make honey from nectar?"
    assert got["nuggets"] == expected_nuggets(got["query"], ["b1", "b4", "b10"], window=10, most=30,
                                              scoring_query=conversation)
    assert f"Search Query: {conversation}\nContext:" in server.bodies[0]["messages"][1]["content"]


def test_a_sigterm_resumes_asking_nothing_twice(cli, inputs, tmp_path, reference):
    slow = serve_nuggets(faults=False, delay=0.3)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "castregin", *create_args(inputs, slow, out)]
    env = {**os.environ, "CASTREGIN_TEST_KEY": KEY}
    try:
        stopped_by_sigterm(command, env, slow, 2)
        assert only_the_cache(out)
        assert 2 <= sum(slow.answered.values()) < 6
        slow.delay = 0
        rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    finally:
        slow.shutdown()
    assert rerun.returncode == 0, rerun.stderr
    assert outputs(out) == reference
    assert sum(slow.answered.values()) == 6 and max(slow.answered.values()) == 1


def test_a_budget_and_faults_give_the_outputs_of_an_undisturbed_run(cli, inputs, tmp_path, reference, monkeypatch):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", KEY)
    faulty = serve_nuggets(faults=True, slow=4)
    out = tmp_path / "out"
    try:
        # Three requests (retries count) complete no turn: said in one line, nothing written but the cache.
        first = cli(*create_args(inputs, faulty, out, "--max-requests", "3", "--concurrency", "1", "--timeout", "1.5"))
        assert first.exit_code == 1, first.stderr
        assert "castregin: error: no turn is complete yet (" in first.stderr
        assert "the budget of --max-requests is spent); run the same command again to go on" in first.stderr
        assert only_the_cache(out)
        again = cli(*create_args(inputs, faulty, out, "--timeout", "1.5"))
    finally:
        faulty.shutdown()
    assert again.exit_code == 0, again.stderr
    assert outputs(out) == reference
    assert max(faulty.answered.values()) == 1
    for path in out.rglob("*"):
        assert b"SECRET" not in path.read_bytes(), path


def create_against(server_class, cli, inputs, out, *extra):
    """``nuggets create`` (without a key) against a fault-free server of ``server_class``."""
    from judging.chat_server import serve

    server = serve(server_class, faults=False)
    try:
        return cli("nuggets", "create", "--qrels", inputs["qrels"], "--passages", inputs["passages"],
                   "--queries", inputs["queries"], "--model", "m", "--base-url", server.base_url, "--out-dir", out,
                   *extra)
    finally:
        server.shutdown()


def test_unreadable_answers_keep_the_list_and_make_nuggets_okay(cli, inputs, tmp_path):
    class Odd(NuggetServer):
        def _create(self, prompt):
            return "I would rather not list them." if PASSAGES["o1"] in prompt else super()._create(prompt)

        def _score(self, prompt):
            return "vital, okay"

    result = create_against(Odd, cli, inputs, tmp_path / "out", "--window", "1", "--max-nuggets", "4")
    assert result.exit_code == 0, result.stderr
    got = created(tmp_path / "out")
    # r2's passages one at a time, o2, o1, o3: o1's answer cannot be read, so the list stays as o2 left it.
    # No scoring answer reads: every nugget is okay, in creation order.
    assert relevant("r2") == ["o2", "o1", "o3"]
    assert got["r2"]["nuggets"] == [{"text": t, "importance": "okay"} for t in
                                    creation_rule([], [PASSAGES["o2"], PASSAGES["o3"]], 4)]
    log = json.loads((tmp_path / "out" / "run_log.json").read_text())
    assert log["unparseable"] == {"create": 1, "score": 4 + 2}
    assert "7 answer(s) could not be read" in result.stderr


def test_a_turn_left_without_nuggets_is_said_and_written(cli, inputs, tmp_path):
    class Mute(NuggetServer):
        def _create(self, prompt):
            # r2's every creation answer unreadable; r1's as the rules say.
            return "I would rather not list them." if PASSAGES["o2"] in prompt or PASSAGES["o1"] in prompt \
                or PASSAGES["o3"] in prompt else super()._create(prompt)

    result = create_against(Mute, cli, inputs, tmp_path / "out", "--window", "5", "--max-nuggets", "8")
    assert result.exit_code == 0, result.stderr
    got = created(tmp_path / "out")
    assert got["r2"]["nuggets"] == [] and len(got["r1"]["nuggets"]) > 0
    assert "castregin: warning: 1 turn(s) got no nugget" in result.stderr
    assert ": r2; they are written without nuggets and score 0" in result.stderr
    assert json.loads((tmp_path / "out" / "run_log.json").read_text())["turns_without_nuggets"] == 1


def test_creation_requests_order_and_filter_the_passages():
    qrels = Qrels({"q1": {"a10": 2, "a2": 2, "a1": 3, "a3": 1, "a4": 2}, "q2": {"z": 1}})
    passages = {d: Passage(f"text {d}") for d in ("a1", "a2", "a3", "a10")}
    with pytest.warns(Warning, match="1 relevant passage"):
        requests = creation_requests(qrels, passages, {"q1": "query one", "q2": "query two"})
    assert [(r.qid, [d for d, _ in r.passages]) for r in requests] == [("q1", ["a1", "a2", "a10"])]
    with pytest.raises(Exception, match="no turn has a passage of grade 4"):
        creation_requests(qrels, passages, {"q1": "x"}, min_grade=4)


def test_usage_and_input_errors(cli, inputs, tmp_path):
    server = serve_nuggets(faults=False)
    try:
        no_query = cli("nuggets", "create", "--qrels", inputs["qrels"], "--passages", inputs["passages"],
                       "--model", "m", "--base-url", server.base_url, "--out-dir", tmp_path / "a")
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"docid": "b1", "segment": 5}\n')
        bad_passages = cli("nuggets", "create", "--qrels", inputs["qrels"], "--passages", bad, "--queries",
                           inputs["queries"], "--model", "m", "--base-url", server.base_url,
                           "--out-dir", tmp_path / "b")
    finally:
        server.shutdown()
    assert no_query.exit_code == 2 and "give --queries or --topics" in no_query.stderr
    assert bad_passages.exit_code == 1
    assert bad_passages.stderr.strip().endswith(f"{bad}:1: segment: expected a string, got 5")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists() and server.requests == 0
