"""JSON submissions of CAsT 2022 (mixed-initiative and main-task runs) and item banks.

The run formats are defined by JSON schemas (``schemas/mi-run.json``, ``mi-turn.json``, ``main-run.json``,
``main-turn.json``) checked with ``jsonschema`` (:mod:`castregin.formats.schema`); a violation is one
:class:`~castregin.errors.InputError` naming the JSON path, e.g.
``run.json: turns[3].questions[0].score: expected a number, got "high"``.

Runs can be hundreds of megabytes. :func:`read_submission`, the one reader of both kinds, reads one as
a stream, a turn at a time (Python's own JSON scanner on a window of the text, so numbers, NaN and
syntax errors are read exactly as ``json.loads`` reads them), checks each turn as it arrives and keeps
only what the conversions use of it (ids, texts, scores, ranks) in a temporary file: memory stays flat
whatever the run's size.
``jsonschema`` walks millions of small objects slowly, so each turn is first checked by a hand-written
test that is at least as strict as the schema; only a turn that fails it is handed to ``jsonschema``,
whose verdict (and message) decides. The turns of a mixed-initiative run are read by msgspec, several
at a time (:class:`_MIBatches`), into typed columns, three times as fast; msgspec accepts less than
Python's json (no NaN, no lone surrogates, no integer beyond a float), and wherever it refuses a batch,
or a value could differ, those turns are read by json as above: the values, the errors and their
messages stay json's. A run's problems are reported as if it had been read whole: a byte that is not
UTF-8 first, then the first syntax error, then the document's schema, then the first bad turn.

Banks map item ids to texts. Two shapes are read and written: the ReGIn object ``{"Q0001": "..."}``
and the official question pool, a list of ``{"question_id", "question"}``.
"""

from __future__ import annotations

import codecs
import functools
import json
import marshal
import math
import os
import re
import struct
import tempfile
from array import array
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from types import GenericAlias
from typing import NoReturn

from ..errors import InputError
from . import schema
from .common import (
    FLOAT_LIMIT,
    check_unicode,
    decode,
    display_name,
    invalid_json,
    json_decoder,
    lone_surrogate,
    lone_surrogate_escape,
    nested_too_deeply,
    not_utf8,
    open_input,
    parse_json_text,
    read_bytes,
    stem,
)
from .output import write_error

NO_SPACE = r"^[^\s\x00]+$"  # no NUL either: no trec_eval id holds one
#: The schemas (``castregin/formats/schemas/``) of each kind of run: the document, each turn, and its name.
_KINDS = {"mi": ("mi-run", "mi-turn", "mixed-initiative run"), "main": ("main-run", "main-turn", "main-task run")}
_NO_SPACE = re.compile(NO_SPACE)
_isfinite = math.isfinite


def _number(value) -> bool:
    return (type(value) is float and _isfinite(value)) or type(value) is int


def _passage_ok(passage) -> bool:
    if type(passage) is not dict:
        return False
    pid = passage.get("id")
    if type(pid) is not str or not _NO_SPACE.match(pid):
        return False
    if "text" in passage and type(passage["text"]) is not str:
        return False
    return "score" not in passage or _number(passage["score"])


def _response_ok(response) -> bool:
    if type(response) is not dict or type(response.get("text")) is not str:
        return False
    if not _number(response.get("rank")) or type(response.get("provenance")) is not list:
        return False
    return all(_passage_ok(passage) for passage in response["provenance"])


def _turn_items(turn, items_key: str):
    """The list under ``items_key`` of a turn with a spaceless ``turn_id``, else None."""
    if type(turn) is not dict:
        return None
    turn_id, items = turn.get("turn_id"), turn.get(items_key)
    if type(turn_id) is not str or not _NO_SPACE.match(turn_id) or type(items) is not list:
        return None
    return items


_get = dict.get


