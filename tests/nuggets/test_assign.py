"""``castregin nuggets assign`` against a real HTTP server on 127.0.0.1 that speaks chat completions
(nugget_server.py), and against castorini/nuggetizer itself.

The expected labels come from the server's rule computed here from the nuggets and answers themselves (which of
a nugget's words the answer has), never from castregin's output. The fault tests compare every output of a
disturbed run (429 with Retry-After, 500s, timeouts, malformed and truncated JSON, a real SIGTERM to a
subprocess, a request budget) with an undisturbed run's, and count at the server that nothing answered is asked
again. nuggetizer 0.0.5 (installed as the oracle) assigns the same nuggets to the same answers against the same
server: its prompts are castregin's byte for byte, and its reading of the answers gives castregin's labels.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from model_outputs import only_the_cache, outputs, stopped_by_sigterm

from castregin.nuggets.llm import parse_labels, parse_list

from .nugget_server import serve_nuggets, support_rule

KEY = "sk-test-0123456789abcdef-SECRET"

NUGGETS = [
    {"qid": "t1", "query": "How does photosynthesis work in plants?", "nuggets": [
        {"text": "Photosynthesis converts light energy into chemical energy", "importance": "vital"},
        {"text": "Chlorophyll absorbs sunlight", "importance": "vital"},
        {"text": "Plants release oxygen as a byproduct", "importance": "vital"},
        {"text": "Carbon dioxide enters through stomata", "importance": "okay"},
        {"text": "Glucose stores the energy", "importance": "okay"},
        {"text": "The Calvin cycle fixes carbon", "importance": "okay"},
        {"text": "Light reactions happen in thylakoid membranes", "importance": "okay"},
        {"text": "Water molecules are split during photolysis", "importance": "okay"},
        {"text": "It's the basis of most food chains", "importance": "okay"},
        {"text": "Rubisco is the most abundant enzyme", "importance": "okay"},
        {"text": "C4 plants concentrate carbon dioxide", "importance": "okay"},
        {"text": "Leaves look green because chlorophyll reflects green light", "importance": "vital"}]},
    {"qid": "t2", "query": "Why do volcanoes erupt?", "nuggets": [
        {"text": "Magma rises because it is less dense than rock", "importance": "vital"},
        {"text": "Dissolved gases build pressure", "importance": "vital"},
        {"text": "Tectonic plates move apart or collide", "importance": "okay"},
        {"text": "Volcanic ash can travel thousands of kilometres", "importance": "okay"}]},
    {"qid": "t3", "query": "What is the capital of Australia?", "nuggets": [
        {"text": "Canberra is the capital", "importance": "vital"},
        {"text": "Sydney is the largest city", "importance": "okay"},
        {"text": "Canberra was purpose-built as a compromise", "importance": "okay"}]},
    {"qid": "0_2", "query": "Oh, do I need a visa?", "nuggets": [
        {"text": "Most travellers need a visa for Egypt", "importance": "vital"},
        {"text": "A visa can be bought on arrival at Cairo airport", "importance": "vital"},
        {"text": "The e-visa portal sells visas online", "importance": "okay"}]},
]


def rag(run: str, topic: str, *sentences: str) -> dict:
    return {"run_id": run, "topic_id": topic, "topic": "", "references": ["d1", "d2"],
            "answer": [{"text": text, "citations": [0]} for text in sentences]}


ANSWERS = [
    rag("alpha", "t1", "Photosynthesis converts light energy into chemical energy stored as glucose.",
        "Chlorophyll in the leaves absorbs sunlight, and plants release oxygen.",
        "The Calvin cycle fixes carbon dioxide that enters through stomata."),
    rag("alpha", "t2", "Magma rises because it is less dense than the surrounding rock.",
        "Pressure from gases makes volcanoes erupt."),
    rag("alpha", "t3", "Canberra is the capital of Australia; Sydney is the largest city."),
    rag("alpha", "t9", "An answer to a turn without nuggets."),
    rag("beta", "t1", "Plants use sunlight.", "Leaves are green because chlorophyll reflects green light."),
    rag("beta", "t2", "Tectonic plates collide and volcanoes erupt with ash."),
    rag("beta", "t3"),
]
IKAT_RUN = {"run_name": "ikat-run", "run_type": "automatic", "turns": [
    {"turn_id": "0_2", "responses": [{"rank": 1, "text": "Yes: most travellers need a visa for Egypt, bought on "
                                      "arrival at Cairo airport.",
                                      "passage_provenance": [{"id": "p1", "score": 1.0, "used": True}]}]}]}
TOPICS = [{"number": 0, "title": "Traveling to Egypt", "turns": [
    {"turn_id": 1, "utterance": "I'm thinking about traveling to Egypt.", "response": "Egypt is warm in winter."},
    {"turn_id": 2, "utterance": "Oh, do I need a visa?", "response": "Most travellers do."}]}]


def answer_text(answer: dict) -> str:
    return " ".join(sentence["text"] for sentence in answer["answer"])


def expected_assignments(answers=ANSWERS, ikat: bool = True) -> dict[tuple[str, str], list[str]]:
    """The server's rule from the inputs: (run, qid) -> one label per nugget; an empty answer supports nothing."""
    nuggets = {turn["qid"]: [n["text"] for n in turn["nuggets"]] for turn in NUGGETS}
    expected = {}
    pairs = [(a["run_id"], a["topic_id"], answer_text(a)) for a in answers]
    if ikat:
        pairs.append(("ikat-run", "0_2", IKAT_RUN["turns"][0]["responses"][0]["text"]))
    for run, qid, text in pairs:
        if qid in nuggets:
            expected[run, qid] = [support_rule(n, text) if text.strip() else "not_support" for n in nuggets[qid]]
    return expected


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    tmp_path = tmp_path_factory.mktemp("inputs")
    (tmp_path / "nuggets.jsonl").write_text("".join(json.dumps(t) + "\n" for t in NUGGETS))
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ANSWERS))
    (tmp_path / "ikat.json").write_text(json.dumps(IKAT_RUN))
    (tmp_path / "topics.json").write_text(json.dumps(TOPICS))
    return {name: tmp_path / f"{name}.{ext}" for name, ext in
            (("nuggets", "jsonl"), ("answers", "jsonl"), ("ikat", "json"), ("topics", "json"))}


