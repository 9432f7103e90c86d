"""Converting JSON submissions into TREC runs (SPEC "Converting runs").

Three conversions, each a generator of ranked turns ``(turn_id, [(item, score), ...])`` that a caller
streams to a file (:func:`write_ranked`) or collects into a :class:`~castregin.data.Run`:

- :func:`iter_questions`: a mixed-initiative run over a question bank (ids kept, texts matched or
  given new ids);
- :func:`iter_responses`: a main-task run to the response run that CAsT-ReGIn judged;
- :func:`iter_passages`: a main-task run to the passage ranking that NIST judged.

Problems that can be worked around are collected in a :class:`Warnings` (kind -> messages); nothing
here prints. :class:`Bank` holds the id -> text mapping, grows with new texts, and is shared by
several runs so that one text gets one id across all of them.
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from itertools import count as counting
from operator import itemgetter
from typing import TYPE_CHECKING

from ..data import Qrels, Run
from ..errors import InputError
from ..formats.common import without_cyclic_gc
from ..formats.submissions import BankFile, Submission, read_bank, read_main_run, read_mi_run
from ..formats.trec import score_texts

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

Ranked = tuple[str, list[tuple[str, float]]]
Progress = Callable[[Iterable], Iterable]

DUPLICATE_QUESTION = "duplicate question"
DUPLICATE_RESPONSE = "duplicate response"
DUPLICATE_TURN = "duplicate turn"
EMPTY_QUESTION = "empty question"
EMPTY_RESPONSE = "empty response"
UNKNOWN_ID = "unknown id"
UNLISTED_TURN = "turn not in --turns"
EMPTY_TURN = "turn without questions"
EMPTY_RESPONSE_TURN = "turn without responses"
EMPTY_PASSAGE_TURN = "turn without passages"
#: Why the passage filter (``--passage-qrels``) drops a response: the kinds of its counted warnings,
#: in the order a response is checked.
UNJUDGED_TURN = "dropped: turn not in the passage qrels"
NO_PROVENANCE = "dropped: no provenance passage"
UNJUDGED_PASSAGES = "dropped: no provenance passage judged"
BELOW_LEVEL = "dropped: provenance graded below the level"
#: The passage filter's kinds: it drops responses as asked, so ``--strict`` does not refuse them.
FILTER_KINDS = (UNJUDGED_TURN, NO_PROVENANCE, UNJUDGED_PASSAGES, BELOW_LEVEL)


class Warnings:
    """Problems worked around during a conversion: ``messages[kind]`` lists one line per occurrence.

    A line may stand for several occurrences (``count``: the passage filter says once per reason how
    many responses it dropped). The CLI prints each message and then :meth:`summary`; ``--strict``
    turns any of them into an error but the passage filter's (:data:`FILTER_KINDS`).
    """

    def __init__(self) -> None:
        self.messages: dict[str, list[str]] = {}
        self._counts: dict[str, int] = {}
        self._order: list[tuple[str, int, int]] = []

    def add(self, kind: str, message: str, count: int = 1) -> None:
        """Record ``count`` warnings of ``kind`` (one by default), told in one line."""
        messages = self.messages.setdefault(kind, [])
        self._order.append((kind, len(messages), count))
        messages.append(message)
        self._counts[kind] = self._counts.get(kind, 0) + count

    def extend(self, other: Warnings) -> None:
        """Add every warning of ``other``, in its order."""
        for kind, i, count in other._order:
            self.add(kind, other.messages[kind][i], count)

    def events(self) -> list[tuple[str, str]]:
        """``(message, kind)`` pairs in the order they were recorded."""
        return [(self.messages[kind][i], kind) for kind, i, _ in self._order]

    def counts(self) -> dict[str, int]:
        """Number of warnings per kind, in order of first occurrence."""
        return dict(self._counts)

    def strict_count(self) -> int:
        """How many warnings ``--strict`` refuses: all but the passage filter's counts."""
        return sum(n for kind, n in self._counts.items() if kind not in FILTER_KINDS)

    def lines(self) -> list[str]:
        """Every message, in the order recorded."""
        return [message for message, _ in self.events()]

    def summary(self) -> str:
        """One line: ``3 warnings: 2 unknown id, 1 empty question``."""
        total = len(self)
        counts = ", ".join(f"{n} {kind}" for kind, n in self.counts().items())
        return f"{total} warning{'s' if total != 1 else ''}: {counts}"

    def __len__(self) -> int:
        return sum(self._counts.values())

    def __bool__(self) -> bool:
        return bool(self.messages)