def _mi_columns(turn) -> tuple[list[str], list[float]] | None:
    """The fast test of an MI turn, and its questions and scores as two columns when it passes (None if not).

    Scores are floats (an integer score is converted), as the conversions use them. Each check is a pass
    over the questions in C (map, set, all): a Python loop over a large run's millions of questions cost
    three times as much. Only a turn the test refuses goes to the schema, whose verdict and message decide.
    """
    questions = _turn_items(turn, "questions")
    if questions is None:
        return None
    try:
        texts: list = list(map(_get, questions, repeat("question")))
        scores: list = list(map(_get, questions, repeat("score")))
    except TypeError:  # a question that is not an object
        return None
    if not set(map(type, texts)) <= _STR:
        return None
    kinds = set(map(type, scores))
    if not kinds <= _FLOAT:
        if not kinds <= _FLOAT_OR_INT:
            return None
        scores = list(map(float, scores))  # an integer score is a float to the conversions
    if not all(map(_isfinite, scores)):
        return None
    return texts, scores


_STR, _FLOAT, _FLOAT_OR_INT = frozenset({str}), frozenset({float}), frozenset({float, int})


def _question_columns(turn: dict) -> tuple[list[str], list[float]]:
    """A mixed-initiative turn's questions and scores (floats) as two columns, once the schema accepted it."""
    return [question["question"] for question in turn["questions"]], \
        [float(question["score"]) for question in turn["questions"]]


def _main_items(turn) -> list[tuple] | None:
    """The fast test of a main-task turn, and its ``(text, rank, provenance ids)`` when it passes."""
    responses = _turn_items(turn, "responses")
    if responses is None or not all(_response_ok(response) for response in responses):
        return None
    return _responses(turn)


def _responses(turn: dict) -> list[tuple]:
    """A main-task turn's ``(text, rank, provenance ids)`` of each response, once the schema accepted it."""
    return [(response["text"], response["rank"], tuple(passage["id"] for passage in response["provenance"]))
            for response in turn["responses"]]


#: What the spool keeps of a turn, per kind: by the fast test, which is at least as strict as the turn's schema
#: (tested) and gives None for a turn it refuses (jsonschema's verdict and message then decide), else once the
#: schema accepted the turn. Two columns ``(questions, scores)`` of a mixed-initiative turn; ``(text, rank,
#: provenance ids)`` of each response of a main-task turn.
_SPOOLED = {"mi": (_mi_columns, _question_columns), "main": (_main_items, _responses)}


def load_json(path: str | os.PathLike, *, unique_keys: bool = False):
    """A JSON file (``-``: standard input) parsed, holding its bytes and text only briefly; a syntax error
    names its line, and NaN/Infinity literals are read as floats (so that the schema reports them with
    their path).

    Banks are read with ``unique_keys``; runs are streamed by :func:`read_submission`, which does not
    check for repeated keys (a Python hook per object would cost as much again as the parse).
    """
    source = display_name(path)
    # The bytes are released once decoded: a file of hundreds of MB is not held three times over.
    return parse_json_text(decode(read_bytes(path), source), source, unique_keys=unique_keys)


# ------------------------------------------------------------------------------------------------ turns

#: A spooled turn's length in bytes, before its marshal data.
_LENGTH = struct.Struct("<Q")
#: The spool stays in memory up to this size, then moves to a temporary file.
_SPOOL_IN_MEMORY = 16 << 20


class SpooledTurns:
    """The turns of a run read by :func:`read_submission`, in a temporary file (in memory while small).

    ``ids[i]`` is the id of the run's ``turns[i]`` and ``self[i]`` what the conversions use of that turn: a
    mixed-initiative turn's questions and scores (two lists, scores floats), a main-task turn's ``(text,
    rank, provenance ids)`` of each response, in file order. Each turn is one marshal record; reading
    them in order costs no seek.
    """

    def __init__(self):
        self._file = tempfile.SpooledTemporaryFile(  # noqa: SIM115 - open for the object's life, closed by close()
            max_size=_SPOOL_IN_MEMORY)
        self.ids: list[str] = []
        self._offsets = array("q")
        self._size = 0
        self._next = -1  # the offset a read starts at without a seek (-1: after a write)

    def append(self, turn_id: str, kept: list[tuple] | tuple[list, list]) -> None:
        """Keep one more turn."""
        data = marshal.dumps(kept)
        try:
            self._file.write(_LENGTH.pack(len(data)))
            self._file.write(data)
        except OSError as err:
            raise write_error(err, tempfile.gettempdir()) from None
        self._offsets.append(self._size)
        self._size += _LENGTH.size + len(data)
        self.ids.append(turn_id)
        self._next = -1

    def __getitem__(self, index: int):
        """What was kept of ``turns[index]`` (see the class)."""
        offset = self._offsets[index]
        if offset != self._next:
            self._file.seek(offset)
        (length,) = _LENGTH.unpack(self._file.read(_LENGTH.size))
        self._next = offset + _LENGTH.size + length
        return marshal.loads(self._file.read(length))  # noqa: S302 - our own records, from append() above

    def clear(self) -> None:
        """Forget every turn (a document that gives ``turns`` twice keeps the last, as json does)."""
        self._file.seek(0)
        self._file.truncate()
        self.ids, self._offsets, self._size, self._next = [], array("q"), 0, -1

    def __len__(self) -> int:
        return len(self.ids)

    def close(self) -> None:
        """Delete the temporary file."""
        self._file.close()


