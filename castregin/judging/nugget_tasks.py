"""Nugget work for people: the tasks of ``castregin nuggets tasks``, in the judging pages and crowd files
castregin makes for relevance (:mod:`castregin.render.tasks`).

Four kinds, each the people's side of a model's command:

- ``create`` (``nuggets create``): for each turn with relevant passages, the query, the conversation and the
  passages; people write the nuggets a good answer holds, each vital or okay (the nugget writing page). What
  they write is merged per turn by :func:`castregin.judging.nugget_labels.merge_written`.
- ``importance`` (``nuggets create``'s scoring): each nugget of a nuggets file, with its turn's conversation;
  people label it 0 (not a nugget of this turn), 1 (okay) or 2 (vital).
- ``assign`` (``nuggets assign``): each nugget of each answer to a turn with nuggets, with the conversation and
  the answer; people label it 0 (not_support), 1 (partial_support) or 2 (support). An empty answer is no
  task: it supports nothing, as nuggetizer assigns it.
- ``cite`` (``nuggets cite``): each (sentence, cited passage) pair, the first ``max_citations`` distinct
  citations of each sentence (:func:`castregin.nuggets.citations.cited_pairs`), with the answer and the sentence;
  people label it 0 (no support), 1 (partial support) or 2 (full support).

A labelling task is a :class:`castregin.judging.tasks.Task`: the turn is the qid (so that gold filtering per topic
works as for relevance), the item ``run_id#index`` (assign: the nugget's index in the answer's list, the unit
``castregin agreement`` compares nugget sources on), the nugget's index (importance) or
``run_id#sentence#position`` (cite: the citation's position among the sentence's judged ones). The crowd's
labels come back as the judgments CSV ``castregin aggregate`` reads, one criterion (``importance``, ``support``,
``citation_support``) on the scale 0-2, and ``castregin nuggets aggregate`` turns them into nuggetizer's files
with the crowd rules (:mod:`castregin.judging.nugget_labels`).

**Gold.** ``gold_per_topic=N`` plants N items per topic whose label must be 0: a nugget (importance, assign) or a
passage (cite) of another topic, put into one of this topic's groups, chosen by digest as
:func:`castregin.judging.tasks.plant_gold` chooses (a text pooled in one topic only, not empty). An off-topic
nugget is no nugget of this turn and no answer supports it; an off-topic passage supports no sentence. Planted
items are listed in the manifest and left out of every output. ``gold`` takes an organiser's own rows instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..data import natural_key, topic_of
from ..errors import InputError, InputWarning
from ..formats.nuggets import Answer, TurnNuggets
from ..formats.passages import Passage
from .tasks import DEFAULT_SEED, GOLD_COLUMNS, Task, TaskSet, borrowed, check_gold_request, digest, fold_text

KINDS = ("create", "importance", "assign", "cite")
#: The criterion people label in each labelling kind (its rubric: ``nugget_rubrics.json``).
CRITERIA = {"importance": "importance", "assign": "support", "cite": "citation_support"}
#: Every label is on 0-2.
SCALE = (0, 2)
#: The range a planted gold item's label must fall in.
GOLD_RANGE = (0, 0)
_NAMED = 10


@dataclass(frozen=True)
class WritingTurn:
    """A turn people write nuggets for: its query, conversation so far, and relevant passages ``(docid, text)``."""

    topic: str
    turn_id: str
    query: str
    context: tuple[Mapping[str, str], ...]
    passages: tuple[tuple[str, str], ...]


@dataclass
class NuggetTasks:
    """A kind's tasks: ``task_set`` (labelling kinds) or ``writing`` (create), and the ``manifest`` the labels are
    aggregated back with (:mod:`castregin.formats.nugget_tasks`)."""

    kind: str
    manifest: dict
    task_set: TaskSet | None = None
    writing: list[WritingTurn] = field(default_factory=list)


@dataclass
class _Group:
    """The tasks shown together: one turn (importance), one answer (assign), one sentence (cite)."""

    topic: str
    turn_id: str
    key: str
    context: tuple[Mapping[str, str], ...]
    items: list[tuple[str, str]]
    next_item: str  # the pattern of a planted item's id: ``{n}`` the next free index
    free: int = -1  # the next free index (-1: the number of items)


def _context(qid: str, query: str, topics, *extra: Mapping[str, str]) -> tuple[Mapping[str, str], ...]:
    """The conversation so far at ``qid`` (from ``topics`` where they hold it; else the query alone, if any), then
    ``extra`` (the answer, the sentence)."""
    if topics is not None and qid in topics:
        said = topics.conversation(qid)
    else:
        said = [{"speaker": "user", "text": query}] if query.strip() else []
    return (*said, *extra)


def _named(names: Sequence[str]) -> str:
    return ", ".join(names[:_NAMED]) + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def _plant(groups: list[_Group], per_topic: int, seed: int) -> list[tuple[str, str]]:
    """Plant ``per_topic`` off-topic items in each topic's groups (see the module); the (turn, item) pairs."""
    topics_of_text: dict[str, set[str]] = {}
    texts: dict[str, str] = {}
    for group in groups:
        for _, text in group.items:
            folded = fold_text(text)
            topics_of_text.setdefault(folded, set()).add(group.topic)
            texts.setdefault(folded, text)
    offers: dict[str, list[str]] = {}
    for folded, owners in topics_of_text.items():
        if folded and len(owners) == 1:
            offers.setdefault(next(iter(owners)), []).append(folded)
    by_topic: dict[str, list[_Group]] = {}
    for group in groups:
        by_topic.setdefault(group.topic, []).append(group)
    planted = []
    for topic in sorted(by_topic, key=natural_key):
        for folded in borrowed(offers, topic, per_topic, seed, " (texts found in one topic only)"):
            group = min(by_topic[topic], key=lambda g: digest(seed, "gold-group", g.key, folded))
            index = group.free if group.free >= 0 else len(group.items)
            group.free = index + 1
            item = group.next_item.format(n=index)
            group.items.append((item, texts[folded]))
            planted.append((group.turn_id, item))
    return planted


