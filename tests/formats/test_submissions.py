"""JSON runs and banks are checked against a JSON schema: one line naming the JSON path, exit 1, no output."""

from __future__ import annotations

import copy
import json

import pytest

from castregin.errors import InputError
from castregin.formats import schema
from castregin.formats.submissions import _SPOOLED, read_bank, read_mi_run

BANK = {"Q0001": "one", "Q0002": "two"}


def mi(n_turns=5):
    return {"run_name": "r", "turns": [{"turn_id": f"1_1-{i}", "questions": [{"question": "Q0001", "score": 1.0},
                                                                               {"question": "two", "score": 2}]}
                                       for i in range(n_turns)]}


def main_run():
    return {"run_name": "m", "run_type": "automatic", "turns": [{"turn_id": "1_1-1", "responses": [
        {"text": "a", "rank": 1, "provenance": [{"id": "P1", "text": "x", "score": 1.0}]},
        {"text": "b", "rank": 2, "provenance": [{"id": "P2"}]}]}]}


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bank.json").write_text(json.dumps(BANK))
    return tmp_path


def set_at(data, path, value):
    target = data
    for part in path[:-1]:
        target = target[part]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


DELETE = object()

MI_ERRORS = [
    (["turns", 3, "questions", 0, "score"], "high", 'turns[3].questions[0].score: expected a number, got "high"'),
    (["turns", 3, "questions", 1, "score"], None, "turns[3].questions[1].score: expected a number, got null"),
    (["turns", 0, "questions", 1, "score"], True, "turns[0].questions[1].score: expected a number, got true"),
    (["turns", 2, "questions", 0, "question"], 17, "turns[2].questions[0].question: expected a string, got 17"),
    (["turns", 1, "questions", 0, "score"], DELETE, 'turns[1].questions[0]: missing the key "score"'),
    (["turns", 1, "questions", 0], "Q0001", 'turns[1].questions[0]: expected an object, got "Q0001"'),
    (["turns", 4, "questions"], {"question": "Q0001"}, "turns[4].questions: expected an array, got an object"),
    (["turns", 4, "questions"], DELETE, 'turns[4]: missing the key "questions"'),
    (["turns", 2, "turn_id"], 132, "turns[2].turn_id: expected a string, got 132"),
    (["turns", 2, "turn_id"], "132 1-1",
     'turns[2].turn_id: expected a turn id without spaces such as "132_1-1", got "132 1-1"'),
    (["turns", 2, "turn_id"], "", 'turns[2].turn_id: expected a turn id without spaces such as "132_1-1", got ""'),
    (["turns", 0], [], "turns[0]: expected an object, got an array"),
    (["turns"], {}, "turns: expected an array, got an object"),
    (["turns"], DELETE, 'missing the key "turns" (is this a CAsT 2022 mixed-initiative run?)'),
    (["run_name"], ["x"], "run_name: expected a string, got an array"),
]


@pytest.mark.parametrize(("path", "value", "message"), MI_ERRORS, ids=[m for *_, m in MI_ERRORS])
def test_mi_schema_errors(path, value, message, here, cli):
    (here / "run.json").write_text(json.dumps(set_at(mi(), path, value)))
    result = cli("convert", "questions", "run.json", "--bank", "bank.json", "-o", "out.run")
    assert result.exit_code == 1
    assert result.stderr == f"castregin: error: run.json: {message}\n"
    assert result.stdout == "" and not (here / "out.run").exists()


@pytest.mark.parametrize(("literal", "shown"), [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"),
                                                ("1e999", "Infinity")])
def test_non_finite_scores_are_errors(literal, shown, here, cli):
    # Python's json reads NaN and Infinity (and 1e999 as inf); JSON has neither.
    text = json.dumps(mi()).replace('"score": 2', f'"score": {literal}', 1)
    (here / "run.json").write_text(text)
    result = cli("convert", "questions", "run.json", "--bank", "bank.json", "-o", "-")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"castregin: error: run.json: turns[0].questions[1].score: expected a finite number, "
                             f"got {shown}\n")


