"""Every measure castregin accepts equals trec_eval's C code (pytrec_eval), or is refused.

The oracle side is pytrec_eval called directly on the CAsT 2022 baseline runs and
question_relevance_all.qrel (the slice in tests/data everywhere, the full data beside ../shared),
and the ``all`` values are formed here from its per-turn values by trec_eval 9.0.8's own rules
(``calc_avg`` of each measure, read from its source): means, sums for the counts, ``num_q`` the
number of queries, ``gm_*`` geometric means over ``log(max(v, 1e-5))``, and with ``-c`` the qrels'
query count and, for ``num_rel``, its lines labelled above 0.
"""

from __future__ import annotations

import math
import re

import pytest
import pytrec_eval
from reference_runs import read_qrels_plain, read_run_plain

from castregin.errors import InputError
from castregin.evaluation import small
from castregin.evaluation.evaluate import evaluate_files
from castregin.evaluation.measures import (
    TREC_SETS,
    measure_catalogue,
    parse_measure,
    parse_measures,
    registered,
)

#: trec_eval's -m all_trec as the names it prints, with the default parameters (runid, relstring: text).
ALL_TREC_FAMILIES = [f for f in TREC_SETS["all_trec"] if f not in ("runid", "relstring")]
SUMMED = {"num_ret", "num_rel_ret", "num_nonrel_judged_ret", "num_rel"}
GEOMETRIC = {"gm_map", "gm_bpref"}
NO_PER_TURN = {"num_q", "gm_map", "gm_bpref"}


def _family_of(key: str) -> str:
    for family in sorted(TREC_SETS["all_trec"], key=len, reverse=True):
        if key == family or re.fullmatch(re.escape(family) + r"_[\d.]+", key):
            return family
    raise AssertionError(key)


def _oracle(run_path, qrels_path, rel_level):
    qrels = read_qrels_plain(qrels_path)
    run = read_run_plain(run_path)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(ALL_TREC_FAMILIES), relevance_level=rel_level)
    return evaluator.evaluate(run), qrels


def _trec_eval_all(key: str, per_query: dict, qrels: dict, complete: bool) -> float:
    """trec_eval's summary value of ``key`` from per-query values (its calc_avg rules)."""
    family = _family_of(key)
    values = [per_query[q][key] for q in sorted(per_query)]
    n = len(qrels) if complete else len(per_query)
    if family == "num_q":
        return float(n)
    if family == "num_rel" and complete:
        return float(sum(1 for items in qrels.values() for label in items.values() if label > 0))
    if family in SUMMED:
        return float(sum(values))
    if family in GEOMETRIC:
        total = sum(values) + (n - len(values)) * math.log(0.00001)
        return math.exp(total / n)
    return sum(values) / n


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("rel_level", [1, 2])
@pytest.mark.parametrize("path", ["rules", "engine"])
def test_all_trec_equals_trec_eval(cast_data, complete, rel_level, path, monkeypatch):
    # Files up to SMALL_RUN_BYTES are scored by the rules in plain Python, larger ones by the engine: both, on both.
    monkeypatch.setattr(small, "SMALL_RUN_BYTES", 1 << 40 if path == "rules" else 0)
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    results = evaluate_files(run_paths, [(None, str(qrels_path))], measures=["all_trec"], rel_level=rel_level,
                             complete=complete, per_turn=True, score_precision="float")  # pytrec_eval's rule
    measures = list(dict.fromkeys(results["measure"]))
    expected_keys = next(iter(_oracle(run_paths[0], qrels_path, rel_level)[0].values()))
    assert set(measures) == {k for k in expected_keys if k not in ("runid", "relstring")}
    for run_path, tag in zip(run_paths, dict.fromkeys(results["run"]), strict=True):
        per_query, qrels = _oracle(run_path, qrels_path, rel_level)
        ours = results[results["run"] == tag]
        for key in measures:
            rows = ours[ours["measure"] == key]
            mean = rows[rows["turn"] == "all"]["value"].item()
            assert mean == pytest.approx(_trec_eval_all(key, per_query, qrels, complete), rel=1e-12, abs=1e-12), \
                (tag, key)
            per_turn = {r.turn: r.value for r in rows.itertuples() if r.turn != "all"}
            if _family_of(key) in NO_PER_TURN:
                assert per_turn == {}, key
                continue
            oracle = {q: v[key] for q, v in per_query.items()}
            if complete:
                oracle.update({q: 0.0 for q in qrels if q not in per_query})
            assert per_turn == pytest.approx(oracle, abs=1e-12), (tag, key)


