"""The inferred measures in ``evaluate``, ``compare``, ``report`` and the API, on a stratified qrels file.

Oracle: NIST's sample_eval.pl, its ``-q`` output on four runs over one stratified sample kept in
tests/cli/data/sample_eval/runs.json.xz (at relevance levels 1 and 2: see tests/cli/sample_eval_oracle.py);
the test statistics of ``compare`` are scipy's on the script's per-turn values; P@10 and nDCG@3 on the same
file are pytrec_eval's on its labels (the fifth column), -1 being "in the pool, not judged". The registry's
walk (tests/evaluation/test_registry.py) checks each measure on 168 random samples more.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest
import pytrec_eval
from scipy import stats

from castregin import api
from castregin.errors import InputError
from castregin.evaluation import small as small_module
from castregin.formats.strata import parse_stratified_qrels, read_stratified_qrels

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from sample_eval_oracle import RUN_NAMES, kept_runs_outputs, runs_case

#: castregin's names and sample_eval.pl's of the values it prints per turn.
PER_TURN = {"xinfAP": "infAP", "infNDCG": "infNDCG", "iP@10": "iP10", "iP@1000": "iP1000",
            "inum_rel_ret": "inum_rel_ret", "inum_rel": "inum_rel"}
#: ... and of those it prints over the turns only.
OVER_TURNS = {"infIPrec@0": "iprec@rec0.00", "infIPrec@0.5": "iprec@rec0.50", "infIPrec@1": "iprec@rec1.00"}


def printed(level: int, run: str) -> dict[tuple[str, str], str]:
    """``{(name, turn or "all"): value as printed}`` of sample_eval.pl -q on ``run`` at ``level``."""
    text = kept_runs_outputs()[str(level)][run]
    rows = ([field for field in line.split("\t") if field] for line in text.splitlines())
    return {(fields[0], fields[1]): fields[2].strip() for fields in rows}


@pytest.fixture
def files(tmp_path):
    """The stratified qrels and the four runs as files."""
    qrels_text, runs = runs_case()
    qrels = tmp_path / "strata.qrel"
    qrels.write_text(qrels_text)
    paths = []
    for name, text in runs.items():
        paths.append(tmp_path / f"{name}.run")
        paths[-1].write_text(text)
    return qrels, paths


def _turn_values(rows: list[dict], run: str, measure: str) -> dict[str, float]:
    return {row["turn"]: row["value"] for row in rows if row["run"] == run and row["measure"] == measure}


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("streamed", [False, True])
def test_evaluate_gives_sample_evals_numbers(files, cli, monkeypatch, level, streamed):
    qrels, runs = files
    if streamed:
        monkeypatch.setattr(small_module, "SMALL_RUN_BYTES", 0)  # the dict path of larger files
    names = [*PER_TURN, *OVER_TURNS]
    result = cli("evaluate", *runs, "--qrels", qrels, *[arg for name in names for arg in ("-m", name)], "-q",
                 "--rel-level", level, "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    compared = 0
    for run in RUN_NAMES:
        for name, shown in {**PER_TURN, **OVER_TURNS}.items():
            # infNDCG takes every label above 0 as its gain at any level: the script's numbers on the labels given.
            wanted = printed(1 if name == "infNDCG" else level, run)
            values = _turn_values(rows, run, name)
            assert len(values) == 15  # all, and every turn
            for turn, value in values.items():
                if name in OVER_TURNS and turn != "all":
                    continue  # the script prints the interpolated precision over the turns only
                assert f"{value:.4f}" == wanted[shown, turn], (run, name, turn)
                compared += 1
    assert compared == 4 * (6 * 15 + 3)


def test_the_level_changes_what_is_relevant_but_not_infndcgs_gains():
    one, two = printed(1, "strong"), printed(2, "strong")
    assert one["infAP", "all"] != two["infAP", "all"] and one["inum_rel", "all"] != two["inum_rel", "all"]
    assert one["infNDCG", "all"] != two["infNDCG", "all"]  # the script at level 2 lost the gains of the 1s...
    qrels_text, runs = runs_case()
    qrels = parse_stratified_qrels(qrels_text.encode(), "strata.qrel", "strata")
    values = {level: api.calc_aggregate(["infNDCG", "xinfAP"], qrels, _scores(runs["strong"]), rel_level=level)
              for level in (1, 2)}
    assert values[1]["infNDCG"] == values[2]["infNDCG"]  # ...castregin's infNDCG keeps them at any level
    assert f"{values[1]['infNDCG']:.4f}" == one["infNDCG", "all"]
    assert f"{values[2]['xinfAP']:.4f}" == two["infAP", "all"]


def _scores(run_text: str) -> dict[str, dict[str, float]]:
    scores: dict[str, dict[str, float]] = {}
    for line in run_text.splitlines():
        turn, _, item, _, score, _ = line.split()
        scores.setdefault(turn, {})[item] = float(score)
    return scores


@pytest.mark.parametrize("streamed", [False, True])
def test_other_measures_read_the_labels_of_a_stratified_file(files, cli, monkeypatch, streamed):
    """P@10 and nDCG@3 read the fifth column (the label; -1: in the pool, unjudged), as pytrec_eval reads the qrels
    without the stratum: the streaming engine (all its measures) and the plain path."""
    qrels, runs = files
    if streamed:
        monkeypatch.setattr(small_module, "SMALL_RUN_BYTES", 0)
    qrels_text, run_texts = runs_case()
    labels: dict[str, dict[str, int]] = {}
    for line in qrels_text.splitlines():
        turn, _, item, _, label = line.split()
        labels.setdefault(turn, {})[item] = int(label)
    result = cli("evaluate", *runs, "--qrels", qrels, "-m", "P@10", "-m", "nDCG@3", "-q", "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    evaluator = pytrec_eval.RelevanceEvaluator(labels, {"P_10", "ndcg_cut_3"}, relevance_level=2)
    for run in RUN_NAMES:
        expected = evaluator.evaluate(_scores(run_texts[run]))
        for name, oracle_name in (("P@10", "P_10"), ("nDCG@3", "ndcg_cut_3")):
            got = _turn_values(rows, run, name)
            assert got.pop("all") == pytest.approx(math.fsum(v[oracle_name] for v in expected.values()) / 14)
            assert got == pytest.approx({turn: values[oracle_name] for turn, values in expected.items()}, abs=1e-12)


def test_turns_kept_keep_their_strata(files, cli, tmp_path):
    qrels, runs = files
    (tmp_path / "turns.txt").write_text("130_1-1\n131_2-2\n")
    result = cli("evaluate", runs[0], "--qrels", qrels, "-m", "xinfAP", "--turns", tmp_path / "turns.txt", "-q",
                 "--rel-level", "1", "--format", "json")
    assert result.exit_code == 0, result.stderr
    wanted = printed(1, "strong")
    got = _turn_values(json.loads(result.stdout), "strong", "xinfAP")
    assert {turn: f"{value:.4f}" for turn, value in got.items() if turn != "all"} == {
        turn: wanted["infAP", turn] for turn in ("130_1-1", "131_2-2")}


def test_compare_tests_the_per_turn_estimates(files, cli):
    qrels, runs = files
    result = cli("compare", *runs, "--qrels", qrels, "-m", "xinfAP", "-m", "iP@10", "--rel-level", "1",
                 "--baseline", runs[2], "--correction", "none", "--format", "json")
    assert result.exit_code == 0, result.stderr
    comparisons = json.loads(result.stdout)
    assert len(comparisons) == 6
    for row in comparisons:
        shown = PER_TURN[row["measure"]]
        run, baseline = printed(1, row["run"]), printed(1, row["baseline"])
        turns = sorted(turn for name, turn in run if name == shown and turn != "all")
        x = [float(run[shown, turn]) for turn in turns]
        y = [float(baseline[shown, turn]) for turn in turns]
        test = stats.ttest_rel(x, y)
        assert row["turns"] == len(turns) == 14
        # The script's values have four decimals: the tests on them are as close as that allows.
        assert row["mean_difference"] == pytest.approx(math.fsum(x) / 14 - math.fsum(y) / 14, abs=1e-4)
        assert row["statistic"] == pytest.approx(test.statistic, rel=2e-3)
        assert row["p_value"] == pytest.approx(test.pvalue, rel=2e-3, abs=1e-5)
    assert any(row["significant"] for row in comparisons) and not all(row["significant"] for row in comparisons)


def test_report_shows_them(files, cli, tmp_path):
    qrels, runs = files
    out = tmp_path / "report"
    result = cli("report", *runs, "--qrels", qrels, "--out", out, "-m", "xinfAP", "-m", "infNDCG",
                 "--plot-measure", "xinfAP", "--rel-level", "1", "--ci-samples", "10", "--permutations", "100")
    assert result.exit_code == 0, result.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    board = page[page.index('id="leaderboard"'):page.index('id="significance"')]
    assert "Sorted by xinfAP" in board
    for run in RUN_NAMES:
        wanted = printed(1, run)
        row = re.search(rf"<tr><td[^>]*>{run}(?: \([a-z]\))?</td>(.*?)</tr>", board)[1]
        num_q, xinf_ap, inf_ndcg = map(float, re.findall(r"<td class=\"num\">(?:<strong>)?([0-9.]+)", row)[:3])
        assert num_q == 14
        assert xinf_ap == pytest.approx(float(wanted["infAP", "all"]), abs=6e-4), run
        assert inf_ndcg == pytest.approx(float(wanted["infNDCG", "all"]), abs=6e-4), run
    assert "xinfAP per turn" in page


def test_python_api(files):
    qrels, runs = files
    wanted = printed(2, "middle")
    # A path, the stratified qrels read, or a sample's qrels: each carries its strata.
    for given in (qrels, read_stratified_qrels(qrels), api.as_qrels(qrels)):
        values = api.calc_aggregate(["xinfAP", "iP@10", "infIPrec@0.5", "inum_rel"], given, runs[1])
        assert {name: f"{value:.4f}" for name, value in values.items()} == {
            "xinfAP": wanted["infAP", "all"], "iP@10": wanted["iP10", "all"],
            "infIPrec@0.5": wanted["iprec@rec0.50", "all"], "inum_rel": wanted["inum_rel", "all"]}
    per_turn = {m.query_id: m.value for m in api.iter_calc("xinfAP", qrels, runs[1])}
    assert {turn: f"{value:.4f}" for turn, value in per_turn.items()} == {
        turn: value for (name, turn), value in wanted.items() if name == "infAP" and turn != "all"}
    frame = api.evaluate(runs, qrels, ["infNDCG", "P@10"], rel_level=1)
    shown = frame[frame["measure"] == "infNDCG"].set_index("run")["value"]
    assert {run: f"{shown[run]:.4f}" for run in RUN_NAMES} == {run: printed(1, run)["infNDCG", "all"]
                                                                for run in RUN_NAMES}


def test_refused_on_qrels_without_strata(files, cli, tmp_path):
    _, runs = files
    plain = tmp_path / "plain.qrel"
    plain.write_text("130_1-1 0 d1 2\n")
    result = cli("evaluate", runs[0], "--qrels", plain, "-m", "xinfAP", "-m", "P@10", "-m", "iP@10")
    assert result.exit_code == 1
    assert result.stderr == (f"castregin: error: {plain}: xinfAP, iP@10 read stratified qrels (turn 0 item stratum "
                             "label, -1 for a pooled item not sampled, as `castregin pool --sample --strata-out` "
                             "writes them) and these have no strata; give such a file\n")
    with pytest.raises(InputError, match=r"^qrels: infNDCG read stratified qrels"):
        api.calc_aggregate("infNDCG", {"t": {"a": 1}}, {"t": {"a": 1.0}})


def test_a_stratified_file_is_refused_where_five_columns_are_not_qrels(files, cli, tmp_path):
    qrels, runs = files
    result = cli("trec_eval", qrels, runs[0])  # trec_eval reads four fields a line ("Malformed line")
    assert result.exit_code == 1
    assert result.stderr == (f"castregin: error: {qrels}:1: expected 4 columns (turn 0 item label), found 5; a "
                             "stratified qrels (turn 0 item stratum label) is read by evaluate, compare, report, "
                             "analyze and sample_eval only\n")
    result = cli("qrels", "stats", qrels)
    assert result.exit_code == 1 and "found 5; a stratified qrels" in result.stderr
    mixed = tmp_path / "mixed.qrel"
    mixed.write_text("t 0 a 1 2\nt 0 b 1\n")
    result = cli("evaluate", runs[0], "--qrels", mixed, "-m", "xinfAP")
    assert result.exit_code == 1
    assert result.stderr == (f"castregin: error: {mixed}:2: expected 5 columns (turn 0 item stratum label, as the "
                             "first line), found 4\n")
    mixed.write_text("t 0 a 2\nt 0 b 1 2\n")
    result = cli("evaluate", runs[0], "--qrels", mixed, "-m", "P@1")
    assert result.exit_code == 1
    assert result.stderr.endswith(":2: expected 4 columns (turn 0 item label), found 5; the first line has 4 (a "
                                  "stratified qrels, turn 0 item stratum label, has 5 on every line)\n")


def test_a_turn_nobody_sampled(cli, tmp_path):
    """Turn 1's pool is all -1 (a stratum nobody sampled counts a third of its items relevant in iP@k): values are
    numbers (floats, printed as such). Oracle: sample_eval.pl -q on these files, its lines copied here."""
    qrels, run = tmp_path / "strata.qrel", tmp_path / "r.run"
    qrels.write_text("1 0 d1 1 -1\n1 0 d2 2 -1\n2 0 d1 1 1\n")
    run.write_text("1 Q0 d1 1 3 r\n1 Q0 d2 2 2 r\n1 Q0 d3 3 1 r\n2 Q0 d1 1 1 r\n")
    script = {("infAP", "1"): "0.0000", ("infNDCG", "1"): "0.0000", ("iP10", "1"): "0.0667",
              ("inum_rel_ret", "1"): "0.6667", ("inum_rel", "1"): "0.0000", ("infAP", "2"): "1.0000",
              ("infNDCG", "2"): "1.0000", ("iP10", "2"): "0.1000", ("inum_rel_ret", "2"): "1.0000",
              ("inum_rel", "2"): "1.0000", ("infAP", "all"): "0.5000", ("infNDCG", "all"): "0.5000",
              ("iP10", "all"): "0.0833", ("inum_rel_ret", "all"): "1.6666", ("inum_rel", "all"): "1.0000"}
    result = cli("evaluate", run, "--qrels", qrels, *[arg for name in PER_TURN if name != "iP@1000"
                                                      for arg in ("-m", name)],
                 "--rel-level", "1", "-q", "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    got = {(PER_TURN[row["measure"]], row["turn"]): row["value"] for row in rows if row["measure"] in PER_TURN}
    assert all(isinstance(value, float) for value in got.values())
    assert {key: f"{value:.4f}" for key, value in got.items()} == script
