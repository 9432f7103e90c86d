"""Schema mutation: every value of a JSON document replaced, one at a time, by one of a wrong type; each
mutation must be refused in one line or leave the output unchanged (tests/formats/test_schema_fields.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

#: What replaces a value of each kind: of a type no schema accepts there.
WRONG_SCALAR = {"wrong": "type"}
WRONG_CONTAINER = "x"


def paths(document, prefix=()):
    """Every path into ``document`` (keys and indices), the root included, parents before children."""
    yield prefix
    if isinstance(document, dict):
        for key, value in document.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from paths(value, (*prefix, index))


def mutated(document, path):
    """``document`` with the value at ``path`` replaced by one of a wrong type."""
    if not path:
        return WRONG_CONTAINER if isinstance(document, (dict, list)) else WRONG_SCALAR
    copied = copy.deepcopy(document)
    parent = copied
    for part in path[:-1]:
        parent = parent[part]
    value = parent[path[-1]]
    parent[path[-1]] = WRONG_CONTAINER if isinstance(value, (dict, list)) else WRONG_SCALAR
    return copied


def refused_or_unread(cli, tmp_path: Path, document, write: Callable, args: Callable, label: str,
                      skip_root: bool = False) -> list[str]:
    """Read ``document`` and each of its mutations through ``cli(*args(path))``; the paths whose mutation was
    neither refused in one line nor left the output unchanged (``skip_root``: the root is not mutated)."""
    valid = tmp_path / "valid"
    valid.mkdir()
    baseline = cli(*args(write(valid, document)))
    assert baseline.exit_code == 0, (label, baseline.stderr)
    expected = baseline.stdout.replace(str(valid), "<dir>")  # outputs may name their input
    problems = []
    for number, path in enumerate(paths(document)):
        if skip_root and not path:
            continue
        where = tmp_path / f"m{number}"
        where.mkdir()
        try:
            result = cli(*args(write(where, mutated(document, path))))
        except Exception as err:  # noqa: BLE001 - a traceback is what this test looks for
            problems.append(f"{label} {list(path)}: {type(err).__name__}: {err}")
            continue
        lines = result.stderr.splitlines()
        if result.exit_code == 1 and lines and lines[-1].startswith("castregin: error: "):
            continue
        if result.exit_code == 0 and result.stdout.replace(str(where), "<dir>") == expected:
            continue
        problems.append(f"{label} {list(path)}: exit {result.exit_code}, {result.stderr.strip()[-200:]!r}")
    return problems