def test_counting_measures_are_sums_and_num_q_counts_turns(cast_data):
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    results = evaluate_files(run_paths[:1], [(None, str(qrels_path))],
                             measures=["num_q", "num_ret", "num_rel_ret", "NumRelRet", "NumRet", "num_rel"])
    values = dict(zip(results["measure"], results["value"], strict=True))
    per_query, _ = _oracle(run_paths[0], qrels_path, 2)
    assert values["num_q"] == len(per_query)
    assert values["num_ret"] == values["NumRet"] == sum(v["num_ret"] for v in per_query.values())
    assert values["num_rel_ret"] == values["NumRelRet"] == sum(v["num_rel_ret"] for v in per_query.values())
    assert values["num_rel"] == sum(v["num_rel"] for v in per_query.values())
    # num_rel_ret follows the relevance level (it used to keep ir_measures' rel=1).
    level1 = evaluate_files(run_paths[:1], [(None, str(qrels_path))], measures=["num_rel_ret"], rel_level=1)
    per_query_1, _ = _oracle(run_paths[0], qrels_path, 1)
    assert level1["value"].iloc[-1] == sum(v["num_rel_ret"] for v in per_query_1.values()) > values["num_rel_ret"]


@pytest.mark.parametrize("name", ["ERR", "nDCG(dcg='exp-log2')", "alpha_nDCG(rel=2)@10", "RBP(p=1.5)",
                                  "ERR(max_grade=40)@20", "alpha_nDCG(order='random')@5", "nERR_IA(judged_only=True)@5",
                                  "INST", "SDCG@10", "RR@10", "P", "Accuracy@5", "BPM@10",
                                  "runid", "relstring", "P_0", "iprec_at_recall_1.5", "P.5,x", "ndcg.1=0,2=1",
                                  "no_such_measure", "P@", "NumRel(rel=0)"])
def test_refused_measures_are_one_line_errors(name):
    if name == "P":  # a trec_eval family name: expands to its cutoffs
        assert [m.name for m in parse_measure(name)] == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
        return
    with pytest.raises(InputError) as err:
        parse_measures([name])
    assert "\n" not in str(err.value) and name in str(err.value)


def test_refused_measure_on_the_command_line(cli, cast_data):
    run_paths, qrels = cast_data.run_paths, cast_data.qrels("relevance_all")
    for name, says in [("nDCG(dcg='exp-log2')", "pip install"), ("ERR", "only at a cutoff"), ("INST", "max_rel")]:
        result = cli("evaluate", run_paths[0], "--qrels", qrels, "-m", name)
        assert result.exit_code == 1
        assert result.stderr.startswith(f"castregin: error: measure {name!r}") and result.stderr.count("\n") == 1
        assert says in result.stderr and result.stdout == ""
    for command in (["compare", run_paths[0], run_paths[1]], ["report", run_paths[0], "--out", "never"]):
        result = cli(*command, "--qrels", qrels, "-m", "RR@10")
        assert result.exit_code == 1 and "Traceback" not in result.stderr
        assert result.stderr.startswith("castregin: error: measure 'RR@10'")


def test_every_catalogued_measure_is_computed_or_refused(cast_data):
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    per_query, qrels = _oracle(run_paths[0], qrels_path, 2)
    for row in measure_catalogue():
        if row["backend"] == "refused":
            for listed in re.split(r",\s*", row["ir_measures"] or row["trec_eval"]):
                name = listed.replace("@k", "@10").replace("8..11", "8@10")
                with pytest.raises(InputError):
                    parse_measures([name])
            continue
        if row["trec_eval"] is None:
            # Judged: checked against ir_measures in test_judged.py; gdeval's, ndeval's and RBP against theirs
            # in test_novelty_measures.py.
            assert row["ir_measures"] == "Judged@k" or "checked against" in row["note"], row
            continue
        name = row["trec_eval"].replace("_k", "")
        results = evaluate_files(run_paths[:1], [(None, str(qrels_path))], measures=[name])
        for key, value in zip(results["measure"], results["value"], strict=True):
            assert value == pytest.approx(_trec_eval_all(key, per_query, qrels, False), rel=1e-12, abs=1e-12)


