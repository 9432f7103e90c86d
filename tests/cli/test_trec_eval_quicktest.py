"""trec_eval 9.0.8's own test suite passes through `castregin trec_eval`, byte for byte.

The eleven commands of the `quicktest` target of trec_eval's Makefile (usnistgov/trec_eval, tag
trec_eval-9.0.8), with its inputs and expected outputs kept in tests/cli/data/trec_eval_quicktest
(see the README there). Where the trec_eval binary is at hand, the kept outputs are checked to be
what it prints.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_trec_eval import trec_eval_binary  # noqa: F401  (fixture)

DATA = Path(__file__).resolve().parent / "data" / "trec_eval_quicktest"
PREFERENCES = pytest.mark.xfail(strict=True, reason="preference formats: branch p14-prefs")

#: (expected output, the Makefile's command line after ./trec_eval, paths relative to trec_eval's source tree).
QUICKTEST = [
    ("out.test", "test/qrels.test test/results.test"),
    ("out.test.a", "-m all_trec test/qrels.test test/results.test"),
    ("out.test.aq", "-m all_trec -q test/qrels.test test/results.test"),
    ("out.test.aqc", "-m all_trec -q -c test/qrels.test test/results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 test/qrels.test test/results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 test/qrels.rel_level test/results.test"),
    pytest.param("out.test.prefs", "-m all_prefs -q -R prefs test/prefs.test test/prefs.results.test",
                 marks=PREFERENCES),
    pytest.param("out.test.qrels_prefs", "-m all_prefs -q -R qrels_prefs test/qrels.test test/results.test",
                 marks=PREFERENCES),
    pytest.param("out.test.qrels_jg", "-m qrels_jg -q -R qrels_jg  test/qrels.123 test/results.test",
                 marks=PREFERENCES),
    ("out.test.meas_params", ("-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
                              "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
                              "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 "
                              "test/qrels.test test/results.test")),
    ("out.test.aqZ", "-q -m all_trec -Z test/zscores_file test/qrels.test test/results.test"),
]


def _arguments(command: str) -> list[str]:
    return [str(DATA / word[len("test/"):]) if word.startswith("test/") else word for word in command.split()]


def _needs(expected: str, command: str) -> None:
    missing = [path for path in (DATA / expected, *(Path(a) for a in _arguments(command) if a.startswith(str(DATA))))
               if not path.exists()]
    if missing:
        pytest.skip(f"not in tests/cli/data/trec_eval_quicktest yet: {', '.join(p.name for p in missing)}")


@pytest.mark.parametrize("expected, command", QUICKTEST)
def test_quicktest_command_prints_trec_evals_expected_output(expected, command, cli):
    _needs(expected, command)
    result = cli("trec_eval", *_arguments(command))
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes == (DATA / expected).read_bytes()


def test_all_eleven_commands_are_run():
    assert len(QUICKTEST) == 11


@pytest.mark.parametrize("expected, command", [case for case in QUICKTEST if not hasattr(case, "marks")])
def test_kept_outputs_are_the_binarys(expected, command, trec_eval_binary):  # noqa: F811
    done = subprocess.run([str(trec_eval_binary), *_arguments(command)], capture_output=True, check=True)
    assert done.stdout == (DATA / expected).read_bytes()
