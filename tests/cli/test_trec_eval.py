"""`castregin trec_eval` prints what trec_eval 9.0.8 prints, byte for byte (README: a drop-in for trec_eval).

The oracle is the trec_eval binary (see trec_eval_oracle.py for where it comes from). Its outputs on
the CAsT 2022 baselines and on random runs are kept in tests/cli/data/trec_eval, so that the
byte-for-byte comparison runs everywhere; where the binary is at hand, the same cases and more are
compared with it live, and the kept outputs are checked to be the binary's.
"""

from __future__ import annotations

import gzip
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from trec_eval_oracle import GOLDEN, golden_cases, random_pair, run_binary, slice_cases

REPO = Path(__file__).resolve().parents[2]


def castregin_trec_eval(options: str, qrels: Path, run: Path) -> bytes:
    """The command as a script calls it: a subprocess, its standard output."""
    done = subprocess.run([sys.executable, "-m", "castregin", "trec_eval", *options.split(), str(qrels), str(run)],
                          capture_output=True, check=False, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def in_process(cli, options: str, qrels: Path, run: Path) -> bytes:
    result = cli("trec_eval", *options.split(), qrels, run)
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes


@pytest.fixture(scope="module")
def random_cases(tmp_path_factory):
    """The kept outputs on random runs: they need no reference data."""
    return golden_cases(None, tmp_path_factory.mktemp("random"))


@pytest.fixture(scope="module")
def cast_cases(cast_data, tmp_path_factory):
    """The kept outputs on the CAsT 2022 baselines: on the slice in tests/data (everywhere), and on the full data
    (beside ../shared)."""
    if cast_data.name == "slice":
        return slice_cases(cast_data.root)
    every = golden_cases(cast_data.root, tmp_path_factory.mktemp("cases"))
    return [case for case in every if not case[0].startswith("random")]


def _equal_the_kept_outputs(cli, cases) -> int:
    for name, options, qrels, run in cases:
        expected = gzip.decompress((GOLDEN / name).read_bytes())
        assert in_process(cli, options, qrels, run) == expected, (name, options)
    return len(cases)


def test_all_trec_on_the_cast_baselines_equals_trec_eval_byte_for_byte(cast_cases, cli):
    """-m all_trec over the four baselines and question_relevance_all.qrel, with and without -q, -c, -l2."""
    assert _equal_the_kept_outputs(cli, cast_cases) == 4 * 8


def test_all_trec_on_random_runs_equals_trec_eval_byte_for_byte(random_cases, cli):
    """Runs with ties, unjudged items and labels above 9, -q, -c, -l2, -M, -J: without ../shared too."""
    assert _equal_the_kept_outputs(cli, random_cases) == 6 * 3


def test_the_installed_command_writes_the_same_bytes(random_cases):
    name, options, qrels, run = next(c for c in random_cases if c[1].startswith("-q -c "))
    assert castregin_trec_eval(options, qrels, run) == gzip.decompress((GOLDEN / name).read_bytes())


def test_kept_outputs_are_the_binarys(random_cases, cast_cases, trec_eval_binary):
    for name, options, qrels, run in random_cases + cast_cases:
        assert run_binary(trec_eval_binary, options, qrels, run) == gzip.decompress((GOLDEN / name).read_bytes())


OPTION_SETS = ["", "-q", "-n -q", "-c -q -l2", "-M 3 -q -m all_trec", "-J -q -c -m all_trec", "-m set -q",
               "-q -m P.10,5 -m P.3 -m relstring.5 -m set_F.0.5 -m Rprec_mult.0.5 -m ndcg_cut.3,1",
               "-m official -m P.1", "-l3 -c -M 1 -q -m all_trec", "-q -l0 -m all_trec", "-q -J -l -1 -m all_trec",
               "-q -M 0 -c -m all_trec", ("-q -m utility.2,-1,0.5,1 -N 500 -m 11pt_avg..75,.25 -m ndcg.1=3,2=9 "
                                          "-m G.0=2 -m Rndcg.4=20 -m ndcg_rel.3=0 -m iprec_at_recall..33,1.5 "
                                          "-m Rprec_mult.1.5,0.33 -m set_F.0.25")]


@pytest.mark.parametrize("seed", range(20))
def test_random_runs_equal_the_binary(seed, tmp_path, cli, trec_eval_binary):
    qrels, run = random_pair(100 + seed, tmp_path)
    for options in OPTION_SETS:
        assert in_process(cli, options, qrels, run) == run_binary(trec_eval_binary, options, qrels, run), options


def test_other_cast_qrels_and_options_equal_the_binary(cast2022, run_paths, cli, trec_eval_binary):
    qrels_dir = cast2022 / "regin/qrels"
    for qrels_name, options in itertools.product(
            ["question_relevance_filtered", "question_relevance_mi_subset", "question_novelty"], OPTION_SETS):
        qrels = qrels_dir / f"{qrels_name}.qrel"
        assert in_process(cli, options, qrels, run_paths[0]) == run_binary(trec_eval_binary, options, qrels,
                                                                          run_paths[0]), (qrels_name, options)


# --- the command line, without the binary -------------------------------------------------------------------


@pytest.fixture
def small(tmp_path):
    qrels = tmp_path / "q.qrel"
    qrels.write_text("t1 0 a 2\nt1 0 b 0\nt2 0 c 1\nt3 0 d 1\n")
    run = tmp_path / "r.run"
    run.write_text("t1 Q0 a 1 0.9 first\nt1 Q0 c 2 0.5 first\nt2 Q0 c 1 0.7 last\n")
    return qrels, run


def test_a_small_case_by_hand(small, cli):
    qrels, run = small
    out = in_process(cli, "-q -m P.1,2 -m num_ret -m runid -m relstring", qrels, run).decode()
    # Queries in byte order, measures in trec_eval's order whatever -m says; runid is the last line's tag.
    assert out == (
        "num_ret               \tt1\t2\n"
        "P_1                   \tt1\t1.0000\n"
        "P_2                   \tt1\t0.5000\n"
        "relstring             \tt1\t'2-'\n"
        "num_ret               \tt2\t1\n"
        "P_1                   \tt2\t1.0000\n"
        "P_2                   \tt2\t0.5000\n"
        "relstring             \tt2\t'1'\n"
        "runid                 \tall\tlast\n"
        "num_ret               \tall\t3\n"
        "P_1                   \tall\t1.0000\n"
        "P_2                   \tall\t0.5000\n"
    )
    complete = in_process(cli, "-c -m P.1 -m num_q", qrels, run).decode()
    assert complete == "num_q                 \tall\t3\nP_1                   \tall\t0.6667\n"
    at_two = in_process(cli, "-l2 -m P.1", qrels, run).decode()
    assert at_two == "P_1                   \tall\t0.5000\n"


@pytest.mark.parametrize("args, message", [
    (["-m", "foo"], "not a trec_eval measure"),
    (["-m", "P.5,5"], "duplicate cutoffs"),
    (["-m", "map.5"], "takes no parameter"),
    (["-m", "prefs_simp"], "preference measure"),
    (["-D", "1"], "-D is not supported"),
    (["-R", "prefs"], "expected 5 columns"),
    (["-R", "xml"], "not one of trec_eval's relevance formats"),
    (["-M", "-1"], "must be 0 or more"),
    (["-l", "abc"], "-l must be a whole number"),
    (["-m", "utility.1,2"], "takes 4 coefficients"),
    (["-m", "ndcg.1=3,2"], "label=gain pairs"),
])
def test_refusals_are_one_line(small, cli, args, message):
    qrels, run = small
    result = cli("trec_eval", *args, qrels, run)
    assert result.exit_code == 1
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_no_shared_query_is_an_error(tmp_path, cli):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("x 0 a 1\n")
    run.write_text("y Q0 a 1 1 tag\n")
    result = cli("trec_eval", qrels, run)
    assert result.exit_code == 1 and "no query has both results" in result.stderr


def test_evaluate_format_trec_and_q(small, cli):
    qrels, run = small
    out = cli("evaluate", run, "--qrels", qrels, "-m", "P@1", "-m", "num_ret", "-q", "--rel-level", "1",
              "--format", "trec").stdout
    assert out == (
        "P@1                   \tt1\t1.0000\n"
        "num_ret               \tt1\t2\n"
        "P@1                   \tt2\t1.0000\n"
        "num_ret               \tt2\t1\n"
        "runid                 \tall\tfirst\n"
        "num_q                 \tall\t2\n"
        "P@1                   \tall\t1.0000\n"
        "num_ret               \tall\t3\n"
    )


def test_a_small_run_loads_no_array_or_dataframe_library(small):
    """The rules are plain Python: trec_eval on a small run imports neither numpy, pyarrow nor pandas (each costs
    a tenth of a second or more of every call)."""
    qrels, run = small
    code = ("import sys\nfrom castregin.cli import main\n"
            f"try:\n    main(['trec_eval', '-q', '-m', 'all_trec', {str(qrels)!r}, {str(run)!r}],"
            " prog_name='castregin')\n"
            "except SystemExit as exit:\n    assert not exit.code, exit.code\n"
            "print(sorted(m for m in ('numpy', 'pyarrow', 'pandas', 'ir_measures') if m in sys.modules),"
            " file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert "ndcg_cut_5" in done.stdout