def fold(text: str) -> str:
    """The form texts are matched in after an exact miss: Unicode NFC, whitespace runs collapsed to one
    space, no leading or trailing whitespace. Letter case is kept: the bank holds questions that
    differ only in case under different ids."""
    return " ".join(unicodedata.normalize("NFC", text).split())


class Bank:
    """Item ids -> texts, with text matching and new ids (``Q`` + digits for questions, ``R`` for responses).

    A text is matched exactly, then after :func:`fold`; among several matches the lowest id wins. An
    unmatched text is added under the next free id: one above the highest ``<prefix><digits>`` id,
    zero-padded like it. ``new_ids`` lists the added ids in order.
    """

    def __init__(self, entries: Mapping[str, str] | None = None, prefix: str = "Q", shape: str = "object"):
        self.prefix = prefix
        self.shape = shape
        self.entries: dict[str, str] = dict(entries or {})
        self.new_ids: list[str] = []
        self._id_pattern = re.compile(rf"{re.escape(prefix)}(\d+)", re.ASCII)  # Q٢ is no number
        self._exact: dict[str, str] = {}
        self._folded: dict[str, str] = {}
        # A run's question strings already turned into ids by iter_questions (millions of lookups in a
        # large run, mostly of a few thousand strings). A bank only grows, so an answer holds, unless
        # add() is given that very text (see there).
        self._resolved: dict[str, str] = {}
        self._next, self._width = 1, 4 if prefix == "Q" else 5
        numbered = []
        for item_id in self.entries:
            match = self._id_pattern.fullmatch(item_id)
            if match:
                numbered.append((int(match.group(1)), item_id))
        if numbered:
            number, highest = max(numbered)
            self._next, self._width = number + 1, len(highest) - len(prefix)
        for item_id in sorted(self.entries, key=self._order):
            text = self.entries[item_id]
            self._exact.setdefault(text, item_id)
            self._folded.setdefault(fold(text), item_id)

    def _order(self, item_id: str):
        match = self._id_pattern.fullmatch(item_id)
        return (0, int(match.group(1)), item_id) if match else (1, 0, item_id)

    @classmethod
    def merge(cls, banks: Iterable[Mapping[str, str] | BankFile], prefix: str = "Q") -> Bank:
        """One bank from several; on an id present in several, the first given wins."""
        entries: dict[str, str] = {}
        shape = None
        for bank in banks:
            if isinstance(bank, BankFile):
                shape = shape or bank.shape
            mapping = bank.entries if isinstance(bank, BankFile) else bank
            for item_id, text in mapping.items():
                entries.setdefault(item_id, text)
        return cls(entries, prefix, shape or "object")

    @classmethod
    def read(cls, paths: Iterable[str | os.PathLike], prefix: str = "Q") -> Bank:
        """Read and merge bank files (either shape), the first given winning; the shape of the first
        is the one :meth:`text` uses."""
        return cls.merge((read_bank(path) for path in paths), prefix)

    def is_id(self, text: str) -> bool:
        """Whether ``text`` looks like an id of this bank (``Q`` + digits), present or not."""
        return self._id_pattern.fullmatch(text) is not None

    def match(self, text: str) -> str | None:
        """The id of ``text``: exact match, else match after :func:`fold`, else None."""
        found = self._exact.get(text)
        return found if found is not None else self._folded.get(fold(text))

    def add(self, text: str) -> str:
        """Add ``text`` under the next free id and return that id."""
        item_id = f"{self.prefix}{self._next:0{self._width}d}"
        while item_id in self.entries:  # an odd id such as Q00012 beside Q0012
            self._next += 1
            item_id = f"{self.prefix}{self._next:0{self._width}d}"
        self._next += 1
        self.entries[item_id] = text
        self.new_ids.append(item_id)
        self._resolved.pop(text, None)  # a text matched after folding now has an exact match
        self._exact.setdefault(text, item_id)
        self._folded.setdefault(fold(text), item_id)
        return item_id

    def id_for(self, text: str) -> str:
        """The id of ``text``, adding it to the bank when no entry matches."""
        found = self.match(text)
        return found if found is not None else self.add(text)

    def __len__(self) -> int:
        return len(self.entries)

    def text(self, shape: str | None = None) -> str:
        """The bank (with its new entries) as JSON text, in ``shape`` or the first input's shape."""
        from ..formats.submissions import bank_text

        return bank_text(self.entries, shape or self.shape, self.prefix)


