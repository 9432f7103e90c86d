"""`castregin trec_eval -R prefs | qrels_prefs | qrels_jg` prints what trec_eval 9.0.8 prints, byte for byte.

The oracle is trec_eval itself: its quicktest's expected files (tests/cli/data/trec_eval_quicktest, source
in the README there), and the binary's outputs on random and hand-written judgments kept in
tests/cli/data/trec_eval_prefs (written by trec_eval_prefs_oracle.py). With $CASTREGIN_TREC_EVAL set to a
trec_eval 9.0.8 binary, the kept outputs are checked to be the binary's and fresh random cases are
compared with it live. Input that trec_eval stops at, aborts on or reads past its arrays for is
refused in one line.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trec_eval_prefs_oracle import DATA, options_for, random_case, run_binary

REPO = Path(__file__).resolve().parents[2]
QUICKTEST = Path(__file__).resolve().parent / "data" / "trec_eval_quicktest"

#: trec_eval 9.0.8's quicktest commands with these formats (its Makefile), and their expected files.
QUICKTEST_COMMANDS = [
    ("-m all_prefs -q -R prefs prefs.test prefs.results.test", "out.test.prefs"),
    ("-m all_prefs -q -R qrels_prefs qrels.test results.test", "out.test.qrels_prefs"),
    ("-m qrels_jg -q -R qrels_jg  qrels.123 results.test", "out.test.qrels_jg"),
]


def in_process(cli, *args) -> bytes:
    result = cli("trec_eval", *args)
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes


def quicktest_args(command: str) -> list[str]:
    return [str(QUICKTEST / word) if (QUICKTEST / word).is_file() else word for word in command.split()]


@pytest.mark.parametrize("command, expected", QUICKTEST_COMMANDS)
def test_the_quicktest_commands_give_trec_evals_expected_files(cli, command, expected):
    assert in_process(cli, *quicktest_args(command)) == (QUICKTEST / expected).read_bytes()


def test_the_installed_command_gives_the_quicktest_bytes():
    command, expected = QUICKTEST_COMMANDS[0]
    done = subprocess.run([sys.executable, "-m", "castregin", "trec_eval", *quicktest_args(command)],
                          capture_output=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == (QUICKTEST / expected).read_bytes()


def kept_cases() -> list[tuple[str, str, str, str]]:
    """(case, format, options, output file) of every kept output of the binary."""
    return [tuple(line.split("\t")) for line in (DATA / "cases.tsv").read_text().splitlines()]


def test_kept_random_and_hand_cases_equal_the_binarys_outputs(cli):
    """26 random cases (12 prefs, 6 qrels_prefs, 8 qrels_jg) and a hand-written one, 4 option sets each:
    -q, -c, -n, -M, -J, -l, the sets, single measures, P_avgjg and Rprec_mult_avgjg parameters."""
    cases = kept_cases()
    assert len(cases) == 27 * 4
    for case, kind, options, output in cases:
        expected = gzip.decompress((DATA / output).read_bytes())
        got = in_process(cli, "-R", kind, *options.split(), DATA / f"{case}.judgments", DATA / f"{case}.run")
        assert got == expected, (case, options)


# --- the binary, live ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def binary() -> Path:
    if not os.environ.get("CASTREGIN_TREC_EVAL"):
        pytest.skip("set CASTREGIN_TREC_EVAL to a trec_eval 9.0.8 binary to compare with it live")
    return Path(os.environ["CASTREGIN_TREC_EVAL"])


def test_kept_outputs_are_the_binarys(binary):
    for case, kind, options, output in kept_cases():
        got = run_binary(binary, kind, options, DATA / f"{case}.judgments", DATA / f"{case}.run")
        assert got == gzip.decompress((DATA / output).read_bytes()), (case, options)


LIVE_OPTIONS = {
    "prefs": ["-q -m all_prefs", "-q -c -M 2 -m all_prefs", "-m prefs -m prefs_pair_imp -n -q"],
    "qrels_jg": ["-q -m qrels_jg", "-q -c -J -l 2 -m qrels_jg", "-q -M 3 -m P_avgjg.2,4,50 -m Rprec_mult_avgjg.0.75"],
}


@pytest.mark.parametrize("kind", ["prefs", "qrels_prefs", "qrels_jg"])
@pytest.mark.parametrize("seed", range(1000, 1010))
def test_fresh_random_cases_equal_the_binary(binary, cli, tmp_path, kind, seed):
    judgments, run = random_case(kind, seed, tmp_path)
    for options in LIVE_OPTIONS.get(kind, LIVE_OPTIONS["prefs"]) + options_for(kind):
        expected = run_binary(binary, kind, options, judgments, run)
        assert in_process(cli, "-R", kind, *options.split(), judgments, run) == expected, options


# --- without the binary -----------------------------------------------------------------------------------


def test_compressed_judgments_are_read(cli, tmp_path):
    packed = tmp_path / "prefs.test.gz"
    packed.write_bytes(gzip.compress((QUICKTEST / "prefs.test").read_bytes()))
    got = in_process(cli, "-m", "all_prefs", "-q", "-R", "prefs", packed, QUICKTEST / "prefs.results.test")
    assert got == (QUICKTEST / "out.test.prefs").read_bytes()


def test_measure_order_and_parameters_as_trec_eval_names_them(cli, tmp_path):
    judgments, run = tmp_path / "j", tmp_path / "r"
    judgments.write_text("t 0 a 1\nt 0 b 0\nt 1 a 0\nt 1 b 2\n")
    run.write_text("t Q0 b 1 2.0 x\nt Q0 a 2 1.0 last\n")
    # -m order does not matter; cutoffs sorted; "3.9" is 3 (atol); two groups averaged.
    out = in_process(cli, "-R", "qrels_jg", "-m", "Rprec_mult_avgjg.1,0.5", "-m", "P_avgjg.3.9,1", "-m", "num_q",
                     "-m", "map_avgjg", "-m", "runid", judgments, run).decode()
    assert out == (
        "runid                 \tall\tlast\n"
        "num_q                 \tall\t1\n"
        "map_avgjg             \tall\t0.7500\n"
        "P_avgjg_1             \tall\t0.5000\n"
        "P_avgjg_3             \tall\t0.3333\n"
        "Rprec_mult_avgjg_0.50 \tall\t0.5000\n"
        "Rprec_mult_avgjg_1.00 \tall\t0.5000\n"
    )


# --- refusals: one line, exit 1, nothing on standard output ------------------------------------------------


def refused(cli, tmp_path, kind: str, judgments: str | bytes, *options: str, run: str = "t Q0 a 1 1.0 r\n"):
    path, run_path = tmp_path / "judgments", tmp_path / "run"
    if isinstance(judgments, str):
        judgments = judgments.encode()
    path.write_bytes(judgments)
    run_path.write_text(run)
    result = cli("trec_eval", "-R", kind, *(options or ("-m", "all_prefs" if kind != "qrels_jg" else "qrels_jg")),
                 path, run_path)
    assert result.exit_code == 1, result.stdout
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


@pytest.mark.parametrize("kind, judgments, message", [
    ("prefs", "t g s a 1\nt g s b\n", "judgments:2: expected 5 columns (topic group subgroup doc level), found 4"),
    ("prefs", "t g s a 1 extra\n", "judgments:1: expected 5 columns"),
    ("prefs", "t g s a 1\n\nt g s b 0\n", "judgments:2: a blank line (trec_eval stops there: Malformed line)"),
    ("prefs", "t g s a 1\n   \t\n", "judgments:2: a blank line"),
    ("prefs", "", "the file is empty, expected a trec_eval prefs file"),
    ("prefs", b"t g s a\x00b 1\n", "judgments:1: a NUL byte"),
    ("prefs", b"t g s \xff 1\n", "judgments:1: byte 0xff is not valid UTF-8"),
    ("prefs", "t g s a 1x\n", "level '1x' is not a decimal number"),
    ("prefs", "t g s a nan\n", "level 'nan' is not a decimal number"),
    ("prefs", "t g s a 0x10\n", "level '0x10' is not a decimal number"),
    ("prefs", "t g s a 1e999\n", "level '1e999' is too large for a number"),
    ("prefs", "t g s a 1\nt g s a 2\n", "judgments:2: document a is judged twice in subgroup s of judgment group g"),
    ("qrels_prefs", "t 0 a 1\nt 0 a 1\n", "judgments:2: document a is judged twice in judgment group 0 of topic t"),
    ("qrels_prefs", "t 0 a 1 0\n", "expected 4 columns (topic group doc level), found 5"),
    ("qrels_jg", "t 0 a 1.5\n", "label '1.5' is not an integer"),
    ("qrels_jg", "t 0 a 9223372036854775808\n", "does not fit in 64 bits"),
    ("qrels_jg", "t 0 a 1\nt 0 a 2\n", "judged twice in judgment group 0 of topic t (trec_eval stops too"),
    ("qrels_jg", "t 0 a 200000000\n", "label 200000000 in 1 judgment group(s) is too large"),
])
def test_malformed_judgments_are_one_line_errors(cli, tmp_path, kind, judgments, message):
    assert message in refused(cli, tmp_path, kind, judgments)


def test_inconsistent_groups_are_refused_as_trec_eval_stops_or_aborts(cli, tmp_path):
    cycle = "t g s1 a 2\nt g s1 b 1\nt g s2 b 2\nt g s2 c 1\nt g s3 c 2\nt g s3 a 1\n"
    assert "judgment group g of topic t: its subgroups prefer documents in a cycle (a > b > c > a)" in \
        refused(cli, tmp_path, "prefs", cycle)
    zero = "t g s1 a 0\nt g s1 b 1\nt g s2 a 2\nt g s2 b 1\n"
    assert "document a has level 0 in one subgroup and a positive level in another" in \
        refused(cli, tmp_path, "prefs", zero)
    # Checked in every topic, not only those the run retrieves.
    assert "cycle" in refused(cli, tmp_path, "prefs", "x g s a 1\nx g s b 0\n" + cycle.replace("t ", "u "))


def test_rnonrel_past_trec_evals_list_is_refused(cli, tmp_path):
    # Two relevant, three non-relevant (two at 0, one at -1): trec_eval keeps "the first 2" of its
    # one-document lowest class and reads past it.
    judgments = "t g s a 2\nt g s b 2\nt g s c 0\nt g s d 0\nt g s e -1\n"
    message = refused(cli, tmp_path, "prefs", judgments, "-m", "prefs_avgjg_Rnonrel", run="t Q0 a 1 5 r\n")
    assert "topic t, judgment group g: its lowest class of levels has 1 document(s), fewer than the 2" in message
    # The other measures stay: trec_eval 9.0.8 prints this line for them.
    assert in_process(cli, "-R", "prefs", "-m", "prefs_simp", tmp_path / "judgments", tmp_path / "run") == (
        b"prefs_simp            \tall\t0.3750\n")


@pytest.mark.parametrize("kind, options, message", [
    ("prefs", ("-q",), "measure official (its num_ret) needs -R qrels judgments"),
    ("prefs", ("-m", "map_avgjg"), "measure map_avgjg needs -R qrels_jg judgments"),
    ("qrels_prefs", ("-m", "all_trec"), "needs -R qrels judgments"),
    ("qrels_jg", ("-m", "prefs"), "measure prefs (its prefs_num_prefs_poss) needs -R prefs or -R qrels_prefs"),
    ("qrels_jg", ("-m", "yaap"), "measure yaap needs -R qrels judgments"),
    ("prefs", ("-m", "prefs_foo"), "'prefs_foo' is not a trec_eval measure or measure set"),
    ("prefs", ("-m", "prefs_simp.5"), "prefs_simp takes no parameters (trec_eval would ignore them)"),
    ("prefs", ("-m", "all_prefs.5"), "all_prefs takes no parameters"),
    ("prefs", ("-m", "P.5"), "measure P needs -R qrels judgments"),
    ("qrels_jg", ("-m", "P_avgjg."), "a '.' must be followed by parameters"),
    ("qrels_jg", ("-m", "P_avgjg.0,5"), "cutoffs are positive whole numbers, not '0'"),
    ("qrels_jg", ("-m", "P_avgjg.5,5.5"), "duplicate cutoffs"),
    ("qrels_jg", ("-m", "P_avgjg.2000000000"), "too large"),
    ("qrels_jg", ("-m", "Rprec_mult_avgjg.x"), "multiples of R are numbers"),
    ("qrels_jg", ("-m", "Rprec_mult_avgjg.-1"), "multiples of R are numbers"),
])
def test_measures_the_format_cannot_give_are_refused(cli, tmp_path, kind, options, message):
    judgments = {"prefs": "t g s a 1\n", "qrels_prefs": "t 0 a 1\n", "qrels_jg": "t 0 a 1\n"}[kind]
    assert message in refused(cli, tmp_path, kind, judgments, *options)


def test_other_formats_and_prefs_measures_with_qrels_are_refused(cli, tmp_path):
    assert "-R zscores: not one of trec_eval's relevance formats" in refused(cli, tmp_path, "zscores", "t 0 a 1\n")
    assert "a preference measure: it needs -R prefs or -R qrels_prefs" in \
        refused(cli, tmp_path, "qrels", "t 0 a 1\n", "-m", "prefs_simp")
    assert "no query has both results" in refused(cli, tmp_path, "prefs", "u g s a 1\n")
