"""Small outputs compared whole: what a person sees is what the README promises, to the last character."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.qrel").write_text("t1 0 Q1 2\nt1 0 Q2 0\nt2 0 Q5 3\nt2 0 Q1 0\n")
    (tmp_path / "a.run").write_text("t1 Q0 Q1 1 2.0 alpha\nt1 Q0 Q2 2 1.0 alpha\nt2 Q0 Q5 1 1.0 alpha\n")
    (tmp_path / "b.run").write_text("t1 Q0 Q2 1 2.0 beta\nt2 Q0 Q1 1 1.0 beta\n")
    return tmp_path


def test_evaluate_table_with_counts_as_integers(cli, here):
    assert cli("evaluate", "a.run", "b.run", "--qrels", "q.qrel", "-m", "P@1", "-m", "map", "-m", "num_ret").stdout == (
        "run    num_q     P@1     map  num_ret\n"
        "-----  -----  ------  ------  -------\n"
        "alpha      2  1.0000  1.0000        3\n"
        "beta       2  0.0000  0.0000        2\n")


def test_evaluate_markdown_bolds_the_best_but_not_the_counts(cli, here):
    assert cli("evaluate", "a.run", "b.run", "--qrels", "q.qrel", "-m", "P@1", "--format", "markdown").stdout == (
        "| run | num_q | P@1 |\n"
        "| --- | ---: | ---: |\n"
        "| alpha | 2 | **1.0000** |\n"
        "| beta | 2 | 0.0000 |\n")


def test_evaluate_per_turn_leaves_num_q_empty_on_turns(cli, here):
    assert cli("evaluate", "a.run", "--qrels", "q.qrel", "-m", "P@1", "--per-turn").stdout == (
        "run    turn  num_q     P@1\n"
        "-----  ----  -----  ------\n"
        "alpha  all       2  1.0000\n"
        "alpha  t1        -  1.0000\n"
        "alpha  t2        -  1.0000\n")


def test_evaluate_json(cli, here):
    assert json.loads(cli("evaluate", "b.run", "--qrels", "q.qrel", "-m", "RR", "--format", "json").stdout) == [
        {"run": "beta", "qrels": "q", "measure": "num_q", "turn": "all", "value": 2.0},
        {"run": "beta", "qrels": "q", "measure": "RR", "turn": "all", "value": 0.0},
    ]


def test_qrels_stats(cli, here):
    assert cli("qrels", "stats", "q.qrel").stdout == (
        "qrels  turns  topics  items      items/turn  turns with label>=2  label 0  label 2  label 3\n"
        "-----  -----  ------  -----  --------------  -------------------  -------  -------  -------\n"
        "q          2       2      4  2-2 (mean 2.0)                    2        2        1        1\n")


def test_pool(cli, here):
    assert cli("pool", "a.run", "b.run").stdout == (
        "t1\tQ0\tQ1\t1\t0.0\tdummytag\n"
        "t1\tQ0\tQ2\t1\t0.0\tdummytag\n"
        "t2\tQ0\tQ1\t1\t0.0\tdummytag\n"
        "t2\tQ0\tQ5\t1\t0.0\tdummytag\n")


def test_compare_table(cli, here):
    assert cli("compare", "a.run", "b.run", "--qrels", "q.qrel", "-m", "P@1").stdout == (
        "run        num_q      P@1\n"
        "---------  -----  -------\n"
        "alpha (a)      2  1.0000b\n"
        "beta (b)       2   0.0000\n"
        "\n"
        "letters: significantly better than the run with that letter (paired-t, holm correction, alpha 0.05); "
        "bold: best of the column\n"
        "\n"
        "qrels  measure  run   baseline  turns  mean diff  statistic       p  p corrected  effect size  significant\n"
        "-----  -------  ----  --------  -----  ---------  ---------  ------  -----------  -----------  -----------\n"
        "q      P@1      beta  alpha         2    -1.0000       -inf  0.0000       0.0000          nan  worse\n")


def test_other_warnings_are_passed_on_once_even_inside_a_recording_context():
    """A library's DeprecationWarning inside a command used to be replayed into the list being replayed
    (an endless loop under pytest, which records warnings): it is shown once, after the command."""
    import warnings

    from castregin.cli import warnings_as_lines
    from castregin.errors import CoverageWarning

    with warnings.catch_warnings(record=True) as outer:
        warnings.simplefilter("always")
        with warnings_as_lines():
            warnings.warn("old API", DeprecationWarning, stacklevel=1)
            warnings.warn(CoverageWarning("few turns"), stacklevel=1)
    assert [str(w.message) for w in outer] == ["old API"]
