"""Experience files of ``castregin ope estimate``: every malformed line is one error naming file and line."""

from __future__ import annotations

import json

import pytest

from castregin.errors import InputError
from castregin.formats.experience import format_experience, parse_experience, read_experience

GOOD = {"dialogue_id": "d1",
        "turns": [{"context": "hi", "response": "hello", "target_response": "hey"},
                  {"context": "bye", "response": "ciao",
                   "target_responses": [{"text": "ciao", "prob": 0.25}, {"text": "bye", "prob": 0.75}]}],
        "reward": 0.5}


def line(**changes) -> str:
    obj = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if value is ...:
            del obj[key]
        else:
            obj[key] = value
    return json.dumps(obj)


def turn_line(turn: dict, **changes) -> str:
    return line(turns=[turn], **changes)


def write(tmp_path, *lines: str, name="exp.jsonl"):
    path = tmp_path / name
    path.write_text("".join(text + "\n" for text in lines), encoding="utf-8")
    return path


def test_reads_good_file(tmp_path):
    path = write(tmp_path, line(), "", line(dialogue_id=7, reward=3))
    dialogues = read_experience(path)
    assert [d.dialogue_id for d in dialogues] == ["d1", "7"]
    assert [d.line for d in dialogues] == [1, 3]
    assert dialogues[0].turns[0].target == (("hey", 1.0),)
    assert dialogues[0].turns[1].target == (("ciao", 0.25), ("bye", 0.75))
    assert dialogues[1].reward == 3.0
    # Extra keys (the logging system, say) are allowed and ignored.
    extra = json.loads(line())
    extra["policy"] = "system-b"
    assert parse_experience(json.dumps(extra).encode(), "x")[0].reward == 0.5


def test_round_trip(tmp_path):
    dialogues = read_experience(write(tmp_path, line(), line(dialogue_id="d2")))
    again = parse_experience(format_experience(dialogues).encode(), "again")
    assert [(d.dialogue_id, d.turns, d.reward) for d in again] == [(d.dialogue_id, d.turns, d.reward)
                                                                     for d in dialogues]


def test_probabilities_within_tolerance_are_accepted():
    turn = {"context": "c", "response": "r",
            "target_responses": [{"text": "a", "prob": 0.5}, {"text": "b", "prob": 0.5 + 5e-7}]}
    (dialogue,) = parse_experience(turn_line(turn).encode(), "x")
    assert sum(p for _, p in dialogue.turns[0].target) == pytest.approx(1.0, abs=1e-12)
    # The same reply twice is one reply.
    turn["target_responses"] = [{"text": "a", "prob": 0.5}, {"text": "a", "prob": 0.5}]
    (dialogue,) = parse_experience(turn_line(turn).encode(), "x")
    assert dialogue.turns[0].target == (("a", 1.0),)


TURN = {"context": "c", "response": "r", "target_response": "t"}

BAD = [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "expected an object, got an array"),
    (line(dialogue_id=...), 'missing the key "dialogue_id" (is this one logged dialogue of an ope experience file'),
    (line(dialogue_id=[1]), "dialogue_id: expected a string or an integer, got an array"),
    (line(dialogue_id=True), "dialogue_id: expected a string or an integer, got true"),
    (line(turns=...), 'missing the key "turns"'),
    (line(turns="hello"), 'turns: expected an array, got "hello"'),
    (line(turns=[]), "turns: expected at least 1 item(s), got an empty array"),
    (line(turns=["hello"]), 'turns[0]: expected an object, got "hello"'),
    (turn_line({"response": "r", "target_response": "t"}), 'turns[0]: missing the key "context"'),
    (turn_line({"context": "c", "target_response": "t"}), 'turns[0]: missing the key "response"'),
    (turn_line({"context": 3, "response": "r", "target_response": "t"}), "turns[0].context: expected a string, got 3"),
    (turn_line({"context": "c", "response": None, "target_response": "t"}),
     "turns[0].response: expected a string, got null"),
    (turn_line({"context": "c", "response": "r"}),
     'turns[0]: expected exactly one of "target_response" and "target_responses"'),
    (turn_line({**TURN, "target_responses": [{"text": "t", "prob": 1}]}),
     'turns[0]: expected exactly one of "target_response" and "target_responses"'),
    (turn_line({"context": "c", "response": "r", "target_response": 5}),
     "turns[0].target_response: expected a string, got 5"),
    (turn_line({"context": "c", "response": "r", "target_responses": []}),
     "turns[0].target_responses: expected at least 1 item(s), got an empty array"),
    (turn_line({"context": "c", "response": "r", "target_responses": {"t": 1}}),
     "turns[0].target_responses: expected an array, got an object"),
    (turn_line({"context": "c", "response": "r", "target_responses": ["t"]}),
     'turns[0].target_responses[0]: expected an object, got "t"'),
    (turn_line({"context": "c", "response": "r", "target_responses": [{"prob": 1}]}),
     'turns[0].target_responses[0]: missing the key "text"'),
    (turn_line({"context": "c", "response": "r", "target_responses": [{"text": "t"}]}),
     'turns[0].target_responses[0]: missing the key "prob"'),
    (turn_line({"context": "c", "response": "r", "target_responses": [{"text": "t", "prob": "1"}]}),
     'turns[0].target_responses[0].prob: expected a number, got "1"'),
    (turn_line({"context": "c", "response": "r", "target_responses": [{"text": "t", "prob": True}]}),
     "turns[0].target_responses[0].prob: expected a number, got true"),
    (turn_line({"context": "c", "response": "r",
                "target_responses": [{"text": "t", "prob": 1.5}, {"text": "u", "prob": -0.5}]}),
     "turns[0].target_responses[0].prob: expected a number <= 1, got 1.5"),
    (turn_line({"context": "c", "response": "r",
                "target_responses": [{"text": "t", "prob": 0.5}, {"text": "u", "prob": 0.4}]}),
     "turns[0].target_responses: the probabilities sum to 0.9, not 1"),
    (turn_line({"context": "c", "response": "r",
                "target_responses": [{"text": "t", "prob": 0.5}, {"text": "u", "prob": 0.5 + 2e-6}]}),
     "not 1 (tolerance 1e-06)"),
    (line(reward=...), 'missing the key "reward"'),
    (line(reward=None), "reward: expected the final human score, a number >= 0, got null"),
    (line(reward=-0.5), "reward: expected the final human score, a number >= 0, got -0.5"),
    (line(reward="4"), 'reward: expected the final human score, a number >= 0, got "4"'),
    (line(reward=False), "reward: expected the final human score, a number >= 0, got false"),
    ('{"dialogue_id": "d", "turns": [{"context": "c", "response": "r", "target_response": "t"}], "reward": NaN}',
     "reward: expected a finite number, got NaN"),
]


