"""Qrels tools: subsets of turns, filtering turns, combining criteria, statistics.

These rebuild the CAsT-ReGIn qrels variants from the ``all`` qrels: ``filtered`` keeps the turns
with some label >= 2, ``mi_subset`` keeps the turns that need mixed initiative.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from ..data import Qrels, is_judged, topic_of
from ..errors import InputError
from ..labels import mean_rounded, turns_with_label

COMBINE_METHODS = ("min", "mean", "max")


def subset(qrels: Qrels, turns: Iterable[str]) -> Qrels:
    """The qrels of the given turns only."""
    return qrels.subset(turns)


def filter_turns(qrels: Qrels, min_label: int = 2) -> Qrels:
    """Keep the turns where at least one item has a label >= ``min_label``."""
    return qrels.subset(turns_with_label(qrels.labels, min_label))


def combine(qrels_list: Sequence[Qrels], how: str = "min") -> tuple[Qrels, int]:
    """One label per (turn, item) from several criteria: their ``min``, ``max`` or ``mean`` (half up).

    Only (turn, item) pairs judged in every qrels are combined; returns the combined qrels and
    the number of pairs left out because some qrels lacks them.
    """
    if how not in COMBINE_METHODS:
        raise InputError(f"unknown combination {how!r}; use one of {', '.join(COMBINE_METHODS)}",
                         argument="how")
    if not qrels_list:
        raise InputError("no qrels to combine")
    reducers: dict[str, Callable[[list[int]], int]] = {"min": min, "max": max, "mean": mean_rounded}
    reduce = reducers[how]
    first = qrels_list[0]
    combined: dict[str, dict[str, int]] = {}
    pairs: set[tuple[str, str]] = set()
    for q in qrels_list:
        pairs.update((t, i) for t, items in q.labels.items() for i in items)
    for turn, items in first.labels.items():
        for item in items:
            labels = [label for q in qrels_list if (label := q.labels.get(turn, {}).get(item)) is not None]
            if len(labels) == len(qrels_list):
                combined.setdefault(turn, {})[item] = reduce(labels)
    kept = sum(len(items) for items in combined.values())
    name = "+".join(q.name for q in qrels_list)
    return Qrels(combined, name=f"{name}.{how}", source=None), len(pairs) - kept


def stats(qrels: Qrels, rel_level: int = 2) -> dict:
    """Counts of a qrels: turns, topics, items, items per turn, label histogram, turns with a relevant item."""
    histogram = Counter(label for items in qrels.labels.values() for label in items.values())
    per_turn = [len(items) for items in qrels.labels.values()]
    relevant_turns = sum(
        1 for items in qrels.labels.values() if any(label >= rel_level for label in items.values())
    )
    return {
        "qrels": qrels.name,
        "turns": len(qrels.labels),
        "topics": len({topic_of(turn) for turn in qrels.labels}),
        "items": len(qrels),
        "items_per_turn": {
            "min": min(per_turn, default=0),
            "mean": (sum(per_turn) / len(per_turn)) if per_turn else 0.0,
            "max": max(per_turn, default=0),
        },
        "labels": {str(label): histogram[label] for label in sorted(histogram)},
        "rel_level": rel_level,
        "turns_with_relevant": relevant_turns,
    }


def merge_files(paths: Sequence[str]) -> tuple[Qrels, dict, dict[str, int]]:
    """``qrels merge``: the qrels files merged (:func:`merge`), the provenance record of every label (castregin's
    version, the command, the date, each source with its SHA-256 and the labels it gave, then each label with the
    file it came from) and the labels each file gave (per path, as the record lists them: a file given twice is
    one source, the second adding nothing)."""
    from ..formats.provenance import provenance
    from ..formats.trec import read_qrels

    merged, source = merge([read_qrels(path) for path in paths])
    made = provenance(paths)
    counts = dict.fromkeys((path for path, _ in made.inputs), 0)
    for position in source.values():
        counts[str(paths[position])] += 1
    record = {
        "castregin": made.version, "command": made.command, "date": made.date,
        "sources": [{"path": path, "sha256": digest, "labels": counts[path]} for path, digest in made.inputs],
        "labels": [{"turn_id": turn, "item_id": item, "label": merged.labels[turn][item],
                    "source": str(paths[source[turn, item]])}
                   for turn in sorted(merged.labels) for item in sorted(merged.labels[turn])],
    }
    return merged, record, counts


def merge(qrels_list: Sequence[Qrels]) -> tuple[Qrels, dict[tuple[str, str], int]]:
    """Fill the holes of the first qrels from the next ones, in order: the first label >= 0 of a pair wins.

    A label below 0 (in the pool but unjudged) is a hole too, kept only when no qrels labels the pair.
    Returns the merged qrels and, per (turn, item), the position of the qrels its label came from.
    """
    if not qrels_list:
        raise InputError("no qrels to merge")
    labels: dict[str, dict[str, int]] = {}
    source: dict[tuple[str, str], int] = {}
    for position, qrels in enumerate(qrels_list):
        for turn, items in qrels.labels.items():
            for item, label in items.items():
                known = labels.get(turn, {}).get(item)
                if known is None or (not is_judged(known) and is_judged(label)):
                    labels.setdefault(turn, {})[item] = label
                    source[turn, item] = position
    return Qrels(labels, name="+".join(q.name for q in qrels_list), source=None), source