def _organiser_gold(rows: Sequence[Mapping], groups: Sequence[_Group], criterion: str, source: str) -> list[dict]:
    """An organiser's gold rows, checked: the criterion labelled, a (turn, item) of the tasks."""
    known = {(g.turn_id, item) for g in groups for item, _ in g.items}
    checked = []
    for row in rows:
        turn, item, named = str(row["turn_id"]), str(row["item_id"]), str(row["criterion"])
        if named != criterion:
            raise InputError(f"criterion {named} is not labelled here ({criterion} is)", source=source,
                             line=row.get("line"))
        if (turn, item) not in known:
            raise InputError(f"({turn}, {item}) is no task (items are run_id#index, the nugget's index or "
                             "run_id#sentence#position)", source=source, line=row.get("line"))
        checked.append({column: row[column] for column in GOLD_COLUMNS})
    return checked


def _task_set(kind: str, groups: list[_Group], *, gold_per_topic: int, gold, seed: int) -> tuple[TaskSet, list]:
    """The groups as tasks in judging order (topics, turns in natural order; a turn's groups by digest; a group's
    items by digest), gold planted or given."""
    criterion = CRITERIA[kind]
    check_gold_request(gold_per_topic, gold)
    if not groups:
        why = {"importance": "the nuggets file holds no nugget", "assign": "no answer with a text is to a turn with "
               "nuggets", "cite": "no answer cites a passage with a text"}[kind]
        raise InputError(f"there is nothing to label: {why}; nothing written")
    planted = _plant(groups, gold_per_topic, seed) if gold_per_topic else []
    if gold is not None:
        gold_source = (getattr(gold, "attrs", None) or {}).get("source", "gold")
        given = gold.to_dict("records") if hasattr(gold, "to_dict") else [dict(row) for row in gold]
        rows = _organiser_gold(given, groups, criterion, gold_source)
    else:
        low, high = GOLD_RANGE
        rows = sorted(({"turn_id": turn, "item_id": item, "criterion": criterion, "min_label": low,
                        "max_label": high} for turn, item in planted), key=lambda r: (r["turn_id"], r["item_id"]))
    golden = set(planted)
    ordered = sorted(groups, key=lambda g: (natural_key(g.topic), natural_key(g.turn_id), digest(seed, "group", g.key)))
    tasks = [Task(g.topic, g.turn_id, item, text, g.context, (g.turn_id, item) in golden, g.key)
             for g in ordered for item, text in sorted(g.items, key=lambda pair: digest(seed, "order", g.key, pair[0]))]
    return TaskSet([criterion], tasks, rows, seed, kind), planted


def importance_tasks(turns: Sequence[TurnNuggets], *, topics=None, gold_per_topic: int = 0, gold=None,
                     seed: int = DEFAULT_SEED) -> NuggetTasks:
    """People label each nugget of ``turns`` (a nuggets file) 0 (not a nugget of the turn), 1 (okay), 2 (vital)."""
    groups = [_Group(topic_of(t.qid), t.qid, t.qid, _context(t.qid, t.query, topics),
                     [(str(k), n.text) for k, n in enumerate(t.nuggets)], "{n}") for t in turns if t.nuggets]
    task_set, planted = _task_set("importance", groups, gold_per_topic=gold_per_topic, gold=gold, seed=seed)
    records = [{"qid": t.qid, "query": t.query,
                "nuggets": [{"text": n.text, "importance": n.importance} for n in t.nuggets]} for t in turns]
    return NuggetTasks("importance", _manifest("importance", records, planted, seed), task_set)


