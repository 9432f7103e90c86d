"""The suspect flags: one made-up worker per rule among honest ones, the crowd example's two spammers,
the time column, and how the audit and the command show them."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from castregin.errors import InputError
from castregin.formats.crowd import parse_judgments
from castregin.judging.aggregate import aggregate
from castregin.judging.suspects import label_seconds

CRITERIA = ["relevance", "novelty"]
ITEMS = 40


def answers(kind: str, truth: np.ndarray, rng) -> np.ndarray:
    """A worker's labels (items x criteria) and, below, their seconds per item."""
    if kind == "constant":
        return np.column_stack([np.full(len(truth), 3), truth[:, 1]])
    if kind == "repeated":  # 0 1 2 3 0 1 2 3 ... in file order, on both criteria
        cycle = np.arange(len(truth)) % 4
        return np.column_stack([cycle, cycle])
    if kind == "adversarial":  # the opposite end of the scale
        return 3 - truth
    noise = rng.integers(-1, 2, truth.shape) * (rng.random(truth.shape) < 0.2)
    return np.clip(truth + noise, 0, 3)


def crowd_csv(kinds: dict[str, str], seed: int = 0, time_column: str | None = "seconds") -> bytes:
    """Long CSV: every worker judges every item; ``kinds`` maps worker ids to a kind."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, (ITEMS, len(CRITERIA)))
    header = ["worker_id", "turn_id", "item_id", *CRITERIA] + ([time_column] if time_column else [])
    lines = [",".join(header)]
    for worker, kind in kinds.items():
        labels = answers(kind, truth, rng)
        seconds = rng.integers(3, 8, ITEMS) if kind == "fast" else rng.integers(30, 60, ITEMS)
        for item in range(ITEMS):
            cells = [worker, f"{1 + item // 10}_1", f"Q{item:03d}", *map(str, labels[item])]
            lines.append(",".join(cells + ([str(seconds[item])] if time_column else [])))
    return ("\n".join(lines) + "\n").encode()


HONEST = {f"H{k}": "honest" for k in range(6)}


def audit_of(kinds: dict[str, str], **options):
    judgments = parse_judgments([(crowd_csv(kinds, **{k: v for k, v in options.items() if k == "time_column"}),
                                  "crowd.csv")], CRITERIA)
    return aggregate(judgments, **{k: v for k, v in options.items() if k != "time_column"})


def reasons(result) -> dict[str, list[str]]:
    return {w["worker_id"]: w["reasons"] for w in result.workers}


def test_honest_workers_are_not_suspects():
    result = audit_of(HONEST)
    assert all(not r for r in reasons(result).values())
    assert result.suspects["workers"] == []
    assert result.suspects["crowd_median_seconds"] is not None and result.suspects["time_column"] == "seconds"


@pytest.mark.parametrize(("kind", "expected"), [
    ("adversarial", ["below_chance"]),
    ("constant", ["below_chance", "constant"]),        # a constant worker agrees by chance at best
    ("repeated", ["below_chance", "repeated"]),
    ("fast", ["fast"]),
])
def test_each_rule_flags_its_worker_and_nobody_else(kind, expected):
    result = audit_of({**HONEST, "X": kind})
    found = reasons(result)
    assert found.pop("X") == expected
    assert all(not r for r in found.values())
    assert result.suspects["workers"] == ["X"]
    entry = next(w for w in result.workers if w["worker_id"] == "X")
    assert entry["suspect"] is True


def test_the_evidence_is_in_the_audit():
    result = audit_of({**HONEST, "C": "constant", "R": "repeated", "F": "fast"})
    entries = {w["worker_id"]: w for w in result.workers}
    assert entries["C"]["top_share"]["relevance"] == 1.0
    assert entries["R"]["repeat"] == {"period": 4, "share": 1.0}
    assert entries["F"]["median_seconds"] < result.suspects["crowd_median_seconds"] / 3
    assert entries["H0"]["kappa_others"]["relevance"] > 0.5
    assert entries["H0"]["kappa_items"] == {"relevance": ITEMS, "novelty": ITEMS}
    assert entries["H0"]["labels"] == 2 * ITEMS and entries["H0"]["rows"] == ITEMS
    # mode-mean's accuracy: the share of the worker's labels equal to the final label
    assert 0.5 < entries["H0"]["accuracy"]["relevance"] <= 1.0
    assert set(result.suspects) == {"rule", "time_column", "crowd_median_seconds", "workers"}
    assert result.suspects["rule"]["min_items"] == 10


def test_few_items_are_not_enough_evidence():
    rows = "worker_id,turn_id,item_id,relevance\n" + "".join(f"W{w},1_1,Q{i},{3 if w == 9 else i % 4}\n"
                                                             for i in range(9) for w in (1, 2, 9))
    result = aggregate(parse_judgments([(rows.encode(), "j.csv")], ["relevance"]))
    assert result.suspects["workers"] == []          # W9 is constant over 9 items: too few to say
    assert result.suspects["time_column"] is None


def test_without_a_time_column_nobody_is_fast():
    result = audit_of({**HONEST, "F": "fast"}, time_column=None)
    assert reasons(result)["F"] == []
    assert result.suspects["time_column"] is None and result.suspects["crowd_median_seconds"] is None


def test_the_time_column_can_be_named_or_switched_off():
    judgments = parse_judgments([(crowd_csv({**HONEST, "F": "fast"}, time_column="secs"), "c.csv")], CRITERIA)
    assert label_seconds(judgments)[1] is None                  # not one of the known names
    assert reasons(aggregate(judgments, time_column="secs"))["F"] == ["fast"]
    assert reasons(aggregate(judgments, time_column=None))["F"] == []
    with pytest.raises(InputError, match=re.escape("c.csv:1: time_column: no time column 'elapsed'")):
        aggregate(judgments, time_column="elapsed")


def test_mturk_work_time_is_found_and_bad_cells_are_ignored():
    data = (b"WorkerId,AssignmentStatus,Input.turn_id,Input.item_id,Answer.relevance,WorkTimeInSeconds\n"
            b"A,Approved,1_1,Q1,2,40\nA,Approved,1_1,Q2,1,\nB,Approved,1_1,Q1,2,n/a\nB,Rejected,1_1,Q2,0,1\n"
            b"B,Approved,1_1,Q3,0,-5\n")
    judgments = parse_judgments([(data, "batch.csv")], ["relevance"])
    seconds, column = label_seconds(judgments)
    assert column == "WorkTimeInSeconds"
    assert seconds[0] == 40 and np.isnan(seconds[1:]).all()


def test_suspects_are_flagged_not_removed():
    result = audit_of({**HONEST, "X": "adversarial"})
    assert result.removed == []
    assert next(w for w in result.workers if w["worker_id"] == "X")["accuracy"]["relevance"] < 0.3


def test_the_crowd_examples_spammers_are_the_suspects(crowd_example, tmp_path, cli):
    out = tmp_path / "out"
    result = cli("aggregate", crowd_example / "judgments.csv", "--criteria", "relevance,novelty,diversity",
                 "--gold", crowd_example / "gold.csv", "--out-dir", out)
    assert result.exit_code == 0, result.stderr
    audit = json.loads((out / "audit.json").read_text())
    assert audit["method"] == "mode-mean"
    assert audit["suspects"]["workers"] == ["A3B5F268ECC45", "AC7B34D1FE09F"]
    assert {r["worker_id"] for r in audit["removed"]} >= set(audit["suspects"]["workers"])   # gold agrees
    assert audit["suspects"]["time_column"] == "seconds" and audit["suspects"]["crowd_median_seconds"] == 49.0
    assert len(audit["workers"]) == 23
    assert list(audit["workers"][0]) == sorted(audit["workers"][0])   # keys sorted: stable JSON
    assert "suspects: 2 worker(s) flagged" in result.stderr
    assert "A3B5F268ECC45" in result.stderr and "below_chance,constant" in result.stderr


def test_cli_time_column_errors_in_one_line(tmp_path, cli):
    judgments = tmp_path / "j.csv"
    judgments.write_bytes(crowd_csv(HONEST))
    result = cli("aggregate", judgments, "--criteria", "relevance,novelty", "--time-column", "elapsed",
                 "--out-dir", tmp_path / "o")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        (f"castregin: error: {judgments}:1: --time-column: no time column 'elapsed'; the header has worker_id, "
         "turn_id, item_id, relevance, novelty, seconds")]
    assert not (tmp_path / "o").exists()
    off = cli("aggregate", judgments, "--criteria", "relevance,novelty", "--time-column", "", "--out-dir",
              tmp_path / "p")
    assert off.exit_code == 0 and json.loads((tmp_path / "p" / "audit.json").read_text())["suspects"][
        "time_column"] is None
