"""``castregin gdeval``, ``ndeval`` and ``sample_eval`` without click (:class:`castregin.cli.plain.DropInCommand`).

Their command lines are the originals' (gdeval.pl's ``-baseline RUN``, options before the two files), read by the
drop-in, not by click: click only hands every word, as it is, to one argument, but for ``--help`` and ``--``. The oracle
of that hand-over is click itself: for every command line here, written by hand or made by hypothesis from a grammar
of each drop-in's options, :meth:`~castregin.cli.plain.DropInCommand.arguments` gives exactly the words click's parse
gives the command (``make_context(...).params``), and None exactly where click shows help or a usage error; the plain
reading is the drop-in's reader on those words, or declined where it refuses them (click then says so). The forms
scripts write are not declined. And the outputs: each command line is run in a new interpreter through
:func:`castregin.cli.run` with and without :data:`castregin.cli.PLAIN_COMMANDS` (test_plain_commands.py's runner),
and the two print the same bytes on both streams, write the same files and exit with the same status.
"""

from __future__ import annotations

import contextlib
import io

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from castregin.cli import main
from castregin.cli.gdeval import gdeval_command, ndeval_command
from castregin.cli.gdeval_plain import GDEVAL, NDEVAL
from castregin.cli.plain import UsageError
from castregin.cli.sample_eval import sample_eval_command
from castregin.cli.sample_eval_plain import SAMPLE_EVAL

from .test_plain_commands import check_both_paths

DROP_INS = {"gdeval": (GDEVAL, gdeval_command), "ndeval": (NDEVAL, ndeval_command),
            "sample_eval": (SAMPLE_EVAL, sample_eval_command)}


def click_words(name: str, argv: list[str]) -> list[str] | None:
    """The words click gives the drop-in ``name``'s argument for ``castregin NAME ARGV``; None where click shows help
    or a usage error instead (its output swallowed)."""
    command = DROP_INS[name][1]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            group = main.make_context("castregin", [name])
            args = command.make_context(name, list(argv), parent=group).params["args"]
        except (click.exceptions.Exit, click.ClickException):
            return None
    assert isinstance(args, tuple)
    return list(args)


def check_reading(name: str, argv: list[str]) -> dict | None:
    """The plain reading of ``argv``, checked against click's: the same words, and the drop-in's reading of them or
    declined where the reader refuses them."""
    drop_in = DROP_INS[name][0]
    words = drop_in.arguments(argv)
    assert words == click_words(name, argv), argv
    plain = drop_in.parse(argv)
    if words is not None:
        try:
            assert plain == drop_in.read(list(words)), argv
        except UsageError:
            assert plain is None, argv
    return plain


#: Command lines at the edges of click's hand-over and of the originals' readers (Q and R the two files).
EDGE_CASES = [
    [], ["Q"], ["Q", "R"], ["Q", "R", "S"], ["-", "R"], ["-", "-"], ["", "R"],
    ["--help"], ["--help=x", "Q", "R"], ["--help=", "Q", "R"], ["-c", "--help", "Q", "R"], ["Q", "R", "--help"],
    ["Q", "--help", "R"], ["--hel", "Q", "R"], ["--helpx", "Q", "R"], ["-h", "Q", "R"], ["---help", "Q", "R"],
    ["--", "Q", "R"], ["-c", "--", "Q", "R"], ["--", "--", "Q", "R"], ["Q", "--", "R"], ["--", "-c", "Q", "R"],
    ["-c", "Q", "R", "--"], ["-c=1", "Q", "R"], ["-=", "Q", "R"], ["--=x", "Q", "R"], ["-\u00e9", "Q", "R"],
    ["--output", "o", "Q", "R"], ["--output=o", "Q", "R"], ["--output"], ["Q", "R", "--output"],
    ["Q", "R", "--output", "o"], ["--rewrite-ids", "Q", "R"], ["Q", "R", "--rewrite-ids"], ["Q\udcff", "R"],
    ["-c", "Q", "R"], ["-k", "5", "Q", "R"], ["-k", "0", "Q", "R"], ["-k", "x", "Q", "R"], ["-k", "1_0", "Q", "R"],
    ["-k", "inf", "Q", "R"], ["-k", "Q", "R"], ["-k5", "Q", "R"], ["-baseline", "B", "Q", "R"],
    ["-riskAlpha", "1", "Q", "R"], ["-riskAlpha", "-1", "Q", "R"], ["Q", "R", "-c"], ["-x", "Q", "R"],
    ["-alpha", "0.3", "Q", "R"], ["-alpha", "2", "Q", "R"], ["-beta", "1", "Q", "R"], ["-M", "10", "Q", "R"],
    ["-M", "0", "Q", "R"], ["-M", "1.5", "Q", "R"], ["-traditional", "Q", "R"], ["-ca", "Q", "R"], ["-a", "Q", "R"],
    ["-cc", "Q", "R"], ["-", "-c", "R"], ["-q", "Q", "R"], ["-q", "-q", "Q", "R"], ["Q", "-q", "R"],
]


