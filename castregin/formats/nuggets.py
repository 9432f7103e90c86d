"""Nuggets, their assignments to answers, and the answers: the files of nugget evaluation (TREC RAG, iKAT).

Nuggets and assignments are castorini/nuggetizer's JSONL, one query (turn) a line:

- nuggets (``nuggetizer create``): ``{"qid", "query", "nuggets": [{"text", "importance"}]}``, importance
  ``vital`` or ``okay``;
- assignments (``nuggetizer assign``): the same with ``run_id``, ``answer_text`` and each nugget's
  ``assignment``: ``support``, ``partial_support`` or ``not_support`` (nuggetizer's spellings; its
  2-grade assigner gives only the first and the last). A line without ``run_id`` belongs to the run named
  by the file's stem, as nuggetizer names the run after its answer file. nuggetizer writes ``failed`` where
  a model call failed: that is no label, refused unless ``failed="not_support"`` counts it as nuggetizer's
  metrics do (nothing supported).

Answers, which a model or a person reads to assign nuggets:

- TREC RAG 2024 (JSONL): ``{"run_id", "topic_id", "topic", "references": [passage ids], "answer":
  [{"text", "citations": [positions in references]}]}``; a citation may also be a passage id itself;
- TREC iKAT 2024 runs (one JSON document): ``{"run_name", "run_type", "turns": [{"turn_id", "responses":
  [{"rank", "text", "ptkb_provenance", "passage_provenance": [{"id", "text", "score", "used"}]}]}]}``. A
  turn's answer is its response of lowest rank (iKAT evaluates one response a turn), one sentence citing the
  passages marked ``used`` (all of them where no passage says).

Every problem is one :class:`~castregin.errors.InputError` naming the file, the line (JSONL) and the JSON
path; nothing is read in part.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import InputError
from . import schema
from .common import decode, display_name, parse_json_text, read_bytes, stem

SUPPORT, PARTIAL_SUPPORT, NOT_SUPPORT = "support", "partial_support", "not_support"
#: The labels of an assignment, as nuggetizer spells them.
LABELS = (SUPPORT, PARTIAL_SUPPORT, NOT_SUPPORT)
VITAL, OKAY = "vital", "okay"
IMPORTANCES = (VITAL, OKAY)
#: What nuggetizer writes where the model's call failed: no label.
FAILED = "failed"
#: What a ``failed`` assignment becomes: an error, or ``not_support`` (how nuggetizer's metrics count it).
FAILED_CHOICES = ("refuse", NOT_SUPPORT)


@dataclass(frozen=True)
class Nugget:
    """An atomic fact a good answer holds: its text, and whether it is ``vital`` or ``okay``."""

    text: str
    importance: str


@dataclass(frozen=True)
class TurnNuggets:
    """The nuggets of one query (a turn), in file order: the order nuggetizer prompts with."""

    qid: str
    query: str
    nuggets: tuple[Nugget, ...]


@dataclass(frozen=True)
class Assignment:
    """One run's answer to one query, each nugget labelled: ``labels[i]`` is the label of ``nuggets[i]``."""

    run_id: str
    qid: str
    query: str
    nuggets: tuple[Nugget, ...]
    labels: tuple[str, ...]
    answer_text: str | None = None
    source: str = ""
    line: int = 0


@dataclass(frozen=True)
class AnswerSentence:
    """A sentence of an answer and the passages it cites (passage ids)."""

    text: str
    citations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    """A run's generated answer to one query or turn, sentence by sentence, with the passages it cites."""

    run_id: str
    qid: str
    query: str | None
    sentences: tuple[AnswerSentence, ...]
    references: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The whole answer: its sentences joined by a space, as nuggetizer joins them to assign nuggets."""
        return " ".join(sentence.text for sentence in self.sentences)


# --- reading ---------------------------------------------------------------------------------------------


def _jsonl(data: bytes, source: str, schema_name: str, what: str) -> list[tuple[int, dict]]:
    """The objects of a JSONL file with their line numbers, each checked against ``schema_name``."""
    lines = []
    for number, text in enumerate(decode(data, source).splitlines(), start=1):
        if not text.strip():
            continue
        obj = parse_json_text(text, source, number)
        schema.validate(obj, schema_name, source, number)
        lines.append((number, obj))
    if not lines:
        raise InputError(f"the file holds no {what}; expected one JSON object a line", source=source)
    return lines


def _nuggets(items: Sequence[dict]) -> tuple[Nugget, ...]:
    return tuple(Nugget(item["text"], item["importance"]) for item in items)


def parse_nuggets(data: bytes, source: str) -> list[TurnNuggets]:
    """The turns of a nuggets file's bytes, in file order; a qid given twice is an error."""
    seen: dict[str, int] = {}
    turns = []
    for number, obj in _jsonl(data, source, "nuggets", "nuggets"):
        qid = str(obj["qid"])
        if qid in seen:
            raise InputError(f"qid {qid!r} repeats line {seen[qid]}; give each query's nuggets once",
                             source=source, line=number)
        seen[qid] = number
        turns.append(TurnNuggets(qid, obj.get("query", ""), _nuggets(obj["nuggets"])))
    return turns


