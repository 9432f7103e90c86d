"""The new commands' inputs as a hostile tester writes them: one line, exit 1, never a traceback, nothing written.

Issue 34's catalogue (JSON 100,000 deep, lone surrogates, a directory, a FIFO) was met by the commands of parts
14-19; the commands that landed with its fixes (nuggets, play, sample_eval, pool --sample/--strategy/simulate,
analyze ppi) are walked here, each JSON input in turn. Found so: `nuggets assign`/`cite` answers nested 100,000
objects deep were a RecursionError traceback (the shape test read the document before the JSONL reader did), and
a lone surrogate escape (`"\\ud800"`) in an answer's or an assignment's text was read, then a UnicodeEncodeError
traceback when the outputs were written; every JSON reader now refuses it, naming its JSON path.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

GAME_DIR = Path(__file__).resolve().parents[1] / "data" / "privateshared" / "clembench"
REPO_DATA = Path(__file__).resolve().parents[2] / "data"
NOWHERE = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0"]


def _jsonl(*records) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


FILES = {
    "q.qrel": "t1 0 Q1 2\nt1 0 Q2 0\nt2 0 Q1 1\nt2 0 Q3 2\nt3 0 Q1 0\nt3 0 Q2 2\n",
    "h.qrel": "t1 0 Q1 2\nt1 0 Q2 0\nt2 0 Q1 1\nt2 0 Q3 2\n",
    "s.qrel": "t1 0 Q1 1 2\nt1 0 Q2 1 0\nt2 0 Q1 1 -1\nt2 0 Q3 1 2\n",
    "a.run": "t1 Q0 Q1 1 2 a\nt1 Q0 Q2 2 1 a\nt2 Q0 Q3 1 2 a\nt2 Q0 Q1 2 1 a\nt3 Q0 Q2 1 1 a\n",
    "b.run": "t1 Q0 Q2 1 2 b\nt1 Q0 Q1 2 1 b\nt2 Q0 Q1 1 2 b\nt3 Q0 Q1 1 1 b\n",
    "nuggets.jsonl": _jsonl({"qid": "t1", "query": "How does photosynthesis work?", "nuggets": [
        {"text": "Chlorophyll absorbs sunlight", "importance": "vital"}]}),
    "answers.jsonl": _jsonl({"run_id": "alpha", "topic_id": "t1", "topic": "", "references": ["d1"],
                             "answer": [{"text": "Chlorophyll absorbs sunlight.", "citations": [0]}]}),
    "ikat.json": json.dumps({"run_name": "ikat", "run_type": "automatic", "turns": [{"turn_id": "t1", "responses": [
        {"rank": 1, "text": "Chlorophyll absorbs sunlight.", "passage_provenance": [{"id": "d1", "score": 1.0}]}]}]}),
    "passages.jsonl": _jsonl({"docid": "d1", "text": "Chlorophyll absorbs sunlight in leaves."}),
    "passages.qrel": "t1 0 d1 3\n",
    "queries.jsonl": _jsonl({"qid": "t1", "query": "How does photosynthesis work?"}),
    "topics.json": json.dumps([{"number": 1, "turn": [{"number": "1-1", "participant": "User",
                                                       "utterance": "How do I bake bread?"}]}]),
    "assignments.jsonl": _jsonl({"qid": "t1", "query": "q", "run_id": "r", "answer_text": "a", "nuggets": [
        {"text": "n", "importance": "vital", "assignment": "support"}]}),
    "instances.json": (GAME_DIR / "in" / "instances.json").read_text(encoding="utf-8"),
}
#: Each new command: its arguments, and the JSON files among them (each made hostile in turn).
COMMANDS = {
    "nuggets score": (["nuggets", "score", "assignments.jsonl"], ["assignments.jsonl"]),
    "nuggets assign": (["nuggets", "assign", "nuggets.jsonl", "answers.jsonl", "ikat.json", "--topics", "topics.json",
                        *NOWHERE, "--out-dir", "out"], ["nuggets.jsonl", "answers.jsonl", "ikat.json", "topics.json"]),
    "nuggets create": (["nuggets", "create", "--qrels", "passages.qrel", "--passages", "passages.jsonl", "--queries",
                        "queries.jsonl", "--topics", "topics.json", *NOWHERE, "--out-dir", "out"],
                       ["passages.jsonl", "queries.jsonl", "topics.json"]),
    "nuggets cite": (["nuggets", "cite", "answers.jsonl", "--passages", "passages.jsonl", *NOWHERE, "--out-dir", "out"],
                     ["answers.jsonl", "passages.jsonl"]),
    "play privateshared": (["play", "privateshared", "--game-dir", str(GAME_DIR), "--instances", "instances.json",
                            *NOWHERE, "--out-dir", "out"], ["instances.json"]),
}


def _hostile(text: str) -> dict[str, str]:
    """A JSON (or JSONL) text made hostile, each way: nested 100,000 deep (arrays, objects), a lone surrogate
    escape in its first string value and in a key."""
    first_value = text.index('"', text.index(":"))
    return {"deep arrays": "[" * 100_000 + "\n", "deep objects": '{"a": ' * 100_000 + "1" + "}" * 100_000 + "\n",
            "lone surrogate in a value": text[:first_value + 1] + "\\ud800" + text[first_value + 1:],
            "lone surrogate in a key": text.replace('"', '"\\udc00', 1)}


CASES = [(command, name, how) for command, (_, names) in COMMANDS.items() for name in names
         for how in _hostile(FILES[name])]


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def _one_line_error(result) -> str:
    assert result.exit_code == 1, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("castregin: error: "), result.stderr
    return result.stderr


@pytest.mark.parametrize(("command", "name", "how"), CASES, ids=[" ".join(case) for case in CASES])
def test_hostile_json_is_one_line(cli, files, command, name, how):
    (files / name).write_text(_hostile(FILES[name])[how], encoding="utf-8")
    message = _one_line_error(cli(*COMMANDS[command][0]))
    assert name in message
    if how.startswith("lone surrogate"):
        assert "is a lone surrogate (\\u" in message and "which is no Unicode text" in message
    assert not (files / "out").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_directory_given_as_an_input_file_is_one_line(cli, files, command):
    name = COMMANDS[command][1][0]
    (files / name).unlink()
    (files / name).mkdir()
    assert name in _one_line_error(cli(*COMMANDS[command][0]))


#: The new commands that print what they compute, and the input each is given through a FIFO.
PRINTING = {
    "sample_eval": (["sample_eval", "s.qrel", "a.run"], "s.qrel"),
    "analyze ppi": (["analyze", "ppi", "a.run", "b.run", "--qrels", "h.qrel", "--model-qrels", "q.qrel"], "q.qrel"),
    "pool simulate": (["pool", "simulate", "a.run", "b.run", "--qrels", "q.qrel"], "q.qrel"),
    "pool --strategy": (["pool", "a.run", "b.run", "--strategy", "mtf", "--budget", "2", "--qrels", "h.qrel"],
                        "h.qrel"),
    "pool --sample": (["pool", "a.run", "b.run", "--sample", "1-1:1,2-5:0.5", "--strata-out", "-", "-o", "p.pool"],
                      "a.run"),
    "evaluate -m xinfAP": (["evaluate", "a.run", "b.run", "--qrels", "s.qrel", "-m", "xinfAP", "-m", "infNDCG"],
                           "s.qrel"),
    "nuggets score": (["nuggets", "score", "assignments.jsonl"], "assignments.jsonl"),
}


@pytest.mark.parametrize("command", sorted(PRINTING))
def test_a_fifo_input_is_read_once_as_the_file_is(cli, files, command):
    args, name = PRINTING[command]
    from_file = cli(*args)
    assert from_file.exit_code == 0 and from_file.stdout, from_file.stderr
    (files / name).unlink()
    os.mkfifo(files / name)
    writer = threading.Thread(target=lambda: (files / name).write_text(FILES[name], encoding="utf-8"), daemon=True)
    writer.start()
    from_fifo = cli(*args)
    writer.join(5)
    assert from_fifo.exit_code == 0, from_fifo.stderr
    assert from_fifo.stdout == from_file.stdout.replace(str(files / name), name)


def test_a_lone_surrogate_in_a_streamed_run_is_one_line(cli, files):
    """Found on the way: `convert questions` streams a JSON run, whose question "\\ud800" went into the bank and
    ended in a UnicodeEncodeError traceback when the outputs were written."""
    (files / "run.json").write_text('{"run_name": "r", "turns": [{"turn_id": "1_1-1", "questions": [{"question": '
                                    '"\\ud800", "score": 1}]}]}', encoding="utf-8")
    (files / "bank.json").write_text('{"Q0001": "Is it a cat?"}', encoding="utf-8")
    message = _one_line_error(cli("convert", "questions", "run.json", "--bank", "bank.json", "-o", "out.run",
                                  "--bank-out", "bank2.json"))
    assert "run.json: turns[0].questions[0].question: character 1 is a lone surrogate" in message
    assert not (files / "out.run").exists() and not (files / "bank2.json").exists()


ECHOED_KEY = "sk-echoed-0123456789-SECRET"


def _echoing(server_class, *args):
    """A test server of server_class whose every answer ends with the request's Authorization header (the key)."""
    class Echoing(server_class):
        def reply(self, body):
            content, refusal = super().reply(body)
            return f"{content or ''} {self.authorizations[-1]}", refusal

    server = Echoing(*args, faults=False) if server_class.__name__ != "GameServer" else Echoing(*args)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize("command", ["judge", "nuggets create", "nuggets assign", "nuggets cite", "play privateshared"])
