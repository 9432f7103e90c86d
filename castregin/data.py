"""The plain data castregin works on: runs and qrels, keyed by turn then item."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field


def is_judged(label: int) -> bool:
    """Whether a qrels label is a judgment: labels below 0 (CAsT-ReGIn's -1) mean "in the pool but
    unjudged", a hole that ``qrels merge`` fills, ``judge --only-unjudged`` asks for and ``agreement``
    leaves out; 0 and above are judgments."""
    return label >= 0


def judged_labels(labels) -> dict[str, dict[str, int]]:
    """``labels`` (turn -> item -> label) without the unjudged ones (:func:`is_judged`); a turn left
    with none is left out."""
    kept = {turn: {item: label for item, label in items.items() if is_judged(label)} for turn, items in labels.items()}
    return {turn: items for turn, items in kept.items() if items}


def topic_of(turn: str) -> str:
    """The topic of a turn id: the part before the first ``_`` (``132_1-1`` -> ``132``)."""
    return turn.split("_", 1)[0]


def natural_key(text: str) -> list:
    """Sort key that puts ``132_2-9`` before ``132_2-11`` (for people; files use byte order)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


@dataclass
class Run:
    """A ranking of items per turn, as in a TREC run file.

    ``scores[turn][item]`` is the score and ``ranks[turn][item]`` the rank column, both in file
    order. ``tag`` is the run tag (sixth column) of the first line; ``name`` names the run where no tag
    exists.
    """

    tag: str
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    ranks: dict[str, dict[str, float]] = field(default_factory=dict)
    source: str | None = None
    #: The tag of the file's last line (trec_eval's runid), where the run was read from a file.
    last_tag: str | None = None

    @property
    def turns(self) -> list[str]:
        return list(self.scores)

    def ranked(self, turn: str) -> list[str]:
        """Items of ``turn`` in trec_eval's order: score descending, ties by item id descending."""
        items = self.scores.get(turn, {})
        return sorted(items, key=lambda item: (items[item], item), reverse=True)

    def top_by_rank(self, turn: str, depth: int) -> list[str]:
        """The ``depth`` items of ``turn`` with the lowest rank column (the participant's order)."""
        ranks = self.ranks.get(turn, {})
        order = sorted(enumerate(ranks), key=lambda pair: (ranks[pair[1]], pair[0]))
        return [item for _, item in order[:depth]]

    def __len__(self) -> int:
        return sum(len(items) for items in self.scores.values())


@dataclass
class Qrels:
    """Graded labels per (turn, item), as in a TREC qrels file."""

    labels: dict[str, dict[str, int]] = field(default_factory=dict)
    name: str = "qrels"
    source: str | None = None

    @property
    def turns(self) -> list[str]:
        return list(self.labels)

    def __len__(self) -> int:
        return sum(len(items) for items in self.labels.values())

    def subset(self, turns) -> Qrels:
        """The qrels of the given turns only (in this qrels' order)."""
        keep = set(turns)
        # copy.copy keeps a diversity qrels' per-subtopic labels (castregin.formats.diversity.SubtopicLabels).
        return Qrels({t: copy.copy(i) for t, i in self.labels.items() if t in keep}, self.name, self.source)


class StratumLabels(dict):
    """One turn's labels of a stratified qrels, ``{item: label}``, and in ``strata`` each item's stratum: a
    measure's rule sees a turn's labels only, and the inferred measures need the strata with them."""

    def __init__(self, *args, strata: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.strata: dict[str, str] = strata if strata is not None else {}


@dataclass
class StratifiedQrels(Qrels):
    """The qrels of a sampled pool: labels per (turn, item), and the stratum each pooled item was sampled from.

    ``labels[turn][item]`` is the judgment (0 and up) or a label below 0 for an item of the pool that
    was not sampled; ``strata[turn][item]`` its stratum, a name (``"1"``, ``"2"``...). Each turn's labels
    are a :class:`StratumLabels` holding that turn's strata (see :mod:`castregin.formats.strata`).
    """

    strata: dict[str, dict[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for turn, items in self.labels.items():
            strata = self.strata.setdefault(turn, {})
            if not isinstance(items, StratumLabels) or items.strata is not strata:
                self.labels[turn] = StratumLabels(items, strata=strata)

    def add(self, turn: str, item: str, stratum: str, label: int) -> None:
        """Put ``item`` of ``turn`` in ``stratum`` with ``label`` (below 0: pooled, not sampled)."""
        labels = self.labels.get(turn)
        if labels is None:
            labels = self.labels[turn] = StratumLabels(strata=self.strata.setdefault(turn, {}))
        labels[item] = label
        self.strata[turn][item] = stratum

    def judged(self) -> Qrels:
        """The sampled items' judgments as plain qrels (unsampled items left out, and turns left with none)."""
        return Qrels(judged_labels(self.labels), self.name, self.source)

    def subset(self, turns) -> StratifiedQrels:
        """The stratified qrels of the given turns only (in this qrels' order)."""
        keep = set(turns)
        return StratifiedQrels({t: dict(items) for t, items in self.labels.items() if t in keep}, self.name,
                               self.source, {t: dict(self.strata[t]) for t in self.labels if t in keep})
