"""``castregin sample_eval`` prints what NIST's sample_eval.pl prints, byte for byte.

Oracle: the script's outputs kept in tests/cli/data/sample_eval (see sample_eval_oracle.py for its source
and how they were made), and the live script when ``$CASTREGIN_SAMPLE_EVAL`` names it.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sample_eval_oracle import blocks, cases, kept_outputs, live_command, run_original

CASES = cases()
KEPT = kept_outputs()


@pytest.mark.parametrize("name", sorted(CASES))
def test_drop_in_equals_the_original(name, cli, tmp_path):
    qrels_text, run_text, options = CASES[name]
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    result = cli("sample_eval", *options, qrels, run)
    assert result.exit_code == 0, result.stderr
    expected = [KEPT[name]] + ([run_original(qrels, run, options)] if live_command() else [])
    for wanted in expected:
        if name.startswith("cast"):
            # Perl prints topics that are equal as numbers (132_1-1, 132_1-2) in its hash's order.
            assert blocks(result.stdout) == blocks(wanted)
        else:
            assert result.stdout == wanted


def test_the_cases_cover_the_quirks():
    """The cases hold what they are meant to exercise (else a test could not fail there)."""
    qrels_lines = [line.split() for q, _, _ in CASES.values() for line in q.splitlines()]
    run_lines = [line.split() for _, r, _ in CASES.values() for line in r.splitlines()]
    assert any(topic.startswith("0") for topic, *_ in run_lines)  # leading zeros, stripped from the run only
    assert any(int(label) >= 10 for *_, label in qrels_lines)  # grades sorted as text in the ideal DCG
    by_stratum = Counter((topic, stratum, label == "-1") for topic, _, _, stratum, label in qrels_lines)
    unsampled_strata = {(t, s) for t, s, none in by_stratum if none} - {(t, s) for t, s, none in by_stratum if not none}
    assert unsampled_strata  # strata nobody sampled
    per_topic = Counter(topic for topic, *_ in run_lines)
    assert max(per_topic.values()) > 1000  # deeper than sample_eval's 1000 ranks
    outputs = "".join(KEPT.values())
    assert "num_ret\t\tall\t     1000\n" in outputs or any(
        line.startswith("num_ret\t\tall") and int(line.split()[-1]) >= 1000 for line in outputs.splitlines())
    assert sum("-q" in options for *_, options in CASES.values()) >= 40


def _write(tmp_path, qrels_text, run_text):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    return qrels, run


def test_output_option_writes_the_same_text(cli, tmp_path):
    qrels_text, run_text, options = CASES["sample1"]
    qrels, run = _write(tmp_path, qrels_text, run_text)
    out = tmp_path / "out.txt"
    result = cli("sample_eval", *options, qrels, run, "--output", out)
    assert result.exit_code == 0, result.stderr
    assert out.read_text() == KEPT["sample1"]


@pytest.mark.parametrize("qrels_text, run_text, message", [
    ("1 0 d1 1\n", "1 Q0 d1 1 1 r\n", "q:1: expected 5 columns (turn 0 item stratum label), found 4; plain qrels"),
    ("1 0 d1 1 x\n", "1 Q0 d1 1 1 r\n", "q:1: label 'x' is not an integer"),
    ("1 0 d1 1 1\n1 0 d1 2 0\n", "1 Q0 d1 1 1 r\n", "q:2: item d1 is listed twice for turn 1"),
    ("2 0 d1 1 1\n", "1 Q0 d1 1 1 r\n", "the run and the qrels share no topic"),
    ("1 0 d1 1 1\n", "01 Q0 d1 1 1 r\n1 Q0 d1 1 2 r\n", "item d1 is ranked for turn 1 and for another spelling of 1"),
])
def test_what_the_script_would_misread_is_one_line(cli, tmp_path, qrels_text, run_text, message):
    qrels, run = _write(tmp_path, qrels_text, run_text)
    result = cli("sample_eval", qrels, run)
    assert result.exit_code == 1
    assert message in result.stderr and result.stderr.count("\n") == 1 and result.stdout == ""


@pytest.mark.parametrize("args", [["q"], ["-x", "q", "r"], ["q", "r", "s"], ["--output"]])
def test_usage_errors(cli, args, tmp_path):
    result = cli("sample_eval", *args)
    assert result.exit_code == 2


def test_zero_topic_of_the_run_loses_its_zeros(cli, tmp_path):
    """sample_eval.pl strips every leading 0 of a run's topic: '0' becomes '' and matches no qrels topic."""
    qrels, run = _write(tmp_path, "0 0 d1 1 1\n1 0 d1 1 1\n", "0 Q0 d1 1 1 r\n1 Q0 d1 1 1 r\n")
    result = cli("sample_eval", "-q", qrels, run)
    assert result.exit_code == 0, result.stderr
    assert "infAP\t\t1\t\t1.0000\n" in result.stdout and "\t0\t" not in result.stdout
    # inum_rel sums every qrels topic, evaluated or not: 2 relevant items in all.
    assert "inum_rel\tall\t        2.0000\n" in result.stdout


def test_topics_are_ordered_as_perl_reads_them(cli, tmp_path):
    """sample_eval.pl sorts topics by Perl's numeric value, which reads the ASCII digits only: topic '\u0662'
    (Arabic-Indic two) is 0 to it and comes before 1; castregin read it as 2, between 1 and 3. The expected
    output is sample_eval.pl's (the script named in sample_eval_oracle.py, perl 5.36) on these two files."""
    qrels, run = _write(tmp_path, "1 0 d1 1 1\n1 0 d2 1 0\n\u0662 0 d1 1 1\n3 0 d1 1 1\n",
                        "1 Q0 d1 1 2 r\n\u0662 Q0 d1 1 2 r\n3 Q0 d1 1 2 r\n")
    result = cli("sample_eval", "-q", qrels, run)
    assert result.exit_code == 0, result.stderr
    kept = (Path(__file__).parent / "data" / "sample_eval" / "non_ascii_topic.out").read_text(encoding="utf-8")
    assert result.stdout == kept
    if live_command():
        assert result.stdout == run_original(qrels, run, ["-q"])