def test_ir_measures_names_map_to_the_same_trec_eval_values(cast_data):
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    pairs = {"P@10": "P_10", "P(rel=1)@5": None, "R@5": "recall_5", "AP": "map", "AP@10": "map_cut_10",
             "RR": "recip_rank", "nDCG": "ndcg", "nDCG@20": "ndcg_cut_20", "Rprec": "Rprec", "Bpref": "bpref",
             "infAP": "infAP", "IPrec@0.3": "iprec_at_recall_0.30", "SetP": "set_P", "SetR": "set_recall",
             "SetF": "set_F", "SetAP": "set_map", "SetP(relative=True)": "set_relative_P", "Success@5": "success_5",
             "NumRel": "num_rel"}
    results = evaluate_files(run_paths[:1], [(None, str(qrels_path))], measures=list(pairs))
    values = dict(zip(results["measure"], results["value"], strict=True))
    per_query, qrels = _oracle(run_paths[0], qrels_path, 2)
    for name, key in pairs.items():
        if key is not None:
            assert values[name] == pytest.approx(_trec_eval_all(key, per_query, qrels, False), abs=1e-12), name
    level1, _ = _oracle(run_paths[0], qrels_path, 1)
    assert values["P(rel=1)@5"] == pytest.approx(_trec_eval_all("P_5", level1, qrels, False), abs=1e-12)


def test_ir_measures_options_that_trec_eval_has(cast_data):
    """set_F's beta, judged-only rankings (trec_eval -J) and mapped nDCG gains, each against pytrec_eval."""
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    qrels, run = read_qrels_plain(qrels_path), read_run_plain(run_paths[1])
    names = ["SetF(beta=0.5)", "P(judged_only=True)@5", "nDCG(gains={0:0,1:1,2:3,3:7})@5"]
    results = evaluate_files(run_paths[1:2], [(None, str(qrels_path))], measures=names, per_turn=True)

    def per_turn(name):
        rows = results[(results["measure"] == name) & (results["turn"] != "all")]
        return dict(zip(rows["turn"], rows["value"], strict=True))

    beta = pytrec_eval.RelevanceEvaluator(qrels, {"set_F.0.5"}, relevance_level=2).evaluate(run)
    assert per_turn(names[0]) == pytest.approx({q: v["set_F"] for q, v in beta.items()}, abs=1e-12)
    judged = pytrec_eval.RelevanceEvaluator(qrels, {"P.5"}, relevance_level=2, judged_docs_only_flag=True).evaluate(run)
    assert per_turn(names[1]) == pytest.approx({q: v["P_5"] for q, v in judged.items()}, abs=1e-12)
    gains = {0: 0, 1: 1, 2: 3, 3: 7}
    mapped = {q: {d: gains[label] for d, label in items.items()} for q, items in qrels.items()}
    ndcg = pytrec_eval.RelevanceEvaluator(mapped, {"ndcg_cut.5"}).evaluate(run)
    assert per_turn(names[2]) == pytest.approx({q: v["ndcg_cut_5"] for q, v in ndcg.items()}, abs=1e-12)


@pytest.mark.parametrize("rel_level", [1, 2, 3])
def test_plain_names_read_without_ir_measures_as_ir_measures_reads_them(rel_level):
    # P@5, nDCG@3, AP... are read by castregin's own pattern (a small evaluation does not import
    # ir_measures); each must give what ir_measures' parse gives, refusals included.
    import ir_measures

    from castregin.evaluation.measures import names as measures

    # RBP_residual is castregin's own name, which ir_measures cannot parse.
    kinds = sorted({alias.name for definition in registered() for alias in definition.ir_measures
                    if alias.name in ir_measures.measures.registry})
    assert {"P", "R", "Success", "nDCG", "AP", "RR", "Judged"} <= set(kinds)
    names = [kind + suffix for kind in kinds for suffix in ("", "@1", "@3", "@10", "@1000", "@999999")]
    compared = 0
    for name in names:
        try:
            plain = ("measure", measures._plain_ir_measure(name, rel_level))
        except InputError as err:
            plain = ("refused", str(err))
        if plain == ("measure", None):
            continue  # left to ir_measures
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(measures, "_plain_ir_measure", lambda name, rel_level: None)
            try:
                parsed = ("measure", measures._parse_ir_measures(name, rel_level))
            except InputError as err:
                parsed = ("refused", str(err))
        assert plain == parsed, name
        compared += plain[0] == "measure"
    assert compared >= 30
