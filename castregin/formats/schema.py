"""JSON inputs checked against JSON schemas (``castregin/formats/schemas/*.json``), with JSON-path messages.

Every JSON file castregin reads has a schema: runs and their turns, banks, turn ids, clembench
episodes and scores, ope experience lines, PARADISE performance functions. A violation is one
:class:`~castregin.errors.InputError` naming the file (and line, for JSONL), the JSON path of the first
problem in document order, and what was expected::

    run.json: turns[3].questions[0].score: expected a number, got "high"

Two keywords extend draft 2020-12: ``finite`` (JSON has no NaN or Infinity, but Python's ``json``
reads them, and integers beyond a float arrive as infinities) and ``finite-or-nan`` (a number, NaN
allowed: clembench writes NaN for an aborted episode). ``x-what`` says in words what a
``pattern``, ``enum`` or ``oneOf`` wants.

A value nested deeper than :data:`castregin.limits.MAX_JSON_DEPTH` is refused before any schema walks
it (jsonschema's checks and messages recurse; no format nests more than a few levels).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from importlib import resources

from .. import limits
from ..errors import InputError
from .common import TooLarge, deeper_than, nested_too_deeply


def _finite(validator, value, instance, schema):
    from jsonschema import ValidationError

    if value and validator.is_type(instance, "number") and not math.isfinite(instance):
        yield ValidationError(f"expected a finite number, got {show(instance)}")


def _finite_or_nan(validator, value, instance, schema):
    from jsonschema import ValidationError

    if value and validator.is_type(instance, "number") and math.isinf(instance):
        yield ValidationError(f"expected {schema.get('x-what', 'a finite number or NaN')}, got {show(instance)}")


@functools.cache
def _validator_class():
    # jsonschema is imported on first use: `castregin evaluate` reads no JSON schema.
    import jsonschema

    return jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                        {"finite": _finite, "finite-or-nan": _finite_or_nan})


@functools.cache
def load(name: str) -> dict:
    """The schema ``schemas/<name>.json`` (cached)."""
    schema = resources.files(__package__).joinpath("schemas").joinpath(f"{name}.json")
    return json.loads(schema.read_text(encoding="utf-8"))


@functools.cache
def validator(name: str):
    """A compiled validator of the schema ``name`` (cached: compiling costs more than validating)."""
    return _validator_class()(load(name))


def show(value) -> str:
    """A value as it would appear in JSON, shortened for a one-line message."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, TooLarge):
        return value.describe()
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


_TYPE_NAMES = {"number": "a number", "string": "a string", "object": "an object", "array": "an array",
               "integer": "an integer", "boolean": "true or false", "null": "null"}


def json_path(parts: Iterable) -> str:
    """``["turns", 3, "score"]`` -> ``turns[3].score`` (the root is the empty string)."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(error, at_root: bool) -> str:
    schema, instance, kind = error.schema, error.instance, error.validator
    if kind == "type" and "x-what" in schema and not {"pattern", "oneOf", "not", "enum", "properties"} & set(schema):
        return f"expected {schema['x-what']}, got {show(instance)}"
    if kind == "type":
        expected = error.validator_value
        names = [_TYPE_NAMES.get(t, t) for t in ([expected] if isinstance(expected, str) else expected)]
        return f"expected {' or '.join(names)}, got {show(instance)}"
    if kind == "required":
        missing = [key for key in error.validator_value if key not in instance]
        if not missing:
            return error.message
        title = schema.get("title", "")
        what = f" (is this {title[0].lower()}{title[1:]}?)" if title and at_root else ""
        return f"missing the key \"{missing[0]}\"{what}"
    if kind in ("pattern", "enum", "oneOf", "not"):
        return f"expected {schema.get('x-what', error.message)}, got {show(instance)}"
    if kind == "minItems":
        return f"expected at least {error.validator_value} item(s), got an empty array"
    if kind in ("minimum", "maximum", "exclusiveMinimum"):
        bound = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">"}[kind]
        return f"expected {schema.get('x-what', f'a number {bound} {error.validator_value}')}, got {show(instance)}"
    return error.message


def first_error(checker, instance, prefix: Iterable = ()) -> str | None:
    """The message of the first error of ``instance`` in document order (``path: problem``), or None."""
    prefix = list(prefix)
    if deeper_than(instance, limits.MAX_JSON_DEPTH - len(prefix)):  # counted from the document's root
        return str(nested_too_deeply(None, path=json_path(prefix)))
    errors = list(checker.iter_errors(instance))
    if not errors:
        return None

    def order(error):
        # Document order for list indices; the deepest error is the most precise one to report, and at
        # one place a wrong type says more than what the value of the right type would have needed.
        return (tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in error.absolute_path),
                error.validator != "type")

    error = min(errors, key=order)
    if error.validator == "oneOf" and error.context and not error.schema.get("x-what"):
        # The branch the value's type chose speaks (a bank object with a bad id: not "expected an array").
        error = min(error.context, key=lambda e: (e.validator == "type" and not e.relative_path,
                                                  len(e.absolute_path) == 0, order(e)))
    path = json_path([*prefix, *error.absolute_path])
    return (f"{path}: " if path else "") + _describe(error, not path)


def validate(instance, name: str, source: str | None = None, line: int | None = None, prefix: Iterable = ()) -> None:
    """Check ``instance`` against the schema ``name``; the first problem is an :class:`InputError`."""
    checker = validator(name)
    if not deeper_than(instance, limits.MAX_JSON_DEPTH) and checker.is_valid(instance):
        return
    message = first_error(checker, instance, prefix)
    if message is None:
        raise ValueError(f"schema {name}: is_valid and iter_errors disagree")
    raise InputError(message, source=source, line=line)
