"""The files of ``castregin tasks``: CSVs that round-trip any text, pages no text can break, the HIT layout."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from castregin.errors import InputError
from castregin.formats.topics import parse_topics
from castregin.judging.rubrics import check_criteria, rubrics
from castregin.judging.tasks import build_tasks
from castregin.render.tasks import (
    compact_json,
    hit_template,
    judging_page,
    page_name,
    task_files,
)

NASTY = 'a "quoted", comma\nnew line </script><script>alert(1)</script> </textarea> & <b>bold</b> \u2028 é'
BANK = {"Q1": NASTY, "Q2": "plain question?", "Q3": "beta", "Q4": "gamma"}
CRITERIA = ["relevance", "novelty", "diversity"]


@pytest.fixture
def task_set():
    tree = parse_topics([{"number": 1, "turn": [{"number": "1-1", "utterance": "hello </script> & <i>you</i>"},
                                                {"number": "1-2", "parent": "1-1", "response": NASTY},
                                                {"number": "1-3", "parent": "1-2", "utterance": "and then?"}]},
                         {"number": 2, "turn": [{"number": "1-1", "utterance": "other"}]}], "t.json")
    return build_tasks({"1_1-1": ["Q1", "Q2"], "1_1-3": ["Q2"], "2_1-1": ["Q3", "Q4"]}, BANK, tree, CRITERIA,
                       gold_per_topic=1, seed=3)


def _csv(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def test_long_csv_round_trips_every_text(task_set):
    files = task_files(task_set, "long")
    assert sorted(files) == ["gold.csv", "tasks.csv"]
    rows = _csv(files["tasks.csv"])
    assert [(r["topic"], r["turn_id"], r["item_id"]) for r in rows] == [
        (t.topic, t.turn_id, t.item_id) for t in task_set.tasks]
    assert [r["item_text"] for r in rows] == [t.text for t in task_set.tasks]
    assert all(json.loads(r["context"]) == list(t.context) for r, t in zip(rows, task_set.tasks, strict=True))
    later = next(r for r in rows if r["turn_id"] == "1_1-3")
    assert json.loads(later["context"])[1] == {"speaker": "system", "text": NASTY}
    assert _csv(files["gold.csv"]) == [dict(zip(r, map(str, r.values()), strict=True)) for r in task_set.gold]


def test_mturk_rows_hold_json_that_no_html_can_cut(task_set):
    files = task_files(task_set, "mturk")
    assert sorted(files) == ["gold.csv", "hit_template.html", "mturk.csv"]
    rows = _csv(files["mturk.csv"])
    assert [r["topic"] for r in rows] == ["1", "2"]
    for row in rows:
        assert not set("<>&") & set(row["items"])
    turns = json.loads(rows[0]["items"])
    assert [t["turn_id"] for t in turns] == ["1_1-1", "1_1-3"]
    assert {i["item_id"]: i["text"] for t in turns for i in t["items"]}["Q1"] == NASTY
    assert set(turns[1]) == {"turn_id", "context", "items"} and set(turns[1]["items"][0]) == {"item_id", "text"}


def test_hit_template_has_one_variable_and_crowd_elements():
    page = hit_template(CRITERIA)
    # MTurk replaces every ${name}: the template holds ${items} only.
    assert re.findall(r"\$\{[^}]*\}", page) == ["${items}"] and page.count("${") == 1
    assert "<crowd-form>" in page and page.count("<crowd-radio-group>") == 3
    assert page.count("<crowd-radio-button") == 12 and 'name="judgments"' in page
    for criterion in CRITERIA:
        assert f'id="castregin-scale-{criterion}"' in page
        assert rubrics()[criterion]["levels"][3].replace("'", "&#39;") in page


def test_the_page_carries_texts_as_inert_json(task_set):
    page = judging_page("1", task_set.by_topic()["1"], CRITERIA, task_set.seed)
    assert page.count("</script>") == 2 and "alert(1)" in page and "<script>alert" not in page
    start = page.index('<script type="application/json" id="castregin-tasks">') + 53
    payload = json.loads(page[start:page.index("</script>", start)])
    assert payload["criteria"] == CRITERIA and payload["topic"] == "1" and payload["seed"] == 3
    assert {i["text"] for t in payload["turns"] for i in t["items"]} >= {NASTY, "plain question?"}
    # Offline: nothing is loaded from anywhere.
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page) and "@import" not in page
    assert "Not at all: off-topic, or unrelated to the user&#39;s last request." in page


def test_page_names_and_criteria():
    assert page_name("132") == "topic_132.html"
    for bad in ("../x", ".hidden", "a/b", ""):
        with pytest.raises(InputError, match="cannot name a file"):
            page_name(bad)
    assert check_criteria(["relevance", "naturalness", "conciseness"]) == ["relevance", "naturalness", "conciseness"]
    with pytest.raises(InputError, match=r"^criteria: unknown criterion 'fluency'"):
        check_criteria(["fluency"])
    with pytest.raises(InputError, match=r"^criteria: a criterion is listed twice$"):
        check_criteria(["relevance", "novelty", "relevance"])
    assert all(len(r["levels"]) == 4 and r["title"] and r["question"] for r in rubrics().values())


def test_compact_json_escapes_markup_only():
    assert compact_json({"a": "<&>"}) == '{"a":"\\u003c\\u0026\\u003e"}'
    assert json.loads(compact_json(NASTY)) == NASTY