def _grouped(submission: Submission, what: str, warnings: Warnings,
             official: Collection[str] | None) -> dict[str, list[int]]:
    """turn id -> indices in ``turns`` (a turn listed twice is one turn), with the turn warnings."""
    groups: dict[str, list[int]] = {}
    for index, turn_id in enumerate(submission.turns.ids):
        groups.setdefault(turn_id, []).append(index)
    for turn_id, indices in groups.items():
        if len(indices) > 1:
            where = ", ".join(f"turns[{i}]" for i in indices)
            warnings.add(DUPLICATE_TURN, f"{submission.source}: turn {turn_id} is listed {len(indices)} times "
                                         f"({where}); its {what} are taken together, in file order")
        if official is not None and turn_id not in official:
            warnings.add(UNLISTED_TURN, f"{submission.source}: turn {turn_id} is not in the official turn "
                                        f"list; kept")
    return groups


@contextlib.contextmanager
def _opened(run: Submission | str | os.PathLike, reader) -> Iterator[Submission]:
    """``run`` itself, or the run read from that path, closed (its spool deleted) at the end."""
    if isinstance(run, Submission):
        yield run
        return
    with reader(run) as submission:
        yield submission


def _identity(iterable: Iterable) -> Iterable:
    return iterable


def iter_questions(run: Submission | str | os.PathLike, bank: Bank, *,
                   official_turns: Collection[str] | None = None, depth: int | None = None,
                   warnings: Warnings | None = None, progress: Progress | None = None) -> Iterator[Ranked]:
    """Convert a mixed-initiative run, turn by turn, into ``(turn_id, [(question_id, score), ...])``.

    Ids in ``bank`` are kept; an id-shaped string absent from it is dropped (warning); a text is matched
    to the bank (:meth:`Bank.id_for`), new texts growing it. A question repeated within a turn keeps
    its highest score (and its first position); items are ranked by score descending, ties in input
    order, and cut to ``depth``. Turns come in order of first appearance; a turn left without
    questions is omitted (warning). ``progress`` may wrap the turn iteration (e.g. ``tqdm``).
    """
    warnings = warnings if warnings is not None else Warnings()
    official = set(official_turns) if official_turns is not None else None
    with _opened(run, read_mi_run) as submission:
        yield from _questions(submission, bank, official, depth, warnings, progress)


def _questions(submission: Submission, bank: Bank, official: set[str] | None, depth: int | None,
               warnings: Warnings, progress: Progress | None) -> Iterator[Ranked]:
    groups = _grouped(submission, "questions", warnings, official)
    for turn_id, indices in (progress or _identity)(groups.items()):
        ranked = _turn_by_items(submission, bank, turn_id, indices, warnings)
        if ranked is None:
            warnings.add(EMPTY_TURN, f"{submission.source}: turn {turn_id} has no questions; omitted")
            continue
        yield turn_id, ranked[:depth] if depth is not None else ranked