def read_nuggets(path: str | os.PathLike) -> list[TurnNuggets]:
    """Read a nuggetizer nuggets file (JSONL; ``-`` for standard input)."""
    return parse_nuggets(read_bytes(path), display_name(path))


def _label(value: str, where: str, source: str, line: int, failed: str) -> str:
    if value in LABELS:
        return value
    if value == FAILED and failed == NOT_SUPPORT:
        return NOT_SUPPORT
    if value == FAILED:
        raise InputError(f"{where}: \"failed\": the model's call failed, so the nugget has no label; assign it "
                         "again, or count it as not_support as nuggetizer's metrics do (--failed not_support)",
                         source=source, line=line)
    raise InputError(f"{where}: expected support, partial_support or not_support, got {schema.show(value)}",
                     source=source, line=line)


def parse_assignments(data: bytes, source: str, default_run: str, failed: str = "refuse") -> list[Assignment]:
    """The assignments of a file's bytes, in file order; ``default_run`` names the run of a line without
    ``run_id``. A (run, qid) given twice is an error."""
    if failed not in FAILED_CHOICES:
        raise InputError(f"unknown choice {failed!r}; use one of {', '.join(FAILED_CHOICES)}", argument="failed")
    seen: dict[tuple[str, str], int] = {}
    assignments = []
    for number, obj in _jsonl(data, source, "nugget-assignments", "assignments"):
        run_id, qid = obj.get("run_id", default_run), str(obj["qid"])
        if (run_id, qid) in seen:
            raise InputError(f"run {run_id!r} answers qid {qid!r} on line {seen[run_id, qid]} already; "
                             "give each (run, qid) once", source=source, line=number)
        seen[run_id, qid] = number
        items = obj["nuggets"]
        labels = tuple(_label(item["assignment"], f"nuggets[{k}].assignment", source, number, failed)
                       for k, item in enumerate(items))
        assignments.append(Assignment(run_id, qid, obj.get("query", ""), _nuggets(items), labels,
                                      obj.get("answer_text"), source, number))
    return assignments


def read_assignments(path: str | os.PathLike, failed: str = "refuse") -> list[Assignment]:
    """Read a nuggetizer assignments file (JSONL; ``-`` for standard input); see :func:`parse_assignments`."""
    return parse_assignments(read_bytes(path), display_name(path), stem(path), failed)


def read_assignment_files(paths: Iterable[str | os.PathLike], failed: str = "refuse") -> list[Assignment]:
    """Several assignments files as one source: a (run, qid) in two files is an error naming both."""
    found: dict[tuple[str, str], Assignment] = {}
    assignments = []
    for path in paths:
        for assignment in read_assignments(path, failed):
            key = (assignment.run_id, assignment.qid)
            if key in found:
                first = found[key]
                raise InputError(f"run {assignment.run_id!r} answers qid {assignment.qid!r} here and in "
                                 f"{first.source}:{first.line}; give each (run, qid) once",
                                 source=assignment.source, line=assignment.line)
            found[key] = assignment
            assignments.append(assignment)
    return assignments


def _rag_answer(obj: dict, source: str, line: int) -> Answer:
    references = tuple(obj.get("references", ()))
    sentences = []
    for k, sentence in enumerate(obj["answer"]):
        cited = []
        for c, citation in enumerate(sentence.get("citations", ())):
            if isinstance(citation, str):
                cited.append(citation)
            elif citation < len(references):
                cited.append(references[citation])
            else:
                raise InputError(f"answer[{k}].citations[{c}]: {citation} is no position in references "
                                 f"(it has {len(references)}, counted from 0)", source=source, line=line)
        sentences.append(AnswerSentence(sentence["text"], tuple(cited)))
    return Answer(obj["run_id"], str(obj["topic_id"]), obj.get("topic"), tuple(sentences), references)


