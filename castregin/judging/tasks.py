"""Judging tasks: every pooled (turn, item) with its conversation so far, gold items planted, order shuffled.

The input is plain data: a pool (:class:`~castregin.data.Run` or ``{turn: items}``), a bank
``{item id: text}``, the topics (:class:`~castregin.formats.topics.TopicsTree`) and the criteria.
The output is a :class:`TaskSet`: tasks grouped by topic (natural order of topic ids), turns in
natural order (``2-9`` before ``2-11``) so that the conversation reads forward, the items of a turn
in a shuffled order, and the gold rows ``turn_id,item_id,criterion,min_label,max_label`` that
``castregin aggregate --gold`` reads.

**Gold.** ``gold_per_topic=N`` plants N items in every topic that a careful judge must rate low:
texts from the pool of another topic, put at a turn of this topic. Only relevance is constrained
(``0-1``): an off-topic text is not relevant, but says nothing about how novel, diverse, natural or
concise it is, so no bound is set there. A borrowed item is an item whose text (compared without
case and spacing differences) is pooled in one topic only and is not empty: generic questions
pooled for several topics ("Would you like to know more?") could fit anywhere. A planted pair is
(a turn of this topic, a bank id of another topic's pool), shaped like every other pair. Instead,
an organiser's own gold rows can be given (``gold=``); their pairs are added to the tasks when
the pool lacks them.

**Order.** Every random choice is a SHA-256 digest of the seed and the ids, not a random number
generator: the same inputs give the same tasks on every machine and Python version, and one
topic's order does not change when another topic is added.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..data import Run, natural_key, topic_of
from ..errors import InputError
from ..formats.topics import TopicsTree

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_SEED = 42
#: Planted gold items constrain this criterion only, to this range: an off-topic text is not relevant.
GOLD_CRITERION = "relevance"
GOLD_RANGE = (0, 1)
GOLD_COLUMNS = ("turn_id", "item_id", "criterion", "min_label", "max_label")


def digest(seed: int, *parts: str) -> str:
    """The SHA-256 hex digest of the seed and ``parts``: a shuffle key that no library version changes."""
    return hashlib.sha256("\x1f".join([str(seed), *parts]).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Task:
    """One (turn, item) to judge, with the item's text and the conversation so far at the turn.

    ``gold`` is known to castregin only: no output shows it to judges. ``group`` puts tasks of one turn apart
    (the answers of several runs to one turn, in nugget tasks); by default the turn is the group.
    """

    topic: str
    turn_id: str
    item_id: str
    text: str
    context: tuple[Mapping[str, str], ...]
    gold: bool = False
    group: str = ""


@dataclass
class TaskSet:
    """The tasks in judging order, the gold rows, and what made them (criteria, seed; ``kind``: ``relevance`` for
    the items of a pool, else the kind of nugget task, :mod:`castregin.judging.nugget_tasks`)."""

    criteria: list[str]
    tasks: list[Task]
    gold: list[dict] = field(default_factory=list)
    seed: int = DEFAULT_SEED
    kind: str = "relevance"

    def by_topic(self) -> dict[str, list[Task]]:
        """The tasks of each topic, in order."""
        topics: dict[str, list[Task]] = {}
        for task in self.tasks:
            topics.setdefault(task.topic, []).append(task)
        return topics


def _pool_pairs(pool: Run | Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    turns = pool.scores if isinstance(pool, Run) else pool
    return {str(turn): list(dict.fromkeys(str(item) for item in items)) for turn, items in turns.items()}


def _check_pairs(pairs: Mapping[str, Sequence[str]], bank: Mapping[str, str], topics: TopicsTree,
                 source: str) -> None:
    for turn, items in pairs.items():
        if turn not in topics:
            raise InputError(f"turn {turn} is pooled but is no turn of the topics {topics.source}; leave it out "
                             "with --turns FILE (the official turn ids, e.g. 2022_evaluation_topics_turn_ids.json), "
                             "or give the topics of the pooled turns' year", source=source)
        for item in items:
            if item not in bank:
                raise InputError(f"item {item} (turn {turn}) is in no bank; give the bank that holds it "
                                 "(several banks may be given)", source=source)


def fold_text(text: str) -> str:
    """A text compared without case and spacing differences."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def borrowable(pairs: Mapping[str, Sequence[str]], bank: Mapping[str, str]) -> dict[str, list[str]]:
    """Per topic, the items of its pool that other topics may borrow as off-topic gold.

    An item qualifies when its text, compared without case and spacing differences, is not empty
    and is pooled in this topic only.
    """
    topics_of_text: dict[str, set[str]] = {}
    for turn, items in pairs.items():
        for item in items:
            topics_of_text.setdefault(fold_text(bank[item]), set()).add(topic_of(turn))
    found: dict[str, set[str]] = {}
    for turn, items in pairs.items():
        for item in items:
            text = fold_text(bank[item])
            if text and topics_of_text[text] == {topic_of(turn)}:
                found.setdefault(topic_of(turn), set()).add(item)
    return {topic: sorted(items) for topic, items in found.items()}


def plant_gold(pairs: Mapping[str, Sequence[str]], bank: Mapping[str, str], per_topic: int,
               seed: int = DEFAULT_SEED) -> list[tuple[str, str]]:
    """``per_topic`` (turn, item) gold pairs per topic: another topic's item at a turn of this topic.

    The items are the first by :func:`digest` among what the other topics offer (:func:`borrowable`);
    each goes to a turn of the topic chosen by digest too. Too few items to borrow is an
    :class:`InputError` naming the topic.
    """
    turns_of: dict[str, list[str]] = {}
    for turn in sorted(pairs, key=natural_key):
        turns_of.setdefault(topic_of(turn), []).append(turn)
    offers = borrowable(pairs, bank)
    planted = []
    for topic in sorted(turns_of, key=natural_key):
        for item in borrowed(offers, topic, per_topic, seed, "' pools (items pooled in one topic only, with a text)"):
            turn = min(turns_of[topic], key=lambda t: digest(seed, "gold-turn", t, item))
            planted.append((turn, item))
    return planted


