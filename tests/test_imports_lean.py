"""What a ten-line ``castregin trec_eval`` runs imports little: no typing, dataclasses, json, re...

Scripts call trec_eval once per run, thousands of times, so its start-up is its cost on small inputs
(benchmarks/bench_startup.py: within 3x the interpreter's own start). The modules its evaluation runs
import only the standard library's basics; the others (typing alone took some 2 ms, dataclasses with the
inspect, ast and dis it loads 6 ms, re with enum 3 ms) are imported where they are used. Checked in a
fresh interpreter started without site (``-S``), so that an editable install's import hook, which loads
re, pathlib and more into every interpreter of its virtualenv, hides nothing; each check compares with
the modules that interpreter had before the code ran (its ``python -c pass``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import castregin
from castregin.evaluation.trec_eval import TrecEvalOptions, trec_eval_lines
from castregin.formats.trec import parse_qrels, parse_run
from castregin.render.trec import trec_eval_text

#: The modules the trec_eval drop-in's evaluation runs: the stage functions, the readers, the writer, the renderer.
CLOSURE = [
    "castregin.evaluation.trec_eval", "castregin.formats.trec", "castregin.formats.output", "castregin.render.trec",
    "castregin.errors", "castregin.evaluation.small", "castregin.evaluation.kernels", "castregin.evaluation.trec_rules",
    "castregin.evaluation.plain", "castregin.evaluation.measures", "castregin.limits", "castregin.data",
    "castregin.formats.common",
]
#: What none of them loads: the annotation and record helpers (typing, dataclasses and what it loads), JSON, copy,
#: regular expressions (re and its enum), importlib and warnings, struct (32-bit ranking only), collections.abc, the
#: byte-order mark's codec; and the command line's and the array libraries.
NOT_LOADED = [
    "typing", "dataclasses", "inspect", "ast", "dis", "tokenize", "json", "copy", "re", "enum", "importlib",
    "warnings", "struct", "collections.abc", "encodings.utf_8_sig", "click", "numpy", "pandas", "pyarrow",
]

#: The ten-line run and its qrels (two turns, graded 0-2, an item unjudged), as benchmarks/bench_startup.py has them.
RUN = "".join(f"{101 + t}_1-1 Q0 doc{i:03d} {i + 1} {10 - i}.{7 - t} small\n" for t in range(2) for i in range(5))
QRELS = "".join(f"{101 + t}_1-1 0 doc{i:03d} {(i + t) % 3}\n" for t in range(2) for i in range(4))

#: The drop-in's steps, as castregin/cli/trec_eval.py takes them: -l read as trec_eval reads it, the output checked
#: against the inputs, the lines of the two files, written a block at a time through the safe writer.
EVALUATION = """
from castregin.evaluation.trec_eval import TrecEvalOptions, trec_eval_file_lines
from castregin.evaluation.trec_rules import c_long
from castregin.formats.output import ensure_not_input, open_output
from castregin.render.trec import trec_eval_chunks
level = c_long({level!r}, "-l")
ensure_not_input("-", [{qrels!r}, {run!r}])
lines = trec_eval_file_lines({qrels!r}, {run!r}, TrecEvalOptions(("official",), level, per_query={per_query!r}))
with open_output("-") as handle:
    for chunk in trec_eval_chunks(lines):
        handle.write(chunk)
"""


def _loaded_by(code: str) -> tuple[set[str], str]:
    """The modules a fresh interpreter (no site: see the module) loads running ``code``, beyond those it had
    before, and what it printed."""
    package_home = str(Path(castregin.__file__).resolve().parent.parent)
    harness = (f"import sys\nbefore = set(sys.modules)\nsys.path.insert(0, {package_home!r})\n{code}\n"
               "sys.stderr.write(repr(sorted(set(sys.modules) - before)))\n")
    result = subprocess.run([sys.executable, "-I", "-S", "-c", harness], capture_output=True, text=True, check=True)
    return set(ast.literal_eval(result.stderr.strip().splitlines()[-1])), result.stdout


def test_the_check_sees_what_an_import_loads():
    """The harness itself: importing dataclasses shows dataclasses and the inspect it loads (else the tests below
    could not fail)."""
    loaded, _ = _loaded_by("import dataclasses")
    assert {"dataclasses", "inspect", "re"} <= loaded


def test_importing_the_evaluation_loads_none_of_them():
    loaded, _ = _loaded_by("\n".join(f"import {module}" for module in CLOSURE))
    assert set(CLOSURE) <= loaded
    assert sorted(loaded & set(NOT_LOADED)) == []


@pytest.mark.parametrize(("level", "per_query"), [("1", False), ("2", True)])
def test_a_ten_line_evaluation_loads_none_of_them(tmp_path, level, per_query):
    run, qrels = tmp_path / "ten_lines.run", tmp_path / "ten_lines.qrel"
    run.write_text(RUN)
    qrels.write_text(QRELS)
    loaded, printed = _loaded_by(EVALUATION.format(level=level, qrels=str(qrels), run=str(run), per_query=per_query))
    assert sorted(loaded & set(NOT_LOADED)) == []
    # The lean run is the usual one: the same lines as the functions give in this process (whose values the
    # trec_eval tests check against the binary).
    options = TrecEvalOptions(("official",), int(level), per_query=per_query)
    parsed_run = parse_run(RUN.encode(), "run", extra_columns=True)
    expected = trec_eval_text(trec_eval_lines(parse_qrels(QRELS.encode(), "qrels", "qrels"), parsed_run, options,
                                              runid=parsed_run.last_tag))
    assert printed == expected
    assert "num_rel_ret           \tall\t" in printed and ("\t101_1-1\t" in printed) == per_query


#: The modules the sample_eval drop-in runs (its plain command, the stratified reader, the estimators, the renderer).
SAMPLE_EVAL_CLOSURE = ["castregin.cli.sample_eval_plain", "castregin.formats.strata", "castregin.evaluation.inferred",
                       "castregin.render.sample_eval"]


def test_importing_the_sample_eval_drop_in_loads_none_of_them():
    # Importing, not running: sample_eval orders topics as Perl reads numbers, a regular expression compiled on
    # first use. Beyond what castregin.cli, every command's entry point, loads itself (signal's enum, importlib).
    entry_point, _ = _loaded_by("import castregin.cli")
    loaded, _ = _loaded_by("\n".join(f"import {module}" for module in SAMPLE_EVAL_CLOSURE))
    assert set(SAMPLE_EVAL_CLOSURE) <= loaded
    assert sorted((loaded - entry_point) & set(NOT_LOADED)) == []
