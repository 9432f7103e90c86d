"""Judging tasks: every pooled pair once with its conversation, gold planted off-topic, a seeded order."""

from __future__ import annotations

from collections import Counter

import pytest

from castregin import formats
from castregin.data import Run, natural_key, topic_of
from castregin.errors import InputError
from castregin.formats.crowd import GOLD_COLUMNS as CROWD_GOLD_COLUMNS
from castregin.formats.crowd import parse_gold
from castregin.formats.submissions import read_bank
from castregin.formats.topics import parse_topics, read_topics
from castregin.judging.tasks import (
    GOLD_COLUMNS,
    borrowable,
    build_tasks,
    digest,
    plant_gold,
)
from castregin.render.tasks import gold_csv

CRITERIA = ["relevance", "novelty", "diversity"]


@pytest.fixture(scope="module")
def mi(cast2022):
    """The CAsT 2022 MI pool, both question banks merged (ReGIn first), and the topics tree."""
    pool = formats.read_run(cast2022 / "regin/question_pool_depth_1.pool")
    bank = dict(read_bank(cast2022 / "topics/2022_mixed_initiative_question_pool.json").entries)
    bank.update(read_bank(cast2022 / "regin/question_bank.json").entries)
    tree = read_topics(cast2022 / "topics/2022_evaluation_topics_tree_v1.0.json")
    return pool, bank, tree


def _pairs(pool: Run) -> Counter:
    return Counter((turn, item) for turn, items in pool.scores.items() for item in items)


def test_every_pooled_pair_appears_once_with_its_conversation(mi):
    pool, bank, tree = mi
    task_set = build_tasks(pool, bank, tree, CRITERIA, gold_per_topic=3, seed=7)
    real = [t for t in task_set.tasks if not t.gold]
    assert Counter((t.turn_id, t.item_id) for t in real) == _pairs(pool)
    assert len(real) == 2024 and len(task_set.tasks) == 2024 + 3 * 18
    for task in task_set.tasks:
        assert task.text == bank[task.item_id]
        assert list(task.context) == tree.conversation(task.turn_id)
        assert task.context[-1]["speaker"] == "user"
    # Q2173 is only in the official question pool, the second bank.
    assert [t.text for t in real if t.item_id == "Q2173"] == [bank["Q2173"]]


def test_conversations_follow_the_tree_by_hand(mi):
    pool, bank, tree = mi
    by_turn = {t.turn_id: list(t.context) for t in build_tasks(pool, bank, tree, CRITERIA).tasks}
    first = "I remember Glasgow hosting COP26 last year, but unfortunately I was out of the loop. What was it about?"
    assert by_turn["132_1-1"] == [{"speaker": "user", "text": first}]
    # 2-1 branches off after 1-4: the conversation is 1-1 .. 1-4 then 2-1, without 1-5 .. 1-8.
    assert by_turn["132_2-1"] == [
        {"speaker": "user", "text": first},
        {"speaker": "system", "text": "The COP26 event is a global united Nations summit about climate change and "
         "how countries are planning to tackle it. The term “climate change” is often used as if it means the same "
         "thing as the term “global warming”. The National Academy of Sciences says “climate change” is growing in "
         "favor of “global warming” because it helps convey that there are other changes in addition to rising "
         "temperatures. In fact, “climate change” means major changes in temperature, rainfall, snow, or wind "
         "patterns lasting for decades or longer."},
        {"speaker": "user", "text": "Interesting. What are the effects of these changes?"},
        {"speaker": "system", "text": "Climate change is very likely having an impact now on our planet and its life, "
         "according to the latest instalment of a report published by the Intergovernmental Panel on Climate Change "
         "(IPCC). And the future problems caused by rising seas, growing deserts, and more frequent droughts all look "
         "set to affect the developing world more than rich countries, they add."},
        {"speaker": "user", "text": "That’s interesting. Tell me more."},
    ]
    # 3-1 is the system's clarifying question after the user's 1-5; 3-2 answers it.
    context = by_turn["133_3-2"]
    assert [c["text"] for c in context if c["speaker"] == "user"] == [
        "I’d like to appreciate my mom by making her a pamper pack. What do you put in one?",
        "Can I make them at home?",
        "I’ve never done something like this before. Can you tell me how to make one?",
        "My mum loves a good, scented lotion. Let’s make that",
    ]
    system = [c["text"] for c in context if c["speaker"] == "system"]
    assert system[0].startswith("Beauty Products. Mother’s Day is a day to encourage your mom to pamper herself.")
    assert system[1].startswith("Yes. You can make body scrubs, moisturizers, and make-up removers at home.")
    assert system[2] == "What beauty product would you like to make?"
    assert [c["speaker"] for c in context] == ["user", "system"] * 3 + ["user"]


