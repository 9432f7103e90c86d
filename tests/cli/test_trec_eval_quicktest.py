"""trec_eval 9.0.8's own test suite passes through `castregin trec_eval`, byte for byte.

The eleven commands of the `quicktest` target of trec_eval's Makefile (usnistgov/trec_eval, tag
trec_eval-9.0.8), with its inputs and expected outputs kept in tests/cli/data/trec_eval_quicktest
(see the README there). Where the trec_eval binary is at hand, the kept outputs are checked to be
what it prints.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data" / "trec_eval_quicktest"

#: (expected output, the Makefile's command line after ./trec_eval, paths relative to trec_eval's source tree).
QUICKTEST = [
    ("out.test", "test/qrels.test test/results.test"),
    ("out.test.a", "-m all_trec test/qrels.test test/results.test"),
    ("out.test.aq", "-m all_trec -q test/qrels.test test/results.test"),
    ("out.test.aqc", "-m all_trec -q -c test/qrels.test test/results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 test/qrels.test test/results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 test/qrels.rel_level test/results.test"),
    ("out.test.prefs", "-m all_prefs -q -R prefs test/prefs.test test/prefs.results.test"),
    ("out.test.qrels_prefs", "-m all_prefs -q -R qrels_prefs test/qrels.test test/results.test"),
    ("out.test.qrels_jg", "-m qrels_jg -q -R qrels_jg  test/qrels.123 test/results.test"),
    ("out.test.meas_params", ("-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
                              "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
                              "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 "
                              "test/qrels.test test/results.test")),
    ("out.test.aqZ", "-q -m all_trec -Z test/zscores_file test/qrels.test test/results.test"),
]


def _arguments(command: str) -> list[str]:
    return [str(DATA / word[len("test/"):]) if word.startswith("test/") else word for word in command.split()]


@pytest.mark.parametrize("expected, command", QUICKTEST)
def test_quicktest_command_prints_trec_evals_expected_output(expected, command, cli):
    result = cli("trec_eval", *_arguments(command))
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == (DATA / expected).read_bytes()


def test_all_eleven_commands_are_run():
    assert len(QUICKTEST) == 11


@pytest.mark.parametrize("expected, command", QUICKTEST)
def test_kept_outputs_are_the_binarys(expected, command, trec_eval_binary):
    done = subprocess.run([str(trec_eval_binary), *_arguments(command)], capture_output=True, check=True)
    assert done.stdout == (DATA / expected).read_bytes()


# --- -Z beyond the quicktest: trec_eval's binary search of its table, read as it reads it ------------------------


def test_a_measure_missing_from_a_topic_reads_the_next_topics_first_line(tmp_path, cli):
    """trec_eval's search of a topic's Z lines ends one past them: for 301's map, a measure that sorts
    after all of 301's, it reads 302's first line (302's map). The binary prints these lines."""
    zscores = tmp_path / "z"
    zscores.write_text("301 P_5 0.5 0.1\n302 map 0.2 0.05\n303 map 0.1 0.2\n303 P_5 0.3 0.3\n")
    result = cli("trec_eval", "-q", "-m", "map", "-m", "P.5", "-Z", zscores, DATA / "qrels.test", DATA / "results.test")
    assert result.stdout == (
        "Zmap                   \t301\t-3.3515\nZP_5                   \t301\t-5.0000\n"
        "Zmap                   \t302\t4.3491\nZP_5                   \t302\t-1000000.0000\n"
        "Zmap                   \t303\t-0.0712\nZP_5                   \t303\t-1.0000\n"
        "Zmap                   \tall\t0.3088\nZP_5                   \tall\t-333335.3333\n")


@pytest.mark.parametrize("lines, message", [
    # 303's lines lack map: the search reads past the end of trec_eval's table (the binary crashes, exit 139).
    ("301 map 0.2 0.1\n302 map 0.2 0.1\n303 P_5 0.1 0.1\n", "measure map sorts after every measure of topic 303"),
    # No line for 303, the last topic: the same past the table of topics.
    ("301 map 0.2 0.1\n302 map 0.2 0.1\n", "topic 303 sorts after every topic"),
])
def test_where_trec_eval_reads_past_its_z_table_castregin_refuses(tmp_path, cli, lines, message):
    zscores = tmp_path / "z"
    zscores.write_text(lines)
    result = cli("trec_eval", "-m", "map", "-Z", zscores, DATA / "qrels.test", DATA / "results.test")
    assert result.exit_code == 1 and message in result.stderr and result.stderr.count("\n") == 1


def test_a_malformed_z_line_is_one_line(tmp_path, cli):
    zscores = tmp_path / "z"
    zscores.write_text("301 map 0.2 0.1\n302 map 0.2\n")
    result = cli("trec_eval", "-Z", zscores, DATA / "qrels.test", DATA / "results.test")
    assert result.exit_code == 1 and result.stderr == (f"castregin: error: {zscores}:2: expected 4 columns (topic "
                                                       "measure mean deviation), found 3\n")