# ------------------------------------------------------------------------------------------------- runs

@dataclass
class Submission:
    """A validated JSON run, as :func:`read_submission` reads it: its ``name`` (run_name, or None), its
    ``turns`` and where it came from.

    ``turns`` gives each turn's id (``turns.ids``) and what the conversions use of it (``turns[index]``,
    see :class:`SpooledTurns`). Close it (or use it in a ``with`` block) to delete the spool.
    """

    name: str | None
    turns: SpooledTurns
    source: str
    stem: str
    run_type: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def tag(self) -> str:
        """The TREC tag: run_name with whitespace replaced by ``_``, or the file stem if missing."""
        return run_tag(self.name, self.stem)

    def close(self) -> None:
        """Release the turns' spool."""
        self.turns.close()

    def __enter__(self) -> Submission:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run_tag(name: str | None, fallback: str) -> str:
    """``run_name`` with each run of whitespace replaced by ``_``; ``fallback`` when missing or blank."""
    tag = "_".join((name or "").split())
    return tag or "_".join(fallback.split()) or "run"


#: Bytes read (and decoded) at a time by :func:`read_submission` (the tests make it tiny, so that values
#: straddle the reads).
CHUNK_SIZE = 1 << 22


def read_submission(path: str | os.PathLike, kind: str) -> Submission:
    """Read and validate a JSON run (``kind``: ``"mi"`` for mixed-initiative, ``"main"`` for main-task).

    The run is streamed (see the module's docstring): memory does not grow with its size, and its
    problems are the ones reading it whole would report, with the same messages.
    """
    source = display_name(path)
    run_schema, turn_schema, what = _KINDS[kind]
    spool = SpooledTurns()
    try:
        reader = _TurnReader(*_SPOOLED[kind], schema.validator(turn_schema), spool,
                             _MIBatches() if kind == "mi" else None)
        with open_input(path) as opened:
            stream = _Stream(opened, source, CHUNK_SIZE)
            members = _walk_run(stream, reader)
            if members is None:  # not an object, so not a run: read whole for json's own messages
                data = parse_json_text(stream.whole(), source)
                raise InputError(f"expected a {what} (a JSON object with \"turns\"), got {schema.show(data)}",
                                 source=source)
        if stream.lone_surrogates:  # refused before the schema's problems, as when the document is read whole
            problem = _first_lone_surrogate(members, reader)
            if problem is not None:
                raise InputError(problem, source=source)
        streamed = members.get("turns") is _STREAMED
        # The document's schema checks the run without its turns (they are each checked as they come).
        document = {**members, "turns": []} if streamed else members
        problem = schema.first_error(schema.validator(run_schema), document)
        if problem is not None:
            raise InputError(problem, source=source)
        if reader.problem is not None:
            raise InputError(reader.problem, source=source)
    except BaseException:
        spool.close()
        raise
    return Submission(name=members.get("run_name"), turns=spool, source=source, stem=stem(path),
                      run_type=members.get("run_type"))


def _first_lone_surrogate(members: dict, reader: _TurnReader) -> str | None:
    """The first lone surrogate of a streamed document, as :func:`~castregin.formats.common.lone_surrogate`
    finds it in the whole: the keys of the run's object, then each member's value in order (the turns'
    as they were read)."""
    keys = lone_surrogate(dict.fromkeys(members))
    if keys is not None:
        return keys
    for key, value in members.items():
        found = reader.surrogate if value is _STREAMED else lone_surrogate(value, key)
        if found is not None:
            return found
    return None


