"""JSON submissions of CAsT 2022 (mixed-initiative and main-task runs) and item banks.

The run formats are defined by JSON schemas (``schemas/mi-run.json``, ``mi-turn.json``, ``main-run.json``,
``main-turn.json``) checked with ``jsonschema`` (:mod:`castregin.formats.schema`); a violation is one :class:`~castregin.errors.InputError` naming the JSON path,
e.g. ``run.json: turns[3].questions[0].score: expected a number, got "high"``.

Runs can be hundreds of megabytes, and ``jsonschema`` walks millions of small objects slowly, so each
turn is first checked by a hand-written test that is at least as strict as the schema; only a turn
that fails it is handed to ``jsonschema``, whose verdict (and message) decides.

Banks map item ids to texts. Two shapes are read and written: the ReGIn object ``{"Q0001": "..."}``
and the official question pool, a list of ``{"question_id", "question"}``.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field

from ..errors import InputError
from . import schema
from .common import decode, display_name, parse_json_text, read_bytes, stem, write_text

NO_SPACE = r"^\S+$"
#: The schemas (``castregin/formats/schemas/``) of each kind of run: the document, each turn, and its name.
_KINDS = {"mi": ("mi-run", "mi-turn", "mixed-initiative run"), "main": ("main-run", "main-turn", "main-task run")}


def _number(value) -> bool:
    return (type(value) is float and math.isfinite(value)) or type(value) is int


def _question_ok(question) -> bool:
    return type(question) is dict and type(question.get("question")) is str and _number(question.get("score"))


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


def _turn_ok(turn, items_key: str, item_ok) -> bool:
    """The fast test of one turn: a spaceless ``turn_id`` and a list under ``items_key`` whose every
    element passes ``item_ok``."""
    if type(turn) is not dict:
        return False
    turn_id, items = turn.get("turn_id"), turn.get(items_key)
    if type(turn_id) is not str or not _NO_SPACE.match(turn_id) or type(items) is not list:
        return False
    return all(item_ok(item) for item in items)


_NO_SPACE = re.compile(NO_SPACE)
#: A fast test per kind of turn, at least as strict as its schema (tested): only a turn it refuses is
#: handed to jsonschema, whose verdict and message decide.
_TURN_OK = {
    "mi": lambda turn: _turn_ok(turn, "questions", _question_ok),
    "main": lambda turn: _turn_ok(turn, "responses", _response_ok),
}


def validate_run(data, kind: str, source: str) -> None:
    """Check a parsed JSON run against its schema (``kind`` is ``"mi"`` or ``"main"``).

    Raises :class:`InputError` with the JSON path of the first problem in document order.
    """
    run_schema, turn_schema, what = _KINDS[kind]
    if not isinstance(data, dict):
        raise InputError(f"expected a {what} (a JSON object with \"turns\"), got {schema.show(data)}", source=source)
    # The document without its turns first (cheap), then each turn: fast test, schema if it fails.
    problem = schema.first_error(schema.validator(run_schema), data)
    if problem is None:
        turn_ok, checker = _TURN_OK[kind], schema.validator(turn_schema)
        for index, turn in enumerate(data["turns"]):
            if not turn_ok(turn):
                problem = schema.first_error(checker, turn, ["turns", index])
                if problem is not None:
                    break
    if problem is not None:
        raise InputError(problem, source=source)


def parse_json(data: bytes, source: str):
    """Parse JSON bytes; a syntax error names its line. NaN/Infinity literals are read as floats
    (so that the schema reports them with their path)."""
    return parse_json_text(decode(data, source), source)


def load_json(path: str | os.PathLike, *, unique_keys: bool = False):
    """:func:`parse_json` on a file (``-``: standard input), holding its bytes and text only briefly.

    Runs are read without checking for repeated keys (hundreds of MB, and a Python hook per object
    would cost as much again); banks are checked.
    """
    source = display_name(path)
    # The bytes are released once decoded: a run of hundreds of MB is not held three times over.
    return parse_json_text(decode(read_bytes(path), source), source, unique_keys=unique_keys)




@dataclass
class Submission:
    """A validated JSON run: its ``name`` (run_name, or None), the raw ``turns`` and where it came from.

    ``turns`` is the parsed JSON list itself (not a copy), so a large run is held once.
    """

    name: str | None
    turns: list[dict]
    source: str
    stem: str
    run_type: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def tag(self) -> str:
        """The TREC tag: run_name with whitespace replaced by ``_``, or the file stem if missing."""
        return run_tag(self.name, self.stem)


def run_tag(name: str | None, fallback: str) -> str:
    """``run_name`` with each run of whitespace replaced by ``_``; ``fallback`` when missing or blank."""
    tag = "_".join((name or "").split())
    return tag or "_".join(fallback.split()) or "run"


def read_submission(path: str | os.PathLike, kind: str) -> Submission:
    """Read and validate a JSON run (``kind``: ``"mi"`` for mixed-initiative, ``"main"`` for main-task)."""
    source = display_name(path)
    data = load_json(path)
    validate_run(data, kind, source)
    return Submission(name=data.get("run_name"), turns=data["turns"], source=source, stem=stem(path),
                      run_type=data.get("run_type"))


def read_mi_run(path: str | os.PathLike) -> Submission:
    """Read and validate a mixed-initiative JSON run (SPEC "File formats")."""
    return read_submission(path, "mi")


def read_main_run(path: str | os.PathLike) -> Submission:
    """Read and validate a main-task JSON run (SPEC "File formats")."""
    return read_submission(path, "main")


# ---------------------------------------------------------------------------------------------- banks

_ID_KEYS = ("question_id", "response_id", "id")
_TEXT_KEYS = ("question", "response", "text")


@dataclass
class BankFile:
    """A bank as read from a file: ``entries`` (id -> text, file order) and its ``shape``."""

    entries: dict[str, str]
    shape: str  # "object" or "list"
    source: str


def read_bank(path: str | os.PathLike) -> BankFile:
    """Read a bank in either shape: ``{"Q0001": "text"}`` or ``[{"question_id", "question"}]``.

    In the list shape ``response_id``/``response`` and ``id``/``text`` are accepted too. An id listed
    twice with different texts is an error; ids must be non-empty and without whitespace.
    """
    source = display_name(path)
    data = load_json(path, unique_keys=True)
    problem = schema.first_error(schema.validator("bank"), data)
    if problem is not None:
        if isinstance(data, (dict, list)):
            raise InputError(problem, source=source)
        raise InputError(f"expected a bank (an object id -> text, or a list of {{\"question_id\", "
                         f"\"question\"}}), got {schema.show(data)}", source=source)
    if isinstance(data, dict):
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
        if item_id in entries and entries[item_id] != text:
            raise InputError(f"[{index}]: id {item_id} is listed twice with different texts", source=source)
        entries.setdefault(item_id, text)
    return BankFile(entries, "list", source)


def bank_json(entries: dict[str, str], shape: str = "object", prefix: str = "Q"):
    """The JSON value of a bank in the given shape (``"object"`` or ``"list"``)."""
    if shape == "object":
        return dict(entries)
    if shape != "list":
        raise ValueError(f"unknown bank shape {shape!r}")
    id_key, text_key = ("response_id", "response") if prefix == "R" else ("question_id", "question")
    return [{id_key: item_id, text_key: text} for item_id, text in entries.items()]


def bank_text(entries: dict[str, str], shape: str = "object", prefix: str = "Q") -> str:
    """A bank as the JSON text castregin writes (UTF-8, indented by 4, entries in the given order)."""
    return json.dumps(bank_json(entries, shape, prefix), ensure_ascii=False, indent=4) + "\n"


def write_bank(path: str | os.PathLike, entries: dict[str, str], shape: str = "object", prefix: str = "Q") -> None:
    """Write a bank atomically (UTF-8, entries in the given order) in the given shape."""
    write_text(path, bank_text(entries, shape, prefix))
