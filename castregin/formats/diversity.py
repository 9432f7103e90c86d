"""Diversity qrels (``topic subtopic item label``), and the lines gdeval.pl and ndeval.c read, as they read them.

A diversity qrels (TREC Web track, ndeval's input) judges each item once per subtopic; an ordinary
qrels (``turn 0 item label``) is one with the single subtopic ``0``. :func:`read_diversity_qrels` gives a
:class:`~castregin.data.Qrels` whose labels per turn are a :class:`SubtopicLabels`: each item's largest
label (what trec_eval's measures read) and, in ``subtopics``, its label per subtopic (what ndeval's
measures read).

The drop-ins ``castregin gdeval`` and ``castregin ndeval`` read their files line by line with the rules
of the originals (:func:`gdeval_qrels_lines` ...); ids are kept as given unless ``rewrite_ids`` asks for
the originals' rewrite (gdeval keeps what follows the last ``-`` of a topic id; ndeval, for a run's id
not starting with a digit, what follows the first ``-``), which must then leave a number.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ..data import Qrels
from ..errors import InputError
from .common import decode, display_name, note_byte_order_mark, read_bytes, read_text, stem
from .trec import line_fields, refuse_nul

if TYPE_CHECKING:
    import numpy as np

DIVERSITY_WHAT = "diversity qrels (topic subtopic item label)"


class SubtopicLabels(dict):
    """One turn's labels: ``{item: largest label}``, and ``subtopics``: ``{item: {subtopic: label}}``."""

    def __init__(self, *args, subtopics: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.subtopics: dict[str, dict[str, int]] = subtopics if subtopics is not None else {}


def read_diversity_qrels(path: str | os.PathLike, name: str | None = None) -> Qrels:
    """Read a diversity qrels (``topic subtopic item label``, integer labels, any whitespace).

    An item judged twice for one subtopic of a turn is an error (ndeval would count it twice in the
    subtopic's number of relevant items).
    """
    return parse_diversity_qrels(read_text(path), display_name(path), name or stem(path))


def parse_diversity_qrels(text: str, source: str, name: str) -> Qrels:
    """:func:`read_diversity_qrels` on a file's text, which ``source`` names in messages."""
    qrels = Qrels(name=name, source=source)
    by_turn: dict[str, SubtopicLabels] = {}
    for number, fields in line_fields(text, source, DIVERSITY_WHAT):
        if len(fields) != 4:
            raise InputError(f"expected 4 columns (topic subtopic item label), found {len(fields)}",
                             source=source, line=number)
        turn, subtopic, item, label_text = fields
        if not re.fullmatch(r"[+-]?[0-9]+", label_text):
            raise InputError(f"label {label_text!r} is not an integer", source=source, line=number)
        label = int(label_text)
        labels = by_turn.setdefault(turn, SubtopicLabels())
        judged = labels.subtopics.setdefault(item, {})
        if subtopic in judged:
            raise InputError(f"item {item} is judged twice for subtopic {subtopic} of turn {turn}",
                             source=source, line=number)
        judged[subtopic] = label
        labels[item] = max(label, labels.get(item, label))
    qrels.labels.update(by_turn)
    return qrels


def diversity_reader(measures):
    """:func:`read_diversity_qrels` when one of the parsed ``measures`` is ndeval's (its definition's
    ``diversity``: it reads each item's label per subtopic; an ordinary qrels reads as one subtopic), else None:
    how a qrels file must be read for them."""
    if any(getattr(getattr(measure, "definition", None), "diversity", False) for measure in measures):
        return read_diversity_qrels
    return None


# --- the originals' line readers ----------------------------------------------------------------------------

_PERL_NUMBER = re.compile(r"\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")


def perl_number(text: str | None) -> float:
    """A string as Perl reads it as a number: its leading decimal number, else 0."""
    match = _PERL_NUMBER.match(text or "")
    return float(match[1]) if match else 0.0


def natural_number(text: str) -> int:
    """ndeval's ``naturalNumber``: digits only, at most 1,000,009-ish (its bound), else -1."""
    value = 0
    if not text:
        return -1
    for char in text:
        if not "0" <= char <= "9":
            return -1
        if value > 100000:
            return -1
        value = 10 * value + ord(char) - 48
    return value


def gdeval_topic(text: str) -> str:
    """gdeval's rewrite of a topic id: what follows its last ``-``."""
    return text.rsplit("-", 1)[-1]


def ndeval_run_topic(text: str) -> int:
    """ndeval's ``parseTopic`` of a run's topic id: a number, or the number after the first ``-``; -1 if none."""
    if text[:1].isdigit() and "0" <= text[0] <= "9":
        return natural_number(text)
    return natural_number(text.partition("-")[2])


class GdevalQrel(NamedTuple):
    topic: str
    item: str
    label: int


class GdevalLine(NamedTuple):
    topic: str
    item: str
    score: float
    runid: str


class NdevalQrel(NamedTuple):
    topic: str
    subtopic: str
    item: str
    label: int


class NdevalLine(NamedTuple):
    topic: str
    item: str
    rank: int
    score: float
    runid: str


@dataclass
class DiversityRun:
    """A run's lines as gdeval.pl or ndeval.c reads them, as columns: an entry a line, in the file's order.

    Read by pyarrow where the fast path can vouch for the file, else made from the originals' line
    readers' tuples (:func:`gdeval_run_lines`, :func:`ndeval_run_lines`): the same values either way.
    """

    source: str
    #: The distinct topic ids (as given, or rewritten); ``topic_codes`` (int32) index them.
    topics: list[str]
    topic_codes: np.ndarray
    #: Each line's item id (a pyarrow string array).
    items: Any
    #: ndeval's rank column (gdeval ignores it: 0s) and the scores.
    ranks: np.ndarray
    scores: np.ndarray
    #: The first line's run id (ndeval's) and the last line's (gdeval's); None for an empty run.
    first_runid: str | None
    last_runid: str | None

    def __len__(self) -> int:
        return len(self.topic_codes)


@dataclass
class DiversityJudgments:
    """A qrels' lines as gdeval.pl or ndeval.c reads them, as columns (see :class:`DiversityRun`)."""

    source: str
    topics: list[str]
    topic_codes: np.ndarray
    items: Any
    #: Each line's subtopic (ndeval's, a natural number; 0 in gdeval's qrels) and label.
    subtopics: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.topic_codes)

    def topics_with_a_label_above(self, label: int) -> set[str]:
        """The topics with a line labelled above ``label``."""
        import numpy as np

        return {self.topics[code] for code in np.unique(self.topic_codes[self.labels > label]).tolist()}