def read_mi_run(path: str | os.PathLike) -> Submission:
    """Read and validate a mixed-initiative JSON run (SPEC "File formats")."""
    return read_submission(path, "mi")


def read_main_run(path: str | os.PathLike) -> Submission:
    """Read and validate a main-task JSON run (SPEC "File formats")."""
    return read_submission(path, "main")


# ------------------------------------------------------------------------------- reading runs as streams

#: A syntax error this close to the end of the text read so far may only mean that more is to come.
_LOOKAHEAD = 16
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, as json.decoder has it
#: Texts that put Python's json in the state the stream is in at its mark (see _Stream.fail): in the
#: run's object, after one of its members, in its turns array, after a turn, after the document.
_IN_OBJECT, _AFTER_MEMBER, _IN_ARRAY, _AFTER_ITEM, _AFTER_ROOT = "{", '{"":0', '{"":[', '{"":[0', "0"
#: The value of ``turns`` in a document's members when the turns were streamed.
_STREAMED = object()



def _whitespace_end(text: str, pos: int) -> int:
    """Where the whitespace starting at ``pos`` ends (``pos`` itself where there is none)."""
    match = _WHITESPACE.match(text, pos)  # a pattern that matches the empty string: never None
    return match.end() if match is not None else pos

class _Stream:
    """A JSON document read a chunk at a time, for :func:`_walk_run`.

    ``text`` holds what was read from the last mark on (earlier text is dropped when more is read);
    ``pos`` is where scanning is, and ``line`` and ``column`` (from 0) say where ``text`` begins. A mark
    is set after each complete value, with a ``state``: the text that puts Python's json in the same
    state. A syntax error is then reported by json itself, reading from the mark, with the message,
    line and column ``json.loads`` gives on the whole document.
    """

    def __init__(self, opened, source: str, chunk_size: int):
        self._input, self.source, self._chunk = opened, source, chunk_size
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self._scan = json_decoder().raw_decode
        self.text, self.pos, self.mark, self.state = "", 0, 0, ""
        self.line, self.column, self.eof = 1, 0, False
        self.offset = 0  # where text[0] is in the document (in characters)
        #: A lone surrogate may be in the text read so far (an escape of one): the values read from then on
        #: are looked through for it (json reads one; reading the document whole refuses it).
        self.lone_surrogates = False

    def _bytes(self, size: int) -> bytes:
        parts = []
        while size > 0:
            data = self._input.read(size)
            if not data:
                self.eof = True
                break
            parts.append(data)
            size -= len(data)
        return b"".join(parts)

    def _decode(self, data: bytes, newlines: int = 0) -> str:
        """The text of the next bytes; ``newlines``: those decoded already but not in ``text``."""
        try:
            return self._decoder.decode(data, self.eof)
        except UnicodeDecodeError as err:
            # Lines are counted here, on an error only: a pass over the text less when there is none.
            line = self.line + self.text.count("\n") + newlines + err.object.count(b"\n", 0, err.start)
            error = not_utf8(err.object[err.start], line, self.source)
            while self._bytes(self._chunk):  # a damaged compressed stream further on is reported first,
                pass                         # as when the file is read whole
            raise error from None

    def _read(self, at_least: int = 0) -> None:
        """Drop the text before the mark, then read a chunk (or ``at_least`` characters' worth) more."""
        mark, text = self.mark, self.text
        if mark:
            newlines = text.count("\n", 0, mark)
            self.column = mark - text.rfind("\n", 0, mark) - 1 if newlines else self.column + mark
            self.line += newlines
            self.offset += mark
            self.text, self.pos, self.mark = text[mark:], self.pos - mark, 0
        known = len(self.text)
        self.text += self._decode(self._bytes(max(self._chunk, at_least)))
        if not self.lone_surrogates:  # an escape (12 characters with its pair) may straddle two reads
            self.lone_surrogates = lone_surrogate_escape().search(self.text, max(0, known - 12)) is not None
        self._input.holding(len(self.text))  # one value held whole is bounded as a whole file is

    def skip(self) -> str:
        """Skip whitespace: the next character ('' at the end), at ``pos``."""
        while True:
            self.pos = _whitespace_end(self.text, self.pos)
            if self.pos < len(self.text):
                return self.text[self.pos]
            if self.eof:
                return ""
            if self.state and _whitespace_end(self.text, self.mark) == self.pos:
                # Nothing but whitespace since the mark, which leaves json's state as it was: whitespace
                # does not pile up in memory (the mark moves on, the text before it is dropped). Not before
                # the document's first mark: a document that is not an object is then read whole.
                self.mark = self.pos
            self._read()

    def value(self):
        """The JSON value after ``pos`` (and whitespace), read whole; ``pos`` moves past it."""
        self.skip()
        while True:
            text = self.text
            try:
                value, end = self._scan(text, self.pos)
            except json.JSONDecodeError as err:
                cut_short = err.pos >= len(text) - _LOOKAHEAD or err.msg.startswith("Unterminated string")
                if self.eof or not cut_short:
                    self.fail()
                # Perhaps only the end of what was read so far: read as much again (a value much larger
                # than a chunk is then scanned a logarithmic number of times, not once a chunk).
                self._read(len(text) - self.mark)
                continue
            except RecursionError:
                self.drain()
                raise nested_too_deeply(self.source) from None
            if self.eof or isinstance(value, (dict, list, str)) or end < len(text) - _LOOKAHEAD:
                self.pos = end
                return value
            self._read()  # a number near the end of what was read may go on ("1." then "5")

    def batch_end(self, key: str) -> int:
        """Where a batch of turns that begins at ``pos`` (a turn's ``{``) may end: the last separator of
        turns (:func:`_turn_separator`) within :data:`BATCH_CHARS`, else the first one after, more text
        read while none is in sight; -1 where none is found (at the end, or a turn much longer than a batch)."""
        while True:
            text, pos = self.text, self.pos
            end = _turn_separator(text, key, pos, min(len(text), pos + BATCH_CHARS), last=True)
            if end < 0:
                end = _turn_separator(text, key, pos + BATCH_CHARS, len(text), last=False)
            if end >= 0 or self.eof or len(text) - pos > 4 * max(self._chunk, BATCH_CHARS):
                return end
            self._read()

    def set_mark(self, state: str) -> None:
        """Mark ``pos``, where json would be in ``state`` (see the class docstring)."""
        self.mark, self.state = self.pos, state

    def where(self, index: int) -> tuple[int, int]:
        """The line and column (from 1, as json counts them) of ``text[index]``."""
        last = self.text.rfind("\n", 0, index)
        return (self.line + self.text.count("\n", 0, index),
                index - last if last >= 0 else self.column + index + 1)

    def fail(self) -> NoReturn:
        """Raise the syntax error at hand as ``json.loads`` reports it on the whole document."""
        state = self.state
        try:
            json_decoder().decode(state + self.text[self.mark:])
        except json.JSONDecodeError as err:
            line, column = self.where(self.mark + max(err.pos - len(state), 0))
            error = invalid_json(err.msg, column, self.source, line)
        except RecursionError:
            error = nested_too_deeply(self.source)
        else:  # json accepts what this reader refused: report it where it was found
            line, column = self.where(self.pos)
            error = invalid_json("unexpected text", column, self.source, line)
        self.drain()
        raise error

    def drain(self) -> None:
        """Read (and decode) the rest: a byte that is not UTF-8 anywhere in the file, or a damaged
        compressed stream, is reported before a syntax error, as when the file is read whole."""
        self.pos = self.mark = 0
        while not self.eof:
            self.line += self.text.count("\n")  # the line of a byte that is not UTF-8 further on
            self.text = ""
            self.text = self._decode(self._bytes(self._chunk))

    def whole(self) -> str:
        """The whole document, when nothing was dropped yet (the first mark is after its ``{``)."""
        parts, newlines, held = [self.text], 0, len(self.text)
        while not self.eof:
            parts.append(self._decode(self._bytes(self._chunk), newlines))
            newlines += parts[-1].count("\n")
            held += len(parts[-1])
            self._input.holding(held)
        return "".join(parts)


