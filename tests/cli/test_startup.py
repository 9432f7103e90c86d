"""The command line imports only what the command at hand needs.

`castregin --help` and `castregin evaluate` must not load the statistics, plotting, schema and
dataframe libraries of other commands: each would add a noticeable share of a second to every
call. Checked in a fresh interpreter, since this test session has imported everything already.
"""

from __future__ import annotations

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
    code = (
        "import json, sys\n"
        "from castregin.cli import main\n"
        f"try:\n    main({args!r}, prog_name='castregin')\n"
        "except SystemExit as exit:\n    assert not exit.code, exit.code\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(result.stderr.strip().splitlines()[-1]), result.stdout


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
