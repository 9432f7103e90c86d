"""Nugget work by people: ``castregin nuggets tasks`` makes the tasks, simulated workers answer them (honest ones
who label by a truth of their own, a spammer who does not), and ``castregin nuggets aggregate`` turns their CSVs into
nuggetizer's files by the crowd rules. The expected files are the truth the honest workers labelled by, written in
the test from the inputs; citation precision and recall are computed here from their definition (TREC RAG 2024's
weighted precision and recall), on the labels the people meant."""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

import pytest
from nuggets.nugget_server import support_rule
from nuggets.test_assign import ANSWERS, NUGGETS

from castregin.errors import InputError
from castregin.formats.nuggets import Answer, AnswerSentence, Nugget, TurnNuggets
from castregin.formats.passages import Passage
from castregin.judging.nugget_tasks import assignment_tasks, citation_tasks, importance_tasks

VALUES = {"not_support": 0, "partial_support": 1, "support": 2}


def _files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "nuggets.jsonl").write_text("".join(json.dumps(t) + "\n" for t in NUGGETS))
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ANSWERS))
    passages = [{"docid": "d1", "text": "Photosynthesis converts light energy into chemical energy in plants."},
                {"docid": "d2", "title": "Volcanoes", "text": "Magma rises because it is less dense than rock."},
                {"docid": "d3", "text": "Canberra is the capital of Australia."}]
    (tmp_path / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    return {name: tmp_path / f"{name}.jsonl" for name in ("nuggets", "answers", "passages")}


def _manifest(directory: Path) -> dict:
    return json.loads((directory / "nugget_tasks.json").read_text())


def _tasks(directory: Path) -> list[dict]:
    with (directory / "tasks.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def _judgments(path: Path, criterion: str, tasks: list[dict], gold: set, truth, workers=("a", "b", "spam")) -> Path:
    """Honest workers label by ``truth(turn, item)`` and planted gold 0; the spammer says 2 throughout."""
    lines = [f"worker_id,turn_id,item_id,{criterion},seconds"]
    for worker in workers:
        for task in tasks:
            key = (task["turn_id"], task["item_id"])
            label = 2 if worker == "spam" else (0 if key in gold else truth(*key))
            lines.append(f"{worker},{key[0]},{key[1]},{label},4.5")
    path.write_text("\n".join(lines) + "\n")
    return path


def _gold(directory: Path) -> set:
    with (directory / "gold.csv").open(newline="") as handle:
        return {(r["turn_id"], r["item_id"]) for r in csv.DictReader(handle)}


def _answer_text(answer: dict) -> str:
    return " ".join(s["text"] for s in answer["answer"])


def test_assignment_tasks_are_the_nuggets_of_each_answer_with_gold_planted():
    turns = [TurnNuggets("1_1", "q one", (Nugget("alpha fact one", "vital"), Nugget("alpha fact two", "okay"))),
             TurnNuggets("2_1", "q two", (Nugget("bravo fact", "vital"),))]
    answers = [Answer("r1", "1_1", None, (AnswerSentence("one answer"),)),
               Answer("r2", "1_1", None, (AnswerSentence(""),)),
               Answer("r1", "2_1", None, (AnswerSentence("two answer"),)),
               Answer("r1", "3_1", None, (AnswerSentence("no nuggets"),))]
    with pytest.warns(Warning, match=r"1 answer\(s\) are to turns without nuggets and are left out: r1:3_1"):
        built = assignment_tasks(turns, answers, gold_per_topic=1, seed=7)
    tasks = built.task_set.tasks
    real = {(t.turn_id, t.item_id, t.text) for t in tasks if not t.gold}
    assert real == {("1_1", "r1#0", "alpha fact one"), ("1_1", "r1#1", "alpha fact two"), ("2_1", "r1#0", "bravo fact")}
    # The empty answer is in the manifest (it supports nothing) but is no task.
    assert [(r["run_id"], r["qid"], r["answer_text"]) for r in built.manifest["records"]] == [
        ("r1", "1_1", "one answer"), ("r2", "1_1", ""), ("r1", "2_1", "two answer")]
    # One planted item per topic: the other topic's nugget, the next index of the answer it joins, range 0-0.
    planted = {(t.turn_id, t.item_id, t.text) for t in tasks if t.gold}
    into_two = next(text for turn, _, text in planted if turn == "2_1")
    assert into_two in {"alpha fact one", "alpha fact two"}
    assert planted == {("1_1", "r1#2", "bravo fact"), ("2_1", "r1#1", into_two)}
    assert built.task_set.gold == [{"turn_id": t, "item_id": i, "criterion": "support", "min_label": 0,
                                    "max_label": 0} for t, i, _ in sorted(planted)]
    assert sorted(map(tuple, built.manifest["planted"])) == sorted((t, i) for t, i, _ in planted)
    # The answer is shown after the query; the same seed gives the same order, another seed another.
    assert tasks[0].context[-1]["speaker"] == "answer"
    again = assignment_tasks(turns, answers[:3], gold_per_topic=1, seed=7).task_set.tasks
    assert [(t.turn_id, t.item_id) for t in again] == [(t.turn_id, t.item_id) for t in tasks]


def test_too_little_to_borrow_and_foreign_gold_rows_are_refused():
    turns = [TurnNuggets("1_1", "q", (Nugget("same", "vital"),)), TurnNuggets("2_1", "q", (Nugget("same", "okay"),))]
    with pytest.raises(InputError, match="topic 1 can borrow only 0 off-topic item"):
        importance_tasks(turns, gold_per_topic=1)
    with pytest.raises(InputError, match=r"\(1_1, 5\) is no task"):
        importance_tasks(turns, gold=[{"turn_id": "1_1", "item_id": "5", "criterion": "importance", "min_label": 0,
                                       "max_label": 0, "line": 2}])
    with pytest.raises(InputError, match="criterion support is not labelled here"):
        importance_tasks(turns, gold=[{"turn_id": "1_1", "item_id": "0", "criterion": "support", "min_label": 0,
                                       "max_label": 0}])


def test_citation_tasks_skip_passages_without_text_and_never_reuse_their_position():
    answer = Answer("r", "1_1", "q", (AnswerSentence("s zero", ("p1", "gone", "p1", "p2")),
                                      AnswerSentence("s one", ())))
    other = Answer("r", "2_1", "q", (AnswerSentence("t", ("p3",)),))
    passages = {"p1": Passage("one"), "p2": Passage("two", "Title"), "p3": Passage("three")}
    with pytest.warns(Warning, match=r"1 cited passage\(s\) have no text .* 1 pair\(s\) are no task"):
        built = citation_tasks([answer, other], passages, max_citations=3, gold_per_topic=1)
    items = {(t.turn_id, t.item_id): t.text for t in built.task_set.tasks}
    # Position 1 (the passage without text) is no task; the planted passage takes position 3, not 1.
    assert items[("1_1", "r#0#0")] == "one" and items[("1_1", "r#0#2")] == "Title: two"
    assert items[("1_1", "r#0#3")] == "three" and ("1_1", "r#0#1") not in items
    assert built.manifest["max_citations"] == 3


@pytest.fixture
def inputs(tmp_path) -> dict[str, Path]:
    return _files(tmp_path)


def test_people_assign_nuggets_and_the_crowd_rules_give_nuggetizer_assignments(cli, inputs, tmp_path):
    result = cli("nuggets", "tasks", "assign", inputs["nuggets"], inputs["answers"], "--gold-per-topic", "1",
                 "--format", "long", "--out-dir", tmp_path / "assign")
    assert result.exit_code == 0, result.stderr
    manifest = _manifest(tmp_path / "assign")
    texts = {(r["qid"], r["run_id"]): r for r in manifest["records"]}

    def truth(turn, item):
        run, index = item.rsplit("#", 1)
        record = texts[turn, run]
        return VALUES[support_rule(record["nuggets"][int(index)]["text"], record["answer_text"])]

    judgments = _judgments(tmp_path / "j.csv", "support", _tasks(tmp_path / "assign"), _gold(tmp_path / "assign"),
                           truth)
    result = cli("nuggets", "aggregate", judgments, "--tasks", tmp_path / "assign", "--gold",
                 tmp_path / "assign/gold.csv", "--out-dir", tmp_path / "people")
    assert result.exit_code == 0, result.stderr
    assert "castregin: 6 answers assigned; written to" in result.stderr
    got = {(r["run_id"], r["qid"]): r for r in map(json.loads, (tmp_path / "people/assignments.jsonl").read_text()
                                                  .splitlines())}
    nuggets = {t["qid"]: t["nuggets"] for t in NUGGETS}
    for answer in ANSWERS:
        if answer["topic_id"] not in nuggets:
            continue
        text = _answer_text(answer)
        expected = [support_rule(n["text"], text) if text else "not_support" for n in nuggets[answer["topic_id"]]]
        record = got[answer["run_id"], answer["topic_id"]]
        assert [n["assignment"] for n in record["nuggets"]] == expected
        assert [(n["text"], n["importance"]) for n in record["nuggets"]] == [(n["text"], n["importance"])
                                                                            for n in nuggets[answer["topic_id"]]]
        assert record["answer_text"] == text
    audit = json.loads((tmp_path / "people/audit.json").read_text())
    assert sorted({r["worker_id"] for r in audit["removed"]}) == ["spam"]
    assert audit["kind"] == "assign" and audit["left_out"] == [] and audit["unknown_items"] == []
    # nuggets score reads it, and agreement with the rule's own assignments is perfect.
    scored = cli("nuggets", "score", tmp_path / "people/assignments.jsonl", "--format", "json")
    assert scored.exit_code == 0, scored.stderr
    # Dawid-Skene, after the same gold filter, agrees with the honest pair.
    result = cli("nuggets", "aggregate", judgments, "--tasks", tmp_path / "assign/nugget_tasks.json", "--gold",
                 tmp_path / "assign/gold.csv", "--method", "dawid-skene", "--out-dir", tmp_path / "ds")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "ds/assignments.jsonl").read_text() == (tmp_path / "people/assignments.jsonl").read_text()


def test_an_answer_with_a_nugget_nobody_labelled_is_left_out_and_said(cli, inputs, tmp_path):
    cli("nuggets", "tasks", "assign", inputs["nuggets"], inputs["answers"], "--format", "long", "--out-dir",
        tmp_path / "assign")
    tasks = [t for t in _tasks(tmp_path / "assign") if (t["turn_id"], t["item_id"]) != ("t2", "beta#1")]
    judgments = _judgments(tmp_path / "j.csv", "support", tasks, set(), lambda *_: 1, workers=("a",))
    with judgments.open("a") as handle:
        handle.write("a,t2,nobody#0,2,1.0\n")
    result = cli("nuggets", "aggregate", judgments, "--tasks", tmp_path / "assign", "--out-dir", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    assert "1 answer(s) have a nugget nobody labelled and are left out: beta:t2" in result.stderr
    assert "1 labelled item(s) are no task of these tasks and are ignored (labels of other tasks?): t2:nobody#0" \
        in result.stderr
    runs = [(r["run_id"], r["qid"]) for r in map(json.loads, (tmp_path / "out/assignments.jsonl").read_text()
                                                  .splitlines())]
    assert ("beta", "t2") not in runs and ("beta", "t3") in runs  # beta's empty answer supports nothing, no labels


def test_people_rate_nuggets_into_a_nuggets_file(cli, inputs, tmp_path):
    result = cli("nuggets", "tasks", "importance", inputs["nuggets"], "--gold-per-topic", "1", "--format", "long",
                 "--out-dir", tmp_path / "rate")
    assert result.exit_code == 0, result.stderr
    truth = {(t["qid"], str(k)): k % 3 for t in NUGGETS for k in range(len(t["nuggets"]))}
    judgments = _judgments(tmp_path / "j.csv", "importance", _tasks(tmp_path / "rate"), _gold(tmp_path / "rate"),
                           lambda turn, item: truth[turn, item])
    result = cli("nuggets", "aggregate", judgments, "--tasks", tmp_path / "rate", "--gold", tmp_path / "rate/gold.csv",
                 "--out-dir", tmp_path / "rated")
    assert result.exit_code == 0, result.stderr
    got = [json.loads(line) for line in (tmp_path / "rated/nuggets.jsonl").read_text().splitlines()]
    assert [t["qid"] for t in got] == [t["qid"] for t in NUGGETS]
    for turn, rated in zip(NUGGETS, got, strict=True):
        texts = [n["text"] for n in turn["nuggets"]]
        vital = [texts[k] for k in range(len(texts)) if k % 3 == 2]
        okay = [texts[k] for k in range(len(texts)) if k % 3 == 1]
        assert rated["nuggets"] == ([{"text": t, "importance": "vital"} for t in vital]
                                    + [{"text": t, "importance": "okay"} for t in okay])
        assert rated["query"] == turn["query"]


def citation_scores_by_definition(answers: list[dict], labels: dict) -> dict[str, tuple[float, float]]:
    """Per run, the means over its answers of weighted precision (the weights of its judged pairs over their
    number) and weighted recall (each sentence's best weight, 0 without citations, over the sentences)."""
    weight = {"full_support": 1.0, "partial_support": 0.5, "no_support": 0.0}
    precision: dict[str, list[float]] = {}
    recall: dict[str, list[float]] = {}
    for answer in answers:
        run, qid = answer["run_id"], answer["topic_id"]
        best, judged = [], []
        for index, sentence in enumerate(answer["answer"]):
            cited = list(dict.fromkeys(answer["references"][c] for c in sentence["citations"]))[:3]
            weights = [weight[labels[run, qid, index, p]] for p in cited]
            judged += weights
            best.append(max(weights, default=0.0))
        if judged:
            precision.setdefault(run, []).append(sum(judged) / len(judged))
        if best:
            recall.setdefault(run, []).append(sum(best) / len(best))
    return {run: (statistics.mean(precision[run]), statistics.mean(recall[run])) for run in recall}


def test_people_judge_citations_and_cite_labels_scores_them(cli, inputs, tmp_path):
    answers = [{"run_id": "alpha", "topic_id": "t1", "topic": "photosynthesis", "references": ["d1", "d3"],
                "answer": [{"text": "Plants turn light into chemical energy.", "citations": [0, 1]},
                           {"text": "Canberra is the capital.", "citations": [1]},
                           {"text": "Nothing cited here.", "citations": []}]},
               {"run_id": "beta", "topic_id": "t2", "topic": "volcanoes", "references": ["d2"],
                "answer": [{"text": "Magma rises.", "citations": [0]}]}]
    path = tmp_path / "cited.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in answers))
    result = cli("nuggets", "tasks", "cite", path, "--passages", inputs["passages"], "--format", "long",
                 "--out-dir", tmp_path / "cite")
    assert result.exit_code == 0, result.stderr
    assert "castregin: 4 cite tasks (0 gold) over 2 topics" in result.stderr
    meant = {("alpha", "t1", 0, "d1"): "full_support", ("alpha", "t1", 0, "d3"): "no_support",
             ("alpha", "t1", 1, "d3"): "partial_support", ("beta", "t2", 0, "d2"): "full_support"}
    value = {"no_support": 0, "partial_support": 1, "full_support": 2}
    references = {(a["run_id"], a["topic_id"]): a["references"] for a in answers}

    def truth(turn, item):
        run, sentence, position = item.split("#")
        answer = next(a for a in answers if (a["run_id"], a["topic_id"]) == (run, turn))
        passage = references[run, turn][answer["answer"][int(sentence)]["citations"][int(position)]]
        return value[meant[run, turn, int(sentence), passage]]

    judgments = _judgments(tmp_path / "j.csv", "citation_support", _tasks(tmp_path / "cite"), set(), truth,
                           workers=("a", "b"))
    result = cli("nuggets", "aggregate", judgments, "--tasks", tmp_path / "cite", "--out-dir", tmp_path / "people")
    assert result.exit_code == 0, result.stderr
    with (tmp_path / "people/citation_support.csv").open(newline="") as handle:
        got = {(r["run_id"], r["qid"], int(r["sentence"]), r["passage_id"]): r["support"]
               for r in csv.DictReader(handle)}
    assert got == meant
    result = cli("nuggets", "cite", path, "--labels", tmp_path / "people/citation_support.csv", "--name", "people",
                 "--format", "json", "--out-dir", tmp_path / "scores")
    assert result.exit_code == 0, result.stderr
    rows = {(r["run"], r["measure"]): r["value"] for r in json.loads(result.stdout) if r["turn"] == "all"}
    for run, (precision, recall) in citation_scores_by_definition(answers, meant).items():
        assert rows[run, "citation_precision"] == pytest.approx(precision, abs=1e-12)
        assert rows[run, "citation_recall"] == pytest.approx(recall, abs=1e-12)
    assert (tmp_path / "scores/citation_scores.tsv").read_text().startswith("run\tqrels\tmeasure\tturn\tvalue\n")
    # --labels asks no model: the model's options are refused, and without --labels the model's are needed.
    refused = cli("nuggets", "cite", path, "--labels", tmp_path / "people/citation_support.csv", "--model", "m")
    assert refused.exit_code == 2
    assert "--model is for asking a model; --labels scores the labels given" in refused.stderr
    missing = cli("nuggets", "cite", path, "--passages", inputs["passages"])
    assert missing.exit_code == 2 and "missing --model, --base-url, --out-dir" in missing.stderr


def test_written_nuggets_are_merged_by_their_writers_votes(cli, tmp_path):
    (tmp_path / "q.txt").write_text("1_1 0 d1 2\n1_1 0 d2 3\n2_1 0 d3 2\n3_1 0 d1 1\n")
    (tmp_path / "queries.tsv").write_text("1_1\tWhat do plants do?\n2_1\tWhere is Canberra?\n3_1\tNo passage.\n")
    passages = _files(tmp_path)["passages"]
    result = cli("nuggets", "tasks", "create", "--qrels", tmp_path / "q.txt", "--passages", passages, "--queries",
                 tmp_path / "queries.tsv", "--format", "long", "--out-dir", tmp_path / "write")
    assert result.exit_code == 0, result.stderr
    tasks = _tasks(tmp_path / "write")
    assert [(t["turn_id"], [p["docid"] for p in json.loads(t["passages"])]) for t in tasks] == [
        ("1_1", ["d2", "d1"]), ("2_1", ["d3"])]  # most relevant first; 3_1 has no passage of grade 2
    (tmp_path / "w1.csv").write_text("worker_id,turn_id,nugget,importance,seconds\n"
                                     "w1,1_1,Plants make sugar,vital,3\nw1,1_1,Magma is light,okay,3\n"
                                     "w1,2_1,Canberra is the capital,vital,2\nw1,9_9,elsewhere,okay,1\n")
    (tmp_path / "w2.csv").write_text("worker_id,turn_id,nugget,importance\n"
                                     "w2,1_1,plants  make SUGAR,okay\nw2,2_1,Canberra is the capital,vital\n"
                                     "w2,2_1,,okay\n")
    result = cli("nuggets", "aggregate", tmp_path / "w1.csv", tmp_path / "w2.csv", "--tasks", tmp_path / "write",
                 "--out-dir", tmp_path / "drafted")
    assert result.exit_code == 0, result.stderr
    assert "1 written nugget(s) are for turns these tasks do not hold and are ignored: 9_9" in result.stderr
    got = [json.loads(line) for line in (tmp_path / "drafted/nuggets.jsonl").read_text().splitlines()]
    # One vote each way: the mean, 0.5, rounds half up to vital; the first spelling read (w1's) is kept.
    assert got == [{"query": "What do plants do?", "qid": "1_1",
                    "nuggets": [{"text": "Plants make sugar", "importance": "vital"},
                                {"text": "Magma is light", "importance": "okay"}]},
                   {"query": "Where is Canberra?", "qid": "2_1",
                    "nuggets": [{"text": "Canberra is the capital", "importance": "vital"}]}]
    result = cli("nuggets", "aggregate", tmp_path / "w1.csv", tmp_path / "w2.csv", "--tasks", tmp_path / "write",
                 "--min-writers", "2", "--tie", "min", "--out-dir", tmp_path / "two")
    assert result.exit_code == 0, result.stderr
    got = [json.loads(line) for line in (tmp_path / "two/nuggets.jsonl").read_text().splitlines()]
    assert [(t["qid"], t["nuggets"]) for t in got] == [
        ("1_1", [{"text": "Plants make sugar", "importance": "okay"}]),
        ("2_1", [{"text": "Canberra is the capital", "importance": "vital"}])]
    audit = json.loads((tmp_path / "two/audit.json").read_text())
    assert audit["merge"] == {"written": 6, "turns": 2, "nuggets": 2, "vital": 1, "below_min_writers": 1}
    refused = cli("nuggets", "aggregate", tmp_path / "w1.csv", "--tasks", tmp_path / "write", "--method", "glad",
                  "--out-dir", tmp_path / "x")
    assert refused.exit_code == 1 and "--method: written nuggets are merged by their writers' votes" in refused.stderr
    mturk = cli("nuggets", "tasks", "create", "--qrels", tmp_path / "q.txt", "--passages", passages, "--queries",
                tmp_path / "queries.tsv", "--format", "mturk", "--out-dir", tmp_path / "m")
    assert mturk.exit_code == 1 and "not mturk" in mturk.stderr and not (tmp_path / "m").exists()


@pytest.mark.parametrize(("content", "message"), [
    ("worker_id,turn_id,nugget\nw,1_1,x\n", "w.csv:1: missing the column(s) importance"),
    ("worker_id,turn_id,nugget,importance\nw,1_1,x,important\n", "w.csv:2: importance: expected vital or okay"),
    ("worker_id,turn_id,nugget,importance\nw x,1_1,x,vital\n", "w.csv:2: worker_id: expected an id without spaces"),
    ("worker_id,turn_id,nugget,importance\nw,1_1,,vital\n", "w.csv: holds no written nugget"),
])
def test_bad_written_nuggets_are_one_line(cli, tmp_path, content, message):
    (tmp_path / "q.txt").write_text("1_1 0 d1 2\n")
    (tmp_path / "queries.tsv").write_text("1_1\tWhat?\n")
    passages = _files(tmp_path)["passages"]
    cli("nuggets", "tasks", "create", "--qrels", tmp_path / "q.txt", "--passages", passages, "--queries",
        tmp_path / "queries.tsv", "--out-dir", tmp_path / "write")
    (tmp_path / "w.csv").write_text(content)
    result = cli("nuggets", "aggregate", tmp_path / "w.csv", "--tasks", tmp_path / "write", "--out-dir",
                 tmp_path / "out")
    assert result.exit_code == 1 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_broken_manifest_is_one_line(cli, tmp_path):
    (tmp_path / "nugget_tasks.json").write_text(json.dumps({"kind": "assign", "records": [{"qid": "1"}]}))
    (tmp_path / "j.csv").write_text("worker_id,turn_id,item_id,support\nw,1,r#0,2\n")
    result = cli("nuggets", "aggregate", tmp_path / "j.csv", "--tasks", tmp_path, "--out-dir", tmp_path / "out")
    assert result.exit_code == 1
    assert "nugget_tasks.json: records[0]: a record of assign tasks needs 'run_id'" in result.stderr


def test_labels_that_leave_nothing_are_an_error_and_nothing_is_written(cli, inputs, tmp_path):
    cli("nuggets", "tasks", "assign", inputs["nuggets"], inputs["answers"], "--gold-per-topic", "1", "--format",
        "long", "--out-dir", tmp_path / "assign")
    # Every worker fails the gold: no label is left.
    judgments = _judgments(tmp_path / "j.csv", "support", _tasks(tmp_path / "assign"), set(), lambda *_: 2,
                           workers=("a", "b"))
    result = cli("nuggets", "aggregate", judgments, "--tasks", tmp_path / "assign", "--gold",
                 tmp_path / "assign/gold.csv", "--out-dir", tmp_path / "out")
    assert result.exit_code == 1, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "castregin: error: no label is left to write: the gold filter removed every label (2 worker(s) in 6 "
        "(worker, topic) pair(s)); check the ranges of --gold; nothing written")
    assert not (tmp_path / "out").exists()
    # Labels of other tasks: nothing of these.
    (tmp_path / "other.csv").write_text("worker_id,turn_id,item_id,support\nw,zz,r#0,2\n")
    result = cli("nuggets", "aggregate", tmp_path / "other.csv", "--tasks", tmp_path / "assign", "--out-dir",
                 tmp_path / "out")
    assert result.exit_code == 1 and "check that the judgments are of these tasks" in result.stderr
    assert not (tmp_path / "out").exists()