def item_codes(items) -> tuple[list[str] | Any, np.ndarray]:
    """(distinct items, each line's code): two lines name the same item exactly when their codes are equal."""
    from .arrow_csv import encode

    return encode(items)


def first_repeat(*codes: np.ndarray) -> int | None:
    """The first line (in the file's order) whose tuple of ``codes`` an earlier line has, or None."""
    import numpy as np

    if not len(codes[0]):
        return None
    order = np.lexsort(codes[::-1])  # stable: within a tuple, the lines in the file's order
    same = np.ones(len(order) - 1, dtype=bool)
    for column in codes:
        ordered = column[order]
        same &= ordered[1:] == ordered[:-1]
    repeats = order[1:][same]
    return int(repeats.min()) if len(repeats) else None


#: What the originals do with a byte-order mark, which castregin skips (said in a warning: docs/gdeval-ndeval.md).
GDEVAL_BYTE_ORDER_MARK = ("gdeval.pl reads as part of the first line's topic id, stopping with a format error unless "
                          "the id holds a '-' (its rewrite drops what precedes the last one)")
NDEVAL_BYTE_ORDER_MARK = ("ndeval reads as part of the first line's topic id, stopping with a syntax error unless a "
                          "run's id holds a '-' (ndeval reads the number after the first one)")


