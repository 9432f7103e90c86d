"""``castregin tasks`` on the CAsT 2022 MI pool, and the loop it closes: tasks -> judges -> aggregate.

Simulated judges answer the exported tasks: honest ones give the truth, one grade off now and then;
a constant spammer says 3 to everything, a random one answers at random. ``aggregate --gold`` with the
gold.csv that ``tasks`` wrote must remove every spammer from the topics where a gold item caught them
(and no honest judge), and give the truth wherever the honest majority is clear.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

CRITERIA = ["relevance", "novelty", "diversity"]
HONEST = [f"honest{k}" for k in range(5)]
SPAMMERS = ["spam_three", "spam_random"]


@pytest.fixture(scope="module")
def inputs(cast2022) -> list[str]:
    """The pool, both banks (the official question pool holds Q2173) and the topics, as tasks' arguments."""
    return [str(cast2022 / "regin/question_pool_depth_1.pool"),
            "--bank", str(cast2022 / "regin/question_bank.json"),
            "--bank", str(cast2022 / "topics/2022_mixed_initiative_question_pool.json"),
            "--topics", str(cast2022 / "topics/2022_evaluation_topics_tree_v1.0.json")]


def _rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _qrels(path: Path) -> dict[tuple[str, str], int]:
    return {(turn, item): int(label)
            for turn, _, item, label in (line.split() for line in path.read_text().splitlines())}


def _truth(pairs, gold: set, seed: int) -> dict:
    """A label per (turn, item, criterion); planted gold items are not relevant at all."""
    rng = np.random.default_rng(seed)
    truth = {}
    for pair in pairs:
        for criterion in CRITERIA:
            truth[(*pair, criterion)] = 0 if (pair in gold and criterion == "relevance") else int(rng.integers(4))
    return truth


def _judge(worker: str, truth: int, rng) -> int:
    if worker == "spam_three":
        return 3
    if worker == "spam_random":
        return int(rng.integers(4))
    # Honest: the truth 85% of the time, else one grade off (so a gold item's 0 becomes at most 1).
    return int(np.clip(truth + rng.choice([-1, 0, 1], p=[0.075, 0.85, 0.075]), 0, 3))


def _answers(pairs, truth, seed: int) -> dict:
    """{(worker, turn, item, criterion): label}: every judge labels every pair."""
    rng = np.random.default_rng(seed)
    return {(worker, turn, item, c): _judge(worker, truth[(turn, item, c)], rng)
            for worker in [*HONEST, *SPAMMERS] for turn, item in pairs for c in CRITERIA}


def _long_csv(answers) -> str:
    by_row: dict[tuple, dict] = {}
    for (worker, turn, item, criterion), label in answers.items():
        by_row.setdefault((worker, turn, item), {})[criterion] = label
    lines = ["worker_id,turn_id,item_id," + ",".join(CRITERIA) + ",seconds"]
    lines += [f"{w},{t},{i}," + ",".join(str(labels[c]) for c in CRITERIA) + ",4.2"
              for (w, t, i), labels in by_row.items()]
    return "\n".join(lines) + "\n"


def _expected_removals(answers, gold_rows) -> set[tuple[str, str]]:
    caught = set()
    for row in gold_rows:
        for worker in [*HONEST, *SPAMMERS]:
            label = answers[(worker, row["turn_id"], row["item_id"], row["criterion"])]
            if not int(row["min_label"]) <= label <= int(row["max_label"]):
                caught.add((worker, row["turn_id"].split("_")[0]))
    return caught