class _TurnReader:
    """Checks each turn of a run as it is read and spools what the conversions use of it.

    The first bad turn is kept in ``problem`` and reported once the whole document is known to parse
    (a syntax error further on comes first, as when the file is read whole); later turns are only parsed.
    """

    def __init__(self, fast_items, items, checker, spool: SpooledTurns, batches: _MIBatches | None = None):
        self._fast_items, self._items, self._checker, self.spool = fast_items, items, checker, spool
        self.batches = batches
        self.count = 0
        self.problem: str | None = None
        self.surrogate: str | None = None  # the first lone surrogate of the turns (see _Stream.lone_surrogates)

    def start(self) -> None:
        """A ``turns`` member begins: a document that gives it twice keeps the last, as json does."""
        self.spool.clear()
        self.count, self.problem, self.surrogate = 0, None, None

    def turn(self, turn) -> None:
        """Check and spool the next turn."""
        index = self.count
        self.count += 1
        if self.problem is not None:
            return
        items = self._fast_items(turn)
        if items is None:
            self.problem = schema.first_error(self._checker, turn, ["turns", index])
            if self.problem is not None:
                return
            items = self._items(turn)
        self.spool.append(turn["turn_id"], items)

    def turns(self, turns: list[tuple[str, tuple]]) -> None:
        """Spool turns that passed the fast test already (``(turn id, items)``, from :class:`_MIBatches`)."""
        self.count += len(turns)
        if self.problem is None:
            append = self.spool.append
            for turn_id, items in turns:
                append(turn_id, items)