def _turn_by_items(submission: Submission, bank: Bank, turn_id: str, indices: list[int],
                   warnings: Warnings) -> list[tuple[str, float]] | None:
    """A turn's questions ranked (a question repeated keeps its highest score, and its first position;
    ties in input order), with their warnings in order; None when none is left."""
    source, turns = submission.source, submission.turns
    scores: dict[str, float] = {}
    get = scores.get
    for index in indices:
        texts, values = turns[index]
        # The texts seen before, looked up in one pass (in C); None for the others, resolved in order below.
        for position, known, score in zip(counting(), map(bank._resolved.get, texts), values):
            item = known if known is not None else _question_id(
                bank, texts[position], f"{source}: turns[{index}].questions[{position}]", turn_id, warnings)
            if item is None:
                continue
            previous = get(item)  # scores are floats already (Submission.turns)
            if previous is None:
                scores[item] = score
                continue
            warnings.add(DUPLICATE_QUESTION, f"{source}: turns[{index}].questions[{position}]: {item} is "
                                             f"repeated in turn {turn_id}; its highest score is kept")
            if score > previous:
                scores[item] = score
    if not scores:
        return None
    return sorted(scores.items(), key=_SCORE, reverse=True)  # stable: ties stay in input order


def _question_id(bank: Bank, text: str, where: str, turn_id: str, warnings: Warnings) -> str | None:
    """The id of a run's ``question``: a bank id as is, a text matched or added; None (with a warning)
    for an id absent from the bank or an empty question. An id found is remembered for the next time
    the same string comes (``Bank._resolved``)."""
    entries = bank.entries
    key = text if text in entries else text.strip()
    if bank.is_id(key):
        if key not in entries:
            warnings.add(UNKNOWN_ID, f"{where}: {key} is not in the question bank (turn {turn_id}); dropped")
            return None
        item = key
    elif not key:
        warnings.add(EMPTY_QUESTION, f"{where}: the question is empty (turn {turn_id}); dropped")
        return None
    else:
        item = bank.id_for(text)
    bank._resolved[text] = item
    return item


_SCORE = itemgetter(1)  # of (item, score)
_RANK = itemgetter(1)  # of (text, rank, provenance ids)


def _responses_in_rank_order(submission: Submission, indices: list[int]) -> list[tuple]:
    """The ``(text, rank, provenance ids)`` of the turn's responses by rank, ties in input order."""
    turns = submission.turns
    return sorted([response for index in indices for response in turns[index]], key=_RANK)


def iter_responses(run: Submission | str | os.PathLike, bank: Bank, *, depth: int = 3,
                   passage_qrels: Qrels | None = None, rel_level: int = 2,
                   official_turns: Collection[str] | None = None, warnings: Warnings | None = None,
                   progress: Progress | None = None) -> Iterator[Ranked]:
    """Convert a main-task run into the response run CAsT-ReGIn judged: ``(turn_id, [(R id, 1/rank)])``.

    Per turn, responses are taken by ``rank`` (ties in input order) and the first ``depth`` kept; with
    ``passage_qrels``, a response stays only if one of its provenance passages is graded >=
    ``rel_level`` for that turn. The survivors are ranked 1.. with score ``1/rank``; their texts get
    response-bank ids (new ids only for them). A text repeated within a turn is kept once (warning).
    Turns left empty by the depth cut or the passage filter are omitted. Once the run is read, the
    responses the filter dropped are counted by reason (:data:`FILTER_KINDS`), one warning each with
    an example.
    """
    warnings = warnings if warnings is not None else Warnings()
    official = set(official_turns) if official_turns is not None else None
    with _opened(run, read_main_run) as submission:
        yield from _responses(submission, bank, depth, passage_qrels, rel_level, official, warnings, progress)