def _lines(path, data: bytes | None = None, byte_order_mark: str = GDEVAL_BYTE_ORDER_MARK) -> tuple[str, list[str]]:
    source = display_name(path)
    data = read_bytes(path) if data is None else data
    note_byte_order_mark(data, source, byte_order_mark)
    text = decode(data, source)
    refuse_nul(text, source)
    # Perl's <> splits at \n only; gdeval then deletes every \r and \n.
    return source, [line.replace("\r", "") for line in text.split("\n")[:-1 if text.endswith("\n") else None]]


def gdeval_qrels_lines(path, max_grade: int, rewrite_ids: bool, data: bytes | None = None) -> list[GdevalQrel]:
    """gdeval's qrels lines: ``topic 0 item label``, labels whole numbers up to ``max_grade`` (the reference
    reader, line by line: every file :func:`gdeval_qrels` cannot read fast)."""
    source, lines = _lines(path, data)
    out = []
    for number, line in enumerate(lines, start=1):
        fields = line.split() + [""] * 4
        topic, zero, item, label = fields[:4]
        topic = gdeval_topic(topic) if rewrite_ids else topic
        good_topic = re.fullmatch(r"[0-9]+", topic) if rewrite_ids else topic
        if not (good_topic and perl_number(zero) == 0 and re.fullmatch(r"-?[0-9]+", label)
                and int(label) <= max_grade):
            raise InputError(f"format error (gdeval: topic{' digits' if rewrite_ids else ''}, 0, item, a whole-number "
                             f"label up to the maximum grade {max_grade})", source=source, line=number)
        out.append(GdevalQrel(topic, item, int(label)))
    return out


def gdeval_run_lines(path, rewrite_ids: bool, data: bytes | None = None) -> list[GdevalLine]:
    """gdeval's run lines: ``topic Q0 item rank score runid``, ranks digits, the run id not empty or ``0`` (the
    reference reader, line by line)."""
    source, lines = _lines(path, data)
    out = []
    for number, line in enumerate(lines, start=1):
        fields = line.split() + [""] * 6
        topic, q0, item, rank, score, runid = fields[:6]
        topic = gdeval_topic(topic) if rewrite_ids else topic
        good_topic = re.fullmatch(r"[0-9]+", topic) if rewrite_ids else topic
        if not (good_topic and q0 == "Q0" and re.fullmatch(r"[0-9]+", rank) and runid not in ("", "0")):
            raise InputError("format error (gdeval: topic, Q0, item, a whole-number rank, score, a run id)",
                             source=source, line=number)
        if "%" in runid:
            raise InputError(f"run id {runid!r} holds '%', which gdeval prints as a printf format", source=source,
                             line=number)
        out.append(GdevalLine(topic, item, perl_number(score), runid))
    return out


def _c_lines(path, what: str, data: bytes | None) -> tuple[str, list[list[str]]]:
    source, lines = _lines(path, data, NDEVAL_BYTE_ORDER_MARK)
    if not lines:
        raise InputError(f"{what} is empty", source=source)
    return source, [line.split() for line in lines]


def ndeval_qrels_lines(path, rewrite_ids: bool, data: bytes | None = None) -> list[NdevalQrel]:
    """ndeval's qrels lines: ``topic subtopic item label``, each a natural number but the item (the reference
    reader, line by line)."""
    source, rows = _c_lines(path, "qrel file", data)
    out = []
    for number, fields in enumerate(rows, start=1):
        ok = len(fields) >= 4 and natural_number(fields[1]) >= 0 and natural_number(fields[3]) >= 0
        if ok and rewrite_ids:
            ok = natural_number(fields[0]) >= 0
        if not ok:
            raise InputError("syntax error (ndeval: topic subtopic item label; subtopic and label natural numbers"
                             f"{', topic too' if rewrite_ids else ''})", source=source, line=number)
        topic = str(natural_number(fields[0])) if rewrite_ids else fields[0]
        out.append(NdevalQrel(topic, str(natural_number(fields[1])), fields[2], natural_number(fields[3])))
    return out


