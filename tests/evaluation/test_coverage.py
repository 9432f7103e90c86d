"""Numbers that would look like results and are not get a warning; usage that cannot mean anything is refused."""

from __future__ import annotations

import json
import math
import sys
import threading

import numpy as np
import pytest

from castregin import Qrels, Run
from castregin.errors import CoverageWarning
from castregin.evaluation.evaluate import evaluate


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "q.qrel"
    qrels.write_text("".join(f"132_1-{t} 0 Q{i} {i % 3}\n" for t in range(1, 11) for i in range(1, 4)))
    dashed = tmp_path / "dashed.run"  # the turn ids written 132-1-1: nothing matches
    dashed.write_text("".join(f"132-1-{t} Q0 Q{i} {i} {1 / i} d\n" for t in range(1, 11) for i in range(1, 4)))
    few = tmp_path / "few.run"  # 3 of the 10 turns
    few.write_text("".join(f"132_1-{t} Q0 Q2 1 1.0 few\n" for t in range(1, 4)))
    full = tmp_path / "full.run"
    full.write_text("".join(f"132_1-{t} Q0 Q2 1 1.0 full\n" for t in range(1, 11)))
    return qrels, dashed, few, full


def test_a_run_sharing_no_turn_is_a_warning_and_num_q_zero(cli, files):
    qrels, dashed, _, _ = files
    result = cli("evaluate", dashed, "--qrels", qrels, "-m", "P@1")
    assert result.exit_code == 0
    assert result.stderr == ("castregin: warning: run 'd' shares no turn with qrels 'q' (10 turns): every value is 0; "
                             "check the turn ids (the qrels' look like '132_1-1')\n")
    assert result.stdout.splitlines()[2].split() == ["d", "0", "0.0000"]


def test_a_run_covering_few_turns_is_a_warning_naming_the_count(cli, files):
    qrels, _, few, full = files
    result = cli("evaluate", few, full, "--qrels", qrels, "-m", "P@1", "--format", "json")
    assert result.stderr == ("castregin: warning: run 'few' covers 3 of the 10 turns of qrels 'q'; means are over "
                             "those 3 turns only\n")
    rows = json.loads(result.stdout)
    assert [(r["run"], r["value"]) for r in rows if r["measure"] == "num_q"] == [("few", 3.0), ("full", 10.0)]
    complete = cli("evaluate", few, "--qrels", qrels, "-m", "P@1", "--complete")
    assert "the other 7 count 0 (complete)" in complete.stderr
    assert complete.stdout.splitlines()[2].split()[1] == "10"


def test_a_turn_list_keeping_none_of_the_qrels_turns_is_a_warning(cli, files, tmp_path):
    qrels, _, _, full = files
    turns = tmp_path / "turns.txt"
    turns.write_text("999_1-1\n")
    result = cli("evaluate", full, "--qrels", qrels, "--turns", turns, "-m", "P@1")
    assert result.exit_code == 0
    assert result.stderr == ("castregin: warning: qrels 'q' keeps none of its 10 turns after the turn list; "
                             "every value is 0\n")


def test_the_library_warns_instead_of_printing(capsys):
    qrels = Qrels({"t1": {"Q1": 2}, "t2": {"Q1": 2}}, name="q")
    run = Run("r", {"x": {"Q1": 1.0}}, {"x": {"Q1": 1}})
    with pytest.warns(CoverageWarning, match="shares no turn"):
        evaluate(run, qrels, ["P@1"])
    assert capsys.readouterr() == ("", "")


def test_two_qrels_with_one_name_are_an_error(cli, files, tmp_path):
    qrels, _, _, full = files
    other = tmp_path / "other"
    other.mkdir()
    (other / "q.qrel").write_text(qrels.read_text())
    for specs in ([qrels, other / "q.qrel"], [f"a={qrels}", f"a={other / 'q.qrel'}"]):
        result = cli("evaluate", full, *[a for s in specs for a in ("--qrels", s)])
        assert result.exit_code == 1 and result.stdout == ""
        assert result.stderr.startswith("castregin: error: two qrels are named") and result.stderr.count("\n") == 1


def test_compare_needs_two_different_runs_a_valid_alpha_and_seed(cli, files):
    qrels, _, few, full = files
    same = str(full).replace("/full.run", "/./full.run")
    for args in ([full], [full, same], [full, full]):
        result = cli("compare", *args, "--qrels", qrels)
        assert result.exit_code == 2 and "at least 2 different runs" in result.stderr
    for option in (["--alpha", "0"], ["--alpha", "1"], ["--alpha", "1.5"], ["--seed", "-1"]):
        result = cli("compare", few, full, "--qrels", qrels, *option)
        assert result.exit_code == 2 and "Traceback" not in result.stderr, option
    result = cli("compare", few, full, "--qrels", qrels, "-m", "gm_map")
    assert result.exit_code == 2 and "gm_map has no per-turn values" in result.stderr


def test_compare_says_in_which_direction(tmp_path, cli):
    qrels = tmp_path / "q.qrel"
    qrels.write_text("".join(f"t{t} 0 Q1 2\n" for t in range(30)))
    good = tmp_path / "good.run"
    good.write_text("".join(f"t{t} Q0 Q1 1 1.0 good\n" for t in range(30)))
    bad = tmp_path / "bad.run"
    bad.write_text("".join(f"t{t} Q0 Q{2 if t % 10 else 1} 1 1.0 bad\n" for t in range(30)))
    rows = json.loads(cli("compare", good, bad, "--qrels", qrels, "-m", "P@1", "--baseline", good,
                          "--format", "json").stdout)
    assert [(r["run"], r["significant"], r["direction"]) for r in rows] == [("bad", True, "worse")]
    table = cli("compare", good, bad, "--qrels", qrels, "-m", "P@1", "--baseline", "bad").stdout
    assert table.rstrip().splitlines()[-1].split()[-1] == "better"


def test_markdown_and_latex_escape_names(tmp_path, cli):
    qrels = tmp_path / "q.qrel"
    qrels.write_text("t1 0 Q1 2\n")
    run = tmp_path / "r.run"
    run.write_text("t1 Q0 Q1 1 1.0 a|b*c`d\n")
    markdown = cli("evaluate", run, "--qrels", qrels, "-m", "P@1", "--format", "markdown").stdout
    assert markdown.splitlines()[2] == "| a\\|b\\*c\\`d | 1 | **1.0000** |"
    assert all(line.count("|") - line.count("\\|") == 4 for line in markdown.splitlines())
    latex = cli("evaluate", run, "--qrels", qrels, "-m", "P@1", "--format", "latex").stdout
    assert "a|b*c`d & 1 & \\textbf{1.0000}" in latex


def test_log2_table_is_safe_under_forced_thread_switches():
    from castregin.evaluation import engine

    # The C library's log2, as the table promises (numpy's own log2 differs by an ulp at 1621 and 3242).
    expected = np.array([math.log2(i) if i else 0.0 for i in range(5000)])
    failures = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        def work(seed):
            rng = np.random.default_rng(seed)
            for n in rng.integers(1, 5000, 200):
                table = engine.log2_table(int(n))
                if len(table) != n or not np.array_equal(table, expected[:n]):
                    failures.append(n)
        threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
    with pytest.raises(ValueError, match="read-only"):
        engine.log2_table(10)[3] = 0.0  # read-only: nobody can corrupt what others read