def test_gold_is_off_topic_and_shaped_like_the_rest(mi):
    pool, bank, tree = mi
    task_set = build_tasks(pool, bank, tree, CRITERIA, gold_per_topic=3, seed=11)
    pooled_in = {}
    for turn, items in pool.scores.items():
        for item in items:
            pooled_in.setdefault(item, set()).add(topic_of(turn))
    gold = [t for t in task_set.tasks if t.gold]
    assert Counter(t.topic for t in gold) == Counter(dict.fromkeys({topic_of(t) for t in pool.scores}, 3))
    for task in gold:
        assert task.turn_id in pool.scores and topic_of(task.turn_id) == task.topic
        assert task.item_id in bank and len(pooled_in[task.item_id]) == 1
        assert task.topic not in pooled_in[task.item_id]
        assert task.item_id[0] == "Q" and task.item_id[1:].isdigit()
    assert sorted((r["turn_id"], r["item_id"]) for r in task_set.gold) == sorted((t.turn_id, t.item_id) for t in gold)
    assert {(r["criterion"], r["min_label"], r["max_label"]) for r in task_set.gold} == {("relevance", 0, 1)}
    # The gold file is the one aggregate --gold reads.
    assert GOLD_COLUMNS == CROWD_GOLD_COLUMNS
    read = parse_gold(gold_csv(task_set.gold).encode(), "gold.csv")
    assert len(read) == 54 and set(read["criterion"]) == {"relevance"}


def test_the_order_follows_the_conversation_and_shuffles_items(mi):
    pool, bank, tree = mi
    one = build_tasks(pool, bank, tree, CRITERIA, gold_per_topic=2, seed=1)
    assert one == build_tasks(pool, bank, tree, CRITERIA, gold_per_topic=2, seed=1)
    topics = list(one.by_topic())
    assert topics == sorted(topics, key=natural_key)
    for tasks in one.by_topic().values():
        turns = list(dict.fromkeys(t.turn_id for t in tasks))
        assert turns == sorted(turns, key=natural_key)
        assert [t.turn_id for t in tasks] == sorted((t.turn_id for t in tasks), key=turns.index)  # contiguous
    assert "132_2-9" in turns_of(one) and turns_of(one).index("132_2-9") < turns_of(one).index("132_2-11")
    other = build_tasks(pool, bank, tree, CRITERIA, gold_per_topic=2, seed=2)
    order = {t: [x.item_id for x in one.tasks if x.turn_id == t] for t in pool.scores}
    moved = sum(order[t] != [x.item_id for x in other.tasks if x.turn_id == t] for t in pool.scores)
    assert moved > 150
    sorted_turns = sum(order[t] == sorted(order[t]) for t in pool.scores if len(order[t]) > 3)
    assert sorted_turns < 10
    assert list(one.gold) != list(other.gold)


def turns_of(task_set) -> list[str]:
    return list(dict.fromkeys(t.turn_id for t in task_set.tasks))


def test_digest_is_stable():
    # The shuffle keys are part of the output's identity: a change here changes every order. The value is
    # printf '42\x1forder\x1f132_1-1\x1fQ0001' | sha256sum
    assert digest(42, "order", "132_1-1", "Q0001")[:16] == "411ca0bbea80ce1a"


# --- small worlds ------------------------------------------------------------------------------------


def _tree(*topics: tuple[str, int]):
    """Linear topics: ``("1", 3)`` is topic 1 with user turns 1..3 and a system reply after each."""
    data = [{"number": name, "turn": [{"number": k, "raw_utterance": f"u{name}.{k}", "passage": f"s{name}.{k}"}
                                      for k in range(1, n + 1)]} for name, n in topics]
    return parse_topics(data, "topics.json")


BANK = {"Q1": "alpha one", "Q2": "alpha two", "Q3": "beta one", "Q4": "beta two", "Q5": "Alpha  One",
        "Q6": "gamma", "Q7": ""}


def test_linear_topics_give_every_earlier_turn():
    tree = _tree(("1", 3))
    assert tree.conversation("1_3") == [
        {"speaker": "user", "text": "u1.1"}, {"speaker": "system", "text": "s1.1"},
        {"speaker": "user", "text": "u1.2"}, {"speaker": "system", "text": "s1.2"},
        {"speaker": "user", "text": "u1.3"}]