def ndeval_run_lines(path, rewrite_ids: bool, data: bytes | None = None) -> list[NdevalLine]:
    """ndeval's run lines: ``topic Q0 item rank score runid``, ranks natural numbers (the reference reader, line by
    line)."""
    source, rows = _c_lines(path, "run file", data)
    out = []
    for number, fields in enumerate(rows, start=1):
        ok = len(fields) >= 6 and natural_number(fields[3]) >= 0
        if ok and rewrite_ids:
            ok = ndeval_run_topic(fields[0]) >= 0
        if not ok:
            raise InputError("syntax error (ndeval: topic Q0 item rank score runid, ranks natural numbers)",
                             source=source, line=number)
        topic = str(ndeval_run_topic(fields[0])) if rewrite_ids else fields[0]
        score = perl_number(fields[4])  # sscanf %lf: its leading number (0 if none: sscanf leaves it unset)
        out.append(NdevalLine(topic, fields[2], natural_number(fields[3]), score, fields[5]))
    return out


# --- the same files read fast: columns, checked in bulk ------------------------------------------------------------
#
# pyarrow splits the lines (where castregin.formats.arrow_csv can vouch that it splits them as the line readers
# do); each column is checked as a whole against what the line reader would accept, and any file with a line
# the checks do not vouch for is read again by the line reader, which accepts it or names the line.

#: Digits of a whole number read here (longer ones, leading zeros and all, go line by line).
_NATURAL_DIGITS = 18


def gdeval_qrels(path, max_grade: int, rewrite_ids: bool) -> DiversityJudgments:
    """gdeval's qrels (``topic 0 item label``, labels whole numbers up to ``max_grade``) as columns."""
    from .arrow_csv import split_lines

    columns, data = split_lines(path, ["topic", "zero", "item", "label"], digits=("zero",))
    if columns is not None:
        labels = _whole_numbers(columns["label"])
        topics = _topics(columns["topic"], _gdeval_rewrite if rewrite_ids else None)
        # perl_number of digits: their value (0 for 0, 00 ...).
        if labels is not None and topics is not None and not columns["zero"].any() and not (labels > max_grade).any():
            return DiversityJudgments(display_name(path), *topics, columns["item"], labels * 0, labels)
    lines = gdeval_qrels_lines(path, max_grade, rewrite_ids, data)
    return _judgments(display_name(path), lines, [0] * len(lines))


def _run_columns(path):
    """A run's six columns (``topic Q0 item rank score runid``) read at once (:func:`castregin.formats.arrow_csv.
    split_lines`: None where a line does not fit), and the bytes read."""
    from .arrow_csv import split_lines

    return split_lines(path, ["topic", "q0", "item", "rank", "score", "runid"], digits=("rank",), decimals=("score",))


def gdeval_run(path, rewrite_ids: bool) -> DiversityRun:
    """gdeval's run (``topic Q0 item rank score runid``) as columns."""
    import numpy as np

    columns, data = _run_columns(path)
    if columns is not None:
        pc = _compute()
        runids = columns["runid"]
        distinct = pc.unique(runids).to_pylist()
        topics = _topics(columns["topic"], _gdeval_rewrite if rewrite_ids else None)
        if (topics is not None and pc.unique(columns["q0"]).to_pylist() == ["Q0"] and "0" not in distinct
                and not any("%" in runid for runid in distinct)):
            ranks = np.zeros(len(runids), dtype=np.int64)  # gdeval reads none
            return DiversityRun(display_name(path), *topics, columns["item"], ranks, columns["score"],
                                runids[0].as_py(), runids[-1].as_py())
    lines = gdeval_run_lines(path, rewrite_ids, data)
    return _run(display_name(path), lines, [0] * len(lines))


def ndeval_qrels(path, rewrite_ids: bool) -> DiversityJudgments:
    """ndeval's qrels (``topic subtopic item label``, natural numbers but the item) as columns."""
    from .arrow_csv import split_lines

    columns, data = split_lines(path, ["topic", "subtopic", "item", "label"], digits=("subtopic", "label"))
    if columns is not None:
        subtopics, labels = _naturals(columns["subtopic"]), _naturals(columns["label"])
        topics = _topics(columns["topic"], _ndeval_qrels_rewrite if rewrite_ids else None)
        if subtopics is not None and labels is not None and topics is not None:
            return DiversityJudgments(display_name(path), *topics, columns["item"], subtopics, labels)
    lines = ndeval_qrels_lines(path, rewrite_ids, data)
    return _judgments(display_name(path), lines, [int(line.subtopic) for line in lines])


