"""trec_eval parity on the real CAsT 2022 data (the slice in tests/data everywhere, the full data beside ../shared).

Every mean, per-turn and --complete value is checked against pytrec_eval (trec_eval's C code)
called directly in the test with relevance_level=2, on question_relevance_all, _filtered and
_mi_subset; and the table of ../shared/cast2022/README.md is reproduced (on the full data).
"""

from __future__ import annotations

import json

import pytest
import pytrec_eval
from reference_runs import read_qrels_plain, read_run_plain

from castregin import Run, formats
from castregin.evaluation.evaluate import evaluate
from castregin.evaluation.measures import DEFAULT_MEASURES

TREC_NAMES = {"P@1": "P_1", "P@3": "P_3", "nDCG@3": "ndcg_cut_3", "nDCG@5": "ndcg_cut_5",
              "AP": "map", "RR": "recip_rank", "R@10": "recall_10"}
QRELS = ["question_relevance_all", "question_relevance_filtered", "question_relevance_mi_subset"]


def _oracle(run_path, qrels_path):
    qrels = read_qrels_plain(qrels_path)
    run = read_run_plain(run_path)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES.values()), relevance_level=2)
    return evaluator.evaluate(run), qrels


@pytest.mark.parametrize("qrels_name", QRELS)
@pytest.mark.parametrize("complete", [False, True])
def test_means_and_per_turn_values_equal_pytrec_eval(cast_data, qrels_name, complete):
    qrels_path = cast_data.root / f"regin/qrels/{qrels_name}.qrel"
    qrels = formats.read_qrels(qrels_path)
    for run_path in cast_data.run_paths:
        expected, oracle_qrels = _oracle(run_path, qrels_path)
        results = evaluate(formats.read_run(run_path), qrels, DEFAULT_MEASURES, complete=complete, per_turn=True,
                           score_precision="float")  # pytrec_eval's rule
        assert set(results["measure"]) == {"num_q", *DEFAULT_MEASURES}
        num_q = results[results["measure"] == "num_q"]["value"].item()
        assert num_q == (len(oracle_qrels) if complete else len(expected))
        for measure, trec_name in TREC_NAMES.items():
            rows = results[results["measure"] == measure]
            per_turn = {r.turn: r.value for r in rows.itertuples() if r.turn != "all"}
            oracle_turns = {turn: values[trec_name] for turn, values in expected.items()}
            if complete:
                oracle_turns.update({t: 0.0 for t in oracle_qrels if t not in expected})
                denominator = len(oracle_qrels)
            else:
                denominator = len(expected)
            assert per_turn == oracle_turns  # exact: the same C code
            mean = rows[rows["turn"] == "all"]["value"].item()
            assert mean == pytest.approx(sum(oracle_turns.values()) / denominator, abs=1e-12)


def test_complete_counts_the_turns_a_run_lacks_as_zero(cast_data):
    qrels = formats.read_qrels(cast_data.qrels("relevance_all"))
    bm25 = formats.read_run(cast_data.run_paths[0])
    kept = [turn for turn in qrels.turns[::2] if turn in bm25.scores]
    partial_run = Run(bm25.tag, {t: bm25.scores[t] for t in kept}, {t: bm25.ranks[t] for t in kept})
    expected, _ = _oracle(cast_data.run_paths[0], cast_data.qrels("relevance_all"))
    oracle_sum = sum(expected[t]["P_1"] for t in kept)
    partial = evaluate(partial_run, qrels, ["P@1"]).query("measure == 'P@1'")["value"].item()
    complete = evaluate(partial_run, qrels, ["P@1"], complete=True).query("measure == 'P@1'")["value"].item()
    assert partial == pytest.approx(oracle_sum / len(kept), abs=1e-12)
    assert complete == pytest.approx(oracle_sum / len(qrels.turns), abs=1e-12)
    assert complete < partial


# ../shared/cast2022/README.md: trec_eval 9.0.7 -l2 on question_relevance_all.qrel
README_TABLE = """
bm25_baseline_mi_run 0.1229 0.3776 0.3268 0.1463 0.2425 0.2122 0.1716
miniLM_bert_sample_mi_run 0.1166 0.3836 0.3512 0.1431 0.2437 0.2035 0.1332
T5_raw 0.0556 0.2195 0.2195 0.0732 0.1472 0.1194 0.0556
T5_rewrite 0.0757 0.3024 0.3024 0.1008 0.1905 0.1547 0.0757
"""
README_MEASURES = ["map", "recip_rank", "P_1", "P_3", "ndcg_cut_3", "ndcg_cut_5", "recall_10"]


def test_reference_readme_table_is_reproduced_through_the_cli(run_paths, cast2022, cli):
    result = cli("evaluate", *run_paths, "--qrels", cast2022 / "regin/qrels/question_relevance_all.qrel",
                 *[arg for m in README_MEASURES for arg in ("-m", m)], "--format", "json")
    assert result.exit_code == 0, result.output
    values = {(r["run"], r["measure"]): r["value"] for r in json.loads(result.stdout)}
    for line in README_TABLE.strip().splitlines():
        run, *numbers = line.split()
        for measure, number in zip(README_MEASURES, numbers, strict=True):
            assert f"{values[(run, measure)]:.4f}" == number, (run, measure)