def test_borrowable_items_are_pooled_in_one_topic_only():
    pairs = {"1_1": ["Q1", "Q2"], "2_1": ["Q3", "Q5"], "3_1": ["Q4", "Q7"]}
    # Q1 and Q5 differ only in case and spacing: the same question, pooled in two topics.
    assert borrowable(pairs, BANK) == {"1": ["Q2"], "2": ["Q3"], "3": ["Q4"]}
    planted = plant_gold(pairs, BANK, 2, seed=3)
    assert sorted(planted) == [("1_1", "Q3"), ("1_1", "Q4"), ("2_1", "Q2"), ("2_1", "Q4"),
                               ("3_1", "Q2"), ("3_1", "Q3")]


def test_too_few_items_to_borrow_is_one_error():
    pool = {"1_1": ["Q1"], "2_1": ["Q3"]}
    with pytest.raises(InputError, match=r"gold_per_topic: topic 1 can borrow only 1 off-topic item\(s\).*2 asked"):
        build_tasks(pool, BANK, _tree(("1", 1), ("2", 1)), CRITERIA, gold_per_topic=2)


@pytest.mark.parametrize(("pool", "criteria", "options", "message"), [
    ({"1_1": ["Q9"]}, CRITERIA, {}, r"^pool: item Q9 \(turn 1_1\) is in no bank"),
    ({"3_1": ["Q1"]}, CRITERIA, {}, (r"^pool: turn 3_1 is pooled but is no turn of the topics topics.json; leave "
                                     r"it out with --turns FILE")),
    ({"1_9": ["Q1"]}, CRITERIA, {}, r"turn 1_9 is pooled but is no turn of the topics"),
    ({"1_1": ["Q1"], "2_1": ["Q3"]}, ["novelty"], {"gold_per_topic": 1}, r"bound relevance, which the criteria lack"),
    ({"1_1": ["Q1"]}, CRITERIA, {"gold_per_topic": -1}, r"gold_per_topic: expected a number >= 0"),
])
def test_errors_a_user_can_cause(pool, criteria, options, message):
    with pytest.raises(InputError, match=message):
        build_tasks(pool, BANK, _tree(("1", 1), ("2", 1)), criteria, **options)


def test_a_system_turn_is_not_judged():
    tree = parse_topics([{"number": 5, "turn": [{"number": "1-1", "utterance": "hi"},
                                                {"number": "1-2", "parent": "1-1", "response": "hello"}]}], "t.json")
    with pytest.raises(InputError, match="turn 5_1-2 is a system turn"):
        build_tasks({"5_1-2": ["Q1"]}, BANK, tree, CRITERIA)


def test_an_organisers_gold_rows_are_added_and_kept():
    gold = parse_gold(b"turn_id,item_id,criterion,min_label,max_label\n1_2,Q3,relevance,0,0\n"
                      b"1_1,Q1,novelty,2,3\n", "my_gold.csv")
    task_set = build_tasks({"1_1": ["Q1", "Q2"], "1_2": ["Q2"]}, BANK, _tree(("1", 2)), CRITERIA, gold=gold)
    assert sorted((t.turn_id, t.item_id, t.gold) for t in task_set.tasks) == [
        ("1_1", "Q1", True), ("1_1", "Q2", False), ("1_2", "Q2", False), ("1_2", "Q3", True)]
    assert gold_csv(task_set.gold) == ("turn_id,item_id,criterion,min_label,max_label\n"
                                       "1_1,Q1,novelty,2,3\n1_2,Q3,relevance,0,0\n")


@pytest.mark.parametrize(("row", "message"), [
    ("1_1,Q1,fluency,0,1", r"my_gold.csv:2: criterion fluency is not judged"),
    ("2_1,Q1,relevance,0,1", r"my_gold.csv:2: turn 2_1: topic 2 is not in the pool"),
    ("1_7,Q1,relevance,0,1", r"my_gold.csv:2: turn 1_7 is not in the topics"),
    ("1_1,Q99,relevance,0,1", r"my_gold.csv:2: item Q99 is in no bank"),
])
def test_bad_gold_rows_name_their_line(row, message):
    gold = parse_gold(f"turn_id,item_id,criterion,min_label,max_label\n{row}\n".encode(), "my_gold.csv")
    with pytest.raises(InputError, match=message):
        build_tasks({"1_1": ["Q1"]}, BANK, _tree(("1", 2), ("2", 1)), CRITERIA, gold=gold)
