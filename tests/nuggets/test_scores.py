"""Nugget scores against their oracles: nuggetizer (the four scores) and CONE-RAG's NtR (nugget recall).

The assignments are a real slice of TREC iKAT 2024's human nugget-matching study (CONE-RAG; see
make_cone_rag_slice.py, which wrote tests/nuggets/data/ and ran CONE-RAG's own recall code on it).
nuggetizer 0.0.5 (castorini, the TREC RAG 2024 scorer) is installed by the test extra and run here.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores

from castregin.errors import InputWarning
from castregin.formats.nuggets import Assignment, Nugget, read_assignment_files, read_assignments
from castregin.nuggets.scores import (
    ALL_TURNS,
    NUGGET_RECALL,
    NUGGETIZER_MEASURES,
    score_assignments,
    unit_labels,
)

DATA = Path(__file__).resolve().parent / "data"
HUMAN = sorted((DATA / "cone_rag_human").glob("*.jsonl"))


def _rows_by_key(rows):
    return {(run, measure, turn): value for run, _, measure, turn, value in rows}


def _nuggetizer(records):
    """nuggetizer's per-record metrics and its global metrics, as its calculate_metrics script takes them."""
    per_turn = {r["qid"]: calculate_nugget_scores(r["qid"], r["nuggets"]) for r in records}
    return per_turn, calculate_global_metrics(records)


@pytest.mark.parametrize("path", HUMAN, ids=lambda p: p.stem)
def test_the_four_scores_are_nuggetizers_on_ikat_2024_human_assignments(path):
    records = [json.loads(line) for line in path.read_text().splitlines()]
    per_turn, overall = _nuggetizer(records)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        rows = _rows_by_key(score_assignments(read_assignments(path), per_turn=True))
    run = records[0]["run_id"]
    for measure in NUGGETIZER_MEASURES:
        assert rows[run, measure, ALL_TURNS] == overall[measure]
        for qid, metrics in per_turn.items():
            assert rows[run, measure, qid] == getattr(metrics, measure)
    assert rows[run, "num_q", ALL_TURNS] == len(records)


def test_nugget_recall_is_cone_rags_ntr_recall():
    expected = json.loads((DATA / "cone_rag_ntr_expected.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        rows = _rows_by_key(score_assignments(read_assignment_files(HUMAN), measures=[NUGGET_RECALL], per_turn=True))
    for run, oracle in expected.items():
        # NtR sums its turns left to right in its file's order, castregin exactly (as nuggetizer's mean does): the
        # same mean of the same values, rounded apart at most in the last bit.
        assert rows[run, NUGGET_RECALL, ALL_TURNS] == pytest.approx(oracle["model_recall"], rel=2**-52, abs=0)
        turns = {turn for r, m, turn in rows if r == run and m == NUGGET_RECALL and turn != ALL_TURNS}
        # NtR leaves out the turn whose answer is empty (nii-1 on 10_1): so does castregin.
        assert turns == set(oracle["turns"])
        for turn, value in oracle["turns"].items():
            assert rows[run, NUGGET_RECALL, turn] == value
    assert "10_1" not in expected["nii-1"]["turns"]


_labels = st.sampled_from(["support", "partial_support", "not_support"])
_nuggets = st.lists(st.tuples(st.sampled_from(["vital", "okay"]), _labels), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(_nuggets, min_size=1, max_size=8))
def test_any_labels_score_as_in_nuggetizer(turns):
    """Partial supports, turns without a vital nugget or without any nugget: nuggetizer's numbers, bit for bit."""
    records = [{"qid": f"q{k}", "nuggets": [{"text": f"n{i}", "importance": imp, "assignment": label}
                                            for i, (imp, label) in enumerate(nuggets)]}
               for k, nuggets in enumerate(turns)]
    assignments = [Assignment("run", r["qid"], "", tuple(Nugget(n["text"], n["importance"]) for n in r["nuggets"]),
                              tuple(n["assignment"] for n in r["nuggets"])) for r in records]
    per_turn, overall = _nuggetizer(records)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        rows = _rows_by_key(score_assignments(assignments, per_turn=True))
    for measure in NUGGETIZER_MEASURES:
        assert rows["run", measure, ALL_TURNS] == overall[measure]
        for qid, metrics in per_turn.items():
            assert rows["run", measure, qid] == getattr(metrics, measure)


def _one(qid, *nuggets):
    return Assignment("run", qid, "", tuple(Nugget(f"n{i}", imp) for i, (imp, _) in enumerate(nuggets)),
                      tuple(label for _, label in nuggets))


def test_a_turn_without_a_vital_nugget_is_said_and_scores_as_in_nuggetizer_or_is_skipped():
    assignments = [_one("q1", ("vital", "support"), ("okay", "not_support")),
                   _one("q2", ("okay", "support"), ("okay", "partial_support"))]
    with pytest.warns(InputWarning, match=r"1 turn\(s\) have no vital nugget: q2; they score 0"):
        zero = _rows_by_key(score_assignments(assignments, per_turn=True))
    assert zero["run", "vital_score", "q2"] == 0.0
    assert zero["run", "vital_score", ALL_TURNS] == 0.5  # nuggetizer's mean of 1.0 and 0.0
    with pytest.warns(InputWarning, match="left out of strict_vital_score and vital_score"):
        skipped = _rows_by_key(score_assignments(assignments, per_turn=True, no_vital="skip"))
    assert ("run", "vital_score", "q2") not in skipped
    assert skipped["run", "vital_score", ALL_TURNS] == 1.0
    assert skipped["run", "all_score", "q2"] == 0.75  # the other scores keep the turn


def test_a_turn_without_any_nugget_is_said():
    with pytest.warns(InputWarning, match=r"1 turn\(s\) have no nugget: q9"):
        rows = _rows_by_key(score_assignments([_one("q9"), _one("q1", ("vital", "support"))], per_turn=True))
    assert rows["run", "all_score", "q9"] == 0.0
    assert ("run", NUGGET_RECALL, "q9") not in rows  # NtR skips a turn without nuggets


def test_an_assignment_source_is_a_label_per_qid_run_and_nugget():
    table = unit_labels(read_assignments(HUMAN[0]))
    records = [json.loads(line) for line in HUMAN[0].read_text().splitlines()]
    values = {"not_support": 0, "partial_support": 1, "support": 2}
    assert table == {r["qid"]: {f"{r['run_id']}#{k}": values[n["assignment"]] for k, n in enumerate(r["nuggets"])}
                     for r in records}


def test_the_python_api_gives_the_commands_rows(cli):
    from castregin.api import nugget_scores

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        frame = nugget_scores(DATA / "cone_rag_human", source="human", per_turn=True)
    printed = json.loads(cli("nuggets", "score", DATA / "cone_rag_human", "--name", "human", "-q",
                             "--format", "json").stdout)
    assert frame.to_dict("records") == printed
    records = [json.loads(line) for line in HUMAN[0].read_text().splitlines()]
    ours = frame[(frame["run"] == records[0]["run_id"]) & (frame["turn"] == ALL_TURNS)]
    assert dict(zip(ours["measure"], ours["value"], strict=True))["vital_score"] == \
        calculate_global_metrics(records)["vital_score"]
