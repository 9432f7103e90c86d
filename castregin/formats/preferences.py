"""trec_eval's other relevance formats: ``-R prefs``, ``-R qrels_prefs`` and ``-R qrels_jg``.

``prefs``: ``topic group subgroup doc level`` (five columns). Within a judgment group (one user's
information need), the documents of a subgroup are preferred by their levels (a real number; 0 means
non-relevant); the subgroups of a group together make its partial order. ``qrels_prefs``: a qrels
file read as preferences, ``topic group doc level``, the second column naming the judgment group
(the ``0`` of a plain qrels puts every line of a topic into one group) with one subgroup per group.
``qrels_jg``: ``topic group doc label``, a qrels per judgment group, integer labels.

The lines are read as trec_eval 9.0.8 reads them (``get_prefs.c``, ``get_qrels_prefs.c``,
``get_qrels_jg.c``): lines end at ``\\n`` only and fields are separated by ASCII whitespace, as C's
``isspace``. Where trec_eval stops, carries on with a wrong reading or reads bytes that a C string
cannot hold, castregin stops at the first such line with one :class:`~castregin.errors.InputError`
naming the file and line: a line with another number of columns, a blank line (trec_eval: "Malformed
line"), a NUL byte, a level that is not a finite decimal number (trec_eval's ``atof`` would read
``1x`` as 1 and ``x`` as 0), a label that is not a whole number within 64 bits, and a document judged
twice in one subgroup (prefs), group (qrels_prefs) or group (qrels_jg, where trec_eval stops too).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import InputError
from .common import display_name, read_bytes
from .trec import LABEL_RANGE

PREFS_WHAT = "trec_eval prefs file (topic group subgroup doc level)"
QRELS_PREFS_WHAT = "trec_eval qrels_prefs file (topic group doc level)"
QRELS_JG_WHAT = "trec_eval qrels_jg file (topic group doc label)"

#: trec_eval's ``-R`` formats this module reads.
FORMATS = ("prefs", "qrels_prefs", "qrels_jg")

#: The one subgroup of every group of a qrels_prefs file (trec_eval gives them all the id "0").
QRELS_PREFS_SUBGROUP = "0"

# C's atof reads more (hex, inf, nan, "1x"); a level is a plain decimal number here.
_DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(rb"[+-]?[0-9]+")
_BOM = b"\xef\xbb\xbf"


@dataclass
class PreferenceJudgments:
    """A prefs or qrels_prefs file: ``topics[topic][group][subgroup][doc]`` is the doc's level.

    ``first_lines[topic, group]`` is the line where a judgment group starts (for messages).
    """

    topics: dict[str, dict[str, dict[str, dict[str, float]]]] = field(default_factory=dict)
    source: str | None = None
    first_lines: dict[tuple[str, str], int] = field(default_factory=dict)


@dataclass
class GroupQrels:
    """A qrels_jg file: ``topics[topic][group][doc]`` is the doc's label in that judgment group."""

    topics: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    source: str | None = None


