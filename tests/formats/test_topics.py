"""Reading CAsT topics: the 2022 tree by its parent links, linear topic lists, and one-line errors."""

from __future__ import annotations

import json

import pytest

from castregin.errors import InputError
from castregin.formats.topics import parse_topics, read_topics


def _topic(*turns, number=7):
    return [{"number": number, "turn": list(turns)}]


def test_the_cast2022_tree(cast2022):
    tree = read_topics(cast2022 / "topics/2022_evaluation_topics_tree_v1.0.json")
    assert len(tree.topics) == 18 and sum(len(t) for t in tree.topics.values()) == 408
    official = json.loads((cast2022 / "topics/2022_evaluation_topics_turn_ids.json").read_text())
    turns = [f"{topic}_{number}" for topic, numbers in official.items() for number in numbers]
    assert len(turns) == 205 and all(turn in tree for turn in turns)
    # Every official turn is a user turn whose conversation alternates user and system.
    for turn in turns:
        speakers = [c["speaker"] for c in tree.conversation(turn)]
        assert speakers == ["user", "system"] * (len(speakers) // 2) + ["user"]
    assert len(tree.conversation("132_3-1")) == len(tree.conversation("132_2-9")) + 2  # 3-1 follows 2-10


def test_parents_pick_the_branch():
    tree = parse_topics(_topic({"number": "1", "utterance": "a"}, {"number": "2", "parent": "1", "response": "b"},
                               {"number": "3", "parent": "2", "utterance": "c"},
                               {"number": "4", "parent": "3", "response": "d"},
                               {"number": "5", "parent": "2", "utterance": "e"}), "t.json")
    assert [c["text"] for c in tree.conversation("7_5")] == ["a", "b", "e"]
    assert [c["text"] for c in tree.conversation("7_3")] == ["a", "b", "c"]


@pytest.mark.parametrize(("data", "message"), [
    ({"number": 1}, r"^t.json: expected an array, got an object$"),
    (_topic({"number": "1 1", "utterance": "a"}), r"^t.json: \[0\].turn\[0\].number: expected a turn number without"),
    (_topic({"number": "1", "utterance": 3}), r"^t.json: \[0\].turn\[0\].utterance: expected a string, got 3$"),
    (_topic({"number": "1"}), r"^t.json: \[0\].turn\[0\]: missing the key \"utterance\" \(or \"response\"\)$"),
    (_topic({"number": "1", "utterance": "a"}, number="../x"), r"^t.json: \[0\].number: expected a topic number"),
    (_topic({"number": "1", "utterance": "a"}, {"number": "1", "utterance": "b"}),
     r"^t.json: \[0\].turn\[1\].number: turn 1 is listed twice in topic 7$"),
    (_topic({"number": "1", "utterance": "a", "parent": "9"}),
     r"^t.json: \[0\].turn\[0\].parent: '9' is not a turn of topic 7$"),
    (_topic({"number": "1", "utterance": "a", "parent": "2"}, {"number": "2", "response": "b", "parent": "1"}),
     r"^t.json: \[0\].turn\[0\].parent: the parents of turn 1 go round in a cycle$"),
    (_topic({"number": "1", "utterance": "a"}) * 2, r"^t.json: \[1\].number: topic 7 is listed twice$"),
])
def test_malformed_topics_are_one_line(data, message):
    with pytest.raises(InputError, match=message):
        parse_topics(data, "t.json")


def test_a_turn_it_does_not_hold():
    tree = parse_topics(_topic({"number": "1", "utterance": "a"}), "t.json")
    assert "7_1" in tree and "7_2" not in tree and "8_1" not in tree
    with pytest.raises(InputError, match=r"^t.json: turn 8_1 is not in the topics \(topic 8 is absent\)$"):
        tree.conversation("8_1")
    with pytest.raises(InputError, match=r"^t.json: turn 7_2 is not in the topics \(topic 7 has no turn 2\)$"):
        tree.conversation("7_2")
