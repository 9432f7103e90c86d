"""``castregin trec_eval`` without click (:mod:`castregin.cli.plain`): click's reading of the command line, click's
output.

The oracle of the reading is click itself: for every command line here, written by hand or made by hypothesis from a
grammar of trec_eval's options, values and arguments, the plain reader gives exactly the keyword arguments click's
parse gives the command (``make_context(...).params``), or declines (None: click then reads it). The forms scripts
write are not declined. And the outputs: each command line is run in a new interpreter through :func:`castregin.cli.run`
twice, once as it is and once with :data:`castregin.cli.PLAIN_COMMANDS` emptied (so through click, as before the plain
path), and the two print the same bytes on both streams, write the same files and exit with the same status.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from castregin.cli import main
from castregin.cli.plain import HELP_OPTION_NAMES, MULTIPLE
from castregin.cli.trec_eval import trec_eval_command
from castregin.cli.trec_eval_plain import COMMAND, PARAMETERS


def click_reading(argv: list[str]) -> dict | None:
    """The keyword arguments click gives ``trec_eval_command`` for ``castregin trec_eval ARGV``; None where click
    shows help or a usage error instead (its output swallowed)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            group = main.make_context("castregin", ["trec_eval"])
            return trec_eval_command.make_context("trec_eval", list(argv), parent=group).params
        except (click.exceptions.Exit, click.ClickException):
            return None


def typed(keywords: dict) -> dict:
    """``keywords`` with each value's type beside it: True and 1, ("a",) and ["a"] are not the same reading."""
    return {name: (type(value).__name__, value) for name, value in keywords.items()}


def check_reading(argv: list[str]) -> dict | None:
    """The plain reading of ``argv``, checked against click's: the same, or declined."""
    plain = COMMAND.parse(argv)
    if plain is not None:
        clicks = click_reading(argv)
        assert clicks is not None, (argv, plain)
        assert typed(plain) == typed(clicks), argv
    return plain


#: Command lines at the edges of click's rules (Q and R the two files); each read as click reads it, or declined.
EDGE_CASES = [
    [], ["Q"], ["Q", "R", "S"], ["Q", "R"], ["-", "R"], ["-", "-"], ["", "R"],
    ["-qc", "Q", "R"], ["-cq", "Q", "R"], ["-qcnJ", "Q", "R"], ["-qcl2", "Q", "R"], ["-qcl", "2", "Q", "R"],
    ["-mP.5", "Q", "R"], ["-m", "P.5", "Q", "R"], ["-m=P.5", "Q", "R"], ["-qmP.5", "Q", "R"], ["-qm", "P.5", "Q", "R"],
    ["--measure=P.5", "Q", "R"], ["--measure", "P.5", "Q", "R"], ["--measure=", "Q", "R"], ["--measure==", "Q", "R"],
    ["-l2", "Q", "R"], ["-l", "2", "Q", "R"], ["-l=2", "Q", "R"], ["-l", "", "Q", "R"], ["--level_for_rel=2", "Q", "R"],
    ["-M1000", "Q", "R"], ["-M", "1000", "Q", "R"], ["--Max_retrieved_per_topic", "5", "Q", "R"],
    ["-l", "1", "-l", "2", "Q", "R"], ["-m", "a", "-m", "b", "--measure", "c", "Q", "R"],
    ["-m", "-q", "Q", "R"], ["-m", "--", "Q", "R"], ["-m", "-h", "Q", "R"], ["-m", "-", "Q", "R"],
    ["Q", "R", "-q"], ["Q", "-q", "R"], ["Q", "-m", "P.5", "R"], ["Q", "R", "-m"], ["-m"], ["Q", "R", "-l"],
    ["--", "Q", "R"], ["-q", "--", "-Q", "R"], ["--", "-", "R"], ["Q", "--", "-q"], ["--", "Q", "R", "--"],
    ["Q", "R", "--"], ["-q", "Q", "--", "--help"],
    ["--score-precision", "float", "Q", "R"], ["--score-precision=float", "Q", "R"],
    ["--score-precision", "Float", "Q", "R"], ["--score-precision", "bad", "--score-precision", "float", "Q", "R"],
    ["--score-precision", "float", "--score-precision", "bad", "Q", "R"], ["--score-precision", "", "Q", "R"],
    ["--output", "-", "Q", "R"], ["--output", "out.txt", "Q", "R"], ["--output=", "Q", "R"], ["--output", "Q", "R"],
    ["-h"], ["--help"], ["-qh", "Q", "R"], ["Q", "R", "--help"], ["--help=x", "Q", "R"], ["-h", "Q", "R"],
    ["-x", "Q", "R"], ["--bogus", "Q", "R"], ["--measur", "P", "Q", "R"], ["---m", "P", "Q", "R"], ["-", "-q", "R"],
    ["--nosummary=1", "Q", "R"], ["-n=1", "Q", "R"], ["-q=1", "Q", "R"], ["-=", "Q", "R"], ["--=x", "Q", "R"],
    ["-D", "1", "Q", "R"], ["-o", "Q", "R"], ["-Z", "z.txt", "Q", "R"], ["-N", "100", "Q", "R"],
    ["-T", "trec_results", "Q", "R"], ["-R", "prefs", "Q", "R"], ["-J", "Q", "R"], ["--Judged_docs_only", "Q", "R"],
    ["-m", "P.\u0665", "Q", "R"], ["-m\u00e9", "Q", "R"], ["-\u00e9", "Q", "R"], ["Q\udcff", "R"],
    ["-5", "Q", "R"], ["-qc5", "Q", "R"], ["-ml2", "Q", "R"], ["-measure", "Q", "R"], ["-nosummary", "Q", "R"],
    ["-nq", "Q", "R"], ["-output", "o", "Q", "R"],
]