@pytest.fixture
def keyed(monkeypatch):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", KEY)


def every_fault(server):
    """The server with a fault on the first request of every prompt: 429 with Retry-After, 500, a slow answer,
    malformed JSON, truncated JSON, a dropped connection, in turn, in the order the prompts first come."""
    from judging.chat_server import FAULTS

    seen: dict[str, int] = {}

    def fault_for(key: str, attempt: int) -> str | None:
        with server.lock:
            index = seen.setdefault(key, len(seen))
        return FAULTS[index % len(FAULTS)] if attempt == 0 else None

    server.fault_for = fault_for
    return server


def assign_args(inputs, server, out, *extra) -> list[str]:
    return ["nuggets", "assign", str(inputs["nuggets"]), str(inputs["answers"]), str(inputs["ikat"]),
            "--model", "rule-1", "--base-url", server.base_url, "--out-dir", str(out), "--api-key-env",
            "CASTREGIN_TEST_KEY", "--retry-wait", "0.01", "--timeout", "5", "--window", "5", *extra]


def assigned(out: Path) -> dict[tuple[str, str], list[str]]:
    lines = [json.loads(line) for line in (out / "assignments.jsonl").read_text().splitlines()]
    return {(r["run_id"], r["qid"]): [n["assignment"] for n in r["nuggets"]] for r in lines}



@pytest.fixture(scope="module")
def reference(inputs, tmp_path_factory) -> dict[str, str]:
    """The outputs of an undisturbed run, its labels checked against the server's rule."""
    from click.testing import CliRunner

    from castregin.cli import main

    running = serve_nuggets(faults=False)
    out = tmp_path_factory.mktemp("reference") / "out"
    result = CliRunner().invoke(main, assign_args(inputs, running, out), env={"CASTREGIN_TEST_KEY": KEY},
                                catch_exceptions=False)
    running.shutdown()
    assert result.exit_code == 0, result.stderr
    assert assigned(out) == expected_assignments()
    return outputs(out)


