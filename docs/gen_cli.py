"""Write docs/cli.md, the command reference, from the commands' own ``--help``.

    python docs/gen_cli.py            # rewrite docs/cli.md and castregin/cli/commands.json (`make docs-cli`)
    python docs/gen_cli.py --check    # exit 1 when either differs from what the commands print

Every command and subcommand (``castregin.cli.COMMANDS`` and the commands of each group) is invoked
with ``--help`` through click, as a terminal 80 columns wide shows it, and its text is put verbatim in
a ``text`` block under a heading with a stable anchor (``#evaluate``, ``#qrels-filter``), which the
other pages link to. tests/test_docs_cli.py fails when the committed page is not this output.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.testing import CliRunner

PAGE = Path(__file__).resolve().parent / "cli.md"
PROGRAM = "castregin"
#: Help is laid out as in an 80-column terminal: click wraps to the terminal's width less 2.
HELP_WIDTH = 78
REGENERATE = "make docs-cli"

_HEADER = f"""\
# Command reference

Every command's `--help`, verbatim, as an 80-column terminal shows it. `-h` works too.

!!! note "Generated"
    This page is written by `{REGENERATE}` (`docs/gen_cli.py`) from the commands themselves, and
    `make test` fails when it differs from what they print: change a command's help in its code, then
    run `{REGENERATE}`.

"""


def command_paths() -> list[tuple[str, ...]]:
    """Every command's path below ``castregin`` (``()``: the program itself), groups before their commands."""
    from castregin.cli import main

    paths: list[tuple[str, ...]] = []

    def walk(command: click.Command, path: tuple[str, ...], parent: click.Context | None) -> None:
        paths.append(path)
        if isinstance(command, click.Group):
            context = click.Context(command, info_name=path[-1] if path else PROGRAM, parent=parent)
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                if sub is not None and not sub.hidden:
                    walk(sub, (*path, name), context)

    walk(main, (), None)
    return paths


def help_text(path: tuple[str, ...]) -> str:
    """What ``castregin PATH... --help`` prints."""
    from castregin.cli import main

    result = CliRunner().invoke(main, [*path, "--help"], prog_name=PROGRAM, terminal_width=HELP_WIDTH)
    if result.exit_code != 0:
        raise RuntimeError(f"{PROGRAM} {' '.join(path)} --help exited {result.exit_code}: {result.output}")
    return result.output


def anchor(path: tuple[str, ...]) -> str:
    """The heading's id: the command's words joined by ``-`` (``qrels-filter``), or ``castregin``."""
    return "-".join(path) if path else PROGRAM


def render() -> str:
    """The whole page."""
    parts = [_HEADER]
    for path in command_paths():
        level = "###" if len(path) > 1 else "##"
        title = " ".join((PROGRAM, *path))
        heading = f"{level} `{title}` {{ #{anchor(path)} }}"
        parts.append(f"{heading}\n\n```text\n{help_text(path).rstrip()}\n```\n\n")
    return "".join(parts).rstrip("\n") + "\n"


def command_table() -> str:
    """``castregin/cli/commands.json``: every top-level command's module and summary, read off the commands.

    Every module of ``castregin.cli`` is imported, so a command that the table does not know yet is found.
    """
    import importlib
    import json
    import pkgutil

    import castregin.cli
    from castregin.cli import main

    for module in pkgutil.iter_modules(castregin.cli.__path__):
        importlib.import_module(f"castregin.cli.{module.name}")
    table = {}
    for name, command in sorted(main.commands.items()):
        entry: dict[str, str] = {"module": command.callback.__module__}
        if command.short_help:
            entry["short_help"] = command.short_help
        else:
            # click shortens the first paragraph only (make_default_short_help).
            entry["help"] = " ".join((command.help or "").split("\n\n", 1)[0].split())
        table[name] = entry
    return json.dumps(table, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    from castregin.cli import COMMAND_TABLE

    outputs = {Path(COMMAND_TABLE): command_table(), PAGE: render()}
    if argv == ["--check"]:
        stale = [path for path, text in outputs.items() if path.read_text(encoding="utf-8") != text]
        for path in stale:
            print(f"{path} differs from the commands: run `{REGENERATE}`", file=sys.stderr)
        return 1 if stale else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