@pytest.mark.parametrize(("text", "problem"), BAD, ids=[f"bad{k}" for k in range(len(BAD))])
def test_malformed_line_is_one_error_naming_file_and_line(tmp_path, cli, text, problem):
    # The bad line is the third one, after a good line and a blank line.
    path = write(tmp_path, line(dialogue_id="ok"), "", text)
    with pytest.raises(InputError) as err:
        read_experience(path)
    assert (err.value.source, err.value.line) == (str(path), 3)
    assert problem in err.value.problem
    result = cli("ope", "estimate", path)
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith(f"castregin: error: {path}:3: ")
    assert problem in lines[0]


def test_duplicate_dialogue_id(tmp_path, cli):
    path = write(tmp_path, line(), line(reward=1))
    result = cli("ope", "estimate", path)
    assert result.exit_code == 1
    assert result.stderr == f"castregin: error: {path}:2: dialogue_id 'd1' repeats line 1\n"


def test_empty_file_missing_file_and_bad_bytes(tmp_path, cli):
    empty = write(tmp_path, "", "  ", name="empty.jsonl")
    result = cli("ope", "estimate", empty)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"castregin: error: {empty}: the file has no dialogues")
    result = cli("ope", "estimate", tmp_path / "nope.jsonl")
    assert result.exit_code == 1 and "no such file" in result.stderr
    binary = tmp_path / "latin1.jsonl"
    binary.write_bytes((line() + "\n").encode() + b'{"dialogue_id": "\xe9"}\n')
    result = cli("ope", "estimate", binary)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"castregin: error: {binary}:2: byte 0xe9 is not valid UTF-8")


def test_error_in_second_file_names_it(tmp_path, cli):
    good = write(tmp_path, line(), name="good.jsonl")
    bad = write(tmp_path, line(), line(dialogue_id="x", reward=-1), name="bad.jsonl")
    result = cli("ope", "estimate", good, bad)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"castregin: error: {bad}:2: reward: expected the final human score, "
                                    "a number >= 0, got -1")


def test_dialogue_longer_than_max_turns(tmp_path, cli):
    path = write(tmp_path, line(), line(dialogue_id="d2", turns=[TURN, TURN, TURN]))
    result = cli("ope", "estimate", path, "--max-turns", "2")
    assert result.exit_code == 1
    assert result.stderr == (f"castregin: error: {path}:2: --max-turns: dialogue d2 has 3 turns, more than 2; "
                             "raise it or leave it out\n")


def _variants(document, path=()):
    """``document`` with the value at each path replaced, in turn, by each of a set of odd values, and with
    each key removed: what a fast check of a line must refuse whenever the schema does."""
    odd = [None, True, False, -1, 0, 0.5, 1, 2, 1.0, float("nan"), float("inf"), "", "x", [], {}, [1], {"a": 1}]
    if path:
        for value in odd:
            yield _replaced(document, path, value)
        yield _replaced(document, path, _REMOVE)
    node = document
    for part in path:
        node = node[part]
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, _ in list(children):
        yield from _variants(document, (*path, key))


_REMOVE = object()


def _replaced(document, path, value):
    copied = json.loads(json.dumps(document))
    parent = copied
    for part in path[:-1]:
        parent = parent[part]
    if value is _REMOVE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copied


def test_the_fast_check_is_at_least_as_strict_as_the_schema():
    # The reader skips jsonschema for the lines its fast check passes (ten times faster); the check
    # must never pass a line the schema refuses.
    from castregin.formats import schema
    from castregin.formats.experience import _valid

    checker = schema.validator("experience")
    dialogue = {"dialogue_id": "d1", "extra": 1,
                "turns": [{"context": "c", "response": "r", "target_response": "t"},
                          {"context": "c", "response": "r",
                           "target_responses": [{"text": "a", "prob": 0.25}, {"text": "b", "prob": 0.75}]},
                          {"context": "c", "response": "r", "target_response": "t", "target_responses": []}],
                "reward": 0.5}
    assert not checker.is_valid(dialogue) and not _valid(dialogue)  # both target keys in the last turn
    del dialogue["turns"][2]
    assert checker.is_valid(dialogue) and _valid(dialogue)
    tested = 0
    for variant in _variants(dialogue):
        if _valid(variant):
            assert checker.is_valid(variant), variant
        tested += 1
    assert tested > 300