def ndeval_run(path, rewrite_ids: bool) -> DiversityRun:
    """ndeval's run (``topic Q0 item rank score runid``, ranks natural numbers) as columns."""
    columns, data = _run_columns(path)
    if columns is not None:
        ranks = _naturals(columns["rank"])
        topics = _topics(columns["topic"], _ndeval_run_rewrite if rewrite_ids else None)
        if ranks is not None and topics is not None:
            runids = columns["runid"]
            return DiversityRun(display_name(path), *topics, columns["item"], ranks, columns["score"],
                                runids[0].as_py(), runids[-1].as_py())
    lines = ndeval_run_lines(path, rewrite_ids, data)
    return _run(display_name(path), lines, [line.rank for line in lines])


def _compute():
    from ..arrays import arrow

    return arrow()[1]


def _whole_numbers(column) -> np.ndarray | None:
    """A column of whole numbers (``-?[0-9]+``, of at most 18 digits) as int64, or None."""
    import numpy as np

    from ..arrays import arrow, to_numpy

    pa, pc, _ = arrow()
    if not pc.all(pc.match_substring_regex(column, rf"^-?[0-9]{{1,{_NATURAL_DIGITS}}}$")).as_py():
        return None
    return to_numpy(pc.cast(column, pa.int64()), np.int64)


def _naturals(values: np.ndarray) -> np.ndarray | None:
    """Digits (uint64) as :func:`natural_number` reads them, as int32 (they are below 1,000,010), or None where it
    would not."""
    import numpy as np

    # natural_number gives up once the digits read so far exceed 100000, before adding the next one.
    return None if (values // 10 > 100000).any() else values.astype(np.int32)


def _gdeval_rewrite(topic: str) -> str | None:
    rewritten = gdeval_topic(topic)
    return rewritten if re.fullmatch(r"[0-9]+", rewritten) else None


def _ndeval_qrels_rewrite(topic: str) -> str | None:
    value = natural_number(topic)
    return str(value) if value >= 0 else None


def _ndeval_run_rewrite(topic: str) -> str | None:
    value = ndeval_run_topic(topic)
    return str(value) if value >= 0 else None


def _topics(column, rewrite) -> tuple[list[str], np.ndarray] | None:
    """The distinct topics and each line's code (int32), each topic id mapped by ``rewrite`` (None where a topic
    cannot be rewritten: None in all) to the one the original reads."""
    import numpy as np

    from .arrow_csv import encode

    distinct, codes = encode(column)
    topics = distinct.to_pylist()
    if rewrite is None:
        return topics, codes
    rewritten = [rewrite(topic) for topic in topics]
    if None in rewritten:
        return None
    # Two ids may read as one topic (ndeval reads 007 as 7): their lines join it.
    index: dict[str, int] = {}
    merged = np.array([index.setdefault(topic, len(index)) for topic in rewritten], dtype=np.int32)
    return list(index), merged[codes]


def _codes_of(values: list[str]) -> tuple[list[str], np.ndarray]:
    import numpy as np

    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(value, len(index)) for value in values), dtype=np.int32, count=len(values))
    return list(index), codes


def _judgments(source: str, lines: list, subtopics: list[int]) -> DiversityJudgments:
    import numpy as np

    from ..arrays import strings

    topics, codes = _codes_of([line.topic for line in lines])
    return DiversityJudgments(source, topics, codes, strings([line.item for line in lines]),
                              np.array(subtopics, dtype=np.int64),
                              np.array([line.label for line in lines], dtype=np.int64))


def _run(source: str, lines: list, ranks: list[int]) -> DiversityRun:
    import numpy as np

    from ..arrays import strings

    topics, codes = _codes_of([line.topic for line in lines])
    return DiversityRun(source, topics, codes, strings([line.item for line in lines]),
                        np.array(ranks, dtype=np.int64), np.array([line.score for line in lines], dtype=np.float64),
                        lines[0].runid if lines else None, lines[-1].runid if lines else None)
