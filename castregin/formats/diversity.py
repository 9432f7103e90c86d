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
from typing import NamedTuple

from ..data import Qrels
from ..errors import InputError
from .common import decode, display_name, note_byte_order_mark, read_bytes, read_text, stem
from .trec import refuse_nul

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
    refuse_nul(text, source)
    seen = False
    by_turn: dict[str, SubtopicLabels] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        seen = True
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
    if not seen:
        raise InputError(f"the file is empty, expected a {DIVERSITY_WHAT}", source=source)
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


#: What the originals do with a byte-order mark, which castregin skips (said in a warning: docs/gdeval-ndeval.md).
GDEVAL_BYTE_ORDER_MARK = ("gdeval.pl reads as part of the first line's topic id, stopping with a format error unless "
                          "the id holds a '-' (its rewrite drops what precedes the last one)")
NDEVAL_BYTE_ORDER_MARK = ("ndeval reads as part of the first line's topic id, stopping with a syntax error unless a "
                          "run's id holds a '-' (ndeval reads the number after the first one)")


def _lines(path, byte_order_mark: str = GDEVAL_BYTE_ORDER_MARK) -> tuple[str, list[str]]:
    source = display_name(path)
    data = read_bytes(path)
    note_byte_order_mark(data, source, byte_order_mark)
    text = decode(data, source)
    refuse_nul(text, source)
    # Perl's <> splits at \n only; gdeval then deletes every \r and \n.
    return source, [line.replace("\r", "") for line in text.split("\n")[:-1 if text.endswith("\n") else None]]


def gdeval_qrels(path, max_grade: int, rewrite_ids: bool) -> list[GdevalQrel]:
    """gdeval's qrels lines: ``topic 0 item label``, labels whole numbers up to ``max_grade``."""
    source, lines = _lines(path)
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


def gdeval_run(path, rewrite_ids: bool) -> list[GdevalLine]:
    """gdeval's run lines: ``topic Q0 item rank score runid``, ranks digits, the run id not empty or ``0``."""
    source, lines = _lines(path)
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


def _c_lines(path, what: str) -> tuple[str, list[list[str]]]:
    source, lines = _lines(path, NDEVAL_BYTE_ORDER_MARK)
    if not lines:
        raise InputError(f"{what} is empty", source=source)
    return source, [line.split() for line in lines]


def ndeval_qrels(path, rewrite_ids: bool) -> list[NdevalQrel]:
    """ndeval's qrels lines: ``topic subtopic item label``, each a natural number but the item."""
    source, rows = _c_lines(path, "qrel file")
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


def ndeval_run(path, rewrite_ids: bool) -> list[NdevalLine]:
    """ndeval's run lines: ``topic Q0 item rank score runid``, ranks natural numbers."""
    source, rows = _c_lines(path, "run file")
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
