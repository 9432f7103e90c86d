"""The files of nugget evaluation: nuggetizer's nuggets and assignments, TREC RAG 2024 answers, iKAT 2024 runs
and topics; bad input refused in one line with nothing written; ``nuggets score`` in every output format."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from schema_mutations import refused_or_unread

from castregin.errors import InputError
from castregin.formats.nuggets import (
    AnswerSentence,
    format_answers,
    format_assignments,
    format_nuggets,
    parse_answers,
    parse_assignments,
    parse_nuggets,
    read_assignments,
)
from castregin.formats.topics import parse_topics

DATA = Path(__file__).resolve().parent / "data"
HUMAN = DATA / "cone_rag_human"

# The first lines of a nuggetizer run: its README's example (castorini/nuggetizer, "Assign Output - Answers").
ASSIGNED = {"query": "What is Python?", "qid": "q1", "answer_text": "Python is a high-level programming language...",
            "response_length": 42, "run_id": "run-123", "nuggets": [
                {"text": "Python is a high-level programming language", "importance": "vital",
                 "assignment": "support"},
                {"text": "Python is used for data science", "importance": "okay", "assignment": "partial_support"},
                {"text": "Python supports multithreading", "importance": "okay", "assignment": "not_support"}]}
# A TREC RAG 2024 answer as Ragnarok writes it (castorini/nuggetizer's tests hold the same shape).
RAG_ANSWER = {"run_id": "ragnarok", "topic_id": "2024-145979", "topic": "what is vicarious trauma",
              "references": ["msmarco_v2.1_doc_13_1647729865#0_3617397938",
                             "msmarco_v2.1_doc_13_1647729865#1_3617399497"],
              "response_length": 9, "answer": [{"text": "Vicarious trauma is indirect trauma.", "citations": [0]},
                                                {"text": "Helpers can suffer it.", "citations": [1, 0]}]}
# Two turns of TREC iKAT 2024's sample run (irlabamsterdam/iKAT, 2024/scripts/run_validation/tests/data).
IKAT_RUN = {"run_name": "sample_run", "run_type": "automatic", "eval_response": True, "turns": [
    {"turn_id": "0_1", "responses": [{
        "rank": 1, "text": "<placeholder text for response 1>", "ptkb_provenance": ["13"], "passage_provenance": [
            {"id": "clueweb22-en0025-76-08262:14", "score": 3.160177230834961, "used": True},
            {"id": "clueweb22-en0014-65-01836:7", "score": 3.0112557411193848, "used": True},
            {"id": "clueweb22-en0023-59-02639:9", "score": 1.929551601409912, "used": False}]}]},
    {"turn_id": "0_2", "responses": [{
        "rank": 1, "text": "<placeholder text for response 1>", "ptkb_provenance": ["19", "12"], "passage_provenance": [
            {"id": "clueweb22-en0013-35-05370:0", "score": 2.327969551086426, "used": True}]}]}]}
# The first three turns of TREC iKAT 2024's topic 0 (irlabamsterdam/iKAT, 2024/data/2024_test_topics.json).
IKAT_TOPICS = [{"number": 0, "title": "Traveling to Egypt", "ptkb": {"12": "I am from San Francisco, California."},
                "turns": [
                    {"turn_id": 1, "utterance": "I'm thinking about traveling to Egypt. What is the best time of year "
                                                "to visit there for pleasant weather?",
                     "response": "The best time to visit Egypt is during winter from October to April, when "
                                 "temperatures are lower."},
                    {"turn_id": 2, "utterance": "Oh, do I need a visa?", "resolved_utterance": "Oh, do I need a visa "
                     "to visit Egypt as an American citizen?",
                     "response": "American citizens need to apply for a visa before entering Egypt."},
                    {"turn_id": 3, "utterance": "OK, how should I apply for it?",
                     "response": "You can apply for an E-Visa or Visa On Arrival."}]}]


def _jsonl(*records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_assignments_read_as_nuggetizer_writes_them_and_written_back():
    (assignment,) = parse_assignments(_jsonl(ASSIGNED), "a.jsonl", "a")
    assert (assignment.run_id, assignment.qid, assignment.labels) == ("run-123", "q1", (
        "support", "partial_support", "not_support"))
    assert [n.importance for n in assignment.nuggets] == ["vital", "okay", "okay"]
    again = parse_assignments(format_assignments([assignment]).encode(), "b.jsonl", "b")
    assert again[0].labels == assignment.labels and again[0].nuggets == assignment.nuggets
    # nuggetizer's own key order (query, qid, answer_text, run_id, nuggets); response_length is not kept.
    assert list(json.loads(format_assignments([assignment]))) == ["query", "qid", "answer_text", "run_id", "nuggets"]


def test_a_line_without_run_id_belongs_to_the_run_its_file_names(tmp_path):
    record = {k: v for k, v in ASSIGNED.items() if k != "run_id"}
    path = tmp_path / "bm25-gpt4o.jsonl"
    path.write_bytes(_jsonl(record))
    assert read_assignments(path)[0].run_id == "bm25-gpt4o"


def test_nuggets_read_and_written_back():
    nuggets = {"query": "What is Python?", "qid": "q1",
               "nuggets": [{"text": n["text"], "importance": n["importance"]} for n in ASSIGNED["nuggets"]]}
    (turn,) = parse_nuggets(_jsonl(nuggets), "n.jsonl")
    assert json.loads(format_nuggets([turn])) == nuggets


def test_rag_2024_answers_resolve_citations_to_passages():
    (answer,) = parse_answers(_jsonl(RAG_ANSWER), "rag.jsonl")
    assert answer.text == "Vicarious trauma is indirect trauma. Helpers can suffer it."
    assert answer.sentences[1].citations == (RAG_ANSWER["references"][1], RAG_ANSWER["references"][0])
    assert json.loads(format_answers([answer])) == RAG_ANSWER


def test_an_ikat_2024_run_answers_each_turn_with_its_first_response_and_the_passages_it_used():
    answers = parse_answers(json.dumps(IKAT_RUN).encode(), "run.json")
    assert [(a.run_id, a.qid) for a in answers] == [("sample_run", "0_1"), ("sample_run", "0_2")]
    assert answers[0].sentences == (AnswerSentence("<placeholder text for response 1>", (
        "clueweb22-en0025-76-08262:14", "clueweb22-en0014-65-01836:7")),)


def test_ikat_topics_give_each_turn_its_conversation():
    tree = parse_topics(IKAT_TOPICS, "2024_test_topics.json")
    turns = IKAT_TOPICS[0]["turns"]
    assert tree.conversation("0_3") == [
        {"speaker": "user", "text": turns[0]["utterance"]}, {"speaker": "system", "text": turns[0]["response"]},
        {"speaker": "user", "text": turns[1]["utterance"]}, {"speaker": "system", "text": turns[1]["response"]},
        {"speaker": "user", "text": turns[2]["utterance"]}]


@pytest.mark.parametrize(("data", "message"), [
    (_jsonl(ASSIGNED, {**ASSIGNED, "qid": "q2", "nuggets": [{**ASSIGNED["nuggets"][0], "assignment": "supported"}]}),
     "a.jsonl:2: nuggets[0].assignment: expected support, partial_support or not_support, got \"supported\""),
    (_jsonl({**ASSIGNED, "nuggets": [{**ASSIGNED["nuggets"][0], "assignment": "failed"}]}),
     "a.jsonl:1: nuggets[0].assignment: \"failed\": the model's call failed"),
    (_jsonl({**ASSIGNED, "nuggets": [{"text": "x", "importance": "high", "assignment": "support"}]}),
     "a.jsonl:1: nuggets[0].importance: expected \"vital\" or \"okay\", got \"high\""),
    (_jsonl({k: v for k, v in ASSIGNED.items() if k != "qid"}), "a.jsonl:1: missing the key \"qid\""),
    (_jsonl(ASSIGNED, ASSIGNED), "a.jsonl:2: run 'run-123' answers qid 'q1' on line 1 already"),
    (b"\n", "a.jsonl: the file holds no assignments"),
    (b'{"qid": "q1", "nuggets": [}\n', "a.jsonl:1: invalid JSON at column 27"),
])
def test_bad_assignments_are_one_line(data, message):
    with pytest.raises(InputError) as caught:
        parse_assignments(data, "a.jsonl", "a")
    assert str(caught.value).startswith(message)


def test_a_failed_call_counts_as_not_support_when_asked():
    data = _jsonl({**ASSIGNED, "nuggets": [{**ASSIGNED["nuggets"][0], "assignment": "failed"}]})
    assert parse_assignments(data, "a.jsonl", "a", failed="not_support")[0].labels == ("not_support",)


@pytest.mark.parametrize(("data", "message"), [
    (_jsonl({**RAG_ANSWER, "answer": [{"text": "x", "citations": [2]}]}),
     "rag.jsonl:1: answer[0].citations[0]: 2 is no position in references (it has 2, counted from 0)"),
    (_jsonl({**RAG_ANSWER, "answer": [{"text": "x", "citations": [-1]}]}),
     "rag.jsonl:1: answer[0].citations[0]: expected a position in references (0 first) or a passage id, got -1"),
    (json.dumps({**IKAT_RUN, "turns": [{"turn_id": "0_1", "responses": []}]}).encode(),
     "rag.jsonl: turns[0].responses: expected at least 1 item(s)"),
])
def test_bad_answers_are_one_line(data, message):
    with pytest.raises(InputError) as caught:
        parse_answers(data, "rag.jsonl")
    assert str(caught.value).startswith(message)


def test_every_field_read_from_an_assignment_is_constrained(cli, tmp_path):
    def write(directory, document):
        path = directory / "run.jsonl"
        path.write_text(json.dumps(document) + "\n")
        return path

    problems = refused_or_unread(cli, tmp_path, ASSIGNED, write,
                                 lambda path: ["nuggets", "score", path, "-q", "--format", "json"], "assignments")
    assert problems == []


# --- the command -------------------------------------------------------------------------------------------


def test_a_bad_file_among_several_writes_nothing(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(_jsonl({**ASSIGNED, "nuggets": [{**ASSIGNED["nuggets"][0], "assignment": "maybe"}]}))
    out = tmp_path / "scores.tsv"
    result = cli("nuggets", "score", *sorted(HUMAN.glob("*.jsonl")), bad, "--format", "tsv", "-o", out)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith(f"castregin: error: {bad}:1: nuggets[0].assignment: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_run_answering_a_query_in_two_files_is_refused(cli, tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(_jsonl(ASSIGNED))
    second.write_bytes(_jsonl(ASSIGNED))
    result = cli("nuggets", "score", first, second)
    assert result.exit_code == 1
    assert f"{second}:1: run 'run-123' answers qid 'q1' here and in {first}:1" in result.stderr


def test_every_output_format_holds_the_same_numbers(cli):
    runs = sorted(HUMAN.glob("*.jsonl"))
    as_json = json.loads(cli("nuggets", "score", *runs, "-q", "--name", "human", "--format", "json").stdout)
    assert {r["qrels"] for r in as_json} == {"human"}
    values = {(r["run"], r["measure"], r["turn"]): r["value"] for r in as_json}
    for fmt, delimiter in (("tsv", "\t"), ("csv", ",")):
        rows = list(csv.DictReader(io.StringIO(cli("nuggets", "score", *runs, "-q", "--name", "human",
                                                   "--format", fmt).stdout), delimiter=delimiter))
        assert {(r["run"], r["measure"], r["turn"]): float(r["value"]) for r in rows} == values
    markdown = cli("nuggets", "score", *runs, "--format", "markdown").stdout
    assert markdown.splitlines()[0] == ("| run | num_q | strict_vital_score | strict_all_score | vital_score | "
                                        "all_score | nugget_recall |")
    assert f"| nii-1 | 6 | {values['nii-1', 'strict_vital_score', 'all']:.4f} |" in markdown
    latex = cli("nuggets", "score", *runs, "-m", "all", "--format", "latex").stdout
    assert "\\textbf{" in latex and "all\\_score" in latex


def test_turns_without_a_vital_nugget_are_named_on_standard_error(cli):
    result = cli("nuggets", "score", HUMAN)
    assert ("castregin: warning: 3 turn(s) have no vital nugget: 0_2, 8_3, 10_2 (infos-2); they score 0"
            in result.stderr)


def test_an_unknown_measure_is_a_usage_error(cli):
    result = cli("nuggets", "score", HUMAN / "iires-1.jsonl", "-m", "precision")
    assert result.exit_code == 2
    assert "unknown nugget measure 'precision'" in result.stderr
