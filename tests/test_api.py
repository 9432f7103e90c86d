"""The public API takes what ir_measures and ranx users pass, and gives trec_eval's numbers.

Every kind of run and qrels input is checked against the others (the same numbers from a path, a
dict, a DataFrame, a Run ...) and against pytrec_eval called directly on dicts read without
castregin, on hand-made data and on the real CAsT 2022 baselines; then ir_measures' measure
objects, the keys of the results, and the error messages.
"""

from __future__ import annotations

import doctest
import json
import math
import subprocess
import sys
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from reference_runs import read_qrels_plain, read_run_plain

import castregin
from castregin import InputError, Metric, Qrels, Run, api

#: castregin name -> trec_eval name, checked against pytrec_eval.
TREC = {"P@1": "P_1", "P@3": "P_3", "nDCG@3": "ndcg_cut_3", "nDCG@5": "ndcg_cut_5", "AP": "map",
        "RR": "recip_rank", "R@10": "recall_10", "bpref": "bpref"}

# Graded labels, ties (1_1-2: e and a), unjudged items, a run turn without qrels (9_1-1), a qrels
# turn the run lacks (2_1-1), a turn without relevant items at level 2 (1_1-3), integer-like ids.
QRELS = {"1_1-1": {"a": 2, "b": 1, "c": 0, "d": 3}, "1_1-2": {"a": 1, "e": 2}, "1_1-3": {"f": 1, "z": 0},
         "2_1-1": {"g": 2}, "3": {"7": 2, "8": 0}}
RUN = {"1_1-1": {"a": 1.5, "b": 2.5, "c": 0.5, "x": 3.0, "d": 0.25}, "1_1-2": {"e": 1.0, "a": 1.0, "y": 0.2},
       "1_1-3": {"z": 1.0, "f": 0.5}, "9_1-1": {"a": 1.0}, "3": {"8": 2.0, "7": 1.0}}


def oracle(qrels: dict, run: dict, names, rel_level: int = 2) -> tuple[dict, dict]:
    """pytrec_eval's ``({measure: mean}, {turn: {measure: value}})`` over the shared turns."""
    trec = {name: TREC.get(name, name) for name in names}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(trec.values()), relevance_level=rel_level)
    per_turn = evaluator.evaluate(run)
    values = {turn: {name: got[key] for name, key in trec.items()} for turn, got in per_turn.items()}
    means = {name: sum(turn[name] for turn in values.values()) / len(values) for name in trec}
    return means, values


# --- every kind of input ------------------------------------------------------------------------------------


def _lines(table: dict, line) -> str:
    return "".join(line(turn, item, value) for turn, items in table.items() for item, value in items.items())


def _frame(table: dict, columns: tuple[str, str, str]) -> pd.DataFrame:
    rows = [(t, i, v) for t, items in table.items() for i, v in items.items()]
    return pd.DataFrame(rows, columns=list(columns))


class RanxLike:
    """What castregin needs of a ranx Run or Qrels: ``to_dict()`` and a ``name``."""

    def __init__(self, data: dict, name: str | None = None):
        self.data, self.name = data, name

    def to_dict(self) -> dict:
        return {turn: dict(items) for turn, items in self.data.items()}


def as_input(kind: str, table: dict, tmp_path: Path, *, run: bool):
    """``table`` ({turn: {item: score or label}}) as a run (``run``) or qrels input of ``kind``."""
    if kind in ("path", "str path"):
        path = tmp_path / ("r.run" if run else "q.qrel")
        path.write_text(_lines(table, (lambda t, i, v: f"{t} Q0 {i} 0 {v!r} tag\n") if run
                               else (lambda t, i, v: f"{t} 0 {i} {v}\n")))
        return path if kind == "path" else str(path)
    record = ir_measures.ScoredDoc if run else ir_measures.Qrel
    triples = [(t, i, v) for t, items in table.items() for i, v in items.items()]
    return {
        "dict": lambda: table,
        "object": lambda: Run("tag", table) if run else Qrels(table),
        "DataFrame": lambda: _frame(table, ("query_id", "doc_id", "score" if run else "relevance")),
        "ranx DataFrame": lambda: _frame(table, ("q_id", "doc_id", "score")),
        "records": lambda: [record(*triple) for triple in triples],
        "record generator": lambda: (record(*triple) for triple in triples),
        "ranx object": lambda: RanxLike(table, "tag" if run else None),
    }[kind]()