def borrowed(offers: Mapping[str, Iterable[str]], topic: str, per_topic: int, seed: int, which: str) -> list[str]:
    """The first ``per_topic`` by :func:`digest` of what the topics other than ``topic`` offer; too few is an
    :class:`InputError` naming the topic (``which`` says what may be borrowed)."""
    others = sorted({item for other, items in offers.items() if other != topic for item in items},
                    key=lambda item: digest(seed, "gold", topic, item))
    if len(others) < per_topic:
        raise InputError(f"topic {topic} can borrow only {len(others)} off-topic item(s) from the other "
                         f"topics{which}, {per_topic} asked; plant fewer or give your own gold file",
                         argument="gold_per_topic")
    return others[:per_topic]


def _organiser_gold(rows: Sequence[Mapping], pairs: Mapping[str, Sequence[str]], bank: Mapping[str, str],
                    topics: TopicsTree, criteria: Sequence[str], source: str) -> list[tuple[str, str]]:
    """The (turn, item) pairs of gold rows, checked: judged criterion, pooled topic, known turn and item."""
    pooled_topics = {topic_of(turn) for turn in pairs}
    found = []
    for row in rows:
        line = row.get("line")
        turn, item, criterion = str(row["turn_id"]), str(row["item_id"]), str(row["criterion"])
        problem = None
        if criterion not in criteria:
            problem = f"criterion {criterion} is not judged (the criteria are {','.join(criteria)})"
        elif topic_of(turn) not in pooled_topics:
            problem = f"turn {turn}: topic {topic_of(turn)} is not in the pool"
        elif turn not in topics:
            problem = f"turn {turn} is not in the topics {topics.source}"
        elif item not in bank:
            problem = f"item {item} is in no bank; give the bank that holds it"
        if problem is not None:
            raise InputError(problem, source=source, line=line)
        found.append((turn, item))
    return found


def _gold_rows(planted: Sequence[tuple[str, str]]) -> list[dict]:
    low, high = GOLD_RANGE
    rows = [{"turn_id": turn, "item_id": item, "criterion": GOLD_CRITERION, "min_label": low,
             "max_label": high} for turn, item in planted]
    return sorted(rows, key=lambda r: (r["turn_id"], r["item_id"]))


def check_gold_request(gold_per_topic: int, gold) -> None:
    """Gold planted (``gold_per_topic`` a topic) or given (``gold`` rows), not both; an :class:`InputError` else."""
    if gold_per_topic < 0:
        raise InputError(f"expected a number >= 0, got {gold_per_topic}", argument="gold_per_topic")
    if gold_per_topic and gold is not None:
        raise InputError("plant gold items or give gold rows, not both", argument="gold")


def build_tasks(pool: Run | Mapping[str, Iterable[str]], bank: Mapping[str, str], topics: TopicsTree,
                criteria: Sequence[str], *, gold_per_topic: int = 0,
                gold: pd.DataFrame | Sequence[Mapping] | None = None, seed: int = DEFAULT_SEED) -> TaskSet:
    """Every pooled (turn, item) with its text and conversation, gold planted, in judging order.

    ``gold_per_topic`` plants off-topic gold (see the module's docstring; needs ``relevance`` among
    ``criteria``); ``gold`` is an organiser's own rows instead (the frame that
    :func:`castregin.formats.crowd.read_gold` returns, or dicts with the gold CSV's columns and
    optionally ``line``). Errors a user can cause (a pooled item in no bank, a turn absent from the
    topics, too few items to borrow) are :class:`InputError`.
    """
    check_gold_request(gold_per_topic, gold)
    if gold_per_topic and GOLD_CRITERION not in criteria:
        raise InputError(f"planted gold items bound {GOLD_CRITERION}, which the criteria lack; add it or "
                         "give your own gold file", argument="gold_per_topic")
    source = (pool.source if isinstance(pool, Run) else None) or "pool"
    pairs = _pool_pairs(pool)
    _check_pairs(pairs, bank, topics, source)
    if gold is not None:
        # read_gold's frame names its file in attrs; a list of dicts is taken as it is.
        gold_source = (getattr(gold, "attrs", None) or {}).get("source", "gold")
        given: Sequence[Mapping] = (gold.to_dict("records") if hasattr(gold, "to_dict")
                                    else [dict(row) for row in gold])
        extra = _organiser_gold(given, pairs, bank, topics, criteria, gold_source)
        rows = [{column: row[column] for column in GOLD_COLUMNS} for row in given]
    else:
        extra = plant_gold(pairs, bank, gold_per_topic, seed) if gold_per_topic else []
        rows = _gold_rows(extra)
    golden = set(extra)
    for turn, item in extra:
        pairs.setdefault(turn, [])
        if item not in pairs[turn]:
            pairs[turn].append(item)
    contexts = {turn: tuple(topics.conversation(turn)) for turn in pairs}
    tasks = [Task(topic_of(turn), turn, item, bank[item], contexts[turn], (turn, item) in golden)
             for turn in sorted(pairs, key=lambda t: (natural_key(topic_of(t)), natural_key(t)))
             for item in sorted(pairs[turn], key=lambda i: digest(seed, "order", turn, i))]
    return TaskSet(list(criteria), tasks, rows, seed)
