"""The offline judging page in a real browser: judges work through a topic by keyboard in headless Chromium
(driven by Playwright, with Debian's chromium, no browser download), export their CSVs, and ``castregin
aggregate`` with the page's gold.csv turns them into the qrels they meant. Skipped when Chromium or the
playwright package is absent (``make test`` installs both where it can)."""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from castregin.formats.topics import parse_topics
from castregin.judging.tasks import build_tasks
from castregin.render.tasks import task_files

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")


# Debian's chromium, as in test_report_browser.py: Playwright downloads no browser of its own here.
CHROMIUM = "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
# Every flag that could make the browser reach the network is off: the page must stand alone.
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CRITERIA = ["relevance", "novelty", "diversity"]
TOPIC = "146"  # the topic with the fewest pooled pairs (56)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


class Judge:
    """One worker's tab: a fresh browser context (its own storage), errors and dialogs recorded."""

    def __init__(self, browser, page_path: Path, worker: str | None):
        self.context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
        self.context.route(re.compile(r"^https?://"), lambda route: route.abort())  # offline: any request fails
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("pageerror", lambda error: self.problems.append(f"error: {error}"))
        self.page.on("console", lambda m: self.problems.append(f"{m.type}: {m.text}") if m.type == "error" else None)
        self.page.on("dialog", lambda dialog: (self.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        self.page.goto(page_path.as_uri())
        if worker is not None:
            self.page.fill("#worker", worker)
            self.page.press("#worker", "Enter")

    def shown(self) -> tuple[str, str]:
        item = self.page.locator("#item")
        return item.get_attribute("data-turn-id"), item.get_attribute("data-item-id")

    def judge_all(self, answer) -> list[tuple[str, str]]:
        """Label every item by keyboard with ``answer(turn, item, criterion)``; the order seen."""
        total = int(self.page.locator("#progress-bar").get_attribute("max"))
        seen = []
        for _ in range(total):
            turn, item = self.shown()
            seen.append((turn, item))
            for criterion in CRITERIA:
                self.page.keyboard.press(str(answer(turn, item, criterion)))
            self.page.keyboard.press("Enter")
        return seen

    def export(self, directory: Path) -> Path:
        with self.page.expect_download() as download:
            self.page.click("#export")
        target = directory / download.value.suggested_filename
        download.value.save_as(target)
        return target

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def pages(cast2022, tmp_path_factory) -> Path:
    """``castregin tasks --format html`` on the CAsT 2022 MI pool, 2 gold items per topic."""
    from click.testing import CliRunner

    from castregin.cli import main

    out = tmp_path_factory.mktemp("pages") / "html"
    result = CliRunner().invoke(main, [
        "tasks", str(cast2022 / "regin/question_pool_depth_1.pool"),
        "--bank", str(cast2022 / "regin/question_bank.json"),
        "--bank", str(cast2022 / "topics/2022_mixed_initiative_question_pool.json"),
        "--topics", str(cast2022 / "topics/2022_evaluation_topics_tree_v1.0.json"),
        "--criteria", ",".join(CRITERIA), "--gold-per-topic", "2", "--format", "html", "--out-dir", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _truth(gold: set):
    rng = np.random.default_rng(9)
    table: dict[tuple, int] = {}

    def answer(turn, item, criterion):
        if (turn, item, criterion) not in table:
            table[(turn, item, criterion)] = (0 if (turn, item) in gold and criterion == "relevance"
                                              else int(rng.integers(4)))
        return table[(turn, item, criterion)]
    return answer


def _qrels(path: Path) -> dict[tuple[str, str], int]:
    return {(t, i): int(label) for t, _, i, label in (line.split() for line in path.read_text().splitlines())}


def _not_blank(shot: Path) -> None:
    pixels = image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (900, 1280)
    assert float(pixels.std()) > 0.05
    colours = {tuple(p) for p in (pixels[::7, ::7] * 255).astype(int).reshape(-1, 3)}
    assert len(colours) > 20


def test_judges_work_by_keyboard_and_aggregate_reads_their_exports(browser, pages, tmp_path, cli):
    with (pages / "gold.csv").open(newline="") as handle:
        gold_rows = list(csv.DictReader(handle))
    gold = {(r["turn_id"], r["item_id"]) for r in gold_rows}
    truth = _truth(gold)
    exports, orders = [], {}
    for worker, answer in [("honest_a", truth), ("honest_b", truth), ("spammer", lambda *_: 3)]:
        judge = Judge(browser, pages / f"topic_{TOPIC}.html", worker)
        orders[worker] = judge.judge_all(answer)
        assert judge.page.inner_text("#progress") == "58 of 58 items judged"
        if worker == "honest_a":
            judge.page.screenshot(path=str(tmp_path / "judging-page.png"))
        exports.append(judge.export(tmp_path))
        assert judge.page.inner_text("#status") == "Exported 58 items."
        assert judge.problems == []
        judge.close()
    _not_blank(tmp_path / "judging-page.png")

    # Each worker sees every item once, the turns in the conversation's order, the items of a turn in an
    # order of their own.
    first = orders["honest_a"]
    assert len(set(first)) == 58 and set(first) == set(orders["spammer"])
    assert [t for t, _ in first] == [t for t, _ in orders["honest_b"]]
    assert first != orders["honest_b"]
    assert exports[0].name == f"judgments_topic_{TOPIC}_honest_a.csv"
    with exports[0].open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["worker_id", "turn_id", "item_id", *CRITERIA, "seconds"]
    assert all(float(r["seconds"]) >= 0 for r in rows) and len(rows) == 58

    result = cli("aggregate", *exports, "--criteria", ",".join(CRITERIA), "--gold", pages / "gold.csv",
                 "--out-dir", tmp_path / "qrels")
    assert result.exit_code == 0, result.stderr
    audit = json.loads((tmp_path / "qrels/audit.json").read_text())
    assert [(r["worker_id"], r["topic"]) for r in audit["removed"]] == [("spammer", TOPIC)]
    for criterion in CRITERIA:
        qrels = _qrels(tmp_path / f"qrels/question_{criterion}.qrel")
        assert qrels == {pair: truth(*pair, criterion) for pair in first}


@pytest.fixture
def nasty_page(tmp_path) -> Path:
    nasty = 'Is it "x" </script><script>alert("boom")</script> & <b>y</b>?'
    tree = parse_topics([{"number": 5, "turn": [{"number": "1-1", "utterance": "first </textarea> <i>hi</i>"},
                                                {"number": "1-2", "parent": "1-1", "response": "ok"},
                                                {"number": "1-3", "parent": "1-2", "utterance": "then?"}]}], "t.json")
    task_set = build_tasks({"5_1-1": ["Q1", "Q2"], "5_1-3": ["Q3"]},
                           {"Q1": nasty, "Q2": "two", "Q3": "three"}, tree, ["relevance", "naturalness"], seed=1)
    page = tmp_path / "topic_5.html"
    page.write_bytes(task_files(task_set, "html")["topic_5.html"])
    return page


def reload_until_worker(page, worker: str, attempts: int = 5) -> None:
    """Reload the page until its script finds ``worker`` in localStorage, at most ``attempts`` times.

    Chromium hands a renderer's localStorage writes to its browser process asynchronously, so on a loaded
    machine a reload can read storage before the last write lands (seen once: an empty worker field); the
    page reads storage once, at load, so the test reloads again rather than waiting on the same page."""
    for _ in range(attempts):
        page.reload()
        if page.input_value("#worker") == worker:
            return
        page.wait_for_timeout(200)


def test_texts_stay_text_and_keys_move_around(browser, nasty_page):
    judge = Judge(browser, nasty_page, None)
    page = judge.page
    page.keyboard.press("2")  # before a worker id: nothing happens
    assert page.inner_text("#progress") == "0 of 3 items judged"
    page.fill("#worker", "bad id")
    page.press("#worker", "Enter")
    assert "Enter your worker id first" in page.inner_text("#status")
    page.fill("#worker", "w1")
    page.click("#start")
    texts = {}
    for _ in range(3):
        _turn, item = judge.shown()
        texts[item] = page.inner_text("#item")
        page.keyboard.press("ArrowDown")  # naturalness first
        page.keyboard.press("1")
        assert page.locator("fieldset.active").get_attribute("data-criterion") == "relevance"
        page.keyboard.press("2")
        page.keyboard.press("ArrowRight")
    assert texts["Q1"] == 'Is it "x" </script><script>alert("boom")</script> & <b>y</b>?'
    page.keyboard.press("ArrowLeft")
    assert judge.shown()[0] == "5_1-1"
    assert page.inner_text("#turns").startswith("User\nfirst </textarea> <i>hi</i>")
    page.keyboard.press("0")  # relabel the relevance of the item shown
    assert page.inner_text("#progress") == "3 of 3 items judged"
    # Answers survive a reload (kept in the browser's storage) and come back for the same worker only.
    reload_until_worker(page, "w1")
    assert page.input_value("#worker") == "w1" and page.inner_text("#progress") == "0 of 3 items judged"
    page.fill("#worker", "w2")
    page.press("#worker", "Enter")
    assert page.inner_text("#progress") == "0 of 3 items judged"
    reload_until_worker(page, "w2")
    assert page.input_value("#worker") == "w2"
    page.fill("#worker", "w1")
    page.press("#worker", "Enter")
    assert page.inner_text("#status") == "Your earlier answers are back."
    assert page.inner_text("#progress") == "3 of 3 items judged"
    with page.expect_download() as download:
        page.click("#export")
    lines = Path(download.value.path()).read_text().splitlines()
    assert lines[0] == "worker_id,turn_id,item_id,relevance,naturalness,seconds"
    labels = {tuple(line.split(",")[1:5]) for line in lines[1:]}
    changed = judge.shown()[1]
    assert labels == {("5_1-1", "Q1", "0" if changed == "Q1" else "2", "1"),
                      ("5_1-1", "Q2", "0" if changed == "Q2" else "2", "1"), ("5_1-3", "Q3", "2", "1")}
    assert judge.problems == []
    judge.close()


def test_the_hit_template_reads_its_items_however_mturk_substitutes_them(browser, tmp_path):
    tree = parse_topics([{"number": 5, "turn": [{"number": "1-1", "utterance": "u </textarea> & <b>"}]}], "t.json")
    task_set = build_tasks({"5_1-1": ["Q1", "Q2"]}, {"Q1": "a </textarea></script> &amp; <b>", "Q2": "é\u2028"},
                           tree, CRITERIA, seed=1)
    files = task_files(task_set, "mturk")
    template = files["hit_template.html"].decode()
    with (tmp_path / "m.csv").open("wb") as handle:
        handle.write(files["mturk.csv"])
    with (tmp_path / "m.csv").open(newline="", encoding="utf-8") as handle:
        items = next(csv.DictReader(handle))["items"]
    for name, value in [("raw", items), ("escaped", html.escape(items))]:
        hit = tmp_path / f"hit_{name}.html"
        hit.write_text(template.replace("${items}", value), encoding="utf-8")
        judge = Judge(browser, hit, None)
        decoded = judge.page.evaluate("JSON.parse(document.getElementById('castregin-items').value)")
        assert decoded == json.loads(items)
        assert judge.page.locator(".castregin-item").count() == 2
        assert judge.page.locator(".castregin-item blockquote").first.inner_text() in {
            "a </textarea></script> &amp; <b>", "é\u2028"}
        # The crowd-html-elements script is blocked here (offline): that one request fails, nothing else.
        assert judge.problems == ["error: Failed to load resource: net::ERR_FAILED"]
        judge.close()