def _ikat_answers(document: dict, source: str) -> list[Answer]:
    schema.validate(document, "ikat-run", source)
    answers, seen = [], set()
    for k, turn in enumerate(document["turns"]):
        if turn["turn_id"] in seen:
            raise InputError(f"turns[{k}].turn_id: turn {turn['turn_id']} is listed twice", source=source)
        seen.add(turn["turn_id"])
        # The response of lowest rank; equal ranks keep file order (min is stable).
        response = min(turn["responses"], key=lambda r: r["rank"])
        passages = response.get("passage_provenance", [])
        used = [p["id"] for p in passages if p.get("used", True)]
        answers.append(Answer(document["run_name"], turn["turn_id"], None,
                              (AnswerSentence(response["text"], tuple(used)),), tuple(used)))
    return answers


def parse_answers(data: bytes, source: str) -> list[Answer]:
    """The answers of a TREC RAG 2024 JSONL file or an iKAT 2024 run, told apart by their shape: a JSON document
    with ``turns`` is an iKAT run, anything else is read as JSONL. A (run, query) given twice is an error."""
    text = decode(data, source)
    head = text.lstrip()[:1]
    if head == "{":
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):
            document = None  # several lines of JSON: JSONL (whose reader says what is wrong with a line)
        if isinstance(document, dict) and "turns" in document:
            return _ikat_answers(parse_json_text(text, source), source)
    answers: list[Answer] = []
    seen: dict[tuple[str, str], int] = {}
    for number, obj in _jsonl(data, source, "rag-answer", "answers"):
        answer = _rag_answer(obj, source, number)
        key = (answer.run_id, answer.qid)
        if key in seen:
            raise InputError(f"run {answer.run_id!r} answers topic {answer.qid!r} on line {seen[key]} already",
                             source=source, line=number)
        seen[key] = number
        answers.append(answer)
    return answers


def read_answers(path: str | os.PathLike) -> list[Answer]:
    """Read answers: TREC RAG 2024 JSONL or an iKAT 2024 run JSON (``-`` for standard input)."""
    return parse_answers(read_bytes(path), display_name(path))


def read_answer_files(paths: Iterable[str | os.PathLike]) -> list[Answer]:
    """Several answer files as one set, in the files' order: a (run, query) answered in two files is an error
    naming both."""
    found: dict[tuple[str, str], str] = {}
    answers = []
    for path in paths:
        source = display_name(path)
        for answer in read_answers(path):
            first = found.setdefault((answer.run_id, answer.qid), source)
            if first != source:
                raise InputError(f"run {answer.run_id!r} answers topic {answer.qid!r} here and in {first}; give each "
                                 "(run, topic) once", source=source)
            answers.append(answer)
    return answers


# --- writing ---------------------------------------------------------------------------------------------


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def format_nuggets(turns: Iterable[TurnNuggets]) -> str:
    """Nuggets as nuggetizer writes them: one ``{"query", "qid", "nuggets"}`` a line."""
    return "".join(_line({"query": t.query, "qid": t.qid,
                          "nuggets": [{"text": n.text, "importance": n.importance} for n in t.nuggets]})
                   for t in turns)


def format_assignments(assignments: Iterable[Assignment]) -> str:
    """Assignments as ``nuggetizer assign`` writes them: query, qid, answer_text, run_id, the labelled nuggets."""
    lines = []
    for a in assignments:
        record: dict = {"query": a.query, "qid": a.qid}
        if a.answer_text is not None:
            record["answer_text"] = a.answer_text
        record["run_id"] = a.run_id
        record["nuggets"] = [{"text": n.text, "importance": n.importance, "assignment": label}
                             for n, label in zip(a.nuggets, a.labels, strict=True)]
        lines.append(_line(record))
    return "".join(lines)


def format_answers(answers: Iterable[Answer]) -> str:
    """Answers as TREC RAG 2024 JSONL: citations as positions in ``references``."""
    lines = []
    for a in answers:
        references = list(dict.fromkeys([*a.references, *(c for s in a.sentences for c in s.citations)]))
        position = {ref: i for i, ref in enumerate(references)}
        lines.append(_line({"run_id": a.run_id, "topic_id": a.qid, "topic": a.query or "", "references": references,
                            "response_length": len(a.text.split()),
                            "answer": [{"text": s.text, "citations": [position[c] for c in s.citations]}
                                       for s in a.sentences]}))
    return "".join(lines)
