"""The engine on the real CAsT 2022 data: bit-for-bit trec_eval (pytrec_eval) on every turn.

The four baseline MI runs, the three ReGIn qrels (the slice in tests/data everywhere, the full data
beside ../shared), every measure the engine computes, both
averaging modes, through files (the columnar reader) and through dicts.
"""

from __future__ import annotations

import ir_measures
import pytest
import pytrec_eval
from reference_runs import read_qrels_plain, read_run_plain

from castregin import formats
from castregin.evaluation import small
from castregin.evaluation.evaluate import evaluate, evaluate_files
from castregin.formats import columnar

TREC_NAMES = {"P@1": "P_1", "P@3": "P_3", "P@10": "P_10", "R@5": "recall_5", "R@10": "recall_10", "AP": "map",
              "RR": "recip_rank", "nDCG@3": "ndcg_cut_3", "nDCG@5": "ndcg_cut_5", "nDCG@10": "ndcg_cut_10",
              "nDCG": "ndcg", "Rprec": "Rprec", "Success@1": "success_1", "Success@5": "success_5"}
JUDGED = ["Judged@3", "Judged@10"]
QRELS = ["question_relevance_all", "question_relevance_filtered", "question_relevance_mi_subset"]


@pytest.fixture(autouse=True)
def through_the_engine(monkeypatch):
    """The slice's files are small: evaluate would score them in plain Python, not with the engine."""
    monkeypatch.setattr(small, "SMALL_RUN_BYTES", 0)


@pytest.mark.parametrize("qrels_name", QRELS)
@pytest.mark.parametrize("rel_level", [1, 2])
def test_every_turn_equals_pytrec_eval_bit_for_bit(cast_data, qrels_name, rel_level):
    run_paths, qrels_path = cast_data.run_paths, cast_data.root / f"regin/qrels/{qrels_name}.qrel"
    oracle_qrels = read_qrels_plain(qrels_path)
    evaluator = pytrec_eval.RelevanceEvaluator(oracle_qrels, set(TREC_NAMES.values()), relevance_level=rel_level)
    measures = [*TREC_NAMES, *JUDGED]
    for complete in (False, True):
        # pytrec_eval ranks on 32-bit floats: the float rule is the one it checks.
        results = evaluate_files(run_paths, [(None, str(qrels_path))], measures=measures, rel_level=rel_level,
                                 complete=complete, per_turn=True, score_precision="float")
        for run_path in run_paths:
            run = read_run_plain(run_path)
            expected = evaluator.evaluate(run)
            tag = run_path.read_text(encoding="utf-8").split("\n", 1)[0].split()[5]
            mine = results[results["run"] == tag]
            for measure in measures:
                if measure in TREC_NAMES:
                    want = {t: v[TREC_NAMES[measure]] for t, v in expected.items()}
                else:
                    parsed = ir_measures.parse_measure(measure)
                    want = {m.query_id: m.value for m in ir_measures.judged.iter_calc([parsed], oracle_qrels, run)
                            if m.query_id in run}
                if complete:
                    want.update({t: 0.0 for t in oracle_qrels if t not in want})
                rows = mine[mine["measure"] == measure]
                got = {r.turn: r.value for r in rows.itertuples() if r.turn != "all"}
                assert got == want, (tag, measure)  # exact, not approximately
                total = 0.0
                for turn in sorted(want):
                    total += want[turn]
                assert rows[rows["turn"] == "all"]["value"].item() == total / len(want)


def test_the_baselines_tie_no_scores_as_floats_only(cast_data):
    """So both rules (doubles, the default, and pytrec_eval's floats) give the baselines' numbers above,
    and the README's tables of them hold for both."""
    from castregin.evaluation.ranking import float32

    run_paths = cast_data.run_paths
    for path in run_paths:
        for turn, scores in formats.read_run(path).scores.items():
            assert len(set(scores.values())) == len({float32(score) for score in scores.values()}), (path.name, turn)
    qrels_path = cast_data.qrels("relevance_all")
    measures = [*TREC_NAMES, *JUDGED]
    double, single = (evaluate_files(run_paths, [("all", str(qrels_path))], measures=measures, per_turn=True,
                                     score_precision=precision) for precision in ("double", "float"))
    assert double.equals(single)


def test_files_and_dicts_give_the_same_table(cast_data):
    run_paths, qrels_path = cast_data.run_paths, cast_data.qrels("relevance_all")
    measures = [*TREC_NAMES, *JUDGED]
    from_files = evaluate_files(run_paths, [("all", str(qrels_path))], measures=measures, per_turn=True)
    from_dicts = evaluate([formats.read_run(p) for p in run_paths], formats.read_qrels(qrels_path, "all"),
                          measures, per_turn=True)
    assert from_files.equals(from_dicts)


def test_reference_files_take_the_fast_path(cast_data):
    for path in cast_data.run_paths:
        assert columnar._fast_run(path, str(path))[0] is not None
    for name in QRELS:
        path = cast_data.root / f"regin/qrels/{name}.qrel"
        assert columnar._fast_qrels(path, str(path), name)[0] is not None
