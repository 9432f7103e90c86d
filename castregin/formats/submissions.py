"""JSON submissions of CAsT 2022 (mixed-initiative and main-task runs) and item banks.

The run formats are defined by JSON schemas (:data:`MI_RUN_SCHEMA`, :data:`MAIN_RUN_SCHEMA`) checked
with ``jsonschema``; a violation is one :class:`~castregin.errors.InputError` naming the JSON path,
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
from collections.abc import Iterable
from dataclasses import dataclass, field

import jsonschema
from jsonschema import Draft202012Validator

from ..errors import InputError
from .common import TooLarge, decode, display_name, parse_json_text, read_bytes, stem, write_text

NO_SPACE = r"^\S+$"

_FINITE_NUMBER = {"type": "number", "finite": True}
_TURN_ID = {"type": "string", "pattern": NO_SPACE, "x-what": "a turn id without spaces such as \"132_1-1\""}

MI_TURN_SCHEMA = {
    "type": "object",
    "required": ["turn_id", "questions"],
    "properties": {
        "turn_id": _TURN_ID,
        "questions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["question", "score"],
                "properties": {"question": {"type": "string"}, "score": _FINITE_NUMBER},
            },
        },
    },
}

MAIN_TURN_SCHEMA = {
    "type": "object",
    "required": ["turn_id", "responses"],
    "properties": {
        "turn_id": _TURN_ID,
        "responses": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["text", "rank", "provenance"],
                "properties": {
                    "text": {"type": "string"},
                    "rank": _FINITE_NUMBER,
                    "provenance": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["id"],
                            "properties": {
                                "id": {"type": "string", "pattern": NO_SPACE,
                                       "x-what": "a passage id without spaces"},
                                "text": {"type": "string"},
                                "score": _FINITE_NUMBER,
                            },
                        },
                    },
                },
            },
        },
    },
}


def _run_schema(turn_schema: dict, extra: dict | None = None) -> dict:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["turns"],
        "properties": {"run_name": {"type": "string"}, **(extra or {}),
                       "turns": {"type": "array", "items": turn_schema}},
    }


#: A mixed-initiative run: ``{"run_name", "turns": [{"turn_id", "questions": [{"question", "score"}]}]}``.
MI_RUN_SCHEMA = _run_schema(MI_TURN_SCHEMA)
#: A main-task run: ``{"run_name", "run_type", "turns": [{"turn_id", "responses": [...]}]}``.
MAIN_RUN_SCHEMA = _run_schema(MAIN_TURN_SCHEMA, {"run_type": {"type": "string"}})

#: A bank: id -> text, or the official list of ``{"question_id", "question"}``.
BANK_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "oneOf": [
        {"type": "object", "propertyNames": {"pattern": NO_SPACE}, "additionalProperties": {"type": "string"}},
        {"type": "array", "items": {"type": "object", "x-what": "an object {\"question_id\", \"question\"}"}},
    ],
}


def _finite(validator, value, instance, schema):
    # JSON has no NaN or Infinity, but Python's json reads them (and 1e999 as inf): reject them here.
    if value and validator.is_type(instance, "number") and not math.isfinite(instance):
        yield jsonschema.ValidationError(f"expected a finite number, got {_show(instance)}")


_Validator = jsonschema.validators.extend(Draft202012Validator, {"finite": _finite})


def _show(value) -> str:
    """A value as it would appear in JSON, shortened for a one-line message."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, TooLarge):
        return value.describe()
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


_TYPE_NAMES = {"number": "a number", "string": "a string", "object": "an object", "array": "a list",
               "integer": "an integer", "boolean": "true or false", "null": "null"}