def _responses(submission: Submission, bank: Bank, depth: int, passage_qrels: Qrels | None, rel_level: int,
               official: set[str] | None, warnings: Warnings, progress: Progress | None) -> Iterator[Ranked]:
    source = submission.source
    groups = _grouped(submission, "responses", warnings, official)
    # Reason -> [responses dropped, the first one's description].
    dropped: dict[str, list] = {}
    for turn_id, indices in (progress or _identity)(groups.items()):
        responses = _responses_in_rank_order(submission, indices)
        if not responses:
            warnings.add(EMPTY_RESPONSE_TURN, f"{source}: turn {turn_id} has no responses; omitted")
            continue
        grades = passage_qrels.labels.get(turn_id) if passage_qrels is not None else None
        items: list[str] = []
        for text, rank, passages in responses[:depth]:
            if passage_qrels is not None:
                reason = _filtered_out(grades, passages, rel_level)
                if reason is not None:
                    if reason not in dropped:
                        dropped[reason] = [0, _example(turn_id, rank, passages, grades, reason)]
                    dropped[reason][0] += 1
                    continue
            if not text.strip():
                warnings.add(EMPTY_RESPONSE, f"{source}: turn {turn_id}: the response at rank "
                                             f"{_rank(rank)} is empty; dropped")
                continue
            item = bank.id_for(text)
            if item in items:
                warnings.add(DUPLICATE_RESPONSE, f"{source}: turn {turn_id}: the response at rank "
                                                 f"{_rank(rank)} repeats {item}; kept once")
                continue
            items.append(item)
        if items:
            yield turn_id, [(item, 1.0 / rank) for rank, item in enumerate(items, start=1)]
    if passage_qrels is not None:
        for reason in FILTER_KINDS:
            if reason in dropped:
                count, example = dropped[reason]
                warnings.add(reason, f"{source}: {count} response{'s' if count != 1 else ''} (of the top {depth} "
                                     f"per turn) dropped by --passage-qrels {passage_qrels.name!r}: "
                                     f"{_DROPPED_BECAUSE[reason].format(level=rel_level)}; first: {example}",
                             count)


_DROPPED_BECAUSE = {
    UNJUDGED_TURN: "the qrels judge no passage of their turn",
    NO_PROVENANCE: "they have no provenance passage",
    UNJUDGED_PASSAGES: "none of their provenance passages is judged for their turn (check that the run's "
                       "passage ids are the qrels' ids)",
    BELOW_LEVEL: "their provenance passages are graded below {level}",
}


def _example(turn_id: str, rank: float, passages, grades: Mapping[str, int] | None, reason: str) -> str:
    """The first response dropped for ``reason``, as the warning shows it."""
    where = f"turn {turn_id}, rank {_rank(rank)}"
    if reason == UNJUDGED_PASSAGES and grades is not None:  # the qrels judge the turn: they hold its grades
        return f"{where}, passage {passages[0]!r} (the qrels judge {next(iter(grades))!r} there)"
    return where


def _filtered_out(grades: Mapping[str, int] | None, passages, rel_level: int) -> str | None:
    """Why the passage filter drops a response (one of :data:`FILTER_KINDS`), or None when it keeps it.

    ``grades`` are the passage qrels' labels of the response's turn (None: the qrels lack the turn).
    """
    if grades is None:
        return UNJUDGED_TURN
    if not passages:
        return NO_PROVENANCE
    judged = [grades[passage] for passage in passages if passage in grades]
    if not judged:
        return UNJUDGED_PASSAGES
    return None if max(judged) >= rel_level else BELOW_LEVEL


def _rank(rank: float) -> str:
    return str(int(rank)) if float(rank).is_integer() else repr(rank)


def iter_passages(run: Submission | str | os.PathLike, *, official_turns: Collection[str] | None = None,
                  warnings: Warnings | None = None, progress: Progress | None = None) -> Iterator[Ranked]:
    """Convert a main-task run into the passage ranking NIST judged, as the official CAsT tools did.

    Per turn: the provenance passages of the responses in rank order (ties in input order), each in
    provenance order, each passage once (its first occurrence); scores 100, 99, 98, ...
    """
    warnings = warnings if warnings is not None else Warnings()
    official = set(official_turns) if official_turns is not None else None
    with _opened(run, read_main_run) as submission:
        yield from _passages(submission, official, warnings, progress)


def _passages(submission: Submission, official: set[str] | None, warnings: Warnings,
              progress: Progress | None) -> Iterator[Ranked]:
    groups = _grouped(submission, "responses", warnings, official)
    for turn_id, indices in (progress or _identity)(groups.items()):
        seen: dict[str, None] = {}
        for *_, passages in _responses_in_rank_order(submission, indices):
            for passage in passages:
                seen.setdefault(passage, None)
        if not seen:
            warnings.add(EMPTY_PASSAGE_TURN, f"{submission.source}: turn {turn_id} has no provenance passages; "
                                             "omitted")
            continue
        yield turn_id, [(passage, float(100 - i)) for i, passage in enumerate(seen)]


