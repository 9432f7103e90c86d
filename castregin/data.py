"""The plain data castregin works on: runs and qrels, keyed by turn then item."""

from __future__ import annotations

# Plain classes, not dataclasses: every command imports this module, and dataclasses loads inspect, ast and dis.


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
    import re  # here: the readers and a ten-line trec_eval never sort for people

    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


class Run:
    """A ranking of items per turn, as in a TREC run file.

    ``scores[turn][item]`` is the score and ``ranks[turn][item]`` the rank column, both in file
    order. ``tag`` is the run tag (sixth column) of the first line; ``name`` names the run where no tag
    exists. Two runs are equal when all of these are.
    """

    tag: str
    scores: dict[str, dict[str, float]]
    ranks: dict[str, dict[str, float]]
    source: str | None
    #: The tag of the file's last line (trec_eval's runid), where the run was read from a file.
    last_tag: str | None

    def __init__(self, tag: str, scores: dict[str, dict[str, float]] | None = None,
                 ranks: dict[str, dict[str, float]] | None = None, source: str | None = None,
                 last_tag: str | None = None):
        self.tag = tag
        self.scores = {} if scores is None else scores
        self.ranks = {} if ranks is None else ranks
        self.source = source
        self.last_tag = last_tag

    def _fields(self) -> tuple:
        return self.tag, self.scores, self.ranks, self.source, self.last_tag

    #: Equal by value and changed in place (its dicts): not hashable, as a dataclass of the kind is not.
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Run) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(tag={self.tag!r}, scores={self.scores!r}, ranks={self.ranks!r}, "
                f"source={self.source!r}, last_tag={self.last_tag!r})")

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


class Qrels:
    """Graded labels per (turn, item), as in a TREC qrels file. Two qrels are equal when labels, name and source
    are."""

    labels: dict[str, dict[str, int]]
    name: str
    source: str | None

    def __init__(self, labels: dict[str, dict[str, int]] | None = None, name: str = "qrels",
                 source: str | None = None):
        self.labels = {} if labels is None else labels
        self.name = name
        self.source = source

    def _fields(self) -> tuple:
        return self.labels, self.name, self.source

    #: Equal by value and changed in place (its dicts): not hashable, as a dataclass of the kind is not.
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Qrels) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(labels={self.labels!r}, name={self.name!r}, source={self.source!r})"

    @property
    def turns(self) -> list[str]:
        return list(self.labels)

    def __len__(self) -> int:
        return sum(len(items) for items in self.labels.values())

    def subset(self, turns) -> Qrels:
        """The qrels of the given turns only (in this qrels' order)."""
        import copy  # here: only the commands that keep some turns need it

        keep = set(turns)
        # copy.copy keeps a diversity qrels' per-subtopic labels (castregin.formats.diversity.SubtopicLabels).
        return Qrels({t: copy.copy(i) for t, i in self.labels.items() if t in keep}, self.name, self.source)


class StratumLabels(dict):
    """One turn's labels of a stratified qrels, ``{item: label}``, and in ``strata`` each item's stratum: a
    measure's rule sees a turn's labels only, and the inferred measures need the strata with them."""

    def __init__(self, *args, strata: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.strata: dict[str, str] = strata if strata is not None else {}


class StratifiedQrels(Qrels):
    """The qrels of a sampled pool: labels per (turn, item), and the stratum each pooled item was sampled from.

    ``labels[turn][item]`` is the judgment (0 and up) or a label below 0 for an item of the pool that
    was not sampled; ``strata[turn][item]`` its stratum, a name (``"1"``, ``"2"``...). Each turn's labels
    are a :class:`StratumLabels` holding that turn's strata (see :mod:`castregin.formats.strata`).
    """

    strata: dict[str, dict[str, str]]

    def __init__(self, labels: dict[str, dict[str, int]] | None = None, name: str = "qrels",
                 source: str | None = None, strata: dict[str, dict[str, str]] | None = None):
        super().__init__(labels, name, source)
        self.strata = {} if strata is None else strata
        for turn, items in self.labels.items():
            turn_strata = self.strata.setdefault(turn, {})
            if not isinstance(items, StratumLabels) or items.strata is not turn_strata:
                self.labels[turn] = StratumLabels(items, strata=turn_strata)

    def _fields(self) -> tuple:
        return self.labels, self.name, self.source, self.strata

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(labels={self.labels!r}, name={self.name!r}, source={self.source!r}, "
                f"strata={self.strata!r})")

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