def json_path(parts: Iterable) -> str:
    """``["turns", 3, "score"]`` -> ``turns[3].score`` (the root is the empty string)."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(error: jsonschema.ValidationError) -> str:
    schema, instance = error.schema, error.instance
    if error.validator == "type":
        expected = error.validator_value
        names = [_TYPE_NAMES.get(t, t) for t in ([expected] if isinstance(expected, str) else expected)]
        return f"expected {' or '.join(names)}, got {_show(instance)}"
    if error.validator == "required":
        missing = [key for key in error.validator_value if key not in instance]
        return f"missing the key \"{missing[0]}\"" if missing else error.message
    if error.validator == "pattern":
        return f"expected {schema.get('x-what', 'a string without spaces')}, got {_show(instance)}"
    if error.validator == "finite":
        return error.message
    return error.message


def _first_error(validator, instance, prefix: list) -> InputError | None:
    errors = list(validator.iter_errors(instance))
    if not errors:
        return None

    def order(error):
        # Document order for list indices; the deepest error is the most precise one to report.
        return tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in error.absolute_path)

    error = min(errors, key=order)
    if error.validator == "oneOf" and error.context:
        error = min(error.context, key=lambda e: (len(e.absolute_path) == 0, order(e)))
    path = json_path([*prefix, *error.absolute_path])
    return InputError((f"{path}: " if path else "") + _describe(error))


def _number(value) -> bool:
    return (type(value) is float and math.isfinite(value)) or type(value) is int


def _mi_turn_ok(turn) -> bool:
    if type(turn) is not dict:
        return False
    turn_id, questions = turn.get("turn_id"), turn.get("questions")
    if type(turn_id) is not str or not _NO_SPACE.match(turn_id) or type(questions) is not list:
        return False
    for question in questions:
        if type(question) is not dict or type(question.get("question")) is not str:
            return False
        if not _number(question.get("score")):
            return False
    return True


def _main_turn_ok(turn) -> bool:
    if type(turn) is not dict:
        return False
    turn_id, responses = turn.get("turn_id"), turn.get("responses")
    if type(turn_id) is not str or not _NO_SPACE.match(turn_id) or type(responses) is not list:
        return False
    for response in responses:
        if type(response) is not dict or type(response.get("text")) is not str:
            return False
        if not _number(response.get("rank")) or type(response.get("provenance")) is not list:
            return False
        for passage in response["provenance"]:
            if type(passage) is not dict:
                return False
            pid = passage.get("id")
            if type(pid) is not str or not _NO_SPACE.match(pid):
                return False
            if "text" in passage and type(passage["text"]) is not str:
                return False
            if "score" in passage and not _number(passage["score"]):
                return False
    return True


_NO_SPACE = re.compile(NO_SPACE)

_KINDS = {
    "mi": (MI_RUN_SCHEMA, MI_TURN_SCHEMA, _mi_turn_ok, "mixed-initiative run"),
    "main": (MAIN_RUN_SCHEMA, MAIN_TURN_SCHEMA, _main_turn_ok, "main-task run"),
}


def validate_run(data, kind: str, source: str) -> None:
    """Check a parsed JSON run against its schema (``kind`` is ``"mi"`` or ``"main"``).

    Raises :class:`InputError` with the JSON path of the first problem in document order.
    """
    run_schema, turn_schema, turn_ok, what = _KINDS[kind]
    if not isinstance(data, dict):
        raise InputError(f"expected a {what} (a JSON object with \"turns\"), got {_show(data)}", source=source)
    # The document without its turns first (cheap), then each turn: fast test, schema if it fails.
    shallow = {**run_schema, "properties": {**run_schema["properties"], "turns": {"type": "array"}}}
    error = _first_error(_Validator(shallow), data, [])
    if error is None:
        turn_validator = _Validator(turn_schema)
        for index, turn in enumerate(data["turns"]):
            if not turn_ok(turn):
                error = _first_error(turn_validator, turn, ["turns", index])
                if error is not None:
                    break
    if error is not None:
        raise InputError(error.problem, source=source)


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
    error = _first_error(_Validator(BANK_SCHEMA), data, [])
    if error is not None:
        if isinstance(data, (dict, list)):
            raise InputError(error.problem, source=source)
        raise InputError(f"expected a bank (an object id -> text, or a list of {{\"question_id\", "
                         f"\"question\"}}), got {_show(data)}", source=source)
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
            raise InputError(f"[{index}].{id_key}: expected an id without spaces, got {_show(item_id)}",
                             source=source)
        if not isinstance(text, str):
            raise InputError(f"[{index}].{text_key}: expected a string, got {_show(text)}", source=source)
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