@pytest.mark.parametrize("argv", EDGE_CASES, ids=lambda argv: " ".join(argv) or "nothing")
def test_an_edge_case_is_read_as_click_reads_it_or_declined(argv):
    check_reading(argv)


#: The forms scripts write (the --help's examples among them), which the plain reader must take.
SCRIPT_FORMS = [
    ["Q", "R"],
    ["-m", "all_trec", "question_relevance_all.qrel", "bm25.run"],
    ["-q", "-c", "-l2", "-m", "P.1,3,5", "-m", "ndcg_cut.3", "question_relevance_all.qrel", "bm25.run"],
    ["-q", "-R", "prefs", "-m", "all_prefs", "judgments.prefs", "bm25.run"],
    ["-q", "Q", "R"],
    ["-c", "-q", "-m", "official", "Q", "R"],
    ["-m", "map", "-m", "P.10", "-m", "ndcg_cut.10", "Q", "R"],
    ["-mmap", "-mndcg_cut.10", "Q", "R"],
    ["-M1000", "Q", "R"],
    ["-M", "1000", "-m", "recall.1000", "Q", "R"],
    ["-J", "-m", "ndcg", "Q", "R"],
    ["-l", "2", "-m", "P.5", "Q", "R"],
    ["-qc", "-l3", "Q", "R"],
    ["-n", "-q", "-m", "ndcg_cut.5", "Q", "R"],
    ["--output", "out.txt", "Q", "R"],
    ["-m", "all_trec", "--output=out.txt", "Q", "R"],
    ["--measure=P.5", "--level_for_rel=2", "Q", "R"],
    ["-Z", "zscores.txt", "-m", "map", "Q", "R"],
    ["-N", "1000000", "-m", "utility.1,-1,0,0", "Q", "R"],
    ["-", "R"],
    ["Q", "R", "-q", "-m", "P.5"],
    ["--score-precision", "float", "-q", "Q", "R"],
    ["-m", "P.5", "--", "Q", "R"],
]


@pytest.mark.parametrize("argv", SCRIPT_FORMS, ids=" ".join)
def test_what_scripts_write_is_not_declined(argv):
    assert check_reading(argv) is not None


def test_the_plain_reading_of_an_example():
    # Not only equal to click's: what the command is meant to get, written out.
    assert COMMAND.parse(["-qc", "-l2", "-m", "P.1,3,5", "-mndcg_cut.3", "q.qrel", "r.run", "--output=o"]) == {
        "qrels_file": "q.qrel", "run_file": "r.run", "per_query": True, "measures": ("P.1,3,5", "ndcg_cut.3"),
        "complete": True, "rel_level": "2", "nosummary": False, "max_per_query": None, "judged_only": False,
        "rel_info_format": "qrels", "results_format": "trec_results", "debug_level": None, "num_docs": None,
        "zscore_file": None, "old_format": False, "output": "o", "score_precision": "double"}