#: A batch of mixed-initiative turns read by msgspec at once: about this many characters.
BATCH_CHARS = 1 << 20


class _MIBatches:
    """The turns of a mixed-initiative run read by msgspec, a batch at a time, into two columns each.

    A batch is the text from a turn's ``{`` to a separator of turns (:meth:`_Stream.batch_end`) with
    ``[`` and ``]`` around it. Where msgspec reads it as a list of turns, the separator is one (a cut
    inside a turn would leave an object open) and json would read the same values: msgspec accepts
    less JSON than json (no NaN or Infinity, no lone surrogate) and reads numbers to the same floats (a
    score is only ever used as a float). A turn or question with a member its type does not name is
    refused (its value may be nested a few levels too deeply for json, which msgspec reads). Only an
    integer score of 2**1023 or more would differ (json's TooLarge, an error): such a batch is refused.
    msgspec's types check what the fast test (:func:`_mi_columns`) checks, but for the turn id's spaces
    and the scores' bound, checked here. A batch msgspec refuses is read again by json a turn at a time
    (``json_until``), so errors and their messages stay json's.
    """

    def __init__(self):
        import msgspec

        self._decode = _mi_decoder().decode
        self._refused = (msgspec.DecodeError, RecursionError)
        #: The first member's name of the last turn json read, as JSON text: turns are told apart by it.
        self.key: str | None = None
        self.json_until = 0  # json reads the turns before this offset of the document
        #: No separator of turns with these keys before this offset: where a scan found none, that text
        #: is scanned again with one other key at most (the key of a turn json read meanwhile), so that a
        #: run whose turns change shape is scanned in linear time, not once a turn.
        self._unseparated: tuple[int, frozenset[str]] = (0, frozenset())

    def learn(self, turn) -> None:
        """Take the key that separates turns from a turn json read (the turns' shape may change)."""
        if type(turn) is dict and turn:
            self.key = json.dumps(next(iter(turn)), ensure_ascii=False)

    def read(self, stream: _Stream, reader: _TurnReader) -> bool:
        """Read and spool a batch of turns from ``stream.pos`` on; False where json must read the next turn."""
        here = stream.offset + stream.pos
        if self.key is None or here < self.json_until:
            return False
        until, keys = self._unseparated
        inside = here < until
        if inside and (self.key in keys or len(keys) > 1):
            return False
        end = stream.batch_end(self.key)
        if end < 0:
            scanned = frozenset({self.key})
            self._unseparated = (stream.offset + len(stream.text), keys | scanned if inside else scanned)
            return False
        try:
            turns = self._decode("[" + stream.text[stream.pos:end] + "]")
        except self._refused:
            turns = None
        # No turn at all is no batch: whitespace between two commas (``[T1, ,T2]``, json's error) read as ``[ ]``.
        columns = _mi_batch_columns(turns) if turns else None
        if columns is None:
            self.json_until = stream.offset + end
            return False
        reader.turns(columns)
        stream.pos = end
        return True


_question_of, _score_of = attrgetter("question"), attrgetter("score")