def _lines(data: bytes, source: str, what: str, columns: int) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every line, each with exactly ``columns`` fields, decoded as UTF-8."""
    data = data.removeprefix(_BOM)
    if not data:
        raise InputError(f"the file is empty, expected a {what}", source=source)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    for number, line in enumerate(lines, start=1):
        if b"\0" in line:
            raise InputError("a NUL byte: trec_eval reads its files as C strings, which cannot hold one; remove "
                             "it", source=source, line=number)
        fields = line.split()  # bytes.split() splits at C's isspace characters, as trec_eval does
        if not fields:
            raise InputError(f"a blank line (trec_eval stops there: Malformed line); remove it, expected a {what}",
                             source=source, line=number)
        if len(fields) != columns:
            raise InputError(f"expected {columns} columns ({what.partition('(')[2].rstrip(')')}), found "
                             f"{len(fields)}", source=source, line=number)
        try:
            yield number, [f.decode("utf-8") for f in fields]
        except UnicodeDecodeError as err:
            raise InputError(f"byte 0x{err.object[err.start]:02x} is not valid UTF-8; save the file as UTF-8",
                             source=source, line=number) from None


def _level(text: str, source: str, line: int) -> float:
    if not _DECIMAL.fullmatch(text.encode()):
        raise InputError(f"level {text!r} is not a decimal number (trec_eval would read it with C's atof, "
                         "which takes any text as a number)", source=source, line=line)
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"level {text!r} is too large for a number", source=source, line=line)
    return value


def _label(text: str, source: str, line: int) -> int:
    if not _INTEGER.fullmatch(text.encode()):
        raise InputError(f"label {text!r} is not an integer", source=source, line=line)
    value = int(text)
    if not LABEL_RANGE[0] <= value <= LABEL_RANGE[1]:
        shown = text if len(text) <= 30 else f"{text[:12]}...{text[-6:]} ({len(text)} digits)"
        raise InputError(f"label {shown} does not fit in 64 bits (trec_eval reads labels as C long); use labels "
                         f"from {LABEL_RANGE[0]} to {LABEL_RANGE[1]}", source=source, line=line)
    return value


def read_prefs(path: str | os.PathLike) -> PreferenceJudgments:
    """Read a trec_eval prefs file (``topic group subgroup doc level``, any whitespace)."""
    return parse_prefs(read_bytes(path), display_name(path))


def read_qrels_prefs(path: str | os.PathLike) -> PreferenceJudgments:
    """Read a qrels file as trec_eval's qrels_prefs (``topic group doc level``): one subgroup per group."""
    return parse_qrels_prefs(read_bytes(path), display_name(path))


def read_qrels_jg(path: str | os.PathLike) -> GroupQrels:
    """Read trec_eval's qrels_jg (``topic group doc label``): a qrels per judgment group."""
    return parse_qrels_jg(read_bytes(path), display_name(path))


def parse_prefs(data: bytes, source: str) -> PreferenceJudgments:
    """:func:`read_prefs` on the bytes of a file that ``source`` names in messages."""
    judgments = PreferenceJudgments(source=source)
    for line, (topic, group, subgroup, doc, level) in _lines(data, source, PREFS_WHAT, 5):
        _add(judgments, topic, group, subgroup, doc, _level(level, source, line), line, f"subgroup {subgroup} of ")
    return judgments


def parse_qrels_prefs(data: bytes, source: str) -> PreferenceJudgments:
    """:func:`read_qrels_prefs` on the bytes of a file that ``source`` names in messages."""
    judgments = PreferenceJudgments(source=source)
    for line, (topic, group, doc, level) in _lines(data, source, QRELS_PREFS_WHAT, 4):
        _add(judgments, topic, group, QRELS_PREFS_SUBGROUP, doc, _level(level, source, line), line, "")
    return judgments


def _add(judgments: PreferenceJudgments, topic: str, group: str, subgroup: str, doc: str, level: float,
         line: int, where: str) -> None:
    groups = judgments.topics.setdefault(topic, {})
    if group not in groups:
        judgments.first_lines[topic, group] = line
    docs = groups.setdefault(group, {}).setdefault(subgroup, {})
    if doc in docs:
        raise InputError(f"document {doc} is judged twice in {where}judgment group {group} of topic {topic}; "
                         "keep one line (trec_eval would count it twice)", source=judgments.source, line=line)
    docs[doc] = level


def parse_qrels_jg(data: bytes, source: str) -> GroupQrels:
    """:func:`read_qrels_jg` on the bytes of a file that ``source`` names in messages."""
    qrels = GroupQrels(source=source)
    for line, (topic, group, doc, label) in _lines(data, source, QRELS_JG_WHAT, 4):
        docs = qrels.topics.setdefault(topic, {}).setdefault(group, {})
        if doc in docs:
            raise InputError(f"document {doc} is judged twice in judgment group {group} of topic {topic} "
                             "(trec_eval stops too: duplicate docs); keep one line", source=source, line=line)
        docs[doc] = _label(label, source, line)
    return qrels