KINDS = ["path", "str path", "dict", "object", "DataFrame", "ranx DataFrame", "records", "record generator",
         "ranx object"]


def test_hand_made_values_equal_pytrec_eval():
    expected, per_turn = oracle(QRELS, RUN, TREC)
    assert castregin.calc_aggregate(list(TREC), QRELS, RUN) == pytest.approx(expected, abs=1e-12)
    got = {}
    for turn, measure, value in castregin.iter_calc(list(TREC), QRELS, RUN):
        got.setdefault(turn, {})[measure] = value
    assert got == per_turn  # the same C code or the engine checked against it: exact


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_of_run_and_qrels_gives_the_same_numbers(kind, tmp_path):
    expected = castregin.calc_aggregate(list(TREC), QRELS, RUN)
    run = as_input(kind, RUN, tmp_path, run=True)
    assert castregin.calc_aggregate(list(TREC), QRELS, run) == expected
    qrels = as_input(kind, QRELS, tmp_path, run=False)
    assert castregin.calc_aggregate(list(TREC), qrels, RUN) == expected
    if kind != "record generator":  # spent by now
        assert castregin.calc_aggregate(list(TREC), qrels, run) == expected


def test_integer_ids_and_whole_float_labels_are_taken(tmp_path):
    # pandas reads numeric ids as integers and labels with a gap as floats; trec_eval sees their text.
    qrels = pd.DataFrame({"query_id": [3, 3], "doc_id": [7, 8], "relevance": [2.0, 0.0]})
    run = pd.DataFrame({"query_id": np.array([3, 3]), "doc_id": np.array([8, 7]),
                        "score": np.float32([2, 1])})
    assert castregin.calc_aggregate(["P@1", "RR"], qrels, run) == {"P@1": 0.0, "RR": 0.5}
    assert api.as_qrels(qrels).labels == {"3": {"7": 2, "8": 0}}


def test_objects_are_used_as_they_are():
    run, qrels = Run("t", RUN), Qrels(QRELS, name="q")
    assert api.as_run(run) is run and api.as_qrels(qrels) is qrels


def test_ranx_objects_when_ranx_is_installed():
    ranx = pytest.importorskip("ranx")
    run, qrels = ranx.Run(RUN, name="mine"), ranx.Qrels(QRELS)
    expected = castregin.calc_aggregate(list(TREC), QRELS, RUN)
    assert castregin.calc_aggregate(list(TREC), qrels, run) == expected
    assert api.as_run(run).tag == "mine"


def test_complete_averages_over_every_qrels_turn():
    _, per_turn = oracle(QRELS, RUN, ["AP"])
    mean = sum(values["AP"] for values in per_turn.values()) / len(QRELS)
    assert castregin.calc_aggregate("AP", QRELS, RUN, complete=True)["AP"] == pytest.approx(mean, abs=1e-12)
    turns = [metric.query_id for metric in castregin.iter_calc("AP", QRELS, RUN, complete=True)]
    assert turns == ["1_1-1", "1_1-2", "1_1-3", "2_1-1", "3"]  # the missing turn listed, at 0


# --- the real CAsT 2022 baselines (the slice of tests/data everywhere, the full data beside ../shared) ---------


@pytest.fixture(scope="module")
def cast_qrels(cast_data) -> Path:
    return cast_data.qrels("relevance_all")


@pytest.fixture(scope="module")
def run_paths(cast_data) -> list[Path]:
    return cast_data.run_paths


def test_cast2022_paths_dicts_and_frames_equal_pytrec_eval(run_paths, cast_qrels):
    qrels_dict = read_qrels_plain(cast_qrels)
    qrels_frame = _frame(qrels_dict, ("query_id", "doc_id", "relevance"))
    for run_path in run_paths:
        run_dict = read_run_plain(run_path)
        expected, per_turn = oracle(qrels_dict, run_dict, TREC)
        from_path = castregin.calc_aggregate(list(TREC), cast_qrels, run_path)
        assert from_path == pytest.approx(expected, abs=1e-12), run_path.name
        assert castregin.calc_aggregate(list(TREC), qrels_dict, run_dict) == from_path
        run_frame = _frame(run_dict, ("query_id", "doc_id", "score"))
        assert castregin.calc_aggregate(list(TREC), qrels_frame, run_frame) == from_path
        assert castregin.calc_aggregate(list(TREC), castregin.read_qrels(cast_qrels),
                                        castregin.read_run(run_path)) == from_path
        got = {}
        for turn, measure, value in castregin.iter_calc(list(TREC), qrels_frame, run_path):
            got.setdefault(turn, {})[measure] = value
        assert got == per_turn