@functools.cache
def _mi_decoder():
    """msgspec's decoder of a list of mixed-initiative turns, as :class:`_MIBatches` reads them (made once,
    on first use: msgspec is imported by the conversions only)."""
    import msgspec

    # Made at run time, so list[...] is spelled as the alias it is (a type checker sees no type here).
    # A member they do not name is refused, not skipped: its value could be one json refuses (nested a
    # few levels too deeply for json, which msgspec reads), so the turn is left to json.
    question = msgspec.defstruct("Question", [("question", str), ("score", float)], gc=False,
                                 forbid_unknown_fields=True)
    turn = msgspec.defstruct("Turn", [("turn_id", str), ("questions", GenericAlias(list, (question,)))], gc=False,
                             forbid_unknown_fields=True)
    return msgspec.json.Decoder(GenericAlias(list, (turn,)))


def _mi_batch_columns(turns: list) -> list[tuple[str, tuple[list, list]]] | None:
    """``(turn id, (questions, scores))`` of turns read by msgspec, or None where one fails the checks
    msgspec's types leave (:class:`_MIBatches`)."""
    columns = []
    for turn in turns:
        turn_id, questions = turn.turn_id, turn.questions
        if not _NO_SPACE.match(turn_id):
            return None
        scores = list(map(_score_of, questions))
        if scores and (max(scores) >= FLOAT_LIMIT or min(scores) <= -FLOAT_LIMIT):  # json's TooLarge integers
            return None
        columns.append((turn_id, (list(map(_question_of, questions)), scores)))
    return columns


def _turn_separator(text: str, key: str, start: int, stop: int, *, last: bool) -> int:
    """The index of a ``,`` in ``text[start:stop]`` followed (JSON whitespace between) by ``{`` and ``key``:
    the last one, or the first; -1 where there is none. Only a candidate: a batch read as JSON confirms it."""
    find = text.rfind if last else text.find
    while True:
        at = find(key, start, stop)
        if at < 0:
            return -1
        brace = _before_whitespace(text, at)
        if brace > start and text[brace] == "{":
            comma = _before_whitespace(text, brace)
            if comma > start and text[comma] == ",":
                return comma
        if last:
            stop = at
        else:
            start = at + 1


def _before_whitespace(text: str, index: int) -> int:
    """The index of the last character before ``index`` that is not JSON whitespace (-1: none)."""
    index -= 1
    while index >= 0 and text[index] in " \t\n\r":
        index -= 1
    return index


def _walk_run(stream: _Stream, reader: _TurnReader) -> dict | None:
    """Read a run's document: each element of its ``turns`` array goes to ``reader`` as soon as it is read.

    Returns the document's other members (``turns``: ``_STREAMED``), or None when the document is not
    an object (then nothing was dropped, and the caller reads it whole).
    """
    if stream.skip() != "{":
        return None
    stream.pos += 1
    stream.set_mark(_IN_OBJECT)
    members: dict = {}
    char = stream.skip()
    if char != "}":
        while True:
            if char != '"':
                stream.fail()
            key = stream.value()
            if stream.skip() != ":":
                stream.fail()
            stream.pos += 1
            if key == "turns" and stream.skip() == "[":
                reader.start()
                members[key] = _STREAMED
                _walk_turns(stream, reader)
            else:
                members[key] = stream.value()
                if key == "turns":
                    reader.start()  # not an array: the schema says so; earlier turns are forgotten
            stream.set_mark(_AFTER_MEMBER)
            char = stream.skip()
            if char != ",":
                break
            stream.pos += 1
            char = stream.skip()
        if char != "}":
            stream.fail()
    stream.pos += 1
    stream.set_mark(_AFTER_ROOT)
    if stream.skip():
        stream.fail()
    return members


def _walk_turns(stream: _Stream, reader: _TurnReader) -> None:
    """Read the array at ``pos`` (its ``[``), handing each element to ``reader``."""
    stream.pos += 1
    stream.set_mark(_IN_ARRAY)
    if stream.skip() == "]":
        stream.pos += 1
        return
    batches = reader.batches
    while True:
        if batches is None or not batches.read(stream, reader):  # (msgspec reads no lone surrogate)
            turn = stream.value()
            if stream.lone_surrogates and reader.surrogate is None:
                reader.surrogate = lone_surrogate(turn, f"turns[{reader.count}]")
            reader.turn(turn)
            if batches is not None:
                batches.learn(turn)
        stream.set_mark(_AFTER_ITEM)
        char = stream.skip()
        if char != ",":
            break
        stream.pos += 1
    if char != "]":
        stream.fail()
    stream.pos += 1


