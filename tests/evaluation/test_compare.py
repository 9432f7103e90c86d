"""compare: paired tests on the CAsT 2022 baseline runs, checked against scipy and statsmodels
called directly on per-turn values read with pytrec_eval; JSON shape; baselines; degenerate cases.

The runs and qrels are the slice of tests/data everywhere, and the full data beside ../shared (``cast_data``).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from reference_runs import read_qrels_plain, read_run_plain, write_reference_runs
from scipy import stats
from statsmodels.stats.multitest import multipletests

from castregin import Qrels, Run
from castregin.errors import CoverageWarning
from castregin.evaluation.compare import DEFAULT_PERMUTATIONS, DEFAULT_SEED, cohens_d, compare, paired_test
from castregin.evaluation.evaluate import evaluate

TREC_NAMES = {"P@1": "P_1", "nDCG@3": "ndcg_cut_3", "AP": "map"}
TAGS = ["bm25_baseline_mi_run", "miniLM_bert_sample_mi_run", "T5_raw", "T5_rewrite"]
JSON_KEYS = ["measure", "run", "baseline", "qrels", "turns", "mean_difference", "statistic", "p_value",
             "p_value_corrected", "significant", "direction", "effect_size"]


@pytest.fixture(scope="module")
def run_paths(cast_data):
    return cast_data.run_paths


@pytest.fixture(scope="module")
def qrels_path(cast_data):
    return cast_data.qrels("relevance_all")


@pytest.fixture(scope="module")
def oracle(run_paths, qrels_path):
    """{tag: {trec measure: {turn: value}}} straight from pytrec_eval, relevance_level=2."""
    qrels = read_qrels_plain(qrels_path)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES.values()), relevance_level=2)
    out = {}
    for path, tag in zip(run_paths, TAGS, strict=True):
        per_turn = evaluator.evaluate(read_run_plain(path))
        out[tag] = {m: {t: v[m] for t, v in per_turn.items()} for m in TREC_NAMES.values()}
    return out


def _vectors(oracle, measure, run, baseline):
    ours, theirs = oracle[run][TREC_NAMES[measure]], oracle[baseline][TREC_NAMES[measure]]
    turns = sorted(set(ours) & set(theirs))
    return np.array([ours[t] for t in turns]), np.array([theirs[t] for t in turns])


def _json(cli, *args):
    result = cli("compare", *args, "--score-precision", "float", "--format", "json")  # pytrec_eval's rule
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _measures():
    return [arg for m in TREC_NAMES for arg in ("-m", m)]


@pytest.mark.parametrize("test", ["paired-t", "wilcoxon"])
def test_p_values_and_holm_equal_scipy_and_statsmodels(cli, run_paths, qrels_path, oracle, test, cast_data):
    rows = _json(cli, *run_paths, "--qrels", qrels_path, *_measures(), "--baseline", run_paths[0],
                 "--test", test)
    assert [list(r) for r in rows] == [JSON_KEYS] * len(rows)
    assert len(rows) == 3 * 3
    scipy_test = stats.ttest_rel if test == "paired-t" else stats.wilcoxon
    for measure in TREC_NAMES:
        family = [r for r in rows if r["measure"] == measure]
        assert [r["run"] for r in family] == TAGS[1:]
        assert {r["baseline"] for r in family} == {"bm25_baseline_mi_run"}
        assert {r["qrels"] for r in family} == {"question_relevance_all"}
        expected_p = []
        for row in family:
            x, y = _vectors(oracle, measure, row["run"], row["baseline"])
            expected = scipy_test(x, y)
            assert row["turns"] == len(x)
            assert row["mean_difference"] == pytest.approx(float(np.mean(x - y)), rel=1e-12)
            assert row["statistic"] == pytest.approx(float(expected.statistic), rel=1e-12)
            assert row["p_value"] == pytest.approx(float(expected.pvalue), rel=1e-12)
            expected_p.append(float(expected.pvalue))
        reject, corrected, _, _ = multipletests(expected_p, alpha=0.05, method="holm")
        assert [r["p_value_corrected"] for r in family] == pytest.approx(list(corrected), rel=1e-12)
        assert [r["significant"] for r in family] == list(reject)
    if cast_data.name == "cast2022":
        # The full data holds significant and non-significant differences (the slice's 12 turns none).
        assert {r["significant"] for r in rows} == {True, False}


def test_bonferroni_and_none(cli, run_paths, qrels_path, oracle):
    for correction in ("bonferroni", "none"):
        rows = _json(cli, *run_paths, "--qrels", qrels_path, "-m", "nDCG@3", "--correction", correction,
                     "--alpha", "0.01")
        p = [r["p_value"] for r in rows]
        if correction == "none":
            assert [r["p_value_corrected"] for r in rows] == p
            assert [r["significant"] for r in rows] == [v <= 0.01 for v in p]
        else:
            reject, corrected, _, _ = multipletests(p, alpha=0.01, method="bonferroni")
            assert [r["p_value_corrected"] for r in rows] == pytest.approx(list(corrected), rel=1e-12)
            assert [r["significant"] for r in rows] == list(reject)


def test_randomization_is_scipy_permutation_test_and_reproducible(cli, run_paths, qrels_path, oracle):
    args = [run_paths[0], run_paths[1], "--qrels", qrels_path, "-m", "P@1", "--test", "randomization",
            "--permutations", "2000"]
    first = _json(cli, *args)
    again = _json(cli, *args)
    assert first == again
    seeded = _json(cli, *args, "--seed", str(DEFAULT_SEED))
    assert seeded == first
    other = _json(cli, *args, "--seed", "12345")
    assert other[0]["mean_difference"] == first[0]["mean_difference"]
    # The same test done by hand: samples permutation on the mean difference, turns in byte order.
    x, y = _vectors(oracle, "P@1", first[0]["run"], first[0]["baseline"])
    expected = stats.permutation_test((x, y), lambda a, b, axis: np.mean(a - b, axis=axis),
                                      permutation_type="samples", vectorized=True, n_resamples=2000,
                                      rng=np.random.default_rng(DEFAULT_SEED))
    assert first[0]["p_value"] == pytest.approx(float(expected.pvalue), rel=1e-12)
    different = stats.permutation_test((x, y), lambda a, b, axis: np.mean(a - b, axis=axis),
                                       permutation_type="samples", vectorized=True, n_resamples=2000,
                                       rng=np.random.default_rng(12345))
    assert other[0]["p_value"] == pytest.approx(float(different.pvalue), rel=1e-12)
    assert DEFAULT_PERMUTATIONS == 10_000


def test_all_pairs_without_baseline(cli, run_paths, qrels_path):
    rows = _json(cli, *run_paths, "--qrels", qrels_path, "-m", "P@1")
    pairs = [(r["run"], r["baseline"]) for r in rows]
    assert len(pairs) == 6
    assert {frozenset(p) for p in pairs} == {frozenset((a, b)) for i, a in enumerate(TAGS) for b in TAGS[:i]}
    assert pairs[0] == (TAGS[1], TAGS[0])  # a later run against an earlier one


def test_baseline_by_path_and_by_tag_agree(cli, run_paths, qrels_path):
    by_path = _json(cli, *run_paths, "--qrels", qrels_path, "-m", "P@1", "--baseline", run_paths[2])
    by_tag = _json(cli, *run_paths, "--qrels", qrels_path, "-m", "P@1", "--baseline", "T5_raw")
    assert by_path == by_tag
    assert {r["baseline"] for r in by_tag} == {"T5_raw"} and len(by_tag) == 3


def test_unknown_baseline_is_one_line_exit_1(cli, run_paths, qrels_path):
    result = cli("compare", *run_paths, "--qrels", qrels_path, "--baseline", "nope.run")
    assert result.exit_code == 1
    assert result.stderr.startswith("castregin: error: unknown --baseline 'nope.run'")
    assert len(result.stderr.splitlines()) == 1
    assert result.stdout == ""


def test_tables_mark_best_and_significant_wins(cli, cast2022, tmp_path):
    # On the full data: the slice's runs differ significantly nowhere.
    run_paths = write_reference_runs(cast2022, tmp_path)
    args = [*run_paths, "--qrels", cast2022 / "regin/qrels/question_relevance_all.qrel", "-m", "nDCG@3", "--baseline",
            "T5_raw"]
    rows = _json(cli, *args)
    winners = {r["run"] for r in rows if r["significant"] and r["mean_difference"] > 0}
    assert winners  # bm25 and miniLM beat T5_raw on nDCG@3
    markdown = cli("compare", *args, "--format", "markdown").stdout
    latex = cli("compare", *args, "--format", "latex").stdout
    table = cli("compare", *args).stdout
    for tag in winners:
        line = next(line for line in markdown.splitlines() if line.startswith(f"| {tag} |"))
        assert "<sup>\u2020</sup>" in line
        assert "$^{\\dagger}$" in next(line for line in latex.splitlines() if line.startswith(tag.replace("_", "\\_")))
    assert "| miniLM_bert_sample_mi_run | 205 | **0.2437**<sup>\u2020</sup> |" in markdown  # num_q, nDCG@3
    assert "\\textbf{0.2437}$^{\\dagger}$" in latex and "\\toprule" in latex
    assert "| T5_raw [baseline] | 205 | 0.1472 |" in markdown
    assert {r["direction"] for r in rows} == {"better"}
    assert all((r["direction"] == "better") == (r["significant"] and r["mean_difference"] > 0) for r in rows)
    assert "0.2437\u2020" in table
    tsv = cli("compare", *args, "--format", "tsv").stdout.splitlines()
    assert tsv[0].split("\t") == JSON_KEYS


def test_output_file_and_determinism(cli, run_paths, qrels_path, tmp_path):
    out = tmp_path / "cmp.json"
    args = [*run_paths, "--qrels", qrels_path, "-m", "P@1", "--format", "json"]
    assert cli("compare", *args, "-o", out).exit_code == 0
    first = out.read_bytes()
    assert cli("compare", *args, "-o", out).exit_code == 0
    assert out.read_bytes() == first
    assert cli("compare", *args, "-o", run_paths[0]).exit_code == 1


# --- stage functions on hand-made data -------------------------------------------------------------


def _run(tag, scores):
    return Run(tag, scores, {t: {i: k for k, i in enumerate(items, 1)} for t, items in scores.items()})


QRELS = Qrels({"t1": {"Q1": 2}, "t2": {"Q1": 2}, "t3": {"Q1": 2}, "t4": {"Q1": 2}}, name="q")


@pytest.mark.parametrize("test", ["paired-t", "wilcoxon", "randomization"])
def test_identical_runs_give_p_one_and_statistic_zero(test):
    scores = {t: {"Q1": 1.0, "Q2": 0.5} for t in QRELS.labels}
    results = evaluate([_run("a", scores), _run("b", scores)], QRELS, ["P@1"], per_turn=True)
    row = compare(results, test=test).iloc[0]
    assert (row.statistic, row.p_value, row.p_value_corrected, row.significant) == (0.0, 1.0, 1.0, False)
    assert row.mean_difference == 0.0 and row.effect_size == 0.0 and row.turns == 4


def test_comparison_uses_only_turns_both_runs_have():
    a = _run("a", {"t1": {"Q1": 1.0}, "t2": {"Q1": 1.0}, "t3": {"Q1": 1.0}})
    b = _run("b", {"t2": {"Q2": 1.0}, "t3": {"Q1": 1.0}, "t4": {"Q1": 1.0}})
    results = evaluate([a, b], QRELS, ["P@1"], per_turn=True)
    row = compare(results, baseline="a").iloc[0]
    assert (row.run, row.baseline, row.turns, row.mean_difference) == ("b", "a", 2, -0.5)


def test_no_shared_turn_and_single_turn_are_defined():
    a = _run("a", {"t1": {"Q1": 1.0}})
    b = _run("b", {"t2": {"Q1": 1.0}})
    c = _run("c", {"t1": {"Q2": 1.0}})
    with pytest.warns(CoverageWarning) as warned:
        results = evaluate([a, b, c], QRELS, ["P@1"], per_turn=True)
    assert sorted(str(w.message).split(";")[0] for w in warned) == [
        "run 'a' covers 1 of the 4 turns of qrels 'q'", "run 'b' covers 1 of the 4 turns of qrels 'q'",
        "run 'c' covers 1 of the 4 turns of qrels 'q'",
        ("run 'c': 0.0% of its top 10 items are judged in qrels 'q' (mean over its 1 turns there, under 1%): its "
         "values are about 0 whatever it ranks")]
    frame = compare(results, baseline="a")
    assert frame[["run", "turns", "statistic", "p_value"]].values.tolist() == [["b", 0, 0.0, 1.0],
                                                                               ["c", 1, 0.0, 1.0]]


def test_paired_test_and_effect_size_helpers():
    assert paired_test([], []) == (0.0, 1.0)
    statistic, p = paired_test([1.0, 2.0, 3.0], [0.0, 1.0, 2.0])  # constant non-zero differences
    assert statistic == float("inf") and p == 0.0
    assert cohens_d([1.0, 2.0, 3.0]) == pytest.approx(2.0)
    assert np.isnan(cohens_d([1.0]))


def test_unknown_baseline_in_the_stage_function_is_an_input_error():
    from castregin import InputError
    with pytest.warns(CoverageWarning, match="covers 1 of the 4 turns"):
        results = evaluate([_run("a", {"t1": {"Q1": 1.0}})], QRELS, ["P@1"], per_turn=True)
    with pytest.raises(InputError, match="unknown baseline 'x'"):
        compare(results, baseline="x")
    assert isinstance(compare(results), pd.DataFrame) and compare(results).empty


def test_tukey_hsd_equals_statsmodels_and_is_not_corrected_again():
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    from castregin.evaluation.compare import compare

    rng = np.random.default_rng(7)
    turns = [f"1_{i}" for i in range(40)]
    means = {"a": 0.30, "b": 0.35, "c": 0.50}
    rows = []
    for run, mean in means.items():
        values = np.clip(rng.normal(mean, 0.2, len(turns)), 0, 1)
        rows += [(run, "q", "P@1", turn, float(v)) for turn, v in zip(turns, values, strict=True)]
        rows.append((run, "q", "P@1", "all", float(values.mean())))
    results = pd.DataFrame(rows, columns=["run", "qrels", "measure", "turn", "value"])
    frame = compare(results, test="tukey-hsd", correction="holm")
    oracle = pairwise_tukeyhsd([r[4] for r in rows if r[3] != "all"], [r[0] for r in rows if r[3] != "all"])
    expected = {(str(a), str(b)): p
                for (a, b), p in zip(itertools.combinations(oracle.groupsunique, 2), oracle.pvalues, strict=True)}
    for row in frame.itertuples():
        key = tuple(sorted((row.run, row.baseline)))
        assert row.p_value == pytest.approx(expected[key], abs=2e-3)
        assert row.p_value_corrected == row.p_value  # Tukey's p-values hold for the family already
        assert row.statistic == pytest.approx(row.mean_difference)


# --- effect sizes in every format, --sort, Tukey's HSD on the command line ------------------------------------


def test_json_effect_size_is_cohens_d_of_the_paired_differences(cli, run_paths, qrels_path, oracle):
    rows = _json(cli, *run_paths, "--qrels", qrels_path, *_measures())
    assert len(rows) == 3 * 6  # every pair of four runs, three measures
    for row in rows:
        x, y = _vectors(oracle, row["measure"], row["run"], row["baseline"])
        differences = [a - b for a, b in zip(x, y, strict=True)]
        mean = sum(differences) / len(differences)
        sd = (sum((d - mean) ** 2 for d in differences) / (len(differences) - 1)) ** 0.5
        assert row["effect_size"] == pytest.approx(mean / sd, rel=1e-9)
    csv_rows = cli("compare", *run_paths, "--qrels", qrels_path, *_measures(), "--format", "csv").stdout.splitlines()
    assert [float(line.split(",")[-1]) for line in csv_rows[1:]] == pytest.approx([r["effect_size"] for r in rows])
    table = cli("compare", *run_paths, "--qrels", qrels_path, *_measures()).stdout
    assert "effect size" in table and f"{rows[0]['effect_size']:.4f}" in table


def _board_order(markdown: str) -> list[str]:
    """The runs of a markdown leaderboard, top to bottom (the first table of the output)."""
    board = markdown.split("\n\n", maxsplit=1)[0]
    return [line.split(" | ")[0].lstrip("| ").split(" (")[0] for line in board.splitlines()[2:] if line.startswith("|")]


def test_sort_orders_the_leaderboard_by_a_measures_mean(cli, run_paths, qrels_path, oracle):
    args = [*run_paths, "--qrels", qrels_path, "-m", "P@1", "-m", "nDCG@3", "--format", "markdown"]
    assert _board_order(cli("compare", *args).stdout) == TAGS  # the order given
    for sort, trec in (("nDCG@3", "ndcg_cut_3"), ("P_1", "P_1")):
        means = {tag: np.mean(list(oracle[tag][trec].values())) for tag in TAGS}
        expected = sorted(TAGS, key=lambda tag: -means[tag])
        sorted_output = cli("compare", *args, "--sort", sort).stdout
        assert _board_order(sorted_output) == expected != TAGS
    # The letters stay those of the order given: T5_raw is (c) wherever its row is.
    assert "| T5_raw (c) |" in sorted_output
    result = cli("compare", *args, "--sort", "AP")
    assert result.exit_code == 2 and "--sort" in result.stderr and "not one of the measures" in result.stderr


def test_tukey_hsd_is_offered_on_the_command_line(cli, run_paths, qrels_path):
    assert "tukey-hsd" in cli("compare", "--help").stdout
    rows = _json(cli, *run_paths, "--qrels", qrels_path, "-m", "nDCG@3", "--test", "tukey-hsd")
    assert len(rows) == 6 and all(r["p_value"] == r["p_value_corrected"] for r in rows)
    assert all(r["effect_size"] is not None for r in rows)


def test_the_legends_of_tukey_hsd_name_no_correction(cli, tmp_path):
    # The legend said "holm correction" (the default of --correction) though Tukey's p-values are family-wise and
    # corrected no further (test_tukey_hsd_equals_statsmodels_and_is_not_corrected_again).
    (tmp_path / "q.qrel").write_text("".join(f"t{t} 0 Q{i} {(t + i) % 3}\n" for t in range(6) for i in range(3)))
    for tag, shift in (("a", 0), ("b", 1), ("c", 2)):
        (tmp_path / f"{tag}.run").write_text("".join(f"t{t} Q0 Q{(i + shift + t) % 3} {i + 1} {3 - i} {tag}\n"
                                                     for t in range(6) for i in range(3)))
    runs = [tmp_path / f"{tag}.run" for tag in "abc"]
    table = cli("compare", *runs, "--qrels", tmp_path / "q.qrel", "-m", "P@1", "--test", "tukey-hsd").stdout
    assert "(tukey-hsd, Tukey's family-wise p-values, no further correction, alpha 0.05)" in table
    assert "holm" not in table
    paired = cli("compare", *runs, "--qrels", tmp_path / "q.qrel", "-m", "P@1").stdout
    assert "(paired-t, holm correction, alpha 0.05)" in paired
    assert cli("report", *runs, "--qrels", tmp_path / "q.qrel", "-m", "P@1", "--test", "tukey-hsd", "--ci-samples",
               "10", "--out", tmp_path / "report").exit_code == 0
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "holm" not in page and page.count("Tukey&#39;s family-wise p-values, no further correction") == 2
