"""Passage texts and query texts: what a model reads to draft nuggets (``nuggets create``) and to judge
whether a cited passage supports a sentence (``nuggets cite``).

**Passages**, one a line, either

- JSONL: ``{"docid", "text"}``; the id may also be ``id`` and the text ``segment`` or ``contents``, so that
  TREC RAG's MS MARCO v2.1 segment files (``{"docid", "url", "title", "headings", "segment", ...}``) and
  iKAT's ClueWeb22 passage files (``{"id", "contents"}``) are read as they are; a ``title`` is kept; or
- TSV: ``id<TAB>text`` (MS MARCO's ``collection.tsv``).

A file may be large (a whole collection, compressed): it is streamed, and only the passages asked for are
kept (a line whose id is not asked for is not even parsed; a line that is neither a JSON object nor
``id<TAB>text`` is an error). An id given twice is an error.

**Queries**, one a line: TSV ``qid<TAB>text`` (TREC RAG 2024's ``topics.rag24.test.txt``), or JSONL with
the id as ``qid``, ``id`` or ``topic_id`` and the text as ``query``, ``text``, ``title`` or ``topic``
(TREC RAG 2025's ``{"id", "title"}``).

Every problem is one :class:`~castregin.errors.InputError` naming the file, the line and what is wrong.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from ..errors import InputError
from . import schema
from .common import display_name, not_utf8, open_input, parse_json_text, read_bytes

#: Where a passage line keeps its id and its text, in the order looked at.
PASSAGE_ID_KEYS = ("docid", "id")
PASSAGE_TEXT_KEYS = ("text", "segment", "contents")
QUERY_ID_KEYS = ("qid", "id", "topic_id")
QUERY_TEXT_KEYS = ("query", "text", "title", "topic")
_PIECE = 1 << 20
# The id of a JSONL passage line without parsing the line: the first "docid"/"id" key's string value.
_ID_AT = re.compile(rb'"(?:docid|id)"\s*:\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Passage:
    """A passage's text and its title (empty when the file has none)."""

    text: str
    title: str = ""

    @property
    def with_title(self) -> str:
        """``title: text``, as TREC RAG 2024's support evaluation shows a segment (the text alone without title)."""
        return f"{self.title}: {self.text}" if self.title else self.text


def _lines(path: str | os.PathLike) -> Iterator[tuple[int, bytes]]:
    """The non-empty lines of a file (bytes, line ends removed) with their numbers, streamed."""
    with open_input(path) as opened:
        rest = b""
        number = 0
        while True:
            piece = opened.read(_PIECE)
            if not piece:
                break
            lines = (rest + piece).split(b"\n")
            rest = lines.pop()
            for line in lines:
                number += 1
                if line.strip():
                    yield number, line.rstrip(b"\r")
        if rest.strip():
            yield number + 1, rest.rstrip(b"\r")


def _text(line: bytes, number: int, source: str) -> str:
    try:
        return line.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as err:
        raise not_utf8(err.object[err.start], number, source) from None


def _pick(obj: dict, keys: tuple[str, ...], what: str, source: str, line: int) -> str:
    for key in keys:
        if key in obj:
            return str(obj[key])
    raise InputError(f"missing the {what} (one of the keys {', '.join(repr(k) for k in keys)})", source=source,
                     line=line)


def _passage_line(line: bytes, number: int, source: str) -> tuple[str, Passage]:
    text = _text(line, number, source)
    if text.lstrip().startswith("{"):
        obj = parse_json_text(text, source, number)
        schema.validate(obj, "passage", source, number)
        return (_pick(obj, PASSAGE_ID_KEYS, "passage id", source, number),
                Passage(_pick(obj, PASSAGE_TEXT_KEYS, "passage text", source, number), obj.get("title") or ""))
    passage_id, tab, body = text.partition("\t")
    if not tab or not passage_id.strip():
        raise InputError("expected a JSON object ({\"docid\", \"text\"}) or \"id<TAB>text\"", source=source,
                         line=number)
    return passage_id.strip(), Passage(body)


def read_passages(path: str | os.PathLike, wanted: Collection[str] | None = None) -> dict[str, Passage]:
    """The passages of a file (JSONL or TSV, see the module), by id; with ``wanted``, only those."""
    source = display_name(path)
    found: dict[str, Passage] = {}
    seen: dict[str, int] = {}
    for number, line in _lines(path):
        if wanted is not None and line.lstrip().startswith(b"{"):
            quick = _ID_AT.search(line)
            if quick is not None and b"\\" not in quick.group(1) and quick.group(1).decode("utf-8", "replace") \
                    not in wanted:
                continue
        elif wanted is not None and b"\t" in line and \
                line.partition(b"\t")[0].strip().decode("utf-8", "replace") not in wanted:
            continue  # (a line neither JSON nor TSV is no passage: refused below, not skipped)
        passage_id, passage = _passage_line(line, number, source)
        if passage_id in seen:
            raise InputError(f"passage {passage_id!r} is given on line {seen[passage_id]} already; give each passage "
                             "once", source=source, line=number)
        seen[passage_id] = number
        if wanted is None or passage_id in wanted:
            found[passage_id] = passage
    return found


def parse_queries(data: bytes, source: str) -> dict[str, str]:
    """The queries of a file's bytes (TSV or JSONL, see the module), by id, in file order."""
    queries: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        text = _text(line.rstrip(b"\r"), number, source)
        if text.lstrip().startswith("{"):
            obj = parse_json_text(text, source, number)
            schema.validate(obj, "query", source, number)
            qid = _pick(obj, QUERY_ID_KEYS, "query id", source, number)
            query = _pick(obj, QUERY_TEXT_KEYS, "query text", source, number)
        else:
            qid, tab, query = text.partition("\t")
            qid = qid.strip()
            if not tab or not qid:
                raise InputError("expected \"qid<TAB>query\" or a JSON object ({\"qid\", \"query\"})", source=source,
                                 line=number)
        if qid in lines:
            raise InputError(f"query {qid!r} is given on line {lines[qid]} already", source=source, line=number)
        lines[qid] = number
        queries[qid] = query
    if not queries:
        raise InputError("the file holds no query; expected \"qid<TAB>query\" lines or JSONL", source=source)
    return queries


def read_queries(path: str | os.PathLike) -> dict[str, str]:
    """Read a queries file (``-``: standard input)."""
    return parse_queries(read_bytes(path), display_name(path))