@pytest.mark.parametrize("name", DROP_INS)
@pytest.mark.parametrize("argv", EDGE_CASES, ids=lambda argv: " ".join(argv) or "nothing")
def test_an_edge_case_is_handed_over_as_click_hands_it(name, argv):
    check_reading(name, argv)


#: The forms scripts write (the --help's examples among them), which each plain reader must take.
SCRIPT_FORMS = {
    "gdeval": [["Q", "R"], ["-c", "Q", "R"], ["-k", "10", "Q", "R"], ["-c", "-k", "10", "Q", "R"],
               ["-k", "5", "-c", "Q", "R"], ["-baseline", "B", "-riskAlpha", "1", "Q", "R"],
               ["--output", "out.txt", "Q", "R"], ["--rewrite-ids", "-k", "20", "Q", "R"], ["-", "R"]],
    "ndeval": [["Q", "R"], ["-c", "Q", "R"], ["-traditional", "-alpha", "0.3", "Q", "R"], ["-M", "20", "-c", "Q", "R"],
               ["-alpha", "0.5", "-beta", "0.5", "Q", "R"], ["-baseline", "B", "-riskAlpha", "2", "Q", "R"],
               ["--rewrite-ids", "Q", "R"], ["Q", "R", "--output", "out.txt"]],
    "sample_eval": [["Q", "R"], ["-q", "Q", "R"], ["-q", "Q", "R", "--output", "out.txt"], ["--output=o", "Q", "R"]],
}


@pytest.mark.parametrize(("name", "argv"), [(name, argv) for name, forms in SCRIPT_FORMS.items() for argv in forms],
                         ids=lambda value: " ".join(value) if isinstance(value, list) else value)
def test_what_scripts_write_is_not_declined(name, argv):
    assert check_reading(name, argv) is not None


def test_the_plain_readings_of_examples():
    # Not only equal to click's: what each command is meant to get, written out.
    assert GDEVAL.parse(["-c", "-k", "10", "-riskAlpha", "1", "q", "r", "--output=o"]) == {
        "qrels_file": "q", "run_file": "r", "k": 10, "complete": True, "baseline_file": None,
        "risk_alpha": ("1", 1.0), "rewrite": False, "output": "o"}
    assert NDEVAL.parse(["--", "-traditional", "-alpha", "0.3", "-M", "5", "-ca", "q", "r"]) == {
        "qrels_file": "q", "run_file": "r", "alpha": 0.3, "beta": 0.5, "traditional": True, "depth": 5,
        "complete": True, "baseline_file": None, "risk_alpha": ("0", 0.0), "rewrite": False, "output": "-"}
    assert SAMPLE_EVAL.parse(["-q", "q", "r"]) == {"qrels_file": "q", "run_file": "r", "per_topic": True,
                                                   "output": "-"}


# --- hypothesis: command lines from a grammar of each drop-in's options -----------------------------------------

_FLAGS = {"gdeval": ["-c"], "ndeval": ["-c", "-a", "-ca", "-traditional"], "sample_eval": ["-q"]}
_VALUED = {"gdeval": ["-k", "-baseline", "-riskAlpha"], "ndeval": ["-alpha", "-beta", "-M", "-baseline", "-riskAlpha"],
           "sample_eval": []}
_VALUES = ["5", "0", "1", "-1", "0.5", "2", "1e3", "x", "1_0", "inf", "", "-", "--", "-c", "--help", "B"]
_FILES = ["Q", "R", "-", "", "q.qrel"]


def _option(name: str):
    return st.one_of(
        st.sampled_from(_FLAGS[name]).map(lambda flag: [flag]),
        st.tuples(st.sampled_from(_VALUED[name] or ["-x"]), st.sampled_from(_VALUES)).map(list),
        st.sampled_from(["--rewrite-ids", "--output", "--output=o", "--help", "--help=x", "--hel", "--", "-", "-x",
                         "-h", "-=", "--x"]).map(lambda word: [word]),
        st.tuples(st.just("--output"), st.sampled_from(["o", "-", "--help", "--"])).map(list),
    )


@st.composite
def command_lines(draw, name: str) -> list[str]:
    """Options (each one or two words) with zero to three file arguments put among them anywhere."""
    words = [word for option in draw(st.lists(_option(name), max_size=6)) for word in option]
    for path in draw(st.lists(st.sampled_from(_FILES), max_size=3)):
        words.insert(draw(st.integers(0, len(words))), path)
    return words


