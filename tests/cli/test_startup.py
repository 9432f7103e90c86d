"""The command line imports only what the command at hand needs.

`castregin --help` and `castregin evaluate` must not load the statistics, plotting, schema and
dataframe libraries of other commands: each would add a noticeable share of a second to every
call. Checked in a fresh interpreter, since this test session has imported everything already.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import click
import pytest

from castregin.cli import COMMANDS, main

#: Libraries that only some commands need (compare, report, convert, aggregate, ope, pytrec_eval), and the
#: array libraries, which a small run's evaluation does without (each takes a tenth of a second or more).
HEAVY = ["pandas", "scipy", "statsmodels", "matplotlib", "jsonschema", "tqdm", "pytrec_eval", "sklearn", "numpy",
         "pyarrow", "jinja2", "ir_measures", "openai"]


def _imported_by(args: list[str]) -> tuple[list[str], str]:
    """The HEAVY modules loaded by running ``castregin ARGS`` in a new interpreter, and its output."""
    imported, _, text = _imports_of(args)
    return [m for m in HEAVY if m in imported], text


def _imports_of(args: list[str]) -> tuple[set[str], set[str], str]:
    """Running ``castregin ARGS`` in a new interpreter: the modules it loaded (beyond those the interpreter and an
    editable install's import hook load first), the packages among them that are neither Python's own nor click
    nor castregin, and its output."""
    code = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "from castregin.cli import main\n"
        f"try:\n    main({[str(a) for a in args]!r}, prog_name='castregin')\n"
        "except SystemExit as exit:\n    assert not exit.code, exit.code\n"
        "print(json.dumps([sorted(sys.modules), sorted(set(sys.modules) - before)]), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    _, new = json.loads(result.stderr.strip().splitlines()[-1])
    own = set(sys.stdlib_module_names) | {"click", "castregin"}
    return set(new), {name.split(".")[0] for name in new} - own, result.stdout


def _ten_line_run(tmp_path, compressed: bool = False):
    """A 10-line run (two turns of five items) and small qrels for it, as a script calls trec_eval on."""
    text = "".join(f"t{t}\tQ0\td{i}\t{i + 1}\t{10 - i}.25\tr\n" for t in range(2) for i in range(5))
    run = tmp_path / ("r.run.gz" if compressed else "r.run")
    run.write_bytes(gzip.compress(text.encode())) if compressed else run.write_text(text)
    qrels = tmp_path / "q.qrel"
    qrels.write_text("".join(f"t{t} 0 d{i} {i % 3}\n" for t in range(2) for i in range(4)))
    return run, qrels


@pytest.fixture(scope="module")
def ten_line_inputs(tmp_path_factory) -> dict:
    """The ten-line run (plain and gzipped), its qrels, and 1.4 MB qrels: written once for every case."""
    tmp_path = tmp_path_factory.mktemp("ten_line")
    run, qrels = _ten_line_run(tmp_path)
    run_gz, _ = _ten_line_run(tmp_path, compressed=True)
    # Qrels of 1.4 MB, as CAsT's passage qrels: beyond the byte count that used to send a run to pyarrow.
    large_qrels = tmp_path / "large.qrel"
    large_qrels.write_text("".join(f"t{t % 2 if t < 4 else t} 0 doc{t:07d} {t % 4}\n" for t in range(50_000)))
    return {"run": run, "qrels": qrels, "run_gz": run_gz, "large_qrels": large_qrels}


@pytest.mark.parametrize("args", [
    ["trec_eval", "{qrels}", "{run}"],
    ["trec_eval", "-q", "-m", "all_trec", "{qrels}", "{run}"],
    ["trec_eval", "-c", "-l2", "-m", "P.1,3", "-m", "ndcg_cut.3", "{qrels}", "{run_gz}"],
    ["trec_eval", "{large_qrels}", "{run}"],
    ["evaluate", "{run}", "--qrels", "{qrels}", "-m", "all_trec", "-q"],
    ["evaluate", "{run_gz}", "--qrels", "{qrels}", "--format", "trec"],
    ["evaluate", "{run}", "--qrels", "{large_qrels}", "-m", "bpref", "-m", "P@3"],
])
def test_a_ten_line_call_imports_python_click_and_castregin_only(ten_line_inputs, args):
    # What a script calling `castregin trec_eval` once per run pays for: the interpreter, click and the
    # pure-Python rules. numpy, pyarrow or pandas alone would take ten times trec_eval's whole time.
    imported, foreign, text = _imports_of([arg.format(**ten_line_inputs) for arg in args])
    assert foreign == set(), foreign  # so none of HEAVY either: each is a foreign package
    assert "castregin.evaluation.plain" in imported  # the plain-Python path scored it
    assert text.strip()


def _loaded_by(args: list[str]) -> tuple[list[str], str]:
    """The modules a new interpreter has loaded at exit after ``python -m castregin ARGS`` (run as ``-m`` runs it, by
    runpy) that it has without running castregin (in this environment: with the editable install's import hook,
    which loads some of Python's own), and its output."""
    code = ("import atexit, runpy, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\nloaded: ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
            "if len(sys.argv) > 1:\n"
            "    sys.argv[0] = 'castregin'\n"
            "    runpy.run_module('castregin', run_name='__main__', alter_sys=True)\n")

    def loaded(extra: list[str]) -> tuple[set[str], str]:
        done = subprocess.run([sys.executable, "-c", code, *extra], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        return set(done.stderr.rsplit("loaded: ", 1)[1].split()), done.stdout

    own, _ = loaded([])
    modules, text = loaded(args)
    return sorted(modules - own), text


#: The modules of castregin.cli that `castregin trec_eval` needs when it runs without click.
PLAIN_CLI = ["castregin.cli", "castregin.cli.plain", "castregin.cli.trec_eval_plain"]
#: Modules click imports (for its types, its help and its tests' runner) that a 10-line trec_eval has no use for.
CLICKS_OWN = ["click", "uuid", "datetime", "platform", "gettext", "shutil", "tempfile"]


@pytest.mark.parametrize("args", [
    ["trec_eval", "{qrels}", "{run}"],
    ["trec_eval", "-q", "-c", "-l2", "-m", "P.1,3", "-m", "ndcg_cut.3", "{qrels}", "{run_gz}"],
    ["trec_eval", "{qrels}", "{run}", "-mP.5", "--output=-"],
])
def test_a_ten_line_trec_eval_runs_without_click(ten_line_inputs, args):
    # Through the real entry point (`python -m castregin` runs castregin.cli.run, as the console script does): the
    # plain path (castregin.cli.plain), none of click, of its command modules or of the libraries it brings.
    loaded, text = _loaded_by([arg.format(**ten_line_inputs) for arg in args])
    print(f"{len(loaded)} modules beyond the interpreter's own:", " ".join(loaded))  # the record, with pytest -s
    assert [name for name in loaded if name.startswith("castregin.cli")] == PLAIN_CLI
    assert not [name for name in loaded if name.split(".")[0] in CLICKS_OWN]
    assert {name.split(".")[0] for name in loaded} - set(sys.stdlib_module_names) == {"castregin"}
    assert "P_5" in text or "P_3" in text


#: The other drop-ins scripts call once per run, each run without click: the modules of castregin.cli each needs.
PLAIN_DROP_INS = {
    "gdeval": ["castregin.cli", "castregin.cli.gdeval_plain", "castregin.cli.plain"],
    "ndeval": ["castregin.cli", "castregin.cli.gdeval_plain", "castregin.cli.plain"],
    "sample_eval": ["castregin.cli", "castregin.cli.gdeval_plain", "castregin.cli.plain",
                    "castregin.cli.sample_eval_plain"],
}


@pytest.mark.parametrize("args", [
    ["gdeval", "{qrels}", "{run}"],
    ["gdeval", "-c", "-k", "3", "{qrels}", "{run}", "--output=-"],
    ["ndeval", "{diversity_qrels}", "{run}"],
    ["ndeval", "-traditional", "-alpha", "0.3", "{diversity_qrels}", "{run}"],
    ["sample_eval", "{stratified_qrels}", "{run}"],
    ["sample_eval", "-q", "{stratified_qrels}", "{run}"],
])
def test_a_ten_line_drop_in_runs_without_click(ten_line_inputs, tmp_path, args):
    # As trec_eval (above): the plain path, none of click nor of its command modules. (gdeval and ndeval read and
    # score with numpy and pyarrow, whatever the size: docs/speed.md.)
    diversity_qrels, stratified_qrels = tmp_path / "d.qrel", tmp_path / "s.qrel"
    diversity_qrels.write_text("".join(f"t{t} {s} d{i} {(i + s) % 2}\n" for t in range(2) for s in (1, 2)
                                       for i in range(4)))
    stratified_qrels.write_text("".join(f"t{t} 0 d{i} {1 + i % 2} {i % 3}\n" for t in range(2) for i in range(4)))
    files = {**ten_line_inputs, "diversity_qrels": diversity_qrels, "stratified_qrels": stratified_qrels}
    loaded, text = _loaded_by([arg.format(**files) for arg in args])
    print(f"{len(loaded)} modules beyond the interpreter's own:", " ".join(loaded))  # the record, with pytest -s
    assert [name for name in loaded if name.startswith("castregin.cli")] == PLAIN_DROP_INS[args[0]]
    assert "click" not in {name.split(".")[0] for name in loaded}
    assert text.strip()
    if args[0] == "sample_eval":  # neither click's other modules (pyarrow loads some) nor dataclasses, typing
        assert not [name for name in loaded if name.split(".")[0] in CLICKS_OWN]
        assert {name.split(".")[0] for name in loaded} - set(sys.stdlib_module_names) == {"castregin"}
        assert not {"dataclasses", "typing", "inspect"} & set(loaded)


#: castregin's modules that a 10-line call with trec_eval's measures has no use for (each a millisecond or more):
#: the diversity and inferred measures with their originals' rules and readers, z-scores (-Z), the streaming engine
#: and the columnar reader; and Python's own modules it needs no more than click does.
UNNEEDED = {"castregin.evaluation.measures.novelty", "castregin.evaluation.measures.inferred",
            "castregin.evaluation.ndeval", "castregin.evaluation.gdeval", "castregin.evaluation.inferred",
            "castregin.evaluation.zscores", "castregin.evaluation.engine", "castregin.evaluation.trec_eval_stream",
            "castregin.formats.columnar", "castregin.formats.diversity", "castregin.formats.preferences",
            "pathlib", "tempfile", "shutil", "logging", "concurrent.futures", "bz2", "lzma"}


@pytest.mark.parametrize(("args", "measures"), [
    (["trec_eval", "{qrels}", "{run}"], {"counts", "precision", "average_precision"}),
    (["trec_eval", "-q", "-m", "all_trec", "{qrels}", "{run}"],
     {"counts", "precision", "average_precision", "gain", "sets"}),
    (["trec_eval", "-c", "-l2", "-m", "P.1,3", "-m", "ndcg_cut.3", "{qrels}", "{run_gz}"], {"precision", "gain"}),
    (["evaluate", "{run}", "--qrels", "{qrels}"], {"precision", "average_precision", "gain"}),
    (["evaluate", "{run}", "--qrels", "{qrels}", "-m", "bpref", "-m", "P@3"], {"precision", "average_precision"}),
])
def test_a_ten_line_call_loads_only_the_measures_it_computes(ten_line_inputs, args, measures):
    # The measure registry imports a measure's module when a name asks for it (castregin.evaluation.measures.registry):
    # the modules of the measures asked for, and none of the diversity or inferred measures' code.
    imported, _, text = _imports_of([arg.format(**ten_line_inputs) for arg in args])
    modules = {name.rsplit(".", 1)[1] for name in imported if name.startswith("castregin.evaluation.measures.")}
    assert modules - {"definition", "names", "registry", "catalogue", "judged"} == measures
    assert not imported & UNNEEDED, imported & UNNEEDED
    assert text.strip()


@pytest.mark.parametrize("command", ["trec_eval", "evaluate"])
def test_a_commands_help_loads_no_evaluation(command):
    imported, _, text = _imports_of([command, "--help"])
    assert "Usage:" in text
    assert not imported & (UNNEEDED - {"shutil", "bz2", "lzma"})  # click's help formatter loads shutil
    assert not {name for name in imported if name.startswith("castregin.evaluation.measures.")} - {
        "castregin.evaluation.measures.definition", "castregin.evaluation.measures.names",
        "castregin.evaluation.measures.registry", "castregin.evaluation.measures.catalogue",
        "castregin.evaluation.measures.judged"}
    if command == "trec_eval":
        assert "castregin.evaluation.trec_eval" not in imported and "castregin.evaluation.plain" not in imported


def test_help_lists_every_command_without_heavy_imports():
    imported, text = _imported_by(["--help"])
    assert imported == []
    listed = text.split("Commands:", 1)[1]
    for name in COMMANDS:
        assert f"\n  {name} " in listed, name


def test_help_lists_the_commands_own_summaries():
    # The listing is made from copies of the summaries (importing no command); each copy must read
    # exactly as click shortens the command's own help, at any width.
    main.load_all()
    for name, entry in COMMANDS.items():
        copy = click.Command(name, help=entry.help, short_help=entry.short_help)
        for limit in range(10, 200, 7):
            assert copy.get_short_help_str(limit) == main.commands[name].get_short_help_str(limit), (name, limit)


def test_help_reads_as_with_every_command_loaded():
    def help_text(load_first: bool) -> str:
        code = (f"from castregin.cli import main\nif {load_first}: main.load_all()\n"
                "main(['--help'], prog_name='castregin')\n")
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "COLUMNS": "100"}).stdout

    listed = help_text(load_first=False)
    assert "Commands:" in listed and "trec_eval" in listed
    assert listed == help_text(load_first=True)


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_evaluate_imports_neither_pandas_nor_statistics(tmp_path, fmt):
    run = tmp_path / "r.run"
    run.write_text("".join(f"t{t}\tQ0\td{i}\t{i + 1}\t{10 - i}\tr\n" for t in range(3) for i in range(5)))
    qrels = tmp_path / "q.qrel"
    qrels.write_text("".join(f"t{t} 0 d{i} {i % 3}\n" for t in range(3) for i in range(4)))
    imported, text = _imported_by(["evaluate", str(run), "--qrels", str(qrels), "--format", fmt])
    assert imported == []
    assert "P@1" in text


def test_command_map_is_complete_and_right():
    # Each mapped module defines its command, and every command is in the map (else running it
    # would import every command module to find it).
    ctx = click.Context(main)
    for name, entry in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None, name
        assert command.callback.__module__ == entry.module, name
    main.load_all()
    assert sorted(main.commands) == sorted(COMMANDS)


def test_unknown_command_is_a_usage_error(cli):
    result = cli("evalute")
    assert result.exit_code == 2
    assert "No such command 'evalute'" in result.stderr