def test_the_first_bad_turn_is_reported(here, cli):
    data = mi(10)
    data["turns"][7]["questions"][0]["score"] = "x"
    data["turns"][4]["questions"][1]["question"] = None
    (here / "run.json").write_text(json.dumps(data))
    result = cli("convert", "questions", "run.json", "--bank", "bank.json", "-o", "-")
    assert result.stderr == "castregin: error: run.json: turns[4].questions[1].question: expected a string, got null\n"


def test_root_and_syntax_errors(here, cli):
    (here / "list.json").write_text("[1, 2]")
    result = cli("convert", "questions", "list.json", "--bank", "bank.json", "-o", "-")
    assert result.exit_code == 1
    assert result.stderr == ('castregin: error: list.json: expected a mixed-initiative run (a JSON object with '
                             '"turns"), got an array\n')
    (here / "broken.json").write_text('{"run_name": "r",\n "turns": [\n}')
    result = cli("convert", "questions", "broken.json", "--bank", "bank.json", "-o", "-")
    assert result.exit_code == 1
    assert result.stderr.startswith("castregin: error: broken.json:3: invalid JSON at column 1")


def test_a_bad_second_run_leaves_no_output(here, cli):
    (here / "good.json").write_text(json.dumps(mi()))
    (here / "bad.json").write_text(json.dumps(set_at(mi(), ["turns", 0, "questions", 0, "score"], "high")))
    result = cli("convert", "questions", "good.json", "bad.json", "--bank", "bank.json", "--out-dir", "out")
    assert result.exit_code == 1
    assert result.stderr == ('castregin: error: bad.json: turns[0].questions[0].score: expected a number, '
                             'got "high"\n')
    assert not (here / "out").exists() or list((here / "out").iterdir()) == []


MAIN_ERRORS = [
    (["turns", 0, "responses", 1, "rank"], "2", 'turns[0].responses[1].rank: expected a number, got "2"'),
    (["turns", 0, "responses", 0, "text"], DELETE, 'turns[0].responses[0]: missing the key "text"'),
    (["turns", 0, "responses", 0, "provenance"], DELETE, 'turns[0].responses[0]: missing the key "provenance"'),
    (["turns", 0, "responses", 0, "provenance", 0, "id"], 5,
     "turns[0].responses[0].provenance[0].id: expected a string, got 5"),
    (["turns", 0, "responses", 1, "provenance", 0, "id"], "a b",
     'turns[0].responses[1].provenance[0].id: expected a passage id without spaces, got "a b"'),
    (["turns", 0, "responses", 0, "provenance", 0, "score"], "1",
     'turns[0].responses[0].provenance[0].score: expected a number, got "1"'),
    (["turns", 0, "responses"], DELETE, 'turns[0]: missing the key "responses"'),
    (["run_type"], 3, "run_type: expected a string, got 3"),
]


@pytest.mark.parametrize("command", ["responses", "passages"])
@pytest.mark.parametrize(("path", "value", "message"), MAIN_ERRORS, ids=[m for *_, m in MAIN_ERRORS])
def test_main_schema_errors(path, value, message, command, here, cli):
    (here / "run.json").write_text(json.dumps(set_at(main_run(), path, value)))
    (here / "rbank.json").write_text("{}")
    bank = ["--bank", "rbank.json"] if command == "responses" else []
    result = cli("convert", command, "run.json", *bank, "-o", "out.run")
    assert result.exit_code == 1
    assert result.stderr == f"castregin: error: run.json: {message}\n"
    assert not (here / "out.run").exists()


def test_main_nan_rank(here, cli):
    (here / "run.json").write_text(json.dumps(main_run()).replace('"rank": 2', '"rank": NaN'))
    result = cli("convert", "passages", "run.json", "-o", "-")
    assert result.exit_code == 1
    assert result.stderr == ("castregin: error: run.json: turns[0].responses[1].rank: expected a finite number, "
                             "got NaN\n")


