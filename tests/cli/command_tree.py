"""Every command of castregin, as the tests that walk them all see it (a new command cannot go untested)."""

from __future__ import annotations

import click

from castregin.cli import main


def every_command() -> dict[tuple[str, ...], click.Command]:
    """Each command by its path (``("qrels", "merge")``), groups' subcommands included, groups themselves not."""
    main.load_all()
    found: dict[tuple[str, ...], click.Command] = {}

    def walk(group: click.Group, prefix: tuple[str, ...]) -> None:
        for name, command in sorted(group.commands.items()):
            if isinstance(command, click.Group):
                walk(command, (*prefix, name))
            else:
                found[(*prefix, name)] = command

    walk(main, ())
    return found
