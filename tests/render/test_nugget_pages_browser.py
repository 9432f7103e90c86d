"""The nugget pages for people in a real browser (headless Chromium driven by Playwright, Debian's chromium, as
test_judging_page_browser.py): judges assign nuggets to answers by keyboard on the 0-2 scale, writers type a turn's
nuggets, both export, and ``castregin nuggets aggregate`` turns their CSVs into the nuggetizer files they meant.
Skipped when Chromium or the playwright package is absent."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from nuggets.nugget_server import support_rule
from nuggets.test_assign import ANSWERS, NUGGETS

from .test_judging_page_browser import Judge, browser  # noqa: F401 - the browser fixture, shared

VALUES = {"not_support": 0, "partial_support": 1, "support": 2}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("inputs")
    (directory / "nuggets.jsonl").write_text("".join(json.dumps(t) + "\n" for t in NUGGETS))
    (directory / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ANSWERS))
    (directory / "qrels.txt").write_text("t1 0 d1 3\nt1 0 d2 2\nt2 0 d3 2\n")
    (directory / "queries.tsv").write_text("t1\tHow does photosynthesis work?\nt2\tWhy do volcanoes erupt?\n")
    passages = [{"docid": "d1", "text": "Plants turn light into sugar. </script><b>bold</b>"},
                {"docid": "d2", "text": "Chlorophyll is green."}, {"docid": "d3", "text": "Magma is hot."}]
    (directory / "passages.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    return {p.stem: p for p in directory.iterdir()}


def _truth(turn: str, item: str) -> int:
    """The label a careful judge gives: the server's word rule on the answer (planted gold: 0)."""
    run, index = item.rsplit("#", 1)
    nuggets = next(t["nuggets"] for t in NUGGETS if t["qid"] == turn)
    if int(index) >= len(nuggets):
        return 0
    answer = next(a for a in ANSWERS if (a["run_id"], a["topic_id"]) == (run, turn))
    text = " ".join(s["text"] for s in answer["answer"])
    return VALUES[support_rule(nuggets[int(index)]["text"], text)]


def test_judges_assign_nuggets_by_keyboard_and_aggregate_reads_their_exports(browser, inputs, tmp_path, cli):  # noqa: F811
    made = cli("nuggets", "tasks", "assign", inputs["nuggets"], inputs["answers"], "--gold-per-topic", "1",
               "--out-dir", tmp_path / "pages")
    assert made.exit_code == 0, made.stderr
    exports = []
    for worker, answer in (("honest_a", _truth), ("honest_b", _truth), ("spammer", lambda *_: 2)):
        judge = Judge(browser, tmp_path / "pages/topic_t1.html", worker)
        page = judge.page
        total = int(page.locator("#progress-bar").get_attribute("max"))
        assert total == 12 + 12 + 1  # the 12 nuggets of t1 in alpha's and beta's answers, and the planted one
        assert page.inner_text("#conversation h2") == "Conversation and the answer"
        assert page.locator("fieldset.criterion label").count() == 3  # 0-2: not, partly, supported
        page.keyboard.press("3")  # no label on a 0-2 scale
        assert page.inner_text("#progress") == f"0 of {total} items judged"
        for _ in range(total):
            turn, item = judge.shown()
            shown = page.inner_text("#turns")
            run = item.rsplit("#", 1)[0]
            assert shown.split("\n")[-2:] == ["Answer", " ".join(s["text"] for s in next(
                a for a in ANSWERS if (a["run_id"], a["topic_id"]) == (run, turn))["answer"])]
            page.keyboard.press(str(answer(turn, item)))
            page.keyboard.press("Enter")
        assert page.inner_text("#progress") == f"{total} of {total} items judged"
        exports.append(judge.export(tmp_path))
        assert judge.problems == []
        judge.close()
    result = cli("nuggets", "aggregate", *exports, "--tasks", tmp_path / "pages", "--gold",
                 tmp_path / "pages/gold.csv", "--out-dir", tmp_path / "people")
    assert result.exit_code == 0, result.stderr
    # Only topic t1 was judged: the answers to t2 and t3 have no labels and are said.
    assert "answer(s) have a nugget nobody labelled and are left out" in result.stderr
    audit = json.loads((tmp_path / "people/audit.json").read_text())
    assert [r["worker_id"] for r in audit["removed"]] == ["spammer"]
    got = {(r["run_id"], r["qid"]): [n["assignment"] for n in r["nuggets"]]
           for r in map(json.loads, (tmp_path / "people/assignments.jsonl").read_text().splitlines())}
    words = {value: word for word, value in VALUES.items()}
    expected = {(run, "t1"): [words[_truth("t1", f"{run}#{k}")] for k in range(12)] for run in ("alpha", "beta")}
    # beta's empty answer to t3 supports nothing: no task, no label needed.
    assert got == {**expected, ("beta", "t3"): ["not_support"] * 3}


