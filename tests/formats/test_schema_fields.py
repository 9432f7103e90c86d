"""Every field a JSON reader uses is constrained by its schema (README "What castregin refuses and why").

For each JSON input castregin reads (clembench episodes and scores, experience lines, PARADISE
functions, MI and main-task runs, banks, turn ids, topic trees), a small valid document is read
through the command line, then every value in it, one at a time, is replaced by a value of a
wrong type (an object for a scalar, a string for an array or object). Either castregin refuses
the file in one line (exit 1, ``castregin: error: ...``), or the field is one it does not read:
the output is then exactly the output of the valid document. A field that is read but not
constrained shows up as a different output, or as a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from schema_mutations import refused_or_unread


def _json_file(name: str):
    def write(directory: Path, document) -> Path:
        path = directory / name
        path.write_text(json.dumps(document))
        return path
    return write


# --- the documents -------------------------------------------------------------------------------------------

INTERACTIONS = {
    "players": {"GM": "Game master", "Player 1": "Answerer"},
    "turns": [[{"from": "GM", "to": "Player 1", "action": {"type": "send message", "content": "hello"}}]],
    "probes": [[{"gt": 0, "value": 0}, {"gt": 0, "value": 1}],
               [{"gt": 1, "value": 1}, {"gt": 0, "value": 0}],
               [{"gt": 1, "value": 1}, {"gt": 1, "value": 0}]],
    "realised_slots": {"A": "a", "B": "b"},
    "Request Count": [1, 2, 1],
    "Parsed Request Count": [1, 1, 1],
    "Violated Request Count": [0, 1, 0],
    "Filled Slots": [True, False],
    "Aborted": False,
    "Played Probe Rounds": 3,
}

SCORES = {"turn scores": {"0": {"Accuracy": 1.0}}, "episode scores": {"Main Score": 57.1, "Aborted": 0, "Lose": 1}}

EXPERIENCE = {"dialogue_id": "d1", "policy": "logged",
              "turns": [{"context": "hi", "response": "hello", "target_response": "hey"},
                        {"context": "bye", "response": "ciao",
                         "target_responses": [{"text": "ciao", "prob": 0.25}, {"text": "bye", "prob": 0.75}]}],
              "reward": 0.5}
OTHER_DIALOGUE = {"dialogue_id": "d2", "turns": [{"context": "hi", "response": "hey", "target_response": "hey"}],
                  "reward": 1.0}

PERFORMANCE_FUNCTION = {
    "method": "PARADISE performance function (Walker et al. 1997)", "formula": "Performance = ...",
    "satisfaction": "us", "success": "kappa", "costs": ["turns"],
    "coefficients": {"kappa": 0.4, "turns": -0.2},
    "normalization": {"kappa": {"mean": 0.5, "sd": 0.1}, "turns": {"mean": 10.0, "sd": 2.0}},
    "alpha_level": 0.05, "r_squared": 0.5,
}

QUESTION_BANK = {"Q0001": "What colour?", "Q0002": "Which size?"}
MI_RUN = {"run_name": "mi", "run_type": "automatic", "turns": [
    {"turn_id": "1_1-1", "questions": [{"question": "Q0001", "score": 2.5}, {"question": "A new one?", "score": 1.0}]},
    {"turn_id": "1_1-2", "questions": [{"question": "Which size?", "score": 0.5}]},
]}
RESPONSE_BANK = {"R00001": "An answer."}
MAIN_RUN = {"run_name": "main", "run_type": "automatic", "turns": [
    {"turn_id": "1_1-1", "responses": [
        {"text": "An answer.", "rank": 1, "provenance": [{"id": "p1", "text": "a passage", "score": 3.5}]},
        {"text": "Another.", "rank": 2, "provenance": [{"id": "p2", "text": "", "score": 1.0}]}]},
]}
TURN_IDS = {"1": ["1-1", "1-2"]}
TOPICS = [{"number": 1, "title": "colours", "turn": [
    {"number": "1-1", "utterance": "I want a shirt.", "response": "Which one?", "participant": "User"},
    {"number": "1-2", "parent": "1-1", "utterance": "A red one.", "response": "Here."}]},
    # A linear topic (CAsT 2020-2021): no parent, raw_utterance and passage.
    {"number": "2", "turn": [{"number": 1, "raw_utterance": "Tell me about tea.", "passage": "Tea is..."},
                             {"number": 2, "raw_utterance": "And coffee?"}]}]


# --- the readers ---------------------------------------------------------------------------------------------


def test_clembench_episode(cli, tmp_path):
    def write(directory, document):
        (directory / "interactions.json").write_text(json.dumps(document))
        return directory

    assert refused_or_unread(cli, tmp_path, INTERACTIONS, write,
                             lambda episode: ("scorekeeping", "score", episode, "--format", "json"),
                             "interactions.json") == []


def test_clembench_scores(cli, tmp_path):
    def write(directory, document):
        episode = directory / "model" / "privateshared" / "0_exp" / "episode_0"
        episode.mkdir(parents=True)
        (episode / "scores.json").write_text(json.dumps(document))
        return directory

    assert refused_or_unread(cli, tmp_path, SCORES, write,
                             lambda root: ("scorekeeping", "summary", root, "--format", "json"), "scores.json") == []


def test_experience_line(cli, tmp_path):
    def write(directory, document):
        path = directory / "exp.jsonl"
        path.write_text(json.dumps(document) + "\n" + json.dumps(OTHER_DIALOGUE) + "\n")
        return path

    assert refused_or_unread(cli, tmp_path, EXPERIENCE, write,
                             lambda path: ("ope", "estimate", path, "--format", "json"), "experience") == []


def test_performance_function(cli, tmp_path):
    dialogues = tmp_path / "dialogues.csv"
    dialogues.write_text("kappa,turns\n0.6,9\n0.2,14\n")
    assert refused_or_unread(cli, tmp_path, PERFORMANCE_FUNCTION, _json_file("function.json"),
                             lambda path: ("paradise", "predict", path, dialogues, "--format", "json"),
                             "performance function") == []


@pytest.mark.parametrize("name,document,bank,command", [
    ("mi run", MI_RUN, QUESTION_BANK, "questions"),
    ("main run", MAIN_RUN, RESPONSE_BANK, "responses"),
    ("main run", MAIN_RUN, None, "passages"),
])
def test_json_runs(cli, tmp_path, name, document, bank, command):
    banks = []
    if bank is not None:
        (tmp_path / "bank.json").write_text(json.dumps(bank))
        banks = ["--bank", tmp_path / "bank.json"]
    assert refused_or_unread(cli, tmp_path, document, _json_file("run.json"),
                             lambda path: ("convert", command, path, *banks, "-o", "-"), name) == []


@pytest.mark.parametrize("bank", [QUESTION_BANK, [{"question_id": k, "question": v} for k, v in QUESTION_BANK.items()]])
def test_banks(cli, tmp_path, bank):
    (tmp_path / "run.json").write_text(json.dumps(MI_RUN))
    assert refused_or_unread(cli, tmp_path, bank, _json_file("bank.json"),
                             lambda path: ("convert", "questions", tmp_path / "run.json", "--bank", path, "-o", "-"),
                             "bank") == []


def test_turn_ids(cli, tmp_path):
    run = tmp_path / "r.run"
    run.write_text("1_1-1 Q0 a 1 2.0 r\n1_1-2 Q0 b 1 1.0 r\n1_1-3 Q0 c 1 1.0 r\n")
    qrels = tmp_path / "q.qrel"
    qrels.write_text("1_1-1 0 a 2\n1_1-2 0 c 2\n1_1-3 0 c 2\n")
    assert refused_or_unread(cli, tmp_path, TURN_IDS, _json_file("turns.json"),
                             lambda path: ("evaluate", run, "--qrels", qrels, "--turns", path, "-q",
                                           "--format", "json"), "turn ids", skip_root=True) == []
    # Not the root: a file that is not a JSON object is a list of turn ids, one a line (a JSON string
    # there is a turn id in quotes, which no qrels holds: a warning says so).


def test_topics_tree(cli, tmp_path):
    pool = tmp_path / "p.pool"
    pool.write_text("1_1-1 Q0 Q0001 1 0.0 dummytag\n1_1-2 Q0 Q0002 1 0.0 dummytag\n2_2 Q0 Q0001 1 0.0 dummytag\n")
    (tmp_path / "bank.json").write_text(json.dumps(QUESTION_BANK))
    counter = iter(range(10_000))

    def args(path):
        out = tmp_path / f"tasks{next(counter)}"
        return ("tasks", pool, "--bank", tmp_path / "bank.json", "--topics", path, "--criteria", "relevance",
                "--out-dir", out)

    # tasks writes files: its standard output is empty and the same; compare what it wrote too.
    assert refused_or_unread(cli, tmp_path, TOPICS, _json_file("topics.json"), args, "topics") == []
    written = sorted(p for p in tmp_path.glob("tasks*") if (p / "tasks.csv").exists())
    texts = {(p / "tasks.csv").read_text() for p in written}
    assert len(texts) == 1, "a mutation changed the tasks without a refusal"