def assignment_tasks(turns: Sequence[TurnNuggets], answers: Sequence[Answer], *, topics=None, gold_per_topic: int = 0,
                     gold=None, seed: int = DEFAULT_SEED) -> NuggetTasks:
    """People label each nugget of each answer to a turn with nuggets: 0 (not_support), 1 (partial_support),
    2 (support). Answers to turns without nuggets are left out and said; an empty answer is in the manifest (it
    supports nothing) but no task."""
    nuggets = {t.qid: t for t in turns}
    groups, records, without = [], [], []
    for answer in sorted(answers, key=lambda a: (natural_key(a.qid), a.run_id)):
        turn = nuggets.get(answer.qid)
        if turn is None or not turn.nuggets:
            without.append(f"{answer.run_id}:{answer.qid}")
            continue
        text = answer.text
        records.append({"qid": answer.qid, "query": turn.query, "run_id": answer.run_id, "answer_text": text,
                        "nuggets": [{"text": n.text, "importance": n.importance} for n in turn.nuggets]})
        if text.strip():
            groups.append(_Group(topic_of(answer.qid), answer.qid, f"{answer.qid}\x1f{answer.run_id}",
                                 _context(answer.qid, turn.query, topics, {"speaker": "answer", "text": text}),
                                 [(f"{answer.run_id}#{k}", n.text) for k, n in enumerate(turn.nuggets)],
                                 f"{answer.run_id}#{{n}}"))
    if without:
        warnings.warn(InputWarning(f"{len(without)} answer(s) are to turns without nuggets and are left out: "
                                   f"{_named(without)}"), stacklevel=2)
    task_set, planted = _task_set("assign", groups, gold_per_topic=gold_per_topic, gold=gold, seed=seed)
    return NuggetTasks("assign", _manifest("assign", records, planted, seed), task_set)


def citation_tasks(answers: Sequence[Answer], passages: Mapping[str, Passage], *, max_citations: int = 3,
                   topics=None, gold_per_topic: int = 0, gold=None, seed: int = DEFAULT_SEED) -> NuggetTasks:
    """People judge each (sentence, cited passage) pair: 0 (no support), 1 (partial support), 2 (full support).
    Pairs whose passage has no text in ``passages`` are no task (said): their answers cannot be scored."""
    from ..nuggets.citations import cited_pairs

    groups, records = [], []
    without_text: dict[str, int] = {}
    for answer in sorted(answers, key=lambda a: (natural_key(a.qid), a.run_id)):
        records.append({"run_id": answer.run_id, "qid": answer.qid, "query": answer.query or "",
                        "sentences": [{"text": s.text, "citations": list(s.citations)} for s in answer.sentences]})
        by_sentence: dict[int, list[str]] = {}
        for index, passage_id in cited_pairs(answer, max_citations):
            by_sentence.setdefault(index, []).append(passage_id)
        for index, cited in by_sentence.items():
            items = []
            for position, passage_id in enumerate(cited):
                passage = passages.get(passage_id)
                if passage is None:
                    without_text[passage_id] = without_text.get(passage_id, 0) + 1
                    continue
                items.append((f"{answer.run_id}#{index}#{position}", passage.with_title))
            if items:
                sentence = {"speaker": "sentence", "text": answer.sentences[index].text}
                groups.append(_Group(topic_of(answer.qid), answer.qid, f"{answer.qid}\x1f{answer.run_id}\x1f{index}",
                                     _context(answer.qid, answer.query or "", topics,
                                              {"speaker": "answer", "text": answer.text}, sentence),
                                     items, f"{answer.run_id}#{index}#{{n}}", len(cited)))
    if without_text:
        named = sorted(without_text, key=natural_key)
        warnings.warn(InputWarning(f"{len(named)} cited passage(s) have no text among the passages, so "
                                   f"{sum(without_text.values())} pair(s) are no task and their answers will not be "
                                   f"scored: {_named(named)}"), stacklevel=2)
    task_set, planted = _task_set("cite", groups, gold_per_topic=gold_per_topic, gold=gold, seed=seed)
    manifest = _manifest("cite", records, planted, seed)
    manifest["max_citations"] = max_citations
    return NuggetTasks("cite", manifest, task_set)


def creation_tasks(requests: Sequence, *, seed: int = DEFAULT_SEED) -> NuggetTasks:
    """People write the nuggets of each turn of ``requests`` (:class:`castregin.nuggets.create.CreationRequest`:
    its query, conversation and relevant passages, most relevant first), as ``nuggets create`` asks a model."""
    writing = [WritingTurn(topic_of(r.qid), r.qid, r.query,
                           tuple(r.conversation) or ({"speaker": "user", "text": r.query},), tuple(r.passages))
               for r in requests]
    writing.sort(key=lambda t: (natural_key(t.topic), natural_key(t.turn_id)))
    records = [{"qid": t.turn_id, "query": t.query} for t in writing]
    return NuggetTasks("create", _manifest("create", records, [], seed), writing=writing)


def _manifest(kind: str, records: list[dict], planted: Sequence[tuple[str, str]], seed: int) -> dict:
    return {"kind": kind, "criterion": CRITERIA.get(kind), "seed": seed, "records": records,
            "planted": [list(pair) for pair in planted]}