@pytest.mark.parametrize(("content", "message"), [
    ('{"Q0001": 5}', "Q0001: expected a string, got 5"),
    ('[{"question_id": "Q1", "question": null}]', "[0].question: expected a string, got null"),
    ('[{"question_id": "Q1"}]', '[0]: missing the key "question"'),
    ('[{"question_id": "Q 1", "question": "x"}]', '[0].question_id: expected an id without spaces, got "Q 1"'),
    ('[{"question_id": "Q1", "question": "x"}, {"question_id": "Q1", "question": "y"}]',
     "[1]: id Q1 is listed twice with different texts"),
    ('"text"', 'expected a bank (an object id -> text, or a list of {"question_id", "question"}), got "text"'),
    ("[3]", '[0]: expected an object {"question_id", "question"}, got 3'),
])
def test_bank_errors(content, message, here, cli):
    (here / "run.json").write_text(json.dumps(mi()))
    (here / "badbank.json").write_text(content)
    result = cli("convert", "questions", "run.json", "--bank", "badbank.json", "-o", "-")
    assert result.exit_code == 1
    assert result.stderr == f"castregin: error: badbank.json: {message}\n"


def test_bank_shapes(here):
    (here / "list.json").write_text('[{"question_id": "Q1", "question": "x"}, {"question_id": "Q1", "question": "x"}]')
    assert read_bank("list.json").entries == {"Q1": "x"} and read_bank("list.json").shape == "list"
    assert read_bank("bank.json").entries == BANK and read_bank("bank.json").shape == "object"


def test_fast_check_is_never_laxer_than_the_schema():
    # Every turn the fast test accepts must be valid for the schema, or a bad run could slip through.
    def fast_ok(kind, turn):
        return _SPOOLED[kind][0](turn) is not None

    validator = schema.validator("mi-turn")
    main_validator = schema.validator("main-turn")
    values = [None, True, 0, 1.5, float("nan"), float("inf"), "", "a b", "x", [], {}, [1], {"id": "P"}]
    base = mi(1)["turns"][0]
    paths = [["turn_id"], ["questions"], ["questions", 0], ["questions", 0, "question"], ["questions", 0, "score"]]
    for path in paths:
        for value in [*values, DELETE]:
            turn = set_at(copy.deepcopy(base), path, value)
            assert fast_ok("mi", turn) == (not list(validator.iter_errors(turn))), (path, value)
    base = main_run()["turns"][0]
    paths = [["turn_id"], ["responses"], ["responses", 0, "text"], ["responses", 0, "rank"],
             ["responses", 0, "provenance"], ["responses", 0, "provenance", 0],
             ["responses", 0, "provenance", 0, "id"], ["responses", 0, "provenance", 0, "score"],
             ["responses", 0, "provenance", 0, "text"]]
    for path in paths:
        for value in [*values, DELETE]:
            turn = set_at(copy.deepcopy(base), path, value)
            assert fast_ok("main", turn) == (not list(main_validator.iter_errors(turn))), (path, value)


def test_python_api(here):
    (here / "run.json").write_text(json.dumps(mi()))
    with read_mi_run("run.json") as run:
        assert run.tag == "r" and len(run.turns) == 5 and run.turns[1] == (["Q0001", "two"], [1.0, 2.0])
    (here / "bad.json").write_text(json.dumps(set_at(mi(), ["turns", 0, "questions", 0, "score"], "x")))
    with pytest.raises(InputError, match=r"^bad\.json: turns\[0\]\.questions\[0\]\.score"):
        read_mi_run("bad.json")
    # The document's schema checks the run without its turns; each turn has its own schema.
    assert schema.load("mi-run")["properties"]["turns"] == {"type": "array"}
    assert schema.load("mi-turn")["required"] == ["turn_id", "questions"]