def test_cast2022_ir_measures_objects_equal_pytrec_eval(run_paths, cast_qrels):
    measures = [ir_measures.P@1, ir_measures.P@3, ir_measures.nDCG@3, ir_measures.nDCG@5, ir_measures.AP,
                ir_measures.RR, ir_measures.R@10]
    qrels_dict = read_qrels_plain(cast_qrels)
    run_dict = read_run_plain(run_paths[0])
    expected, _ = oracle(qrels_dict, run_dict, TREC)
    got = castregin.calc_aggregate(measures, cast_qrels, run_paths[0])
    assert list(got) == measures  # keyed by the objects passed
    assert got == {m: pytest.approx(expected[str(m)], abs=1e-12) for m in measures}


def test_cast2022_evaluate_takes_paths_and_frames(run_paths, cast_qrels, cast_data):
    frame = _frame(read_run_plain(run_paths[1]), ("query_id", "doc_id", "score"))
    scores = castregin.evaluate([run_paths[1], frame], cast_qrels, ["P@1", ir_measures.nDCG@3])
    table = scores.pivot(index="run", columns="measure", values="value")
    assert list(table.index) == ["miniLM_bert_sample_mi_run", "runs[1]"]
    assert table.loc["runs[1]"].tolist() == table.loc["miniLM_bert_sample_mi_run"].tolist()
    if cast_data.name == "cast2022":
        assert table.loc["runs[1]", "P@1"] == pytest.approx(0.3512, abs=5e-5)  # the README table


# --- ir_measures measure objects and the keys ---------------------------------------------------------------


def test_ir_measures_objects_round_trip_through_their_names():
    objects = [ir_measures.P@5, ir_measures.nDCG@3, ir_measures.P(rel=2)@1, ir_measures.AP(rel=1),
               ir_measures.nDCG(gains={0: 0, 1: 1, 2: 3, 3: 3})@3, ir_measures.SetF(beta=0.5),
               ir_measures.NumRelRet,
               ir_measures.IPrec@0.2, ir_measures.Judged@10, ir_measures.RR(rel=1), ir_measures.Rprec]
    names = [name for _, name in api.measure_names(objects)]
    assert names[:4] == ["P@5", "nDCG@3", "P(rel=2)@1", "AP(rel=1)"]  # rel=1 kept though ir_measures omits it
    assert str(ir_measures.AP(rel=1)) == "AP"
    by_object = castregin.calc_aggregate(objects, QRELS, RUN)
    assert list(by_object.values()) == list(castregin.calc_aggregate(names, QRELS, RUN).values())


def test_rel_set_in_an_object_wins_over_rel_level():
    level_1, _ = oracle(QRELS, RUN, ["P_3", "recip_rank"], rel_level=1)
    level_2, _ = oracle(QRELS, RUN, ["P_3"], rel_level=2)
    got = castregin.calc_aggregate([ir_measures.P(rel=1)@3, ir_measures.RR(rel=1)], QRELS, RUN)
    assert list(got.values()) == pytest.approx([level_1["P_3"], level_1["recip_rank"]], abs=1e-12)
    by_level = castregin.calc_aggregate(ir_measures.P@3, QRELS, RUN)
    assert by_level[ir_measures.P@3] == pytest.approx(level_2["P_3"], abs=1e-12)
    assert level_1["P_3"] != level_2["P_3"]  # the data tells the levels apart
    assert castregin.calc_aggregate(ir_measures.P(rel=2)@3, QRELS, RUN, rel_level=1) == pytest.approx(
        {ir_measures.P(rel=2)@3: level_2["P_3"]}, abs=1e-12)


