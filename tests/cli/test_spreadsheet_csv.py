"""CSV injection (OWASP): a cell castregin writes into a CSV that is opened in a spreadsheet never begins as a
formula. Text beginning with = + - @ (or a tab or carriage return) gets a ' in front; numbers stay numbers
(-0.5); gold.csv, which castregin reads back, is written as it is. The cells are read back with Python's csv
module, an independent reader."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from castregin.render.tables import csv_text, spreadsheet_cell

HOSTILE = {"Q1": '=HYPERLINK("http://evil.invalid","click")', "Q2": "-2+3", "Q3": "-0.5", "Q4": "@SUM(A1:A9)",
           "Q5": "+1e-05", "Q6": "\t=1+1", "Q7": "\r=1+1", "Q8": "plain", "Q9": "a=b"}
#: What each text must be in the CSV (the csv module's reading of it).
NEUTRALISED = {"Q1": "'" + HOSTILE["Q1"], "Q2": "'-2+3", "Q3": "-0.5", "Q4": "'@SUM(A1:A9)", "Q5": "+1e-05",
               "Q6": "'\t=1+1", "Q7": "'\r=1+1", "Q8": "plain", "Q9": "a=b"}


def _rows(text: str, delimiter: str = ",") -> list[dict]:
    return list(csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter))


def _file_rows(path: str) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:  # a lone "\r" in a cell stays one
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("key", HOSTILE)
def test_the_rule(key):
    assert spreadsheet_cell(HOSTILE[key]) == NEUTRALISED[key]
    assert spreadsheet_cell(-0.5) == -0.5 and spreadsheet_cell(None) is None
    assert _rows(csv_text(["x"], [[HOSTILE[key]]], spreadsheet=False)) == [{"x": HOSTILE[key]}]


@pytest.fixture
def track(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("topics.json").write_text(json.dumps([{"number": "1", "turn": [
        {"number": k, "raw_utterance": f"u{k}", "passage": f"s{k}"} for k in (1, 2)]}]))
    Path("bank.json").write_text(json.dumps(HOSTILE))
    Path("pool.txt").write_text("".join(f"1_{t}\tQ0\t{q}\t1\t0.0\tdummytag\n" for t in (1, 2) for q in HOSTILE))
    return tmp_path


def test_tasks_long_format_neutralises_bank_texts(cli, track):
    # `tasks --format long` put a bank text =HYPERLINK(...) into tasks.csv as it was.
    result = cli("tasks", "pool.txt", "--bank", "bank.json", "--topics", "topics.json", "--criteria", "relevance",
                 "--format", "long", "--out-dir", "out")
    assert result.exit_code == 0, result.stderr
    rows = _file_rows("out/tasks.csv")
    assert len(rows) == 2 * len(HOSTILE)
    assert {row["item_id"]: row["item_text"] for row in rows} == NEUTRALISED


def test_gold_csv_is_written_as_it_is_for_aggregate(cli, track):
    Path("gold.csv").write_text("turn_id,item_id,criterion,min_label,max_label\n1_1,-x,relevance,0,1\n")
    Path("pool.txt").write_text(Path("pool.txt").read_text() + "1_1\tQ0\t-x\t1\t0.0\tdummytag\n")
    Path("bank.json").write_text(json.dumps({**HOSTILE, "-x": "an item whose id begins with -"}))
    result = cli("tasks", "pool.txt", "--bank", "bank.json", "--topics", "topics.json", "--criteria", "relevance",
                 "--gold", "gold.csv", "--out-dir", "out")
    assert result.exit_code == 0, result.stderr
    assert Path("out/gold.csv").read_text() == Path("gold.csv").read_text()
    assert "'-x" in {row["item_id"] for row in _file_rows("out/tasks.csv")}


def test_result_tables_neutralise_text_and_keep_numbers(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("=cmd.run").write_text("1_1 Q0 d1 1 2.0 =cmd|calc\n1_1 Q0 d2 2 1.0 =cmd|calc\n")
    Path("b.run").write_text("1_1 Q0 d2 1 2.0 -b\n1_1 Q0 d1 2 1.0 -b\n")
    Path("q.qrel").write_text("1_1 0 d1 2\n1_1 0 d2 0\n")
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        result = cli("evaluate", "=cmd.run", "b.run", "--qrels", "@q=q.qrel", "-m", "P@1", "--format", fmt)
        assert result.exit_code == 0, result.stderr
        rows = _rows(result.stdout, delimiter)
        assert {(row["run"], row["qrels"]) for row in rows} == {("'=cmd|calc", "'@q"), ("'-b", "'@q")}
    result = cli("compare", "=cmd.run", "b.run", "--qrels", "q.qrel", "-m", "P@1", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    (row,) = _rows(result.stdout)
    assert row["run"] == "'-b" and row["baseline"] == "'=cmd|calc"
    assert row["mean_difference"] == "-1.0"  # a negative number stays a number