@pytest.mark.parametrize("name", DROP_INS)
def test_a_generated_command_line_is_handed_over_as_click_hands_it(name):
    taken = []

    @settings(max_examples=600, deadline=None, derandomize=True)
    @given(command_lines(name))
    def check(argv):
        taken.append(check_reading(name, argv) is not None)

    check()
    # So that the test is not passed by declining: a share of the command lines are taken.
    assert sum(taken) > len(taken) / 20, (sum(taken), len(taken))


def test_the_click_commands_are_made_from_the_drop_ins():
    # One declaration: each click command's one argument shows its drop-in's synopsis, and runs its reader and body.
    for drop_in, command in DROP_INS.values():
        assert [(param.name, param.nargs, param.metavar) for param in command.params] == [
            ("args", -1, drop_in.metavar)]


# --- the same output, through the plain path and through click -------------------------------------------------

DIVERSITY = "".join(f"t{t} {s} d{i} {(i + s + t) % 2}\n" for t in range(1, 4) for s in (1, 2) for i in range(6))
STRATIFIED = "".join(f"t{t} 0 d{i} {1 + i % 2} {-1 if i == 5 else (i + t) % 3}\n" for t in range(1, 4)
                     for i in range(6))
RUN = "".join(f"t{t} Q0 d{i} {i + 1} {9 - i}.5 tag\n" for t in range(1, 4) for i in range(8))
BASE = "".join(f"t{t} Q0 d{i} {i + 1} {i}.5 base\n" for t in range(1, 4) for i in range(8))
NUMERIC = "".join(f"{t} Q0 d{i} {i + 1} {9 - i}.5 tag\n" for t in range(1, 4) for i in range(8))


def _more_files(directory):
    (directory / "d.qrel").write_text(DIVERSITY)
    (directory / "s.qrel").write_text(STRATIFIED)
    (directory / "b.run").write_text(BASE)
    (directory / "n.run").write_text(NUMERIC)


#: Command lines that succeed, warn, or fail with castregin's one-line errors (exit 1): run without click.
PLAIN_RUNS = [
    ["gdeval", "q.qrel", "r.run"],
    ["gdeval", "-c", "-k", "3", "q.qrel", "r.run"],
    ["gdeval", "-baseline", "b.run", "-riskAlpha", "1", "q.qrel", "r.run"],
    ["gdeval", "--output", "out.txt", "q.qrel", "r.run"],
    ["gdeval", "q.qrel", "bom.run"],  # a warning line
    ["gdeval", "q.qrel", "n.run"],  # no shared topic: a warning line
    ["gdeval", "--rewrite-ids", "q.qrel", "r.run"],  # ids without a number: an error
    ["gdeval", "q.qrel", "bad.run"],
    ["gdeval", "missing.qrel", "r.run"],
    ["gdeval", "--output", "r.run", "q.qrel", "r.run"],  # an input as the output
    ["gdeval", "-", "r.run"],
    ["ndeval", "d.qrel", "r.run"],
    ["ndeval", "-c", "-traditional", "-alpha", "0.3", "-M", "4", "d.qrel", "r.run"],
    ["ndeval", "-baseline", "b.run", "-riskAlpha", "0.5", "d.qrel", "r.run", "--output=out.txt"],
    ["ndeval", "d.qrel", "n.run"],
    ["ndeval", "d.qrel", "missing.run"],
    ["ndeval", "--output", "sub", "d.qrel", "r.run"],  # a directory
    ["sample_eval", "s.qrel", "r.run"],
    ["sample_eval", "-q", "s.qrel", "r.run", "--output", "out.txt"],
    ["sample_eval", "s.qrel", "bom.run"],
    ["sample_eval", "s.qrel", "n.run"],  # no shared topic: an error
    ["sample_eval", "q.qrel", "r.run"],  # not stratified: an error
]

#: Command lines the plain path declines: help and usage errors, which click prints (exit 0 or 2).
CLICK_RUNS = [
    ["gdeval", "--help"],
    ["gdeval", "-k", "x", "q.qrel", "r.run"],
    ["gdeval", "-x", "q.qrel", "r.run"],
    ["gdeval", "q.qrel"],
    ["gdeval", "--help=1", "q.qrel", "r.run"],
    ["ndeval", "-alpha", "2", "d.qrel", "r.run"],
    ["ndeval", "d.qrel", "r.run", "--output"],
    ["sample_eval", "--rewrite-ids", "s.qrel", "r.run"],
    ["sample_eval", "s.qrel", "r.run", "-q"],
    ["sample_eval", "--help"],
]


@pytest.mark.parametrize("argv", PLAIN_RUNS + CLICK_RUNS, ids=" ".join)
def test_the_plain_path_prints_what_click_prints(tmp_path, argv):
    _, stderr, status, _, _ = check_both_paths(tmp_path, argv, argv in PLAIN_RUNS, more_files=_more_files)
    if argv in CLICK_RUNS:  # help, or click's one-line usage error
        assert status == 0 if "--help" in argv else (status, stderr.count(b"\n")) == (2, 1)