def test_assignments_follow_the_servers_rule(cli, inputs, tmp_path, keyed):
    server = serve_nuggets(faults=False)
    try:
        result = cli(*assign_args(inputs, server, tmp_path / "out", "--price-in", "2", "--price-out", "10"))
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "out"
    got = assigned(out)
    assert got == expected_assignments()
    # Every label of the three grades is there, and the empty answer (beta's t3) supports nothing.
    assert {label for labels in got.values() for label in labels} == {"support", "partial_support", "not_support"}
    assert got["beta", "t3"] == ["not_support"] * 3
    # Records as nuggetizer writes them: the query, the answer's sentences joined by a space, the importances.
    first = json.loads((out / "assignments.jsonl").read_text().splitlines()[0])
    assert list(first) == ["query", "qid", "answer_text", "run_id", "nuggets"]
    assert first["answer_text"] == answer_text(ANSWERS[0])
    assert first["nuggets"][0] == {"text": NUGGETS[0]["nuggets"][0]["text"], "importance": "vital",
                                   "assignment": "support"}
    log = json.loads((out / "run_log.json").read_text())
    # t1 in windows of 5, 5, 2 (two answers), t2 and t3 one window each (alpha's t3; beta's is empty), 0_2 one.
    assert log["calls"] == 2 * 3 + 2 + 1 + 1 == log["answered"] and log["complete"]
    assert log["empty_answers"] == 1 and log["unparseable"] == 0
    assert log["answers_without_nuggets"] == {"count": 1, "first": ["alpha:t9"]}
    assert log["tokens"] == {"prompt": server.prompt_tokens, "completion": server.completion_tokens}
    assert log["cost"]["usd"] == pytest.approx((2 * server.prompt_tokens + 10 * server.completion_tokens) / 1e6)
    assert log["prompt"]["assign"]["name"] == "nuggetizer" and log["window"] == 5
    assert "1 answer(s) are to turns without nuggets and are left out: alpha:t9" in result.stderr
    # The nugget and answer texts are in the prompt as they are (the nuggets in nuggetizer's Python list).
    body = next(b for b in server.bodies if "Canberra" in b["messages"][1]["content"])
    assert body["messages"][0]["content"].startswith("You are NuggetizeAssignerLLM")
    assert f"Passage: {answer_text(ANSWERS[2])}\n" in body["messages"][1]["content"]
    assert str([n["text"] for n in NUGGETS[2]["nuggets"]]) in body["messages"][1]["content"]
    assert "It's the basis of most food chains" in "".join(b["messages"][1]["content"] for b in server.bodies)
    # nuggets score reads the output.
    scored = cli("nuggets", "score", out / "assignments.jsonl", "--format", "tsv")
    assert scored.exit_code == 0, scored.stderr


def test_faults_are_retried_and_the_outputs_are_those_of_an_undisturbed_run(cli, inputs, tmp_path, reference,
                                                                            keyed):
    faulty = every_fault(serve_nuggets(slow=4))
    try:
        result = cli(*assign_args(inputs, faulty, tmp_path / "out", "--timeout", "1.5"))
    finally:
        faulty.shutdown()
    assert result.exit_code == 0, result.stderr
    assert outputs(tmp_path / "out") == reference
    log = json.loads((tmp_path / "out" / "run_log.json").read_text())
    # Every kind of fault met, on the first request of every call, each retried to an answer (a loaded machine
    # may add a timeout of its own).
    failures = log["this_run"]["failures"]
    expected = {"connection": 1, "malformed_response": 3, "rate_limited": 2, "server_error": 2, "timeout": 2}
    assert set(failures) == set(expected) and all(failures[kind] >= n for kind, n in expected.items()), failures
    assert log["this_run"]["requests"] >= 2 * log["calls"]


