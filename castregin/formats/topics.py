"""CAsT topics: the conversation that leads to each turn, as judges must read it.

The official CAsT 2022 file (``2022_evaluation_topics_tree_v1.0.json``) is a list of topics
``{"number": 132, "turn": [...]}``; each turn has a ``number`` (``"1-3"``), a ``participant``,
the user's ``utterance`` or the system's canonical ``response``, and a ``parent`` (the turn it
follows; the topic's first turn has none). Conversations branch: ``132_2-1`` follows ``1-4``, not
``1-8``. A topic whose turns have no ``parent`` at all is one linear conversation in file order
(the topic files of CAsT 2020-2021, whose turns hold ``raw_utterance`` and the canonical
``passage``), which is read too, as are iKAT's topics (2023-2024: ``{"number", "turns": [{"turn_id",
"utterance", "response"}]}``, one linear conversation a topic).

The turn id of turn ``1-3`` of topic ``132`` is ``132_1-3``. The conversation of a turn is the
path from the topic's start to it: each earlier turn's user utterance and system response, then
the turn's own user utterance (the item being judged answers it, so its canonical response is
left out). The file is checked against ``schemas/topics-tree.json``; a parent that is no turn of
its topic, or parents that form a cycle, are errors naming the JSON path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import InputError
from . import schema
from .common import check_unicode, display_name, read_json

USER, SYSTEM = "user", "system"
#: Where a turn keeps its user utterance and its system response: CAsT 2022's keys first, then 2020-2021's.
_USER_KEYS = ("utterance", "raw_utterance")
_SYSTEM_KEYS = ("response", "passage")


@dataclass(frozen=True)
class Node:
    """One turn of the tree: what the user and the system said there, and the turn it follows."""

    number: str
    user: str | None
    system: str | None
    parent: str | None


@dataclass
class TopicsTree:
    """The turns of every topic (``topics[topic][number]``, file order) and the file they came from."""

    topics: dict[str, dict[str, Node]]
    source: str = "topics"

    def __contains__(self, turn_id: str) -> bool:
        topic, _, number = turn_id.partition("_")
        return number in self.topics.get(topic, {})

    def conversation(self, turn_id: str) -> list[dict[str, str]]:
        """The conversation so far at ``turn_id``: ``[{"speaker": "user"|"system", "text"}, ...]``.

        It ends with the turn's own user utterance. A turn absent from the tree, or one where
        only the system speaks, is an :class:`InputError`.
        """
        topic, _, number = turn_id.partition("_")
        turns = self.topics.get(topic, {})
        if number not in turns:
            raise InputError(f"turn {turn_id} is not in the topics (topic {topic} "
                             f"{'has no turn ' + number if turns else 'is absent'})", source=self.source)
        user = turns[number].user
        if user is None:
            raise InputError(f"turn {turn_id} is a system turn; judged turns are the user's",
                             source=self.source)
        path = [turns[number]]
        while path[-1].parent is not None:
            path.append(turns[path[-1].parent])
        said = []
        for node in reversed(path[1:]):
            said += [{"speaker": speaker, "text": text}
                     for speaker, text in ((USER, node.user), (SYSTEM, node.system)) if text is not None]
        return [*said, {"speaker": USER, "text": user}]


def _text(turn: dict, keys: tuple[str, ...]) -> str | None:
    return next((turn[key] for key in keys if key in turn), None)


def _nodes(topic: dict, index: int, source: str) -> dict[str, Node]:
    """The turns of one topic, with parents checked (JSON path ``[index].turn[k]`` in messages)."""
    turns = topic["turn"]
    linked = any("parent" in turn for turn in turns)
    nodes: dict[str, Node] = {}
    for k, turn in enumerate(turns):
        number = str(turn["number"])
        if number in nodes:
            raise InputError(f"[{index}].turn[{k}].number: turn {number} is listed twice in topic "
                             f"{topic['number']}", source=source)
        user, system = _text(turn, _USER_KEYS), _text(turn, _SYSTEM_KEYS)
        if user is None and system is None:
            raise InputError(f"[{index}].turn[{k}]: missing the key \"utterance\" (or \"response\")",
                             source=source)
        for said in (user, system):
            if said is not None:
                check_unicode(said, f"[{index}].turn[{k}]", source)
        previous = str(turns[k - 1]["number"]) if k else None
        parent = (str(turn["parent"]) if "parent" in turn else None) if linked else previous
        nodes[number] = Node(number, user, system, parent)
    for k, turn in enumerate(turns):
        _check_ancestry(nodes, str(turn["number"]), f"[{index}].turn[{k}].parent", topic["number"], source)
    return nodes


def _check_ancestry(nodes: dict[str, Node], number: str, where: str, topic, source: str) -> None:
    seen = {number}
    node = nodes[number]
    while node.parent is not None:
        if node.parent not in nodes:
            raise InputError(f"{where}: {node.parent!r} is not a turn of topic {topic}", source=source)
        if node.parent in seen:
            raise InputError(f"{where}: the parents of turn {number} go round in a cycle", source=source)
        seen.add(node.parent)
        node = nodes[node.parent]


def _ikat_nodes(topic: dict, index: int, source: str) -> dict[str, Node]:
    """The turns of one iKAT topic (2023-2024: ``{"number", "turns": [{"turn_id", "utterance", "response"}]}``),
    one linear conversation; turn ``2`` of topic ``0`` is ``0_2``, as iKAT's runs and qrels name it."""
    nodes: dict[str, Node] = {}
    previous = None
    for k, turn in enumerate(topic["turns"]):
        number = str(turn["turn_id"])
        if number in nodes:
            raise InputError(f"[{index}].turns[{k}].turn_id: turn {number} is listed twice in topic "
                             f"{topic['number']}", source=source)
        nodes[number] = Node(number, turn["utterance"], turn.get("response"), previous)
        previous = number
    return nodes


def parse_topics(data, source: str) -> TopicsTree:
    """A parsed topics JSON document as a :class:`TopicsTree` (``source`` names it in messages): CAsT's, or
    iKAT's (topics with ``turns`` rather than ``turn``)."""
    ikat = isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "turns" in data[0] \
        and "turn" not in data[0]
    problem = schema.first_error(schema.validator("ikat-topics" if ikat else "topics-tree"), data)
    if problem is not None:
        raise InputError(problem, source=source)
    topics: dict[str, dict[str, Node]] = {}
    for index, topic in enumerate(data):
        name = str(topic["number"])
        if name in topics:
            raise InputError(f"[{index}].number: topic {name} is listed twice", source=source)
        topics[name] = (_ikat_nodes if ikat else _nodes)(topic, index, source)
    return TopicsTree(topics, source)


def read_topics(path: str | os.PathLike) -> TopicsTree:
    """Read a CAsT topics file (the 2022 tree, turns linked by ``parent``, or a linear topic list) or iKAT's."""
    return parse_topics(read_json(path), display_name(path))