def test_same_numbers_as_ir_measures_at_its_level_where_the_run_covers_every_turn():
    # ir_measures takes rel=1 and averages over every qrels turn: castregin's rel_level=1, complete.
    run = {turn: items for turn, items in RUN.items() if turn in QRELS}
    measures = [ir_measures.P@1, ir_measures.P@3, ir_measures.nDCG@3, ir_measures.AP, ir_measures.RR,
                ir_measures.R@10, ir_measures.P(rel=2)@3, ir_measures.Judged@3]
    theirs = ir_measures.calc_aggregate(measures, QRELS, run)
    ours = castregin.calc_aggregate(measures, QRELS, run, rel_level=1, complete=True)
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_sets_and_families_are_keyed_by_castregin_names():
    got = castregin.calc_aggregate([ir_measures.P@1, "P.1,3", "ndcg_cut_3", "P_5"], QRELS, RUN)
    assert list(got) == [ir_measures.P@1, "P_1", "P_3", "ndcg_cut_3", "P_5"]
    everything = castregin.calc_aggregate("all_trec", QRELS, RUN)
    assert {"num_q", "map", "P_5", "ndcg_cut_1000", "gm_bpref"} <= set(everything)
    assert everything["num_q"] == 4.0 and "runid" not in everything


def test_a_single_measure_string_or_object():
    assert list(castregin.calc_aggregate("nDCG@3", QRELS, RUN)) == ["nDCG@3"]
    assert list(castregin.calc_aggregate(ir_measures.nDCG@3, QRELS, RUN)) == [ir_measures.nDCG@3]
    assert castregin.calc_aggregate([], QRELS, RUN) == {}


def test_iter_calc_records_are_turn_by_turn():
    records = list(castregin.iter_calc([ir_measures.P@1, "gm_map", "AP"], QRELS, RUN))
    assert all(isinstance(r, Metric) for r in records)
    assert [(r.query_id, r.measure) for r in records[:2]] == [("1_1-1", ir_measures.P@1), ("1_1-1", "AP")]
    assert len(records) == 2 * 4  # gm_map has no per-turn value; four shared turns


def test_evaluate_takes_the_same_inputs(tmp_path):
    frame = as_input("DataFrame", RUN, tmp_path, run=True)
    scores = castregin.evaluate([RUN, frame, RanxLike(RUN, "mine")], QRELS, "P@3", per_turn=True)
    assert list(scores.columns) == ["run", "qrels", "measure", "turn", "value"]
    assert sorted(set(scores["run"])) == ["mine", "runs[0]", "runs[1]"]
    values = [scores[scores["run"] == name]["value"].tolist() for name in ("runs[0]", "runs[1]", "mine")]
    assert values[0] == values[1] == values[2]
    single = castregin.evaluate(as_input("records", RUN, tmp_path, run=True), [QRELS, Qrels(QRELS, name="n")])
    assert sorted(set(single["qrels"])) == ["n", "qrels[0]"] and set(single["run"]) == {"run"}
    assert set(single["measure"]) == {"num_q", "P@1", "P@3", "nDCG@3", "nDCG@5", "AP", "RR", "R@10"}


def test_the_exports():
    assert castregin.evaluate is api.evaluate and castregin.calc_aggregate is api.calc_aggregate
    for name in castregin.__all__:
        assert getattr(castregin, name) is not None, name
    assert {"calc_aggregate", "iter_calc", "Metric"} <= set(dir(castregin))
    with pytest.raises(AttributeError):
        castregin.no_such_name  # noqa: B018 - the attribute lookup is what raises