def test_writers_type_nuggets_and_aggregate_merges_them(browser, inputs, tmp_path, cli):  # noqa: F811
    made = cli("nuggets", "tasks", "create", "--qrels", inputs["qrels"], "--passages", inputs["passages"],
               "--queries", inputs["queries"], "--out-dir", tmp_path / "write")
    assert made.exit_code == 0, made.stderr
    written = {"w1": {"t1": [("Plants turn light into sugar", True), ("Chlorophyll is green", False)]},
               "w2": {"t1": [("plants turn light into SUGAR", True)], "t2": [("Magma is hot", False)]}}
    exports = []
    for worker, turns in written.items():
        judge = Judge(browser, tmp_path / "write/topic_t1.html", worker)
        page = judge.page
        assert page.inner_text("#passages").startswith("d1\nPlants turn light into sugar. </script><b>bold</b>")
        for k, (text, vital) in enumerate(turns.get("t1", [])):
            field = page.locator("input.nugget-text").nth(k)
            assert field.evaluate("node => node === document.activeElement")  # Enter moved here
            page.keyboard.type(text)
            if vital:
                page.locator("input.vital").nth(k).check()
                field.focus()
            if k < len(turns["t1"]) - 1:
                page.keyboard.press("Enter")
        assert page.inner_text("#progress") == "1 of 1 turns with nuggets"
        exports.append(judge.export(tmp_path))
        assert judge.problems == []
        judge.close()
        if "t2" in turns:
            judge = Judge(browser, tmp_path / "write/topic_t2.html", worker)
            judge.page.keyboard.type(turns["t2"][0][0])
            exports.append(judge.export(tmp_path))
            judge.close()
    with exports[0].open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["worker_id"], r["turn_id"], r["nugget"], r["importance"]) for r in rows] == [
        ("w1", "t1", "Plants turn light into sugar", "vital"), ("w1", "t1", "Chlorophyll is green", "okay")]
    assert exports[0].name == "nuggets_topic_t1_w1.csv"
    result = cli("nuggets", "aggregate", *exports, "--tasks", tmp_path / "write", "--out-dir", tmp_path / "drafted")
    assert result.exit_code == 0, result.stderr
    got = [json.loads(line) for line in (tmp_path / "drafted/nuggets.jsonl").read_text().splitlines()]
    assert got == [{"query": "How does photosynthesis work?", "qid": "t1",
                    "nuggets": [{"text": "Plants turn light into sugar", "importance": "vital"},
                                {"text": "Chlorophyll is green", "importance": "okay"}]},
                   {"query": "Why do volcanoes erupt?", "qid": "t2",
                    "nuggets": [{"text": "Magma is hot", "importance": "okay"}]}]


def test_written_nuggets_survive_a_reload(browser, inputs, tmp_path, cli):  # noqa: F811
    from .test_judging_page_browser import reload_until_worker

    cli("nuggets", "tasks", "create", "--qrels", inputs["qrels"], "--passages", inputs["passages"], "--queries",
        inputs["queries"], "--out-dir", tmp_path / "write")
    judge = Judge(browser, tmp_path / "write/topic_t1.html", "w1")
    page = judge.page
    page.keyboard.type("A first fact")
    page.keyboard.press("Enter")
    page.keyboard.type("A second fact")
    page.locator("#nuggets button").first.click()  # remove the first
    reload_until_worker(page, "w1")
    page.press("#worker", "Enter")
    assert page.inner_text("#status") == "Your earlier nuggets are back."
    assert [f.input_value() for f in page.locator("input.nugget-text").all()] == ["A second fact"]
    assert judge.problems == []
    judge.close()