def _check_aggregation(out: Path, answers, truth, gold_rows, topics: set[str]) -> None:
    audit = json.loads((out / "audit.json").read_text())
    removed = {(r["worker_id"], r["topic"]) for r in audit["removed"]}
    expected = _expected_removals(answers, gold_rows)
    assert removed == expected
    assert {(w, t) for w, t in removed if w == "spam_three"} == {("spam_three", t) for t in topics}
    assert len([1 for w, _ in removed if w == "spam_random"]) >= 0.6 * len(topics)
    assert not any(w.startswith("honest") for w, _ in removed)
    clear = 0
    for criterion in CRITERIA:
        qrels = _qrels(out / f"question_{criterion}.qrel")
        for (turn, item, c), label in truth.items():
            if c != criterion:
                continue
            honest = [answers[(w, turn, item, c)] for w in HONEST]
            if honest.count(label) >= 4:  # a clear honest majority: nothing the spammers say can outvote it
                clear += 1
                assert qrels[(turn, item)] == label, (turn, item, c)
    assert clear > 0.8 * len(truth)


def test_tasks_then_judges_then_aggregate_removes_the_spammers(cli, inputs, tmp_path):
    result = cli("tasks", *inputs, "--criteria", ",".join(CRITERIA), "--gold-per-topic", 3, "--seed", 5,
                 "--out-dir", tmp_path / "tasks")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (f"castregin: 2078 tasks (54 gold) over 18 topics written to {tmp_path / 'tasks'} "
                             "(2 files)\n")
    tasks = _rows(tmp_path / "tasks/tasks.csv")
    assert list(tasks[0]) == ["topic", "turn_id", "item_id", "item_text", "context"]
    assert json.loads(tasks[0]["context"])[-1]["speaker"] == "user"
    gold_rows = _rows(tmp_path / "tasks/gold.csv")
    gold = {(r["turn_id"], r["item_id"]) for r in gold_rows}
    pairs = [(row["turn_id"], row["item_id"]) for row in tasks]
    assert len(set(pairs)) == len(pairs) == 2078 and gold <= set(pairs)

    truth = _truth(pairs, gold, seed=1)
    answers = _answers(pairs, truth, seed=2)
    (tmp_path / "judgments.csv").write_text(_long_csv(answers))
    result = cli("aggregate", tmp_path / "judgments.csv", "--criteria", ",".join(CRITERIA),
                 "--gold", tmp_path / "tasks/gold.csv", "--out-dir", tmp_path / "qrels")
    assert result.exit_code == 0, result.stderr
    _check_aggregation(tmp_path / "qrels", answers, truth, gold_rows, {t.split("_")[0] for t, _ in pairs})


