"""Aggregating crowd labels into qrels: each rule on a small hand-made crowd, and the shared example."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from castregin.errors import InputError, InputWarning
from castregin.formats.crowd import parse_gold, parse_judgments
from castregin.judging.aggregate import aggregate, decide
from castregin.labels import divide_rounded, turns_with_label

CRITERIA = ["relevance", "novelty", "diversity"]


def crowd(rows, criteria=("relevance",)) -> bytes:
    """Long CSV bytes from (worker, turn, item, label per criterion...) tuples; None is an empty cell."""
    lines = [",".join(["worker_id", "turn_id", "item_id", *criteria])]
    lines.extend(",".join("" if v is None else str(v) for v in row) for row in rows)
    return ("\n".join(lines) + "\n").encode()


def gold_csv(rows) -> bytes:
    lines = ["turn_id,item_id,criterion,min_label,max_label"] + [",".join(map(str, r)) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def votes(turn, item, labels, first_worker=0):
    """Rows of one (turn, item) judged by workers W<first_worker>, W<first_worker + 1>, ..."""
    return [(f"W{first_worker + k}", turn, item, label) for k, label in enumerate(labels)]


def run(rows, criteria=("relevance",), gold=None, **rules):
    judgments = parse_judgments([(crowd(rows, criteria), "j.csv")], list(criteria))
    gold_frame = parse_gold(gold_csv(gold), "g.csv") if gold else None
    return aggregate(judgments, gold_frame, **rules)


def label_of(result, turn, item, criterion="relevance"):
    return result.qrels[criterion][turn][item]


# --- the decision rule --------------------------------------------------------------------------

def test_unique_mode_wins():
    result = run(votes("1_1", "Q1", [1, 1, 3, 0]))
    assert label_of(result, "1_1", "Q1") == 1
    assert result.decisions["relevance"] == {"mode": 1, "tie": 0}


def test_two_way_tie_takes_the_mean_rounded_half_up():
    result = run(votes("1_1", "Q1", [1, 1, 2, 2]) + votes("1_1", "Q2", [2, 3]) + votes("1_1", "Q3", [0, 1]))
    # 1.5 -> 2, 2.5 -> 3 (Python's round would give 2), 0.5 -> 1
    assert result.qrels["relevance"]["1_1"] == {"Q1": 2, "Q2": 3, "Q3": 1}
    assert result.decisions["relevance"] == {"mode": 0, "tie": 3}


def test_three_way_tie_takes_the_mean_of_all_labels():
    result = run(votes("1_1", "Q1", [0, 2, 3]) + votes("1_1", "Q2", [0, 0, 1, 1, 3, 3]))
    assert label_of(result, "1_1", "Q1") == 2          # 5/3 = 1.67
    assert label_of(result, "1_1", "Q2") == 1          # 8/6 = 1.33


def test_absolute_majority_needs_more_than_half():
    rows = votes("1_1", "Q1", [1, 1, 2, 3]) + votes("1_1", "Q2", [1, 1, 1, 3])
    plurality = run(rows)
    absolute = run(rows, majority="absolute")
    assert label_of(plurality, "1_1", "Q1") == 1
    assert label_of(absolute, "1_1", "Q1") == 2        # 2 of 4 is not more than half: mean 7/4 -> 2
    assert label_of(absolute, "1_1", "Q2") == 1        # 3 of 4 is
    assert absolute.decisions["relevance"] == {"mode": 1, "tie": 1}


@pytest.mark.parametrize(("labels", "tie", "rounding", "expected"), [
    # a tie between 0 and 3 with a 2 besides: mean 8/5, median 2, tied labels {0, 3}
    ([0, 0, 2, 3, 3], "mean", "half-up", 2),
    ([0, 0, 2, 3, 3], "median", "half-up", 2),
    ([0, 0, 2, 3, 3], "max", "half-up", 3),
    ([0, 0, 2, 3, 3], "min", "half-up", 0),
    ([0, 0, 2, 3, 3], "mean", "floor", 1),
    # mean 1.5 and even-count median (0 + 3) / 2 = 1.5
    ([0, 0, 3, 3], "mean", "half-up", 2),
    ([0, 0, 3, 3], "mean", "half-even", 2),
    ([0, 0, 3, 3], "mean", "floor", 1),
    ([0, 0, 3, 3], "mean", "ceil", 2),
    ([0, 0, 3, 3], "median", "half-up", 2),
    ([0, 0, 3, 3], "median", "half-even", 2),
    ([0, 0, 3, 3], "median", "floor", 1),
    ([0, 0, 3, 3], "median", "ceil", 2),
    # mean 2.5: half-even goes to 2
    ([2, 2, 3, 3], "mean", "half-up", 3),
    ([2, 2, 3, 3], "mean", "half-even", 2),
    ([2, 2, 3, 3], "mean", "floor", 2),
    ([2, 2, 3, 3], "mean", "ceil", 3),
    ([2, 2, 3, 3], "max", "floor", 3),
    ([2, 2, 3, 3], "min", "ceil", 2),
    # 0,0,1,2,3,3 ties 0 and 3; the even-count median is (1 + 2) / 2
    ([0, 0, 1, 2, 3, 3], "median", "half-up", 2),
    ([0, 0, 1, 2, 3, 3], "median", "half-even", 2),
    ([0, 0, 1, 2, 3, 3], "median", "floor", 1),
    ([1, 1, 2, 2, 2, 3, 3, 3], "median", "half-even", 2),   # (2 + 2) / 2, no rounding needed
    # a three-way tie with mean 4/3: half-up 1, ceil 2
    ([0, 1, 3], "mean", "half-up", 1),
    ([0, 1, 3], "mean", "ceil", 2),
])
def test_each_tie_rule_and_rounding(labels, tie, rounding, expected):
    result = run(votes("1_1", "Q1", labels), tie=tie, rounding=rounding)
    assert label_of(result, "1_1", "Q1") == expected


def test_tie_rule_is_not_used_when_the_mode_is_unique():
    for tie in ("mean", "median", "max", "min"):
        result = run(votes("1_1", "Q1", [0, 0, 0, 3, 3]), tie=tie)
        assert label_of(result, "1_1", "Q1") == 0 and result.decisions["relevance"] == {"mode": 1, "tie": 0}


@pytest.mark.parametrize("rule, value", [("majority", "most"), ("tie", "coin"), ("rounding", "up"), ("method", "em")])
def test_an_unknown_rule_is_an_input_error_naming_its_argument(rule, value):
    # It was a ValueError, which the command line would have shown as a traceback.
    with pytest.raises(InputError, match=f"unknown .*{value!r}") as caught:
        run(votes("1_1", "Q1", [1, 2]), **{rule: value})
    assert caught.value.argument == rule


@pytest.mark.parametrize("rounding", ["half-up", "half-even", "floor", "ceil"])
def test_divide_rounded_is_exact(rounding):
    rng = np.random.default_rng(7)
    numerators = rng.integers(-50, 50, 2000)
    denominators = rng.integers(1, 12, 2000)
    got = divide_rounded(numerators, denominators, rounding)
    for n, d, g in zip(numerators.tolist(), denominators.tolist(), got.tolist(), strict=True):
        x = Fraction(n, d)
        if rounding == "half-up":
            want = (x + Fraction(1, 2)).__floor__()
        elif rounding == "half-even":
            want = round(x)  # Fraction rounds half to even, exactly
        elif rounding == "floor":
            want = x.__floor__()
        else:
            want = x.__ceil__()
        assert g == want, (n, d)
    assert divide_rounded(5, 2) == 3 and divide_rounded(3, 2) == 2 and divide_rounded(5, 2, "half-even") == 2


def test_decide_on_a_count_matrix():
    counts = np.array([[2, 0, 0, 1], [1, 1, 0, 0], [0, 1, 1, 1]])
    labels, by_mode = decide(counts, [0, 1, 2, 3])
    assert labels.tolist() == [0, 1, 2] and by_mode.tolist() == [True, False, False]


# --- gold filtering -----------------------------------------------------------------------------

def test_worker_failing_gold_loses_the_topic_but_keeps_other_topics():
    rows = [
        ("BAD", "1_1", "G", 3), ("A", "1_1", "G", 0), ("B", "1_1", "G", 1),   # gold: 0-1, BAD fails
        ("BAD", "1_2", "Q1", 3), ("A", "1_2", "Q1", 0), ("B", "1_2", "Q1", 3),  # topic 1: BAD removed
        ("BAD", "2_1", "Q1", 3), ("A", "2_1", "Q1", 0), ("B", "2_1", "Q1", 3),  # topic 2: BAD kept
    ]
    result = run(rows, gold=[("1_1", "G", "relevance", 0, 1)])
    assert label_of(result, "1_2", "Q1") == 2      # tie 0/3 -> mean 1.5 -> 2 without BAD
    assert label_of(result, "2_1", "Q1") == 3      # BAD's 3 still counts in topic 2
    assert result.removed == [{"worker_id": "BAD", "topic": "1", "gold": [
        {"turn_id": "1_1", "item_id": "G", "criterion": "relevance", "label": 3, "min_label": 0, "max_label": 1}]}]


def test_gold_failure_removes_every_criterion_of_the_topic():
    rows = [("BAD", "1_1", "G", 3, 3), ("A", "1_1", "G", 0, 0),
            ("BAD", "1_2", "Q1", 3, 3), ("A", "1_2", "Q1", 1, 1)]
    result = run(rows, criteria=("relevance", "novelty"), gold=[("1_1", "G", "relevance", 0, 1)])
    assert result.qrels["novelty"]["1_2"] == {"Q1": 1}
    assert result.qrels["novelty"]["1_1"] == {"G": 0}
    assert result.qrels["relevance"]["1_2"] == {"Q1": 1}


def test_topic_is_the_part_before_the_first_underscore():
    rows = [("BAD", "13_1-1", "G", 3), ("A", "13_1-1", "G", 0),
            ("BAD", "13_2_x", "Q1", 3), ("A", "13_2_x", "Q1", 1),
            ("BAD", "132_1", "Q1", 3)]
    result = run(rows, gold=[("13_1-1", "G", "relevance", 0, 1)])
    assert result.qrels["relevance"]["13_2_x"] == {"Q1": 1}
    assert result.qrels["relevance"]["132_1"] == {"Q1": 3}     # topic 132 is not topic 13


def test_gold_item_keeps_its_remaining_labels():
    rows = [("BAD", "1_1", "G", 3), ("A", "1_1", "G", 1), ("B", "1_1", "G", 1), ("C", "1_1", "G", 0)]
    result = run(rows, gold=[("1_1", "G", "relevance", 0, 1)])
    assert label_of(result, "1_1", "G") == 1
    assert result.dropped_items == []


def test_gold_within_range_removes_nobody():
    rows = [("A", "1_1", "G", 1), ("B", "1_1", "G", 0)]
    with pytest.warns(InputWarning) as warned:
        result = run(rows, gold=[("1_1", "G", "relevance", 0, 1), ("9_9", "X", "relevance", 0, 0),
                                 ("1_1", "G", "novelty", 0, 0)])   # unknown unit and other criterion: ignored
    assert result.removed == []
    assert sorted(str(w.message) for w in warned) == [
        "g.csv:3: gold names topic(s) with no judgment (9); check the turn ids",
        "g.csv:4: 1 gold row(s) name criteria that are not aggregated (novelty); they are ignored"]


def test_item_left_without_labels_is_dropped_and_audited():
    rows = [("BAD", "1_1", "G", 3), ("A", "1_1", "G", 0),
            ("BAD", "1_2", "ONLY_BAD", 2),
            ("A", "1_2", "Q1", 2, ), ("A", "1_2", "EMPTY", None)]
    result = run(rows, gold=[("1_1", "G", "relevance", 0, 1)])
    assert "ONLY_BAD" not in result.qrels["relevance"]["1_2"]
    assert "EMPTY" not in result.qrels["relevance"]["1_2"]
    assert result.dropped_items == [
        {"turn_id": "1_2", "item_id": "EMPTY", "criterion": "relevance", "reason": "empty"},
        {"turn_id": "1_2", "item_id": "ONLY_BAD", "criterion": "relevance", "reason": "gold"},
    ]


def test_filtered_qrels_keep_exactly_the_turns_with_a_label_at_least_min_label():
    rows = (votes("1_1", "Q1", [2, 2]) + votes("1_1", "Q2", [0, 0])      # kept: has a 2
            + votes("1_2", "Q1", [1, 1]) + votes("1_2", "Q2", [0, 1])    # mean 0.5 -> 1, no 2: dropped
            + votes("1_3", "Q1", [1, 2])                                 # mean 1.5 -> 2: kept
            + votes("2_1", "Q1", [3]))
    result = run(rows)
    assert set(result.filtered["relevance"]) == {"1_1", "1_3", "2_1"}
    assert result.filtered["relevance"]["1_1"] == {"Q1": 2, "Q2": 0}     # the whole turn is kept
    assert set(run(rows, min_label=3).filtered["relevance"]) == {"2_1"}
    assert turns_with_label({"a": {"x": 1}, "b": {"y": 2}}, 2) == ["b"]


# --- the command --------------------------------------------------------------------------------

def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_cli_writes_prefixed_files_and_audit(tmp_path, cli):
    rows = [("BAD", "1_1", "G", 3, 1), ("A", "1_1", "G", 0, 2), ("B", "1_1", "G", 1, 2),
            ("A", "1_2", "Q1", 2, 0), ("B", "1_2", "Q1", 3, 0)]
    judgments = write(tmp_path, "j.csv", crowd(rows, ("relevance", "novelty")))
    gold = write(tmp_path, "g.csv", gold_csv([("1_1", "G", "relevance", 0, 1)]))
    out = tmp_path / "out"
    result = cli("aggregate", judgments, "--criteria", "relevance,novelty", "--gold", gold, "--out-dir", out)
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "audit.json", "question_novelty.qrel", "question_novelty_filtered.qrel",
        "question_relevance.qrel", "question_relevance_filtered.qrel"]
    # without BAD: G ties 0/1 -> 0.5 -> 1; Q1 ties 2/3 -> 2.5 -> 3
    assert (out / "question_relevance.qrel").read_text() == "1_1 0 G 1\n1_2 0 Q1 3\n"
    assert (out / "question_relevance_filtered.qrel").read_text() == "1_2 0 Q1 3\n"
    assert (out / "question_novelty.qrel").read_text() == "1_1 0 G 2\n1_2 0 Q1 0\n"
    assert (out / "question_novelty_filtered.qrel").read_text() == "1_1 0 G 2\n"
    audit = json.loads((out / "audit.json").read_text())
    assert list(audit) == ["agreement", "decisions", "dropped_items", "method", "removed", "suspects", "workers"]
    assert audit["decisions"] == {"novelty": {"mode": 2, "tie": 0}, "relevance": {"mode": 0, "tie": 2}}
    assert [(r["worker_id"], r["topic"]) for r in audit["removed"]] == [("BAD", "1")]
    assert "relevance" in result.stderr and "alpha" in result.stderr
    assert result.stdout == ""


def test_cli_options_reach_the_rules(tmp_path, cli):
    judgments = write(tmp_path, "j.csv", crowd(votes("1_1", "Q1", [2, 2, 3, 3])))
    for options, label in [((), 3), (("--rounding", "half-even"), 2), (("--tie", "min"), 2),
                           (("--tie", "median", "--rounding", "floor"), 2), (("--tie", "max"), 3)]:
        out = tmp_path / f"out{len(options)}{label}"
        result = cli("aggregate", judgments, "--criteria", "relevance", *options, "--prefix", "", "--out-dir", out)
        assert result.exit_code == 0, result.stderr
        assert (out / "relevance.qrel").read_text() == f"1_1 0 Q1 {label}\n", options


def test_crowd_example_matches_expected(crowd_example, tmp_path, cli):
    out = tmp_path / "out"
    result = cli("aggregate", crowd_example / "judgments.csv", "--criteria", ",".join(CRITERIA),
                 "--gold", crowd_example / "gold.csv", "--prefix", "", "--out-dir", out)
    assert result.exit_code == 0, result.stderr
    for expected in sorted((crowd_example / "expected").glob("*.qrel")):
        assert (out / expected.name).read_bytes() == expected.read_bytes(), expected.name
    audit = json.loads((out / "audit.json").read_text())
    removed = {(r["worker_id"], r["topic"]) for r in audit["removed"]}
    lines = (crowd_example / "expected" / "removed.tsv").read_text().split("\n")
    assert removed == {tuple(line.split("\t")) for line in lines if line.strip()}
    assert all(r["gold"] for r in audit["removed"])
    assert audit["dropped_items"] == []
    for criterion in CRITERIA:
        decisions = audit["decisions"][criterion]
        assert decisions["mode"] + decisions["tie"] == 391
        part = audit["agreement"][criterion]
        assert part["after_gold"]["alpha_ordinal"] > part["before_gold"]["alpha_ordinal"]   # the filter removes noise
        assert set(part["after_gold"]["topics"]) == {"138", "139", "140"}


def test_crowd_example_is_byte_identical_twice(crowd_example, tmp_path, cli):
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / name
        result = cli("aggregate", crowd_example / "judgments.csv", "--criteria", ",".join(CRITERIA),
                     "--gold", crowd_example / "gold.csv", "--out-dir", out)
        assert result.exit_code == 0, result.stderr
        outputs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outputs[0] == outputs[1]
    assert "question_relevance.qrel" in outputs[0]


def test_agreement_matches_the_oracle_on_the_crowd_example(crowd_example, cli):
    krippendorff = pytest.importorskip("krippendorff")
    import pandas as pd

    result = cli("agreement", crowd_example / "judgments.csv", "--criteria", "relevance",
                 "--gold", crowd_example / "gold.csv", "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)["relevance"]
    frame = pd.read_csv(crowd_example / "judgments.csv", dtype=str, keep_default_na=False)
    frame = frame[frame["relevance"] != ""]
    removed = {tuple(line.split("\t")) for line in
               (crowd_example / "expected" / "removed.tsv").read_text().splitlines() if line}
    topics = frame["turn_id"].str.split("_").str[0]
    kept = frame[[(w, t) not in removed for w, t in zip(frame["worker_id"], topics, strict=True)]]
    for stage, data in (("before_gold", frame), ("after_gold", kept)):
        matrix = data.assign(v=data["relevance"].astype(float)).pivot(
            index="worker_id", columns=["turn_id", "item_id"], values="v").to_numpy()
        for level in ("nominal", "ordinal", "interval"):
            want = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
            assert report[stage][f"alpha_{level}"] == pytest.approx(want, abs=1e-9)
    table = cli("agreement", crowd_example / "judgments.csv", "--criteria", "relevance")
    assert table.exit_code == 0 and "kappa_quadratic" in table.stdout


def test_a_criterion_without_any_label_gives_empty_qrels_and_audits_its_items(tmp_path, cli):
    judgments = write(tmp_path, "j.csv", crowd([("A", "1_1", "Q1", 2, None), ("B", "1_1", "Q1", 3, None)],
                                               ("relevance", "novelty")))
    out = tmp_path / "out"
    result = cli("aggregate", judgments, "--criteria", "relevance,novelty", "--out-dir", out)
    assert result.exit_code == 0, result.stderr
    assert (out / "question_novelty.qrel").read_text() == ""
    audit = json.loads((out / "audit.json").read_text())
    assert audit["dropped_items"] == [{"criterion": "novelty", "item_id": "Q1", "reason": "empty", "turn_id": "1_1"}]
    assert audit["agreement"]["novelty"]["after_gold"]["alpha_ordinal"] is None      # undefined, not NaN
    assert audit["agreement"]["relevance"]["after_gold"]["units"] == 1


def test_every_row_rejected_is_an_error(tmp_path, cli):
    judgments = write(tmp_path, "b.csv", b"WorkerId,AssignmentStatus,Input.turn_id,Input.item_id,Answer.relevance\n"
                                         b"W1,Rejected,1_1,Q1,2\n")
    result = cli("aggregate", judgments, "--criteria", "relevance", "--out-dir", tmp_path / "out")
    assert result.exit_code == 1 and "no judgments" in result.stderr
    assert not (tmp_path / "out").exists()