# --- hypothesis: command lines from a grammar of trec_eval's options ------------------------------------------

_FLAGS = [flag for parameter in PARAMETERS for flag in parameter.flags]
_LONG = [flag for flag in _FLAGS if flag.startswith("--")]
_LETTERS = "".join(flag[1] for flag in _FLAGS if len(flag) == 2) + "hxy"
_VALUES = ["P.5", "all_trec", "ndcg_cut.3", "2", "-1", "0", "", "=", "-", "--", "-q", "-m", "-h", "--help", "double",
           "float", "Float", "qrels", "prefs", "x=y", "\u00e9", "q.qrel", "r.run", "P.5,10"]
_FILES = ["q.qrel", "r.run", "-", "", "Q", "R"]

_option = st.one_of(
    st.sampled_from(_FLAGS).map(lambda flag: [flag]),
    st.tuples(st.sampled_from(_FLAGS), st.sampled_from(_VALUES)).map(list),
    st.tuples(st.sampled_from([*_LONG, "-m", "-l", "-q"]), st.sampled_from(_VALUES)).map(lambda p: [f"{p[0]}={p[1]}"]),
    st.tuples(st.text(_LETTERS, min_size=1, max_size=4), st.sampled_from(["", *_VALUES])).map(
        lambda p: ["-" + p[0] + p[1]]),
    st.sampled_from([*HELP_OPTION_NAMES, "--bogus", "--measur", "---q", "--", "-"]).map(lambda word: [word]),
    st.text("-=qcmlMP.5h ", max_size=5).map(lambda word: [word]),
)


@st.composite
def command_lines(draw) -> list[str]:
    """Options (each one or two words) with zero to three file arguments put among them anywhere."""
    words = [word for option in draw(st.lists(_option, max_size=6)) for word in option]
    for path in draw(st.lists(st.sampled_from(_FILES), max_size=3)):
        words.insert(draw(st.integers(0, len(words))), path)
    return words


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(command_lines())
def test_a_generated_command_line_is_read_as_click_reads_it_or_declined(argv):
    check_reading(argv)


def test_the_grammar_makes_command_lines_the_plain_reader_takes():
    # So that the test above is not passed by declining: a good share of its command lines are taken.
    examples = []

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(command_lines())
    def collect(argv):
        examples.append(COMMAND.parse(argv) is not None)

    collect()
    # One in twenty: the examples differ between hypothesis versions (the oldest allowed takes 38 of 400, the
    # newest more), and any such share is hundreds of command lines read both ways in the test above.
    assert sum(examples) > len(examples) / 20, (sum(examples), len(examples))


def test_the_click_command_is_made_from_the_plain_parameters():
    # One declaration: the click command's parameters are the plain ones, in the same order, same names and kinds.
    clicks = trec_eval_command.params
    assert [param.name for param in clicks] == [parameter.name for parameter in PARAMETERS]
    for param, parameter in zip(clicks, PARAMETERS, strict=True):
        assert tuple(param.opts) == parameter.flags or (not parameter.flags and param.opts == [parameter.name])
        assert getattr(param, "multiple", False) == (parameter.kind == MULTIPLE)


# --- the same output, through the plain path and through click -------------------------------------------------

#: Runs castregin.cli.run() as the `castregin` script does, through click when the first argument is "click"; at
#: exit writes to the file named by $MARK whether click was loaded.
_RUNNER = """\
import atexit, os, sys
import castregin.cli as cli
if sys.argv.pop(1) == "click":
    cli.PLAIN_COMMANDS.clear()
sys.argv[0] = "castregin"
atexit.register(lambda: open(os.environ["MARK"], "w").write("click" if "click" in sys.modules else "plain"))
cli.run()
"""