def test_a_sigterm_resumes_asking_nothing_twice(cli, inputs, tmp_path, reference, keyed):
    slow = serve_nuggets(faults=False, delay=0.1)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "castregin", *assign_args(inputs, slow, out, "--concurrency", "2")]
    env = {**os.environ, "CASTREGIN_TEST_KEY": KEY}
    try:
        stopped_by_sigterm(command, env, slow, 4)
        assert only_the_cache(out)
        first = sum(slow.answered.values())
        assert 4 <= first < 10
        slow.delay = 0
        rerun = cli(*command[3:])
    finally:
        slow.shutdown()
    assert rerun.exit_code == 0, rerun.stderr
    assert outputs(out) == reference
    # The calls in flight were let finish and stored: no answered call is asked again.
    assert sum(slow.answered.values()) == 10 and max(slow.answered.values()) == 1
    log = json.loads((out / "run_log.json").read_text())
    assert log["this_run"]["from_cache"] == first and log["this_run"]["new_answers"] == 10 - first


def test_a_budget_writes_what_is_complete_and_the_next_run_goes_on(cli, inputs, tmp_path, reference, keyed):
    server = serve_nuggets(faults=False)
    out = tmp_path / "out"
    try:
        first = cli(*assign_args(inputs, server, out, "--max-requests", "4", "--concurrency", "1"))
        assert first.exit_code == 0, first.stderr
        partial = assigned(out)
        again = cli(*assign_args(inputs, server, out))
    finally:
        server.shutdown()
    assert "the budget of --max-requests is spent" in first.stderr
    log = json.loads((out / "run_log.json").read_text())
    expected = expected_assignments()
    # What the budget allowed is complete and right (answers whose every window was answered), the rest waits.
    assert partial and all(expected[key] == labels for key, labels in partial.items()) and len(partial) < len(expected)
    assert again.exit_code == 0, again.stderr
    assert outputs(out) == reference
    assert max(server.answered.values()) == 1 and log["this_run"]["from_cache"] == 4


def test_the_api_key_is_in_no_file_written(cli, inputs, tmp_path, keyed):
    faulty = every_fault(serve_nuggets(slow=4))
    out = tmp_path / "out"
    try:
        result = cli(*assign_args(inputs, faulty, out, "--timeout", "1.5"))
    finally:
        faulty.shutdown()
    assert result.exit_code == 0, result.stderr
    assert set(faulty.authorizations) == {f"Bearer {KEY}"}
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"cache.sqlite", "assignments.jsonl", "run_log.json"}
    for path in written:
        assert b"SECRET" not in path.read_bytes(), path
    assert "SECRET" not in result.stderr + result.stdout
    # A server that echoes the request's credentials in a 401: one line, the key as ***, nothing left behind.
    echoing = serve_nuggets(faults=False)
    echoing.fault_for = lambda key, attempt: "echo_key"
    try:
        refused = cli(*assign_args(inputs, echoing, tmp_path / "refused"))
    finally:
        echoing.shutdown()
    assert refused.exit_code == 1 and echoing.requests == 1
    assert "HTTP 401" in refused.stderr and "***" in refused.stderr and "SECRET" not in refused.stderr
    assert not (tmp_path / "refused").exists()


def test_unreadable_answers_make_their_windows_failed(cli, inputs, tmp_path, keyed):
    odd = [rag("gamma", "t2", "RAMBLE about magma and gases."), rag("gamma", "t3", "SHORT: Canberra is the capital."),
           rag("gamma", "0_2", "REFUSE visa questions.")]
    answers = tmp_path / "odd.jsonl"
    answers.write_text("".join(json.dumps(a) + "\n" for a in odd))
    server = serve_nuggets(faults=False)
    try:
        result = cli("nuggets", "assign", inputs["nuggets"], answers, "--model", "rule-1", "--base-url",
                     server.base_url, "--out-dir", tmp_path / "out", "--window", "2")
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.stderr
    got = assigned(tmp_path / "out")
    # t2's two windows: both RAMBLE; t3: the first window (2 nuggets) is answered one label short, the second
    # (1 nugget) too, which leaves an empty list: unparseable; 0_2: refused.
    assert got == {("gamma", "t2"): ["failed"] * 4, ("gamma", "t3"): ["failed"] * 3, ("gamma", "0_2"): ["failed"] * 3}
    log = json.loads((tmp_path / "out" / "run_log.json").read_text())
    assert log["unparseable"] == 2 + 2 + 2 and log["nuggets_failed"] == 10 and log["refusals"] == 2
    assert "6 answer(s) could not be read (2 refusals)" in result.stderr
    # nuggets score refuses "failed", or counts it as not_support when told to (nuggetizer's metrics).
    refused = cli("nuggets", "score", tmp_path / "out" / "assignments.jsonl")
    assert refused.exit_code == 1 and '"failed"' in refused.stderr
    counted = cli("nuggets", "score", tmp_path / "out" / "assignments.jsonl", "--failed", "not_support")
    assert counted.exit_code == 0, counted.stderr


