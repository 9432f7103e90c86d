"""compare, analyze and report on per-turn scores computed elsewhere (--scores): nugget scores of iKAT 2024's
human assignments (tests/nuggets/data, CONE-RAG), tested with scipy on the same per-turn values."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from scipy import stats

from castregin.errors import InputError, InputWarning
from castregin.formats.nuggets import read_assignment_files
from castregin.formats.scores import read_scores
from castregin.nuggets.scores import score_assignments
from castregin.render.tables import render_rows

DATA = Path(__file__).resolve().parent / "data"
HUMAN = sorted((DATA / "cone_rag_human").glob("*.jsonl"))


@pytest.fixture(scope="module")
def rows():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        return score_assignments(read_assignment_files(HUMAN), "human", per_turn=True)


@pytest.fixture(scope="module", params=["tsv", "csv", "json"])
def table(rows, request, tmp_path_factory):
    """nuggets score -q's table in each machine format."""
    path = tmp_path_factory.mktemp("scores") / f"human.{request.param}"
    path.write_text(render_rows(rows, request.param))
    return path


def _per_turn(rows, run, measure):
    return {turn: value for r, _, m, turn, value in rows if r == run and m == measure and turn != "all"}


def test_a_table_reads_back_as_the_rows_written(rows, table):
    assert read_scores([table]) == rows


@pytest.mark.parametrize("test", ["paired-t", "wilcoxon"])
def test_compare_on_scores_is_scipys_test_on_the_same_values(cli, rows, table, test):
    out = json.loads(cli("compare", "--scores", table, "--baseline", "infos-2", "-m", "all_score",
                         "--test", test, "--correction", "none", "--format", "json").stdout)
    base = _per_turn(rows, "infos-2", "all_score")
    assert {r["run"] for r in out} == {"iires-1", "ksu-1", "nii-1", "rali-3", "uva-3"}
    for r in out:
        ours = _per_turn(rows, r["run"], "all_score")
        turns = sorted(set(ours) & set(base))
        x, y = [ours[t] for t in turns], [base[t] for t in turns]
        oracle = stats.ttest_rel(x, y) if test == "paired-t" else stats.wilcoxon(x, y)
        assert r["turns"] == len(turns)
        assert r["p_value"] == pytest.approx(oracle.pvalue, rel=1e-12)
        assert r["statistic"] == pytest.approx(oracle.statistic, rel=1e-12)


def test_correlation_on_scores_is_scipys_kendall_tau_on_the_means(cli, rows, table):
    out = json.loads(cli("analyze", "correlation", "--scores", table, "-m", "all_score", "-m", "nugget_recall",
                         "--format", "json").stdout)
    runs = sorted({r[0] for r in rows})
    mean = {(r, m): v for r, _, m, t, v in rows if t == "all"}
    (row,) = out
    oracle = stats.kendalltau([mean[r, "all_score"] for r in runs], [mean[r, "nugget_recall"] for r in runs])
    assert row["kendall_tau"] == pytest.approx(oracle.statistic, rel=1e-12)
    assert (row["measure_a"], row["measure_b"], row["runs"]) == ("all_score", "nugget_recall", 6)


def test_bootstrap_on_scores_resamples_the_same_turns(cli, rows, table):
    out = json.loads(cli("analyze", "bootstrap", "--scores", table, "-m", "all_score", "--seed", "1",
                         "--format", "json").stdout)
    for r in out:
        values = _per_turn(rows, r["run"], "all_score")
        assert r["turns"] == len(values)
        assert r["mean"] == next(v for run, _, m, t, v in rows if (run, m, t) == (r["run"], "all_score", "all"))
        assert min(values.values()) <= r["low"] <= r["mean"] <= r["high"] <= max(values.values())


def test_report_on_two_sources(cli, rows, tmp_path):
    first, second = tmp_path / "human.tsv", tmp_path / "strict.json"
    first.write_text(render_rows(rows, "tsv"))
    second.write_text(render_rows([(r, "strict", m, t, v) for r, _, m, t, v in rows], "json"))
    result = cli("report", "--scores", first, "--scores", second, "--plot-measure", "all_score",
                 "--correlation", "--out", tmp_path / "report")
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "report/index.html").read_text()
    assert "Sources: human, strict" in page and "judged@" not in page and 'id="qrels"' not in page
    assert "A = human, B = strict" in page  # the two sources' ranking agreement
    assert "0.1296" in page  # nii-1's all_score on the leaderboard


@pytest.mark.parametrize("args", [
    ["compare"], ["compare", "a.run", "--qrels", "q", "--scores", "s.tsv"], ["analyze", "bootstrap", "a.run"]])
def test_runs_or_scores_not_both_nor_neither(cli, args):
    result = cli(*args)
    assert result.exit_code == 2


@pytest.mark.parametrize(("text", "message"), [
    ("run\tqrels\tmeasure\tturn\tvalue\nbm25\tq\tP@1\t1_1\thigh\n", "s.tsv:2: value: expected a number, got 'high'"),
    ("run\tmeasure\tvalue\n", "s.tsv:1: the header has no column 'turn'"),
    ("run,measure,turn,value\nbm25,P@1,1_1,1\nbm25,P@1,1_1,0\n", "s.tsv:3: run 'bm25', 's', P@1 on turn 1_1 is also"),
    ('[{"run": "bm25", "measure": "P@1", "turn": "1_1"}]', "s.tsv: [0]: missing the key \"value\""),
])
def test_bad_score_tables_are_one_line(tmp_path, text, message):
    path = tmp_path / "s.tsv"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_scores([path])
    assert str(caught.value).startswith(str(tmp_path / message))
