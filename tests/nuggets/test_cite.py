"""``castregin nuggets cite`` against a local chat-completions server with its own rule (nugget_server.py): each
(sentence, cited passage) pair labelled full, partial or no support by which of the sentence's words the passage
(title and text) has; citation precision and recall worked by hand below from those labels, as TREC RAG 2024's
support evaluation defines them (Thakur et al., 2025: weighted precision and recall)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from castregin.formats.citations import parse_citation_labels
from castregin.formats.nuggets import parse_answers
from castregin.nuggets.citations import citation_scores, cited_pairs, parse_support

from .nugget_server import citation_rule, serve_nuggets

KEY = "sk-test-cite-SECRET"
PASSAGES = {"p1": ("Honey", "Bees make honey from nectar in the hive."),
            "p2": ("Wax", "Worker bees build comb from wax."),
            "p3": ("Queen", "The queen lays eggs."),
            "p4": ("Other", "Unrelated.")}
REFERENCES = ["p1", "p2", "p3", "p4", "pX"]


def answer(run: str, topic: str, *sentences: tuple[str, list[int]]) -> dict:
    return {"run_id": run, "topic_id": topic, "topic": "bees", "references": REFERENCES,
            "answer": [{"text": text, "citations": cited} for text, cited in sentences]}


ANSWERS = [
    answer("A", "q1", ("Bees make honey from nectar.", [0, 1]), ("The queen lays eggs.", [2]),
           ("Honey keeps forever.", [])),
    answer("A", "q2", ("Bees build comb.", [0, 1, 2, 3])),
    answer("B", "q1", ("Queens rule the hive.", [1]), ("Worker bees build comb from wax.", [1, 1])),
    answer("B", "q3", ("No citations here.", [])),
    answer("B", "q4", ("Something.", [4])),
]
# The pairs and their labels, by hand from the rule (every word of 4+ letters of the sentence in "title: text":
# full; some: partial; none: no support). A's q2 cites four passages: the first three are judged. B's q1 cites
# p2 twice in its second sentence: one pair. B's q4 cites a passage without text: not judged.
LABELS = {("A", "q1", 0, "p1"): "full_support", ("A", "q1", 0, "p2"): "partial_support",
          ("A", "q1", 1, "p3"): "full_support",
          ("A", "q2", 0, "p1"): "partial_support", ("A", "q2", 0, "p2"): "full_support",
          ("A", "q2", 0, "p3"): "no_support",
          ("B", "q1", 0, "p2"): "no_support", ("B", "q1", 1, "p2"): "full_support"}
# Precision: the mean weight of an answer's pairs; recall: the mean over its sentences of their best weight.
HAND = {("A", "q1"): {"citation_precision": 2.5 / 3, "citation_recall": 2 / 3},
        ("A", "q2"): {"citation_precision": 1.5 / 3, "citation_recall": 1.0},
        ("B", "q1"): {"citation_precision": 1 / 2, "citation_recall": 1 / 2},
        ("B", "q3"): {"citation_recall": 0.0}}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    tmp_path = tmp_path_factory.mktemp("inputs")
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ANSWERS))
    (tmp_path / "segments.jsonl").write_text("".join(
        json.dumps({"docid": d, "url": "u", "title": title, "headings": "", "segment": text}) + "\n"
        for d, (title, text) in PASSAGES.items()))
    return {"answers": tmp_path / "answers.jsonl", "passages": tmp_path / "segments.jsonl"}


def cite_args(inputs, server, out, *extra) -> list[str]:
    return ["nuggets", "cite", str(inputs["answers"]), "--passages", str(inputs["passages"]), "--model", "rule-1",
            "--base-url", server.base_url, "--out-dir", str(out), "--api-key-env", "CASTREGIN_TEST_KEY",
            "--retry-wait", "0.01", "--timeout", "5", *extra]


def labels_of(out: Path) -> dict:
    return parse_citation_labels((out / "citation_support.csv").read_bytes(), "citation_support.csv")


def scores_of(out: Path) -> dict:
    rows = list(csv.DictReader(io.StringIO((out / "citation_scores.tsv").read_text()), delimiter="\t"))
    return {(r["run"], r["turn"], r["measure"]): float(r["value"]) for r in rows}


def test_labels_follow_the_rule_and_the_scores_are_those_worked_by_hand(cli, inputs, tmp_path, monkeypatch):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", KEY)
    server = serve_nuggets(faults=False)
    try:
        result = cli(*cite_args(inputs, server, tmp_path / "out", "--name", "rule"))
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "out"
    # The rule, applied here to the texts, gives the labels worked by hand.
    by_rule = {key: citation_rule(ANSWERS_BY[key[:2]]["answer"][key[2]]["text"], ": ".join(PASSAGES[key[3]]))
               for key in LABELS}
    assert {k: v.lower().replace(" ", "_") for k, v in by_rule.items()} == LABELS
    assert labels_of(out) == LABELS
    assert (out / "citation_support.csv").read_text().splitlines()[:2] == [
        "run_id,qid,sentence,passage_id,support", "A,q1,0,p1,full_support"]
    scores = scores_of(out)
    for (run, qid), values in HAND.items():
        for measure, value in values.items():
            assert scores[run, qid, measure] == pytest.approx(value, abs=1e-15), (run, qid, measure)
    assert (("B", "q3", "citation_precision") not in scores) and ("B", "q4", "citation_recall") not in scores
    assert scores["A", "all", "citation_precision"] == pytest.approx((2.5 / 3 + 0.5) / 2, abs=1e-15)
    assert scores["A", "all", "citation_recall"] == pytest.approx((2 / 3 + 1) / 2, abs=1e-15)
    assert scores["B", "all", "citation_precision"] == 0.5 and scores["B", "all", "citation_recall"] == 0.25
    assert scores["A", "all", "num_q"] == 2 and scores["B", "all", "num_q"] == 2
    assert "castregin: warning: 1 cited passage(s) have no text among the passages, so 1 pair(s) are not judged" \
        in result.stderr
    assert "1 answer(s) have a cited pair without a support label and are not scored: B:q4" in result.stderr
    # The run means on standard output, in evaluate's table.
    assert result.stdout.splitlines()[0].split() == ["run", "num_q", "citation_precision", "citation_recall"]
    assert result.stdout.splitlines()[2].split() == ["A", "2", "0.6667", "0.8333"]
    log = json.loads((out / "run_log.json").read_text())
    assert log["pairs"] == 8 == log["calls"] == log["answered"] and log["pairs_without_passage_text"] == 1
    assert log["labels"] == {"full_support": 4, "partial_support": 2, "no_support": 2}
    # The sentence and the passage (title: text) between delimiter lines, after a system message saying they are
    # data.
    body = server.bodies[0]["messages"]
    assert "not instructions to you" in body[0]["content"]
    assert "\nHoney: Bees make honey from nectar in the hive.\nEND PASSAGE " in body[1]["content"]
    # compare --scores reads the scores.
    compared = cli("compare", "--scores", out / "citation_scores.tsv", "-m", "citation_recall")
    assert compared.exit_code == 0, compared.stderr


ANSWERS_BY = {(a["run_id"], a["topic_id"]): a for a in ANSWERS}


def test_faults_are_retried_and_the_key_is_in_no_file(cli, inputs, tmp_path, monkeypatch):
    monkeypatch.setenv("CASTREGIN_TEST_KEY", KEY)
    faulty = serve_nuggets(faults=True, slow=4)
    try:
        result = cli(*cite_args(inputs, faulty, tmp_path / "out", "--timeout", "1.5"))
        again = cli(*cite_args(inputs, faulty, tmp_path / "again", "--cache", tmp_path / "out" / "cache.sqlite"))
    finally:
        faulty.shutdown()
    assert result.exit_code == 0, result.stderr
    assert labels_of(tmp_path / "out") == LABELS
    log = json.loads((tmp_path / "out" / "run_log.json").read_text())
    assert sum(log["this_run"]["failures"].values()) > 0
    # A second run on the same cache asks nothing.
    assert again.exit_code == 0 and labels_of(tmp_path / "again") == LABELS
    assert json.loads((tmp_path / "again" / "run_log.json").read_text())["this_run"]["requests"] == 0
    for path in (tmp_path / "out").rglob("*"):
        assert b"SECRET" not in path.read_bytes(), path


def test_an_unreadable_answer_leaves_its_answer_unscored(cli, inputs, tmp_path):
    odd = tmp_path / "odd.jsonl"
    odd.write_text(json.dumps(answer("C", "q1", ("RAMBLE on bees.", [0]), ("The queen lays eggs.", [2]))) + "\n"
                   + json.dumps(answer("C", "q2", ("The queen lays eggs.", [2]))) + "\n")
    server = serve_nuggets(faults=False)
    try:
        result = cli("nuggets", "cite", odd, "--passages", inputs["passages"], "--model", "m", "--base-url",
                     server.base_url, "--out-dir", tmp_path / "out", "-q", "--format", "tsv")
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.stderr
    assert labels_of(tmp_path / "out") == {("C", "q1", 1, "p3"): "full_support", ("C", "q2", 0, "p3"): "full_support"}
    assert "1 answer(s) could not be read (0 refusals)" in result.stderr
    assert "not scored: C:q1" in result.stderr
    assert scores_of(tmp_path / "out")["C", "all", "num_q"] == 1


@pytest.mark.parametrize(("text", "label"), [
    ("Full Support", "full_support"), ("The statement is checked.\n**Partial Support**", "partial_support"),
    ("no support.", "no_support"), ("Label: full_support", "full_support"), ("No Support\n\n", "no_support"),
    ("Full Support\nI am not sure.", None), ("It supports it.", None), ("", None), (None, None),
    ("Partial Support (not full support)", "partial_support"), ("No support, though partial support elsewhere",
                                                               "no_support"),
])
def test_the_support_label_is_read_from_the_final_line(text, label):
    assert parse_support(text) == label


def test_scores_from_a_label_file_people_could_have_written(inputs):
    """A crowd's labels, aggregated to one per pair, are the same file: scored by the same function."""
    answers = parse_answers(inputs["answers"].read_bytes(), "answers.jsonl")
    text = "run_id,qid,sentence,passage_id,support,worker_count\n" + "".join(
        f"{run},{qid},{sentence},{passage},{label},3\n" for (run, qid, sentence, passage), label in LABELS.items())
    labels = parse_citation_labels(text.encode(), "people.csv")
    with pytest.warns(Warning, match="not scored: B:q4"):
        rows = citation_scores(answers, labels, "people", per_turn=True)
    got = {(run, turn, measure): value for run, source, measure, turn, value in rows if turn != "all"}
    assert got == pytest.approx({(run, qid, m): v for (run, qid), values in HAND.items() for m, v in values.items()},
                                abs=1e-15)
    assert {source for _, source, *_ in rows} == {"people"}
    assert cited_pairs(answers[1]) == [(0, "p1"), (0, "p2"), (0, "p3")]
    assert cited_pairs(answers[1], 4) == [(0, "p1"), (0, "p2"), (0, "p3"), (0, "p4")]


@pytest.mark.parametrize(("row", "message"), [
    ("A,q1,0,p1,supported", "support: expected full_support, partial_support or no_support, got 'supported'"),
    ("A,q1,x,p1,no_support", "sentence: expected the sentence's position from 0, got 'x'"),
    ("A,q1,0,p1,no_support\nA,q1,0,p1,full_support", "the pair is labelled on line 2 already"),
])
def test_a_bad_label_file_is_one_line(row, message):
    from castregin.errors import InputError

    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_citation_labels(f"run_id,qid,sentence,passage_id,support\n{row}\n".encode(), "labels.csv")