def write_ranked(handle: SupportsWrite[str], ranked: Iterable[Ranked], tag: str) -> int:
    """Stream ranked turns as TREC run lines (tab-separated, ranks from 1); returns the line count."""
    lines = 0
    write = handle.write
    tail = f"\t{tag}\n"
    ranks = ["\t0\t"]  # ranks[r]: the text between an item and its score
    for turn_id, items in ranked:
        count = len(items)
        if not count:
            continue
        if len(ranks) <= count:
            ranks.extend(f"\t{rank}\t" for rank in range(len(ranks), count + 1))
        names, scores = zip(*items, strict=True)
        # The turn's lines in one join, their fields laid out by slices (in C): 5 strings a line.
        fields = [f"{turn_id}\tQ0\t"] * (5 * count)
        fields[1::5] = names
        fields[2::5] = ranks[1:count + 1]
        fields[3::5] = score_texts(scores)
        fields[4::5] = [tail] * count
        write("".join(fields))
        lines += count
    return lines


def to_run(ranked: Iterable[Ranked], tag: str, source: str | None = None) -> Run:
    """Collect ranked turns into a :class:`~castregin.data.Run`."""
    run = Run(tag=tag, source=source)
    for turn_id, items in ranked:
        run.scores[turn_id] = dict(items)
        run.ranks[turn_id] = {item: rank for rank, (item, _) in enumerate(items, start=1)}
    return run


@without_cyclic_gc
def convert_questions(path: str | os.PathLike, bank: Bank, *, official_turns: Collection[str] | None = None,
                      depth: int | None = None) -> tuple[Run, Warnings]:
    """A mixed-initiative JSON run as a :class:`Run` over ``bank`` (which grows), with the warnings."""
    warnings = Warnings()
    with read_mi_run(path) as submission:
        ranked = iter_questions(submission, bank, official_turns=official_turns, depth=depth, warnings=warnings)
        return to_run(ranked, submission.tag, submission.source), warnings


@without_cyclic_gc
def convert_responses(path: str | os.PathLike, bank: Bank, *, depth: int = 3, passage_qrels: Qrels | None = None,
                      rel_level: int = 2, official_turns: Collection[str] | None = None) -> tuple[Run, Warnings]:
    """A main-task JSON run as a response :class:`Run` over ``bank`` (which grows), with the warnings."""
    warnings = Warnings()
    with read_main_run(path) as submission:
        ranked = iter_responses(submission, bank, depth=depth, passage_qrels=passage_qrels, rel_level=rel_level,
                                official_turns=official_turns, warnings=warnings)
        return to_run(ranked, submission.tag, submission.source), warnings


@without_cyclic_gc
def convert_passages(path: str | os.PathLike, *,
                     official_turns: Collection[str] | None = None) -> tuple[Run, Warnings]:
    """A main-task JSON run as the passage :class:`Run` NIST judged, with the warnings."""
    warnings = Warnings()
    with read_main_run(path) as submission:
        ranked = iter_passages(submission, official_turns=official_turns, warnings=warnings)
        return to_run(ranked, submission.tag, submission.source), warnings


def output_paths(inputs: list[str], output: str | None, out_dir: str | None) -> list[str]:
    """Where each input's run goes: ``output`` for a single input, else ``out_dir/<stem>.run``.

    Two inputs with the same stem would overwrite each other: an error.
    """
    from ..formats.common import stem

    if output is not None:
        return [output]
    if out_dir is None:
        raise ValueError("where to write: an output or a directory")
    paths: list[str] = []
    seen: dict[str, str] = {}
    for path in inputs:
        target = os.path.join(out_dir, f"{stem(path)}.run")
        if target in seen:
            raise InputError(f"{seen[target]} and {path} would both be written to {target}; rename one",
                             source=path)
        seen[target] = path
        paths.append(target)
    return paths
