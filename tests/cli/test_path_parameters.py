"""Every parameter of every command that names a file says whether it is read or written, so that no
output can be an input, whichever option names it (issue 21: `evaluate ... --turns t.txt -o t.txt`
overwrote the turn list). The commands are walked: a new option that names a file and has no path type
fails here.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from castregin.cli import main
from castregin.cli.options import InputPath, OutputDirectory, OutputPath

PATH_TYPES = (InputPath, OutputPath, OutputDirectory)

#: Text parameters that name no file, and what they name instead.
NOT_FILES = {
    "criteria": "criterion names",
    "strata": "FIRST-LAST:RATE,... (pool --sample)",
    "budgets": "judgments a turn, N,... (pool simulate)",
    "sections": "section names (agreement --show)",
    "columns": "ROLE=COLUMN",
    "label_map": "TEXT=N",
    "scale": "MIN-MAX",
    "prefix": "a prefix of the qrels' names",
    "time_column": "a CSV column",
    "measures": "measure names",
    "measure": "a measure name",
    "plot_measure": "a measure name",
    "sort": "a measure name",
    "baseline": "one of the RUN files already given, or a run's tag",
    "satisfaction": "a CSV column",
    "success": "a CSV column",
    "costs": "CSV columns",
    "group": "a CSV column",
    "id_column": "a CSV column",
    "groups_spec": "NAME=N,... or 'labels'",
    "rel_info_format": "trec_eval's -R format name",
    "results_format": "trec_eval's -T format name",
    "debug_level": "trec_eval's -D level (refused)",
    "num_docs": "trec_eval's -N count (read as C's atol)",
    "rel_level": "trec_eval's -l level (read as C's atol)",
    "max_per_query": "trec_eval's -M count (read as C's atol)",
    "model": "a model's name at the endpoint",
    "base_url": "an endpoint's URL",
    "api_key_env": "an environment variable's name",
    "experiments": "experiment names of a clembench game",
    "name": "an assignment source's name (nuggets score --name)",
}


def _commands(group: click.Group | None = None, prefix=()):
    if group is None:
        main.load_all()
        group = main
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


COMMANDS = list(_commands())


def _untyped_text(param: click.Parameter) -> bool:
    return isinstance(param.type, click.types.StringParamType)


def test_every_text_parameter_is_a_path_or_known_not_to_be_one():
    unknown = [(" ".join(path), param.name) for path, command in COMMANDS for param in command.params
               if _untyped_text(param) and param.name not in NOT_FILES]
    assert unknown == [], "give these parameters a path type (castregin.cli.options) or list them in NOT_FILES"
    used = {param.name for _, command in COMMANDS for param in command.params if _untyped_text(param)}
    assert set(NOT_FILES) <= used, f"stale entries: {set(NOT_FILES) - used}"


def _dummy(param: click.Parameter):
    """A value click accepts for a required parameter that is not under test."""
    if param.name == "criteria":
        return "relevance"
    if isinstance(param.type, click.Choice):
        return param.type.choices[0]
    if isinstance(param.type, (click.IntRange, click.types.IntParamType)):
        return "1"
    if isinstance(param.type, click.types.FloatParamType):
        return "0.5"
    if isinstance(param.type, InputPath):
        return "other.txt"
    if isinstance(param.type, OutputDirectory):
        return "out"
    return "x"


def _arguments(command: click.Command, values: dict) -> list[str]:
    """The command line giving ``values`` (param name -> value) and a dummy for every other required parameter."""
    options, arguments = [], []
    for param in command.params:
        if param.name in values:
            value = values[param.name]
        elif param.required:
            value = _dummy(param)
        else:
            continue
        if isinstance(param, click.Argument):
            arguments.append(value)
        else:
            options += [max(param.opts, key=len), value]
    return [*options, "--", *arguments] if arguments else options


CASES = [pytest.param(path, command, output.name, source.name, id=f"{' '.join(path)}:{output.name}={source.name}")
         for path, command in COMMANDS
         for output in command.params if isinstance(output.type, OutputPath)
         for source in command.params if isinstance(source.type, InputPath)]


def test_every_command_that_writes_a_file_reads_one_or_is_known_not_to():
    readers = {" ".join(case.values[0]) for case in CASES}
    writers = {" ".join(path) for path, command in COMMANDS
               if any(isinstance(p.type, OutputPath) for p in command.params)}
    assert writers - readers == {"measures", "ope simulate"}


@pytest.mark.parametrize(("path", "command", "output", "source"), CASES)
def test_no_output_may_be_any_input(cli, tmp_path, monkeypatch, path, command, output, source):
    monkeypatch.chdir(tmp_path)
    Path("in.txt").write_text("kept\n")
    Path("other.txt").write_text("other\n")
    result = cli(*path, *_arguments(command, {output: "in.txt", source: "in.txt"}))
    assert result.exit_code == 1, result.output
    assert "refusing to overwrite the input file in.txt" in result.stderr, result.stderr
    assert Path("in.txt").read_text() == "kept\n"


def test_evaluate_turns_is_never_overwritten(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("r.run").write_text("t1 Q0 d1 1 1.0 r\n")
    Path("q.qrel").write_text("t1 0 d1 1\n")
    Path("t.txt").write_text("t1\n")
    result = cli("evaluate", "r.run", "--qrels", "q.qrel", "--turns", "t.txt", "-o", "./t.txt")
    assert result.exit_code == 1
    assert result.stderr == ("castregin: error: ./t.txt: refusing to overwrite the input file t.txt (the same file "
                             "by another path); choose another output\n")
    assert Path("t.txt").read_text() == "t1\n"


def test_an_output_file_in_an_output_directory_is_checked_against_every_input(cli, tmp_path, monkeypatch):
    # convert writes out/alpha.run; the turn list given as --turns is that very file.
    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(tmp_path)
    Path("out").mkdir()
    Path("out/alpha.run").write_text('{"101": ["1-1"]}\n')
    result = cli("convert", "questions", repo / "data/runs/alpha.json", "--bank", repo / "data/question_bank.json",
                 "--turns", "out/alpha.run", "--out-dir", "out")
    assert result.exit_code == 1 and "refusing to overwrite the input file out/alpha.run" in result.stderr
    assert Path("out/alpha.run").read_text() == '{"101": ["1-1"]}\n'


def test_the_writer_checks_declared_inputs_it_was_not_given(tmp_path):
    from castregin.errors import InputError
    from castregin.formats.output import declared_inputs, write_text

    (tmp_path / "in.txt").write_text("kept\n")
    with declared_inputs([tmp_path / "in.txt"]), pytest.raises(InputError, match="refusing to overwrite"):
        write_text(tmp_path / "in.txt", "lost\n")
    assert (tmp_path / "in.txt").read_text() == "kept\n"
    write_text(tmp_path / "in.txt", "replaced\n")  # outside a command, a writer knows only its own inputs


OUTPUTS = [pytest.param(path, command, output.name, id=f"{' '.join(path)}:{output.name}")
           for path, command in COMMANDS for output in command.params if isinstance(output.type, OutputPath)]


@pytest.mark.parametrize(("path", "command", "output"), OUTPUTS)
def test_an_output_file_named_with_a_trailing_slash_is_refused(cli, tmp_path, monkeypatch, path, command, output):
    # `qrels filter ... -o o.qrel/` wrote o.qrel: a trailing slash names a directory.
    monkeypatch.chdir(tmp_path)
    Path("other.txt").write_text("other\n")
    result = cli(*path, *_arguments(command, {output: "o.txt/"}))
    assert result.exit_code == 1, result.output
    assert result.stderr == "castregin: error: o.txt/: ends in '/', which names a directory; give a file name\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt"]


def test_qrels_filter_with_a_trailing_slash_writes_nothing(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("q.qrel").write_text("t1 0 d1 2\n")
    result = cli("qrels", "filter", "q.qrel", "-o", "o.qrel/")
    assert result.exit_code == 1 and "names a directory" in result.stderr
    assert not Path("o.qrel").exists()
    Path("o.qrel").write_text("old\n")  # an existing file named with a slash is no directory either
    assert cli("qrels", "filter", "q.qrel", "-o", "o.qrel/").exit_code == 1
    assert Path("o.qrel").read_text() == "old\n"


# --- float options: a finite number, whatever the command --------------------------------------------------------

FLOATS = [pytest.param(path, command, param.name, id=f"{' '.join(path)}:{param.name}")
          for path, command in COMMANDS for param in command.params
          if isinstance(param.type, click.types.FloatParamType)]


def test_every_float_option_is_a_finite_float():
    from castregin.cli.options import FiniteFloat

    assert len(FLOATS) >= 6
    assert [case.id for case in FLOATS if not isinstance(_param(*case.values[1:]).type, FiniteFloat)] == []


def _param(command: click.Command, name: str) -> click.Parameter:
    return next(p for p in command.params if p.name == name)


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity"])
@pytest.mark.parametrize(("path", "command", "name"), FLOATS)
def test_nan_and_infinities_are_refused_by_every_float_option(cli, tmp_path, monkeypatch, path, command, name,
                                                              value):
    # `compare --alpha nan` marked nothing significant, without a word.
    monkeypatch.chdir(tmp_path)
    Path("other.txt").write_text("other\n")
    flag = max(_param(command, name).opts, key=len)
    result = cli(*path, *_arguments(command, {name: value}))
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{flag}'" in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_an_output_directory_may_end_in_a_slash(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    repo = Path(__file__).resolve().parents[2]
    result = cli("aggregate", repo / "data/crowd/judgments.csv", "--criteria", "relevance", "--out-dir", "out/")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "out/question_relevance.qrel").is_file()