def test_a_key_a_server_echoes_in_its_answers_is_in_no_file_and_not_printed(cli, tmp_path, monkeypatch, command):
    """Every command that calls a model, against its test server made to end each answer with the request's
    credentials (`Bearer sk-...`): the key is in no file written (cache, outputs, run log, episodes) and not
    printed; the answers keep `***` in its place."""
    from dialogue.game_server import GameServer
    from judging.chat_server import ChatServer
    from nuggets.nugget_server import NuggetServer

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CASTREGIN_ECHO_KEY", ECHOED_KEY)
    for path in (REPO_DATA / "nuggets").iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "topics.json").write_text(FILES["topics.json"])
    (tmp_path / "bank.json").write_text('{"Q1": "Do you want a recipe for bread?"}')
    (tmp_path / "pool.txt").write_text("1_1-1 Q0 Q1 1 0 pool\n")
    server = (_echoing(GameServer, GAME_DIR) if command.startswith("play") else
              _echoing(NuggetServer) if command.startswith("nuggets") else _echoing(ChatServer))
    args = {"judge": ["judge", "pool.txt", "--bank", "bank.json", "--topics", "topics.json", "--criteria",
                      "relevance", "--model", "m"],
            "nuggets create": ["nuggets", "create", "--qrels", "qrels.txt", "--passages", "segments.jsonl",
                               "--queries", "queries.tsv", "--model", "m"],
            "nuggets assign": ["nuggets", "assign", "nuggets.jsonl", "answers.jsonl", "--model", "m"],
            "nuggets cite": ["nuggets", "cite", "answers.jsonl", "--passages", "segments.jsonl", "--model", "m"],
            "play privateshared": ["play", "privateshared", "--game-dir", str(GAME_DIR), "--experiment",
                                   "travel-booking", "--model", "truthful"]}[command]
    try:
        result = cli(*args, "--base-url", server.base_url, "--api-key-env", "CASTREGIN_ECHO_KEY", "--out-dir", "out",
                     "--max-retries", "0", "--timeout", "20")
    finally:
        server.shutdown()
    assert set(server.authorizations) == {f"Bearer {ECHOED_KEY}"}
    assert "SECRET" not in result.stdout + result.stderr
    written = [path for path in (tmp_path / "out").rglob("*") if path.is_file()]
    assert any(path.name == "cache.sqlite" for path in written), result.stderr
    for path in written:
        assert b"SECRET" not in path.read_bytes(), path
    assert any(b"Bearer ***" in path.read_bytes() for path in written)