QRELS = "".join(f"t{t} 0 d{i} {(i + t) % 3}\n" for t in range(1, 4) for i in range(6))
RUN = "".join(f"t{t} Q0 d{i} {i + 1} {9 - i}.5 tag\n" for t in range(1, 4) for i in range(8))


def _files(directory: Path) -> Path:
    directory.mkdir()
    (directory / "q.qrel").write_text(QRELS)
    (directory / "r.run").write_text(RUN)
    (directory / "bom.run").write_bytes(b"\xef\xbb\xbf" + RUN.encode())
    (directory / "bad.run").write_text(RUN + "t1 Q0 d9 9 notanumber tag\n")
    (directory / "j.prefs").write_text("t1 g s d1 1\nt1 g s d2 0\nt2 g s d1 0\nt2 g s d3 2\n")
    (directory / "z.txt").write_text("t1 P_5 0.5 0.1\nt2 P_5 0.4 0.2\nt3 P_5 0.3 0.1\n")
    (directory / "sub").mkdir()
    return directory


def _run_both(tmp_path, argv: list[str], stdin: str = "", more_files=None) -> dict:
    """``castregin ARGV`` through the plain path and through click, each in a copy of the files (and of those
    ``more_files(directory)`` writes): what each printed, its exit status, the files it left, and which path it
    took."""
    done = {}
    for path in ("plain", "click"):
        directory = _files(tmp_path / path)
        if more_files is not None:
            more_files(directory)
        mark = tmp_path / f"{path}.mark"
        result = subprocess.run([sys.executable, "-c", _RUNNER, path, *argv], cwd=directory, input=stdin.encode(),
                                capture_output=True, timeout=120, check=False, env={**os.environ, "MARK": str(mark)})
        left = {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}
        done[path] = (result.stdout, result.stderr, result.returncode, left, mark.read_text())
    return done


#: Command lines that succeed, and that fail with castregin's one-line errors (exit 1): run without click.
PLAIN_RUNS = [
    ["trec_eval", "q.qrel", "r.run"],
    ["trec_eval", "-q", "-c", "-l2", "-m", "P.1,3,5", "-m", "ndcg_cut.3", "q.qrel", "r.run"],
    ["trec_eval", "-m", "all_trec", "-q", "q.qrel", "r.run"],
    ["trec_eval", "-J", "-M5", "-mmap", "q.qrel", "r.run"],
    ["trec_eval", "--output", "out.txt", "q.qrel", "r.run"],
    ["trec_eval", "q.qrel", "bom.run"],  # a warning line
    ["trec_eval", "-", "r.run"],  # the qrels on standard input
    ["trec_eval", "-q", "-R", "prefs", "-m", "all_prefs", "j.prefs", "r.run"],
    ["trec_eval", "-q", "-Z", "z.txt", "-m", "P.5", "q.qrel", "r.run"],
    ["trec_eval", "-Z", "z.txt", "--output", "z.txt", "q.qrel", "r.run"],  # -Z's file as the output
    ["trec_eval", "missing.qrel", "r.run"],
    ["trec_eval", "q.qrel", "bad.run"],
    ["trec_eval", "-l", "abc", "q.qrel", "r.run"],
    ["trec_eval", "-D", "1", "q.qrel", "r.run"],
    ["trec_eval", "-m", "foo", "q.qrel", "r.run"],
    ["trec_eval", "-M", "-1", "q.qrel", "r.run"],
    ["trec_eval", "--output", "q.qrel", "q.qrel", "r.run"],  # an input as the output
    ["trec_eval", "--output", "./r.run", "q.qrel", "r.run"],  # the same, spelled otherwise
    ["trec_eval", "--output", "sub", "q.qrel", "r.run"],  # a directory
    ["trec_eval", "-R", "xml", "q.qrel", "r.run"],
]

#: Command lines the plain reader declines: help and usage errors, which click prints (exit 0 or 2).
CLICK_RUNS = [
    ["trec_eval", "-h"],
    ["trec_eval", "-x", "q.qrel", "r.run"],
    ["trec_eval", "q.qrel"],
    ["trec_eval", "q.qrel", "r.run", "extra"],
    ["trec_eval", "--score-precision", "bad", "q.qrel", "r.run"],
    ["trec_eval", "--nosummary=1", "q.qrel", "r.run"],
]