def test_import_castregin_loads_no_heavy_library():
    heavy = ["numpy", "pandas", "pyarrow", "ir_measures", "pytrec_eval"]
    code = (f"import json, sys, castregin; castregin.read_run; castregin.Run; "
            f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == []


def test_docstring_examples():
    """The examples in the docstrings of castregin.api's modules run and give what they show."""
    import castregin.api.evaluation
    import castregin.api.inputs
    import castregin.api.judging
    import castregin.api.nuggets
    import castregin.api.sampling

    modules = [api, castregin.api.evaluation, castregin.api.inputs, castregin.api.judging, castregin.api.nuggets,
               castregin.api.sampling]
    results = [doctest.testmod(module) for module in modules]
    assert sum(r.failed for r in results) == 0
    assert sum(r.attempted for r in results) >= 10  # the examples were found


# --- errors -------------------------------------------------------------------------------------------------


def _error(call, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        call(*args, **kwargs)
    assert "\n" not in str(info.value)
    return info.value


def test_a_wrong_run_type_says_what_was_expected():
    error = _error(castregin.calc_aggregate, "P@1", QRELS, [1, 2, 3])
    assert str(error) == ("run: expected a file path, a Run, a dict {turn: {item: score}} or a DataFrame "
                          "with columns query_id, doc_id, score; got list")
    assert error.argument == "run"
    assert str(_error(castregin.calc_aggregate, "P@1", QRELS, np.zeros(3))).endswith("; got ndarray")


def test_a_wrong_qrels_type_says_what_was_expected():
    error = _error(castregin.calc_aggregate, "P@1", 5, RUN)
    assert str(error) == ("qrels: expected a file path, a Qrels, a dict {turn: {item: label}} or a DataFrame "
                          "with columns query_id, doc_id, relevance; got int")
    frame = pd.DataFrame({"qid": ["t"], "docno": ["a"], "label": [1]})
    assert str(_error(castregin.calc_aggregate, "P@1", frame, RUN)).endswith(
        "; got a DataFrame with columns qid, docno, label")


@pytest.mark.parametrize(("run", "message"), [
    ({"t": {"a": "high"}}, "run: turn 't', item 'a': score 'high' is not a number"),
    ({"t": {"a": math.nan}}, "run: turn 't', item 'a': score nan is not a finite number"),
    ({"t": {"a": np.float64("inf")}}, "run: turn 't', item 'a': score inf is not a finite number"),
    ({"t": {"a": True}}, "run: turn 't', item 'a': score True is not a number"),
    ({"t": [("a", 1.0)]}, "run: turn 't': expected a dict {item: score}, got list"),
    ({1.5: {"a": 1.0}}, "run: turn id 1.5 is not a string"),
    ({"t": {None: 1.0}}, "run: turn 't': item id None is not a string"),
    ({"1": {"a": 1.0}, 1: {"a": 2.0}}, "run: turn '1', item 'a': given twice"),
    ([ir_measures.ScoredDoc("t", "a", 1.0), ("t", "b", 2.0)],
     "run: element 1: expected ScoredDoc(query_id, doc_id, score), got tuple"),
    (pd.DataFrame({"query_id": ["t", "t"], "doc_id": ["a", "a"], "score": [1.0, 2.0]}),
     "run: turn 't', item 'a': given twice"),
])
def test_bad_values_in_a_run_name_the_turn_and_item(run, message):
    assert str(_error(castregin.calc_aggregate, "P@1", QRELS, run)) == message


@pytest.mark.parametrize(("qrels", "message"), [
    ({"t": {"a": 2.5}}, "qrels: turn 't', item 'a': label 2.5 is not an integer"),
    ({"t": {"a": "2"}}, "qrels: turn 't', item 'a': label '2' is not an integer"),
    ({"t": {"a": math.nan}}, "qrels: turn 't', item 'a': label nan is not an integer"),
    ({"t": {"a": 1 << 70}}, f"qrels: turn 't', item 'a': label {1 << 70} does not fit in 64 bits"),
    ({"t": 3}, "qrels: turn 't': expected a dict {item: label}, got int"),
])
def test_bad_values_in_qrels_name_the_turn_and_item(qrels, message):
    assert str(_error(castregin.calc_aggregate, "P@1", qrels, RUN)) == message


def test_wrong_measures_say_what_was_expected():
    error = _error(castregin.calc_aggregate, 5, QRELS, RUN)
    assert str(error) == ("measures: expected a measure name (P@1, ndcg_cut_3, all_trec), an ir_measures "
                          "measure or a list of them; got int")
    assert str(_error(castregin.calc_aggregate, ["P@1", 3], QRELS, RUN)) == (
        "measures[1]: expected a measure name or an ir_measures measure; got int")
    assert "unknown measure 'P@@1'" in str(_error(castregin.calc_aggregate, "P@@1", QRELS, RUN))


def test_two_measures_ir_measures_takes_for_one_key_are_refused():
    # ir_measures prints P(rel=1)@5 as P@5 and holds them equal; castregin computes P@5 at rel_level.
    error = _error(castregin.calc_aggregate, [ir_measures.P@5, ir_measures.P(rel=1)@5], QRELS, RUN)
    assert str(error) == ("measures: P@5 and P(rel=1)@5 are different measures but one key (P@5); "
                          "pass them as strings")


def test_evaluate_names_the_list_element_at_fault(tmp_path):
    error = _error(castregin.evaluate, [RUN, {"t": {"a": "x"}}], QRELS)
    assert str(error) == "runs[1]: turn 't', item 'a': score 'x' is not a number"
    assert str(_error(castregin.evaluate, RUN, [QRELS, 3])).startswith("qrels[1]: expected a file path")
    missing = tmp_path / "missing.run"
    assert "missing.run" in str(_error(castregin.evaluate, missing, QRELS))