# ---------------------------------------------------------------------------------------------- banks

_ID_KEYS = ("question_id", "response_id", "id")
_TEXT_KEYS = ("question", "response", "text")


@dataclass
class BankFile:
    """A bank as read from a file: ``entries`` (id -> text, file order) and its ``shape``."""

    entries: dict[str, str]
    shape: str  # "object" or "list"
    source: str


def _bank_ok(data) -> bool:
    """The fast test of a bank, at least as strict as its schema: only a bank it refuses goes to
    jsonschema (tens of thousands of entries, each a schema walk)."""
    if type(data) is dict:
        return all(type(text) is str for text in data.values()) and all(map(_NO_SPACE.match, data))
    return type(data) is list and all(type(item) is dict for item in data)


def read_bank(path: str | os.PathLike) -> BankFile:
    """Read a bank in either shape: ``{"Q0001": "text"}`` or ``[{"question_id", "question"}]``.

    In the list shape ``response_id``/``response`` and ``id``/``text`` are accepted too. An id listed
    twice with different texts is an error; ids must be non-empty and without whitespace.
    """
    return parse_bank(load_json(path, unique_keys=True), display_name(path))


def parse_bank(data, source: str) -> BankFile:
    """A bank's JSON value (either shape, as :func:`read_bank` reads it) as a :class:`BankFile`, with the
    file's checks; ``source`` names it in messages."""
    if isinstance(data, dict):
        # JSON's keys are strings; a dict made in Python may hold others.
        for item_id in data:
            if not isinstance(item_id, str):
                raise InputError(f"expected an id without spaces, got {schema.show(item_id)}", source=source)
    problem = None if _bank_ok(data) else schema.first_error(schema.validator("bank"), data)
    if problem is not None:
        if isinstance(data, (dict, list)):
            raise InputError(problem, source=source)
        raise InputError(f"expected a bank (an object id -> text, or a list of {{\"question_id\", "
                         f"\"question\"}}), got {schema.show(data)}", source=source)
    if isinstance(data, dict):
        for item_id, text in data.items():
            check_unicode(item_id, f"id {item_id.encode('utf-8', 'backslashreplace').decode()}", source)
            check_unicode(text, f"{item_id}", source)
        return BankFile(dict(data), "object", source)
    entries: dict[str, str] = {}
    for index, item in enumerate(data):
        id_key = next((k for k in _ID_KEYS if k in item), None)
        text_key = next((k for k in _TEXT_KEYS if k in item), None)
        if id_key is None or text_key is None:
            raise InputError(f"[{index}]: missing the key \"{'question_id' if id_key is None else 'question'}\"",
                             source=source)
        item_id, text = item[id_key], item[text_key]
        if not isinstance(item_id, str) or not _NO_SPACE.match(item_id):
            raise InputError(f"[{index}].{id_key}: expected an id without spaces, got {schema.show(item_id)}",
                             source=source)
        if not isinstance(text, str):
            raise InputError(f"[{index}].{text_key}: expected a string, got {schema.show(text)}", source=source)
        check_unicode(item_id, f"[{index}].{id_key}", source)
        check_unicode(text, f"[{index}].{text_key}", source)
        if item_id in entries and entries[item_id] != text:
            raise InputError(f"[{index}]: id {item_id} is listed twice with different texts", source=source)
        entries.setdefault(item_id, text)
    return BankFile(entries, "list", source)


def bank_json(entries: dict[str, str], shape: str = "object", prefix: str = "Q"):
    """The JSON value of a bank in the given shape (``"object"`` or ``"list"``)."""
    if shape == "object":
        return dict(entries)
    if shape != "list":
        raise InputError(f"unknown bank shape {shape!r}; use object or list", argument="shape")
    id_key, text_key = ("response_id", "response") if prefix == "R" else ("question_id", "question")
    return [{id_key: item_id, text_key: text} for item_id, text in entries.items()]


def bank_text(entries: dict[str, str], shape: str = "object", prefix: str = "Q") -> str:
    """A bank as the JSON text castregin writes (UTF-8, indented by 4, entries in the given order)."""
    return json.dumps(bank_json(entries, shape, prefix), ensure_ascii=False, indent=4) + "\n"