def check_both_paths(tmp_path, argv: list[str], plain: bool, more_files=None) -> tuple:
    """``castregin ARGV`` prints, writes and exits the same through both paths, taking the plain one when ``plain``
    (else declined to click); a plain run's outcome a result, or one line and exit 1. What the plain path did."""
    done = _run_both(tmp_path, argv, stdin=QRELS, more_files=more_files)
    assert done["plain"][:4] == done["click"][:4]
    assert done["click"][4] == "click"
    assert done["plain"][4] == ("plain" if plain else "click")
    stdout, stderr, status, _, _ = done["plain"]
    if plain:
        assert (status, stderr.count(b"\n")) in {(0, 0), (0, 1), (1, 1)}, stderr
        assert stdout if status == 0 and not any(arg.startswith("--output") for arg in argv) else not stdout
    return done["plain"]


@pytest.mark.parametrize("argv", PLAIN_RUNS + CLICK_RUNS, ids=" ".join)
def test_the_plain_path_prints_what_click_prints(tmp_path, argv):
    _, stderr, status, _, _ = check_both_paths(tmp_path, argv, argv in PLAIN_RUNS)
    if argv == ["trec_eval", "q.qrel", "bom.run"]:
        assert stderr.startswith(b"castregin: warning: ") and status == 0


def test_a_reader_that_leaves_ends_both_paths_quietly(tmp_path):
    # `castregin trec_eval -q ... | head -1`: the pipe closes under the writer; both end as SIGPIPE ends Unix tools.
    directory = _files(tmp_path / "files")
    turns = 3000
    (directory / "big.qrel").write_text("".join(f"t{t} 0 d1 1\n" for t in range(turns)))
    (directory / "big.run").write_text("".join(f"t{t} Q0 d{i} {i} {10 - i} tag\n" for t in range(turns)
                                               for i in range(1, 4)))
    results = {}
    for path in ("plain", "click"):
        pipeline = (f"{sys.executable} -c '{_RUNNER}' {path} trec_eval -q -m all_trec big.qrel big.run | head -1; "
                    "echo \"status ${PIPESTATUS[0]}\" >&2")
        mark = tmp_path / f"{path}.mark"
        done = subprocess.run(["bash", "-c", pipeline], cwd=directory, capture_output=True, text=True, timeout=300,
                              check=False, env={**os.environ, "MARK": str(mark)})
        results[path] = (done.stdout, done.stderr, mark.read_text())
    assert results["plain"][:2] == results["click"][:2] == (results["click"][0], "status 141\n")
    assert results["plain"][0].count("\n") == 1
    assert (results["plain"][2], results["click"][2]) == ("plain", "click")


# --- say: click.echo's line, without click ------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["", "ascii", "latin-1"])
@pytest.mark.parametrize("line", ["castregin: error: plain \u00e9", "escape \x1b[31mred\x1b[0m \u00e9 \u0665",
                                  "surrogate \udcff"])
def test_say_writes_what_click_echo_writes(encoding, line):
    def written(code: str) -> bytes:
        return subprocess.run([sys.executable, "-c", code, line], capture_output=True, check=True, timeout=60,
                              env={**os.environ, "PYTHONIOENCODING": encoding}).stderr

    ours = written("import sys\nfrom castregin.cli import say\nsay(sys.argv[1])")
    assert ours == written("import sys, click\nclick.echo(sys.argv[1], err=True)")
    assert ours.startswith(line[:4].encode())


def test_say_keeps_escapes_on_a_terminal_as_click_echo_does():
    pty = pytest.importorskip("pty")

    def on_a_terminal(code: str) -> bytes:
        leader, follower = pty.openpty()
        try:
            subprocess.run([sys.executable, "-c", code], stderr=follower, check=True, timeout=60)
            return os.read(leader, 1000)
        finally:
            os.close(leader)
            os.close(follower)

    line = "escape \\x1b[31mred\\x1b[0m"
    ours = on_a_terminal(f"from castregin.cli import say\nsay('{line}')")
    assert ours == on_a_terminal(f"import click\nclick.echo('{line}', err=True)")
    assert b"\x1b[31m" in ours
