"""The reference reading of a JSON run, against which the streaming reader (``submissions.read_submission``) is
tested: the whole document parsed by Python's json (``load_json``: ``json.loads``, its syntax errors worded as
castregin words them), then checked against the schemas by jsonschema alone (no fast test), then the values the
conversions use taken from the parsed turns, in the shapes the reader keeps them.
"""

from __future__ import annotations

from castregin.errors import InputError
from castregin.formats import schema
from castregin.formats.submissions import Submission, load_json

#: Per kind of run: the document's schema, each turn's, and what the error calls a document of another type.
KINDS = {"mi": ("mi-run", "mi-turn", "mixed-initiative run"), "main": ("main-run", "main-turn", "main-task run")}


class WholeTurns:
    """The turns of a parsed document, as :class:`castregin.formats.submissions.SpooledTurns` gives them."""

    def __init__(self, turns: list[dict], kind: str):
        self.ids = [turn["turn_id"] for turn in turns]
        if kind == "mi":
            self.kept = [([q["question"] for q in turn["questions"]], [float(q["score"]) for q in turn["questions"]])
                         for turn in turns]
        else:
            self.kept = [[(r["text"], r["rank"], tuple(p["id"] for p in r["provenance"])) for r in turn["responses"]]
                         for turn in turns]

    def __getitem__(self, index: int):
        return self.kept[index]

    def __len__(self) -> int:
        return len(self.ids)

    def close(self) -> None:
        pass


def _problem(checker, instance, prefix=()) -> str | None:
    # is_valid first: first_error also refuses values nested too deeply, which the schema never looks into.
    return None if checker.is_valid(instance) else schema.first_error(checker, instance, prefix)


def read_whole(path, kind: str) -> Submission:
    """The run at ``path`` read whole: a :class:`Submission` over :class:`WholeTurns`, or the reader's
    :class:`InputError` (syntax, then the document's type and schema, then the first bad turn)."""
    source = str(path)
    run_schema, turn_schema, what = KINDS[kind]
    data = load_json(path)
    if not isinstance(data, dict):
        raise InputError(f'expected a {what} (a JSON object with "turns"), got {schema.show(data)}', source=source)
    problem = _problem(schema.validator(run_schema), data)
    checker = schema.validator(turn_schema)
    for index, turn in enumerate(data["turns"] if problem is None else ()):
        problem = _problem(checker, turn, ["turns", index])
        if problem is not None:
            break
    if problem is not None:
        raise InputError(problem, source=source)
    return Submission(name=data.get("run_name"), turns=WholeTurns(data["turns"], kind), source=source,
                      stem=path.stem if hasattr(path, "stem") else "run", run_type=data.get("run_type"))