def test_the_2grade_prompt_and_a_users_template(cli, inputs, tmp_path, keyed):
    template = tmp_path / "mine.txt"
    template.write_text("Query: {{ query }}\nPassage: {{ answer }}\nNugget List: {{ nugget_list }}\nOnly return "
                        "one JSON list of {{ num_nuggets }} labels, {% for n in nuggets %}{{ loop.index }}. "
                        "{{ n }} {% endfor %}")
    server = serve_nuggets(faults=False)
    try:
        two = cli(*assign_args(inputs, server, tmp_path / "two", "--prompt", "nuggetizer-2grade"))
        mine = cli(*assign_args(inputs, server, tmp_path / "mine", "--prompt", template))
    finally:
        server.shutdown()
    assert two.exit_code == 0, two.stderr
    assert mine.exit_code == 0, mine.stderr
    expected = expected_assignments()
    # The 2-grade prompt takes support and not_support only: a window the rule answers with a partial support
    # is unreadable under it.
    got = assigned(tmp_path / "two")
    for key, labels in expected.items():
        windows = [labels[i:i + 5] for i in range(0, len(labels), 5)]
        assert got[key] == [label for w in windows for label in
                            (["failed"] * len(w) if "partial_support" in w else w)], key
    assert assigned(tmp_path / "mine") == expected
    log = json.loads((tmp_path / "mine" / "run_log.json").read_text())
    assert log["prompt"]["assign"]["name"].startswith("mine-") and log["prompt"]["assign"]["source"] == str(template)
    user_bodies = [b for b in server.bodies if b["messages"][0]["content"].startswith("Query: ")]
    assert user_bodies and all(len(b["messages"]) == 1 for b in user_bodies)


def test_topics_put_the_conversation_into_the_query(cli, inputs, tmp_path, keyed):
    server = serve_nuggets(faults=False)
    try:
        result = cli(*assign_args(inputs, server, tmp_path / "out", "--topics", inputs["topics"]))
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.stderr
    assert ("castregin: warning: 3 turn(s) are not in the topics; their prompts hold the nuggets' query alone: "
            "t1, t2, t3") in result.stderr
    assert assigned(tmp_path / "out") == expected_assignments()
    visa = [b for b in server.bodies if "visa" in b["messages"][1]["content"]]
    assert len(visa) == 1
    assert ("Search Query: user: I'm thinking about traveling to Egypt.\nsystem: Egypt is warm in winter.\n"
            "user: Oh, do I need a visa?\nPassage: ") in visa[0]["messages"][1]["content"]


def test_bad_input_is_one_line_and_nothing_is_written(cli, inputs, tmp_path, keyed):
    server = serve_nuggets(faults=False)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"qid": "t1", "nuggets": [{"text": "x", "importance": "crucial"}]}) + "\n")
    try:
        result = cli("nuggets", "assign", bad, inputs["answers"], "--model", "m", "--base-url", server.base_url,
                     "--out-dir", tmp_path / "out")
        missing_template = cli(*assign_args(inputs, server, tmp_path / "out2", "--prompt", tmp_path / "none.j2"))
    finally:
        server.shutdown()
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1].startswith(f"castregin: error: {bad}:1: nuggets[0].importance")
    assert missing_template.exit_code == 1 and "none.j2" in missing_template.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "out2").exists()
    assert server.requests == 0