def _batch_results(mturk_csv: Path, answers, rejected: set[str]) -> str:
    """The MTurk batch results of the per-topic HITs, as MTurk returns them: one row per assignment with
    ``WorkerId``, ``AssignmentStatus``, ``Input.topic``, ``Input.items`` and ``Answer.judgments`` (the JSON
    list of {turn_id, item_id, <criterion>} that the HIT submits)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["HITId", "WorkerId", "AssignmentStatus", "Input.topic", "Input.items", "Answer.judgments"])
    for hit in _rows(mturk_csv):
        for worker in [*HONEST, *SPAMMERS]:
            judgments = [{"turn_id": turn["turn_id"], "item_id": item["item_id"],
                          **{c: answers[(worker, turn["turn_id"], item["item_id"], c)] for c in CRITERIA}}
                         for turn in json.loads(hit["items"]) for item in turn["items"]]
            status = "Rejected" if worker in rejected else "Approved"
            writer.writerow([f"hit-{hit['topic']}", worker, status, hit["topic"], hit["items"], json.dumps(judgments)])
    return out.getvalue()


def test_the_mturk_batch_results_go_straight_to_aggregate(cli, inputs, tmp_path):
    result = cli("tasks", *inputs, "--criteria", ",".join(CRITERIA), "--gold-per-topic", 2, "--format", "mturk",
                 "--out-dir", tmp_path / "hits")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "hits").iterdir()) == [
        ".castregin-output", "gold.csv", "hit_template.html", "mturk.csv"]
    hits = _rows(tmp_path / "hits/mturk.csv")
    assert list(hits[0]) == ["topic", "items"] and len(hits) == 18
    pairs = [(turn["turn_id"], item["item_id"]) for hit in hits for turn in json.loads(hit["items"])
             for item in turn["items"]]
    gold_rows = _rows(tmp_path / "hits/gold.csv")
    gold = {(r["turn_id"], r["item_id"]) for r in gold_rows}
    assert len(pairs) == 2024 + 36 and gold <= set(pairs)
    truth = _truth(pairs, gold, seed=3)
    answers = _answers(pairs, truth, seed=4)
    (tmp_path / "batch.csv").write_text(_batch_results(tmp_path / "hits/mturk.csv", answers, rejected={"honest4"}))
    result = cli("aggregate", tmp_path / "batch.csv", "--criteria", ",".join(CRITERIA), "--gold",
                 tmp_path / "hits/gold.csv", "--out-dir", tmp_path / "qrels")
    assert result.exit_code == 0, result.stderr
    audit = json.loads((tmp_path / "qrels/audit.json").read_text())
    assert {r["worker_id"] for r in audit["removed"]} == set(SPAMMERS)
    qrels = _qrels(tmp_path / "qrels/question_relevance.qrel")
    agreeing = [(t, i) for t, i in pairs
                if [answers[(w, t, i, "relevance")] for w in HONEST[:4]].count(truth[(t, i, "relevance")]) == 4]
    assert len(agreeing) > 0.4 * len(pairs)
    assert all(qrels[pair] == truth[(*pair, "relevance")] for pair in agreeing)


def test_the_same_inputs_give_the_same_bytes(cli, inputs, tmp_path):
    outputs = []
    for name in ("one", "two"):
        result = cli("tasks", *inputs, "--criteria", "relevance,novelty", "--gold-per-topic", 1,
                     "--format", "html", "--out-dir", tmp_path / name)
        assert result.exit_code == 0, result.stderr
        outputs.append({p.name: p.read_bytes() for p in (tmp_path / name).iterdir()})
    assert outputs[0] == outputs[1] and len(outputs[0]) == 18 + 2
    other = cli("tasks", *inputs, "--criteria", "relevance,novelty", "--gold-per-topic", 1, "--seed", 43,
                "--format", "html", "--out-dir", tmp_path / "three")
    assert other.exit_code == 0
    assert (tmp_path / "three/gold.csv").read_bytes() != outputs[0]["gold.csv"]


def _one_line_error(result, code: int = 1) -> str:
    assert result.exit_code == code, result.stderr
    assert "Traceback" not in result.stderr
    if code == 1:
        assert result.stderr.startswith("castregin: error: ") and result.stderr.count("\n") == 1
    return result.stderr


def test_errors_a_user_can_cause(cli, cast2022, inputs, tmp_path):
    pool, _, bank, _, _second_bank, _, topics = inputs
    out = tmp_path / "out"
    # The ReGIn bank alone lacks Q2173, which the pool holds.
    message = _one_line_error(cli("tasks", pool, "--bank", bank, "--topics", topics, "--criteria", "relevance",
                                  "--out-dir", out))
    assert message == (f"castregin: error: {pool}: item Q2173 (turn 142_5-7) is in no bank; give the bank that "
                       "holds it (several banks may be given)\n")
    stray = tmp_path / "stray.pool"
    stray.write_text("150_1-1 Q0 Q0821 1 0.0 dummytag\n")
    message = _one_line_error(cli("tasks", stray, "--bank", bank, "--topics", topics, "--criteria", "relevance",
                                  "--out-dir", out))
    assert message == (f"castregin: error: {stray}: turn 150_1-1 is pooled but is no turn of the topics {topics}; "
                       "leave it out with --turns FILE (the official turn ids, e.g. "
                       "2022_evaluation_topics_turn_ids.json), or give the topics of the pooled turns' year\n")
    message = _one_line_error(cli("tasks", *inputs, "--criteria", "relevance", "--gold-per-topic", 2000,
                                  "--out-dir", out))
    assert message.startswith("castregin: error: --gold-per-topic: topic 132 can borrow only ")
    message = _one_line_error(cli("tasks", *inputs, "--criteria", "relevance,fluency", "--out-dir", out))
    assert message == ("castregin: error: --criteria: unknown criterion 'fluency'; the judging rubrics cover "
                       "relevance, novelty, diversity, naturalness, conciseness\n")
    message = _one_line_error(cli("tasks", *inputs, "--criteria", "novelty", "--gold-per-topic", 1, "--out-dir", out))
    assert "--gold-per-topic: planted gold items bound relevance, which the criteria lack" in message
    assert not out.exists()


def test_a_stray_turn_left_out_with_turns(cli, cast2022, inputs, tmp_path):
    # A pool kept a turn of a run converted without the official turn list: the whole pool was refused.
    pool, *rest = inputs
    official = cast2022 / "topics/2022_evaluation_topics_turn_ids.json"
    stray = tmp_path / "stray.pool"
    lines = Path(pool).read_text()
    stray.write_text(lines + "132_1-99 Q0 Q0821 1 0.0 dummytag\n")
    refused = cli("tasks", stray, *rest, "--criteria", "relevance", "--out-dir", tmp_path / "refused")
    assert refused.exit_code == 1 and "turn 132_1-99 is pooled but is no turn of the topics" in refused.stderr
    assert "--turns FILE" in refused.stderr
    result = cli("tasks", stray, *rest, "--criteria", "relevance", "--turns", official, "--out-dir", tmp_path / "kept")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[0] == (f"castregin: warning: 1 pooled turn not in --turns {official} left out: "
                                             "132_1-99")
    # The same tasks as from the pool without the stray line (the official list holds every pooled turn).
    plain = cli("tasks", pool, *rest, "--criteria", "relevance", "--out-dir", tmp_path / "plain")
    assert plain.exit_code == 0
    assert (tmp_path / "kept/tasks.csv").read_bytes() == (tmp_path / "plain/tasks.csv").read_bytes()
    assert len(_rows(tmp_path / "kept/tasks.csv")) == len(lines.splitlines())
    # The turn list is an input: a directory holding it is not replaced.
    inside = tmp_path / "kept/turns.json"
    inside.write_bytes(official.read_bytes())
    held = cli("tasks", stray, *rest, "--criteria", "relevance", "--turns", inside, "--out-dir", tmp_path / "kept")
    # (refused as a file castregin did not write there, before it is looked at as an input)
    assert held.exit_code == 1 and "turns.json" in held.stderr and held.stderr.count("\n") == 1
    assert inside.read_bytes() == official.read_bytes()


def test_usage_errors_and_directories_it_will_not_replace(cli, inputs, tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("turn_id,item_id,criterion,min_label,max_label\n132_1-1,Q0821,relevance,0,1\n")
    result = cli("tasks", *inputs, "--criteria", "relevance", "--gold", gold, "--gold-per-topic", 1,
                 "--out-dir", tmp_path / "o")
    assert "not both" in _one_line_error(result, code=2)
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    message = _one_line_error(cli("tasks", *inputs, "--criteria", "relevance", "--out-dir", foreign))
    assert "holds files that are not castregin's judging tasks (notes.txt)" in message
    assert (foreign / "notes.txt").read_text() == "keep me"
    # An organiser's gold: copied to gold.csv, its pair judged like the others.
    result = cli("tasks", *inputs, "--criteria", "relevance", "--gold", gold, "--out-dir", tmp_path / "o")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "o/gold.csv").read_text() == gold.read_text()
    # Replaced as a whole: a second call in another format leaves no file of the first.
    result = cli("tasks", *inputs, "--criteria", "relevance", "--format", "mturk", "--out-dir", tmp_path / "o")
    assert result.exit_code == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [".castregin-output", "hit_template.html",
                                                                  "mturk.csv"]


def test_help_has_examples(cli):
    result = cli("tasks", "--help")
    assert result.exit_code == 0
    assert "castregin tasks question_pool_depth_1.pool" in result.output and "--gold pages/gold.csv" in result.output