# --- nuggetizer, the oracle ---------------------------------------------------------------------------------------


@pytest.fixture
def nuggetizer_env(monkeypatch):
    """nuggetizer 0.0.5 talking to a local server: the openai SDK's base URL and key from the environment,
    tiktoken's encoding (which it downloads) replaced by a word count."""
    import tiktoken

    class Words:
        def encode(self, text):
            return text.split()

    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: Words())

    def point(server):
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-nuggetizer")

    return point


def test_nuggetizer_assigns_what_castregin_assigns_from_the_same_prompts(cli, inputs, tmp_path, keyed,
                                                                        nuggetizer_env):
    from judging.chat_server import prompt_key
    from nuggetizer.core.types import ScoredNugget
    from nuggetizer.models.nuggetizer import Nuggetizer

    server = serve_nuggets(faults=False, nuggetizer_forms=True)
    nuggetizer_env(server)
    try:
        result = cli(*assign_args(inputs, server, tmp_path / "out", "--window", "10"))
        assert result.exit_code == 0, result.stderr
        ours = {prompt_key(body) for body in server.bodies}
        server.bodies.clear()
        oracle = Nuggetizer(model="rule-1")  # assigner_window_size 10, 3 grades: its defaults
        theirs = {}
        nuggets = {turn["qid"]: turn for turn in NUGGETS}
        pairs = [(a["run_id"], a["topic_id"], answer_text(a)) for a in ANSWERS if a["topic_id"] in nuggets]
        pairs.append(("ikat-run", "0_2", IKAT_RUN["turns"][0]["responses"][0]["text"]))
        for run, qid, text in pairs:
            turn = nuggets[qid]
            scored = [ScoredNugget(text=n["text"], importance=n["importance"]) for n in turn["nuggets"]]
            theirs[run, qid] = [n.assignment for n in oracle.assign(turn["query"], text, scored)]
        asked = {prompt_key(body) for body in server.bodies}
    finally:
        server.shutdown()
    assert assigned(tmp_path / "out") == theirs
    # The same requests, byte for byte (messages and all): castregin's prompts are nuggetizer's.
    assert asked == ours and len(ours) == 2 * 2 + 2 + 1 + 1


@pytest.mark.parametrize("answer", [
    '["support", "not_support"]', "['support', 'not_support']", "```python\n['support', 'not_support']\n```",
    "['Support', 'NOT_SUPPORT']", '```\n["support", "not_support"]\n```', "['support','not_support']\n",
])
def test_castregin_reads_every_answer_nuggetizer_reads_alike(answer):
    """nuggetizer's reading (its code: fences removed, ast.literal_eval, lowercased) against castregin's."""
    import ast

    theirs = [label.lower() for label in ast.literal_eval(answer.replace("```python", "").replace("```", "").strip())]
    assert parse_labels(answer, 2, ("support", "partial_support", "not_support")) == theirs


@pytest.mark.parametrize(("answer", "labels"), [
    ("Both nuggets are there.\n[\"support\", \"support\"]", ["support", "support"]),
    ("**Labels**:\n['partial_support', 'not_support']  ", ["partial_support", "not_support"]),
    ('["support"]', None),  # one label short
    ('["support", "supported"]', None),  # no such label
    ('["support", 1]', None),
    ("support, not_support", None),
    ("", None),
    (None, None),
    ('["support", "not_support"]\nThat is my answer.', None),  # the list is not on the final line
    ("[" * 500 + "]" * 500, None),  # nested past the parser's limit: unreadable, no traceback
])
def test_a_list_of_labels_is_read_from_the_final_line_only(answer, labels):
    assert parse_labels(answer, 2, ("support", "partial_support", "not_support")) == labels


def test_parse_list_takes_nuggetizers_reading_first():
    # A list over several lines is read whole, as nuggetizer reads it.
    assert parse_list('[\n  "a",\n  "b"\n]') == ["a", "b"]
    assert parse_list("Not a list") is None
    # A Python escape a model may write ("\d") is read without a warning on standard error.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_list("['\\d+ digits']") == ["\\d+ digits"]
